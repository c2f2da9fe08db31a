//! The host's protocol: one request per line from tbsim, one answer per line back.
//!
//! Requests are JSON objects with an `op`. A `generate` carries the company
//! (`ctx.people` and `ctx.rooms`) only when it differs from the one before: the
//! host keeps the last, as every task of a scenario shares one, and converting the
//! people list was a third of the host's time per task.
//!
//! | `op` | fields | answer (`ok`) |
//! |---|---|---|
//! | `hello` | — | `{protocol, version}` |
//! | `reference` | — | the script API reference, Markdown (`tbsim family reference`) |
//! | `corpus` | `corpus` (object) | `null`; every later `ctx.corpus` is this |
//! | `load` | `file`, `source` | `{handle, key, domain, milestone, min_window_minutes, variants: [{key, params}], defines: [names]}` |
//! | `generate` | `handle`, `input` (a [`GenInput`] without `corpus` and `company`), `params`, and `company` (`{people, rooms}`) when it changed | what `generate(ctx, params)` returned |
//! | `wrong_answers` | `handle`, `task`, `scenario` | `[[path, content], …]` |
//! | `claims` | `handle`, `task` | `true`/`false`, or `null` when the script has no `claims` |
//! | `solve` | `handle`, `task` (the TaskReleased notification) | what `solve(tools, task)` returned |
//!
//! Any request may add `"trace": true`: the host program then writes each
//! statement's position on standard error as it begins (see
//! [`crate::position::Trace`]); tbsim sends a request again that way, on a fresh
//! host, when the first try killed a host where nothing could say the line.
//!
//! While `solve` runs, the host writes `{"call": {method, args}}` lines (one per
//! `tools.*` call, see [`crate::tools`]) and reads back `{"result": …}`, or
//! `{"abort": why}` when the run ended, which stops the script with an error.
//!
//! An answer is `{"ok": …}` or `{"err": {file, position: [line, column] | null,
//! message, trace}}`. A request the host cannot read is answered with an `err`
//! whose `file` is `<protocol>`; a panic inside one request is caught and answered
//! the same way, so one bad script never takes the host down for the others.
//! Handles are indices in load order, kept for the life of the process.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use serde_json::value::RawValue;
use serde_json::{Value, json};

use crate::tools::{ScriptTools, Shared};
use crate::{GenInput, Limits, ScriptError, ScriptFamily};

/// The protocol's version; tbsim refuses a host that answers `hello` with another.
/// 2: a `generate` carries the company only when it changed.
pub const PROTOCOL: u64 = 2;

/// A request's result: a value, or JSON text already written.
enum Answer {
    Value(Value),
    Text(String),
}

/// The host's state: the corpus, the company, the loaded families and the
/// channel to tbsim.
pub struct Host {
    corpus: crate::ctx::Corpus,
    company: Option<crate::ctx::Company>,
    families: Vec<ScriptFamily>,
    chan: Shared,
}

impl std::fmt::Debug for Host {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Host")
            .field("families", &self.families.len())
            .finish()
    }
}

fn protocol_error(message: impl Into<String>) -> ScriptError {
    ScriptError::at_file("<protocol>", message)
}

fn field<'a>(req: &'a Value, name: &str) -> Result<&'a Value, ScriptError> {
    req.get(name)
        .ok_or_else(|| protocol_error(format!("the request has no `{name}`")))
}

fn str_of<'a>(req: &'a Value, name: &str) -> Result<&'a str, ScriptError> {
    field(req, name)?
        .as_str()
        .ok_or_else(|| protocol_error(format!("`{name}` must be a string")))
}

fn u64_of(v: &Value, name: &str) -> Result<u64, ScriptError> {
    field(v, name)?
        .as_u64()
        .ok_or_else(|| protocol_error(format!("`{name}` must be an unsigned integer")))
}

/// A `generate`'s `company` as the request writes it.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct CompanyLine<'a> {
    #[serde(borrow)]
    people: Vec<crate::ctx::Person<'a>>,
    #[serde(borrow)]
    rooms: Vec<crate::ctx::Room<'a>>,
}

impl CompanyLine<'_> {
    fn freeze(&self) -> crate::ctx::Company {
        crate::ctx::Company::new(&self.people, &self.rooms)
    }
}

/// A `generate`'s `company`: read into typed lists, never into JSON values.
fn company(text: &RawValue) -> Result<crate::ctx::Company, ScriptError> {
    let c: CompanyLine = serde_json::from_str(text.get()).map_err(|e| {
        protocol_error(format!(
            "`company` must be {{people: [{{key, name, department, position}}], rooms: [{{key, name, capacity}}]}}: {e}"
        ))
    })?;
    Ok(c.freeze())
}

