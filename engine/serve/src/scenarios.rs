//! Scenario names to files, confined to the roots the server was given.
//!
//! A name is a file stem (`busy-day`, `traineebench-cl-002`) or a path relative to
//! a root, with or without `.ron` (`traineebench-cl/traineebench-cl-002`). Only
//! `.ron` files inside a root resolve: names with `..`, `.`, an absolute path or a
//! drive are refused outright, and a match is canonicalised and must still lie
//! inside its (canonical) root, so a symlink pointing out of a root leads nowhere.
//! Roots are searched in the order given; within a root, stems are indexed once at
//! startup in sorted path order (symlinked directories are not followed).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, OnceLock};

use serde::{Deserialize, Serialize};

/// A name that resolves to nothing readable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ResolveError {
    /// The name can never name a scenario (empty, too long, `..`, absolute).
    #[error(
        "`{0}` is not a scenario name: give a file stem or a path relative to a scenario root, without `..`"
    )]
    BadName(String),
    /// No scenario of that name.
    #[error("no scenario named `{0}`")]
    Unknown(String),
}

/// The longest scenario name accepted.
pub const MAX_NAME: usize = 512;

/// Where scenarios may be read from.
#[derive(Debug, Clone, Default)]
pub struct ScenarioRoots {
    roots: Vec<Root>,
    /// The listing, made on first use (it parses every file) and kept.
    catalog: Arc<OnceLock<Catalog>>,
}

#[derive(Debug, Clone)]
struct Root {
    dir: PathBuf,
    stems: BTreeMap<String, PathBuf>,
    /// Scenario name to the suite that names it (bundled roots only).
    suites: BTreeMap<String, String>,
}

/// One scenario as listed by `tbsim scenarios` and `GET /v1/scenarios`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ScenarioInfo {
    /// The name to give (`tbsim run NAME`, `scenario` of a session): the file stem.
    pub name: String,
    /// The bundled suite whose plan names it, if any.
    pub suite: Option<String>,
    /// Working days.
    pub days: u32,
    /// The scenario's own master seed (a run without `--seed` uses it; trial `t`
    /// of `tbsim run --trials` uses it plus `t`).
    pub seed: u64,
    /// Tasks over all days.
    pub tasks: usize,
    /// The tasks' meta-task families, sorted, each once.
    pub families: Vec<String>,
    /// What it exercises (may be empty).
    pub description: String,
}

/// A scenario file that could not be read for the listing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct InvalidScenario {
    /// Its stem.
    pub name: String,
    /// Why.
    pub error: String,
}

/// Every scenario the roots hold, by name (the first root holding a stem wins, as
/// in [`ScenarioRoots::resolve`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Catalog {
    /// Scenarios that parse, sorted by name.
    pub scenarios: Vec<ScenarioInfo>,
    /// Files that do not parse, sorted by name.
    pub invalid: Vec<InvalidScenario>,
}

impl Catalog {
    /// Only the scenarios of suite `suite`.
    pub fn in_suite(&self, suite: &str) -> Catalog {
        Catalog {
            scenarios: self
                .scenarios
                .iter()
                .filter(|s| s.suite.as_deref() == Some(suite))
                .cloned()
                .collect(),
            invalid: Vec::new(),
        }
    }

    /// The suites named by any scenario, sorted.
    pub fn suites(&self) -> Vec<String> {
        let set: BTreeSet<&str> = self
            .scenarios
            .iter()
            .filter_map(|s| s.suite.as_deref())
            .collect();
        set.into_iter().map(str::to_owned).collect()
    }
}

/// The part of a suite file the listing reads (the generator owns the format).
#[derive(Deserialize)]
#[serde(rename = "Suite")]
struct SuiteNames {
    name: String,
    scenarios: Vec<PlanName>,
}

#[derive(Deserialize)]
#[serde(rename = "ScenarioPlan")]
struct PlanName {
    name: String,
}

/// The largest suite file read for names.
const MAX_SUITE_BYTES: u64 = 16 << 20;

