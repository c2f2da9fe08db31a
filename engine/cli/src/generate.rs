//! `tbsim gen`, `tbsim metatasks` and `tbsim suite`: scenario generation.

use std::io::Write as _;
use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};

use crate::SuiteCommand;
use crate::args::*;

pub(crate) fn cmd_gen(
    suite: Option<&Path>,
    from_evoenv: Option<&Path>,
    seed: u64,
    out: &Path,
) -> Result<ExitCode> {
    let s = match (suite, from_evoenv) {
        (Some(p), _) => tbsim_gen::load_suite(p)?,
        (None, Some(p)) => {
            let text = std::fs::read_to_string(p)
                .with_context(|| format!("cannot read `{}`", p.display()))?;
            let v: serde_json::Value = serde_json::from_str(&text)
                .with_context(|| format!("`{}` is not JSON", p.display()))?;
            tbsim_gen::evoenv::import(&v, seed)
                .map_err(|e| anyhow::anyhow!("{}: {e}", p.display()))?
        }
        (None, None) => bail!("give --suite or --from-evoenv"),
    };
    let written = tbsim_gen::write_suite(&s, out)?;
    let mut stdout = std::io::stdout().lock();
    for p in &written {
        writeln!(stdout, "wrote {}", p.display())?;
    }
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn cmd_metatasks(json: bool) -> Result<ExitCode> {
    let list = tbsim_gen::metatasks()?;
    let mut stdout = std::io::stdout().lock();
    if json {
        writeln!(stdout, "{}", serde_json::to_string_pretty(&list)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    writeln!(
        stdout,
        "{:<22} {:<44} {:<22} {:<5}  params",
        "family", "variant", "domain", "diff"
    )?;
    for m in &list {
        let domain = serde_json::to_value(m.domain)?;
        let diff = serde_json::to_value(m.difficulty)?;
        writeln!(
            stdout,
            "{:<22} {:<44} {:<22} {:<5}  {}",
            m.family,
            m.variant,
            domain.as_str().unwrap_or(""),
            diff.as_str().unwrap_or(""),
            m.params
        )?;
    }
    let families: std::collections::BTreeSet<&str> = list.iter().map(|m| m.family).collect();
    writeln!(
        stdout,
        "{} variants in {} families",
        list.len(),
        families.len()
    )?;
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn cmd_suite(cmd: SuiteCommand) -> Result<ExitCode> {
    let SuiteCommand::New {
        scenarios,
        days,
        seed,
        families,
        mode,
        min_tasks,
        max_tasks,
        company_size,
        name,
        out,
    } = cmd;
    let name = name.unwrap_or_else(|| {
        out.file_stem()
            .map_or("suite".into(), |s| s.to_string_lossy().into_owned())
    });
    let req = tbsim_gen::suite::SuiteRequest {
        name,
        scenarios,
        days,
        seed,
        families,
        mode: match mode {
            ModeArg::Stationary => tbsim_gen::suite::Mode::Stationary,
            ModeArg::Mutable => tbsim_gen::suite::Mode::Mutable,
        },
        tasks: (min_tasks, max_tasks),
        company_size,
    };
    let suite = tbsim_gen::suite::new_suite(&req).map_err(anyhow::Error::msg)?;
    // Prove the suite generates before writing it.
    tbsim_gen::generate_suite(&suite)?;
    if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create `{}`", dir.display()))?;
    }
    std::fs::write(&out, tbsim_gen::suite::suite_to_ron(&suite))
        .with_context(|| format!("cannot write `{}`", out.display()))?;
    writeln!(
        std::io::stdout().lock(),
        "wrote {} ({} scenarios x {} days); generate with `tbsim gen --suite {} --out <DIR>`",
        out.display(),
        scenarios,
        days,
        out.display()
    )?;
    Ok(ExitCode::SUCCESS)
}