/// A well-formed `generate`, read in one pass straight into its parts: the
/// request a host mostly gets, and reading it as JSON values first and then
/// again into its parts was a quarter of a small task's time in the host. It
/// takes what the general path takes (unknown members are ignored there too);
/// a line it refuses is read again by the general path, which says what is wrong.
#[derive(serde::Deserialize)]
struct GenerateLine<'a> {
    #[serde(borrow)]
    op: std::borrow::Cow<'a, str>,
    handle: u64,
    input: InputLine,
    params: Value,
    #[serde(borrow, default)]
    company: Option<CompanyLine<'a>>,
    #[serde(default)]
    trace: bool,
}

/// A `generate`'s `input`, as [`Host::input`] reads it from a JSON value.
#[derive(serde::Deserialize)]
struct InputLine {
    seed: u64,
    scenario: String,
    id: String,
    date: String,
    start: String,
    deadline: String,
    day: u32,
    mentor: String,
    #[serde(default = "start_release")]
    release: Value,
}

/// A missing `release` reads as the common case.
fn start_release() -> Value {
    json!("Start")
}

/// A request line as JSON, its `company` (the larger part of a `generate` that
/// carries one) kept as text for [`company`].
fn parse(line: &str) -> serde_json::Result<(Value, Option<Box<RawValue>>)> {
    let mut members: std::collections::BTreeMap<String, Box<RawValue>> =
        serde_json::from_str(line)?;
    let company = members.remove("company");
    let req = members
        .into_iter()
        .map(|(k, v)| Ok((k, serde_json::from_str(v.get())?)))
        .collect::<serde_json::Result<serde_json::Map<String, Value>>>()?;
    Ok((Value::Object(req), company))
}

impl Host {
    /// A host speaking over `chan`.
    pub fn new(chan: Shared) -> Host {
        Host {
            corpus: crate::ctx::Corpus::default(),
            company: None,
            families: Vec::new(),
            chan,
        }
    }

    /// Serves requests until the input ends.
    pub fn serve(&mut self) -> std::io::Result<()> {
        loop {
            let line = self.chan.lock().unwrap_or_else(|e| e.into_inner()).recv()?;
            let Some(line) = line else {
                return Ok(());
            };
            if line.trim().is_empty() {
                continue;
            }
            let answer = self.answer(&line);
            self.chan
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .send(&answer)?;
        }
    }

    /// Answers one request line with one answer line.
    pub fn answer(&mut self, line: &str) -> String {
        self.answer_by(line, true)
    }

    /// [`answer`](Self::answer), reading a `generate` in one pass when `direct`
    /// (always, but for tests that the two paths agree).
    fn answer_by(&mut self, line: &str, direct: bool) -> String {
        let fast = direct
            .then(|| serde_json::from_str::<GenerateLine>(line).ok())
            .flatten()
            .filter(|g| g.op == "generate");
        // `"trace": true`: tbsim asks where a request it saw kill a host died.
        let out = match fast {
            Some(g) => {
                let file = self.file_of(Some(g.handle), None);
                let _trace = crate::position::Trace::on(g.trace);
                self.caught(file, |h| h.generate(g))
            }
            None => match parse(line) {
                Ok((req, company)) => {
                    let file = self.file_of(
                        req.get("handle").and_then(Value::as_u64),
                        req.get("file").and_then(Value::as_str),
                    );
                    let _trace =
                        crate::position::Trace::on(req.get("trace") == Some(&Value::Bool(true)));
                    self.caught(file, |h| h.handle(req, company))
                }
                Err(e) => Err(protocol_error(format!("not a JSON request: {e}"))),
            },
        };
        let v = match out {
            // Already JSON text (a generated task): spliced in, not parsed again.
            Ok(Answer::Text(text)) => return format!("{{\"ok\":{text}}}"),
            Ok(Answer::Value(ok)) => json!({ "ok": ok }),
            Err(e) => json!({ "err": e.to_answer() }),
        };
        v.to_string()
    }

    /// The script a request is about: the family `handle` names, or the `file`
    /// a `load` gives.
    fn file_of(&self, handle: Option<u64>, file: Option<&str>) -> Option<String> {
        handle
            .and_then(|h| usize::try_from(h).ok())
            .and_then(|h| self.families.get(h))
            .map(|f| f.file().to_owned())
            .or_else(|| file.map(str::to_owned))
    }

