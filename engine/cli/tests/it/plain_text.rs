//! User-facing text never shows Rust debug formatting (`Some(..)`, `None`, `Ok(..)`):
//! CLI output, HTTP errors and MCP results of a batch of scripted misuse.

use serde_json::json;

use crate::serve::Server;
use crate::util::{tbsim, text};

/// Panics when `s` shows debug formatting.
pub(crate) fn assert_plain(what: &str, s: &str) {
    for bad in ["Some(", "None", "Ok(", "Err("] {
        assert!(
            !s.contains(bad),
            "{what}: `{bad}` in user-facing text:\n{s}"
        );
    }
}

#[test]
fn misuse_is_answered_in_plain_words() {
    let tmp = tempfile::tempdir().unwrap();
    // The CLI: unknown names, missing files, bad options.
    let cli: &[&[&str]] = &[
        &["run", "no-such-scenario"],
        &["run", "/no/such/file.ron"],
        &["mcp", "no-such-scenario"],
        &["replay", "/no/such/run"],
        &["report", "/no/such/run"],
        &["scenarios", "--suite", "nope"],
        &["validate", "/no/such/file.ron"],
    ];
    for args in cli {
        let o = tbsim(args, tmp.path());
        assert!(!o.status.success(), "{args:?}");
        let (out, err) = text(&o);
        assert!(!err.trim().is_empty(), "{args:?}: an error is said");
        assert_plain(&format!("tbsim {}", args.join(" ")), &format!("{out}{err}"));
    }
    // The session API: a run used past its end, unknown sessions and scenarios.
    let out = tmp.path().join("serve");
    let server = Server::start(&out, &["--token", "s3cret"]);
    let (status, created) = server.post("/v1/sessions", &json!({"scenario": "meeting-only"}));
    assert_eq!(status, 201, "{created}");
    let id = created["session"].as_str().unwrap().to_owned();
    let step = format!("/v1/sessions/{id}/step");
    let finish = json!({"tool_calls": [{"name": "finish", "arguments": "{}"}]});
    let (status, _) = server.post(&step, &finish);
    assert_eq!(status, 200);
    let (status, after) = server.post(&step, &finish);
    assert_eq!(status, 409, "{after}");
    assert!(
        after["error"]["message"]
            .as_str()
            .unwrap()
            .contains("(finished)"),
        "{after}"
    );
    let answers = [
        after,
        server
            .post("/v1/sessions", &json!({"scenario": "no-such"}))
            .1,
        server.post("/v1/sessions", &json!({"scenario": "../x"})).1,
        server.post("/v1/sessions", &json!({"scenario": 5})).1,
        server.request("GET", "/v1/sessions/nope", None).1,
        server.request("DELETE", "/v1/sessions/nope", None).1,
        server.request("POST", &step, Some("{not json")).1,
    ];
    for a in answers {
        assert!(a["error"]["message"].is_string(), "{a}");
        assert_plain("HTTP error", &a.to_string());
    }
}
