//! Rendering a [`Report`] as tables: Markdown for people, CSV for tools.
//!
//! Every section is first turned into a [`Table`] of typed cells, so Markdown and CSV
//! show the same rows and columns. Markdown rounds numbers for reading (3 decimals
//! for scores); CSV rounds to 6 decimals; the JSON keeps full precision.

use std::fmt::Write as _;

use super::Report;

/// One cell of a table.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    /// Text.
    Text(String),
    /// A count.
    Int(u64),
    /// A number, shown in Markdown with this many decimals.
    Num(f64, usize),
    /// No value (e.g. the gain of day 1).
    Empty,
}

impl Cell {
    fn markdown(&self) -> String {
        match self {
            // A `|` would end the cell.
            Cell::Text(s) => s.replace('|', "\\|"),
            Cell::Int(n) => n.to_string(),
            Cell::Num(x, d) => format!("{x:.d$}"),
            Cell::Empty => "–".into(),
        }
    }

    fn csv(&self) -> String {
        match self {
            Cell::Text(s) if s.contains([',', '"', '\n', '\r']) => {
                format!("\"{}\"", s.replace('"', "\"\""))
            }
            Cell::Text(s) => s.clone(),
            Cell::Int(n) => n.to_string(),
            Cell::Num(x, _) => {
                // Six decimals, trailing zeros dropped: spreadsheet-friendly and free of
                // binary noise (0.15750000000000003); report.json keeps full precision.
                let s = format!("{x:.6}");
                let s = s.trim_end_matches('0').trim_end_matches('.');
                if s == "-0" { "0".into() } else { s.to_owned() }
            }
            Cell::Empty => String::new(),
        }
    }

    fn numeric(&self) -> bool {
        !matches!(self, Cell::Text(_))
    }
}

/// A titled table.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    /// File stem of its CSV.
    pub name: &'static str,
    /// Markdown section title.
    pub title: &'static str,
    /// What the numbers mean, printed under the title.
    pub note: &'static str,
    /// Column headers (the CSV's are the snake_case JSON field names).
    pub columns: Vec<(&'static str, &'static str)>,
    /// Rows.
    pub rows: Vec<Vec<Cell>>,
}

impl Table {
    /// The table as CSV, with a header line.
    pub fn csv(&self) -> String {
        let mut out = self
            .columns
            .iter()
            .map(|c| c.1)
            .collect::<Vec<_>>()
            .join(",");
        out.push('\n');
        for row in &self.rows {
            out.push_str(&row.iter().map(Cell::csv).collect::<Vec<_>>().join(","));
            out.push('\n');
        }
        out
    }

    pub(super) fn markdown(&self, out: &mut String) {
        let _ = writeln!(out, "## {}\n", self.title);
        if !self.note.is_empty() {
            let _ = writeln!(out, "{}\n", self.note);
        }
        if self.rows.is_empty() {
            let _ = writeln!(out, "_None._\n");
            return;
        }
        let header: Vec<&str> = self.columns.iter().map(|c| c.0).collect();
        let _ = writeln!(out, "| {} |", header.join(" | "));
        // Right-align columns whose cells are numbers.
        let align: Vec<&str> = (0..self.columns.len())
            .map(|i| {
                if self.rows.iter().all(|r| r[i].numeric()) {
                    "--:"
                } else {
                    "---"
                }
            })
            .collect();
        let _ = writeln!(out, "|{}|", align.join("|"));
        for row in &self.rows {
            let cells: Vec<String> = row.iter().map(Cell::markdown).collect();
            let _ = writeln!(out, "| {} |", cells.join(" | "));
        }
        let _ = writeln!(out);
    }
}

fn text(s: &str) -> Cell {
    Cell::Text(s.to_owned())
}

fn score(x: f64) -> Cell {
    Cell::Num(x, 3)
}

fn avg(x: f64) -> Cell {
    Cell::Num(x, 1)
}

fn int(n: usize) -> Cell {
    Cell::Int(n as u64)
}

fn opt(x: Option<f64>, f: fn(f64) -> Cell) -> Cell {
    x.map_or(Cell::Empty, f)
}

