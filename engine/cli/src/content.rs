//! The bundled content (`scenarios/`, `suites/`, `prompts/`) and scenarios by name.
//!
//! The content is found at run time, never through the build's source path (a
//! moved or installed binary must still find it):
//!
//! 1. `$TBSIM_CONTENT`, when set (an error if it is not a content directory);
//! 2. relative to the running binary: the Python package's data beside a
//!    pip-installed `bin/tbsim` (`../lib/python3.*/{site,dist}-packages/tbsim/content`,
//!    `../Lib/site-packages/tbsim/content`), `../share/tbsim/content`, or a
//!    `content/` in a directory above the binary (a source checkout's
//!    `target/<profile>/tbsim`);
//! 3. `$CARGO_MANIFEST_DIR/../../content`, read when the process starts (set by
//!    `cargo run` and `cargo test`, whatever the target directory).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use tbsim_serve::scenarios::ScenarioRoots;

/// A directory is content when it holds `scenarios/`.
fn is_content(dir: &Path) -> bool {
    dir.join("scenarios").is_dir()
}

/// The bundled content directory, if one is found (see the module docs).
pub(crate) fn content_dir() -> Result<Option<PathBuf>> {
    if let Some(v) = std::env::var_os("TBSIM_CONTENT") {
        let dir = PathBuf::from(v);
        if !is_content(&dir) {
            bail!(
                "TBSIM_CONTENT is `{}`, which holds no `scenarios/` directory",
                dir.display()
            );
        }
        return Ok(Some(dir));
    }
    let exe = std::env::current_exe().and_then(|p| p.canonicalize());
    if let Some(bin) = exe.ok().as_deref().and_then(Path::parent)
        && let Some(found) = beside_binary(bin)
    {
        return Ok(Some(found));
    }
    if let Some(m) = std::env::var_os("CARGO_MANIFEST_DIR") {
        let dir = Path::new(&m).join("../../content");
        if is_content(&dir) {
            return Ok(Some(dir));
        }
    }
    Ok(None)
}

/// Content placed relative to the directory `bin` holding the binary.
fn beside_binary(bin: &Path) -> Option<PathBuf> {
    let prefix = bin.parent()?;
    let mut candidates = Vec::new();
    // A wheel installs the binary in `<prefix>/bin` and the package under
    // `<prefix>/lib/pythonX.Y/site-packages` (`dist-packages` on Debian's system
    // Python); sorted, so the choice does not depend on directory order.
    if let Ok(entries) = std::fs::read_dir(prefix.join("lib")) {
        let mut pys: Vec<PathBuf> = entries
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with("python3"))
            .map(|e| e.path())
            .collect();
        pys.sort();
        for py in pys {
            candidates.push(py.join("site-packages/tbsim/content"));
            candidates.push(py.join("dist-packages/tbsim/content"));
        }
    }
    candidates.push(prefix.join("Lib/site-packages/tbsim/content"));
    candidates.push(prefix.join("share/tbsim/content"));
    // A source checkout: `<repo>/target/<profile>/tbsim` (or a target directory
    // placed anywhere inside the checkout).
    for dir in bin.ancestors().take(6) {
        candidates.push(dir.join("content"));
    }
    candidates.into_iter().find(|c| is_content(c))
}

/// The longest scenario name taken from the command line.
const MAX_NAME: usize = 128;

/// Whether `s` can be a scenario name: one segment of `A-Z a-z 0-9 . _ -`, not
/// starting with `.` (so never `..`, a hidden file or a path).
pub(crate) fn is_scenario_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= MAX_NAME
        && !s.starts_with('.')
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

/// The roots scenario names resolve in: `extra` (if given) first, then the
/// bundled content (if found).
pub(crate) fn roots(extra: Option<&Path>) -> Result<ScenarioRoots> {
    roots_with(extra, &[])
}

