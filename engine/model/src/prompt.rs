//! Prompt construction: what the model is told, and how.
//!
//! [`PromptBuilder`] is the replaceable part. [`Templates`] implements it by filling
//! text templates: the built-in ones are `content/prompts/*.md` (compiled in), and
//! `--prompts <DIR>` replaces any of them by a file of the same name. Templates speak
//! tbsim's one dialect ([`tbsim_core::template`]): `{name}` with a name of `a-z` and
//! `_` is a value; any other brace is text, so no escapes are needed. Each template
//! accepts a fixed set of names ([`TEMPLATES`]); an unknown name is an error when the
//! templates are loaded, not a surprise in the middle of a run.
//!
//! Notifications and the per-round status line are rendered in code: they are the
//! simulator's interface, not prose. Every user message the agent sends starts with
//! `[System time] <time> · step <n>`, where `n` counts the decisions made so far.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use tbsim_core::protocol::Briefing;
use tbsim_core::protocol::Notification;
use tbsim_core::template;
use tbsim_engine::npc::NpcQuery;

/// Template names and the values each accepts.
pub const TEMPLATES: &[(&str, &[&str])] = &[
    (
        "system",
        &[
            "name",
            "company",
            "department",
            "manager",
            "day_starts",
            "day_ends",
        ],
    ),
    ("task", &["name", "company", "notifications", "notes"]),
    ("day", &["day", "feedback", "notifications", "notes"]),
    ("nudge", &[]),
    ("cut_off", &["limit"]),
    ("summary", &["transcript"]),
    ("reflection", &["day", "transcript", "feedback", "notes"]),
    (
        "npc",
        &[
            "name",
            "position",
            "department",
            "company",
            "persona",
            "intern",
            "facts",
            "default_reply",
            "group",
        ],
    ),
];

const BUILTIN: &[(&str, &str)] = &[
    ("system", include_str!("../../../content/prompts/system.md")),
    ("task", include_str!("../../../content/prompts/task.md")),
    ("day", include_str!("../../../content/prompts/day.md")),
    ("nudge", include_str!("../../../content/prompts/nudge.md")),
    (
        "cut_off",
        include_str!("../../../content/prompts/cut_off.md"),
    ),
    (
        "summary",
        include_str!("../../../content/prompts/summary.md"),
    ),
    (
        "reflection",
        include_str!("../../../content/prompts/reflection.md"),
    ),
    ("npc", include_str!("../../../content/prompts/npc.md")),
];

/// A template problem.
#[derive(Debug, thiserror::Error)]
pub enum PromptError {
    /// A file cannot be read.
    #[error("cannot read prompt template `{0}`: {1}")]
    Io(PathBuf, std::io::Error),
    /// A template names a value it does not get.
    #[error(
        "prompt template `{file}` uses `{{{name}}}`, which is not available; it may use: {allowed}"
    )]
    Unknown {
        /// Template file.
        file: String,
        /// The name.
        name: String,
        /// What it may use.
        allowed: String,
    },
    /// A file in the directory is not a known template.
    #[error("`{0}` is not a prompt template; known templates: {1}")]
    NotATemplate(PathBuf, String),
}