pub(super) fn tables(r: &Report) -> Vec<Table> {
    let stratum = |name, title, col, note, rows: &[super::StratumRow], run_level: bool| {
        let mut columns = vec![
            ("model", "agent"),
            (col, "stratum"),
            // Run-level strata count working days (a multi-day run once per day).
            (if run_level { "days" } else { "runs" }, "runs"),
            ("tasks", "tasks"),
            ("checkpoint score", "checkpoint_score"),
            ("success rate", "success_rate"),
        ];
        if run_level {
            columns.push(("avg steps", "avg_steps"));
            columns.push(("avg tool calls", "avg_tool_calls"));
        }
        Table {
            name,
            title,
            note,
            columns,
            rows: rows
                .iter()
                .map(|s| {
                    let mut row = vec![
                        text(&s.agent),
                        text(&s.stratum),
                        int(s.runs),
                        int(s.tasks),
                        score(s.checkpoint_score),
                        score(s.success_rate),
                    ];
                    if run_level {
                        row.push(opt(s.avg_steps, avg));
                        row.push(opt(s.avg_tool_calls, avg));
                    }
                    row
                })
                .collect(),
        }
    };
    vec![
        Table {
            name: "models",
            title: "By model",
            note: "Means over runs of each run's checkpoint score (mean task score) and success rate (share of tasks solved); *solved* is the share of runs that solved every task. Runs that ended by an infrastructure failure are left out of every score and counted under *infra failures* (listed below).",
            columns: vec![
                ("model", "agent"),
                ("runs", "runs"),
                ("scenarios", "scenarios"),
                ("checkpoint score", "checkpoint_score"),
                ("success rate", "success_rate"),
                ("solved", "solved"),
                ("avg steps", "avg_steps"),
                ("avg tool calls", "avg_tool_calls"),
                ("guidance", "avg_guidance"),
                ("infra failures", "infra_failures"),
            ],
            rows: r
                .models
                .iter()
                .map(|m| {
                    vec![
                        text(&m.agent),
                        int(m.runs),
                        int(m.scenarios),
                        score(m.checkpoint_score),
                        score(m.success_rate),
                        score(m.solved),
                        avg(m.avg_steps),
                        avg(m.avg_tool_calls),
                        avg(m.avg_guidance),
                        int(m.infra_failures),
                    ]
                })
                .collect(),
        },
        Table {
            name: "by_guidance",
            title: "By guidance",
            note: "Runs grouped by guidance level (the hint tier given up front with each task, `--hints`), with the guidance humans added while the run went on (hint tiers and messages sent from the console, recorded in the trajectory). *guidance* in the table above is the mean of those per run.",
            columns: vec![
                ("model", "agent"),
                ("hint level", "hints"),
                ("runs", "runs"),
                ("guided runs", "guided_runs"),
                ("human hints", "human_hints"),
                ("messages", "messages"),
                ("checkpoint score", "checkpoint_score"),
                ("success rate", "success_rate"),
            ],
            rows: r
                .by_guidance
                .iter()
                .map(|g| {
                    vec![
                        text(&g.agent),
                        Cell::Int(u64::from(g.hints)),
                        int(g.runs),
                        int(g.guided_runs),
                        Cell::Int(g.human_hints),
                        Cell::Int(g.messages),
                        score(g.checkpoint_score),
                        score(g.success_rate),
                    ]
                })
                .collect(),
        },
        stratum(
            "by_tasks",
            "By number of tasks",
            "tasks in day",
            "Working days grouped by how many tasks they hold: a one-day run counts once, a multi-day run once per day, by that day's tasks (the paper's Table 3 stratifies by the tasks of one working day). Means over those days; decisions and tool calls per run are shown for one-day runs only.",
            &r.by_tasks,
            true,
        ),
        stratum(
            "by_difficulty",
            "By difficulty",
            "difficulty",
            "Over tasks: mean task score and share of tasks solved.",
            &r.by_difficulty,
            false,
        ),
        stratum(
            "by_family",
            "By family",
            "family",
            "Over tasks: mean task score and share of tasks solved.",
            &r.by_family,
            false,
        ),
        Table {
            name: "by_day",
            title: "By day",
            note: "Multi-day runs only: means over runs of each day's checkpoint score and success rate; *gain* is the mean change in checkpoint score over the previous day.",
            columns: vec![
                ("model", "agent"),
                ("day", "day"),
                ("runs", "runs"),
                ("tasks", "tasks"),
                ("checkpoint score", "checkpoint_score"),
                ("success rate", "success_rate"),
                ("gain", "gain"),
            ],
            rows: r
                .by_day
                .iter()
                .map(|d| {
                    vec![
                        text(&d.agent),
                        Cell::Int(u64::from(d.day)),
                        int(d.runs),
                        int(d.tasks),
                        score(d.checkpoint_score),
                        score(d.success_rate),
                        opt(d.gain, score),
                    ]
                })
                .collect(),
        },
        Table {
            name: "pass_k",
            title: "pass^k",
            note: "A trial succeeds when the run solves every task (success rate 1). For each scenario with n trials and c successes, C(c,k)/C(n,k), averaged over scenarios (τ-bench); k runs up to the fewest trials of any scenario.",
            columns: vec![
                ("model", "agent"),
                ("k", "k"),
                ("scenarios", "scenarios"),
                ("pass^k", "pass_k"),
            ],
            rows: r
                .pass_k
                .iter()
                .map(|p| vec![text(&p.agent), int(p.k), int(p.scenarios), score(p.pass_k)])
                .collect(),
        },
        Table {
            name: "errors",
            title: "Tool-call errors",
            note: "Refused tool calls by kind; *per run* divides by all of the model's runs.",
            columns: vec![
                ("model", "agent"),
                ("kind", "kind"),
                ("errors", "count"),
                ("per run", "per_run"),
            ],
            rows: r
                .errors
                .iter()
                .map(|e| {
                    vec![
                        text(&e.agent),
                        text(&e.kind),
                        Cell::Int(e.count),
                        Cell::Num(e.per_run, 2),
                    ]
                })
                .collect(),
        },
        Table {
            name: "end_reasons",
            title: "End reasons",
            note: "",
            columns: vec![
                ("model", "agent"),
                ("end reason", "reason"),
                ("runs", "runs"),
            ],
            rows: r
                .end_reasons
                .iter()
                .map(|e| vec![text(&e.agent), text(&e.reason), int(e.runs)])
                .collect(),
        },
        Table {
            name: "tokens",
            title: "Tokens and cost",
            note: "Totals over all runs (infrastructure failures included: their calls were made), from each result's `model`; zero for agents that use no model.",
            columns: vec![
                ("model", "agent"),
                ("runs", "runs"),
                ("calls", "calls"),
                ("tokens in", "tokens_in"),
                ("tokens out", "tokens_out"),
                ("cost", "cost"),
                ("cost per run", "cost_per_run"),
            ],
            rows: r
                .tokens
                .iter()
                .map(|t| {
                    vec![
                        text(&t.agent),
                        int(t.runs),
                        Cell::Int(t.calls),
                        Cell::Int(t.tokens_in),
                        Cell::Int(t.tokens_out),
                        Cell::Num(t.cost, 4),
                        Cell::Num(t.cost_per_run, 4),
                    ]
                })
                .collect(),
        },
        Table {
            name: "model_calls",
            title: "Model calls",
            note: "Empty turns: decisions without a tool call (the model only talked and was nudged). Cut off: replies the server stopped at the reply limit (`max_tokens`). Wall time, retries (attempts after the first), timed-out attempts and calls that failed for good come from each run's `model_calls.jsonl` (wall-clock facts, outside what replay compares); *timed* counts the calls that have them.",
            columns: vec![
                ("model", "agent"),
                ("runs", "runs"),
                ("calls", "calls"),
                ("empty turns", "empty_turns"),
                ("cut off", "cut_off"),
                ("timed", "timed_calls"),
                ("retries", "retries"),
                ("timeouts", "timeouts"),
                ("failed", "failed"),
                ("mean wall (s)", "mean_wall_secs"),
                ("max wall (s)", "max_wall_secs"),
            ],
            rows: r
                .model_calls
                .iter()
                .map(|c| {
                    vec![
                        text(&c.agent),
                        int(c.runs),
                        Cell::Int(c.calls),
                        Cell::Int(c.empty_turns),
                        Cell::Int(c.cut_off),
                        int(c.timed_calls),
                        Cell::Int(c.retries),
                        Cell::Int(c.timeouts),
                        int(c.failed),
                        opt(c.mean_wall_secs, |x| Cell::Num(x, 2)),
                        opt(c.max_wall_secs, |x| Cell::Num(x, 2)),
                    ]
                })
                .collect(),
        },
        Table {
            name: "infra_failures",
            title: "Infrastructure failures (not scored)",
            note: "Runs that ended because the infrastructure failed (a model API that stayed down past its retries): they say nothing about the agent and are left out of every score. Continue them with `tbsim run --resume <RUN_DIR>`.",
            columns: vec![
                ("model", "agent"),
                ("scenario", "scenario"),
                ("seed", "seed"),
                ("trial", "trial"),
                ("steps", "steps"),
                ("error", "error"),
            ],
            rows: r
                .infra_failures
                .iter()
                .map(|f| {
                    vec![
                        text(&f.agent),
                        text(&f.scenario),
                        Cell::Int(f.seed),
                        f.trial.map_or(Cell::Empty, |t| Cell::Int(u64::from(t))),
                        Cell::Int(f.steps),
                        text(&f.error),
                    ]
                })
                .collect(),
        },
        Table {
            name: "gates_failed",
            title: "Tasks never released (gate failed)",
            note: "A task released only once another task's checkpoint passes scores 0 when that \
                   checkpoint never did; read dependent scores with these in mind.",
            columns: vec![
                ("model", "agent"),
                ("scenario", "scenario"),
                ("seed", "seed"),
                ("trial", "trial"),
                ("task", "task"),
                ("gate", "gate"),
            ],
            rows: r
                .gates_failed
                .iter()
                .map(|g| {
                    vec![
                        text(&g.agent),
                        text(&g.scenario),
                        Cell::Int(g.seed),
                        g.trial.map_or(Cell::Empty, |t| Cell::Int(u64::from(t))),
                        text(&g.task),
                        text(&g.gate),
                    ]
                })
                .collect(),
        },
        Table {
            name: "schedule",
            title: "Scheduling",
            note: "From each run's trajectory (definitions: `engine/src/schedule.rs`). A tool call belongs to the task whose files, meetings or colleagues it names. First action: minutes from a task's release to the first call on it. Late: share of acted-on tasks still worked on after their deadline, and their mean tardiness (minutes). Interrupt response: minutes from a meeting's start to joining it; missed: share of the intern's meetings never joined. Inversion: minutes per run spent on a task while a higher-priority released task was unfinished. Switches: changes of task between consecutive calls, per run. Idle: minutes per run in `wait`, nights excluded.",
            columns: vec![
                ("model", "agent"),
                ("runs", "runs"),
                ("first action (min)", "release_to_first_action_min"),
                ("late", "late_share"),
                ("tardiness (min)", "tardiness_min"),
                ("interrupt response (min)", "interrupt_response_min"),
                ("missed meetings", "missed_meetings_share"),
                ("inversion (min)", "inversion_min"),
                ("switches", "context_switches"),
                ("idle (min)", "idle_min"),
            ],
            rows: r
                .schedule
                .iter()
                .map(|s| {
                    vec![
                        text(&s.agent),
                        int(s.runs),
                        opt(s.release_to_first_action_min, avg),
                        opt(s.late_share, score),
                        opt(s.tardiness_min, avg),
                        opt(s.interrupt_response_min, avg),
                        opt(s.missed_meetings_share, score),
                        opt(s.inversion_min, avg),
                        opt(s.context_switches, avg),
                        opt(s.idle_min, avg),
                    ]
                })
                .collect(),
        },
    ]
}

