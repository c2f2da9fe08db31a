//! `tbsim mcp`: one world served to an MCP client over stdio
//! (`tbsim_serve::mcp::serve_stdio`). Standard output carries only the protocol;
//! the summary goes to standard error.

use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, Result, anyhow};

use tbsim_scenario::load_file;
use tbsim_serve::mcp::{StdioSpec, serve_stdio};

use crate::args::McpArgs;

pub(crate) fn cmd_mcp(args: McpArgs) -> Result<ExitCode> {
    let path = crate::content::scenario_path(&args.scenario)?;
    let loaded = load_file(&path)
        .map_err(|e| anyhow!("{e}"))
        .with_context(|| format!("cannot load `{}`", path.display()))?;
    let spec = StdioSpec {
        scenario: Arc::new(loaded),
        seed: args.seed,
        hints: args.hints,
        feedback: args.feedback.into(),
        max_steps: args.max_steps,
        out: args.out,
        agent_name: args.agent_name,
        tag: args.tag,
    };
    // One thread: the SDK serves each request on a task of its own, and a
    // current-thread runtime runs them in the order they arrived (and the world's
    // lock hands itself out first come, first served), so calls a client sends
    // without waiting for the previous result are still made in its order.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .thread_name("tbsim-mcp")
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let result = runtime.block_on(serve_stdio(spec, shutdown()))?;
    // A pending read of stdin cannot be cancelled; do not wait for it.
    runtime.shutdown_background();
    match result {
        Some(r) => eprintln!(
            "tbsim mcp: {} by {}: score {:.3}, success {:.3}, {} steps, ended {}; digest {}",
            r.scenario,
            r.agent,
            r.checkpoint_score,
            r.success_rate,
            r.steps,
            r.end_reason.map_or("unfinished", |e| e.as_str()),
            r.digest
        ),
        None => eprintln!("tbsim mcp: the client left before initialising; no run"),
    }
    Ok(ExitCode::SUCCESS)
}

/// Ctrl-C or SIGTERM: the run still ends and its directory is written.
async fn shutdown() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}
