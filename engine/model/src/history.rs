//! History handling: keeping the conversation within a token budget.
//!
//! Tokens are *estimated*, not counted: a message costs its characters (text, tool
//! names and arguments) divided by four, rounded up, plus four for framing, and each
//! image a flat [`IMAGE_TOKENS`]. No tokenizer fits every provider, and the estimate
//! is only used to decide when to compress, so a cheap, stable rule is the right one.
//!
//! [`SummaryPolicy`] compresses once the estimate passes its threshold: it keeps the
//! head (the system prompt and the opening message of the day) and the last
//! `keep_turns` assistant turns (fewer, down to one, when the history has fewer)
//! with everything after them, and replaces the span
//! in between with one user message holding a summary the model writes. The span
//! always ends just before an assistant message, so a tool call is never separated
//! from its result.

use std::ops::Range;

use super::message::{Message, Role};

/// Estimated tokens of one image.
pub const IMAGE_TOKENS: usize = 800;

/// Estimated tokens of a message.
pub fn message_tokens(m: &Message) -> usize {
    let mut chars = m.text_content().chars().count();
    for c in &m.tool_calls {
        chars += c.function.name.len() + c.function.arguments.chars().count() + c.id.len();
    }
    chars.div_ceil(4) + 4 + m.images() * IMAGE_TOKENS
}

/// Estimated tokens of a conversation.
pub fn estimate_tokens(msgs: &[Message]) -> usize {
    msgs.iter().map(message_tokens).sum()
}

/// Decides which span of the history to replace by a summary.
pub trait HistoryPolicy: Send + Sync {
    /// The span to summarise now, if any.
    fn compress(&self, msgs: &[Message]) -> Option<Range<usize>>;
}

/// Summarise the middle once the estimate passes a threshold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SummaryPolicy {
    /// Estimated tokens above which to compress.
    pub threshold: usize,
    /// Assistant turns kept verbatim at the end.
    pub keep_turns: usize,
    /// Messages kept at the start (system prompt, opening message).
    pub head: usize,
}

impl Default for SummaryPolicy {
    fn default() -> Self {
        SummaryPolicy {
            threshold: 60_000,
            keep_turns: 4,
            head: 2,
        }
    }
}

impl HistoryPolicy for SummaryPolicy {
    fn compress(&self, msgs: &[Message]) -> Option<Range<usize>> {
        if estimate_tokens(msgs) <= self.threshold {
            return None;
        }
        let assistants: Vec<usize> = msgs
            .iter()
            .enumerate()
            .filter(|(_, m)| m.role == Role::Assistant)
            .map(|(i, _)| i)
            .collect();
        // Keep `keep_turns` turns if the history has them, else as many as leave
        // something to summarise: a few huge turns must not escape the limit.
        (1..=self.keep_turns.max(1))
            .rev()
            .filter_map(|k| assistants.iter().rev().nth(k - 1))
            .find(|&&end| end > self.head)
            .map(|&end| self.head..end)
    }
}

/// The conversation as plain text for a summary or reflection prompt. Each tool
/// result and message is cut to `per_item` characters; if the whole is longer than
/// `max_chars`, its beginning is dropped (the latest events matter most).
pub fn transcript(msgs: &[Message], per_item: usize, max_chars: usize) -> String {
    let cut = |s: &str| -> String {
        if s.chars().count() > per_item {
            let head: String = s.chars().take(per_item).collect();
            format!("{head} [...]")
        } else {
            s.to_owned()
        }
    };
    let mut out = Vec::new();
    for m in msgs {
        let text = m.text_content();
        match m.role {
            Role::System => {}
            Role::User => out.push(format!("ENVIRONMENT: {}", cut(&text))),
            Role::Assistant => {
                if !text.trim().is_empty() {
                    out.push(format!("YOU: {}", cut(&text)));
                }
                for c in &m.tool_calls {
                    out.push(format!(
                        "YOU CALLED {}({})",
                        c.function.name,
                        cut(&c.function.arguments)
                    ));
                }
            }
            Role::Tool => out.push(format!("RESULT: {}", cut(&text))),
        }
    }
    let all = out.join("\n");
    let n = all.chars().count();
    if n <= max_chars {
        return all;
    }
    let tail: String = all.chars().skip(n - max_chars).collect();
    format!("[... earlier part left out ...]\n{tail}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::{WireCall, WireFunction};

    fn assistant(id: &str) -> Message {
        Message {
            role: Role::Assistant,
            content: None,
            tool_calls: vec![WireCall {
                id: id.into(),
                kind: "function".into(),
                function: WireFunction {
                    name: "read_file".into(),
                    arguments: "{}".into(),
                },
            }],
            tool_call_id: None,
        }
    }

    fn convo(turns: usize) -> Vec<Message> {
        let mut v = vec![
            Message::text(Role::System, "s".repeat(400)),
            Message::text(Role::User, "task"),
        ];
        for i in 0..turns {
            v.push(assistant(&format!("c{i}")));
            v.push(Message::tool(&format!("c{i}"), "x".repeat(400)));
            v.push(Message::text(Role::User, "status"));
        }
        v
    }

    #[test]
    fn estimate_is_chars_over_four() {
        assert_eq!(
            message_tokens(&Message::text(Role::User, "abcdefgh")),
            2 + 4
        );
        assert_eq!(
            message_tokens(&Message::text(Role::User, "abcdefghi")),
            3 + 4
        );
    }

    #[test]
    fn compresses_the_middle_only_past_the_threshold() {
        let msgs = convo(10);
        let total = estimate_tokens(&msgs);
        let p = SummaryPolicy {
            threshold: total,
            keep_turns: 3,
            head: 2,
        };
        assert_eq!(p.compress(&msgs), None);
        let p = SummaryPolicy {
            threshold: total - 1,
            ..p
        };
        let r = p.compress(&msgs).unwrap();
        assert_eq!(r.start, 2);
        // The span ends just before the third-last assistant message.
        assert_eq!(msgs[r.end].role, Role::Assistant);
        assert_eq!(msgs.len() - r.end, 9);
        // Fewer turns than `keep_turns`: the older ones are summarised all the same.
        let p = SummaryPolicy { threshold: 0, ..p };
        let two = convo(2);
        let r = p.compress(&two).unwrap();
        assert_eq!(
            (r.start, two.len() - r.end),
            (2, 3),
            "the last turn is kept"
        );
        // One turn leaves nothing to compress.
        assert_eq!(p.compress(&convo(1)), None);
    }

    #[test]
    fn transcript_cuts_and_keeps_the_end() {
        let msgs = convo(3);
        let t = transcript(&msgs, 10, 10_000);
        assert!(t.contains("YOU CALLED read_file({})"));
        assert!(t.contains("RESULT: xxxxxxxxxx [...]"));
        let short = transcript(&msgs, 10, 50);
        assert!(short.starts_with("[... earlier part left out ...]"));
        assert!(short.ends_with("ENVIRONMENT: status"));
    }
}
