//! The host inside tbsim's own process: this crate built as a C-ABI shared library
//! (`libtbsim_script.so`, beside the `tbsim-script` program), which tbsim loads
//! and hands the same request lines the program reads from its pipe.
//!
//! Why: a pipe round trip per task woke a sleeping process on another CPU twice
//! and found its caches cold, which cost as much as the script's own evaluation
//! (measured in `runs/bench/2026-11-27/script-gen-s17.md`). The library has its
//! own copy of serde_json (with starlark's `arbitrary_precision`) and its own
//! standard library and allocator; nothing but bytes crosses the boundary. Its
//! mimalloc takes the thread that loads the library for the main thread, so tbsim
//! loads it on a thread that never ends (`engine/gen/src/script_embed.rs`).
//!
//! The contract, for [`tbsim_script_answer`]: one thread at a time per handle; a
//! `solve` is never sent (its `tools` calls need the program's pipe, and are
//! answered with an error here). A panic never crosses: it is answered as an error.

// The boundary is raw pointers by nature; each use below says why it is sound.
#![allow(unsafe_code)]

use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex};

use crate::protocol::{Host, PROTOCOL};
use crate::tools::Channel;

/// One embedded host and its last answer (valid until the next request).
#[derive(Debug)]
pub struct Embedded {
    host: Host,
    answer: String,
}

/// The channel of an embedded host: `tools` calls have nowhere to go.
struct NoTools;

impl Channel for NoTools {
    fn send(&mut self, _: &str) -> std::io::Result<()> {
        Err(std::io::Error::other(
            "`solve` runs in the tbsim-script program, not in an embedded host",
        ))
    }

    fn recv(&mut self) -> std::io::Result<Option<String>> {
        Ok(None)
    }
}

// tbsim moves a handle between threads (its pool), one user at a time.
const _: fn() = || {
    fn send<T: Send>() {}
    send::<Embedded>();
};

/// The protocol the library speaks ([`PROTOCOL`]); tbsim loads only its own.
#[unsafe(no_mangle)]
pub extern "C" fn tbsim_script_protocol() -> u64 {
    PROTOCOL
}

/// A new embedded host, to be closed with [`tbsim_script_close`].
#[unsafe(no_mangle)]
pub extern "C" fn tbsim_script_open() -> *mut Embedded {
    let chan: Box<dyn Channel> = Box::new(NoTools);
    Box::into_raw(Box::new(Embedded {
        host: Host::new(Arc::new(Mutex::new(chan))),
        answer: String::new(),
    }))
}

/// Answers one request line (`len` bytes at `line`) with one answer line: its
/// bytes are at the returned pointer, `*answer_len` of them, until the next call
/// with this handle or its close.
///
/// # Safety
/// `host` comes from [`tbsim_script_open`], is not closed, and no other thread
/// uses it during the call; `line` points to `len` readable bytes; `answer_len`
/// to a writable `usize`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tbsim_script_answer(
    host: *mut Embedded,
    line: *const u8,
    len: usize,
    answer_len: *mut usize,
) -> *const u8 {
    // SAFETY: the caller's promises, above.
    let (e, bytes) = unsafe { (&mut *host, std::slice::from_raw_parts(line, len)) };
    let answered =
        std::panic::catch_unwind(AssertUnwindSafe(|| match std::str::from_utf8(bytes) {
            Ok(text) => e.host.answer(text),
            Err(_) => e.host.answer("not UTF-8"),
        }));
    e.answer = answered.unwrap_or_else(|_| {
        r#"{"err":{"file":"<protocol>","position":null,"message":"the embedded script host failed on this request","trace":""}}"#.to_owned()
    });
    // SAFETY: the caller's promise that `answer_len` is writable.
    unsafe { *answer_len = e.answer.len() };
    e.answer.as_ptr()
}

/// Ends an embedded host.
///
/// # Safety
/// `host` comes from [`tbsim_script_open`] and is not used again.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tbsim_script_close(host: *mut Embedded) {
    // SAFETY: the caller's promise; the box was made by `tbsim_script_open`.
    drop(unsafe { Box::from_raw(host) });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ask(h: *mut Embedded, line: &str) -> String {
        let mut n = 0;
        // SAFETY: `h` is open and used by this thread only; the pointers are live.
        let p = unsafe { tbsim_script_answer(h, line.as_ptr(), line.len(), &mut n) };
        // SAFETY: the answer's bytes are valid until the next call with `h`.
        String::from_utf8(unsafe { std::slice::from_raw_parts(p, n) }.to_vec()).unwrap()
    }

    #[test]
    fn an_embedded_host_answers_what_the_program_answers() {
        let h = tbsim_script_open();
        let hello = ask(h, r#"{"op":"hello"}"#);
        assert!(
            hello.contains(&format!("\"protocol\":{PROTOCOL}")),
            "{hello}"
        );
        assert!(ask(h, "{not json").contains("not a JSON request"));
        let bytes = [0xff, b'{'];
        let mut n = 0;
        // SAFETY: as in `ask`.
        let p = unsafe { tbsim_script_answer(h, bytes.as_ptr(), bytes.len(), &mut n) };
        // SAFETY: as in `ask`.
        let a = String::from_utf8(unsafe { std::slice::from_raw_parts(p, n) }.to_vec()).unwrap();
        assert!(a.contains("\"err\""), "{a}");
        let load = serde_json::json!({"op": "load", "file": "s/family.star", "source":
            "FAMILY = {\"key\": \"s\", \"domain\": \"information_synthesis\"}\nVARIANTS = [{\"key\": \"one\"}]\ndef generate(ctx, params):\n    return 1\ndef solve(tools, task):\n    return tools.colleagues()\n"});
        assert!(ask(h, &load.to_string()).contains("\"handle\":0"));
        // A `solve` has no pipe for its `tools` here: an error, not a hang.
        let solve = ask(h, r#"{"op":"solve","handle":0,"task":{}}"#);
        assert!(solve.contains("\"err\""), "{solve}");
        // SAFETY: `h` is not used again.
        unsafe { tbsim_script_close(h) };
    }
}
