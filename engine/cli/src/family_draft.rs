//! `tbsim family draft`: a model writes a family script, the gate judges it, and the
//! gate's failures go back to the model, for a bounded number of rounds (the
//! paper's "automated methods for rule generation").
//!
//! Each round asks for the whole folder again (`family.star` and `README.md` in
//! fenced blocks), writes it to the output folder, and runs `tbsim family check`
//! on it in a child process (a fresh registry each time, and the same gate a person
//! runs). The conversation, every reply and every gate report are kept in
//! `DRAFT_LOG.md` beside the family.
//!
//! The drafted script is a model's, so untrusted: the gate child evaluates it in
//! bounded script hosts (`tbsim_gen::script_child`), and the gate child itself
//! has a deadline (`--gate-timeout`), after which it is killed and the round
//! fails with that reason. What the model wrote reaches the terminal escaped.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::Args;
use tbsim_model::client::{HttpModel, ModelCaller};
use tbsim_model::config::{ApiConfig, locate};
use tbsim_model::message::{Message, Role};

/// The authoring guide and the worked example, as the model's reference.
const GUIDE: &str = include_str!("../../../docs/authoring.md");
const EXAMPLE: &str = include_str!("../../../content/families/inventory_reorder/family.star");
const EXAMPLE_README: &str = include_str!("../../../content/families/inventory_reorder/README.md");
/// The most of a gate report sent back to the model (its failures are at the end).
const REPORT_CHARS: usize = 8_000;

#[derive(Args, Debug)]
pub(crate) struct DraftArgs {
    /// What the family's task is about, in a sentence or two.
    pub about: String,
    /// The model alias of the API configuration to ask.
    #[arg(long)]
    pub model: String,
    /// Model configuration (default: $TBSIM_API_CONFIG, else ./api_config.json).
    #[arg(long)]
    pub api_config: Option<PathBuf>,
    /// The family's folder; its last component is the family key.
    #[arg(long)]
    pub out: PathBuf,
    /// Rounds of writing and checking (the first draft counts as one).
    #[arg(long, default_value_t = 3)]
    pub rounds: u32,
    /// Seeds per variant for the gate in each round.
    #[arg(long, default_value_t = 200)]
    pub seeds: u64,
    /// Adversaries the gate runs (default: every one).
    #[arg(long, value_delimiter = ',')]
    pub adversaries: Vec<String>,
    /// Seconds the gate may take per round before it is stopped (the round then
    /// fails, and the model is told why).
    #[arg(long, default_value_t = 900)]
    pub gate_timeout: u64,
    /// Each round's gate judges shares by the lower 95% bound (`family check
    /// --screen`): a quick screen at few seeds. A family that passes it still
    /// needs `tbsim family check` at 200 seeds to pass the gate.
    #[arg(long)]
    pub screen: bool,
}

fn system_prompt(key: &str) -> String {
    format!(
        "You write meta-task families for tbsim, a simulated workplace where an AI intern is given tasks. \
A family is a Starlark script (`family.star`) plus a `README.md`. Follow the authoring guide below exactly; \
the worked example passes the validity gate and shows every part (declarations, generate, wrong_answers, \
claims, solve). The family key must be `{key}`.\n\
Reply with exactly two fenced blocks and nothing else of substance: first ```starlark with the whole \
family.star, then ```markdown with the whole README.md (with an `## Example questions` section).\n\n\
# Authoring guide\n\n{GUIDE}\n\n# Worked example: family.star\n\n```starlark\n{EXAMPLE}\n```\n\n\
# Worked example: README.md\n\n```markdown\n{EXAMPLE_README}\n```\n"
    )
}

/// The body of the first fenced block whose info string starts with one of `langs`.
fn fenced<'a>(text: &'a str, langs: &[&str]) -> Option<&'a str> {
    let mut rest = text;
    while let Some(i) = rest.find("```") {
        let after = &rest[i + 3..];
        let line_end = after.find('\n')?;
        let info = after[..line_end].trim().to_ascii_lowercase();
        let body = &after[line_end + 1..];
        let close = body.find("\n```").map_or(body.len(), |j| j + 1);
        if langs.iter().any(|l| info.starts_with(l)) {
            return Some(&body[..close]);
        }
        rest = body.get(close + 3..).unwrap_or("");
    }
    None
}

