//! Whether a message is a specific question, judged against everything the
//! company's colleagues know (see the rules in [the parent module](super)).

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::LazyLock;

use super::{QUESTION_WORDS, Trigger, concepts};

/// Words a keyword soup is made of, whatever the scenario: asking for these in bulk
/// is asking for everything at once.
const SOUP_WORDS: &[&str] = &[
    "manual",
    "handbook",
    "rule",
    "where",
    "file",
    "folder",
    "owner",
    "who",
    "approval",
    "code",
    "id",
    "chart",
    "link",
    "available",
    "free",
    "schedule",
    "budget",
    "amount",
    "signup",
    "register",
    "sales",
    "transaction",
    "supplier",
    "attendance",
    "data",
    "table",
    "contact",
    "owner",
    "password",
    "answer",
    "result",
    "deadline",
    "meeting",
    "date",
    "price",
    "cost",
    "list",
];

/// At most this many soup words beyond what the best-matching clue's trigger uses.
pub const MAX_EXTRA_CUES: usize = 5;
/// At most this many distinct content words in one question.
pub const MAX_CONCEPTS: usize = 48;
/// A message holding this share (percent) of a task's content words is the task
/// text forwarded, not a question.
pub const FORWARDED_SHARE: usize = 60;
/// Tasks shorter than this (content words) are too short to tell a forward from a
/// question that restates them.
const FORWARD_MIN: usize = 12;

/// What a colleague says to a message that is not a specific question.
pub const BE_SPECIFIC: &str = "That's a lot of things at once, and I'm not sure which of them is for me. Could you ask me one specific question at a time?";

/// Why a message is not specific.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unspecific {
    /// It asks about several unrelated things (clues of different tasks).
    Subjects(usize),
    /// It carries many request words beyond what any one question needs.
    Cues(usize),
    /// It is a wall of text.
    Length(usize),
    /// It is a task's text forwarded.
    Forwarded,
    /// It is a list of words, not a sentence.
    KeywordList,
    /// It copies a sentence of a task's objective (alone, or continuing the
    /// sender's previous message): the task relayed piece by piece.
    Copied,
    /// It names some work and asks for help with it in general ("any advice?"):
    /// nothing to answer until the question is asked.
    Vague,
}

/// Words that hold a sentence together. A question has them; a list of keywords
/// hardly any.
const GLUE: &[&str] = &[
    "a", "an", "the", "and", "or", "but", "of", "to", "in", "on", "for", "at", "by", "from",
    "with", "about", "as", "into", "is", "are", "was", "were", "be", "been", "am", "do", "does",
    "did", "have", "has", "had", "can", "could", "would", "will", "should", "shall", "may",
    "might", "must", "i", "you", "we", "they", "he", "she", "it", "me", "us", "them", "my", "your",
    "our", "their", "his", "her", "its", "this", "that", "these", "those", "what", "which", "who",
    "whom", "whose", "where", "when", "why", "how", "if", "so", "not", "no", "any", "some",
    "there", "here", "please", "hi", "hello", "hey", "thanks", "thank", "let", "know", "need",
    "tell", "get", "give", "send", "share", "is", "s", "m", "re", "ll", "d",
];
/// A message of at least this many words is a keyword list when fewer than
/// [`GLUE_PERCENT`]% of them are [`GLUE`].
const LIST_MIN_WORDS: usize = 8;
/// See [`LIST_MIN_WORDS`].
pub const GLUE_PERCENT: usize = 15;

/// Whether a text is a list of words rather than a sentence.
///
/// Counts as it reads, with no word list built: a file path counts as one word
/// (which is not glue), every other token as its alphanumeric runs.
fn keyword_list(text: &str) -> bool {
    let mut words = 0;
    let mut glue = 0;
    let mut run = 0;
    let mut longest = 0;
    let mut count = |is_glue: bool| {
        words += 1;
        if is_glue {
            glue += 1;
            run = 0;
        } else {
            run += 1;
            longest = longest.max(run);
        }
    };
    for token in text.split_whitespace() {
        // A file path names one thing, however many words its folders hold.
        if is_path(token) {
            count(false);
        } else {
            words_of(token).for_each(|w| count(is_glue(w)));
        }
    }
    longest >= MAX_RUN || (words >= LIST_MIN_WORDS && glue * 100 < words * GLUE_PERCENT)
}

/// The words of a whitespace-separated token that is not a path: its runs of
/// letters, digits, `-` and `_`, trimmed of those separators. A hyphenated word or
/// an identifier (`front-end`, `pricing-cache-09`) is one word, as a path is.
fn words_of(token: &str) -> impl Iterator<Item = &str> {
    token
        .split(|c: char| !(c.is_alphanumeric() || c == '-' || c == '_'))
        .map(|w| w.trim_matches(|c: char| c == '-' || c == '_'))
        .filter(|w| !w.is_empty())
}

/// [`GLUE`] as a set: membership only (never iterated), so its order is moot.
static GLUE_SET: LazyLock<HashSet<&'static str>> = LazyLock::new(|| GLUE.iter().copied().collect());

/// Whether a word, lower-cased, is [`GLUE`]. Short ASCII words (nearly all) are
/// lower-cased on the stack; anything else as `str::to_lowercase` does.
fn is_glue(w: &str) -> bool {
    let mut buf = [0u8; 16];
    if w.is_ascii() && w.len() <= buf.len() {
        let lower = &mut buf[..w.len()];
        lower.copy_from_slice(w.as_bytes());
        lower.make_ascii_lowercase();
        std::str::from_utf8(lower).is_ok_and(|l| GLUE_SET.contains(l))
    } else {
        GLUE_SET.contains(w.to_lowercase().as_str())
    }
}

/// Whether a whitespace-separated token is a file path: folders and a file name
/// with a short extension (`drive/sales/q3.csv`, in backticks or quotes or not).
/// Slash-joined words without a file name are not, so a keyword list cannot hide
/// as one "path".
fn is_path(token: &str) -> bool {
    let t = token.trim_matches(|c: char| !c.is_alphanumeric() && c != '/' && c != '_');
    let Some((dir, file)) = t.rsplit_once('/') else {
        return false;
    };
    let ext_ok = file.rsplit_once('.').is_some_and(|(stem, ext)| {
        !stem.is_empty()
            && (1..=5).contains(&ext.len())
            && ext.chars().all(|c| c.is_ascii_alphanumeric())
    });
    ext_ok && !dir.is_empty() && t.split('/').all(|seg| !seg.is_empty() && seg.len() <= 64)
}

/// A run of this many words without a glue word is a keyword list, however much
/// sentence surrounds it.
pub const MAX_RUN: usize = 10;

