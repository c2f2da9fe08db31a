//! Chat messages in the OpenAI wire format, and parsing of responses.

use std::sync::LazyLock;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Value, json};

use tbsim_core::protocol::ToolCall;

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Instructions.
    System,
    /// The environment speaking to the model.
    User,
    /// The model.
    Assistant,
    /// A tool result.
    Tool,
}

/// One part of a multi-part user message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Part {
    /// Text.
    Text {
        /// The text.
        text: String,
    },
    /// An image, as a data URL.
    ImageUrl {
        /// `{"url": "data:image/png;base64,..."}`.
        image_url: ImageUrl,
    },
}

/// An image reference.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ImageUrl {
    /// The URL.
    pub url: String,
}

/// Message content: text, or parts (text and images).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Content {
    /// Plain text.
    Text(String),
    /// Parts.
    Parts(Vec<Part>),
}

/// A function call as the API carries it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WireCall {
    /// Call id.
    pub id: String,
    /// Always `function`.
    #[serde(rename = "type")]
    pub kind: String,
    /// Name and arguments.
    pub function: WireFunction,
}

/// A function name and its JSON arguments text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WireFunction {
    /// Name.
    pub name: String,
    /// Arguments as JSON text.
    pub arguments: String,
}

/// One chat message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// Role.
    pub role: Role,
    /// Content (`null` for an assistant message with only tool calls).
    #[serde(default)]
    pub content: Option<Content>,
    /// Tool calls (assistant only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<WireCall>,
    /// The call answered (tool only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
}

impl Message {
    /// A text message.
    pub fn text(role: Role, text: impl Into<String>) -> Message {
        Message {
            role,
            content: Some(Content::Text(text.into())),
            tool_calls: Vec::new(),
            tool_call_id: None,
        }
    }

    /// A tool result.
    pub fn tool(call_id: &str, text: impl Into<String>) -> Message {
        Message {
            tool_call_id: Some(call_id.to_owned()),
            ..Message::text(Role::Tool, text)
        }
    }

    /// The text of the content (parts joined; images left out).
    pub fn text_content(&self) -> String {
        match &self.content {
            None => String::new(),
            Some(Content::Text(t)) => t.clone(),
            Some(Content::Parts(ps)) => ps
                .iter()
                .filter_map(|p| match p {
                    Part::Text { text } => Some(text.as_str()),
                    Part::ImageUrl { .. } => None,
                })
                .collect::<Vec<_>>()
                .join("\n"),
        }
    }

    /// Number of images.
    pub fn images(&self) -> usize {
        match &self.content {
            Some(Content::Parts(ps)) => ps
                .iter()
                .filter(|p| matches!(p, Part::ImageUrl { .. }))
                .count(),
            _ => 0,
        }
    }
}

/// The catalogue as a chat-completions `tools` array, serialised once per process
/// (it is the same in every request).
pub fn tool_schemas_json() -> &'static RawValue {
    static TOOLS: LazyLock<Box<RawValue>> = LazyLock::new(|| {
        serde_json::value::to_raw_value(&tool_schemas()).expect("schemas serialise")
    });
    &TOOLS
}

/// The catalogue as chat-completions `tools`.
pub fn tool_schemas() -> Vec<Value> {
    tbsim_core::protocol::catalogue()
        .iter()
        .map(|t| {
            json!({"type": "function", "function": {
                "name": t.name, "description": t.description, "parameters": t.parameters}})
        })
        .collect()
}

