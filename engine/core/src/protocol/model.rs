//! Model calls as the protocol records them: the request body (serialised once),
//! the record written to the trajectory, and token usage.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;

/// A request body, serialised once when the request is built. The same bytes are
/// sent on every attempt and written into the trajectory verbatim, so a turn costs
/// one serialisation of the conversation however often it is retried or recorded.
#[derive(Clone)]
pub struct RequestBody(Arc<RawValue>);

impl RequestBody {
    /// Serialises `value` (compact JSON).
    pub fn new<T: Serialize + ?Sized>(value: &T) -> RequestBody {
        let raw = serde_json::value::to_raw_value(value).expect("request bodies serialise");
        RequestBody(Arc::from(raw))
    }

    /// The JSON text.
    pub fn text(&self) -> &str {
        self.0.get()
    }

    /// The body as a JSON value (for inspection; costs a parse).
    pub fn value(&self) -> Value {
        serde_json::from_str(self.text()).expect("a request body is valid JSON")
    }
}

impl RequestBody {
    /// For a turn request: the number of messages and the `tools` (what the next turn
    /// request's compact form is measured against). `None` if the body has no
    /// `messages` array.
    ///
    /// `tools` comes back as JSON text: the agent sends the same serialised schemas
    /// every turn, so comparing text is exact and avoids building a tree of them each
    /// turn.
    pub fn turn_shape(&self) -> Option<(usize, Option<String>)> {
        Fields::of(self.text())?.shape()
    }

    /// [`RequestBody::turn_shape`] and, against `base` (the previous turn request's
    /// message count and tools text), the compact form of this body (see
    /// the engine's trajectory module): `{"keep": keep, ...every field as sent, with
    /// `messages` cut to the messages after the first `keep`, and `tools` replaced by
    /// `"same_tools": true` when they equal the base's}`. No compact form when the
    /// body cannot be put that way (no `messages` array, fewer than `keep` messages,
    /// or a field named `keep` or `same_tools`). One reading of the body serves both.
    pub fn turn_parts(&self, base: Option<(usize, Option<&str>)>) -> Option<TurnParts> {
        let fields = Fields::of(self.text())?;
        let shape = fields.shape()?;
        let delta = base.and_then(|(keep, tools)| {
            let same = tools.is_some() && tools == shape.1.as_deref();
            fields.delta(keep, same)
        });
        Some((shape, delta))
    }
}

/// A turn request's shape (message count, tools text) and its compact form.
pub type TurnParts = ((usize, Option<String>), Option<RequestBody>);

/// A JSON object's top-level fields in order, values unparsed except `messages`,
/// which is split into its messages (still unparsed) in the same pass.
struct Fields<'a>(Vec<(String, Field<'a>)>);

enum Field<'a> {
    Raw(&'a RawValue),
    Messages(Vec<&'a RawValue>),
}

impl<'a> Fields<'a> {
    fn of(text: &'a str) -> Option<Fields<'a>> {
        serde_json::from_str(text).ok()
    }

    fn shape(&self) -> Option<(usize, Option<String>)> {
        let mut count = None;
        let mut tools = None;
        for (k, v) in &self.0 {
            match (k.as_str(), v) {
                ("messages", Field::Messages(m)) => count = Some(m.len()),
                ("tools", Field::Raw(t)) => tools = Some(t.get().to_owned()),
                _ => {}
            }
        }
        Some((count?, tools))
    }

    fn delta(&self, keep: usize, same_tools: bool) -> Option<RequestBody> {
        let mut out: Vec<(&str, Box<RawValue>)> = Vec::with_capacity(self.0.len() + 1);
        out.push(("keep", serde_json::value::to_raw_value(&keep).ok()?));
        let mut has_messages = false;
        for (k, v) in &self.0 {
            match (k.as_str(), v) {
                ("keep" | "same_tools", _) => return None,
                ("messages", Field::Messages(all)) => {
                    let tail = all.get(keep..)?;
                    out.push(("messages", serde_json::value::to_raw_value(tail).ok()?));
                    has_messages = true;
                }
                ("tools", _) if same_tools => {
                    out.push(("same_tools", serde_json::value::to_raw_value(&true).ok()?));
                }
                (_, Field::Raw(v)) => out.push((k.as_str(), (*v).to_owned())),
                (_, Field::Messages(_)) => return None,
            }
        }
        has_messages.then(|| RequestBody::new(&Ordered(out)))
    }
}

impl<'de> serde::Deserialize<'de> for Fields<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Fields<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Fields<'de>, A::Error> {
                let mut v = Vec::new();
                while let Some(k) = map.next_key::<String>()? {
                    let field = if k == "messages" {
                        Field::Messages(map.next_value()?)
                    } else {
                        Field::Raw(map.next_value()?)
                    };
                    v.push((k, field));
                }
                Ok(Fields(v))
            }
        }
        d.deserialize_map(V)
    }
}