pub(super) fn markdown(r: &Report) -> String {
    let mut out = String::from("# tbsim report\n\n");
    let plural = |n: usize, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
    let _ = writeln!(
        out,
        "{} of {} by {}.\n",
        plural(r.runs, "run"),
        plural(r.scenarios, "scenario"),
        plural(r.models.len(), "model")
    );
    for t in tables(r) {
        t.markdown(&mut out);
    }
    out.truncate(out.trim_end().len());
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_quotes_only_when_needed() {
        assert_eq!(Cell::Text("a,b".into()).csv(), "\"a,b\"");
        assert_eq!(Cell::Text("say \"hi\"".into()).csv(), "\"say \"\"hi\"\"\"");
        assert_eq!(Cell::Text("plain".into()).csv(), "plain");
        assert_eq!(Cell::Num(0.5, 3).csv(), "0.5");
        assert_eq!(Cell::Num(0.157_500_000_000_000_03, 4).csv(), "0.1575");
        assert_eq!(Cell::Num(2.0, 1).csv(), "2");
        assert_eq!(Cell::Num(0.0, 1).csv(), "0");
        assert_eq!(Cell::Num(-1e-9, 1).csv(), "0");
        assert_eq!(Cell::Empty.csv(), "");
    }

    #[test]
    fn markdown_escapes_pipes_and_rounds() {
        assert_eq!(Cell::Text("a|b".into()).markdown(), "a\\|b");
        assert_eq!(Cell::Num(2.0 / 3.0, 3).markdown(), "0.667");
    }
}
