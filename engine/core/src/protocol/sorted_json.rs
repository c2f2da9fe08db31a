//! Free-form JSON written with its object keys sorted, so the bytes do not depend on
//! how `serde_json` stores a map (its `preserve_order` feature keeps insertion order).
//! For `#[serde(serialize_with = ...)]` on `Value` fields of recorded data.

use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Serialize, Serializer};
use serde_json::Value;

/// A JSON value that serialises with every object's keys in sorted order.
#[derive(Debug, Clone, Copy)]
pub struct Sorted<'a>(pub &'a Value);

impl Serialize for Sorted<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Value::Object(m) => {
                let mut entries: Vec<(&String, &Value)> = m.iter().collect();
                entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
                let mut out = s.serialize_map(Some(entries.len()))?;
                for (k, v) in entries {
                    out.serialize_entry(k, &Sorted(v))?;
                }
                out.end()
            }
            Value::Array(a) => {
                let mut out = s.serialize_seq(Some(a.len()))?;
                for v in a {
                    out.serialize_element(&Sorted(v))?;
                }
                out.end()
            }
            v => v.serialize(s),
        }
    }
}

/// `serialize_with` for a `Value`.
pub fn value<S: Serializer>(v: &Value, s: S) -> Result<S::Ok, S::Error> {
    Sorted(v).serialize(s)
}

/// `serialize_with` for an `Option<Value>`.
pub fn option<S: Serializer>(v: &Option<Value>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        Some(v) => s.serialize_some(&Sorted(v)),
        None => s.serialize_none(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_come_out_sorted_at_every_depth() {
        let mut inner = serde_json::Map::new();
        inner.insert("z".into(), Value::from(1));
        inner.insert("a".into(), Value::from(2));
        let mut outer = serde_json::Map::new();
        outer.insert("y".into(), Value::Array(vec![Value::Object(inner.clone())]));
        outer.insert("b".into(), Value::Object(inner));
        let text = serde_json::to_string(&Sorted(&Value::Object(outer))).unwrap();
        assert_eq!(text, r#"{"b":{"a":2,"z":1},"y":[{"a":2,"z":1}]}"#);
    }
}
