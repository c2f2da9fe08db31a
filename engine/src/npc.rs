//! NPC engines: deciding what a colleague says to a message.
//!
//! The tools ask an [`NpcEngine`] for each reply through an [`NpcQuery`] that holds
//! everything the engine may use: the person, the conversation, and the clue rules
//! whose conditions hold now (the engine never sees a clue it may not reveal). The
//! [`Scripted`] engine answers from the rules alone; `llm::colleague` plays the colleague
//! with a model; [`RecordedNpc`] returns what a trajectory recorded, so replay needs
//! no network. An engine's `record` goes into the trajectory as an `npc` line.
//!
//! ## Scripted matching
//!
//! A clue's trigger is a list of groups of alternatives; a message triggers the clue
//! when it mentions at least one alternative from every group. Matching is generous
//! on purpose (agents phrase questions in endless ways) but keyed to meaning-bearing
//! words: both sides are lower-cased, split into words, reduced to a crude stem
//! (`charts` -> `chart`, `mapping` -> `map`) and mapped through a table of synonym
//! concepts (`graph` ~ `chart`, `vendor` ~ `supplier`). A multi-word alternative
//! needs all of its words. Identifiers such as `OLD123456` match exactly. An
//! alternative written `!words` excludes instead: a message mentioning it does not
//! trigger the clue (a manager's own availability is not the answer to "is Anna
//! free?").
//!
//! ## Disclosure rules (all engines)
//!
//! The chat tools apply these before an engine sees anything, so a model-played
//! colleague is bound by them as much as the scripted one:
//!
//! 1. **Release.** A clue tied to a task (`Clue.task`) is not active before that task
//!    is released, whatever its own conditions: nobody volunteers what they could
//!    not know about work that does not exist yet.
//! 2. **Specificity.** A message must be one specific question. It is judged the
//!    same for every recipient (so the verdict never reveals who holds a clue) by
//!    [`Scope::judge`], against every clue in the company and every task:
//!    * it may not match clues of **two different tasks**, each through more
//!      than question words such as "where", while carrying three or more soup
//!      words beyond the best-matching clue's trigger (asking for several
//!      unrelated things at once; a question that merely also fits another
//!      task's broad trigger is still one question);
//!    * of the *soup words* (every trigger's words plus a fixed list of request
//!      words such as manual, owner, approval, code, free, budget), it may use at
//!      most [`scope::MAX_EXTRA_CUES`] beyond the vocabulary of the best-matching
//!      clue's trigger (a keyword list is not a question);
//!    * it must read as a sentence: of eight words or more, at least
//!      [`scope::GLUE_PERCENT`]% must be words that hold a sentence together
//!      (articles, pronouns, auxiliaries, question words), which a list of
//!      keywords lacks, and no [`scope::MAX_RUN`] words in a row may go without
//!      one;
//!    * it may hold at most [`scope::MAX_CONCEPTS`] distinct content words;
//!    * it may not hold [`scope::FORWARDED_SHARE`]% or more of a task's content
//!      words (a forwarded task text).
//!
//!    A message failing any of these gets [`scope::BE_SPECIFIC`] and discloses
//!    nothing: in a direct message from the recipient, in a group from its first
//!    colleague only.
//! 3. **Names.** If the message names a first name several colleagues share
//!    without the surname, a clue about one of them gets "which one do you mean?",
//!    unless the colleague asked knows about only one of them (of the people its
//!    clues that may be told now are about, one bears that first name): a manager
//!    asked "is Anna free?" takes it to mean the Anna of their team. If the
//!    message names the other person in full, the clue does not match.
//!
//! The scripted engine then answers with every triggered clue (of several triggered
//! clues with the same trigger, the later one: a later stage of the same answer).
//! A direct question that triggers nothing but touches an active clue's subject
//! gets [`ASK_WHAT`], a request to ask precisely; only a question unrelated to
//! anything the colleague knows gets their default reply.

pub mod scope;

pub use scope::{BE_SPECIFIC, Named, Scope, Unspecific, vague};

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::LazyLock;

use crate::trajectory::{NpcLine, NpcRecord};

