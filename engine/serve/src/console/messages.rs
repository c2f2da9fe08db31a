//! A model-backed run's conversation as its model saw it, each message once.
//!
//! Every turn request resends the conversation so far (recorded compactly as a
//! `request_delta`, see `tbsim_engine::trajectory`); the page wants it once: the
//! first request's messages, then each later request's new messages (those after
//! the part it kept), then each reply, where the next request's copy of that reply
//! is dropped. Text is Markdown, rendered by pulldown-cmark and cleaned by ammonia
//! (raw HTML in a reply is text, never markup), so the page may insert it as HTML.

use serde::Serialize;
use serde_json::{Value, json};

/// One message of the conversation.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Message {
    /// The decision the call that first carried it leads to.
    pub step: u64,
    /// `turn`, `summary` or `reflection`: the call it came with.
    pub purpose: String,
    /// `system`, `user`, `assistant` or `tool`.
    pub role: String,
    /// Whether it is a reply the model gave (else a message it was sent).
    pub reply: bool,
    /// Its text (parts joined), as written.
    pub text: String,
    /// Its text rendered from Markdown and sanitised.
    pub html: String,
    /// The reasoning a reply carried, if the API returned it, rendered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning_html: Option<String>,
    /// Tool calls of an assistant message: `{id, name, arguments}`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<Value>,
    /// A tool result's call id and tool name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// A tool result's tool name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// How many images its content had (shown as a note).
    #[serde(skip_serializing_if = "is_zero")]
    pub images: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// Markdown as sanitised HTML: CommonMark with tables and strikethrough; raw HTML
/// is escaped by the renderer's input being cleaned after (ammonia keeps only a
/// safe subset: no scripts, no event handlers, no styles, links get `rel=noopener`).
pub fn render(text: &str) -> String {
    use pulldown_cmark::{Event, Options, Parser, html};
    let opts = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH;
    // Raw HTML in a model's text is shown as text: it is data, not page markup.
    let events = Parser::new_ext(text, opts).map(|e| match e {
        Event::Html(s) | Event::InlineHtml(s) => Event::Text(s),
        other => other,
    });
    let mut out = String::with_capacity(text.len() + text.len() / 4);
    html::push_html(&mut out, events);
    ammonia::Builder::default()
        .link_rel(Some("noopener noreferrer nofollow"))
        .url_schemes(["http", "https", "mailto"].into_iter().collect())
        .clean(&out)
        .to_string()
}

/// A message content's text (a string, or the text parts joined) and its images.
fn content_text(c: &Value) -> (String, usize) {
    match c {
        Value::String(s) => (s.clone(), 0),
        Value::Array(parts) => {
            let mut text = Vec::new();
            let mut images = 0;
            for p in parts {
                match p.get("type").and_then(Value::as_str) {
                    Some("text") => text.push(p["text"].as_str().unwrap_or("").to_owned()),
                    Some("image_url") | Some("image") => images += 1,
                    _ => text.push(p.to_string()),
                }
            }
            (text.join("\n\n"), images)
        }
        Value::Null => (String::new(), 0),
        other => (other.to_string(), 0),
    }
}

fn calls_of(m: &Value) -> Vec<Value> {
    m.get("tool_calls")
        .and_then(Value::as_array)
        .map(|calls| {
            calls
                .iter()
                .map(|c| {
                    let f = c.get("function").unwrap_or(c);
                    serde_json::json!({
                        "id": c.get("id").cloned().unwrap_or(Value::Null),
                        "name": f.get("name").cloned().unwrap_or(Value::Null),
                        "arguments": f.get("arguments").cloned().unwrap_or(Value::Null),
                    })
                })
                .collect()
        })
        .unwrap_or_default()
}

fn message(step: u64, purpose: &str, m: &Value, reply: bool) -> Message {
    let (text, images) = content_text(m.get("content").unwrap_or(&Value::Null));
    let reasoning = m
        .get("reasoning_content")
        .or_else(|| m.get("reasoning"))
        .and_then(Value::as_str)
        .filter(|r| !r.trim().is_empty());
    Message {
        step,
        purpose: purpose.to_owned(),
        role: m
            .get("role")
            .and_then(Value::as_str)
            .unwrap_or(if reply { "assistant" } else { "?" })
            .to_owned(),
        reply,
        html: render(&text),
        text,
        reasoning_html: reasoning.map(render),
        tool_calls: calls_of(m),
        tool_call_id: m
            .get("tool_call_id")
            .and_then(Value::as_str)
            .map(str::to_owned),
        name: m.get("name").and_then(Value::as_str).map(str::to_owned),
        images,
    }
}

