//! What a shared run directory may and may not decide when it is resumed or forked.
//!
//! A run directory is data someone may have handed over. Its `run.json` says which
//! agent and limits the run had, and these are kept, but it must never choose where
//! the user's key goes, which host files become prompts, or where replies are cached:
//! those come from this command line or the user's own configuration. The endpoint
//! each model alias had when the run started is recorded only to be compared: if the
//! user's alias now points elsewhere, continuing would mix two models in one run, so
//! it is refused unless the user says otherwise.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, Result, bail};

use tbsim_engine::run_file::RunOptions;
use tbsim_model::ApiConfig;
use tbsim_model::config::locate;

/// The settings that come from the person running tbsim, never from a run directory.
pub(crate) struct Local<'a> {
    pub(crate) api_config: Option<&'a Path>,
    pub(crate) npc_cache: &'a Path,
    pub(crate) prompts: Option<&'a Path>,
    pub(crate) accept_endpoint: bool,
}

/// The model aliases a run's agent and colleagues use, sorted, without repeats.
fn aliases(opts: &RunOptions) -> Vec<&str> {
    let mut out: Vec<&str> = [opts.agent.as_str(), opts.npc.as_str()]
        .into_iter()
        .filter_map(|s| s.strip_prefix("llm:"))
        .filter(|a| !a.is_empty())
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// The endpoint each alias the options use points to in the configuration
/// `opts.api_config` locates (empty when no alias is used).
pub(crate) fn endpoints(opts: &RunOptions) -> Result<BTreeMap<String, String>> {
    let used = aliases(opts);
    if used.is_empty() {
        return Ok(BTreeMap::new());
    }
    let (path, _) = locate(opts.api_config.as_deref());
    let cfg = ApiConfig::load(&path)?;
    let mut out = BTreeMap::new();
    for alias in used {
        let m = cfg.model(alias)?;
        out.insert(alias.to_owned(), m.base_url);
    }
    Ok(out)
}

/// Agents that act only through a front end: their runs go on only when a client
/// comes back to them.
pub(crate) fn is_session_agent(agent: &str) -> bool {
    ["human:", "http:", "mcp:"]
        .iter()
        .any(|p| agent.starts_with(p))
}

/// The options to continue a recorded run with: the recorded ones, with the model
/// configuration, prompts and reply cache replaced by the local ones, and every
/// model alias checked to point where it pointed when the run started.
pub(crate) fn localise(dir: &Path, recorded: RunOptions, local: &Local<'_>) -> Result<RunOptions> {
    let mut opts = recorded;
    let was = std::mem::take(&mut opts.endpoints);
    opts.api_config = local.api_config.map(Path::to_path_buf);
    opts.npc_cache = local.npc_cache.to_path_buf();
    opts.prompts = local.prompts.map(Path::to_path_buf);
    let now = endpoints(&opts).with_context(|| {
        format!(
            "`{}` uses model aliases that your configuration must provide",
            dir.display()
        )
    })?;
    for (alias, recorded) in &was {
        if let Some(configured) = now.get(alias)
            && configured != recorded
            && !local.accept_endpoint
        {
            let (path, _) = locate(opts.api_config.as_deref());
            bail!(
                "model alias `{alias}`: the run in `{}` recorded the endpoint {recorded}, but \
                 your configuration ({}) points it to {configured}; continuing would mix two \
                 models in one run. Nothing was sent. Pass --accept-endpoint to go on with \
                 your endpoint, or use --api-config with a configuration whose `{alias}` is \
                 {recorded}",
                dir.display(),
                path.display()
            );
        }
    }
    opts.endpoints = now;
    Ok(opts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn write_config(dir: &Path, url: &str) -> PathBuf {
        let p = dir.join("api.json");
        std::fs::write(
            &p,
            format!(
                r#"{{"m": {{"model_name": "x", "api_key_var": "sk-test", "base_url": "{url}", "proxy_url": ""}}}}"#
            ),
        )
        .unwrap();
        p
    }

    #[test]
    fn recorded_paths_are_replaced_and_endpoints_compared() {
        let tmp = tempfile::tempdir().unwrap();
        let cfg = write_config(tmp.path(), "http://mine.example/v1");
        let mut recorded = RunOptions::with_defaults("llm:m", 10);
        recorded.api_config = Some("/attacker/api.json".into());
        recorded.prompts = Some("/home/user/.ssh".into());
        recorded.npc_cache = "/home/user/.ssh".into();
        recorded
            .endpoints
            .insert("m".into(), "http://mine.example/v1".into());
        let cache = tmp.path().join("cache");
        let local = Local {
            api_config: Some(&cfg),
            npc_cache: &cache,
            prompts: None,
            accept_endpoint: false,
        };
        let opts = localise(tmp.path(), recorded.clone(), &local).unwrap();
        assert_eq!(opts.api_config.as_deref(), Some(cfg.as_path()));
        assert_eq!(opts.prompts, None);
        assert_eq!(opts.npc_cache, cache);
        assert_eq!(opts.endpoints["m"], "http://mine.example/v1");

        recorded
            .endpoints
            .insert("m".into(), "http://127.0.0.1:9/v1".into());
        let e = format!(
            "{:#}",
            localise(tmp.path(), recorded.clone(), &local).unwrap_err()
        );
        for part in [
            "`m`",
            "http://127.0.0.1:9/v1",
            "http://mine.example/v1",
            "--accept-endpoint",
        ] {
            assert!(e.contains(part), "{part} missing: {e}");
        }
        let accept = Local {
            accept_endpoint: true,
            ..local
        };
        let opts = localise(tmp.path(), recorded, &accept).unwrap();
        assert_eq!(opts.endpoints["m"], "http://mine.example/v1");
    }

    #[test]
    fn aliases_come_from_agent_and_colleagues() {
        let mut o = RunOptions::with_defaults("llm:b", 1);
        o.npc = "llm:a".into();
        assert_eq!(aliases(&o), ["a", "b"]);
        o.agent = "oracle".into();
        o.npc = "scripted".into();
        assert!(aliases(&o).is_empty());
    }
}
