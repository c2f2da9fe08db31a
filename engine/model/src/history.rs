//! History handling: keeping the conversation within a token budget.
//!
//! Tokens are *estimated*, not counted: a message costs its characters (text, tool
//! names and arguments) divided by four, rounded up, plus four for framing, and each
//! image a flat [`IMAGE_TOKENS`]; the tool catalogue sent with each turn costs its
//! JSON's characters divided by four. No tokenizer fits every provider, so the
//! estimate is *calibrated* against what the server counts: after each call the
//! agent compares the `usage.prompt_tokens` the server reported with the estimate
//! of the request it sent ([`Sizing::observe`]), and scales later estimates by
//! that ratio (raised at once when the server counts more, lowered halfway when it
//! counts less, so a JSON-heavy history that tokenizes densely is never
//! under-counted twice).
//!
//! [`SummaryPolicy`] compresses once the calibrated size of the next request (the
//! conversation plus the tool catalogue) passes its limit: the lower of
//! `--history-tokens` and, when the model's context window is known, the window
//! less room for the reply. It then compresses down to a *low-water mark*
//! ([`LOW_WATER`] of the limit), not just under the limit, so a small window is
//! not summarised before every turn (each summary is a call, and it throws away
//! the server's prompt cache). It keeps the head (the system prompt and the
//! opening message of the day) and as many of the last `keep_turns` assistant
//! turns (with everything after them) as fit under the mark, at least one, and
//! replaces the span in between with one user message holding a summary the model
//! writes. The span always ends just before an assistant message, so a tool call is
//! never separated from its result.

use std::ops::Range;

use super::message::{Message, Role};

/// Estimated tokens of one image.
pub const IMAGE_TOKENS: usize = 800;

/// The share of the limit a compression brings the history down to.
pub const LOW_WATER: f64 = 0.6;

/// Estimated tokens a summary message takes, reserved when choosing what to keep.
pub const SUMMARY_TOKENS: usize = 400;

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

/// Estimated tokens of a tool catalogue (its JSON text).
pub fn catalogue_tokens(tools_json: &str) -> usize {
    tools_json.len().div_ceil(4)
}

/// Estimated tokens of a request: its messages and its tool catalogue.
pub fn request_tokens(msgs: &[Message], tools_json: Option<&str>) -> usize {
    estimate_tokens(msgs) + tools_json.map_or(0, catalogue_tokens)
}

/// How estimates relate to the server's counts, and what the next turn request
/// adds besides the conversation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sizing {
    /// Server tokens per estimated token (1 until the server has counted).
    pub ratio: f64,
    /// Estimated tokens of the tool catalogue sent with every turn.
    pub catalogue: usize,
}

impl Sizing {
    /// No observation yet.
    pub fn new(catalogue: usize) -> Sizing {
        Sizing {
            ratio: 1.0,
            catalogue,
        }
    }

    /// Learns from one response: the server counted `prompt_tokens` for a request
    /// estimated at `estimate`. Ignored when either is zero (a server that reports
    /// no usage). The ratio follows a higher count at once and a lower one halfway.
    pub fn observe(&mut self, estimate: usize, prompt_tokens: u64) {
        if estimate == 0 || prompt_tokens == 0 {
            return;
        }
        let seen = (prompt_tokens as f64 / estimate as f64).clamp(0.25, 8.0);
        self.ratio = if seen >= self.ratio {
            seen
        } else {
            (self.ratio + seen) / 2.0
        };
    }

    /// The calibrated size of a turn request holding `msgs`.
    pub fn turn_tokens(&self, msgs: &[Message]) -> usize {
        self.scaled(estimate_tokens(msgs) + self.catalogue)
    }

    /// `estimate` in server tokens.
    pub fn scaled(&self, estimate: usize) -> usize {
        (estimate as f64 * self.ratio).ceil() as usize
    }

    /// Estimated tokens that make `tokens` server tokens.
    pub fn unscaled(&self, tokens: usize) -> usize {
        (tokens as f64 / self.ratio).floor() as usize
    }
}

/// Decides which span of the history to replace by a summary.
pub trait HistoryPolicy: Send + Sync {
    /// The span to summarise now, if any, for a turn request of `msgs` sized by
    /// `sizing`.
    fn compress(&self, msgs: &[Message], sizing: &Sizing) -> Option<Range<usize>>;
    /// The most server tokens a request may hold (for the summary's own request).
    fn limit(&self) -> usize;
}

/// Summarise the middle once the calibrated size passes the limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SummaryPolicy {
    /// Calibrated tokens above which to compress (`--history-tokens`).
    pub threshold: usize,
    /// The model's context window less room for the reply, when known: the
    /// limit is then the lower of the two.
    pub window: Option<usize>,
    /// Assistant turns kept verbatim at the end, at most.
    pub keep_turns: usize,
    /// Messages kept at the start (system prompt, opening message).
    pub head: usize,
}

impl Default for SummaryPolicy {
    fn default() -> Self {
        SummaryPolicy {
            threshold: 60_000,
            window: None,
            keep_turns: 4,
            head: 2,
        }
    }
}

/// The prompt room of a context window of `context` tokens whose replies may
/// take `max_tokens`: the window less the reply room (at most a quarter of it)
/// and a small margin for the chat template's framing.
pub fn prompt_room(context: u32, max_tokens: Option<u32>) -> usize {
    let context = context as usize;
    let reply = max_tokens.map_or(context / 4, |m| (m as usize).min(context / 4));
    context.saturating_sub(reply).saturating_sub(context / 50)
}

