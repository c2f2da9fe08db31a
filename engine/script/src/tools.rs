//! `tools`, what a family's `solve(tools, task)` works with: the agent's tools and
//! nothing else. Each method is sent to tbsim as one `call` line and blocks until
//! tbsim answers with the `result` of the real tool calls it made in the run (see
//! [`crate::protocol`]); the script never sees a scenario, only what tools return.

// `ProvidesStaticType`'s derive writes an `unsafe impl` (a type-id marker); this
// module has no unsafe code of its own.
#![allow(unsafe_code)]

use std::sync::{Arc, Mutex};

use allocative::Allocative;
use serde_json::json;
use starlark::any::ProvidesStaticType;
use starlark::environment::{Methods, MethodsBuilder, MethodsStatic};
use starlark::starlark_module;
use starlark::starlark_simple_value;
use starlark::values::none::NoneOr;
use starlark::values::{Heap, NoSerialize, StarlarkValue, Value, starlark_value};

/// The line channel to tbsim: the host's standard input and output, or a test's
/// script of answers.
pub trait Channel: Send {
    /// Writes one line.
    fn send(&mut self, line: &str) -> std::io::Result<()>;
    /// Reads one line; `None` when the input has ended.
    fn recv(&mut self) -> std::io::Result<Option<String>>;
}

/// The channel, shared by the request loop and a running `solve`.
pub type Shared = Arc<Mutex<Box<dyn Channel>>>;

/// A channel with no other end: what is sent is dropped and nothing comes back,
/// so a `solve`'s tool calls end it with an error (the fuzz targets' host).
#[derive(Debug, Clone, Copy, Default)]
pub struct Closed;

impl Channel for Closed {
    fn send(&mut self, _: &str) -> std::io::Result<()> {
        Ok(())
    }
    fn recv(&mut self) -> std::io::Result<Option<String>> {
        Ok(None)
    }
}

/// The `tools` value.
#[derive(ProvidesStaticType, NoSerialize, Allocative)]
pub struct ScriptTools {
    #[allocative(skip)]
    chan: Shared,
}

impl std::fmt::Debug for ScriptTools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ScriptTools")
    }
}

impl std::fmt::Display for ScriptTools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("tools")
    }
}

starlark_simple_value!(ScriptTools);

#[starlark_value(type = "tools")]
impl<'v> StarlarkValue<'v> for ScriptTools {
    fn get_methods() -> Option<&'static Methods> {
        static RES: MethodsStatic = MethodsStatic::new("tools", tools_methods);
        Some(RES.methods())
    }
}

impl ScriptTools {
    /// The tools of one `solve`, speaking over `chan`.
    pub fn new(chan: Shared) -> ScriptTools {
        ScriptTools { chan }
    }

    /// Sends `{"call": {method, args}}` and waits for `{"result": …}`. An `abort`
    /// (the run ended) or a closed input is an error, which ends the script.
    fn ask(&self, method: &str, args: serde_json::Value) -> anyhow::Result<serde_json::Value> {
        let mut chan = self.chan.lock().unwrap_or_else(|e| e.into_inner());
        let out = json!({"call": {"method": method, "args": args}}).to_string();
        chan.send(&out)?;
        let Some(line) = chan.recv()? else {
            anyhow::bail!("tbsim closed the host while `tools.{method}` waited");
        };
        let v: serde_json::Value = serde_json::from_str(&line)
            .map_err(|e| anyhow::anyhow!("tbsim answered `tools.{method}` with bad JSON: {e}"))?;
        if let Some(why) = v.get("abort") {
            anyhow::bail!(
                "the run ended while `tools.{method}` waited: {}",
                why.as_str().unwrap_or("aborted")
            );
        }
        v.get("result")
            .cloned()
            .ok_or_else(|| anyhow::anyhow!("tbsim's answer to `tools.{method}` has no result"))
    }
}

fn json_of(v: Value<'_>) -> anyhow::Result<serde_json::Value> {
    v.to_json_value()
        .map_err(|e| anyhow::anyhow!("tool arguments must be plain data: {e}"))
}

#[starlark_module]
fn tools_methods(builder: &mut MethodsBuilder) {
    /// Any tool of the catalogue: `{"ok", "result", "error"}`.
    fn call<'v>(
        this: &ScriptTools,
        name: &str,
        args: Value<'v>,
        heap: Heap<'v>,
    ) -> anyhow::Result<Value<'v>> {
        let args = json_of(args)?;
        Ok(heap.alloc(this.ask("call", json!({"tool": name, "args": args}))?))
    }

    /// A file's text, or `None` when it cannot be read.
    fn read_file<'v>(this: &ScriptTools, path: &str, heap: Heap<'v>) -> anyhow::Result<Value<'v>> {
        Ok(heap.alloc(this.ask("read_file", json!({"path": path}))?))
    }

    /// A folder listing (the tool's result), or `None`.
    fn list_folder<'v>(
        this: &ScriptTools,
        #[starlark(default = NoneOr::None)] path: NoneOr<&str>,
        heap: Heap<'v>,
    ) -> anyhow::Result<Value<'v>> {
        let args = match path {
            NoneOr::Other(p) => json!({"path": p}),
            NoneOr::None => json!({}),
        };
        Ok(heap.alloc(this.ask("list_folder", args)?))
    }

    /// Writes a workspace file; whether it worked.
    fn write_file<'v>(
        this: &ScriptTools,
        path: &str,
        content: &str,
        heap: Heap<'v>,
    ) -> anyhow::Result<Value<'v>> {
        Ok(heap.alloc(this.ask("write_file", json!({"path": path, "content": content}))?))
    }

    /// Sends a message and waits for the next message from `to`: its text, or
    /// `None` if none came before the task's deadline.
    fn send_message<'v>(
        this: &ScriptTools,
        to: &str,
        text: &str,
        heap: Heap<'v>,
    ) -> anyhow::Result<Value<'v>> {
        Ok(heap.alloc(this.ask("send_message", json!({"to": to, "text": text}))?))
    }

    /// `list_colleagues`' result.
    fn colleagues<'v>(this: &ScriptTools, heap: Heap<'v>) -> anyhow::Result<Value<'v>> {
        Ok(heap.alloc(this.ask("colleagues", json!({}))?))
    }

    /// Every message received so far: `{at, thread, from, from_name, text}`.
    fn inbox<'v>(this: &ScriptTools, heap: Heap<'v>) -> anyhow::Result<Value<'v>> {
        Ok(heap.alloc(this.ask("inbox", json!({}))?))
    }

    /// Lets `minutes` pass (a notification wakes early).
    fn wait<'v>(this: &ScriptTools, minutes: i64, heap: Heap<'v>) -> anyhow::Result<Value<'v>> {
        Ok(heap.alloc(this.ask("wait", json!({"minutes": minutes}))?))
    }

    /// Lets time pass until a shown time (`YYYY-MM-DDTHH:MM[:SS]`).
    fn wait_until<'v>(this: &ScriptTools, time: &str, heap: Heap<'v>) -> anyhow::Result<Value<'v>> {
        Ok(heap.alloc(this.ask("wait_until", json!({"until": time}))?))
    }

    /// The current time as shown to agents.
    fn now<'v>(this: &ScriptTools, heap: Heap<'v>) -> anyhow::Result<Value<'v>> {
        Ok(heap.alloc(this.ask("now", json!({}))?))
    }
}