fn reply_text(raw: &serde_json::Value) -> String {
    raw.pointer("/choices/0/message/content")
        .and_then(serde_json::Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

/// The tail of a report: where the gate puts its failures.
fn tail(report: &str) -> &str {
    if report.len() <= REPORT_CHARS {
        return report;
    }
    let mut i = report.len() - REPORT_CHARS;
    while !report.is_char_boundary(i) {
        i += 1;
    }
    &report[i..]
}

pub(crate) fn cmd_draft(a: &DraftArgs) -> Result<ExitCode> {
    if a.rounds == 0 {
        bail!("--rounds must be at least 1");
    }
    let key = a
        .out
        .file_name()
        .and_then(|n| n.to_str())
        .context("the output folder needs a name (the family key)")?
        .to_owned();
    if key.is_empty()
        || !key
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
    {
        bail!("the family key `{key}` must be a-z, 0-9 and _ (it is the output folder's name)");
    }
    if a.out.join("family.star").exists() {
        bail!(
            "{} already holds a family; draft into a new folder",
            a.out.display()
        );
    }
    std::fs::create_dir_all(&a.out)
        .with_context(|| format!("cannot create {}", a.out.display()))?;
    let (path, _) = locate(a.api_config.as_deref());
    let cfg = ApiConfig::load(&path)?.model(&a.model)?;
    let runtime = tbsim_model::client::runtime().context("cannot start the async runtime")?;
    let model = HttpModel::new(cfg, runtime.handle().clone(), 0)?;
    let mut messages = vec![
        Message::text(Role::System, system_prompt(&key)),
        Message::text(
            Role::User,
            format!(
                "Write the family `{key}`. What its task is about: {}",
                a.about
            ),
        ),
    ];
    let log_path = a.out.join("DRAFT_LOG.md");
    let mut log = std::fs::File::create(&log_path)
        .with_context(|| format!("cannot write {}", log_path.display()))?;
    writeln!(log, "# Draft of `{key}`\n\nAbout: {}\n", a.about)?;
    let mut report = String::new();
    for round in 1..=a.rounds {
        let body = model.body(&messages, None, Some(0.2));
        let outcome = runtime.block_on(model.call(body, u64::from(round)));
        let raw = outcome
            .response
            .with_context(|| format!("round {round}: the model call failed"))?;
        let reply = reply_text(&raw);
        writeln!(log, "## Round {round}: the model's reply\n\n{reply}\n")?;
        messages.push(Message::text(Role::Assistant, reply.clone()));
        let (Some(script), Some(readme)) = (
            fenced(&reply, &["starlark", "python", "star"]),
            fenced(&reply, &["markdown", "md"]),
        ) else {
            report = "The reply must hold a ```starlark block (family.star) and a ```markdown block (README.md).".to_owned();
            writeln!(log, "## Round {round}: not a family\n\n{report}\n")?;
            eprintln!("round {round}: the reply holds no family");
            messages.push(Message::text(Role::User, report.clone()));
            continue;
        };
        std::fs::write(a.out.join("family.star"), script)?;
        std::fs::write(a.out.join("README.md"), readme)?;
        let (passed, out) = gate(
            &a.out,
            a.seeds,
            &a.adversaries,
            a.screen,
            std::time::Duration::from_secs(a.gate_timeout.max(1)),
        )?;
        report = out;
        writeln!(
            log,
            "## Round {round}: the gate\n\n```text\n{}\n```\n",
            report.trim_end()
        )?;
        if passed {
            println!("{}", escape(report.trim_end()));
            if a.screen {
                println!(
                    "round {round}: `{key}` passes the gate's screen at {} seeds; written to {} (the gate itself: `tbsim family check {}`)",
                    a.seeds,
                    a.out.display(),
                    a.out.display()
                );
            } else {
                println!(
                    "round {round}: `{key}` passes the gate; written to {}",
                    a.out.display()
                );
            }
            return Ok(ExitCode::SUCCESS);
        }
        eprintln!("round {round}: the gate failed");
        messages.push(Message::text(
            Role::User,
            format!(
                "`tbsim family check` failed on your family. Its report:\n\n```text\n{}\n```\n\nFix every failure and reply with both blocks again, whole.",
                tail(&report)
            ),
        ));
    }
    println!("{}", escape(report.trim_end()));
    println!(
        "no passing family after {} rounds; the last draft and the conversation are in {}",
        a.rounds,
        a.out.display()
    );
    Ok(ExitCode::from(1))
}

fn escape(text: &str) -> std::borrow::Cow<'_, str> {
    tbsim_core::term::escape(text)
}

/// The most of each of the gate's output streams kept (its end).
const GATE_OUTPUT_KEPT: usize = 4 << 20;

/// Runs the gate on `dir` in a child process, stopped after `timeout`: whether
/// it passed, and its report.
fn gate(
    dir: &Path,
    seeds: u64,
    adversaries: &[String],
    screen: bool,
    timeout: std::time::Duration,
) -> Result<(bool, String)> {
    use std::io::Read;
    use std::process::Stdio;
    let exe = std::env::current_exe().context("cannot find the tbsim program")?;
    let mut c = std::process::Command::new(exe);
    c.args(["family", "check", "--seeds", &seeds.to_string()]);
    if !adversaries.is_empty() {
        c.arg("--adversaries").arg(adversaries.join(","));
    }
    if screen {
        c.arg("--screen");
    }
    let mut child = c
        .arg(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .context("cannot run the gate")?;
    // Each stream is read on its own thread (a full pipe would stall the gate),
    // keeping its last GATE_OUTPUT_KEPT bytes.
    let drain = |r: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut kept = Vec::new();
            if let Some(mut r) = r {
                let mut chunk = [0u8; 8192];
                while let Ok(n) = r.read(&mut chunk) {
                    if n == 0 {
                        break;
                    }
                    kept.extend_from_slice(&chunk[..n]);
                    if kept.len() > 2 * GATE_OUTPUT_KEPT {
                        kept.drain(..kept.len() - GATE_OUTPUT_KEPT);
                    }
                }
            }
            kept
        })
    };
    let out = drain(
        child
            .stdout
            .take()
            .map(|r| Box::new(r) as Box<dyn Read + Send>),
    );
    let err = drain(
        child
            .stderr
            .take()
            .map(|r| Box::new(r) as Box<dyn Read + Send>),
    );
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().context("cannot wait for the gate")? {
            break Some(status);
        }
        if started.elapsed() >= timeout {
            // Its script hosts end with it (their parent-death signal).
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let mut text = String::from_utf8_lossy(&out.join().unwrap_or_default()).into_owned();
    text.push_str(&String::from_utf8_lossy(&err.join().unwrap_or_default()));
    match status {
        Some(status) => Ok((status.success(), text)),
        None => {
            text.push_str(&format!(
                "\nthe gate did not finish within {} s (--gate-timeout) and was stopped: \
                 the family must generate and check faster\n",
                timeout.as_secs()
            ));
            Ok((false, text))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fenced_blocks_are_found_by_language() {
        let r = "Here it is.\n```starlark\nFAMILY = {}\n```\n\nand\n\n```markdown\n# x\n\n## Example questions\n- q\n```\n";
        assert_eq!(fenced(r, &["starlark"]), Some("FAMILY = {}\n"));
        assert_eq!(
            fenced(r, &["markdown"]),
            Some("# x\n\n## Example questions\n- q\n")
        );
        assert_eq!(fenced(r, &["json"]), None);
        assert_eq!(fenced("```python\nx = 1", &["python"]), Some("x = 1"));
    }

    #[test]
    fn a_long_report_keeps_its_end() {
        let r = format!("{}failures: at the end", "é".repeat(REPORT_CHARS));
        assert!(tail(&r).ends_with("failures: at the end"));
        assert!(tail(&r).len() <= REPORT_CHARS);
    }
}