impl HistoryPolicy for SummaryPolicy {
    fn limit(&self) -> usize {
        self.window
            .map_or(self.threshold, |w| w.min(self.threshold))
    }

    fn compress(&self, msgs: &[Message], sizing: &Sizing) -> Option<Range<usize>> {
        let limit = self.limit();
        if sizing.turn_tokens(msgs) <= limit {
            return None;
        }
        let low = (limit as f64 * LOW_WATER) as usize;
        let assistants: Vec<usize> = msgs
            .iter()
            .enumerate()
            .filter(|(_, m)| m.role == Role::Assistant)
            .map(|(i, _)| i)
            .collect();
        let head = estimate_tokens(&msgs[..self.head.min(msgs.len())]) + SUMMARY_TOKENS;
        // Spans ending before the k-th last assistant turn, from the most kept to
        // the least; each must leave something to summarise.
        let spans: Vec<Range<usize>> = (1..=self.keep_turns.max(1))
            .rev()
            .filter_map(|k| assistants.iter().rev().nth(k - 1))
            .filter(|&&end| end > self.head)
            .map(|&end| self.head..end)
            .collect();
        // The most kept that lands under the low-water mark; else the least kept
        // (a few huge turns must not escape the limit).
        spans
            .iter()
            .find(|r| {
                sizing.scaled(head + estimate_tokens(&msgs[r.end..]) + sizing.catalogue) <= low
            })
            .or(spans.last())
            .cloned()
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
        let none = Sizing::new(0);
        let p = SummaryPolicy {
            threshold: total,
            window: None,
            keep_turns: 3,
            head: 2,
        };
        assert_eq!(p.compress(&msgs, &none), None);
        let p = SummaryPolicy {
            threshold: total - 1,
            ..p
        };
        let r = p.compress(&msgs, &none).unwrap();
        assert_eq!(r.start, 2);
        // The span ends just before an assistant message. Of the three turns it may
        // keep, two fit under the low-water mark with the head and a summary (turns
        // are 118 estimated tokens, the head 109, a summary 400, the mark 60% of 1288).
        assert_eq!(msgs[r.end].role, Role::Assistant);
        assert_eq!(msgs.len() - r.end, 6);
        // With room, it keeps all three.
        let roomy = SummaryPolicy {
            head: 2,
            threshold: 2_000,
            window: None,
            keep_turns: 3,
        };
        let long = convo(40);
        let r = roomy.compress(&long, &none).unwrap();
        assert_eq!(long.len() - r.end, 9);
        // Fewer turns than `keep_turns`: the older ones are summarised all the same.
        let p = SummaryPolicy { threshold: 0, ..p };
        let two = convo(2);
        let r = p.compress(&two, &none).unwrap();
        assert_eq!(
            (r.start, two.len() - r.end),
            (2, 3),
            "the last turn is kept"
        );
        // One turn leaves nothing to compress.
        assert_eq!(p.compress(&convo(1), &none), None);
    }

    #[test]
    fn the_catalogue_and_the_servers_count_are_part_of_the_size() {
        let msgs = convo(6);
        let est = estimate_tokens(&msgs);
        let p = SummaryPolicy {
            threshold: usize::MAX,
            window: Some(est + 50),
            keep_turns: 4,
            head: 2,
        };
        assert_eq!(p.compress(&msgs, &Sizing::new(0)), None, "fits alone");
        assert!(
            p.compress(&msgs, &Sizing::new(100)).is_some(),
            "not with a catalogue"
        );
        // A server that counts 30% more than the estimate.
        let mut s = Sizing::new(0);
        s.observe(1000, 1300);
        assert!((s.ratio - 1.3).abs() < 1e-9);
        assert!(p.compress(&msgs, &s).is_some());
        // A lower count lowers the ratio halfway only.
        s.observe(1000, 900);
        assert!((s.ratio - 1.1).abs() < 1e-9);
        s.observe(0, 900);
        s.observe(1000, 0);
        assert!((s.ratio - 1.1).abs() < 1e-9, "no usage, no change");
    }

    #[test]
    fn compression_goes_down_to_the_low_water_mark_so_it_does_not_repeat() {
        // Each turn is about 100 + 4 + 7 + 4 + ... estimated tokens.
        let msgs = convo(12);
        let limit = estimate_tokens(&msgs) - 1;
        let p = SummaryPolicy {
            threshold: limit,
            window: None,
            keep_turns: 8,
            head: 2,
        };
        let s = Sizing::new(0);
        let r = p.compress(&msgs, &s).unwrap();
        let mut after: Vec<Message> = msgs[..r.start].to_vec();
        after.push(Message::text(
            Role::User,
            "s".repeat(4 * SUMMARY_TOKENS - 16),
        ));
        after.extend_from_slice(&msgs[r.end..]);
        let size = s.turn_tokens(&after);
        assert!(
            size <= (limit as f64 * LOW_WATER) as usize,
            "{size} of {limit}"
        );
        // Growth by one turn does not bring the next compression.
        let mut grown = after.clone();
        grown.extend_from_slice(&msgs[msgs.len() - 3..]);
        assert_eq!(p.compress(&grown, &s), None);
    }

    #[test]
    fn prompt_room_leaves_room_for_the_reply() {
        assert_eq!(prompt_room(8192, Some(2048)), 8192 - 2048 - 163);
        assert_eq!(prompt_room(8192, Some(100_000)), 8192 - 2048 - 163);
        assert_eq!(prompt_room(8192, Some(512)), 8192 - 512 - 163);
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