/// Whether `sent` (a message of a request) is the copy of `reply`: the same role,
/// text and tool call names and arguments.
fn same_as(sent: &Value, reply: &Message) -> bool {
    let (text, _) = content_text(sent.get("content").unwrap_or(&Value::Null));
    sent.get("role").and_then(Value::as_str) == Some("assistant")
        && text.trim() == reply.text.trim()
        && calls_of(sent)
            .iter()
            .map(|c| (c["name"].clone(), c["arguments"].clone()))
            .eq(reply
                .tool_calls
                .iter()
                .map(|c| (c["name"].clone(), c["arguments"].clone())))
}

/// The reply message of a response body, if it has one.
pub fn reply_of(response: &Value) -> Option<&Value> {
    response
        .get("choices")
        .and_then(Value::as_array)
        .and_then(|c| c.first())
        .and_then(|c| c.get("message"))
}

/// A model line's reply, rendered (`reply: {html, reasoning_html?}`), so the page
/// can show the model's words on its decision row; a guidance line's text rendered
/// (`text_html`).
pub fn with_reply(line: &mut Value) {
    // Guidance a person wrote is Markdown too (`text_html`).
    if line.get("type").and_then(Value::as_str) == Some("guidance") {
        if let Some(t) = line.get("text").and_then(Value::as_str).map(render)
            && let Some(o) = line.as_object_mut()
        {
            o.insert("text_html".into(), Value::from(t));
        }
        return;
    }
    if line.get("type").and_then(Value::as_str) != Some("model") {
        return;
    }
    let Some(m) = reply_of(line.get("response").unwrap_or(&Value::Null)) else {
        return;
    };
    let text = match m.get("content") {
        Some(Value::String(s)) => s.clone(),
        _ => String::new(),
    };
    let reasoning = m
        .get("reasoning_content")
        .or_else(|| m.get("reasoning"))
        .and_then(Value::as_str)
        .filter(|r| !r.trim().is_empty())
        .map(render);
    if text.trim().is_empty() && reasoning.is_none() {
        return;
    }
    if let Some(o) = line.as_object_mut() {
        o.insert(
            "reply".into(),
            json!({ "html": render(&text), "reasoning_html": reasoning }),
        );
    }
}

