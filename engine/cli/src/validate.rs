//! `tbsim validate`: parse and check scenario files.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;

use tbsim_scenario::load_file;

pub(crate) fn cmd_validate(files: &[PathBuf]) -> Result<ExitCode> {
    let mut bad = 0;
    let mut stdout = std::io::stdout().lock();
    for f in files {
        match load_file(f) {
            Ok(l) => writeln!(
                stdout,
                "ok: {} ({} tasks, {} people)",
                f.display(),
                l.scenario.tasks.len(),
                l.scenario.company.people.len()
            )?,
            Err(e) => {
                bad += 1;
                eprintln!("{e}");
            }
        }
    }
    if bad > 0 {
        eprintln!("{bad} of {} file(s) invalid", files.len());
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}