    /// Runs one request, a panic inside it answered as an error about `file`
    /// (the script the request evaluates), when known.
    fn caught(
        &mut self,
        file: Option<String>,
        run: impl FnOnce(&mut Host) -> Result<Answer, ScriptError>,
    ) -> Result<Answer, ScriptError> {
        std::panic::catch_unwind(AssertUnwindSafe(|| run(self))).unwrap_or_else(|p| {
            let what = p
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| p.downcast_ref::<&str>().copied())
                .unwrap_or("a panic");
            // The interpreter panics when an allocation past the address-space
            // limit fails where it cannot return an error.
            let bound = if what.contains("memory") {
                " (the heap bound: the host's address space is limited, TBSIM_SCRIPT_MEMORY_MB)"
            } else {
                ""
            };
            let message = format!("the script host failed on this request: {what}{bound}");
            Err(match file {
                Some(f) => ScriptError {
                    // The statement the script was at, as for the other bounds.
                    position: crate::position::current(),
                    ..ScriptError::at_file(&f, message)
                },
                None => protocol_error(message),
            })
        })
    }

    /// A `generate` read by [`GenerateLine`]: what [`handle`](Self::handle) does
    /// with the same request, in the same order.
    fn generate(&mut self, g: GenerateLine<'_>) -> Result<Answer, ScriptError> {
        if let Some(c) = &g.company {
            self.company = Some(c.freeze());
        }
        let f = self.family_at(g.handle)?;
        let company = self.company.clone().ok_or_else(|| {
            protocol_error("no company: the first `generate` must carry `company`")
        })?;
        let i = g.input;
        let input = GenInput {
            seed: i.seed,
            scenario: i.scenario,
            id: i.id,
            date: i.date,
            start: i.start,
            deadline: i.deadline,
            day: i.day,
            company,
            mentor: i.mentor,
            release: i.release,
            corpus: self.corpus.clone(),
        };
        f.generate_json(input, &g.params).map(Answer::Text)
    }

    fn family(&self, req: &Value) -> Result<&ScriptFamily, ScriptError> {
        self.family_at(u64_of(req, "handle")?)
    }

    fn family_at(&self, h: u64) -> Result<&ScriptFamily, ScriptError> {
        usize::try_from(h)
            .ok()
            .and_then(|i| self.families.get(i))
            .ok_or_else(|| protocol_error(format!("no family has handle {h}")))
    }

    fn handle(
        &mut self,
        mut req: Value,
        company_text: Option<Box<RawValue>>,
    ) -> Result<Answer, ScriptError> {
        let op = str_of(&req, "op")?;
        if company_text.is_some() && op != "generate" {
            return Err(protocol_error(format!(
                "only `generate` carries a `company`, not `{op}`"
            )));
        }
        if op == "generate" {
            // The input is taken out of the request, not copied.
            if let Some(c) = company_text {
                // A company refused is forgotten: no later task sees a stale one.
                match company(&c) {
                    Ok(c) => self.company = Some(c),
                    Err(e) => {
                        self.company = None;
                        return Err(e);
                    }
                }
            }
            let f = self.family(&req)?;
            let input = self.input(req.get_mut("input").map(Value::take))?;
            return f
                .generate_json(input, field(&req, "params")?)
                .map(Answer::Text);
        }
        self.handle_value(&req).map(Answer::Value)
    }

    fn handle_value(&mut self, req: &Value) -> Result<Value, ScriptError> {
        match str_of(req, "op")? {
            "hello" => Ok(json!({ "protocol": PROTOCOL, "version": env!("CARGO_PKG_VERSION") })),
            "reference" => Ok(json!(crate::reference::markdown())),
            "corpus" => {
                let c = field(req, "corpus")?;
                if !c.is_object() {
                    return Err(protocol_error("`corpus` must be an object"));
                }
                self.corpus = crate::ctx::Corpus::new(c.clone());
                Ok(Value::Null)
            }
            "load" => {
                let f = ScriptFamily::from_source(
                    str_of(req, "file")?,
                    str_of(req, "source")?,
                    Limits::default(),
                )?;
                let defines: Vec<&str> = ["generate", "wrong_answers", "claims", "solve"]
                    .into_iter()
                    .filter(|n| f.defines(n))
                    .collect();
                let out = json!({
                    "handle": self.families.len(),
                    "key": f.key(),
                    "domain": f.domain(),
                    "milestone": f.milestone(),
                    "min_window_minutes": f.min_window_minutes(),
                    "variants": f.variants().iter().map(|v| json!({"key": v.key, "params": v.params})).collect::<Vec<_>>(),
                    "defines": defines,
                });
                self.families.push(f);
                Ok(out)
            }
            "wrong_answers" => {
                let f = self.family(req)?;
                let pairs = f.wrong_answers(field(req, "task")?, field(req, "scenario")?)?;
                Ok(json!(pairs))
            }
            "claims" => {
                let f = self.family(req)?;
                Ok(json!(f.claims(field(req, "task")?)?))
            }
            "solve" => {
                let f = self.family(req)?;
                let tools = ScriptTools::new(Arc::clone(&self.chan));
                f.solve(tools, field(req, "task")?)
            }
            other => Err(protocol_error(format!("unknown op `{other}`"))),
        }
    }

    fn input(&self, v: Option<Value>) -> Result<GenInput, ScriptError> {
        let mut v = v.ok_or_else(|| protocol_error("the request has no `input`"))?;
        let company = self.company.clone().ok_or_else(|| {
            protocol_error("no company: the first `generate` must carry `company`")
        })?;
        let release = v
            .get_mut("release")
            .map(Value::take)
            .unwrap_or_else(|| json!("Start"));
        let v = &v;
        let s = |n: &str| str_of(v, n).map(str::to_owned);
        Ok(GenInput {
            seed: u64_of(v, "seed")?,
            scenario: s("scenario")?,
            id: s("id")?,
            date: s("date")?,
            start: s("start")?,
            deadline: s("deadline")?,
            day: u32::try_from(u64_of(v, "day")?)
                .map_err(|_| protocol_error("`day` is out of range"))?,
            company,
            mentor: s("mentor")?,
            // Hosts older than the field's tbsim are not mixed with it (one build), but a
            // missing release reads as the common case.
            release,
            corpus: self.corpus.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A channel whose input is a fixed script of lines and whose output is kept.
    struct Scripted {
        input: std::collections::VecDeque<String>,
        output: Arc<std::sync::Mutex<Vec<String>>>,
    }

    impl crate::tools::Channel for Scripted {
        fn send(&mut self, line: &str) -> std::io::Result<()> {
            self.output.lock().unwrap().push(line.to_owned());
            Ok(())
        }
        fn recv(&mut self) -> std::io::Result<Option<String>> {
            Ok(self.input.pop_front())
        }
    }

    fn host_with(input: &[Value]) -> (Host, Arc<std::sync::Mutex<Vec<String>>>) {
        let output = Arc::new(std::sync::Mutex::new(Vec::new()));
        let chan: Box<dyn crate::tools::Channel> = Box::new(Scripted {
            input: input.iter().map(Value::to_string).collect(),
            output: Arc::clone(&output),
        });
        (Host::new(Arc::new(std::sync::Mutex::new(chan))), output)
    }

    fn host() -> Host {
        host_with(&[]).0
    }

    fn ok(h: &mut Host, req: Value) -> Value {
        let a: Value = serde_json::from_str(&h.answer(&req.to_string())).unwrap();
        a.get("ok").cloned().unwrap_or_else(|| panic!("{a}"))
    }

    fn err(h: &mut Host, line: &str) -> Value {
        let a: Value = serde_json::from_str(&h.answer(line)).unwrap();
        a.get("err").cloned().unwrap_or_else(|| panic!("{a}"))
    }

    const SRC: &str = r#"
FAMILY = {"key": "demo", "domain": "information_synthesis"}
VARIANTS = [{"key": "one", "params": {"n": 3}}]
def generate(ctx, params):
    r = ctx.rng("pick")
    return {"n": params["n"], "x": r.int(1, 1000), "company": ctx.corpus["company"], "id": ctx.id}
"#;

    fn input() -> Value {
        json!({"seed": 7, "scenario": "s", "id": "t", "date": "2025-10-01", "start": "09:00",
               "deadline": "17:00", "day": 1, "mentor": "npc/a"})
    }

    #[test]
    fn a_loaded_family_generates_the_same_answer_every_time() {
        let mut h = host();
        assert_eq!(
            ok(&mut h, json!({"op": "hello"}))["protocol"],
            json!(PROTOCOL)
        );
        ok(
            &mut h,
            json!({"op": "corpus", "corpus": {"company": "Acme"}}),
        );
        let l = ok(
            &mut h,
            json!({"op": "load", "file": "demo/family.star", "source": SRC}),
        );
        assert_eq!(l["handle"], json!(0));
        assert_eq!(l["variants"][0]["key"], json!("demo/one"));
        assert_eq!(l["defines"], json!(["generate"]));
        let req = json!({"op": "generate", "handle": 0, "input": input(), "params": {"n": 3},
                         "company": {"people": [], "rooms": []}});
        let a = ok(&mut h, req.clone());
        assert_eq!(a["company"], json!("Acme"));
        assert_eq!(a["id"], json!("t"));
        assert_eq!(ok(&mut h, req), a);
    }

    const PEOPLE: &str = r#"
FAMILY = {"key": "staff", "domain": "information_synthesis"}
VARIANTS = [{"key": "one"}]
def generate(ctx, params):
    return {"people": [p["name"] for p in ctx.people], "rooms": [r["key"] for r in ctx.rooms]}
"#;

    #[test]
    fn the_company_comes_with_a_generate_and_stays_until_the_next() {
        let mut h = host();
        ok(
            &mut h,
            json!({"op": "load", "file": "staff/family.star", "source": PEOPLE}),
        );
        let gen_with = |company: Option<Value>| {
            let mut r = json!({"op": "generate", "handle": 0, "input": input(), "params": {}});
            if let Some(c) = company {
                r["company"] = c;
            }
            r
        };
        let e = err(&mut h, &gen_with(None).to_string());
        assert!(e["message"].as_str().unwrap().contains("no company"), "{e}");
        let person = |name: &str| json!({"key": format!("npc/{name}"), "name": name, "department": "Ops", "position": "Analyst"});
        let acme = json!({"people": [person("Ann"), person("Bo")], "rooms": [{"key": "room/a", "name": "A", "capacity": 4}]});
        let a = ok(&mut h, gen_with(Some(acme)));
        assert_eq!(a, json!({"people": ["Ann", "Bo"], "rooms": ["room/a"]}));
        assert_eq!(ok(&mut h, gen_with(None)), a, "the company stays");
        let other = json!({"people": [person("Cy")], "rooms": []});
        let b = ok(&mut h, gen_with(Some(other)));
        assert_eq!(b, json!({"people": ["Cy"], "rooms": []}));
        assert_eq!(ok(&mut h, gen_with(None)), b, "the new one stays");
        for bad in [
            json!({"people": {}, "rooms": []}),
            json!({"people": [{"name": "Ann"}], "rooms": []}),
            json!({"people": [], "rooms": [{"key": "room/a", "name": "A", "capacity": -1}]}),
        ] {
            let e = err(&mut h, &gen_with(Some(bad.clone())).to_string());
            assert!(
                e["message"].as_str().unwrap().contains("`company` must be"),
                "{bad}: {e}"
            );
        }
        // A company refused is forgotten: no task is generated for a stale one.
        let e = err(&mut h, &gen_with(None).to_string());
        assert!(e["message"].as_str().unwrap().contains("no company"), "{e}");
        let e = err(
            &mut h,
            r#"{"op": "hello", "company": {"people": [], "rooms": []}}"#,
        );
        assert!(
            e["message"].as_str().unwrap().contains("only `generate`"),
            "{e}"
        );
    }

    const ECHO: &str = r#"
FAMILY = {"key": "echo", "domain": "information_synthesis"}
VARIANTS = [{"key": "one"}]
def generate(ctx, params):
    return {"ctx": [ctx.scenario, ctx.id, ctx.date, ctx.start, ctx.deadline, ctx.day,
                    ctx.mentor, ctx.release, ctx.rng("x").below(1000)],
            "people": ctx.people, "rooms": ctx.rooms, "params": params}
"#;

    #[test]
    fn a_generate_read_in_one_pass_is_answered_as_the_general_path_answers_it() {
        let load = json!({"op": "load", "file": "echo/family.star", "source": ECHO}).to_string();
        let (mut direct, mut general) = (host(), host());
        assert_eq!(direct.answer(&load), general.answer_by(&load, false));
        let person = |name: &str| json!({"key": format!("npc/{name}"), "name": name, "department": "Ops \"East\"", "position": "Analyst"});
        let company = json!({"people": [person("Ann"), person("Bö")], "rooms": [{"key": "room/a", "name": "A", "capacity": 4}]});
        let generate = |edit: &dyn Fn(&mut Value)| {
            let mut r =
                json!({"op": "generate", "handle": 0, "input": input(), "params": {"n": [1, "x"]}});
            edit(&mut r);
            r.to_string()
        };
        let lines = [
            generate(&|_| {}),
            generate(&|r| r["company"] = company.clone()),
            generate(&|_| {}),
            generate(&|r| r["input"]["release"] = json!({"At": "10:00"})),
            generate(&|r| r["input"]["release"] = Value::Null),
            generate(&|r| r["input"]["extra"] = json!(1)),
            generate(&|r| r["extra"] = json!([])),
            generate(&|r| r["handle"] = json!(9)),
            generate(&|r| r["input"]["day"] = json!(1u64 << 40)),
            generate(&|r| r["input"]["seed"] = json!(-1)),
            generate(&|r| {
                r["input"]
                    .as_object_mut()
                    .unwrap()
                    .remove("mentor")
                    .map(drop)
                    .unwrap_or(())
            }),
            generate(&|r| {
                r.as_object_mut()
                    .unwrap()
                    .remove("params")
                    .map(drop)
                    .unwrap_or(())
            }),
            generate(&|r| r["op"] = json!("claims")),
            generate(&|r| r["company"] = json!({"people": [{"name": "Ann"}], "rooms": []})),
            generate(&|_| {}),
            generate(&|r| r["company"] = company.clone()),
            r#"{"op":"generate","op":"generate","handle":0}"#.to_owned(),
        ];
        for line in &lines {
            let (a, b) = (direct.answer(line), general.answer_by(line, false));
            assert_eq!(a, b, "{line}");
        }
        // The lines above did reach the script, not only errors.
        assert!(direct.answer(&lines[2]).contains("Analyst"));
    }

    #[test]
    fn bad_requests_are_answered_with_located_errors_and_the_host_goes_on() {
        let mut h = host();
        assert_eq!(err(&mut h, "{not json")["file"], json!("<protocol>"));
        let e = err(&mut h, r#"{"op": "generate", "handle": 3}"#);
        assert!(e["message"].as_str().unwrap().contains("handle 3"), "{e}");
        let e = err(
            &mut h,
            &json!({"op": "load", "file": "bad/family.star", "source": "FAMILY = {\n  1 +\n"})
                .to_string(),
        );
        assert_eq!(e["file"], json!("bad/family.star"));
        assert!(e["position"].is_array(), "{e}");
        assert_eq!(
            ok(&mut h, json!({"op": "hello"}))["protocol"],
            json!(PROTOCOL)
        );
    }

    const SOLVER: &str = r#"
FAMILY = {"key": "demo", "domain": "information_synthesis"}
VARIANTS = [{"key": "one"}]
def generate(ctx, params):
    return {}
def claims(task):
    return task["title"].startswith("Demo")
def solve(tools, task):
    text = tools.read_file("drive/a.txt")
    reply = tools.send_message("npc/ann", "What is the code for " + text + "?")
    tools.write_file("workspace/answer.txt", reply.upper())
    return "done"
"#;

    #[test]
    fn solve_works_through_tool_round_trips_in_order() {
        let input = [
            json!({"op": "load", "file": "d/family.star", "source": SOLVER}),
            json!({"op": "claims", "handle": 0, "task": {"title": "Other"}}),
            json!({"op": "solve", "handle": 0, "task": {"title": "Demo task"}}),
            json!({"result": "alpha"}),
            json!({"result": "code 7"}),
            json!({"result": true}),
            json!({"op": "solve", "handle": 0, "task": {"title": "Demo task"}}),
            json!({"abort": "the day ended"}),
        ];
        let (mut h, out) = host_with(&input);
        h.serve().unwrap();
        let out: Vec<Value> = out
            .lock()
            .unwrap()
            .iter()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(
            out[0]["ok"]["defines"],
            json!(["generate", "claims", "solve"])
        );
        assert_eq!(out[1], json!({"ok": false}));
        assert_eq!(
            out[2],
            json!({"call": {"method": "read_file", "args": {"path": "drive/a.txt"}}})
        );
        assert_eq!(
            out[3]["call"]["args"],
            json!({"to": "npc/ann", "text": "What is the code for alpha?"})
        );
        assert_eq!(
            out[4]["call"],
            json!({"method": "write_file", "args": {"path": "workspace/answer.txt", "content": "CODE 7"}})
        );
        assert_eq!(out[5], json!({"ok": "done"}));
        // The second solve is stopped at its first call: an error naming the abort.
        assert_eq!(out[6]["call"]["method"], json!("read_file"));
        let e = &out[7]["err"];
        assert!(
            e["message"].as_str().unwrap().contains("the day ended"),
            "{e}"
        );
        assert_eq!(out.len(), 8);
    }
}
