//! `run.json`: the options a run was started with, kept in its run directory so
//! `tbsim run --resume` can rebuild the same agent and start a run that never
//! started. Every front end that writes run directories (the CLI, the session API)
//! writes this one shape.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::protocol::SimConfig;
use crate::run::RunLimits;
use crate::time::SimDuration;

/// What a model-backed agent carries between days.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MemoryMode {
    /// Nothing.
    #[default]
    None,
    /// Its own notes.
    Notes,
}

/// The options of a run. Never holds a key: only the model config file's path.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunOptions {
    /// The agent (`oracle`, `llm:<alias>`, `http:<name>`, ...).
    pub agent: String,
    /// Colleagues' engine (`scripted` or `llm:<alias>`).
    pub npc: String,
    /// The model configuration file. Recorded for the reader; `--resume` and `fork`
    /// never use a recorded one (it could name a config that sends the user's key
    /// elsewhere).
    pub api_config: Option<PathBuf>,
    /// Where model-played colleagues' replies are cached (recorded only, like
    /// `api_config`: a resumed run caches where its own command line says).
    pub npc_cache: PathBuf,
    /// Prompt templates replacing the built-in ones (recorded only, like
    /// `api_config`: a recorded path could name any file of the host).
    pub prompts: Option<PathBuf>,
    /// What a model-backed agent carries between days.
    pub memory: MemoryMode,
    /// Estimated history tokens above which a model-backed agent summarises.
    pub history_tokens: usize,
    /// Maximum decisions per working day.
    pub max_steps: u64,
    /// Model-token budget.
    pub token_budget: Option<u64>,
    /// Simulated-time budget in minutes.
    pub time_budget_minutes: Option<u64>,
    /// The endpoint (`base_url`) each model alias the run used pointed to when it
    /// started. A run directory is shared data, so this is only compared with the
    /// resuming user's own configuration, never used to reach anything.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub endpoints: BTreeMap<String, String>,
    /// A label the caller gave the run (`--tag`, `tag=`): `tbsim report` groups
    /// runs by agent and tag, so one model's runs under two prompts or harness
    /// versions are told apart. See [`check_tag`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tag: Option<String>,
}

/// The longest tag accepted.
pub const MAX_TAG: usize = 64;

/// A tag that cannot label a run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("a tag must be 1-{MAX_TAG} characters of A-Z, a-z, 0-9, `-`, `_`, `.`, not `{0}`")]
pub struct BadTag(pub String);

/// Checks a run's tag: 1-[`MAX_TAG`] characters of A-Z, a-z, 0-9, `-`, `_`, `.`
/// (it ends up in report tables, CSV cells and file names).
pub fn check_tag(tag: &str) -> Result<(), BadTag> {
    let ok = !tag.is_empty()
        && tag.len() <= MAX_TAG
        && tag
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if ok {
        Ok(())
    } else {
        let shown: String = tag.chars().take(MAX_TAG + 1).collect();
        Err(BadTag(shown))
    }
}

impl RunOptions {
    /// The options `tbsim run --agent <agent> --max-steps <max_steps>` records with
    /// every other option at its default (scripted colleagues, no budgets).
    pub fn with_defaults(agent: impl Into<String>, max_steps: u64) -> RunOptions {
        RunOptions {
            agent: agent.into(),
            npc: "scripted".into(),
            api_config: None,
            npc_cache: PathBuf::from("runs/.npc-cache"),
            prompts: None,
            memory: MemoryMode::None,
            history_tokens: 60_000,
            max_steps,
            token_budget: None,
            time_budget_minutes: None,
            endpoints: BTreeMap::new(),
            tag: None,
        }
    }

    /// The run's limits.
    pub fn limits(&self) -> RunLimits {
        RunLimits {
            max_steps: self.max_steps,
            token_budget: self.token_budget,
            time_budget: self.time_budget_minutes.map(SimDuration::minutes),
        }
    }
}

/// `run.json`: the run's options, and what `--resume` needs to start it if it never
/// started (its world settings and trial). Files written before the world settings
/// were kept still read: the extra fields are then absent.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunFile {
    /// The options.
    #[serde(flatten)]
    pub options: RunOptions,
    /// The world's settings, with this run's seed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sim: Option<SimConfig>,
    /// Trial index (from 0).
    #[serde(default)]
    pub trial: u32,
    /// The number of trials of the scenario in its batch.
    #[serde(default = "one")]
    pub trials: u32,
}

fn one() -> u32 {
    1
}

/// `run.json` could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum RunFileError {
    /// The file could not be read or written.
    #[error("cannot access `{path}`: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The file is not a run description.
    #[error("`{path}` is not a run description: {source}")]
    Format {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: serde_json::Error,
    },
}

impl RunFile {
    /// The file's name in a run directory.
    pub const NAME: &'static str = "run.json";

    /// Reads `<dir>/run.json`.
    pub fn read(dir: &Path) -> Result<RunFile, RunFileError> {
        let path = dir.join(Self::NAME);
        let text =
            crate::run_dir::read_text(&path, crate::run_dir::MAX_RUN_FILE_BYTES).map_err(|e| {
                RunFileError::Io {
                    path: path.clone(),
                    source: e.into_io(),
                }
            })?;
        serde_json::from_str(&text).map_err(|source| RunFileError::Format { path, source })
    }

    /// Writes `<dir>/run.json` (pretty JSON with a final newline).
    pub fn write(&self, dir: &Path) -> Result<(), RunFileError> {
        let path = dir.join(Self::NAME);
        let text = serde_json::to_string_pretty(self).expect("run files serialise") + "\n";
        crate::run_dir::write(&path, text.as_bytes())
            .map_err(|source| RunFileError::Io { path, source })
    }

    /// The trial `result.json` records (as for a batch job).
    pub fn recorded_trial(&self) -> Option<u32> {
        crate::batch::recorded_trial(self.trial, self.trials)
    }
}
