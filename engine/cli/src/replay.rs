//! `tbsim replay`: re-drive a recorded run and check every line.

use std::io::Write as _;
use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, Result};

use crate::args::*;

pub(crate) fn cmd_replay(dir: &Path) -> Result<ExitCode> {
    let mut failed = false;
    let mut interrupted = false;
    let mut stdout = std::io::stdout().lock();
    for d in dirs_holding(dir, "trajectory.jsonl")? {
        let report = tbsim_engine::replay::replay(&d)
            .with_context(|| format!("replaying `{}`", d.display()))?;
        match (&report.divergence, &report.recorded_digest) {
            (None, _) if report.interrupted_at.is_some() => {
                interrupted = true;
                writeln!(
                    stdout,
                    "{}: INTERRUPTED at step {}: the trajectory ends without its end line \
                     (a crash, a kill or a full disk); its {} lines reproduce. Continue it with \
                     `tbsim run --resume {}`",
                    d.display(),
                    report.interrupted_at.unwrap_or(0),
                    report.lines,
                    d.display()
                )?;
            }
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
    } else if interrupted {
        // As `tbsim run` when a run can be resumed.
        ExitCode::from(3)
    } else {
        ExitCode::SUCCESS
    })
}
