//! Containing what a model sends back: huge, deep or secret-bearing replies.
//!
//! A reply is untrusted input. Before anything reads or records it, the agent
//! passes it through this module, so the trajectory, the conversation, the decision
//! and every later request see the same contained form (and a resumed or replayed
//! run sees exactly what the live one did):
//!
//! * [`parse_completion`] reads a body whose tool call nests deeper than the JSON
//!   reader allows: the too-deep value is kept as its JSON text, so the call reaches
//!   the tools as malformed arguments (the agent's error, returned to the model)
//!   instead of making the whole reply unreadable (which was retried as a server
//!   fault and ended the run).
//! * [`contain`] replaces a tool call's arguments longer than
//!   [`MAX_ARGUMENT_BYTES`] (and assistant text longer than [`MAX_CONTENT_BYTES`]) by a
//!   short marker holding the head, the original length and its BLAKE3, so a 50 MB
//!   argument costs a few hundred bytes in the trajectory and the next request.
//! * [`shrink_refused`] does the same, after the fact, for arguments over
//!   [`REFUSED_KEEP_BYTES`] that a tool refused: the model needs to know what it sent
//!   and why it failed, not to be re-sent the bulk every turn.
//! * [`redact_value`] removes configured secrets from every string of a reply.

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

pub use tbsim_core::protocol::arguments::{
    HEAD_BYTES, MARKER_KEY, MAX_ARGUMENT_BYTES, head, marker, marker_of, refusal,
};
pub use tbsim_core::protocol::secrets::{MIN_SECRET_LEN, redact_secrets, register_secret};

/// Longest assistant text kept as sent.
pub const MAX_CONTENT_BYTES: usize = 2 << 20;

/// Arguments a tool refused are kept whole up to this length.
pub const REFUSED_KEEP_BYTES: usize = 4 << 10;

/// Values nested deeper than this are kept as JSON text by [`parse_completion`]
/// (serde_json refuses 128 levels).
const MAX_DEPTH: usize = 64;

/// Cuts over-long tool-call arguments and assistant text in a chat-completions
/// response, in place. Returns how many values were cut.
pub fn contain(raw: &mut Value) -> usize {
    let mut cut = 0;
    let Some(choices) = raw.get_mut("choices").and_then(Value::as_array_mut) else {
        return 0;
    };
    for choice in choices {
        let Some(msg) = choice.get_mut("message").and_then(Value::as_object_mut) else {
            continue;
        };
        if let Some(Value::String(text)) = msg.get_mut("content")
            && text.len() > MAX_CONTENT_BYTES
        {
            *text = format!(
                "{} [... cut by tbsim: {} bytes, blake3 {}]",
                head(text, HEAD_BYTES),
                text.len(),
                blake3::hash(text.as_bytes()).to_hex()
            );
            cut += 1;
        }
        let Some(calls) = msg.get_mut("tool_calls").and_then(Value::as_array_mut) else {
            continue;
        };
        for call in calls {
            let Some(args) = call.pointer_mut("/function/arguments") else {
                continue;
            };
            let long = match &*args {
                Value::String(s) => (s.len() > MAX_ARGUMENT_BYTES).then(|| s.clone()),
                Value::Null => None,
                // Objects are sent on as their text (see `assistant_from`); measure that.
                other => {
                    let text = other.to_string();
                    (text.len() > MAX_ARGUMENT_BYTES).then_some(text)
                }
            };
            if let Some(text) = long {
                *args = Value::String(marker(&text));
                cut += 1;
            }
        }
    }
    cut
}

/// The arguments to keep in the conversation for a call a tool refused: the marker
/// when they are longer than [`REFUSED_KEEP_BYTES`], else `None` (keep them whole).
pub fn shrink_refused(args: &str) -> Option<String> {
    (args.len() > REFUSED_KEEP_BYTES && marker_of(args).is_none()).then(|| marker(args))
}

/// Replaces, in every string and object key of `v`, what `redact` changes.
pub fn redact_value(v: &mut Value, redact: &dyn Fn(&str) -> Option<String>) {
    match v {
        Value::String(s) => {
            if let Some(r) = redact(s) {
                *s = r;
            }
        }
        Value::Array(a) => a.iter_mut().for_each(|x| redact_value(x, redact)),
        Value::Object(m) => {
            let old = std::mem::take(m);
            for (k, mut x) in old {
                redact_value(&mut x, redact);
                m.insert(redact(&k).unwrap_or(k), x);
            }
        }
        _ => {}
    }
}