/// Scenario name to suite name, from the `*.ron` suite files in `dir` (sorted; the
/// first suite naming a scenario wins). Unreadable suites are skipped: they only
/// label the listing.
pub fn suite_names(dir: &Path) -> BTreeMap<String, String> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "ron"))
        .collect();
    files.sort();
    let mut out = BTreeMap::new();
    for f in files {
        if std::fs::metadata(&f).map_or(true, |m| m.len() > MAX_SUITE_BYTES) {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&f) else {
            continue;
        };
        let Ok(suite) = ron::Options::default().from_str::<SuiteNames>(&text) else {
            continue;
        };
        for plan in suite.scenarios {
            out.entry(plan.name).or_insert_with(|| suite.name.clone());
        }
    }
    out
}

impl ScenarioRoots {
    /// Roots from directories (each canonicalised; searched in this order).
    pub fn new(dirs: &[PathBuf]) -> std::io::Result<ScenarioRoots> {
        let mut roots = Vec::new();
        for d in dirs {
            let dir = d.canonicalize()?;
            let mut files = Vec::new();
            walk(&dir, &mut files);
            files.sort();
            let mut stems = BTreeMap::new();
            for f in files {
                if let Some(stem) = f.file_stem().and_then(|s| s.to_str()) {
                    stems.entry(stem.to_owned()).or_insert(f);
                }
            }
            roots.push(Root {
                dir,
                stems,
                suites: BTreeMap::new(),
            });
        }
        Ok(ScenarioRoots {
            roots,
            catalog: Arc::default(),
        })
    }

    /// Adds the bundled content's `scenarios/` as the last root, its scenarios
    /// labelled with the suites of `suites/` that name them.
    pub fn push_bundled(&mut self, content: &Path) -> std::io::Result<()> {
        let mut added = ScenarioRoots::new(&[content.join("scenarios")])?;
        let mut root = added.roots.remove(0);
        root.suites = suite_names(&content.join("suites"));
        self.roots.push(root);
        self.catalog = Arc::default();
        Ok(())
    }

    /// Whether no root was given.
    pub fn is_empty(&self) -> bool {
        self.roots.is_empty()
    }

    /// Every scenario, read once (each file is parsed, not validated) and kept.
    pub fn catalog(&self) -> &Catalog {
        self.catalog.get_or_init(|| self.read_catalog())
    }

    fn read_catalog(&self) -> Catalog {
        let mut seen = BTreeSet::new();
        let mut cat = Catalog::default();
        for root in &self.roots {
            for (stem, path) in &root.stems {
                if !seen.insert(stem.clone()) {
                    continue;
                }
                match read_info(stem, path, root.suites.get(stem)) {
                    Ok(info) => cat.scenarios.push(info),
                    Err(error) => cat.invalid.push(InvalidScenario {
                        name: stem.clone(),
                        error,
                    }),
                }
            }
        }
        cat.scenarios.sort_by(|a, b| a.name.cmp(&b.name));
        cat.invalid.sort_by(|a, b| a.name.cmp(&b.name));
        cat
    }

    /// Every scenario's stem, sorted (for listings).
    pub fn stems(&self) -> Vec<String> {
        let mut all: Vec<String> = self
            .roots
            .iter()
            .flat_map(|r| r.stems.keys().cloned())
            .collect();
        all.sort();
        all.dedup();
        all
    }

    /// The file a name stands for (see the module docs).
    pub fn resolve(&self, name: &str) -> Result<PathBuf, ResolveError> {
        let bad = || ResolveError::BadName(name.to_owned());
        if name.is_empty() || name.len() > MAX_NAME || name.contains(['\0', '\\', ':']) {
            return Err(bad());
        }
        let rel = Path::new(name);
        if !rel.components().all(|c| matches!(c, Component::Normal(_))) {
            return Err(bad());
        }
        let with_ext = if rel.extension().is_some_and(|e| e == "ron") {
            rel.to_path_buf()
        } else {
            PathBuf::from(format!("{name}.ron"))
        };
        for root in &self.roots {
            if let Ok(p) = root.dir.join(&with_ext).canonicalize()
                && p.starts_with(&root.dir)
                && p.is_file()
                && p.extension().is_some_and(|e| e == "ron")
            {
                return Ok(p);
            }
            if !name.contains('/')
                && let Some(p) = root.stems.get(name)
                && let Ok(p) = p.canonicalize()
                && p.starts_with(&root.dir)
            {
                return Ok(p);
            }
        }
        Err(ResolveError::Unknown(name.to_owned()))
    }
}