/// The text of a response's first choice (empty if none).
pub fn response_text(raw: &Value) -> String {
    let c = &raw["choices"][0]["message"]["content"];
    match c {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// The assistant message of a response, and the tool calls it makes.
///
/// Calls keep the model's ids; a missing or repeated id is replaced by
/// `call_{step}_{i}` in both the history and the decision, so tool results always
/// answer an id the history holds. Arguments sent as a JSON object (some servers do)
/// are turned into text; missing arguments become `{}`.
pub fn assistant_from(raw: &Value, step: u64) -> (Message, Vec<ToolCall>) {
    let msg = &raw["choices"][0]["message"];
    let text = response_text(raw);
    let mut seen = std::collections::BTreeSet::new();
    let mut calls = Vec::new();
    let mut wire = Vec::new();
    // A malformed `tool_calls` (not a list, or entries that are not calls) still
    // becomes calls, which the tools refuse: the model's error is counted and
    // answered, not dropped.
    let entries: Vec<&Value> = match &msg["tool_calls"] {
        Value::Array(a) => a.iter().collect(),
        Value::Null => Vec::new(),
        other => vec![other],
    };
    for (i, tc) in entries.into_iter().enumerate() {
        let id = match tc["id"].as_str() {
            Some(id) if !id.is_empty() && !seen.contains(id) => id.to_owned(),
            _ => format!("call_{step}_{i}"),
        };
        seen.insert(id.clone());
        let name = tc["function"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let arguments = match &tc["function"]["arguments"] {
            Value::String(s) => s.clone(),
            // No function at all: the entry itself is what the model sent.
            Value::Null if !tc["function"].is_object() => tc.to_string(),
            Value::Null => "{}".to_owned(),
            other => other.to_string(),
        };
        calls.push(ToolCall {
            id: id.clone(),
            name: name.clone(),
            arguments: arguments.clone(),
        });
        wire.push(WireCall {
            id,
            kind: "function".into(),
            function: WireFunction { name, arguments },
        });
    }
    let content = if text.is_empty() && !wire.is_empty() {
        None
    } else {
        Some(Content::Text(text))
    };
    (
        Message {
            role: Role::Assistant,
            content,
            tool_calls: wire,
            tool_call_id: None,
        },
        calls,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_kept_or_made_unique_and_args_normalised() {
        let raw = json!({"choices": [{"message": {"role": "assistant", "content": null, "tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "wait", "arguments": "{}"}},
            {"id": "a", "type": "function", "function": {"name": "read_file", "arguments": {"path": "drive"}}},
            {"type": "function", "function": {"name": "finish"}}
        ]}}]});
        let (m, calls) = assistant_from(&raw, 7);
        let ids: Vec<&str> = calls.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, ["a", "call_7_1", "call_7_2"]);
        assert_eq!(calls[1].arguments, r#"{"path":"drive"}"#);
        assert_eq!(calls[2].arguments, "{}");
        assert_eq!(m.content, None);
        let wire_ids: Vec<&str> = m.tool_calls.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(wire_ids, ids);
        // Malformed call lists still become calls, for the tools to refuse.
        let odd =
            json!({"choices": [{"message": {"role": "assistant", "tool_calls": "read_file"}}]});
        let (_, calls) = assistant_from(&odd, 3);
        assert_eq!(
            (calls[0].name.as_str(), calls[0].arguments.as_str()),
            ("", "\"read_file\"")
        );
        let odd = json!({"choices": [{"message": {"role": "assistant", "tool_calls": [7, {"function": "x"}]}}]});
        let (_, calls) = assistant_from(&odd, 3);
        assert_eq!(calls.len(), 2);
        assert_eq!(calls[1].arguments, r#"{"function":"x"}"#);
        let v = serde_json::to_value(&m).unwrap();
        assert_eq!(v["content"], Value::Null);
        assert_eq!(v["tool_calls"][0]["type"], "function");
    }

    #[test]
    fn messages_serialise_in_wire_format() {
        let m = Message {
            content: Some(Content::Parts(vec![
                Part::Text { text: "see".into() },
                Part::ImageUrl {
                    image_url: ImageUrl {
                        url: "data:image/png;base64,AAAA".into(),
                    },
                },
            ])),
            ..Message::text(Role::User, "")
        };
        let v = serde_json::to_value(&m).unwrap();
        assert_eq!(
            v,
            json!({"role": "user", "content": [{"type": "text", "text": "see"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}]})
        );
        let back: Message = serde_json::from_value(v).unwrap();
        assert_eq!(back, m);
        let t = serde_json::to_value(Message::tool("x", "{}")).unwrap();
        assert_eq!(
            t,
            json!({"role": "tool", "content": "{}", "tool_call_id": "x"})
        );
    }
}