/// [`roots`] with more directories after `extra` (generated instances).
pub(crate) fn roots_with(extra: Option<&Path>, more: &[PathBuf]) -> Result<ScenarioRoots> {
    let mut dirs = Vec::new();
    if let Some(d) = extra {
        if !d.is_dir() {
            bail!("--scenarios `{}` is not a directory", d.display());
        }
        dirs.push(d.to_path_buf());
    }
    dirs.extend(more.iter().cloned());
    let mut roots = if dirs.is_empty() {
        ScenarioRoots::default()
    } else {
        ScenarioRoots::new(&dirs).with_context(|| format!("cannot read `{}`", dirs[0].display()))?
    };
    if let Some(c) = content_dir()? {
        roots
            .push_bundled(&c)
            .with_context(|| format!("cannot read the bundled content in `{}`", c.display()))?;
    }
    Ok(roots)
}

/// A scenario given on the command line: an existing file as it is, else a
/// bundled scenario's name (`busy-day`).
pub(crate) fn scenario_path(arg: &Path) -> Result<PathBuf> {
    if arg.exists() {
        return Ok(arg.to_path_buf());
    }
    let Some(name) = arg.to_str().filter(|s| is_scenario_name(s)) else {
        bail!(
            "`{}` is neither a file nor a scenario name (letters, digits, `.`, `_`, `-`; see `tbsim scenarios`)",
            arg.display()
        );
    };
    let name = name.strip_suffix(".ron").unwrap_or(name);
    let roots = roots(None)?;
    if roots.is_empty() {
        bail!(
            "`{name}` is not a file, and no bundled content was found to look it up in; \
             set TBSIM_CONTENT or give a path"
        );
    }
    roots.resolve(name).map_err(|_| {
        anyhow::anyhow!(
            "`{name}` is neither a file nor a bundled scenario; `tbsim scenarios` lists the names"
        )
    })
}

/// `tbsim scenarios`: the scenarios that can be given by name.
pub(crate) fn cmd_scenarios(
    json: bool,
    suite: Option<&str>,
    extra: Option<&Path>,
) -> Result<std::process::ExitCode> {
    use std::io::Write as _;
    let roots = roots(extra)?;
    if roots.is_empty() {
        bail!(
            "no bundled content found beside the tbsim binary and no --scenarios DIR; set TBSIM_CONTENT"
        );
    }
    let all = roots.catalog();
    let cat = match suite {
        Some(s) => {
            let c = all.in_suite(s);
            if c.scenarios.is_empty() {
                bail!("{}", tbsim_serve::http::unknown_suite(s, &all.suites()));
            }
            c
        }
        None => all.clone(),
    };
    let mut out = std::io::stdout().lock();
    if json {
        writeln!(out, "{}", serde_json::to_string_pretty(&cat)?)?;
    } else {
        writeln!(
            out,
            "{:<28} {:<18} {:>4} {:>5}  families",
            "name", "suite", "days", "tasks"
        )?;
        for s in &cat.scenarios {
            writeln!(
                out,
                "{:<28} {:<18} {:>4} {:>5}  {}",
                s.name,
                s.suite.as_deref().unwrap_or("-"),
                s.days,
                s.tasks,
                s.families.join(",")
            )?;
        }
        for bad in &cat.invalid {
            writeln!(out, "{:<28} (does not parse: {})", bad.name, bad.error)?;
        }
    }
    Ok(std::process::ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_one_safe_segment() {
        for ok in ["busy-day", "traineebench-cl-002", "a.ron", "A_b.1"] {
            assert!(is_scenario_name(ok), "{ok}");
        }
        let long = "a".repeat(MAX_NAME + 1);
        for bad in [
            "",
            ".",
            "..",
            ".hidden",
            "../x",
            "a/b",
            "/etc/passwd",
            "a\\b",
            "c:x",
            "a b",
            "é",
            long.as_str(),
        ] {
            assert!(!is_scenario_name(bad), "{bad}");
        }
    }

    #[test]
    fn content_is_found_beside_an_installed_binary() {
        let tmp = tempfile::tempdir().unwrap();
        let prefix = tmp.path();
        let pkg = prefix.join("lib/python3.12/site-packages/tbsim/content");
        std::fs::create_dir_all(pkg.join("scenarios")).unwrap();
        std::fs::create_dir_all(prefix.join("bin")).unwrap();
        assert_eq!(beside_binary(&prefix.join("bin")), Some(pkg));
        let other = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(other.path().join("bin")).unwrap();
        assert_eq!(beside_binary(&other.path().join("bin")), None);
    }
}