/// Synonym concepts. The first word of a group is its canonical form.
const SYNONYMS: &[&[&str]] = &[
    &[
        "chart",
        "graph",
        "figure",
        "diagram",
        "plot",
        "visual",
        "visualization",
        "visualisation",
        "dashboard",
    ],
    &["id", "identifier", "ids", "number", "code", "reference"],
    &[
        "new",
        "updated",
        "replacement",
        "current",
        "correct",
        "latest",
        "right",
        "valid",
        "working",
    ],
    &[
        "broken", "dead", "invalid", "outdated", "stale", "old", "obsolete", "expired", "fix",
        "repair",
    ],
    &["link", "url", "hyperlink", "href"],
    &[
        "manual",
        "handbook",
        "guide",
        "guideline",
        "documentation",
        "doc",
        "instruction",
        "procedure",
        "policy",
        "rule",
        "playbook",
        "sop",
    ],
    &[
        "transaction",
        "payment",
        "expense",
        "spend",
        "spending",
        "ledger",
    ],
    &[
        "review",
        "audit",
        "check",
        "analyse",
        "analyze",
        "analysis",
        "inspect",
        "examine",
        "investigate",
        "verify",
    ],
    &["supplier", "vendor", "provider", "seller", "contractor"],
    &[
        "abnormal",
        "unusual",
        "suspicious",
        "irregular",
        "anomaly",
        "anomalous",
        "odd",
        "strange",
        "fraud",
        "fraudulent",
        "risky",
    ],
    &[
        "where",
        "location",
        "locate",
        "find",
        "path",
        "folder",
        "directory",
        "stored",
        "kept",
    ],
    &["meeting", "session", "call", "sync", "standup"],
    &[
        "procurement",
        "purchasing",
        "purchase",
        "buying",
        "buy",
        "order",
        "request",
        "requisition",
    ],
    &[
        "owner",
        "own",
        "responsible",
        "maintain",
        "maintainer",
        "author",
    ],
    &[
        "map",
        "mapping",
        "replace",
        "swap",
        "change",
        "migrate",
        "migration",
        "translate",
        "correspond",
    ],
    &["article", "page", "post"],
    &[
        "approval",
        "approve",
        "authorise",
        "authorize",
        "authorization",
        "authorisation",
        "sign",
        "signoff",
    ],
    &["limit", "threshold", "cap", "ceiling", "maximum", "max"],
    &["invoice", "bill", "receipt"],
    &["rating", "rate", "grade", "score"],
];

/// Words too common to carry meaning in a trigger.
const STOP: &[&str] = &[
    "a", "an", "the", "and", "or", "of", "to", "in", "on", "for", "is", "are", "be", "it", "me",
    "my", "you", "your", "i", "we", "please", "could", "would", "can", "do", "does", "what",
    "which", "with", "about", "hi", "hello", "thanks", "thank",
];

/// The stem of a word: lower-cased (ASCII), a plural or verb ending cut, a final
/// silent `e` dropped; identifiers (letters and digits mixed) are kept whole.
#[cfg(test)]
fn stem(w: &str) -> String {
    let mut out = String::new();
    stem_into(&w.to_ascii_lowercase(), &mut out);
    out
}

/// Writes the stem of `w` (already lower-cased, ASCII) into `out`, which is
/// cleared first: [`concepts`] folds every word of every message, so this works in
/// one reused buffer instead of a string per step.
fn stem_into(w: &str, out: &mut String) {
    out.clear();
    if w.bytes().any(|b| b.is_ascii_digit()) {
        out.push_str(w);
        return;
    }
    let n = w.len();
    let cut = |suffix: &str, min: usize| n > suffix.len() + min && w.ends_with(suffix);
    if cut("ies", 2) {
        out.push_str(&w[..n - 3]);
        out.push('y');
    } else if cut("ing", 2) {
        out.push_str(undouble(&w[..n - 3]));
    } else if cut("ed", 2) {
        out.push_str(undouble(&w[..n - 2]));
    } else if cut("es", 2)
        && (w.ends_with("ses") || w.ends_with("xes") || w.ends_with("ches") || w.ends_with("shes"))
    {
        out.push_str(&w[..n - 2]);
    } else if cut("s", 2) && !w.ends_with("ss") && !w.ends_with("us") {
        out.push_str(&w[..n - 1]);
    } else {
        out.push_str(w);
    }
    // A final silent `e` goes, so `compute`, `computed` and `computing` meet.
    if out.len() >= 4 && out.ends_with('e') && !out.ends_with("ee") {
        out.pop();
    }
}

