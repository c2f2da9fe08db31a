//! `tbsim report`: the paper's tables, and `--compare`.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Result, bail};

pub(crate) fn cmd_compare(dirs: &[PathBuf], out: Option<PathBuf>) -> Result<ExitCode> {
    if dirs.len() < 2 {
        bail!("--compare needs at least two run directories (the first is the baseline)");
    }
    let cmp = tbsim_report::compare::Comparison::load(dirs)?;
    let out = out.unwrap_or_else(|| dirs[0].join("report"));
    refuse_link(&out)?;
    let written = cmp.write(&out)?;
    write!(std::io::stdout().lock(), "{}", cmp.markdown())?;
    eprintln!(
        "comparison of {} groups written to {} ({} files)",
        dirs.len(),
        out.display(),
        written.len()
    );
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn cmd_report(dirs: &[PathBuf], out: Option<PathBuf>) -> Result<ExitCode> {
    let runs = tbsim_report::load_runs(dirs)?;
    let report = tbsim_report::Report::new(&runs);
    let out = out.unwrap_or_else(|| {
        // A result.json given directly puts the report beside it.
        let first = &dirs[0];
        let base = if first.is_file() {
            first.parent().unwrap_or(Path::new("."))
        } else {
            first.as_path()
        };
        base.join("report")
    });
    refuse_link(&out)?;
    let written = report.write(&out)?;
    write!(std::io::stdout().lock(), "{}", report.markdown())?;
    eprintln!(
        "report of {} run{} written to {} ({} files)",
        report.runs,
        if report.runs == 1 { "" } else { "s" },
        out.display(),
        written.len()
    );
    if !report.infra_failures.is_empty() {
        eprintln!(
            "{} run(s) ended by an infrastructure failure: left out of the scores (see \"Infrastructure failures\"); continue them with `tbsim run --resume <RUN_DIR>`",
            report.infra_failures.len()
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// The report's folder is often inside a shared run directory, where a link by its
/// name would send the files anywhere.
fn refuse_link(out: &Path) -> Result<()> {
    if out
        .symlink_metadata()
        .is_ok_and(|m| m.file_type().is_symlink())
    {
        bail!(
            "`{}` is a symbolic link; give --out a real folder",
            out.display()
        );
    }
    Ok(())
}
