//! `tbsim family`: script families. `family check` is the validity gate a family
//! must pass before it ships; `family new` scaffolds one that passes it.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};

#[derive(Subcommand, Debug)]
pub(crate) enum FamilyCommand {
    /// The validity gate: for every variant and seed, generation is byte-stable,
    /// the scenario validates, the oracle scores 1 and the idle agent 0, every
    /// adversary stays at or under 0.05 and solves nothing, every wrong answer
    /// fails, answers vary, the answer-in-observation scan finds nothing, and the
    /// learned shortcut probe does no better than chance on held-out seeds
    /// (shares judged by their upper 95% bound; see docs/validity.md).
    Check(CheckArgs),
    /// Write a new family folder (`NAME/family.star`, `NAME/README.md`) that
    /// passes `tbsim family check`.
    New {
        /// The family's folder; its last component is the family key (a-z, 0-9, _).
        dir: PathBuf,
    },
    /// Ask a model to write a family, run the gate on it, and feed the gate's
    /// failures back, until it passes or the rounds run out.
    Draft(crate::family_draft::DraftArgs),
    /// Print the script API reference (`ctx`, `rng`, `tools`, built-ins, the
    /// prelude), generated from the host's code; `docs/authoring.md` holds it.
    Reference,
}

#[derive(Args, Debug)]
pub(crate) struct CheckArgs {
    /// Family folders (each holding `family.star`), or the keys of registered
    /// families (a Rust family's key checks it the same way, with its Rust solver,
    /// for comparing a port with its original).
    #[arg(required = true)]
    pub dirs: Vec<PathBuf>,
    /// Seeds per variant.
    #[arg(long, default_value_t = 200)]
    pub seeds: u64,
    /// Also require the independent Rust solver (`--agent solver`) to score 1 on
    /// every instance (for ports of Rust families).
    #[arg(long)]
    pub rust_solver: bool,
    /// Adversaries to run (default: every one of the library).
    #[arg(long, value_delimiter = ',')]
    pub adversaries: Vec<String>,
    /// Instances checked at once (the output is the same whatever the number).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Judge shares by the lower 95% bound (fail only when a limit is shown to be
    /// exceeded): a screen for few seeds. By default the upper bound must be
    /// within each limit, which needs about 60 seeds per variant to be possible.
    #[arg(long)]
    pub screen: bool,
    /// Skip the learned shortcut probe.
    #[arg(long)]
    pub no_probe: bool,
    /// Write each family's probe record (`<family>.probe.json`) to this folder.
    #[arg(long)]
    pub probe_out: Option<PathBuf>,
    /// Only the variants whose key starts with one of these prefixes (comma
    /// separated, e.g. `attendance/total_absence_days/`): gate again what a change
    /// touched. The whole family's gate is still the one that counts.
    #[arg(long, value_delimiter = ',')]
    pub variants: Vec<String>,
}

pub(crate) fn cmd_family(cmd: FamilyCommand) -> Result<ExitCode> {
    match cmd {
        FamilyCommand::Check(a) => {
            let report = tbsim_validity::gate::check(
                &tbsim_validity::gate::Options {
                    dirs: a.dirs,
                    seeds: a.seeds,
                    rust_solver: a.rust_solver,
                    adversaries: a.adversaries,
                    threads: a.threads,
                    bound: if a.screen {
                        tbsim_validity::gate::Bound::Lower
                    } else {
                        tbsim_validity::gate::Bound::Upper
                    },
                    probe: !a.no_probe,
                    probe_out: a.probe_out,
                    variants: a.variants,
                },
                // Script errors quote `fail()` messages: escaped before the terminal sees them.
                &mut tbsim_core::term::Escaped::new(std::io::stdout().lock()),
            )?;
            Ok(if report.passed() {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            })
        }
        FamilyCommand::New { dir } => scaffold(&dir),
        FamilyCommand::Draft(a) => crate::family_draft::cmd_draft(&a),
        FamilyCommand::Reference => {
            print!("{}", tbsim_gen::script_host::reference()?);
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// The scaffold: the bundled worked example (`inventory_reorder`, which passes
/// the gate) under the new key, to edit from there.
const TEMPLATE: &str = include_str!("../../../content/families/inventory_reorder/family.star");
const TEMPLATE_KEY: &str = "\"key\": \"inventory_reorder\"";
const TEMPLATE_README: &str = "# __KEY__\n\nA script family scaffolded by `tbsim family new` from the worked example\n`inventory_reorder`. Edit `family.star` (see `docs/authoring.md`), then run\n`tbsim family check <this folder>` until it passes.\n\n## Example questions\n\nThe gate sends each to every clue's holder (`{first}`: their first name; `{subject}`: the\nfirst term of the clue's last trigger group). Write them as an intern would ask.\n\n- Hi {first}, what is the current lead time for orders from {subject}?\n- Hello {first}! How many days does delivery from {subject} take at the moment?\n- Hi {first}, do you know the standard lead time for {subject} under the current contract?\n";

fn scaffold(dir: &Path) -> Result<ExitCode> {
    let key = dir
        .file_name()
        .and_then(|n| n.to_str())
        .context("the family folder needs a name")?;
    if key.is_empty()
        || key.len() > 64
        || !key
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
    {
        bail!("a family name is 1-64 characters of a-z, 0-9 and _ (got `{key}`)");
    }
    if tbsim_gen::registry::by_key(key).is_some() {
        bail!("`{key}` is already a family; choose another name");
    }
    if dir.join("family.star").exists() {
        bail!("{} already exists", dir.join("family.star").display());
    }
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    std::fs::write(
        dir.join("family.star"),
        TEMPLATE.replace(TEMPLATE_KEY, &format!("\"key\": \"{key}\"")),
    )?;
    std::fs::write(
        dir.join("README.md"),
        TEMPLATE_README.replace("__KEY__", key),
    )?;
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "wrote {0}/family.star and {0}/README.md; check it with `tbsim family check {0}`",
        dir.display()
    )?;
    Ok(ExitCode::SUCCESS)
}
