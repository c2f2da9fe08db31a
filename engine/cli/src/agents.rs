//! The agents a run, a fork or a console can be given, by name: the built-in ones,
//! the adversaries, and model-backed ones sharing one setup per process.

use std::sync::Arc;

use anyhow::{Context, Result, bail};

use tbsim_agents::Solver;
use tbsim_engine::agent::{Agent, Idle, Oracle};
use tbsim_engine::npc::{NpcEngine, Scripted};
use tbsim_model::agent::{LlmAgent, Memory};
use tbsim_model::colleague::{LlmNpc, ReplyCache};
use tbsim_model::config::locate;
use tbsim_model::history::{SummaryPolicy, prompt_room};
use tbsim_model::prompt::Templates;
use tbsim_model::{ApiConfig, HttpModel};
use tbsim_scenario::LoadedScenario;

use crate::agent_names::BUILTIN_AGENTS;
use crate::args::{MemoryMode, RunOptions};

/// What model-backed parts of a run share: the runtime their requests run on,
/// the config, one HTTP client per model alias, and the templates.
pub(crate) struct Models {
    pub(crate) runtime: Option<tokio::runtime::Runtime>,
    pub(crate) config: Option<ApiConfig>,
    /// Built once per alias (milliseconds each); every run gets a reseeded copy.
    pub(crate) clients: std::collections::BTreeMap<String, HttpModel>,
    pub(crate) prompts: Arc<Templates>,
    /// Aliases whose context window was announced on stderr.
    pub(crate) announced: std::collections::BTreeSet<String>,
}

impl Models {
    pub(crate) fn new(opts: &RunOptions) -> Result<Models> {
        let prompts = Arc::new(Templates::load(opts.prompts.as_deref())?);
        Ok(Models {
            runtime: None,
            config: None,
            clients: std::collections::BTreeMap::new(),
            prompts,
            announced: std::collections::BTreeSet::new(),
        })
    }

    pub(crate) fn caller(
        &mut self,
        opts: &RunOptions,
        alias: &str,
        seed: u64,
    ) -> Result<Arc<HttpModel>> {
        if let Some(base) = self.clients.get(alias) {
            return Ok(Arc::new(base.reseeded(seed)));
        }
        if self.config.is_none() {
            let (path, _) = locate(opts.api_config.as_deref());
            self.config = Some(ApiConfig::load(&path)?);
        }
        let cfg = self.config.as_ref().expect("loaded").model(alias)?;
        if self.runtime.is_none() {
            self.runtime =
                Some(tbsim_model::client::runtime().context("cannot start the async runtime")?);
        }
        let handle = self.runtime.as_ref().expect("built").handle().clone();
        let base = HttpModel::new(cfg, handle, seed)?;
        self.clients.insert(alias.to_owned(), base.clone());
        Ok(Arc::new(base))
    }

    /// The context window of `alias`'s model (configured, or asked of its server
    /// once), announced on stderr the first time.
    fn context_window(&mut self, alias: &str, caller: &HttpModel) -> Option<u32> {
        let found = caller.discover_context();
        if self.announced.insert(alias.to_owned()) {
            match &found {
                Some((n, from)) => eprintln!(
                    "note: model `{alias}` has a context window of {n} tokens ({from}); its history is kept within it"
                ),
                None => eprintln!(
                    "note: model `{alias}`: no context window configured (`context_tokens`) or reported by its server; only --history-tokens bounds its history"
                ),
            }
        }
        found.map(|f| f.0)
    }

    pub(crate) fn agent(
        &mut self,
        opts: &RunOptions,
        loaded: &LoadedScenario,
        seed: u64,
    ) -> Result<Box<dyn Agent>> {
        Ok(match opts.agent.as_str() {
            "oracle" => Box::new(Oracle::new(&loaded.scenario)),
            "idle" => Box::new(Idle::default()),
            "solver" => Box::new(Solver::new()),
            // Script families' own solvers (`solve(tools, task)`), for their tasks.
            "script-solver" => Box::new(tbsim_gen::script_solver::ScriptSolver::new(
                tbsim_gen::script::entries(),
            )),
            spec if spec.starts_with("adversary:") => {
                let name = &spec["adversary:".len()..];
                Box::new(tbsim_validity::adversary::by_name(name).with_context(|| {
                    let names: Vec<&str> = tbsim_validity::adversary::ADVERSARIES
                        .iter()
                        .map(|(n, _)| *n)
                        .collect();
                    format!(
                        "unknown adversary `{name}`; available: {}",
                        names.join(", ")
                    )
                })?)
            }
            spec => match spec.strip_prefix("llm:") {
                Some(alias) if !alias.is_empty() => {
                    let caller = self.caller(opts, alias, seed)?;
                    let window = self.context_window(alias, &caller);
                    let history = SummaryPolicy {
                        threshold: opts.history_tokens,
                        window: window.map(|c| prompt_room(c, Some(caller.config().max_tokens))),
                        ..SummaryPolicy::default()
                    };
                    let memory = match opts.memory {
                        MemoryMode::None => Memory::None,
                        MemoryMode::Notes => Memory::Notes,
                    };
                    Box::new(LlmAgent::new(
                        spec,
                        caller,
                        self.prompts.clone(),
                        Box::new(history),
                        memory,
                    ))
                }
                _ => bail!(
                    "unknown agent `{spec}`; available: {}, llm:<alias>, adversary:<name>",
                    BUILTIN_AGENTS.join(", ")
                ),
            },
        })
    }

    pub(crate) fn npc(&mut self, opts: &RunOptions, seed: u64) -> Result<Box<dyn NpcEngine>> {
        Ok(match opts.npc.as_str() {
            "scripted" => Box::new(Scripted),
            spec => match spec.strip_prefix("llm:") {
                Some(alias) if !alias.is_empty() => {
                    let caller = self.caller(opts, alias, seed)?;
                    Box::new(LlmNpc::new(
                        caller,
                        self.prompts.clone(),
                        ReplyCache::new(&opts.npc_cache),
                    ))
                }
                _ => bail!("unknown colleagues engine `{spec}`; available: scripted, llm:<alias>"),
            },
        })
    }
}