/// The listing's line for one file.
fn read_info(stem: &str, path: &Path, suite: Option<&String>) -> Result<ScenarioInfo, String> {
    use std::io::Read as _;
    let cap = tbsim_scenario::limits::MAX_SCENARIO_BYTES;
    let mut source = String::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(cap + 1).read_to_string(&mut source))
        .map_err(|e| format!("cannot read it: {e}"))?;
    if source.len() as u64 > cap {
        return Err(format!("larger than {cap} bytes"));
    }
    let s = tbsim_scenario::parse_str(&source, path).map_err(|e| e.to_string())?;
    let families: BTreeSet<&str> = s.tasks.iter().map(|t| t.family.as_str()).collect();
    Ok(ScenarioInfo {
        name: stem.to_owned(),
        suite: suite.cloned(),
        days: s.clock.days,
        seed: s.seed,
        tasks: s.tasks.len(),
        families: families.into_iter().map(str::to_owned).collect(),
        description: s.description,
    })
}

/// `.ron` files at or below `dir`, not following symlinked directories.
fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let Ok(kind) = e.file_type() else { continue };
        let p = e.path();
        if kind.is_dir() {
            walk(&p, out);
        } else if p.extension().is_some_and(|x| x == "ron") {
            out.push(p);
        }
    }
}

/// Why the scenario named `name` (read from `path`) does not load, as told to a
/// client: positions and messages, but no host path (the server's directories are
/// none of an agent's business). Each error names the scenario as the client did,
/// or a sidecar by its file name.
pub fn client_message(name: &str, path: &Path, errors: &tbsim_scenario::ScenarioErrors) -> String {
    let dir = path.parent().unwrap_or(Path::new(""));
    let hidden = |text: &str| {
        let mut t = text.replace(&path.display().to_string(), name);
        if !dir.as_os_str().is_empty() {
            t = t.replace(&dir.display().to_string(), "<scenarios>");
        }
        t
    };
    let shown: Vec<tbsim_scenario::ScenarioError> = errors
        .0
        .iter()
        .map(|e| {
            let mut e = e.clone();
            e.file = if e.file == path {
                PathBuf::from(name)
            } else {
                e.file
                    .file_name()
                    .map_or_else(|| PathBuf::from(name), PathBuf::from)
            };
            e.message = hidden(&e.message);
            e
        })
        .collect();
    hidden(&tbsim_scenario::ScenarioErrors(shown).to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_resolve_inside_the_roots_only() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("root");
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::write(root.join("a.ron"), "x").unwrap();
        std::fs::write(root.join("sub/b.ron"), "x").unwrap();
        std::fs::write(root.join("notes.txt"), "x").unwrap();
        std::fs::write(tmp.path().join("secret.ron"), "x").unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink(tmp.path().join("secret.ron"), root.join("link.ron")).unwrap();
        let roots = ScenarioRoots::new(std::slice::from_ref(&root)).unwrap();
        let canon = root.canonicalize().unwrap();
        assert_eq!(roots.resolve("a").unwrap(), canon.join("a.ron"));
        assert_eq!(roots.resolve("a.ron").unwrap(), canon.join("a.ron"));
        assert_eq!(roots.resolve("b").unwrap(), canon.join("sub/b.ron"));
        assert_eq!(roots.resolve("sub/b").unwrap(), canon.join("sub/b.ron"));
        for bad in [
            "",
            "../secret",
            "sub/../a",
            "/etc/passwd",
            "./a",
            "a\\b",
            "c:x",
        ] {
            assert!(
                matches!(roots.resolve(bad), Err(ResolveError::BadName(_))),
                "{bad}"
            );
        }
        for unknown in ["secret", "notes.txt", "notes", "missing", "link"] {
            assert!(
                matches!(roots.resolve(unknown), Err(ResolveError::Unknown(_))),
                "{unknown}"
            );
        }
    }
}