/// Parses a response body. A body that is valid JSON but nests deeper than the
/// reader allows is read again with every `arguments` value, and every value below
/// [`MAX_DEPTH`] levels, kept as a string of its JSON text.
pub fn parse_completion(text: &str) -> serde_json::Result<Value> {
    match serde_json::from_str::<Value>(text) {
        Ok(v) => Ok(v),
        Err(first) => {
            let mut de = serde_json::Deserializer::from_str(text);
            match Shallow(0)
                .deserialize(&mut de)
                .and_then(|v| de.end().map(|_| v))
            {
                Ok(v) => Ok(v),
                Err(_) => Err(first),
            }
        }
    }
}

/// Reads a JSON value, keeping what lies below [`MAX_DEPTH`] as text.
struct Shallow(usize);

impl<'de> DeserializeSeed<'de> for Shallow {
    type Value = Value;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        if self.0 >= MAX_DEPTH {
            // RawValue skips the value without recursing, however deep it is.
            let raw = <Box<RawValue> as serde::Deserialize>::deserialize(d)?;
            return Ok(Value::String(raw.get().to_owned()));
        }
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Shallow {
    type Value = Value;
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut out = Vec::new();
        while let Some(v) = seq.next_element_seed(Shallow(self.0 + 1))? {
            out.push(v);
        }
        Ok(Value::Array(out))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(k) = map.next_key::<String>()? {
            let v = if k == "arguments" {
                // A call's arguments are kept exactly as sent, as text: that is what
                // the tools read, and what they refuse when it is too deep.
                let raw = map.next_value::<Box<RawValue>>()?;
                Value::String(
                    serde_json::from_str::<String>(raw.get())
                        .unwrap_or_else(|_| raw.get().to_owned()),
                )
            } else {
                map.next_value_seed(Shallow(self.0 + 1))?
            };
            out.insert(k, v);
        }
        Ok(Value::Object(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn deep(n: usize) -> String {
        format!("{}1{}", "{\"a\":".repeat(n), "}".repeat(n))
    }

    #[test]
    fn deep_tool_call_is_read_with_its_arguments_as_text() {
        let args = deep(100_000);
        let body = format!(
            r#"{{"choices":[{{"message":{{"role":"assistant","content":null,"tool_calls":[{{"id":"x","type":"function","function":{{"name":"read_file","arguments":{args}}}}}]}}}}]}}"#
        );
        assert!(
            serde_json::from_str::<Value>(&body).is_err(),
            "too deep for serde_json"
        );
        let v = parse_completion(&body).unwrap();
        let got = v["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"]
            .as_str()
            .unwrap();
        assert_eq!(got, args);
        assert_eq!(v["choices"][0]["message"]["tool_calls"][0]["id"], "x");
        // Not JSON at all stays an error.
        assert!(parse_completion("{\"choices\": [").is_err());
        assert!(parse_completion("{} trailing").is_err());
    }

    #[test]
    fn long_arguments_become_a_marker_with_length_and_hash() {
        let big = format!(
            "{{\"path\":\"workspace/a\",\"content\":\"{}\"}}",
            "é".repeat(MAX_ARGUMENT_BYTES)
        );
        let mut raw = json!({"choices": [{"message": {"role": "assistant", "content": "x",
            "tool_calls": [{"id": "a", "function": {"name": "write_file", "arguments": big}},
                           {"id": "b", "function": {"name": "wait", "arguments": "{}"}}]}}]});
        assert_eq!(contain(&mut raw), 1);
        let args = raw["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"]
            .as_str()
            .unwrap()
            .to_owned();
        let args = args.as_str();
        assert!(args.len() < HEAD_BYTES * 3, "{}", args.len());
        let (bytes, hash) = marker_of(args).unwrap();
        assert_eq!(bytes, big.len() as u64);
        assert_eq!(hash, blake3::hash(big.as_bytes()).to_hex().to_string());
        assert!(refusal(args).unwrap().contains(&hash));
        assert_eq!(
            raw["choices"][0]["message"]["tool_calls"][1]["function"]["arguments"],
            "{}"
        );
        // Containing again changes nothing.
        assert_eq!(contain(&mut raw), 0);
        assert_eq!(shrink_refused(args), None);
        assert!(refusal(&big).is_some());
        assert_eq!(refusal("{\"path\":\"drive\"}"), None);
    }

    #[test]
    fn redaction_reaches_strings_and_keys() {
        let mut v = json!({"a": ["sk-SECRET", {"sk-SECRET": "x sk-SECRET y"}], "n": 1});
        redact_value(&mut v, &|s: &str| {
            s.contains("sk-SECRET")
                .then(|| s.replace("sk-SECRET", "[redacted]"))
        });
        assert_eq!(
            v,
            json!({"a": ["[redacted]", {"[redacted]": "x [redacted] y"}], "n": 1})
        );
    }
}