/// `base` with a doubled final consonant made single (`mapp` -> `map`); `ll`, `ss`
/// and `zz` stay. Only an ASCII letter is undoubled: two equal bytes ending a
/// multi-byte character are not a doubled letter (and cutting one would split it).
fn undouble(base: &str) -> &str {
    let b = base.as_bytes();
    if b.len() >= 2
        && b[b.len() - 1] == b[b.len() - 2]
        && b[b.len() - 1].is_ascii()
        && !matches!(b[b.len() - 1], b'l' | b's' | b'z')
    {
        &base[..base.len() - 1]
    } else {
        base
    }
}

/// Stem (and spelling as written) -> head of its synonym group; of two groups
/// claiming one stem, the earlier wins. Built once: folding a word is then one
/// lookup instead of stemming every synonym for every word of every message.
static SYNONYM_HEADS: LazyLock<HashMap<String, &'static str>> = LazyLock::new(|| {
    let mut heads = HashMap::new();
    let mut buf = String::new();
    for group in SYNONYMS {
        for g in *group {
            heads.entry((*g).to_owned()).or_insert(group[0]);
            stem_into(&g.to_ascii_lowercase(), &mut buf);
            heads.entry(buf.clone()).or_insert(group[0]);
        }
    }
    heads
});

/// The canonical concept of a word: its synonym group's head, or its stem.
#[cfg(test)]
fn concept(word: &str) -> String {
    let mut out = String::new();
    concept_into(&word.to_ascii_lowercase(), &mut out).to_owned()
}

/// The set of concepts a text mentions.
pub fn concepts(text: &str) -> BTreeSet<String> {
    let mut set = BTreeSet::new();
    fold_words(text, |c| {
        if !set.contains(c) {
            set.insert(c.to_owned());
        }
    });
    set
}

/// Calls `each` with the concept of every word of `text` that is not a stop word,
/// in text order (repeats included), folding in two reused buffers: a message's
/// words cost no allocation of their own.
pub(crate) fn fold_words(text: &str, mut each: impl FnMut(&str)) {
    let (mut lower, mut stem) = (String::new(), String::new());
    for w in text.split(|c: char| !c.is_alphanumeric()) {
        if w.is_empty() {
            continue;
        }
        // One lower-casing per word serves the stop-word test and the stem.
        lower.clear();
        lower.push_str(w);
        lower.make_ascii_lowercase();
        if STOP_SET.contains(lower.as_str()) {
            continue;
        }
        each(concept_into(&lower, &mut stem));
    }
}

/// [`STOP`] as a set: membership only (never iterated), so its order is moot.
static STOP_SET: LazyLock<HashSet<&'static str>> = LazyLock::new(|| STOP.iter().copied().collect());

/// The concept of a word already lower-cased (ASCII), using `buf` for its stem.
fn concept_into<'a>(lower: &str, buf: &'a mut String) -> &'a str {
    stem_into(lower, buf);
    match SYNONYM_HEADS.get(buf.as_str()) {
        Some(head) => head,
        None => buf.as_str(),
    }
}

/// How the oracle's plan gets clue `key` disclosed: the clue, its holder's key and
/// the plan's message to the holder that triggers it (the first such message of
/// any task's plan). `None` when no colleague holds the clue or no plan message
/// triggers it. Probes that ask colleagues in fresh worlds use it to play a clue's
/// prerequisites first, as the oracle would.
pub fn plan_message_disclosing<'a>(
    s: &'a tbsim_scenario::Scenario,
    key: &str,
) -> Option<(&'a tbsim_scenario::Clue, &'a str, String)> {
    let (holder, clue) = s
        .company
        .people
        .iter()
        .flat_map(|p| p.clues.iter().map(move |c| (p.key.as_str(), c)))
        .find(|(_, c)| c.key == key)?;
    let trigger = Trigger::new(&clue.trigger);
    let text = s
        .tasks
        .iter()
        .flat_map(|t| &t.plan)
        .filter(|p| p.tool == "send_message")
        .filter_map(|p| serde_json::from_str::<serde_json::Value>(&p.args).ok())
        .filter(|a| a["to"] == holder)
        .filter_map(|a| a["text"].as_str().map(str::to_owned))
        .find(|t| trigger.matches(&concepts(t)))?;
    Some((clue, holder, text))
}

/// A compiled trigger.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trigger {
    /// Every group must match; within a group any alternative; an alternative is a
    /// set of concepts that must all be present.
    groups: Vec<Vec<BTreeSet<String>>>,
    /// Alternatives written `!...`: the message must mention none of them.
    exclude: Vec<BTreeSet<String>>,
}