/// Serialises pairs as a JSON object in their order.
struct Ordered<'a>(Vec<(&'a str, Box<RawValue>)>);

impl Serialize for Ordered<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

impl std::fmt::Debug for RequestBody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.text())
    }
}

impl PartialEq for RequestBody {
    fn eq(&self, other: &Self) -> bool {
        self.text() == other.text()
    }
}

impl Eq for RequestBody {}

/// Read back from a recorded line (through a `Value`, so it also reads inside a
/// tagged enum): the text is the value with its keys sorted, which is equal as JSON
/// to the body sent, not necessarily byte for byte.
impl<'de> Deserialize<'de> for RequestBody {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        Ok(RequestBody::new(&super::sorted_json::Sorted(&v)))
    }
}

impl Serialize for RequestBody {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

/// One model call as the trajectory records it (keys never included).
///
/// It is written with `request`, or with `request_delta` instead when that is set
/// (the compact form of a turn request, see the engine's trajectory module); the other fields
/// as named.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelRecord {
    /// Why the call was made: `turn`, `summary` or `reflection`.
    pub purpose: &'static str,
    /// The provider's model name.
    pub model: String,
    /// The request body exactly as sent.
    pub request: RequestBody,
    /// The compact form written instead of `request`, if any: `request` relative to
    /// the previous turn request of the run.
    pub request_delta: Option<RequestBody>,
    /// Failed attempts before the outcome, one line each.
    pub failures: Vec<String>,
    /// The response body (`null` when the call failed for good).
    pub response: Value,
    /// Tokens and cost of the response.
    pub usage: Option<ModelUsage>,
    /// Why the call failed for good.
    pub error: Option<String>,
    /// How long the call took and how often it was retried. Wall-clock facts, so
    /// never written to the trajectory (which replay compares byte for byte): the
    /// runner writes them to the run directory's `model_calls.jsonl` instead.
    pub timing: Option<CallTiming>,
}

/// Wall-clock facts of one model call (all attempts), kept apart from the
/// trajectory: two runs with the same replies differ here and nowhere else.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallTiming {
    /// Wall time from the first attempt to the outcome, backoff included, in ms.
    pub wall_ms: u64,
    /// Attempts made (1 when the first one answered).
    pub attempts: u32,
    /// Attempts that timed out.
    pub timeouts: u32,
}

impl Serialize for ModelRecord {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        /// The written shape: `request` or `request_delta`, never both.
        #[derive(Serialize)]
        struct Wire<'a> {
            purpose: &'a str,
            model: &'a str,
            #[serde(skip_serializing_if = "Option::is_none")]
            request: Option<&'a RequestBody>,
            #[serde(skip_serializing_if = "Option::is_none")]
            request_delta: Option<&'a RequestBody>,
            #[serde(skip_serializing_if = "<[String]>::is_empty")]
            failures: &'a [String],
            response: &'a Value,
            #[serde(skip_serializing_if = "Option::is_none")]
            usage: Option<&'a ModelUsage>,
            #[serde(skip_serializing_if = "Option::is_none")]
            error: Option<&'a str>,
        }
        Wire {
            purpose: self.purpose,
            model: &self.model,
            request: self.request_delta.is_none().then_some(&self.request),
            request_delta: self.request_delta.as_ref(),
            failures: &self.failures,
            response: &self.response,
            usage: self.usage.as_ref(),
            error: self.error.as_deref(),
        }
        .serialize(s)
    }
}

/// Model calls, tokens and cost.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelUsage {
    /// Completed model calls (turns, summaries, reflections; for colleagues, live calls).
    pub calls: u64,
    /// Prompt tokens, as the API reported them.
    pub input_tokens: u64,
    /// Completion tokens, as the API reported them.
    pub output_tokens: u64,
    /// Cost in the configured currency (from `price_in`/`price_out` per million tokens).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<f64>,
    /// Replies the server stopped at the reply limit (`finish_reason: "length"`):
    /// cut off mid-text or mid-call.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cut_off: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl ModelUsage {
    /// Adds another usage.
    pub fn add(&mut self, o: &ModelUsage) {
        self.calls += o.calls;
        self.input_tokens += o.input_tokens;
        self.output_tokens += o.output_tokens;
        self.cut_off += o.cut_off;
        self.cost = match (self.cost, o.cost) {
            (None, None) => None,
            (a, b) => Some(a.unwrap_or(0.0) + b.unwrap_or(0.0)),
        };
    }

    /// Input plus output tokens.
    pub fn tokens(&self) -> u64 {
        self.input_tokens + self.output_tokens
    }
}
