//! `tbsim regrade`: recorded runs against a fixed scenario or the current checker.

use std::io::Write as _;
use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, Result};

use crate::args::*;

pub(crate) fn cmd_regrade(dir: &Path, fixed: Option<&Path>) -> Result<ExitCode> {
    let mut stdout = std::io::stdout().lock();
    let verdict = |v: Option<bool>| match v {
        Some(true) => "passed",
        Some(false) => "failed",
        None => "absent",
    };
    for d in dirs_holding(dir, "trajectory.jsonl")? {
        let g = tbsim_engine::replay::regrade(&d, fixed)
            .with_context(|| format!("regrading `{}`", d.display()))?;
        let out = d.join("result.regraded.json");
        let text = serde_json::to_string_pretty(&g.after)? + "\n";
        tbsim_engine::run_dir::write(&out, text.as_bytes())
            .with_context(|| format!("cannot write `{}`", out.display()))?;
        writeln!(
            stdout,
            "{}: checkpoint score {:.3} -> {:.3}, success rate {:.3} -> {:.3}, {} checkpoint{} changed",
            d.display(),
            g.before.checkpoint_score,
            g.after.checkpoint_score,
            g.before.success_rate,
            g.after.success_rate,
            g.changed.len(),
            if g.changed.len() == 1 { "" } else { "s" }
        )?;
        for c in &g.changed {
            writeln!(
                stdout,
                "  {}#{}: {} -> {}",
                c.task,
                c.checkpoint,
                verdict(c.before),
                verdict(c.after)
            )?;
        }
        match &g.agent_saw_differently {
            None => writeln!(
                stdout,
                "  the agent saw the same tool results: its decisions stand as made"
            )?,
            Some(div) => writeln!(
                stdout,
                "  the agent would have seen a different result from step {} on (trajectory line {}); later decisions answer the old world",
                div.step, div.line
            )?,
        }
        writeln!(stdout, "  written to {}", out.display())?;
    }
    Ok(ExitCode::SUCCESS)
}