/// Everything the company knows, for judging messages.
#[derive(Debug, Clone, Default)]
pub struct Scope {
    /// Every clue's task (empty for none), trigger and the trigger's vocabulary;
    /// kept as strings for the tests, which hold the numbered index to them.
    #[cfg(test)]
    clues: Vec<(String, Trigger, BTreeSet<String>)>,
    /// Soup words: every trigger's vocabulary and [`SOUP_WORDS`].
    #[cfg(test)]
    cues: BTreeSet<String>,
    /// Each task objective's content words.
    #[cfg(test)]
    objectives: Vec<BTreeSet<String>>,
    /// First-name concept -> full names of the several people who share it.
    shared_first: BTreeMap<String, Vec<String>>,
    /// Every objective sentence of at least [`COPY_MIN`] words: its words in
    /// order and the set of them (sorted, once each), to find copies. Words are
    /// numbered by [`Scope::words`], so a message is compared by number.
    sentences: Vec<(Vec<u32>, Vec<u32>)>,
    /// Lower-cased word -> its number, for every word of those sentences (looked
    /// up only, never iterated).
    words: HashMap<String, u32>,
    /// The same clues, cues and objectives over numbered concepts, for judging
    /// a message without comparing strings.
    index: ConceptIndex,
    /// Each colleague's name -> the concept of its first word (a direct message's
    /// greeting), and each name shared by first name -> its concepts when it has
    /// more than one (a full name).
    names: HashMap<String, NameConcepts>,
}

/// What [`Scope::addressed`] and [`Scope::who`] need of one colleague's name.
#[derive(Debug, Clone, Default)]
struct NameConcepts {
    /// The concept of each word of the name, in order.
    parts: Vec<String>,
    /// The name's concepts when there are several (a first name and a surname).
    full: Option<BTreeSet<String>>,
}

/// Every concept a trigger, a soup word or an objective holds, numbered, and the
/// clue triggers, soup words and objectives over those numbers. A message's
/// concepts outside it can match nothing here, so a message is judged as the
/// sorted numbers of the concepts it shares with the index.
#[derive(Debug, Clone, Default)]
struct ConceptIndex {
    /// Concept -> number (looked up only, never iterated).
    ids: HashMap<String, u32>,
    /// Per number: whether it is a soup word, and whether it is more than a
    /// question word.
    cue: Vec<bool>,
    plain: Vec<bool>,
    /// Per clue: its trigger over numbers, its vocabulary (sorted) and its task's
    /// number.
    clues: Vec<NumberedClue>,
    /// Per number: the clues a message holding it may match (those with a
    /// first-group alternative whose first number it is), ascending.
    starts: Vec<Vec<u32>>,
    /// Each objective's concepts (of those long enough to be forwarded), sorted.
    objectives: Vec<Vec<u32>>,
}

#[derive(Debug, Clone, Default)]
struct NumberedClue {
    groups: Vec<Vec<Vec<u32>>>,
    exclude: Vec<Vec<u32>>,
    vocabulary: Vec<u32>,
    task: u32,
}

impl NumberedClue {
    /// [`Trigger::matches`] over a message's sorted numbers.
    fn matches(&self, msg: &[u32]) -> bool {
        !self.groups.is_empty()
            && self
                .groups
                .iter()
                .all(|g| g.iter().any(|alt| subset(alt, msg)))
            && !self.exclude.iter().any(|x| subset(x, msg))
    }

    /// [`Trigger::matches_strongly`], given that it matches.
    fn strongly(&self, msg: &[u32], plain: &[bool]) -> bool {
        self.groups.iter().all(|g| {
            g.iter()
                .any(|alt| subset(alt, msg) && alt.iter().any(|c| plain[*c as usize]))
        })
    }
}

/// Whether every number of `part` is in `whole` (sorted).
fn subset(part: &[u32], whole: &[u32]) -> bool {
    part.iter().all(|c| whole.binary_search(c).is_ok())
}

impl ConceptIndex {
    fn new(
        clues: &[(String, Trigger, BTreeSet<String>)],
        cues: &BTreeSet<String>,
        objectives: &[BTreeSet<String>],
    ) -> ConceptIndex {
        let mut ix = ConceptIndex::default();
        let mut tasks: HashMap<&str, u32> = HashMap::new();
        for (task, trigger, vocabulary) in clues {
            let next = u32::try_from(tasks.len()).unwrap_or(u32::MAX);
            let task = *tasks.entry(task.as_str()).or_insert(next);
            let mut numbered = |set: &BTreeSet<String>| {
                let mut v: Vec<u32> = set.iter().map(|c| ix.number(c)).collect();
                v.sort_unstable();
                v
            };
            let clue = NumberedClue {
                groups: trigger
                    .groups
                    .iter()
                    .map(|g| g.iter().map(&mut numbered).collect())
                    .collect(),
                exclude: trigger.exclude.iter().map(&mut numbered).collect(),
                vocabulary: numbered(vocabulary),
                task,
            };
            ix.clues.push(clue);
        }
        for c in cues {
            let id = ix.number(c);
            ix.cue[id as usize] = true;
        }
        ix.objectives = objectives
            .iter()
            .map(|o| {
                let mut v: Vec<u32> = o.iter().map(|c| ix.number(c)).collect();
                v.sort_unstable();
                v
            })
            .collect();
        ix.starts = vec![Vec::new(); ix.cue.len()];
        for (i, clue) in ix.clues.iter().enumerate() {
            for alt in clue.groups.first().into_iter().flatten() {
                if let Some(&c) = alt.first() {
                    let list = &mut ix.starts[c as usize];
                    if list.last() != Some(&(i as u32)) {
                        list.push(i as u32);
                    }
                }
            }
        }
        ix
    }

    /// The number of a concept, given one if it has none yet.
    fn number(&mut self, concept: &str) -> u32 {
        if let Some(&id) = self.ids.get(concept) {
            return id;
        }
        let id = u32::try_from(self.cue.len()).unwrap_or(u32::MAX);
        self.ids.insert(concept.to_owned(), id);
        self.cue.push(false);
        self.plain.push(!QUESTION_WORDS.contains(&concept));
        id
    }

    /// The clues whose trigger matches a message's numbers, ascending: only
    /// those a number of the message can start are tried (a trigger matches only
    /// if some alternative of its first group is in the message).
    fn matching(&self, known: &[u32]) -> Vec<u32> {
        let mut matched: Vec<u32> = known
            .iter()
            .flat_map(|&c| &self.starts[c as usize])
            .copied()
            .collect();
        matched.sort_unstable();
        matched.dedup();
        matched.retain(|&i| self.clues[i as usize].matches(known));
        matched
    }

    /// The sorted numbers of a message's concepts that the index holds.
    fn of(&self, msg: &BTreeSet<String>) -> Vec<u32> {
        let mut v: Vec<u32> = msg
            .iter()
            .filter_map(|c| self.ids.get(c.as_str()).copied())
            .collect();
        v.sort_unstable();
        v
    }
}

/// The number of a word no objective sentence holds: it matches none.
const UNKNOWN: u32 = u32::MAX;

/// Objective sentences shorter than this (words) are not looked for in messages:
/// a short one is a phrase a question may well repeat.
const COPY_MIN: usize = 6;
/// A message holding this share (percent) of an objective sentence's words in the
/// sentence's order copies it.
const COPY_SHARE: usize = 80;