/// Question words that say nothing about the subject: a message mentioning only
/// these from a trigger is not "near" it.
const QUESTION_WORDS: &[&str] = &[
    "where", "who", "how", "when", "why", "file", "data", "list", "day", "time", "date",
];

impl Trigger {
    /// Compiles the scenario's trigger words.
    pub fn new(groups: &[Vec<String>]) -> Self {
        let mut exclude = Vec::new();
        let groups = groups
            .iter()
            .filter_map(|g| {
                let mut alts = Vec::new();
                for alt in g {
                    match alt.trim().strip_prefix('!') {
                        Some(x) => exclude.push(concepts(x)),
                        None => alts.push(concepts(alt)),
                    }
                }
                alts.retain(|c| !c.is_empty());
                // A group of exclusions only adds no requirement.
                (!alts.is_empty() || g.iter().all(|a| !a.trim().starts_with('!'))).then_some(alts)
            })
            .collect();
        exclude.retain(|c| !c.is_empty());
        Trigger { groups, exclude }
    }

    /// Whether a message with these concepts triggers it.
    pub fn matches(&self, message: &BTreeSet<String>) -> bool {
        !self.groups.is_empty()
            && self
                .groups
                .iter()
                .all(|g| g.iter().any(|alt| alt.is_subset(message)))
            && !self.excluded(message)
    }

    /// Whether the message mentions something the trigger rules out.
    pub fn excluded(&self, message: &BTreeSet<String>) -> bool {
        self.exclude.iter().any(|x| x.is_subset(message))
    }

    /// Whether the message touches the trigger's subject without asking for it: some
    /// group matches through a word that is more than a question word.
    pub fn near(&self, message: &BTreeSet<String>) -> bool {
        self.groups.iter().any(|g| {
            g.iter().any(|alt| {
                alt.is_subset(message) && alt.iter().any(|c| !QUESTION_WORDS.contains(&c.as_str()))
            })
        })
    }

    /// Whether it matches through more than question words in every group (a
    /// "where" alone does not make a message about this clue's subject).
    pub fn matches_strongly(&self, message: &BTreeSet<String>) -> bool {
        self.matches(message)
            && self.groups.iter().all(|g| {
                g.iter().any(|alt| {
                    alt.is_subset(message)
                        && alt.iter().any(|c| !QUESTION_WORDS.contains(&c.as_str()))
                })
            })
    }

    /// Whether some alternative of the trigger mentions a concept (exclusions
    /// left out).
    pub fn mentions(&self, concept: &str) -> bool {
        self.groups
            .iter()
            .flatten()
            .any(|alt| alt.contains(concept))
    }

    /// Every concept the trigger's alternatives mention (exclusions left out).
    pub fn vocabulary(&self) -> BTreeSet<String> {
        self.groups.iter().flatten().flatten().cloned().collect()
    }
}

/// A clue rule whose conditions hold, as an engine sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActiveClue {
    /// Clue key.
    pub key: String,
    /// The trigger as written: every group must be mentioned, any alternative of a group.
    pub topics: Vec<Vec<String>>,
    /// What may be said.
    pub response: String,
    /// Whether the scripted trigger matches the message.
    pub triggered: bool,
    /// Whether the message touches the clue's subject without asking for it (the
    /// scripted colleague then asks what exactly is needed).
    pub near: bool,
}

/// One message of the conversation so far.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    /// Sender key (the intern's or a colleague's).
    pub from: String,
    /// Sender name.
    pub name: String,
    /// Whether the colleague being asked wrote it.
    pub mine: bool,
    /// Text.
    pub text: String,
}

/// Everything an engine may use to answer one message.
#[derive(Debug, Clone)]
pub struct NpcQuery<'a> {
    /// Decision step of the call that sent the message.
    pub step: u64,
    /// Call id.
    pub call_id: &'a str,
    /// The colleague's key.
    pub npc: &'a str,
    /// Name.
    pub name: &'a str,
    /// Department.
    pub department: &'a str,
    /// Job title.
    pub position: &'a str,
    /// Persona text.
    pub persona: &'a str,
    /// What the colleague says when they know nothing relevant.
    pub default_reply: &'a str,
    /// The intern's name.
    pub intern: &'a str,
    /// Company name.
    pub company: &'a str,
    /// Thread key.
    pub thread: &'a str,
    /// A direct message always gets an answer; in a group, a colleague with nothing
    /// relevant to say stays silent.
    pub direct: bool,
    /// The thread so far, ending with the message being answered.
    pub conversation: Vec<Line>,
    /// The clue rules whose conditions hold, in scenario order.
    pub clues: Vec<ActiveClue>,
    /// The message is not a specific question (see [the module docs](self)): the
    /// colleague says exactly this, discloses nothing, and `clues` is empty.
    pub clarify: Option<String>,
}