/// The conversation of the model lines among `lines` (trajectory lines in order,
/// compact or full requests): each message once, in the order the model saw them.
pub fn conversation(lines: &[Value]) -> Vec<Message> {
    let mut out: Vec<Message> = Vec::new();
    // The previous turn request's messages (to expand a delta against, and to find
    // how much of a full request is new).
    let mut prev: Vec<Value> = Vec::new();
    let mut last_reply: Option<Message> = None;
    for l in lines {
        if l.get("type").and_then(Value::as_str) != Some("model") {
            continue;
        }
        let step = l.get("step").and_then(Value::as_u64).unwrap_or(0);
        let purpose = l.get("purpose").and_then(Value::as_str).unwrap_or("turn");
        let (full, new_from): (Vec<Value>, usize) = if let Some(d) = l.get("request_delta") {
            let keep =
                (d.get("keep").and_then(Value::as_u64).unwrap_or(0) as usize).min(prev.len());
            let added = d
                .get("messages")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            let mut full = prev[..keep].to_vec();
            full.extend(added);
            (full, keep)
        } else if let Some(r) = l.get("request") {
            let msgs = r
                .get("messages")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            // A full request: what it shares with the previous turn's is not new.
            let common = if purpose == "turn" {
                msgs.iter().zip(&prev).take_while(|(a, b)| a == b).count()
            } else {
                0
            };
            (msgs, common)
        } else {
            (Vec::new(), 0)
        };
        let mut fresh = full[new_from..].iter().peekable();
        if let (Some(first), Some(r)) = (fresh.peek(), &last_reply)
            && same_as(first, r)
        {
            fresh.next();
        }
        for m in fresh {
            out.push(message(step, purpose, m, false));
        }
        if purpose == "turn" {
            prev = full;
        }
        last_reply = reply_of(l.get("response").unwrap_or(&Value::Null)).map(|m| {
            let r = message(step, purpose, m, true);
            out.push(r.clone());
            r
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_is_rendered_and_raw_html_is_text() {
        let h = render(
            "**bold** and `code`\n\n- a\n- b\n\n<script>alert(1)</script><img src=x onerror=alert(1)>\n\n[x](javascript:alert(1)) [y](https://example.org)",
        );
        assert!(h.contains("<strong>bold</strong>"), "{h}");
        assert!(h.contains("<code>code</code>"), "{h}");
        assert!(h.contains("<li>a</li>"), "{h}");
        assert!(!h.contains("<script"), "{h}");
        assert!(!h.contains("<img"), "{h}");
        assert!(!h.contains("href=\"javascript"), "{h}");
        assert!(h.contains("href=\"https://example.org\""), "{h}");
        assert!(h.contains("&lt;script&gt;"), "{h}");
    }

    fn reply(text: &str, call: Option<(&str, &str)>) -> Value {
        let calls = call.map(|(n, a)| {
            json!([{"id": "c", "type": "function", "function": {"name": n, "arguments": a}}])
        });
        json!({"choices": [{"message": {"role": "assistant", "content": text, "tool_calls": calls.clone().unwrap_or(json!([]))}}]})
    }

    #[test]
    fn each_message_once_across_resent_requests() {
        let sys = json!({"role": "system", "content": "You are an intern."});
        let u1 = json!({"role": "user", "content": "Task: book a room"});
        let a1 = json!({"role": "assistant", "content": "I'll look.", "tool_calls": [{"id": "c", "type": "function", "function": {"name": "my_tasks", "arguments": "{}"}}]});
        let t1 = json!({"role": "tool", "tool_call_id": "c", "content": "one task"});
        let lines = vec![
            json!({"type": "header"}),
            json!({"type": "model", "step": 1, "purpose": "turn", "request": {"messages": [sys, u1]}, "response": reply("I'll look.", Some(("my_tasks", "{}")))}),
            json!({"type": "decision", "step": 1}),
            json!({"type": "model", "step": 2, "purpose": "turn", "request_delta": {"keep": 2, "messages": [a1, t1]}, "response": reply("**Done**", None)}),
        ];
        let conv = conversation(&lines);
        let roles: Vec<_> = conv.iter().map(|m| (m.role.as_str(), m.reply)).collect();
        assert_eq!(
            roles,
            [
                ("system", false),
                ("user", false),
                ("assistant", true),
                ("tool", false),
                ("assistant", true)
            ]
        );
        assert_eq!(conv[2].tool_calls[0]["name"], "my_tasks");
        assert_eq!(conv[3].step, 2);
        assert!(conv[4].html.contains("<strong>Done</strong>"));
    }

    #[test]
    fn a_full_request_repeating_the_last_is_not_shown_twice() {
        let sys = json!({"role": "system", "content": "s"});
        let u1 = json!({"role": "user", "content": "u"});
        let a1 = json!({"role": "assistant", "content": "r1"});
        let u2 = json!({"role": "user", "content": "u2"});
        let lines = vec![
            json!({"type": "model", "step": 1, "purpose": "turn", "request": {"messages": [sys.clone(), u1.clone()]}, "response": reply("r1", None)}),
            json!({"type": "model", "step": 2, "purpose": "turn", "request": {"messages": [sys, u1, a1, u2]}, "response": {"choices": [{"message": {"role": "assistant", "content": "r2", "reasoning_content": "think"}}]}}),
        ];
        let conv = conversation(&lines);
        let texts: Vec<_> = conv.iter().map(|m| m.text.as_str()).collect();
        assert_eq!(texts, ["s", "u", "r1", "u2", "r2"]);
        assert!(conv[4].reasoning_html.as_deref().unwrap().contains("think"));
    }
}