/// The lower-cased words of a text in order (runs of letters and digits).
fn tokens(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// The sentences of a text: cut after `.`, `?` or `!` followed by a space, and at
/// line ends.
fn sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let next_space = chars.peek().is_none_or(|(_, n)| n.is_whitespace());
        if c == '\n' || (matches!(c, '.' | '?' | '!') && next_space) {
            out.push(&text[start..i + c.len_utf8()]);
            start = i + c.len_utf8();
        }
    }
    out.push(&text[start..]);
    out.retain(|s| !s.trim().is_empty());
    out
}

/// How many numbers two sorted, deduplicated lists share.
fn shared(a: &[u32], b: &[u32]) -> usize {
    let (mut i, mut j, mut n) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                n += 1;
                i += 1;
                j += 1;
            }
        }
    }
    n
}

/// Length of the longest common subsequence of two word lists.
fn common_run(a: &[u32], b: &[u32]) -> usize {
    let mut prev = vec![0usize; b.len() + 1];
    let mut cur = vec![0usize; b.len() + 1];
    for x in a {
        for (j, y) in b.iter().enumerate() {
            cur[j + 1] = if x == y {
                prev[j] + 1
            } else {
                cur[j].max(prev[j + 1])
            };
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

/// Words that ask for help in general, not for something.
const GENERIC_ASK: &[&str] = &[
    "advice",
    "advise",
    "tip",
    "tips",
    "suggestion",
    "suggestions",
    "suggest",
    "pointer",
    "pointers",
    "thought",
    "thoughts",
    "idea",
    "ideas",
    "guidance",
    "recommendation",
    "recommendations",
    "recommend",
    "input",
    "help",
    "insight",
    "insights",
    "hint",
    "hints",
    "heads",
];
/// Idioms that ask for help in general although they hold a question word.
const GENERIC_IDIOMS: &[&str] = &[
    "anything i should know",
    "anything i need to know",
    "what should i know",
    "what do i need to know",
    "where do i start",
    "where should i start",
    "where to start",
    "how do i start",
    "how should i start",
    "how should i approach it",
    "how should i approach this",
    "give me a hand",
    "lend me a hand",
    "give a hand",
    "lend a hand",
];
/// Words that ask for something in particular.
const SPECIFIC_ASK: &[&str] = &[
    "where",
    "how",
    "which",
    "what",
    "who",
    "whom",
    "whose",
    "when",
    "why",
    "whether",
    "send",
    "share",
    "give",
    "point",
    "find",
    "locate",
    "need",
    "want",
    "looking",
    "explain",
    "confirm",
    "free",
    "available",
    "approve",
    "fix",
    "join",
    "attend",
];
/// Openings of a sentence that says what the sender is doing (not a finding).
const ACTIVITY: &[&str] = &[
    "i'm", "im", "i am", "i've", "ive", "i have", "i was", "we're", "we are", "my", "our", "i got",
    "i just", "i'll", "i will",
];

/// Whether a message only names some work and asks for help with it in general
/// ("I'm working on a sales analysis. Any advice?"): no question word, no request
/// for a thing, no figure or identifier, no finding, just a generic ask.
pub fn vague(text: &str) -> bool {
    // Nearly every message holds no generic-ask word or idiom, and is then not
    // vague whatever else it says: told apart without the rewriting below.
    if text.is_ascii() && !generic_ask(&text.to_ascii_lowercase()) {
        return false;
    }
    vague_rewritten(text)
}

/// [`vague`] by its definition: idioms rewritten to a generic-ask word, then
/// every sentence read.
fn vague_rewritten(text: &str) -> bool {
    let mut lower = text.to_lowercase().replace('\u{2019}', "'");
    for idiom in GENERIC_IDIOMS {
        lower = lower.replace(idiom, " advice ");
    }
    let words: Vec<&str> = lower
        .split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .map(|w| w.trim_matches('\''))
        .filter(|w| !w.is_empty())
        .collect();
    if !words.iter().any(|w| GENERIC_ASK.contains(w)) {
        return false;
    }
    if words
        .iter()
        .any(|w| SPECIFIC_ASK.contains(w) || w.bytes().any(|b| b.is_ascii_digit()))
        || lower.contains('"')
        || lower.contains('`')
    {
        return false;
    }
    // Every sentence is a greeting, the generic ask, or what the sender is doing.
    sentences(&lower).iter().all(|sentence| {
        let body = sentence
            .trim()
            .trim_start_matches(|c: char| !c.is_alphanumeric());
        let body = [
            "hi",
            "hello",
            "hey",
            "dear",
            "good morning",
            "good afternoon",
        ]
        .iter()
        .find_map(|g| body.strip_prefix(g))
        .map_or(body, |rest| {
            // "Hi Dana, ..." : the name goes with the greeting.
            rest.split_once(',').map_or("", |(_, r)| r)
        })
        .trim_start_matches(|c: char| !c.is_alphanumeric());
        body.is_empty()
            || body
                .split(|c: char| !(c.is_alphanumeric() || c == '\''))
                .any(|w| GENERIC_ASK.contains(&w))
            || ACTIVITY.iter().any(|a| {
                body.strip_prefix(a)
                    .is_some_and(|r| r.starts_with(|c: char| !c.is_alphanumeric()))
            })
            || ["thanks", "thank you"].iter().any(|t| body.starts_with(t))
    })
}

/// Whether a lower-cased ASCII text holds one of [`GENERIC_IDIOMS`] or, as a word
/// (cut as [`vague`] cuts words), one of [`GENERIC_ASK`]. (An idiom, which
/// `vague` turns into a generic-ask word, is matched before any is rewritten: the
/// rewriting cannot make another idiom, as none holds "advice".)
fn generic_ask(lower: &str) -> bool {
    GENERIC_IDIOMS.iter().any(|i| lower.contains(i))
        || lower
            .split(|c: char| !(c.is_alphanumeric() || c == '\''))
            .map(|w| w.trim_matches('\''))
            .any(|w| GENERIC_ASK.contains(&w))
}

impl Scope {
    /// A scope over every clue (task key or none, trigger), every task objective
    /// and every colleague's full name.
    pub fn new<'a>(
        clues: impl IntoIterator<Item = (Option<&'a str>, &'a Trigger)>,
        objectives: impl IntoIterator<Item = &'a str>,
        names: impl IntoIterator<Item = &'a str>,
    ) -> Scope {
        let clues: Vec<(String, Trigger, BTreeSet<String>)> = clues
            .into_iter()
            .map(|(t, tr)| {
                (
                    t.unwrap_or_default().to_owned(),
                    tr.clone(),
                    tr.vocabulary(),
                )
            })
            .collect();
        // The soup words' concepts are the same for every world: stemmed once.
        static SOUP: LazyLock<BTreeSet<String>> =
            LazyLock::new(|| SOUP_WORDS.iter().flat_map(|w| concepts(w)).collect());
        let mut cues: BTreeSet<String> = SOUP.clone();
        for (_, _, v) in &clues {
            cues.extend(v.iter().cloned());
        }
        let objectives_text: Vec<&str> = objectives.into_iter().collect();
        let objectives: Vec<BTreeSet<String>> = objectives_text
            .iter()
            .map(|o| concepts(o))
            .filter(|c| c.len() >= FORWARD_MIN)
            .collect();
        let names_text: Vec<&str> = names.into_iter().collect();
        let mut by_first: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for &n in &names_text {
            if let Some(first) = n.split_whitespace().next() {
                let c = concepts(first);
                if let Some(f) = c.into_iter().next() {
                    by_first.entry(f).or_default().push(n.to_owned());
                }
            }
        }
        by_first.retain(|_, v| v.len() > 1);
        by_first.values_mut().for_each(|v| v.sort());
        let mut words: HashMap<String, u32> = HashMap::new();
        let sentences = objectives_text
            .iter()
            .flat_map(|o| sentences(o))
            .map(tokens)
            .filter(|t| t.len() >= COPY_MIN)
            .map(|t| {
                let ids: Vec<u32> = t
                    .into_iter()
                    .map(|w| {
                        let next = u32::try_from(words.len()).unwrap_or(UNKNOWN - 1);
                        *words.entry(w).or_insert(next)
                    })
                    .collect();
                let mut set = ids.clone();
                set.sort_unstable();
                set.dedup();
                (ids, set)
            })
            .collect();
        let index = ConceptIndex::new(&clues, &cues, &objectives);
        let mut names: HashMap<String, NameConcepts> = HashMap::new();
        for n in &names_text {
            let parts: Vec<String> = n
                .split_whitespace()
                .filter_map(|w| concepts(w).into_iter().next())
                .collect();
            let full = Some(concepts(n)).filter(|c| c.len() > 1);
            names.insert(n.to_string(), NameConcepts { parts, full });
        }
        Scope {
            #[cfg(test)]
            clues,
            #[cfg(test)]
            cues,
            #[cfg(test)]
            objectives,
            shared_first: by_first,
            sentences,
            words,
            index,
            names,
        }
    }

    /// A text's words (lower-cased as [`tokens`] does, in order) by number;
    /// [`UNKNOWN`] for a word no objective sentence holds. Appended to `out`,
    /// lower-casing in one reused buffer.
    fn number_words(&self, text: &str, out: &mut Vec<u32>) {
        let mut lower = String::new();
        for w in text.split(|c: char| !c.is_alphanumeric()) {
            if w.is_empty() {
                continue;
            }
            lower.clear();
            if w.is_ascii() {
                lower.push_str(w);
                lower.make_ascii_lowercase();
            } else {
                lower.push_str(&w.to_lowercase());
            }
            out.push(self.words.get(lower.as_str()).copied().unwrap_or(UNKNOWN));
        }
    }

    /// Whether `words` (a message's, in order, by [`Scope::numbered`]) copy an
    /// objective sentence.
    fn copies(&self, words: &[u32]) -> bool {
        if words.len() < COPY_MIN {
            return false;
        }
        let mut present: Vec<u32> = words.iter().copied().filter(|w| *w != UNKNOWN).collect();
        present.sort_unstable();
        present.dedup();
        self.sentences.iter().any(|(sentence, set)| {
            // At most every distinct known word of the message is shared.
            present.len() * 100 >= set.len() * COPY_SHARE
                && shared(&present, set) * 100 >= set.len() * COPY_SHARE
                && common_run(words, sentence) * 100 >= sentence.len() * COPY_SHARE
        })
    }

    /// The concepts of a message written to `addressee` alone: their first name is
    /// the greeting, not a reference to someone else of that first name, unless
    /// another person of that first name is named in full. (Their surname stays: it
    /// may be part of someone else's full name.)
    pub fn addressed(&self, mut msg: BTreeSet<String>, addressee: &str) -> BTreeSet<String> {
        let computed;
        let parts: &[String] = match self.names.get(addressee) {
            Some(n) => &n.parts,
            None => {
                computed = addressee
                    .split_whitespace()
                    .filter_map(|w| concepts(w).into_iter().next())
                    .collect::<Vec<String>>();
                &computed
            }
        };
        let Some(first) = parts.first() else {
            return msg;
        };
        let other_named = self.shared_first.get(first).is_some_and(|people| {
            people
                .iter()
                .any(|p| p != addressee && self.full_name(p).is_some_and(|c| c.is_subset(&msg)))
        });
        if !other_named {
            msg.remove(first);
        }
        msg
    }

    /// [`Scope::judge`] for a message as sent: to `addressee` alone (a direct
    /// message; `None` in a group), after the sender's `earlier` message in the
    /// same conversation, if any. Recipient-independent as `judge` is: only whom
    /// the sender wrote to counts, never who holds what.
    pub fn judge_message(
        &self,
        text: &str,
        addressee: Option<&str>,
        earlier: Option<&str>,
    ) -> Result<(), Unspecific> {
        self.judge_message_concepts(text, addressee, earlier)
            .map(|_| ())
    }

    /// [`Scope::judge_message`], giving the message's concepts as judged (those
    /// [`Scope::addressed`] leaves for a direct message) when it is specific: the
    /// colleagues' clue triggers are matched against the same set.
    pub fn judge_message_concepts(
        &self,
        text: &str,
        addressee: Option<&str>,
        earlier: Option<&str>,
    ) -> Result<BTreeSet<String>, Unspecific> {
        if keyword_list(text) {
            return Err(Unspecific::KeywordList);
        }
        let mut words = Vec::new();
        self.number_words(text, &mut words);
        if self.copies(&words) {
            return Err(Unspecific::Copied);
        }
        // A sentence relayed in pieces: this message continues the previous one.
        if let Some(e) = earlier {
            let mut joined = Vec::new();
            self.number_words(e, &mut joined);
            let mine = joined.len();
            joined.extend_from_slice(&words);
            if mine > 0 && self.copies(&joined) && !self.copies(&joined[..mine]) {
                return Err(Unspecific::Copied);
            }
        }
        let msg = match addressee {
            Some(a) => self.addressed(concepts(text), a),
            None => concepts(text),
        };
        self.judge_words(&msg)?;
        if vague(text) {
            return Err(Unspecific::Vague);
        }
        Ok(msg)
    }

    /// Whether a message is a specific question; the same for every recipient, so
    /// the verdict never tells who holds a clue.
    pub fn judge(&self, text: &str) -> Result<(), Unspecific> {
        self.judge_message(text, None, None)
    }

    /// The checks on a message's concepts: length, forwarded task, several
    /// subjects, soup words. Judged over the concepts' numbers in the
    /// [`ConceptIndex`]; `judge_agrees_with_its_earlier_form` holds it to the
    /// verdicts of the same checks over strings.
    fn judge_words(&self, msg: &BTreeSet<String>) -> Result<(), Unspecific> {
        if msg.len() > MAX_CONCEPTS {
            return Err(Unspecific::Length(msg.len()));
        }
        let ix = &self.index;
        let known = ix.of(msg);
        for o in &ix.objectives {
            if shared(&known, o) * 100 >= o.len() * FORWARDED_SHARE {
                return Err(Unspecific::Forwarded);
            }
        }
        let matched = ix.matching(&known);
        let cues: Vec<u32> = known
            .iter()
            .copied()
            .filter(|&c| ix.cue[c as usize])
            .collect();
        // The fewest soup words left over by any one matching question. (Not by
        // a task's questions together: one task's clues can cover most request
        // words, and a soup would then pass as "one question".)
        let extra = matched
            .iter()
            .map(|&i| cues.len() - shared(&cues, &ix.clues[i as usize].vocabulary))
            .min()
            .unwrap_or(cues.len());
        // Several tasks' clues match, and the message carries words beyond the
        // best match: it asks for more than one thing. (A question whose words
        // merely also fit another task's broad trigger is still one question.)
        if extra >= 3 && matched.len() > 1 {
            let mut tasks: Vec<u32> = matched
                .iter()
                .map(|&i| &ix.clues[i as usize])
                .filter(|c| c.strongly(&known, &ix.plain))
                .map(|c| c.task)
                .collect();
            tasks.sort_unstable();
            tasks.dedup();
            if tasks.len() > 1 {
                return Err(Unspecific::Subjects(tasks.len()));
            }
        }
        if extra > MAX_EXTRA_CUES {
            return Err(Unspecific::Cues(extra));
        }
        Ok(())
    }

    /// A colleague's concepts when their name has several (first name and
    /// surname). Every name [`Scope::shared_first`] lists has its entry.
    fn full_name(&self, name: &str) -> Option<&BTreeSet<String>> {
        self.names.get(name).and_then(|n| n.full.as_ref())
    }

    /// Indices of the clues whose trigger matches, in clue order (as a scan of
    /// every clue would find them).
    #[cfg(test)]
    fn matching(&self, msg: &BTreeSet<String>) -> Vec<usize> {
        self.index
            .matching(&self.index.of(msg))
            .into_iter()
            .map(|i| i as usize)
            .collect()
    }

    /// Whom a message means when a trigger is about someone whose first name
    /// several colleagues share.
    pub fn who(&self, msg: &BTreeSet<String>, trigger: &Trigger) -> Named {
        self.who_for(msg, trigger, &[])
    }

    /// [`Scope::who`] as the colleague asked reads it, who knows about the
    /// subjects of `known` (the triggers of the clues they may tell now): a shared
    /// first name that names only one person among those subjects means that
    /// person (a manager asked "is Anna free?" about their team takes it to mean
    /// the Anna of their team). When several people of that first name are among
    /// the colleague's subjects, or none is, they ask which one is meant.
    pub fn who_for(&self, msg: &BTreeSet<String>, trigger: &Trigger, known: &[&Trigger]) -> Named {
        // Most messages name no shared first name: the trigger's vocabulary is
        // gathered only for one that does.
        let mut vocab: Option<BTreeSet<String>> = None;
        for (first, people) in &self.shared_first {
            if !msg.contains(first) {
                continue;
            }
            let vocab = vocab.get_or_insert_with(|| trigger.vocabulary());
            if !vocab.contains(first) {
                continue;
            }
            let full = |p: &String| self.full_name(p);
            let subject = people
                .iter()
                .find(|p| full(p).is_some_and(|c| c.is_subset(vocab)));
            let named: Vec<&String> = people
                .iter()
                .filter(|p| full(p).is_some_and(|c| c.is_subset(msg)))
                .collect();
            // The bearers of this first name the colleague knows about.
            let theirs = || {
                people
                    .iter()
                    .filter(|p| {
                        full(p)
                            .is_some_and(|c| known.iter().any(|t| c.iter().all(|w| t.mentions(w))))
                    })
                    .count()
            };
            match subject {
                Some(s) if named.contains(&s) => continue,
                _ if !named.is_empty() => return Named::Other,
                Some(_) if theirs() == 1 => continue,
                _ => {
                    let (last, rest) = people.split_last().expect("shared by several");
                    return Named::Which(format!(
                        "Which {} do you mean: {} or {last}?",
                        people[0].split_whitespace().next().unwrap_or(first),
                        rest.join(", ")
                    ));
                }
            }
        }
        Named::Clear
    }
}

/// Whom a message means (see [`Scope::who`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Named {
    /// No shared first name stands in the way.
    Clear,
    /// The message names another person of the same first name.
    Other,
    /// The message names only a shared first name: ask which person is meant.
    Which(String),
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(groups: &[&[&str]]) -> Trigger {
        Trigger::new(
            &groups
                .iter()
                .map(|g| g.iter().map(|s| s.to_string()).collect())
                .collect::<Vec<_>>(),
        )
    }

    fn scope() -> (Scope, Trigger) {
        let kb = t(&[&["chart", "link", "id"], &["OLD123456"]]);
        let sales = t(&[&["sales"], &["handbook", "where"]]);
        let s = Scope::new(
            [(Some("task/kb"), &kb), (Some("task/sales"), &sales)],
            [
                "Fix the broken chart links of the onboarding article: each old chart id must be replaced by its new id, which the chart owners know; then save the article.",
            ],
            ["Anna Berg", "Anna Lund", "Omar Diaz"],
        );
        (s, kb)
    }

    #[test]
    fn a_specific_question_is_specific() {
        let (s, _) = scope();
        assert_eq!(
            s.judge("Hi Dana, which new chart ID replaced OLD123456 in the onboarding article?"),
            Ok(())
        );
    }

    #[test]
    fn two_tasks_at_once_are_not() {
        let (s, _) = scope();
        assert_eq!(
            s.judge(
                "What replaced chart OLD123456, where is the sales handbook, who approves \
                 the budget, and when is the team free for the review meeting?"
            ),
            Err(Unspecific::Subjects(2))
        );
    }

    #[test]
    fn keyword_soup_is_not() {
        let (s, _) = scope();
        let soup = "OLD123456 chart link id manual owner approval code available free budget";
        assert_eq!(s.judge(soup), Err(Unspecific::KeywordList));
        let soup =
            "Hi! chart link id new replace broken rebuilt point now instead use? Who owns it?";
        assert_eq!(s.judge(soup), Err(Unspecific::KeywordList));
        let soup = "Hi, what replaced OLD123456? Also the manual, owner, approval code, whether you are free, the budget and the attendance rules?";
        assert!(matches!(s.judge(soup), Err(Unspecific::Cues(_))));
    }

    #[test]
    fn a_path_is_one_word_but_slashed_keywords_are_not() {
        let (s, _) = scope();
        // Ten folder and file words in one path, after "the": one reference.
        let q = "Hi Dana, I'm fixing the chart in the onboarding article \
                 `drive/knowledge_base/day2/onboarding/charts/old_chart_links.md`. \
                 Which new chart ID replaced OLD123456?";
        assert_eq!(s.judge(q), Ok(()));
        assert!(is_path("`drive/a/b.csv`."));
        assert!(!is_path("chart/link/id/manual/owner/approval/code"));
        assert!(!is_path("and/or"));
        let soup = "OLD123456 chart/link/id/manual/owner/approval/code/available/free/budget";
        assert!(s.judge(soup).is_err());
    }

    /// The concept index finds exactly the clues a scan of every trigger finds, for
    /// questions built from every trigger's words and from every task's text.
    #[test]
    fn the_concept_index_matches_like_a_full_scan() {
        for name in ["busy-day", "traineebench-plus/traineebench-plus-006"] {
            let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join(format!("../content/scenarios/{name}.ron"));
            let s = tbsim_scenario::load_file(&path).unwrap().scenario;
            let triggers: Vec<(Option<&str>, Trigger)> = s
                .company
                .people
                .iter()
                .flat_map(|p| &p.clues)
                .map(|c| (c.task.as_deref(), Trigger::new(&c.trigger)))
                .collect();
            let scope = Scope::new(
                triggers.iter().map(|(k, t)| (*k, t)),
                s.tasks.iter().map(|t| t.objective.as_str()),
                s.company.people.iter().map(|p| p.name.as_str()),
            );
            let mut texts: Vec<String> = s.tasks.iter().map(|t| t.objective.clone()).collect();
            for c in s.company.people.iter().flat_map(|p| &p.clues) {
                // Every pair of alternatives across the first two groups.
                let first = c.trigger.first().cloned().unwrap_or_default();
                let second = c.trigger.get(1).cloned().unwrap_or_default();
                for a in &first {
                    texts.push(a.clone());
                    for b in &second {
                        texts.push(format!("{a} {b}"));
                    }
                }
            }
            let mut hits = 0;
            for text in &texts {
                let msg = concepts(text);
                let scan: Vec<usize> = (0..scope.clues.len())
                    .filter(|&i| scope.clues[i].1.matches(&msg))
                    .collect();
                hits += scan.len();
                assert_eq!(scope.matching(&msg), scan, "{name}: {text}");
            }
            assert!(hits > 0, "{name}: the questions matched something");
        }
    }

    /// Texts to hold the fast paths to their definitions: every objective, clue
    /// response and trigger alternative, and every message the oracle sends, of two
    /// bundled scenarios; their words run together as lists; and words whose case
    /// folding is not plain ASCII.
    fn corpus() -> Vec<String> {
        let mut texts: Vec<String> = [
            "KNOW THE ANSWER? Is It There",
            "İS it the one",
            "Straße of the city",
            "The KELVIN \u{212A}now sign",
            "ÀÉÎ are here",
            "averyveryverylongwordthatisnotglue is it",
            "THE/A/AN of/to/in",
            "drive/sales/q3.csv drive/sales/q4.csv and the list",
            "what where when why how who",
            "",
            "   ",
            "a-b-c_d.e",
            "Hi!!! ?? ,,, OLD123456",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        for name in ["busy-day", "traineebench-plus/traineebench-plus-006"] {
            let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join(format!("../content/scenarios/{name}.ron"));
            let s = tbsim_scenario::load_file(&path).unwrap().scenario;
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
            for c in s.company.people.iter().flat_map(|p| &p.clues) {
                texts.push(c.response.clone());
                let words: Vec<&str> = c.trigger.iter().flatten().map(String::as_str).collect();
                texts.push(words.join(" "));
                texts.extend(words.iter().map(|w| w.to_string()));
            }
        }
        texts
    }

    /// The counting keyword-list test and the stack-lowered glue lookup agree with
    /// the definition they replaced: every word lower-cased into a list, glue found
    /// by scanning [`GLUE`].
    #[test]
    fn keyword_list_agrees_with_the_word_list_definition() {
        fn reference(text: &str) -> bool {
            let words: Vec<String> = text
                .split_whitespace()
                .flat_map(|token| {
                    if is_path(token) {
                        vec!["/path".to_owned()]
                    } else {
                        token
                            .split(|c: char| !(c.is_alphanumeric() || c == '-' || c == '_'))
                            .map(|w| w.trim_matches(|c: char| c == '-' || c == '_'))
                            .filter(|w| !w.is_empty())
                            .map(str::to_lowercase)
                            .collect()
                    }
                })
                .collect();
            let glue = words.iter().filter(|w| GLUE.contains(&w.as_str())).count();
            let mut run = 0;
            let mut longest = 0;
            for w in &words {
                run = if GLUE.contains(&w.as_str()) {
                    0
                } else {
                    run + 1
                };
                longest = longest.max(run);
            }
            longest >= MAX_RUN
                || (words.len() >= LIST_MIN_WORDS && glue * 100 < words.len() * GLUE_PERCENT)
        }
        let texts = corpus();
        let mut lists = 0;
        for t in &texts {
            assert_eq!(keyword_list(t), reference(t), "{t}");
            lists += usize::from(reference(t));
        }
        assert!(lists > 0 && lists < texts.len(), "both verdicts occur");
        for w in GLUE
            .iter()
            .chain(&["Know", "KNOW", "\u{212A}now", "İs", "THEM", "them!"])
        {
            let lower = w.to_lowercase();
            assert_eq!(is_glue(w), GLUE.contains(&lower.as_str()), "{w}");
        }
    }

    /// `judge` gives the verdict its earlier form gave (every matching clue's task
    /// collected before the soup words were counted), message by message.
    #[test]
    fn judge_agrees_with_its_earlier_form() {
        fn reference(s: &Scope, text: &str) -> Result<(), Unspecific> {
            if keyword_list(text) {
                return Err(Unspecific::KeywordList);
            }
            let msg = &concepts(text);
            if msg.len() > MAX_CONCEPTS {
                return Err(Unspecific::Length(msg.len()));
            }
            for o in &s.objectives {
                if msg.intersection(o).count() * 100 >= o.len() * FORWARDED_SHARE {
                    return Err(Unspecific::Forwarded);
                }
            }
            let matched: Vec<&(String, Trigger, BTreeSet<String>)> =
                s.clues.iter().filter(|(_, t, _)| t.matches(msg)).collect();
            let tasks: BTreeSet<&str> = matched
                .iter()
                .filter(|(_, t, _)| t.matches_strongly(msg))
                .map(|(k, _, _)| k.as_str())
                .collect();
            let cues: BTreeSet<&String> = msg.intersection(&s.cues).collect();
            let extra = matched
                .iter()
                .map(|(_, _, v)| cues.iter().filter(|c| !v.contains(c.as_str())).count())
                .min()
                .unwrap_or(cues.len());
            if tasks.len() > 1 && extra >= 3 {
                return Err(Unspecific::Subjects(tasks.len()));
            }
            if extra > MAX_EXTRA_CUES {
                return Err(Unspecific::Cues(extra));
            }
            Ok(())
        }
        let scenario_scope = |name: &str| {
            let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join(format!("../content/scenarios/{name}.ron"));
            let s = tbsim_scenario::load_file(&path).unwrap().scenario;
            let triggers: Vec<(Option<&str>, Trigger)> = s
                .company
                .people
                .iter()
                .flat_map(|p| &p.clues)
                .map(|c| (c.task.as_deref(), Trigger::new(&c.trigger)))
                .collect();
            Scope::new(
                triggers.iter().map(|(k, t)| (*k, t)),
                s.tasks.iter().map(|t| t.objective.as_str()),
                s.company.people.iter().map(|p| p.name.as_str()),
            )
        };
        let scopes = [
            scope().0,
            scenario_scope("busy-day"),
            scenario_scope("traineebench-plus/traineebench-plus-006"),
        ];
        let mut texts = corpus();
        // Pairs of texts: two subjects at once.
        let n = texts.len();
        for i in 0..n {
            texts.push(format!("{} and also {}", texts[i], texts[(i * 7 + 3) % n]));
        }
        texts.push("What replaced chart OLD123456, where is the sales handbook, who approves the budget, and when is the team free for the review meeting?".into());
        let mut verdicts = BTreeSet::new();
        for s in &scopes {
            for t in &texts {
                let want = reference(s, t);
                verdicts.insert(format!("{want:?}").chars().take(8).collect::<String>());
                // The rules added since (copied sentences, vague asks) come on top.
                let got = if keyword_list(t) {
                    Err(Unspecific::KeywordList)
                } else {
                    s.judge_words(&concepts(t))
                };
                assert_eq!(got, want, "{t}");
            }
        }
        assert!(verdicts.len() >= 4, "several verdicts occur: {verdicts:?}");
    }

    /// The whole verdict on a message as sent (to a group, or to each colleague
    /// directly; alone, or after the sender's previous message), and the concepts
    /// it hands to clue matching, agree with the judge as first written (words
    /// lower-cased into new strings, concepts compared as strings, names stemmed
    /// per message, every message's idioms rewritten) on every text of the
    /// corpus, in the scopes of every eighth bundled scenario.
    #[test]
    fn judge_message_agrees_with_its_first_form() {
        fn addressed(s: &Scope, mut msg: BTreeSet<String>, addressee: &str) -> BTreeSet<String> {
            let parts: Vec<String> = addressee
                .split_whitespace()
                .filter_map(|w| concepts(w).into_iter().next())
                .collect();
            let Some(first) = parts.first() else {
                return msg;
            };
            let other_named = s.shared_first.get(first).is_some_and(|people| {
                people.iter().any(|p| {
                    p != addressee && {
                        let c = concepts(p);
                        c.len() > 1 && c.is_subset(&msg)
                    }
                })
            });
            if !other_named {
                msg.remove(first);
            }
            msg
        }
        fn numbered(s: &Scope, text: &str) -> Vec<u32> {
            tokens(text)
                .iter()
                .map(|w| s.words.get(w).copied().unwrap_or(UNKNOWN))
                .collect()
        }
        fn words(s: &Scope, msg: &BTreeSet<String>) -> Result<(), Unspecific> {
            if msg.len() > MAX_CONCEPTS {
                return Err(Unspecific::Length(msg.len()));
            }
            for o in &s.objectives {
                if msg.intersection(o).count() * 100 >= o.len() * FORWARDED_SHARE {
                    return Err(Unspecific::Forwarded);
                }
            }
            let matched: Vec<&(String, Trigger, BTreeSet<String>)> =
                s.clues.iter().filter(|(_, t, _)| t.matches(msg)).collect();
            let cues: Vec<&String> = msg.intersection(&s.cues).collect();
            let extra = matched
                .iter()
                .map(|(_, _, v)| cues.iter().filter(|c| !v.contains(c.as_str())).count())
                .min()
                .unwrap_or(cues.len());
            if extra >= 3 && matched.len() > 1 {
                let tasks: BTreeSet<&str> = matched
                    .iter()
                    .filter(|(_, t, _)| t.matches_strongly(msg))
                    .map(|(k, _, _)| k.as_str())
                    .collect();
                if tasks.len() > 1 {
                    return Err(Unspecific::Subjects(tasks.len()));
                }
            }
            if extra > MAX_EXTRA_CUES {
                return Err(Unspecific::Cues(extra));
            }
            Ok(())
        }
        fn reference(
            s: &Scope,
            text: &str,
            addressee: Option<&str>,
            earlier: Option<&str>,
        ) -> Result<BTreeSet<String>, Unspecific> {
            if keyword_list(text) {
                return Err(Unspecific::KeywordList);
            }
            let w = numbered(s, text);
            if s.copies(&w) {
                return Err(Unspecific::Copied);
            }
            if let Some(e) = earlier {
                let mut joined = numbered(s, e);
                let mine = joined.len();
                joined.extend_from_slice(&w);
                if mine > 0 && s.copies(&joined) && !s.copies(&joined[..mine]) {
                    return Err(Unspecific::Copied);
                }
            }
            let msg = match addressee {
                Some(a) => addressed(s, super::super::tests::old::concepts(text), a),
                None => super::super::tests::old::concepts(text),
            };
            words(s, &msg)?;
            if vague_rewritten(text) {
                return Err(Unspecific::Vague);
            }
            Ok(msg)
        }
        let c = super::super::tests::scenario_corpus();
        let mut texts: Vec<String> = c.texts.clone();
        texts.extend(corpus());
        // Questions as agents write them, from every trigger: a greeting, the
        // trigger's first alternatives, a question mark.
        let n = texts.len();
        for i in (0..n).step_by(7) {
            texts.push(format!(
                "Hi, {} and also {}?",
                texts[i],
                texts[(i * 13 + 5) % n]
            ));
        }
        let mut verdicts = BTreeSet::new();
        let mut checked = 0usize;
        for (me, sc) in c.scenarios.iter().enumerate() {
            let triggers: Vec<(Option<&str>, Trigger)> = sc
                .company
                .people
                .iter()
                .flat_map(|p| &p.clues)
                .map(|c| (c.task.as_deref(), Trigger::new(&c.trigger)))
                .collect();
            let scope = Scope::new(
                triggers.iter().map(|(k, t)| (*k, t)),
                sc.tasks.iter().map(|t| t.objective.as_str()),
                sc.company.people.iter().map(|p| p.name.as_str()),
            );
            let names: Vec<&str> = sc.company.people.iter().map(|p| p.name.as_str()).collect();
            // Each scenario judges a slice of the corpus, so that every text is
            // judged somewhere and the test stays quick.
            let k = c.scenarios.len().max(1);
            for (i, t) in texts.iter().enumerate().filter(|(i, _)| i % k == me) {
                let addressee = (i % 3 != 0).then(|| names[i % names.len()]);
                let earlier = (i % 4 == 1).then(|| texts[(i + 1) % texts.len()].as_str());
                let want = reference(&scope, t, addressee, earlier);
                let got = scope.judge_message_concepts(t, addressee, earlier);
                verdicts.insert(
                    format!("{:?}", want.as_ref().map(|_| ()))
                        .chars()
                        .take(12)
                        .collect::<String>(),
                );
                assert_eq!(got, want, "{t:?} to {addressee:?} after {earlier:?}");
                assert_eq!(vague(t), vague_rewritten(t), "{t:?}");
                checked += 1;
            }
        }
        assert!(checked > 10_000, "{checked} messages judged");
        assert!(verdicts.len() >= 5, "several verdicts occur: {verdicts:?}");
    }

    #[test]
    fn a_forwarded_task_is_not() {
        let (s, _) = scope();
        let fwd = "Fix the broken chart links of the onboarding article: each old chart id must be replaced by its new id. OLD123456";
        assert_eq!(s.judge(fwd), Err(Unspecific::Forwarded));
    }

    #[test]
    fn a_wall_of_text_is_not() {
        let (s, _) = scope();
        // A sentence (it has glue words) about sixty different things.
        let text: String = (0..60)
            .map(|i| format!("the thing{i}x is in the room{i}y. "))
            .collect();
        assert!(matches!(s.judge(&text), Err(Unspecific::Length(_))));
    }

    /// In a direct message the addressee's first name is a greeting: a first name
    /// they share asks nothing back and points at nobody else (issue 25: "Hi Uma,
    /// ..." was asked back whatever the question, and once disclosed the other
    /// Uma's status).
    #[test]
    fn a_greeting_by_a_shared_first_name_means_the_addressee() {
        let (s, _) = scope();
        let about_lund = t(&[&["Anna Lund", "Anna"], &["free"]]);
        let about_omar = t(&[&["Omar Diaz", "Omar"], &["free"]]);
        let q = "Hi Anna, is Omar free at 13:00?";
        // Judged as if sent to a group, the bare name is ambiguous.
        assert!(matches!(s.who(&concepts(q), &about_lund), Named::Which(_)));
        let to_berg = s.addressed(concepts(q), "Anna Berg");
        assert!(!about_lund.matches(&to_berg), "not about the other Anna");
        assert!(about_omar.matches(&to_berg));
        assert_eq!(s.who(&to_berg, &about_omar), Named::Clear);
        // The other Anna named in full is still the other Anna.
        let q = "Hi Anna, is Anna Lund free at 13:00?";
        let to_berg = s.addressed(concepts(q), "Anna Berg");
        assert!(about_lund.matches(&to_berg));
        assert_eq!(s.who(&to_berg, &about_lund), Named::Clear);
        // Somebody else's surname is left alone.
        let to_omar = s.addressed(concepts("Hi Omar, is Anna Lund free?"), "Omar Lund");
        assert_eq!(s.who(&to_omar, &about_lund), Named::Clear);
    }

    #[test]
    fn vague_asks_are_told_apart_from_questions() {
        for q in [
            "I'm working on a sales analysis. Any advice?",
            "Hi Dana, I've been asked to look at the sales numbers. Can you help?",
            "Hi Dana, any tips for the sales report?",
            "Hi Dana, anything I should know about the transaction review?",
            "Hello Dana! Can you help me with the team event?",
            "Hi Dana, could you give me a hand with the sales analysis?",
        ] {
            assert!(vague(q), "{q}");
        }
        for q in [
            "Hi Dana, where is the sales analysis handbook?",
            "Hi Dana, can you help me find the sales handbook?",
            "Hi Dana, there's an incident on pricing-cache-09: requests are failing. Can you help?",
            "Hi Dana, I think the site is down. Any advice?",
            "Any advice on how to compute total sales?",
            "Hi Dana, are you free at 15:00? Any thoughts welcome.",
            "I'm working on the sales analysis. Is there an official method?",
        ] {
            assert!(!vague(q), "{q}");
        }
        let (s, _) = scope();
        assert_eq!(
            s.judge("I'm working on a sales analysis. Any advice?"),
            Err(Unspecific::Vague)
        );
    }

    /// A sentence of an objective, sent alone or in two pieces, is the task
    /// relayed (issue 25: relaying the objective a sentence at a time passed).
    #[test]
    fn objective_sentences_relayed_are_copies() {
        let kb = t(&[&["chart"], &["OLD123456"]]);
        let objective = "Please book a meeting titled \"Budget review\" today from 15:00 to 17:00 for every member of the Sales department. Before booking, ask each of them whether they can attend.";
        let s = Scope::new([(Some("task/kb"), &kb)], [objective], ["Anna Berg"]);
        for sentence in [
            "Please book a meeting titled \"Budget review\" today from 15:00 to 17:00 for every member of the Sales department.",
            "Before booking, ask each of them whether they can attend.",
            "Hi Anna, before booking, ask each of them whether they can attend",
        ] {
            assert_eq!(s.judge(sentence), Err(Unspecific::Copied), "{sentence}");
        }
        let (a, b) = (
            "Please book a meeting titled \"Budget review\" today",
            "from 15:00 to 17:00 for every member of the Sales department.",
        );
        assert_eq!(s.judge(a), Ok(()));
        assert_eq!(s.judge_message(b, None, Some(a)), Err(Unspecific::Copied));
        // A question in its own words about the same meeting is a question.
        assert_eq!(
            s.judge("Hi Anna, are you free for the Budget review from 15:00 to 17:00?"),
            Ok(())
        );
    }

    /// A finding names things with hyphens and identifiers; each is one word, so
    /// the report reads as the sentence it is (issue 25: "The front-end logs show
    /// X timing out while rendering Y" was taken for a keyword list).
    #[test]
    fn hyphenated_names_are_one_word_each() {
        let q = "Hi Florin, the front-end logs show pricing-cache-09 timing out while rendering the product pages, and checkout is slow. Can you fix it?";
        assert!(!keyword_list(q));
        assert!(keyword_list(
            "front-end logs show pricing-cache-09 timing out while rendering product pages checkout slow fix"
        ));
    }

    /// Asked by someone who knows about only one Anna, "Anna" means that Anna;
    /// by someone who knows about both, it still needs asking.
    #[test]
    fn a_shared_first_name_means_the_one_the_colleague_knows() {
        let (s, _) = scope();
        let about_berg = t(&[&["Anna Berg", "Anna"], &["free"]]);
        let about_lund = t(&[&["Anna Lund", "Anna"], &["free"]]);
        let about_omar = t(&[&["Omar Diaz", "Omar"], &["free"]]);
        let q = concepts("Is Anna free at 13:00?");
        assert_eq!(
            s.who_for(&q, &about_berg, &[&about_berg, &about_omar]),
            Named::Clear
        );
        assert!(matches!(
            s.who_for(&q, &about_berg, &[&about_berg, &about_lund]),
            Named::Which(_)
        ));
        assert_eq!(s.who_for(&q, &about_berg, &[]), s.who(&q, &about_berg));
        // The other Anna named in full is still the other Anna.
        let q = concepts("Is Anna Lund free at 13:00?");
        assert_eq!(s.who_for(&q, &about_berg, &[&about_berg]), Named::Other);
    }

    #[test]
    fn a_shared_first_name_asks_which_one() {
        let (s, _) = scope();
        let about_anna = t(&[&["Anna Berg", "Anna"], &["free"]]);
        assert_eq!(
            s.who(&concepts("Is Anna free at 13:00?"), &about_anna),
            Named::Which("Which Anna do you mean: Anna Berg or Anna Lund?".into())
        );
        assert_eq!(
            s.who(&concepts("Is Anna Berg free at 13:00?"), &about_anna),
            Named::Clear
        );
        assert_eq!(
            s.who(&concepts("Is Anna Lund free at 13:00?"), &about_anna),
            Named::Other
        );
        let about_omar = t(&[&["Omar Diaz", "Omar"], &["free"]]);
        assert_eq!(s.who(&concepts("Is Omar free?"), &about_omar), Named::Clear);
    }
}