/// An engine's answer.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NpcAnswer {
    /// The reply text and the clue keys it discloses; `None` for silence.
    pub reply: Option<(String, Vec<String>)>,
    /// The model call for the trajectory's `npc` line (`None`: no line).
    pub record: Option<NpcRecord>,
}

/// An engine could not answer (a model API gave up): the run ends as an
/// infrastructure failure.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("colleague `{npc}` could not answer: {message}")]
pub struct NpcError {
    /// Who.
    pub npc: String,
    /// Why.
    pub message: String,
    /// The model call for the trajectory's `npc` line (boxed: errors stay small).
    pub record: Option<Box<NpcRecord>>,
}

/// Decides what colleagues say. Engines run inside the synchronous simulation, so a
/// model-backed engine blocks on its network call.
pub trait NpcEngine: Send {
    /// Answers the last message of `q.conversation`.
    fn reply(&mut self, q: &NpcQuery<'_>) -> Result<NpcAnswer, NpcError>;
    /// Model usage so far (model-backed engines).
    fn usage(&self) -> Option<crate::protocol::ModelUsage> {
        None
    }
}

/// The rule-following engine: every triggered clue's response, or the default reply.
#[derive(Debug, Clone, Copy, Default)]
pub struct Scripted;

impl NpcEngine for Scripted {
    fn reply(&mut self, q: &NpcQuery<'_>) -> Result<NpcAnswer, NpcError> {
        if let Some(c) = &q.clarify {
            return Ok(NpcAnswer {
                reply: Some((c.clone(), Vec::new())),
                record: None,
            });
        }
        let mut hit: Vec<&ActiveClue> = Vec::new();
        for c in q.clues.iter().filter(|c| c.triggered) {
            // A later rule with the same trigger is a later stage of the same answer.
            hit.retain(|h| h.topics != c.topics);
            hit.push(c);
        }
        let reply = if hit.is_empty() {
            if !q.direct {
                None
            } else if q.clues.iter().any(|c| c.near) {
                Some((ASK_WHAT.to_owned(), Vec::new()))
            } else {
                Some((q.default_reply.to_owned(), Vec::new()))
            }
        } else {
            let text: Vec<&str> = hit.iter().map(|c| c.response.as_str()).collect();
            Some((
                text.join("\n\n"),
                hit.iter().map(|c| c.key.clone()).collect(),
            ))
        };
        Ok(NpcAnswer {
            reply,
            record: None,
        })
    }
}

/// What a scripted colleague says to a question near something they know that does
/// not ask for it: a prompt to ask precisely, never a brush-off.
pub const ASK_WHAT: &str = "I may be able to help with that, but I'm not sure what exactly you need from me. Could you ask me the specific question?";

/// Replays `npc` lines of a trajectory by (step, call id, colleague); anything not
/// recorded goes to `fallback` (a live engine when resuming, or none in replay).
pub struct RecordedNpc {
    lines: BTreeMap<(u64, String, String), NpcRecord>,
    fallback: Option<Box<dyn NpcEngine>>,
}

impl std::fmt::Debug for RecordedNpc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecordedNpc")
            .field("lines", &self.lines.len())
            .finish_non_exhaustive()
    }
}

impl RecordedNpc {
    /// An engine over recorded `npc` lines.
    pub fn new(fallback: Option<Box<dyn NpcEngine>>) -> Self {
        RecordedNpc {
            lines: BTreeMap::new(),
            fallback,
        }
    }

    /// Adds a recorded `npc` line.
    pub fn insert(&mut self, line: &NpcLine) {
        self.lines.insert(
            (line.step, line.call.clone(), line.npc.clone()),
            line.record.clone(),
        );
    }

    /// Whether nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }
}