/// Builds the text of every prompt.
pub trait PromptBuilder: Send + Sync {
    /// The system prompt.
    fn system(&self, b: &Briefing) -> String;
    /// The first user message of the run.
    fn task(&self, b: &Briefing, notifications: &str, notes: Option<&str>) -> String;
    /// The first user message of a later day.
    fn day(&self, day: u32, feedback: &str, notifications: &str, notes: Option<&str>) -> String;
    /// What to say after a turn without tool calls.
    fn nudge(&self) -> String;
    /// What to say after a reply the reply limit (`limit` tokens, if known) cut off.
    fn cut_off(&self, limit: Option<u32>) -> String {
        let limit = limit.map_or_else(|| "the reply limit".to_owned(), |l| l.to_string());
        format!("Your last reply was cut off at the reply limit ({limit} tokens).")
    }
    /// The request to summarise part of the history.
    fn summary(&self, transcript: &str) -> String;
    /// The end-of-day reflection request.
    fn reflection(&self, day: u32, transcript: &str, feedback: &str, notes: Option<&str>)
    -> String;
    /// The system prompt of a model-played colleague.
    fn npc(&self, q: &NpcQuery<'_>) -> String;
}

/// Parsed templates: literal text and value names, alternating.
#[derive(Debug, Clone)]
pub struct Templates {
    parsed: BTreeMap<&'static str, Vec<Piece>>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    Text(String),
    Var(String),
}

fn parse(file: &str, text: &str, allowed: &[&str]) -> Result<Vec<Piece>, PromptError> {
    template::pieces(text)
        .into_iter()
        .map(|p| match p {
            template::Piece::Text(s) => Ok(Piece::Text(s.to_owned())),
            template::Piece::Var(name) if allowed.contains(&name) => {
                Ok(Piece::Var(name.to_owned()))
            }
            template::Piece::Var(name) => Err(PromptError::Unknown {
                file: file.to_owned(),
                name: name.to_owned(),
                allowed: if allowed.is_empty() {
                    "(nothing)".into()
                } else {
                    allowed.join(", ")
                },
            }),
        })
        .collect()
}

impl Templates {
    /// The built-in templates.
    pub fn builtin() -> Templates {
        Templates::load(None).expect("the built-in templates are valid")
    }

    /// The built-in templates, with any in `dir` (`<name>.md`) replacing them.
    pub fn load(dir: Option<&Path>) -> Result<Templates, PromptError> {
        let known: Vec<&str> = TEMPLATES.iter().map(|t| t.0).collect();
        if let Some(d) = dir {
            let entries = std::fs::read_dir(d).map_err(|e| PromptError::Io(d.to_owned(), e))?;
            for e in entries.flatten() {
                let p = e.path();
                let stem = p.file_stem().and_then(|s| s.to_str()).unwrap_or_default();
                if p.extension().is_some_and(|x| x == "md") && !known.contains(&stem) {
                    return Err(PromptError::NotATemplate(p, known.join(", ")));
                }
            }
        }
        let mut parsed = BTreeMap::new();
        for (name, allowed) in TEMPLATES {
            let builtin = BUILTIN
                .iter()
                .find(|b| b.0 == *name)
                .map(|b| b.1)
                .unwrap_or_default();
            let (file, text) = match dir.map(|d| d.join(format!("{name}.md"))) {
                Some(p) if p.is_file() => {
                    let t =
                        std::fs::read_to_string(&p).map_err(|e| PromptError::Io(p.clone(), e))?;
                    (p.display().to_string(), t)
                }
                _ => (format!("{name}.md (built in)"), builtin.to_owned()),
            };
            parsed.insert(*name, parse(&file, &text, allowed)?);
        }
        Ok(Templates { parsed })
    }

    /// Fills template `name`. Missing values render empty.
    pub fn render(&self, name: &str, values: &[(&str, &str)]) -> String {
        let mut out = String::new();
        for p in self.parsed.get(name).map(Vec::as_slice).unwrap_or_default() {
            match p {
                Piece::Text(t) => out.push_str(t),
                Piece::Var(v) => {
                    out.push_str(values.iter().find(|(k, _)| k == v).map_or("", |(_, x)| x))
                }
            }
        }
        out.trim_end().to_owned()
    }
}

fn notes_block(notes: Option<&str>) -> String {
    match notes.map(str::trim).filter(|n| !n.is_empty()) {
        Some(n) => format!("\nNotes you wrote for yourself at the end of earlier days:\n{n}\n"),
        None => String::new(),
    }
}

impl PromptBuilder for Templates {
    fn system(&self, b: &Briefing) -> String {
        self.render(
            "system",
            &[
                ("name", &b.you),
                ("company", &b.company),
                ("department", &b.department),
                ("manager", &b.manager),
                ("day_starts", &b.day_starts.replace('T', " ")),
                ("day_ends", &b.day_ends.replace('T', " ")),
            ],
        )
    }

    fn task(&self, b: &Briefing, notifications: &str, notes: Option<&str>) -> String {
        self.render(
            "task",
            &[
                ("name", &b.you),
                ("company", &b.company),
                ("notifications", notifications),
                ("notes", &notes_block(notes)),
            ],
        )
    }

