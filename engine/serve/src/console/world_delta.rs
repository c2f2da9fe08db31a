//! A world view as the changes from one the page already holds.
//!
//! On a long run a world is hundreds of kB (mostly chats) and a step changes a
//! message or two: scrubbing sent and parsed the whole of it at every step. The
//! page says which view it holds (`since`, `since_id`: the step and the
//! [`view_id`] the world route gave it in [`ID_HEADER`]); when the server still
//! keeps that exact view, the route answers with [`delta`] instead, which the page
//! applies to its copy (`app.js`, `applyWorldDelta`). Any doubt (a view no longer
//! kept, another id, a body not an object) answers the whole view.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};

use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// The world route's header naming the view it answered (whole or as changes).
pub const ID_HEADER: &str = "x-tbsim-world-id";

/// An id of a view's exact text (the page sends it back as `since_id`).
pub fn view_id(view: &str) -> String {
    // Not a digest anyone relies on: a view the page holds is told from another
    // kept for the same step (a corrected cache entry, a run read again).
    let mut h = std::collections::hash_map::DefaultHasher::new();
    view.hash(&mut h);
    format!("{:016x}-{}", h.finish(), view.len())
}

/// `new` as the changes from `old` (both a world view, a JSON object):
/// `{"delta_since": since, "same": [keys unchanged], "set": {key: value},
/// "arrays": {key: {"old": [index in old's array, or -1], "new": [the -1 items]}}}`.
/// A key that is an array in both is sent as its items, each either an index of
/// an equal item of old's or the item; any other changed key whole. None when
/// either is not an object.
pub fn delta(old: &str, new: &str, since: u64) -> Option<String> {
    let old: Vec<(String, &RawValue)> = object(old)?;
    let new: Vec<(String, &RawValue)> = object(new)?;
    let before: HashMap<&str, &RawValue> = old.iter().map(|(k, v)| (k.as_str(), *v)).collect();
    let mut same = Vec::new();
    let mut set = Map::new();
    let mut arrays = Map::new();
    for (k, v) in &new {
        let Some(was) = before.get(k.as_str()) else {
            set.insert(k.clone(), serde_json::from_str(v.get()).ok()?);
            continue;
        };
        if was.get() == v.get() {
            same.push(Value::String(k.clone()));
            continue;
        }
        match (items(was.get()), items(v.get())) {
            (Some(was), Some(now)) => {
                let at: HashMap<&str, usize> =
                    was.iter().enumerate().map(|(i, r)| (r.get(), i)).collect();
                let mut index = Vec::with_capacity(now.len());
                let mut fresh = Vec::new();
                for r in &now {
                    match at.get(r.get()) {
                        Some(i) => index.push(Value::from(*i)),
                        None => {
                            index.push(Value::from(-1));
                            fresh.push(serde_json::from_str::<Value>(r.get()).ok()?);
                        }
                    }
                }
                let mut a = Map::new();
                a.insert("old".into(), Value::Array(index));
                a.insert("new".into(), Value::Array(fresh));
                arrays.insert(k.clone(), Value::Object(a));
            }
            _ => {
                set.insert(k.clone(), serde_json::from_str(v.get()).ok()?);
            }
        }
    }
    let mut out = Map::new();
    out.insert("delta_since".into(), Value::from(since));
    out.insert("same".into(), Value::Array(same));
    out.insert("set".into(), Value::Object(set));
    out.insert("arrays".into(), Value::Object(arrays));
    serde_json::to_string(&Value::Object(out)).ok()
}

fn object(text: &str) -> Option<Vec<(String, &RawValue)>> {
    let m: std::collections::BTreeMap<String, &RawValue> = serde_json::from_str(text).ok()?;
    Some(m.into_iter().collect())
}

fn items(text: &str) -> Option<Vec<&RawValue>> {
    text.trim_start()
        .starts_with('[')
        .then(|| serde_json::from_str(text).ok())
        .flatten()
}

/// What the page does with a [`delta`] (`app.js`, `applyWorldDelta`), for the tests.
#[cfg(test)]
pub fn apply(old: &Value, d: &Value) -> Value {
    let mut w = Map::new();
    for k in d["same"].as_array().unwrap() {
        let k = k.as_str().unwrap();
        w.insert(k.into(), old[k].clone());
    }
    for (k, v) in d["set"].as_object().unwrap() {
        w.insert(k.clone(), v.clone());
    }
    for (k, a) in d["arrays"].as_object().unwrap() {
        let mut fresh = a["new"].as_array().unwrap().iter();
        let items = a["old"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| match i.as_i64().unwrap() {
                -1 => fresh.next().unwrap().clone(),
                i => old[k][usize::try_from(i).unwrap()].clone(),
            })
            .collect();
        w.insert(k.clone(), Value::Array(items));
    }
    Value::Object(w)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_delta_applied_to_the_old_view_gives_the_new_one() {
        let old = json!({
            "step": 4, "time": "Mon 09:10", "score": 0.0, "end_reason": null,
            "files": [{"path": "a"}, {"path": "b"}],
            "chats": [{"key": "t1", "messages": [1]}, {"key": "t2", "messages": [1, 2]}],
            "tasks": [{"key": "x", "state": "open"}],
            "gone": 1
        });
        let new = json!({
            "step": 5, "time": "Mon 09:12", "score": 0.5, "end_reason": null,
            "files": [{"path": "a"}, {"path": "b"}],
            "chats": [{"key": "t0", "messages": []}, {"key": "t1", "messages": [1]},
                      {"key": "t2", "messages": [1, 2, 3]}],
            "tasks": [],
            "calendar": [{"at": 1}]
        });
        let d = delta(&old.to_string(), &new.to_string(), 4).unwrap();
        let d: Value = serde_json::from_str(&d).unwrap();
        assert_eq!(d["delta_since"], 4);
        assert_eq!(apply(&old, &d), new);
        // Unchanged parts are named, not sent; of a changed list only new items.
        assert!(d["same"].as_array().unwrap().contains(&json!("files")));
        assert!(d["set"].get("files").is_none());
        assert_eq!(d["arrays"]["chats"]["old"], json!([-1, 0, -1]));
        assert_eq!(d["arrays"]["chats"]["new"].as_array().unwrap().len(), 2);
    }

    #[test]
    fn not_an_object_is_no_delta() {
        assert!(delta("[1]", "{}", 0).is_none());
        assert!(delta("{}", "nope", 0).is_none());
        assert_ne!(view_id("{\"a\":1}"), view_id("{\"a\":2}"));
    }
}