impl NpcEngine for RecordedNpc {
    fn reply(&mut self, q: &NpcQuery<'_>) -> Result<NpcAnswer, NpcError> {
        let key = (q.step, q.call_id.to_owned(), q.npc.to_owned());
        let Some(record) = self.lines.get(&key) else {
            return match &mut self.fallback {
                Some(f) => f.reply(q),
                // A run recorded with the scripted engine has no npc lines: the rules
                // give the same answer again.
                None => Scripted.reply(q),
            };
        };
        if let Some(e) = &record.error {
            return Err(NpcError {
                npc: q.npc.to_owned(),
                message: e.clone(),
                record: Some(Box::new(record.clone())),
            });
        }
        Ok(NpcAnswer {
            reply: record
                .reply
                .as_ref()
                .map(|t| (t.clone(), record.clues.clone())),
            record: Some(record.clone()),
        })
    }

    fn usage(&self) -> Option<crate::protocol::ModelUsage> {
        self.fallback.as_ref().and_then(|f| f.usage())
    }
}

/// Lower-cased tokens that carry an identifier or a number (they contain a digit).
/// Separators inside them (`INV-2024-7`, `3.5`, `a_b`) are kept; trailing ones dropped.
fn id_tokens(text: &str) -> BTreeSet<String> {
    text.split(|c: char| !(c.is_alphanumeric() || matches!(c, '-' | '_' | '.')))
        .map(|t| t.trim_matches(|c: char| matches!(c, '-' | '_' | '.')))
        .filter(|t| t.chars().any(|c| c.is_ascii_digit()))
        .map(str::to_lowercase)
        .collect()
}

