//! What an agent can observe without reasoning, collected through the tools.
//!
//! A [`Prober`] is an ordinary [`Agent`]: it never sees the scenario. In
//! [`Mode::Explore`] it lists and reads every file of the drive and the workspace,
//! copies the whole drive into the workspace (a copy may bring files a listing
//! hides) and reads the copies, does that again at every task release, reads every
//! file that appears, and joins every meeting it is invited to as it starts, keeping
//! what is announced there. In [`Mode::Ask`] it asks as an agent asks: at each
//! task's release, one specific question at a time to each clue holder (the
//! family's own questions, given by the scan as [`Questions`]), waiting for the
//! reply before the next; the same question to anyone a reply refers to; and each
//! of the objective's ask-clauses ("ask Dana for the cap") in the second person to
//! the colleague it names. Tool errors are kept in both. A conversation takes
//! simulated time, so the phrasings of each question are split over several worlds
//! ([`Mode::Ask`]'s `part`/`parts`: world `p` asks every clue in its `p`-th
//! phrasing, in order, so each world's chain of follow-ups holds).

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use serde_json::{Value, json};

use tbsim_core::protocol::{Decision, Notification, Observation, ToolCall, catalogue};
use tbsim_engine::agent::{Agent, AgentFuture};

/// The workspace folder the drive is copied into (`<COPY_ROOT><n>/drive/...`).
pub const COPY_ROOT: &str = "workspace/scan_copy";

/// What a prober does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Files, copies, meetings.
    Explore,
    /// Questions to clue holders, referrals and ask-clauses; this world asks every
    /// clue in its `part`-th phrasing (modulo the clue's phrasings).
    Ask {
        /// This world's share.
        part: usize,
        /// How many worlds share the colleagues.
        parts: usize,
    },
}

/// Everything observed, in the order it came.
#[derive(Debug, Default, Clone)]
pub struct Observed {
    /// Text files read, by path (copies under their drive path).
    pub files: BTreeMap<String, String>,
    /// Meeting notes: (meeting title, text), announcements and join results.
    pub meetings: Vec<(String, String)>,
    /// Colleagues' messages: (sender key, text).
    pub replies: Vec<(String, String)>,
    /// Tool error messages.
    pub errors: Vec<String>,
    /// Released tasks: (key, objective, assigned by).
    pub tasks: Vec<(String, String, String)>,
    /// Colleagues: (key, full name).
    pub colleagues: Vec<(String, String)>,
    /// Colleagues' places as `list_colleagues` gives them: (key, department, position).
    pub directory: Vec<(String, String, String)>,
}

impl Observed {
    /// Merges another world's observations (replies and errors appended; files,
    /// meetings and tasks kept once).
    pub fn merge(&mut self, other: Observed) {
        for (p, t) in other.files {
            self.files.entry(p).or_insert(t);
        }
        for m in other.meetings {
            if !self.meetings.contains(&m) {
                self.meetings.push(m);
            }
        }
        self.replies.extend(other.replies);
        self.errors.extend(other.errors);
        for t in other.tasks {
            if !self.tasks.iter().any(|x| x.0 == t.0) {
                self.tasks.push(t);
            }
        }
        if self.colleagues.is_empty() {
            self.colleagues = other.colleagues;
            self.directory = other.directory;
        }
    }
}

/// The sentences of an objective, each as its own message: split after `.`, `?`
/// or `!` followed by a space or line break, and at line breaks.
pub fn sentences(objective: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let chars: Vec<char> = objective.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        let end_mark =
            matches!(c, '.' | '?' | '!') && chars.get(i + 1).is_none_or(|n| n.is_whitespace());
        if c == '\n' {
            push_sentence(&mut out, &mut cur);
            continue;
        }
        cur.push(c);
        if end_mark {
            push_sentence(&mut out, &mut cur);
        }
    }
    push_sentence(&mut out, &mut cur);
    out
}

fn push_sentence(out: &mut Vec<String>, cur: &mut String) {
    let s = cur.trim().trim_start_matches(['-', '*']).trim();
    // A bullet mark or a lone word is not a sentence anyone would send.
    if s.split_whitespace().count() >= 2 {
        out.push(s.to_owned());
    }
    cur.clear();
}