    fn day(&self, day: u32, feedback: &str, notifications: &str, notes: Option<&str>) -> String {
        self.render(
            "day",
            &[
                ("day", &day.to_string()),
                ("feedback", feedback),
                ("notifications", notifications),
                ("notes", &notes_block(notes)),
            ],
        )
    }

    fn nudge(&self) -> String {
        self.render("nudge", &[])
    }

    fn cut_off(&self, limit: Option<u32>) -> String {
        let limit = limit.map_or_else(|| "?".to_owned(), |l| l.to_string());
        self.render("cut_off", &[("limit", &limit)])
    }

    fn summary(&self, transcript: &str) -> String {
        self.render("summary", &[("transcript", transcript)])
    }

    fn reflection(
        &self,
        day: u32,
        transcript: &str,
        feedback: &str,
        notes: Option<&str>,
    ) -> String {
        self.render(
            "reflection",
            &[
                ("day", &day.to_string()),
                ("transcript", transcript),
                ("feedback", feedback),
                (
                    "notes",
                    notes
                        .filter(|n| !n.trim().is_empty())
                        .unwrap_or("(none yet)"),
                ),
            ],
        )
    }

    fn npc(&self, q: &NpcQuery<'_>) -> String {
        let facts = if q.clues.is_empty() {
            "(nothing relevant to the intern's work)".to_owned()
        } else {
            q.clues
                .iter()
                .map(|c| {
                    let about: Vec<String> = c.topics.iter().map(|g| g.join(" or ")).collect();
                    format!(
                        "<fact about=\"{}\">\n{}\n</fact>",
                        about.join("; and ").replace('"', "'"),
                        c.response.trim()
                    )
                })
                .collect::<Vec<_>>()
                .join("\n\n")
        };
        let group = if q.direct {
            String::new()
        } else {
            format!(
                "\nThis message was posted in a group chat. If it is not about anything you know, reply with exactly {NO_REPLY} and nothing else."
            )
        };
        self.render(
            "npc",
            &[
                ("name", q.name),
                ("position", q.position),
                ("department", q.department),
                ("company", q.company),
                ("persona", q.persona),
                ("intern", q.intern),
                ("facts", &facts),
                ("default_reply", q.default_reply),
                ("group", &group),
            ],
        )
    }
}

/// What a colleague in a group says to stay silent.
pub const NO_REPLY: &str = "(no reply)";

/// The first line of every user message the agent sends.
pub fn status_line(time: &str, step: u64) -> String {
    format!("[System time] {time} · step {step}")
}

/// A notification as one line (or a few) of text.
pub fn render_notification(n: &Notification) -> String {
    match n {
        Notification::Message {
            at,
            thread,
            from,
            from_name,
            text,
        } => format!("[{at}] Message from {from_name} ({from}) in {thread}:\n{text}"),
        Notification::TaskReleased {
            at,
            task,
            title,
            objective,
            assigned_by,
            deadline,
            priority,
            hints,
        } => {
            let priority = serde_json::to_value(priority)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default();
            let mut s = format!(
                "[{at}] New task {task}: \"{title}\" (from {assigned_by}; due {deadline}; priority {priority})\n{objective}"
            );
            for h in hints {
                s.push_str(&format!("\nHint: {h}"));
            }
            s
        }
        Notification::MeetingStarting {
            at,
            meeting,
            title,
            room,
            ends,
        } => format!(
            "[{at}] Your meeting \"{title}\" ({meeting}) is starting in {room}; it ends at {ends}. Join it with join_meeting."
        ),
        Notification::Announcement { at, meeting, text } => {
            format!("[{at}] Said in the meeting {meeting}:\n{text}")
        }
        Notification::MeetingEnded { at, meeting } => {
            format!("[{at}] The meeting {meeting} ended.")
        }
        Notification::FileAdded { at, path } => format!("[{at}] A new file appeared: {path}"),
        Notification::DeadlinePassed { at, task, title } => {
            format!("[{at}] The deadline of {task} (\"{title}\") has passed.")
        }
        Notification::DayEnded { at, day, more_days } => {
            if *more_days {
                format!("[{at}] Working day {day} is over.")
            } else {
                format!("[{at}] Working day {day} is over; it was the last one.")
            }
        }
        Notification::Guidance {
            at,
            from,
            task,
            tier,
            text,
        } => match (task, tier) {
            (Some(task), Some(tier)) => {
                format!("[{at}] Hint {tier} from your mentor {from} on {task}:\n{text}")
            }
            (Some(task), None) => format!("[{at}] Your mentor {from} about {task}:\n{text}"),
            _ => format!("[{at}] Your mentor {from}:\n{text}"),
        },
        Notification::DayStarted { at, day, feedback } => {
            if feedback.is_empty() {
                format!("[{at}] Working day {day} has started.")
            } else {
                format!(
                    "[{at}] Working day {day} has started. Your mentor's feedback:\n{}",
                    feedback.join("\n")
                )
            }
        }
    }
}

/// Notifications as a block of text (`(nothing new)` when there are none).
pub fn render_notifications<'a>(ns: impl IntoIterator<Item = &'a Notification>) -> String {
    let lines: Vec<String> = ns.into_iter().map(render_notification).collect();
    if lines.is_empty() {
        "(nothing new)".to_owned()
    } else {
        lines.join("\n\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_templates_render_every_value() {
        let t = Templates::builtin();
        let b = Briefing {
            you: "Alex Kim".into(),
            key: "agent/alex-kim".into(),
            department: "Finance".into(),
            manager: "Dana Li".into(),
            company: "Acme".into(),
            day_starts: "2024-03-04T09:00:00".into(),
            day_ends: "2024-03-04T17:00:00".into(),
        };
        let s = t.system(&b);
        assert!(s.contains("Alex Kim") && s.contains("Finance") && s.contains("Dana Li"));
        assert!(s.contains("2024-03-04 09:00:00") && !s.contains('{'), "{s}");
        let task = t.task(&b, "N1", Some("be quick"));
        assert!(task.contains("N1") && task.contains("be quick"), "{task}");
        assert!(!t.task(&b, "N1", None).contains("Notes you wrote"));
        let day = t.day(2, "F1", "N2", None);
        assert!(day.contains("day 2") && day.contains("F1") && day.contains("N2"));
        assert!(t.summary("LOG").contains("LOG"));
        assert!(t.reflection(1, "LOG", "FB", None).contains("(none yet)"));
        assert!(!t.nudge().is_empty());
    }

    #[test]
    fn a_mentors_guidance_reads_as_a_hint_or_a_message() {
        let g = |task: Option<&str>, tier: Option<u8>| Notification::Guidance {
            at: "10:00".into(),
            from: "ana".into(),
            task: task.map(str::to_owned),
            tier,
            text: "Ask Finance.".into(),
        };
        assert_eq!(
            render_notification(&g(Some("t1"), Some(2))),
            "[10:00] Hint 2 from your mentor ana on t1:\nAsk Finance."
        );
        assert_eq!(
            render_notification(&g(Some("t1"), None)),
            "[10:00] Your mentor ana about t1:\nAsk Finance."
        );
        assert_eq!(
            render_notification(&g(None, None)),
            "[10:00] Your mentor ana:\nAsk Finance."
        );
    }

    #[test]
    fn overrides_and_errors() {
        let dir = tempfile::tempdir().unwrap();
        // Braces that form no placeholder are text: no escapes in this dialect.
        std::fs::write(
            dir.path().join("nudge.md"),
            "Go on {\"really\": 1} {Name} {name",
        )
        .unwrap();
        let t = Templates::load(Some(dir.path())).unwrap();
        assert_eq!(t.nudge(), "Go on {\"really\": 1} {Name} {name");
        std::fs::write(dir.path().join("nudge.md"), "Go on {name}.").unwrap();
        let e = Templates::load(Some(dir.path())).unwrap_err().to_string();
        assert!(e.contains("`{name}`") && e.contains("(nothing)"), "{e}");
        std::fs::remove_file(dir.path().join("nudge.md")).unwrap();
        std::fs::write(dir.path().join("sytem.md"), "typo").unwrap();
        let e = Templates::load(Some(dir.path())).unwrap_err().to_string();
        assert!(e.contains("sytem.md") && e.contains("system"), "{e}");
    }
}