/// Whether a clue's response content appears in a free-text reply (how disclosures
/// by model-played colleagues are recorded).
///
/// * If the response holds identifier or number tokens (any token with a digit,
///   such as `NEW877056`, `2024-03-01` or `12.5`), **every** one of them must occur
///   as a token of the reply: a fact of this kind is useless unless exact.
/// * Otherwise at least 60% of the response's meaning-bearing words (its
///   [`concepts`]: stop words dropped, stemmed, synonyms folded) must occur among
///   the reply's.
pub fn appears_in(response: &str, reply: &str) -> bool {
    let ids = id_tokens(response);
    if !ids.is_empty() {
        return ids.is_subset(&id_tokens(reply));
    }
    let want = concepts(response);
    if want.is_empty() {
        return false;
    }
    let got = concepts(reply);
    let hit = want.intersection(&got).count();
    hit * 10 >= want.len() * 6
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_must_all_appear() {
        let r = "OLD760110 is now NEW877056 (in \"Data retention policy\")";
        assert!(appears_in(
            r,
            "Sure: the old chart OLD760110 maps to NEW877056."
        ));
        assert!(!appears_in(r, "It maps to NEW877056."));
        assert!(!appears_in(r, "OLD760110 maps to NEW87705."));
        assert!(appears_in(
            "The limit is 12.5 thousand, see INV-2024-7.",
            "Invoice inv-2024-7: limit 12.5k? No: 12.5 thousand."
        ));
    }

    #[test]
    fn words_need_sixty_percent() {
        let r = "Ask the procurement team about approval before buying anything.";
        // procurement, team, approval, before, buying(->procurement), anything, ask
        assert!(appears_in(
            r,
            "You should ask the purchasing team for approval before anything."
        ));
        assert!(!appears_in(r, "I have no idea, sorry."));
        assert!(!appears_in("", "anything"));
    }

    fn t(groups: &[&[&str]]) -> Trigger {
        Trigger::new(
            &groups
                .iter()
                .map(|g| g.iter().map(|s| s.to_string()).collect())
                .collect::<Vec<_>>(),
        )
    }

    #[test]
    fn matches_paraphrases_through_stems_and_synonyms() {
        let trig = t(&[&["chart", "link"], &["new id", "replacement"]]);
        for msg in [
            "Hi Dana, what is the new ID for the chart OLD123456?",
            "Could you give me the replacement identifiers for your graphs?",
            "Which updated numbers should the broken charts point to?",
            "I need the current codes for the figures in the onboarding article",
        ] {
            assert!(trig.matches(&concepts(msg)), "{msg}");
        }
        for msg in [
            "Hello! How are you?",
            "Where is the onboarding article?",
            "new chart",
        ] {
            let want = msg == "new chart";
            assert_eq!(trig.matches(&concepts(msg)), want, "{msg}");
        }
    }

    #[test]
    fn identifiers_must_match_exactly() {
        let trig = t(&[&["OLD123456"]]);
        assert!(trig.matches(&concepts("what replaces old123456?")));
        assert!(!trig.matches(&concepts("what replaces OLD123457?")));
    }

    #[test]
    fn synonym_table_folds_as_a_scan_of_the_groups_would() {
        // The definition the table must agree with: the first group holding the
        // word's stem, as written or stemmed.
        fn scanned(word: &str) -> String {
            let s = stem(word);
            SYNONYMS
                .iter()
                .find(|g| g.iter().any(|w| *w == s || stem(w) == s))
                .map_or(s, |g| g[0].to_owned())
        }
        let words = SYNONYMS.iter().flat_map(|g| g.iter().copied()).chain([
            "Charts",
            "mapping",
            "Vendors",
            "approved",
            "OLD123456",
            "unknown",
        ]);
        for w in words {
            assert_eq!(concept(w), scanned(w), "{w}");
            for suffix in ["s", "es", "ed", "ing"] {
                let w = format!("{w}{suffix}");
                assert_eq!(concept(&w), scanned(&w), "{w}");
            }
        }
    }

    /// The stemmer as it was written before it worked in a reused buffer (one new
    /// string per step): the definition the buffered one must agree with.
    pub(crate) mod old {
        pub(crate) fn stem(w: &str) -> String {
            let w = w.to_ascii_lowercase();
            if w.bytes().any(|b| b.is_ascii_digit()) {
                return w;
            }
            drop_e(strip_suffix(w))
        }
        fn drop_e(s: String) -> String {
            if s.len() >= 4 && s.ends_with('e') && !s.ends_with("ee") {
                s[..s.len() - 1].to_owned()
            } else {
                s
            }
        }
        fn strip_suffix(w: String) -> String {
            let n = w.len();
            let cut = |suffix: &str, min: usize| n > suffix.len() + min && w.ends_with(suffix);
            if cut("ies", 2) {
                return format!("{}y", &w[..n - 3]);
            }
            if cut("ing", 2) {
                return undouble(&w[..n - 3]);
            }
            if cut("ed", 2) {
                return undouble(&w[..n - 2]);
            }
            if cut("es", 2)
                && (w.ends_with("ses")
                    || w.ends_with("xes")
                    || w.ends_with("ches")
                    || w.ends_with("shes"))
            {
                return w[..n - 2].to_owned();
            }
            if cut("s", 2) && !w.ends_with("ss") && !w.ends_with("us") {
                return w[..n - 1].to_owned();
            }
            w
        }
        fn undouble(base: &str) -> String {
            let b = base.as_bytes();
            if b.len() >= 2
                && b[b.len() - 1] == b[b.len() - 2]
                && !matches!(b[b.len() - 1], b'l' | b's' | b'z')
            {
                base[..base.len() - 1].to_owned()
            } else {
                base.to_owned()
            }
        }
        /// `concepts` as first written: every word stemmed into a new string.
        pub(crate) fn concepts(text: &str) -> std::collections::BTreeSet<String> {
            text.split(|c: char| !c.is_alphanumeric())
                .filter(|w| {
                    !w.is_empty() && !super::STOP.contains(&w.to_ascii_lowercase().as_str())
                })
                .map(|w| {
                    let s = stem(w);
                    super::SYNONYM_HEADS.get(&s).map_or(s, |h| (*h).to_owned())
                })
                .collect()
        }
    }

    /// Every eighth bundled scenario (of every suite, as listed by name: few
    /// enough for a debug build), its texts (objectives, clue responses, trigger
    /// words, plan messages, names, default replies, some files' text) and every
    /// word of them with each ending the stemmer cuts: the corpus the fast paths
    /// are held to.
    pub(crate) struct Corpus {
        pub(crate) scenarios: Vec<tbsim_scenario::Scenario>,
        pub(crate) texts: Vec<String>,
        pub(crate) words: Vec<String>,
    }

    static CORPUS: LazyLock<Corpus> = LazyLock::new(|| {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../content/scenarios");
        let mut paths = Vec::new();
        let mut dirs = vec![root];
        while let Some(d) = dirs.pop() {
            for e in std::fs::read_dir(&d).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() {
                    dirs.push(p);
                } else if p.extension().is_some_and(|e| e == "ron") {
                    paths.push(p);
                }
            }
        }
        paths.sort();
        let mut texts = Vec::new();
        let mut scenarios = Vec::new();
        for (i, p) in paths.iter().enumerate().filter(|(i, _)| i % 8 == 0) {
            let Ok(l) = tbsim_scenario::load_file(p) else {
                continue;
            };
            let s = l.scenario;
            for t in &s.tasks {
                texts.push(t.objective.clone());
                for step in &t.plan {
                    if let Ok(v) = serde_json::from_str::<serde_json::Value>(&step.args)
                        && let Some(m) = v["text"].as_str()
                    {
                        texts.push(m.to_owned());
                    }
                }
            }
            for p in &s.company.people {
                texts.push(p.name.clone());
                texts.extend(p.default_reply.clone());
                for c in &p.clues {
                    texts.push(c.response.clone());
                    texts.extend(c.trigger.iter().flatten().cloned());
                }
            }
            if i % 16 == 0 {
                for f in &s.files {
                    if let tbsim_scenario::Content::Text(t) = &f.content {
                        texts.extend(t.lines().take(200).map(str::to_owned));
                    }
                }
            }
            scenarios.push(s);
        }
        let distinct: BTreeSet<&str> = texts
            .iter()
            .flat_map(|t| t.split(|c: char| !c.is_alphanumeric()))
            .filter(|w| !w.is_empty())
            .collect();
        let words = distinct
            .iter()
            .flat_map(|w| {
                ["", "s", "es", "ies", "ed", "ing", "e", "ses", "ches"]
                    .map(|end| format!("{w}{end}"))
            })
            .collect();
        Corpus {
            scenarios,
            texts,
            words,
        }
    });

    pub(crate) fn scenario_corpus() -> &'static Corpus {
        &CORPUS
    }

    /// The buffered stemmer and `concepts` agree with their first definitions on
    /// every text and word of the bundled scenarios.
    #[test]
    fn buffered_folding_agrees_with_the_first_definition() {
        let c = scenario_corpus();
        assert!(c.words.len() > 10_000, "{}", c.words.len());
        for t in c.texts.iter().chain(&c.words) {
            assert_eq!(concepts(t), old::concepts(t), "{t}");
        }
        // Two equal bytes ending a multi-byte character are no doubled letter (the
        // first definition cut the character in two and panicked).
        assert_eq!(
            concepts("x\u{2082}ing"),
            BTreeSet::from(["x\u{2082}".to_owned()])
        );
        assert_eq!(stem("mapped"), old::stem("mapped"));
    }

    /// `concepts`, lower-casing each word once, folds as its definition does: stop
    /// words tested on the lower-cased word, then the word stemmed and folded.
    #[test]
    fn concepts_fold_as_the_word_by_word_definition() {
        fn reference(text: &str) -> BTreeSet<String> {
            text.split(|c: char| !c.is_alphanumeric())
                .filter(|w| !w.is_empty() && !STOP.contains(&w.to_ascii_lowercase().as_str()))
                .map(|w| {
                    let s = old::stem(w);
                    SYNONYM_HEADS.get(&s).map_or(s, |h| (*h).to_owned())
                })
                .collect()
        }
        let mut texts: Vec<String> = SYNONYMS
            .iter()
            .map(|g| g.join(" ").to_uppercase())
            .chain(
                STOP.iter()
                    .map(|w| format!("{w} {} {w}s", w.to_uppercase())),
            )
            .collect();
        texts.extend(
            [
                "Hi Dana, what is the new ID for the chart OLD123456?",
                "The İstanbul Straße VENDORS were Approved; KNOW \u{212A}elvin mapping charts",
                "policies, reviewed, suppliers, computing, computed, status, sees",
                "",
            ]
            .map(String::from),
        );
        for t in &texts {
            assert_eq!(concepts(t), reference(t), "{t}");
        }
    }

    #[test]
    fn stems_are_reasonable() {
        assert_eq!(stem("charts"), "chart");
        assert_eq!(stem("mapping"), "map");
        assert_eq!(stem("suppliers"), "supplier");
        assert_eq!(stem("policies"), "policy");
        assert_eq!(stem("status"), "status");
        assert_eq!(stem("reviewed"), "review");
        assert_eq!(concept("vendors"), "supplier");
        assert_eq!(concept("Handbook"), "manual");
    }

    #[test]
    fn empty_trigger_never_matches() {
        assert!(!Trigger::new(&[]).matches(&concepts("anything at all")));
    }
}