#[derive(Debug, Clone)]
enum Purpose {
    List(String),
    Read,
    Join(String),
    /// Rooms free for this `book_meeting` call (booked in the first one).
    Rooms(Value),
    Other,
}

/// Tool calls that leave an answer, by the key of the task they answer: played as
/// soon as that task is released, so whatever waits on its checkpoints follows.
pub type Unlock = BTreeMap<String, Vec<(String, Value)>>;

/// The questions to ask at each task's release, by task key: per clue, in the order
/// an agent needs them, the holder's key and the phrasings of the question.
pub type Questions = BTreeMap<String, Vec<(String, Vec<String>)>>;

/// Waits for a reply before giving up on a question (each up to 30 minutes, woken
/// early by any notification).
const REPLY_WAITS: u32 = 3;

/// The probing agent (see the module docs).
#[derive(Debug)]
pub struct Prober {
    mode: Mode,
    unlock: Unlock,
    questions: Questions,
    /// Questions to send, one at a time: (to, text).
    convo: VecDeque<(String, String)>,
    /// The question in flight: (to, text, waits left).
    awaiting: Option<(String, String, u32)>,
    /// Every (to, text) sent, so a referral is never sent twice.
    asked: BTreeSet<(String, String)>,
    /// What it saw.
    pub seen: Observed,
    queue: VecDeque<(&'static str, Value, Purpose)>,
    urgent: VecDeque<(&'static str, Value, Purpose)>,
    in_flight: BTreeMap<String, Purpose>,
    listed: BTreeSet<String>,
    read: BTreeSet<String>,
    titles: BTreeMap<String, String>,
    pending_tasks: Vec<(String, String)>,
    booked: Vec<String>,
    copies: usize,
    calls: u64,
}

impl Prober {
    /// A prober in `mode`.
    pub fn new(mode: Mode) -> Prober {
        Prober::unlocking(mode, Unlock::new())
    }

    /// A prober in `mode` that also plays `unlock`'s answers.
    pub fn unlocking(mode: Mode, unlock: Unlock) -> Prober {
        Prober::asking(mode, unlock, Questions::new())
    }

    /// A prober in `mode` that plays `unlock`'s answers and asks `questions`.
    pub fn asking(mode: Mode, unlock: Unlock, questions: Questions) -> Prober {
        Prober {
            mode,
            unlock,
            questions,
            convo: VecDeque::new(),
            awaiting: None,
            asked: BTreeSet::new(),
            seen: Observed::default(),
            queue: VecDeque::new(),
            urgent: VecDeque::new(),
            in_flight: BTreeMap::new(),
            listed: BTreeSet::new(),
            read: BTreeSet::new(),
            titles: BTreeMap::new(),
            pending_tasks: Vec::new(),
            booked: Vec::new(),
            copies: 0,
            calls: 0,
        }
    }

    fn explore(&mut self) {
        // A fresh walk each time: listings change as tasks are released.
        self.listed.clear();
        for root in ["drive", "workspace"] {
            self.list(root);
        }
        self.copies += 1;
        let to = format!("{COPY_ROOT}{}/", self.copies);
        self.queue.push_back((
            "copy_from_drive",
            json!({"path": "drive", "to": to}),
            Purpose::Other,
        ));
        self.list(&format!("{COPY_ROOT}{}", self.copies));
    }

    fn list(&mut self, path: &str) {
        if self.listed.insert(path.to_owned()) {
            self.queue.push_back((
                "list_folder",
                json!({"path": path}),
                Purpose::List(path.to_owned()),
            ));
        }
    }

    fn read(&mut self, path: &str) {
        if self.read.insert(path.to_owned()) {
            self.queue
                .push_back(("read_file", json!({"path": path}), Purpose::Read));
        }
    }

    /// Queues the questions of a released task: each clue's phrasing for this world,
    /// then the objective's ask-clauses.
    fn ask(&mut self, task: &str, objective: &str) {
        let Mode::Ask { part, .. } = self.mode else {
            return;
        };
        for (holder, phrasings) in self.questions.get(task).cloned().unwrap_or_default() {
            if let Some(q) = phrasings.get(part % phrasings.len().max(1)) {
                self.convo.push_back((holder, q.clone()));
            }
        }
        for (who, q) in ask_clauses(objective, &self.seen.colleagues) {
            self.convo.push_back((who, q));
        }
    }

    /// A reply from `from`: the question to them is answered, anyone the reply
    /// names is asked the same question, and any drive file it names is read (a
    /// file a reply names stays out of listings until that reply is given).
    fn replied(&mut self, from: &str, text: &str) {
        for path in drive_paths_in(text) {
            self.read(&path);
        }
        let Some((to, q, _)) = self.awaiting.clone() else {
            return;
        };
        if to != from {
            return;
        }
        self.awaiting = None;
        for (key, name) in &self.seen.colleagues {
            if key == from || !refers_to(text, name, &self.seen.colleagues) {
                continue;
            }
            if !self.asked.contains(&(key.clone(), q.clone())) {
                self.convo.push_back((key.clone(), q.clone()));
            }
        }
    }

    fn notification(&mut self, n: &Notification) {
        match n {
            Notification::TaskReleased {
                task,
                objective,
                assigned_by,
                ..
            } => {
                self.seen
                    .tasks
                    .push((task.clone(), objective.clone(), assigned_by.clone()));
                for (tool, args) in self.unlock.remove(task).unwrap_or_default() {
                    let tool = tool_name(&tool);
                    if tool == "book_meeting" && args["room"].is_null() {
                        // A room first: the booking goes in the first free one.
                        self.urgent.push_back((
                            "available_rooms",
                            json!({"start": args["start"], "end": args["end"]}),
                            Purpose::Rooms(args),
                        ));
                    } else {
                        self.urgent.push_back((tool, args, Purpose::Other));
                    }
                }
                match self.mode {
                    Mode::Explore => self.explore(),
                    Mode::Ask { .. } if self.seen.colleagues.is_empty() => {
                        self.pending_tasks.push((task.clone(), objective.clone()));
                    }
                    Mode::Ask { .. } => self.ask(&task.clone(), &objective.clone()),
                }
            }
            Notification::Message { from, text, .. } => {
                self.seen.replies.push((from.clone(), text.clone()));
                self.replied(&from.clone(), &text.clone());
            }
            Notification::MeetingStarting { meeting, title, .. } => {
                self.titles.insert(meeting.clone(), title.clone());
                // Unlocking worlds join their own bookings too (a booking checkpoint
                // may ask for it).
                if self.mode == Mode::Explore || !self.booked.is_empty() {
                    self.urgent.push_back((
                        "join_meeting",
                        json!({"meeting": meeting}),
                        Purpose::Join(meeting.clone()),
                    ));
                }
            }
            Notification::Announcement { meeting, text, .. } => {
                let title = self.titles.get(meeting).cloned().unwrap_or_default();
                self.seen.meetings.push((title, text.clone()));
            }
            Notification::FileAdded { path, .. } if self.mode == Mode::Explore => {
                self.read(path);
            }
            _ => {}
        }
    }

    fn absorb(&mut self, obs: &Observation) {
        if obs.briefing.is_some() {
            self.queue
                .push_front(("list_colleagues", json!({}), Purpose::Other));
            if self.mode == Mode::Explore {
                self.explore();
            }
        }
        for r in &obs.results {
            let purpose = self.in_flight.remove(&r.call_id).unwrap_or(Purpose::Other);
            if let Some(e) = &r.error {
                self.seen.errors.push(e.message.clone());
            }
            if let Some(v) = r.result.as_ref().filter(|_| r.ok) {
                self.result(&r.tool, &purpose, v);
            }
            for n in &r.notifications {
                self.notification(n);
            }
        }
        for n in &obs.notifications {
            self.notification(n);
        }
    }

    fn result(&mut self, tool: &str, purpose: &Purpose, v: &Value) {
        match (tool, purpose) {
            ("list_colleagues", _) => {
                self.seen.colleagues = v["colleagues"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|c| {
                        Some((
                            c["key"].as_str()?.to_owned(),
                            c["name"].as_str().unwrap_or_default().to_owned(),
                        ))
                    })
                    .collect();
                self.seen.directory = v["colleagues"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|c| {
                        Some((
                            c["key"].as_str()?.to_owned(),
                            c["department"].as_str().unwrap_or_default().to_owned(),
                            c["position"].as_str().unwrap_or_default().to_owned(),
                        ))
                    })
                    .collect();
                for (t, o) in std::mem::take(&mut self.pending_tasks) {
                    self.ask(&t, &o);
                }
            }
            ("list_folder", Purpose::List(dir)) => {
                let dir = dir.trim_end_matches('/').to_owned();
                for e in v["entries"].as_array().into_iter().flatten() {
                    let Some(name) = e["name"].as_str() else {
                        continue;
                    };
                    let path = format!("{dir}/{}", name.trim_end_matches('/'));
                    if e["kind"] == "folder" {
                        self.list(&path);
                    } else {
                        self.read(&path);
                    }
                }
            }
            ("read_file", _) => {
                if let (Some(p), Some(t)) = (v["path"].as_str(), v["content"].as_str()) {
                    self.seen.files.insert(drive_path(p), t.to_owned());
                }
            }
            ("available_rooms", Purpose::Rooms(args)) => {
                if let Some(room) = v["available"][0]["room"].as_str() {
                    let mut args = args.clone();
                    args["room"] = json!(room);
                    self.booked
                        .push(args["title"].as_str().unwrap_or_default().to_owned());
                    self.urgent
                        .push_back(("book_meeting", args, Purpose::Other));
                }
            }
            ("join_meeting", Purpose::Join(m)) => {
                let title = self.titles.get(m).cloned().unwrap_or_default();
                let mut texts = Vec::new();
                strings(v, &mut texts);
                if !texts.is_empty() {
                    self.seen.meetings.push((title, texts.join("\n")));
                }
            }
            _ => {}
        }
    }

    /// The conversation's next call, if it has one: the next question once the last
    /// is answered (or waited out), else a wait for the reply.
    fn converse(&mut self) -> Option<(&'static str, Value, Purpose)> {
        if let Some((to, q, waits)) = self.awaiting.take()
            && waits > 0
        {
            self.awaiting = Some((to, q, waits - 1));
            return Some(("wait", json!({"minutes": 30}), Purpose::Other));
        }
        let (to, q) = self.convo.pop_front()?;
        self.asked.insert((to.clone(), q.clone()));
        self.awaiting = Some((to.clone(), q.clone(), REPLY_WAITS));
        Some(("send_message", json!({"to": to, "text": q}), Purpose::Other))
    }

    fn next_calls(&mut self) -> Vec<ToolCall> {
        let mut calls = Vec::new();
        let mut minutes = 0;
        if self.urgent.is_empty()
            && self.queue.is_empty()
            && let Some(c) = self.converse()
        {
            self.urgent.push_back(c);
        }
        loop {
            let next = if let Some(u) = self.urgent.pop_front() {
                Some(u)
            } else {
                let cost = self.queue.front().map(|q| cost(q.0));
                match cost {
                    Some(c) if calls.is_empty() || minutes + c <= 5 => self.queue.pop_front(),
                    _ => None,
                }
            };
            let Some((tool, args, purpose)) = next else {
                break;
            };
            minutes += cost(tool);
            self.calls += 1;
            let id = format!("scan-{}", self.calls);
            self.in_flight.insert(id.clone(), purpose);
            calls.push(ToolCall {
                id,
                name: tool.into(),
                arguments: args.to_string(),
            });
        }
        if calls.is_empty() {
            self.calls += 1;
            calls.push(ToolCall {
                id: format!("scan-{}", self.calls),
                name: "wait".into(),
                arguments: "{}".into(),
            });
        }
        calls
    }
}

/// A tool's name as the catalogue spells it (unknown names are sent as `wait`'s
/// error would be: as given, to fail like any agent's typo).
/// The drive paths a text names (`drive/...` with a file extension), as written.
fn drive_paths_in(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for raw in text
        .split(|c: char| c.is_whitespace() || matches!(c, '`' | '"' | '\'' | '(' | ')' | ',' | ';'))
    {
        let p = raw.trim_end_matches(['.', ':', '!', '?']);
        let file = p.rsplit('/').next().unwrap_or("");
        if p.starts_with("drive/") && file.contains('.') && !out.iter().any(|o| o == p) {
            out.push(p.to_owned());
        }
    }
    out
}

fn tool_name(tool: &str) -> &'static str {
    catalogue()
        .iter()
        .find(|s| s.name == tool)
        .map_or("unknown_tool", |s| s.name)
}

/// Whether `text` refers to the colleague `name`: their full name, or their first
/// name when no other colleague shares it.
fn refers_to(text: &str, name: &str, colleagues: &[(String, String)]) -> bool {
    if name.is_empty() {
        return false;
    }
    if word_in(text, name) {
        return true;
    }
    let first = name.split_whitespace().next().unwrap_or(name);
    let shared = colleagues
        .iter()
        .filter(|c| c.1.split_whitespace().next() == Some(first))
        .count();
    shared == 1 && first.len() > 2 && word_in(text, first)
}

/// Whether `needle` occurs in `text` as whole words.
fn word_in(text: &str, needle: &str) -> bool {
    let mut from = 0;
    while let Some(i) = text[from..].find(needle) {
        let at = from + i;
        let before = text[..at].chars().next_back();
        let after = text[at + needle.len()..].chars().next();
        if before.is_none_or(|c| !c.is_alphanumeric()) && after.is_none_or(|c| !c.is_alphanumeric())
        {
            return true;
        }
        from = at + needle.len();
    }
    false
}

/// The objective's requests to ask someone ("Ask Dana Whitfield for the approval
/// limit", "check with Omar whether ..."), each turned into a question in the
/// second person to the colleague it names: (colleague key, question).
pub fn ask_clauses(objective: &str, colleagues: &[(String, String)]) -> Vec<(String, String)> {
    const LEADS: &[&str] = &[
        "ask ",
        "check with ",
        "confirm with ",
        "consult ",
        "contact ",
        "get it from ",
        "reach out to ",
        "talk to ",
        "speak to ",
    ];
    let mut out: Vec<(String, String)> = Vec::new();
    for sentence in sentences(objective) {
        // ASCII folding keeps byte offsets, so they index `sentence` too.
        let lower = sentence.to_ascii_lowercase();
        for lead in LEADS {
            let mut from = 0;
            while let Some(i) = lower[from..].find(lead) {
                let start = from + i;
                let at = start + lead.len();
                from = at;
                if lower[..start]
                    .chars()
                    .next_back()
                    .is_some_and(char::is_alphanumeric)
                {
                    continue;
                }
                let rest = &sentence[at..];
                // The colleague named right after the lead: full name, else first name.
                let Some((key, name, len)) = colleagues.iter().find_map(|(k, n)| {
                    let first = n.split_whitespace().next().unwrap_or(n);
                    if rest.starts_with(n.as_str()) {
                        Some((k, n, n.len()))
                    } else if rest.starts_with(first)
                        && rest[first.len()..]
                            .chars()
                            .next()
                            .is_none_or(|c| !c.is_alphanumeric())
                    {
                        Some((k, n, first.len()))
                    } else {
                        None
                    }
                }) else {
                    continue;
                };
                let first = name.split_whitespace().next().unwrap_or(name);
                let mut what = rest[len..].trim_start();
                // "(Finance)" and such after a name.
                if what.starts_with('(')
                    && let Some(j) = what.find(')')
                {
                    what = what[j + 1..].trim_start();
                }
                let what = what
                    .trim_start_matches(',')
                    .trim()
                    .trim_end_matches(['.', '!', '?', ';', ':'])
                    .trim();
                let what = ["for ", "about ", "to tell you ", "to confirm ", "to "]
                    .iter()
                    .find_map(|p| what.strip_prefix(p))
                    .unwrap_or(what);
                if what.split_whitespace().count() < 2 {
                    continue;
                }
                let what = second_person(what);
                let q = if [
                    "what", "which", "whether", "how", "when", "who", "where", "if",
                ]
                .iter()
                .any(|w| what.starts_with(&format!("{w} ")))
                {
                    format!("Hi {first}, could you tell me {what}?")
                } else {
                    format!("Hi {first}, could you tell me {what}, please?")
                };
                if !out.iter().any(|o| o.0 == *key && o.1 == q) {
                    out.push((key.clone(), q));
                }
            }
        }
    }
    out
}

/// Third-person references to the person asked, in the second person.
fn second_person(s: &str) -> String {
    let mut out: Vec<String> = Vec::new();
    for w in s.split(' ') {
        let (core, tail) = w.split_at(w.trim_end_matches([',', '.', ';', ':']).len());
        let swapped = match core {
            "their" | "his" | "her" => "your",
            "them" | "him" => "you",
            "they" | "he" | "she" => "you",
            "theirs" | "hers" => "yours",
            "themselves" | "himself" | "herself" => "yourself",
            other => other,
        };
        out.push(format!("{swapped}{tail}"));
    }
    out.join(" ")
}

fn cost(tool: &str) -> u32 {
    catalogue()
        .iter()
        .find(|s| s.name == tool)
        .map_or(1, |s| s.cost_minutes)
}

/// A copy's path as the drive path it came from.
fn drive_path(p: &str) -> String {
    if let Some(rest) = p.strip_prefix(COPY_ROOT) {
        let rest = rest.trim_start_matches(|c: char| c.is_ascii_digit());
        if let Some(r) = rest.strip_prefix('/') {
            return r.to_owned();
        }
    }
    p.to_owned()
}

fn strings(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) => out.push(s.clone()),
        Value::Array(a) => a.iter().for_each(|x| strings(x, out)),
        Value::Object(m) => m.values().for_each(|x| strings(x, out)),
        _ => {}
    }
}

