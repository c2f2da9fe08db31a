//! `tbsim replay`: re-drive a recorded run and check every line.

use std::io::Write as _;
use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, Result};

use crate::args::*;

pub(crate) fn cmd_replay(dir: &Path) -> Result<ExitCode> {
    let mut failed = false;
    let mut stdout = std::io::stdout().lock();
    for d in dirs_holding(dir, "trajectory.jsonl")? {
        let report = tbsim_engine::replay::replay(&d)
            .with_context(|| format!("replaying `{}`", d.display()))?;
        match (&report.divergence, &report.recorded_digest) {
            (Some(div), _) => {
                failed = true;
                writeln!(
                    stdout,
                    "{}: DIVERGED at line {} (step {})",
                    d.display(),
                    div.line,
                    div.step
                )?;
                writeln!(stdout, "  expected: {}", div.expected)?;
                writeln!(stdout, "  got:      {}", div.got)?;
            }
            (None, Some(rec)) if rec != &report.digest => {
                failed = true;
                writeln!(
                    stdout,
                    "{}: trajectory reproduced, but result.json records digest {rec}, not {}",
                    d.display(),
                    report.digest
                )?;
            }
            _ => writeln!(
                stdout,
                "{}: identical ({} lines, digest {})",
                d.display(),
                report.lines,
                report.digest
            )?,
        }
    }
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
