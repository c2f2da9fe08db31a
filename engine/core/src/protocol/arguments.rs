//! Tool-call arguments past the size limit: the refusal, and the marker that stands
//! for arguments cut before they reached the engine (see the model crate's reply
//! containment). Both the tools (which refuse) and the model agent (which cuts)
//! use these, so they live with the protocol.

use serde_json::{Value, json};

/// Longest tool-call arguments text kept as sent: twice the largest content a tool
/// accepts (1 MiB), so every argument a tool could accept passes whole.
pub const MAX_ARGUMENT_BYTES: usize = 2 << 20;

/// Bytes of the original kept at the head of a marker.
pub const HEAD_BYTES: usize = 512;

/// The key of the marker object that stands for cut arguments.
pub const MARKER_KEY: &str = "tbsim_truncated";

/// The longest prefix of `s` of at most `max` bytes that ends on a char boundary.
pub fn head(s: &str, max: usize) -> &str {
    let mut end = s.len().min(max);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// The marker standing for `args`: a JSON object, so that servers which parse the
/// arguments of earlier calls in a conversation still accept it.
pub fn marker(args: &str) -> String {
    json!({MARKER_KEY: {
        "bytes": args.len(),
        "blake3": blake3::hash(args.as_bytes()).to_hex().to_string(),
        "head": head(args, HEAD_BYTES),
    }})
    .to_string()
}

/// The original length and hash recorded in a marker, if `args` is one.
pub fn marker_of(args: &str) -> Option<(u64, String)> {
    // A marker is short; do not parse anything long looking for one.
    if args.len() > HEAD_BYTES * 8 + 256 || !args.contains(MARKER_KEY) {
        return None;
    }
    let v: Value = serde_json::from_str(args).ok()?;
    let obj = v.as_object()?;
    if obj.len() != 1 {
        return None;
    }
    let m = obj.get(MARKER_KEY)?;
    Some((m["bytes"].as_u64()?, m["blake3"].as_str()?.to_owned()))
}

/// Why a call's arguments are refused before they are parsed: too long, or a marker
/// left where over-long arguments were cut.
pub fn refusal(args: &str) -> Option<String> {
    if args.len() > MAX_ARGUMENT_BYTES {
        return Some(format!(
            "the arguments are {} bytes, over the {MAX_ARGUMENT_BYTES}-byte limit; send less (write large data in parts, or compute it with run_python)",
            args.len()
        ));
    }
    let (bytes, hash) = marker_of(args)?;
    Some(format!(
        "the arguments were {bytes} bytes (blake3 {hash}), over the {MAX_ARGUMENT_BYTES}-byte limit, and were not run; send less (write large data in parts, or compute it with run_python)"
    ))
}