impl Agent for Prober {
    fn name(&self) -> String {
        "scan".into()
    }

    fn decide<'a>(&'a mut self, obs: &'a Observation) -> AgentFuture<'a> {
        self.absorb(obs);
        let calls = self.next_calls();
        Box::pin(async move { Ok(Decision { calls }) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objectives_split_into_sentences() {
        let s = sentences(
            "Review the table `drive/a.csv`. Which suppliers are odd? Save it as `workspace/r.json`.\n- one item here",
        );
        assert_eq!(
            s,
            [
                "Review the table `drive/a.csv`.",
                "Which suppliers are odd?",
                "Save it as `workspace/r.json`.",
                "one item here"
            ]
        );
        // A decimal point is not a sentence end.
        assert_eq!(
            sentences("The cap is 8.5 percent now."),
            ["The cap is 8.5 percent now."]
        );
    }

    #[test]
    fn ask_clauses_become_questions_in_the_second_person() {
        let people = vec![
            ("p1".to_owned(), "Dana Whitfield".to_owned()),
            ("p2".to_owned(), "Omar Reyes".to_owned()),
        ];
        let q = ask_clauses(
            "Record the cap in `workspace/c.json`. Ask Dana Whitfield (Finance) for their approval limit. Then check with Omar whether he signed the PO. Ask around.",
            &people,
        );
        assert_eq!(
            q,
            [
                (
                    "p1".to_owned(),
                    "Hi Dana, could you tell me your approval limit, please?".to_owned()
                ),
                (
                    "p2".to_owned(),
                    "Hi Omar, could you tell me whether you signed the PO?".to_owned()
                )
            ]
        );
        // "task" holds "ask" but is not the word.
        assert!(ask_clauses("The task Dana gave is late.", &people).is_empty());
    }

    #[test]
    fn replies_refer_to_full_names_and_unshared_first_names() {
        let people = vec![
            ("p1".to_owned(), "Dana Whitfield".to_owned()),
            ("p2".to_owned(), "Omar Reyes".to_owned()),
            ("p3".to_owned(), "Omar Diaz".to_owned()),
        ];
        assert!(refers_to("Try Dana, she knows.", "Dana Whitfield", &people));
        assert!(!refers_to("Try Omar.", "Omar Reyes", &people), "two Omars");
        assert!(refers_to("Try Omar Reyes.", "Omar Reyes", &people));
        assert!(!refers_to("Danae knows", "Dana Whitfield", &people));
    }

    #[test]
    fn a_reply_names_drive_files_to_read() {
        assert_eq!(
            drive_paths_in(
                "It is on the drive at `drive/hr/register.md`. See also drive/ops/log_2.csv, or drive/ops/."
            ),
            ["drive/hr/register.md", "drive/ops/log_2.csv"]
        );
    }

    #[test]
    fn copies_read_as_their_drive_path() {
        assert_eq!(
            drive_path("workspace/scan_copy3/drive/a/b.md"),
            "drive/a/b.md"
        );
        assert_eq!(drive_path("workspace/x.md"), "workspace/x.md");
    }
}
