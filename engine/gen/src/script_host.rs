//! The family-script host as tbsim sees it: family scripts are evaluated by
//! `tbsim-script`, a separate program (`engine/script`, a workspace of its own),
//! spoken to over a pipe, one JSON line each way per request.
//!
//! Why apart: the Starlark interpreter turns on serde_json's `arbitrary_precision`,
//! and cargo would turn it on for every crate of the workspace, changing how they
//! read numbers (tagged enums with numbers stop parsing). Kept apart, neither side
//! sees the other's features. The host is built twice from one crate: as the
//! program, spoken to over a pipe, and as a library beside it, which tbsim loads
//! into its own process (`script_embed.rs`) and hands the same lines.
//!
//! **Only the families tbsim ships run in its process.** A script is untrusted
//! unless its text is byte for byte one of [`crate::bundled::BUNDLED`] (compiled
//! into this binary); untrusted scripts are evaluated only by the program, a
//! child process under the kernel limits of [`crate::script_child`], so a hostile
//! script can at worst get its host killed, with an error naming the bound. The
//! embedded host saves 10-25% of a script task's generation time (pipe against in
//! process, `runs/bench/2026-11-27/script-gen-s18.md`), which matters for the
//! bundled families' benches and the suites built from them; it is not worth a
//! crash of tbsim for a stranger's script. A `solve` always needs the pipe (its
//! `tools` calls are lines back to tbsim). `TBSIM_SCRIPT_IN_PROCESS=0` sends
//! everything over the pipe (a wheel install, which ships only the program,
//! always does).
//!
//! Hosts are pooled: a request takes an idle host or starts one, so generation on
//! several threads evaluates scripts in parallel, and a host serves request after
//! request (the gate's hundreds of seeds pay for one start). A host that fails is
//! dropped (killed) and the next request starts another. A host loads a script
//! when first asked for it and knows it by its own handle (an embedded host
//! loads only the bundled ones). A host answers each request from
//! its inputs alone (the script, the task's identity and its seeded streams), so
//! which host answers never changes a byte of output.
//!
//! Where the host is: `TBSIM_SCRIPT_HOST`; else `tbsim-script` beside the running
//! program (an install); else the source tree's `target/script/release/tbsim-script`,
//! which is built (or rebuilt when its sources are newer) with cargo on first need.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, OnceLock};

use crate::script_child::{Doing, HostProcess};
use tbsim_scenario::untrusted::Links;

/// The largest `family.star` read (the host refuses larger scripts too).
pub const MAX_SCRIPT_BYTES: u64 = 1 << 20;

/// The largest family `README.md` read.
pub const MAX_README_BYTES: u64 = 256 << 10;

/// Reads a family folder's `README.md` as its script is read (see
/// [`ScriptFamily::load_dir`]); `None` when there is none.
pub fn read_readme(dir: &Path) -> Result<Option<String>, ScriptError> {
    let path = dir.join("README.md");
    match tbsim_scenario::untrusted::read_text(&path, MAX_README_BYTES, Links::Refuse) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.is_not_found() => Ok(None),
        Err(e) => Err(ScriptError::at_file(
            &path.display().to_string(),
            format!("cannot read the README: {}", e.into_io()),
        )),
    }
}

use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Value, json};

pub use crate::script_error::{ERROR_CODE, ScriptError};

/// The host protocol version this tbsim speaks (`tbsim_script::protocol::PROTOCOL`).
pub(crate) const PROTOCOL: u64 = 2;

/// What a generator is told about its task (the Rust generators' `Ctx`, as data),
/// borrowed from the generation in progress and written straight into the request.
/// The corpus is sent to each host once, and the company (people and rooms) when
/// it differs from the one that host was told last, not with every task.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GenInput<'a> {
    /// The suite seed.
    pub seed: u64,
    /// The scenario's name.
    pub scenario: &'a str,
    /// The task id (slug).
    pub id: &'a str,
    /// The task's day, `YYYY-MM-DD`.
    pub date: &'a str,
    /// Start of work, `HH:MM`.
    pub start: &'a str,
    /// The task's deadline, `HH:MM`.
    pub deadline: &'a str,
    /// Day of the scenario, from 1.
    pub day: u32,
    /// Everyone at the company, sent as `{key, name, department, position}` objects
    /// (in the request's `company`, when it changed).
    #[serde(skip)]
    pub people: &'a [tbsim_scenario::Person],
    /// The intern's manager (a person key).
    pub mentor: &'a str,
    /// How the suite releases the task.
    pub release: &'a tbsim_scenario::Release,
    /// The meeting rooms (`{key, name, capacity}`, with the people).
    #[serde(skip)]
    pub rooms: &'a [tbsim_scenario::Room],
}

/// A company as a host was told it: what scripts see of each person, and the rooms.
#[derive(Debug, PartialEq)]
struct CompanySent {
    people: Vec<[String; 4]>,
    rooms: Vec<tbsim_scenario::Room>,
}

impl CompanySent {
    fn of(people: &[tbsim_scenario::Person], rooms: &[tbsim_scenario::Room]) -> CompanySent {
        CompanySent {
            people: people
                .iter()
                .map(|p| {
                    [
                        p.key.clone(),
                        p.name.clone(),
                        p.department.clone(),
                        p.position.clone(),
                    ]
                })
                .collect(),
            rooms: rooms.to_vec(),
        }
    }

    /// Whether scripts would see this company in `people` and `rooms`.
    fn is(&self, people: &[tbsim_scenario::Person], rooms: &[tbsim_scenario::Room]) -> bool {
        self.rooms == rooms
            && self.people.len() == people.len()
            && self.people.iter().zip(people).all(|([k, n, d, pos], p)| {
                *k == p.key && *n == p.name && *d == p.department && *pos == p.position
            })
    }
}

/// People as scripts see them: no persona or reply texts (those are the NPCs').
fn people<S: serde::Serializer>(
    people: &[tbsim_scenario::Person],
    s: S,
) -> Result<S::Ok, S::Error> {
    #[derive(Serialize)]
    struct Seen<'a> {
        key: &'a str,
        name: &'a str,
        department: &'a str,
        position: &'a str,
    }
    s.collect_seq(people.iter().map(|p| Seen {
        key: &p.key,
        name: &p.name,
        department: &p.department,
        position: &p.position,
    }))
}

/// One declared variant.
#[derive(Debug, Clone, PartialEq)]
pub struct ScriptVariant {
    /// The full key, `<family>/<variant>`.
    pub key: String,
    /// Its parameters, a JSON object.
    pub params: Value,
}

/// A family script loaded into the host: its declarations, and the handle the
/// host knows it by.
#[derive(Debug)]
pub struct ScriptFamily {
    /// Its place in the pool's scripts (each host maps it to its own handle).
    index: usize,
    file: String,
    source: String,
    key: String,
    domain: String,
    milestone: Option<String>,
    min_window_minutes: Option<u32>,
    variants: Vec<ScriptVariant>,
    defines: Vec<String>,
}

impl ScriptFamily {
    /// Reads `dir/family.star` and loads it. The script is read as a scenario
    /// pack's files are: a regular file only (no FIFO, device or link, so nothing
    /// outside the folder is read or quoted), its size checked before reading.
    pub fn load_dir(dir: &Path) -> Result<ScriptFamily, ScriptError> {
        let path = dir.join("family.star");
        let file = path.display().to_string();
        let source = tbsim_scenario::untrusted::read_text(&path, MAX_SCRIPT_BYTES, Links::Refuse)
            .map_err(|e| {
            ScriptError::at_file(&file, format!("cannot read the script: {}", e.into_io()))
        })?;
        ScriptFamily::from_source(&file, &source)
    }

    /// Loads a script's text, `file` naming it in errors.
    pub fn from_source(file: &str, source: &str) -> Result<ScriptFamily, ScriptError> {
        let (index, d) = pool().load(file, source)?;
        let str_of = |k: &str| d.get(k).and_then(Value::as_str).map(str::to_owned);
        let shape = || ScriptError::host(format!("the host's `load` answer is malformed: {d}"));
        let variants = d
            .get("variants")
            .and_then(Value::as_array)
            .ok_or_else(shape)?
            .iter()
            .map(|v| {
                Some(ScriptVariant {
                    key: v.get("key")?.as_str()?.to_owned(),
                    params: v.get("params")?.clone(),
                })
            })
            .collect::<Option<Vec<_>>>()
            .ok_or_else(shape)?;
        Ok(ScriptFamily {
            index,
            file: file.to_owned(),
            source: source.to_owned(),
            key: str_of("key").ok_or_else(shape)?,
            domain: str_of("domain").ok_or_else(shape)?,
            milestone: str_of("milestone"),
            min_window_minutes: d
                .get("min_window_minutes")
                .and_then(Value::as_u64)
                .and_then(|m| u32::try_from(m).ok()),
            variants,
            defines: d
                .get("defines")
                .and_then(Value::as_array)
                .map(|l| {
                    l.iter()
                        .filter_map(|x| x.as_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default(),
        })
    }

    /// The script's path as given.
    pub fn file(&self) -> &str {
        &self.file
    }
    /// The script's text.
    pub fn source(&self) -> &str {
        &self.source
    }
    /// `FAMILY["key"]`.
    pub fn key(&self) -> &str {
        &self.key
    }
    /// `FAMILY["domain"]`.
    pub fn domain(&self) -> &str {
        &self.domain
    }
    /// `FAMILY["milestone"]`, if declared.
    pub fn milestone(&self) -> Option<&str> {
        self.milestone.as_deref()
    }
    /// `FAMILY["min_window_minutes"]`, if declared.
    pub fn min_window_minutes(&self) -> Option<u32> {
        self.min_window_minutes
    }
    /// The declared variants.
    pub fn variants(&self) -> &[ScriptVariant] {
        &self.variants
    }
    /// Whether the script defines a top-level function `name`.
    pub fn defines(&self, name: &str) -> bool {
        self.defines.iter().any(|d| d == name)
    }

    /// Runs `generate(ctx, params)` for one task; returns what it returned, as
    /// JSON text (parsed once, by the caller, into the shape it wants).
    pub fn generate(&self, input: &GenInput<'_>, params: &Value) -> Result<OkText, ScriptError> {
        #[derive(Serialize)]
        struct Generate<'a> {
            op: &'static str,
            handle: u64,
            input: &'a GenInput<'a>,
            params: &'a Value,
            #[serde(skip_serializing_if = "Option::is_none")]
            company: Option<Company<'a>>,
        }
        #[derive(Serialize)]
        struct Company<'a> {
            #[serde(serialize_with = "people")]
            people: &'a [tbsim_scenario::Person],
            rooms: &'a [tbsim_scenario::Room],
        }
        let pool = pool();
        let mut h = pool.host(Some(self.index), false)?;
        let handle = h.handle(self.index, &self.file)?;
        // The host keeps the company it was given last (the tasks of a scenario
        // share one): it is sent only when it changed, or after a failed request.
        let sent = h.company.take().filter(|c| c.is(input.people, input.rooms));
        let known = sent.is_some();
        // A broken host is dropped (and killed); one that answered goes back.
        let doing = Doing {
            file: &self.file,
            op: "generate",
        };
        let out = match h.exchange(
            &Generate {
                op: "generate",
                handle,
                input,
                params,
                company: (!known).then_some(Company {
                    people: input.people,
                    rooms: input.rooms,
                }),
            },
            doing,
        ) {
            Ok(out) => out,
            Err(mut e) => {
                // Again with the company: the host that takes it may not have one.
                let again = serde_json::to_value(Generate {
                    op: "generate",
                    handle,
                    input,
                    params,
                    company: Some(Company {
                        people: input.people,
                        rooms: input.rooms,
                    }),
                });
                if let Ok(again) = again {
                    pool.place(&mut e, Some(self.index), again, doing);
                }
                return Err(e);
            }
        };
        if out.is_ok() {
            h.company = Some(sent.unwrap_or_else(|| CompanySent::of(input.people, input.rooms)));
        }
        pool.give_back(h);
        out
    }

    /// Runs `wrong_answers(task, scenario)` when the script defines it (else no
    /// answers): `(path, content)` pairs that must pass no checkpoint of `task`.
    pub fn wrong_answers(
        &self,
        task: &Value,
        scenario: &Value,
    ) -> Result<Vec<(String, String)>, ScriptError> {
        if !self.defines("wrong_answers") {
            return Ok(Vec::new());
        }
        let out = pool().call(self, "wrong_answers", |handle| {
            json!({"op": "wrong_answers", "handle": handle, "task": task, "scenario": scenario})
        })?;
        out.as_array()
            .and_then(|l| {
                l.iter()
                    .map(|p| {
                        let p = p.as_array()?;
                        Some((
                            p.first()?.as_str()?.to_owned(),
                            p.get(1)?.as_str()?.to_owned(),
                        ))
                    })
                    .collect::<Option<Vec<_>>>()
            })
            .ok_or_else(|| {
                ScriptError::at_file(
                    &self.file,
                    "`wrong_answers` must return a list of [path, content] pairs",
                )
            })
    }
}

/// What the host says while a `solve` runs.
#[derive(Debug, Clone, PartialEq)]
pub enum SolveStep {
    /// `tools.<method>(args)`: answer with [`Solving::reply`].
    Call {
        /// The `tools` method.
        method: String,
        /// Its arguments.
        args: Value,
    },
    /// `solve` returned (or failed).
    Done(Result<Value, ScriptError>),
}

/// A `solve` in progress: a host taken from the pool for its whole length (the
/// script is blocked inside it, waiting for each answer).
#[derive(Debug)]
pub struct Solving {
    host: Option<Host>,
    file: String,
}

impl Solving {
    /// Starts `family`'s `solve(tools, task)`; its first step.
    pub fn start(family: &ScriptFamily, task: &Value) -> Result<(Solving, SolveStep), ScriptError> {
        let h = pool().host(Some(family.index), true)?;
        let handle = h.handle(family.index, &family.file)?;
        let mut s = Solving {
            host: Some(h),
            file: family.file.clone(),
        };
        let step = s.send(&json!({"op": "solve", "handle": handle, "task": task}))?;
        Ok((s, step))
    }

    /// Answers the pending call with `result`; the next step.
    pub fn reply(&mut self, result: Value) -> Result<SolveStep, ScriptError> {
        self.send(&json!({ "result": result }))
    }

    fn send(&mut self, msg: &Value) -> Result<SolveStep, ScriptError> {
        let Some(h) = self.host.as_mut() else {
            return Err(ScriptError::host("this solve has already ended"));
        };
        let doing = Doing {
            file: &self.file,
            op: "solve",
        };
        // A host that failed (killed at a bound, or gone) is not used again.
        let raw = match h.exchange_raw(msg, doing) {
            Ok(raw) => raw,
            Err(e) => {
                self.host = None;
                return Err(e);
            }
        };
        let step = match raw {
            Raw::Call(method, args) => return Ok(SolveStep::Call { method, args }),
            Raw::Answer(a) => SolveStep::Done(a.and_then(|ok| value_of(ok.get()))),
        };
        // Finished: the host goes back to the pool.
        if let Some(h) = self.host.take() {
            pool().give_back(h);
        }
        Ok(step)
    }

    /// Whether `solve` is still running.
    pub fn running(&self) -> bool {
        self.host.is_some()
    }
}

impl Drop for Solving {
    fn drop(&mut self) {
        // The run ended with the script still waiting: tell it, so it stops with an
        // error and the host can serve others; a host that does not stop is killed.
        for _ in 0..4 {
            if self.host.is_none() {
                return;
            }
            match self.send(&json!({"abort": "the run ended"})) {
                Ok(SolveStep::Done(_)) | Err(_) => break,
                Ok(SolveStep::Call { .. }) => {}
            }
        }
        self.host = None;
    }
}

/// The script API reference, generated by the host from its code (Markdown).
pub fn reference() -> Result<String, ScriptError> {
    let v = pool().call_any(&json!({"op": "reference"}))?;
    v.as_str()
        .map(str::to_owned)
        .ok_or_else(|| ScriptError::host("the host's reference is not text"))
}

/// Asks `family`'s `claims(task)`: `None` when the script has no `claims`.
pub fn claims(family: &ScriptFamily, task: &Value) -> Result<Option<bool>, ScriptError> {
    if !family.defines("claims") {
        return Ok(None);
    }
    let v = pool().call(
        family,
        "claims",
        |handle| json!({"op": "claims", "handle": handle, "task": task}),
    )?;
    Ok(v.as_bool())
}

/// One line from the host: a `tools` call or a request's answer (its JSON text).
enum Raw {
    Call(String, Value),
    Answer(Result<OkText, ScriptError>),
}

/// A request's `ok` as the host wrote it: JSON text that whoever asked reads once,
/// into the type it wants, which also proves it one JSON value.
#[derive(Debug)]
pub struct OkText {
    line: String,
    at: std::ops::Range<usize>,
}

impl OkText {
    /// The text.
    pub fn get(&self) -> &str {
        &self.line[self.at.clone()]
    }

    /// The `ok` of an answer line written `{"ok":TEXT}`, as the host writes every
    /// answer, taken as it stands: reading TEXT into its type (which a generated
    /// task of tens of kilobytes is anyway) is what checks it is one JSON value, so
    /// the line is not read twice. Any other line is given back.
    fn of_line(line: String) -> Result<OkText, String> {
        let end = line.strip_suffix('\n').unwrap_or(&line).len();
        match line[..end]
            .strip_prefix("{\"ok\":")
            .and_then(|t| t.strip_suffix('}'))
        {
            Some(text) => {
                let at = 6..6 + text.len();
                Ok(OkText { line, at })
            }
            None => Err(line),
        }
    }

    fn of_raw(raw: Box<RawValue>) -> OkText {
        let line = String::from(Box::<str>::from(raw));
        OkText {
            at: 0..line.len(),
            line,
        }
    }
}

fn value_of(raw: &str) -> Result<Value, ScriptError> {
    serde_json::from_str(raw).map_err(|e| {
        ScriptError::host(format!("the host answered something that is not JSON: {e}"))
    })
}

/// One running host: the program on a pipe, or the library in this process.
#[derive(Debug)]
struct Host {
    link: Link,
    /// Its handle for each of the pool's scripts it has seen (a prefix, in
    /// order): `None` for a script it must not load (an embedded host is given
    /// only bundled scripts).
    handles: Vec<Option<u64>>,
    /// The company it was told last.
    company: Option<CompanySent>,
}

/// How requests reach a host.
#[derive(Debug)]
enum Link {
    Pipe(HostProcess),
    Embedded(crate::script_embed::Embedded),
}

impl Host {
    fn start(program: &Path, corpus: &Value) -> Result<Host, ScriptError> {
        let link = Link::Pipe(HostProcess::start(program)?);
        Host::greet(link, corpus, &program.display().to_string())
    }

    /// Its handle for the pool's script `index`.
    fn handle(&self, index: usize, file: &str) -> Result<u64, ScriptError> {
        self.handles.get(index).copied().flatten().ok_or_else(|| {
            ScriptError::at_file(file, "this family-script host has not loaded the script")
        })
    }

    /// Loads the pool's script `index` (`script`) unless it has; scripts are
    /// loaded when first needed, so a host restarted after a failure loads only
    /// what it is asked for. An embedded host never loads a script tbsim does
    /// not ship.
    fn ensure(&mut self, index: usize, script: &Script) -> Result<(), ScriptError> {
        if self.handles.len() <= index {
            self.handles.resize(index + 1, None);
        }
        if self.handles[index].is_some() {
            return Ok(());
        }
        if !self.on_pipe() && !script.bundled {
            return Err(ScriptError::at_file(
                &script.file,
                "an untrusted script was sent to the in-process host",
            ));
        }
        let loaded = self.request_as(
            &json!({"op": "load", "file": script.file, "source": script.source}),
            Doing {
                file: &script.file,
                op: "load",
            },
        )?;
        let handle = loaded
            .get("handle")
            .and_then(Value::as_u64)
            .ok_or_else(|| ScriptError::host("the host's `load` answer has no handle"))?;
        self.handles[index] = Some(handle);
        Ok(())
    }

    fn embedded(
        lib: &'static crate::script_embed::Library,
        corpus: &Value,
    ) -> Result<Host, ScriptError> {
        let e = crate::script_embed::Embedded::open(lib)
            .ok_or_else(|| ScriptError::host("the family-script library did not open a host"))?;
        Host::greet(Link::Embedded(e), corpus, "the family-script library")
    }

    /// Checks the host's protocol and gives it the corpus.
    fn greet(link: Link, corpus: &Value, what: &str) -> Result<Host, ScriptError> {
        let mut h = Host {
            link,
            handles: Vec::new(),
            company: None,
        };
        let hello = h.request(&json!({"op": "hello"}))?;
        if hello.get("protocol").and_then(Value::as_u64) != Some(PROTOCOL) {
            return Err(ScriptError::host(format!(
                "{what} speaks another protocol ({hello}); rebuild it with tools/script-host.sh"
            )));
        }
        h.request(&json!({"op": "corpus", "corpus": corpus}))?;
        Ok(h)
    }

    fn on_pipe(&self) -> bool {
        matches!(self.link, Link::Pipe(_))
    }

    /// Whether the host has worked long enough to be retired (see
    /// [`HostProcess::worn`]).
    fn worn(&self) -> bool {
        matches!(&self.link, Link::Pipe(p) if p.worn())
    }

    /// Sends one request and reads its answer. An `Err` from the script is
    /// `Ok(Err(_))`; a broken host is `Err(_)`.
    fn exchange(
        &mut self,
        req: &(impl Serialize + ?Sized),
        doing: Doing<'_>,
    ) -> Result<Result<OkText, ScriptError>, ScriptError> {
        match self.exchange_raw(req, doing)? {
            Raw::Answer(a) => Ok(a),
            Raw::Call(m, _) => Err(ScriptError::host(format!(
                "the host asked for `tools.{m}` outside a solve"
            ))),
        }
    }

    fn exchange_raw(
        &mut self,
        req: &(impl Serialize + ?Sized),
        doing: Doing<'_>,
    ) -> Result<Raw, ScriptError> {
        let line = serde_json::to_string(req)
            .map_err(|e| ScriptError::host(format!("a request could not be written: {e}")))?;
        let answer = match &mut self.link {
            Link::Embedded(e) => e.answer(&line),
            Link::Pipe(p) => p.exchange(&line, doing)?,
        };
        let answer = match OkText::of_line(answer) {
            Ok(ok) => return Ok(Raw::Answer(Ok(ok))),
            Err(line) => line,
        };
        // The answer's members stay JSON text: an `ok` is parsed once, by whoever
        // asked, into the type it wants (a generated task straight into its parts).
        let mut v: std::collections::BTreeMap<String, Box<RawValue>> =
            serde_json::from_str(&answer).map_err(|e| {
                ScriptError::host(format!("the host answered something that is not JSON: {e}"))
            })?;
        let (ok, err, call) = (v.remove("ok"), v.remove("err"), v.remove("call"));
        match (ok, err, call) {
            (Some(ok), None, None) if v.is_empty() => Ok(Raw::Answer(Ok(OkText::of_raw(ok)))),
            (None, Some(err), None) if v.is_empty() => Ok(Raw::Answer(Err(
                ScriptError::from_answer(&value_of(err.get())?),
            ))),
            (None, None, Some(c)) if v.is_empty() => {
                let c = value_of(c.get())?;
                Ok(Raw::Call(
                    c.get("method")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_owned(),
                    c.get("args").cloned().unwrap_or(Value::Null),
                ))
            }
            _ => Err(ScriptError::host(format!(
                "the host's answer is malformed: {}",
                answer.trim_end()
            ))),
        }
    }

    fn request(&mut self, req: &Value) -> Result<Value, ScriptError> {
        self.request_as(
            req,
            Doing {
                file: "<host>",
                op: req.get("op").and_then(Value::as_str).unwrap_or("request"),
            },
        )
    }

    fn request_as(&mut self, req: &Value, doing: Doing<'_>) -> Result<Value, ScriptError> {
        value_of(self.exchange(req, doing)??.get())
    }
}

/// A script the pool's hosts load, in order.
#[derive(Debug, Clone)]
struct Script {
    file: String,
    source: String,
    /// Byte for byte a family tbsim ships: the only kind an embedded host loads.
    bundled: bool,
}

/// Whether `source` is one of the script families compiled into tbsim.
fn is_bundled(source: &str) -> bool {
    crate::bundled::BUNDLED.iter().any(|(_, s, _)| *s == source)
}

/// The hosts and the scripts every host must have loaded, in order.
#[derive(Debug, Default)]
struct Pool {
    idle: Mutex<Vec<Host>>,
    scripts: Mutex<Vec<Script>>,
    program: OnceLock<Result<PathBuf, ScriptError>>,
}

/// Whether the bundled script families generate in this process (an embedded
/// host, answering on the calling thread) rather than over a pipe to a host
/// program: the library is beside the host program and `TBSIM_SCRIPT_IN_PROCESS`
/// is not `0`. Other scripts never do. Locates (or builds) the host program on
/// first call.
pub fn generates_in_process() -> bool {
    pool().library().is_some()
}

/// The host program tbsim uses (located, or built, once per process).
#[cfg(test)]
pub(crate) fn program() -> Result<&'static Path, ScriptError> {
    pool().program()
}

fn pool() -> &'static Pool {
    static P: OnceLock<Pool> = OnceLock::new();
    P.get_or_init(Pool::default)
}

impl Pool {
    fn program(&self) -> Result<&Path, ScriptError> {
        self.program
            .get_or_init(locate)
            .as_ref()
            .map(PathBuf::as_path)
            .map_err(Clone::clone)
    }

    /// The library to embed hosts from, when there is one beside the program.
    fn library(&self) -> Option<&'static crate::script_embed::Library> {
        let program = self.program().ok()?;
        crate::script_embed::Library::beside(program, PROTOCOL)
    }

    /// An idle host, or a new one: in this process when `embedded` may be (a
    /// request of a bundled script, or of none) and the library is there, else
    /// on the pipe.
    fn take(&self, embedded: bool) -> Result<Host, ScriptError> {
        let lib = if embedded { self.library() } else { None };
        let idle = {
            let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
            // An embedded host when one will do; a pipe otherwise.
            let want = |h: &Host| h.on_pipe() == lib.is_none();
            idle.iter().rposition(want).map(|i| idle.swap_remove(i))
        };
        match (idle, lib) {
            (Some(h), _) => Ok(h),
            (None, Some(lib)) => Host::embedded(lib, corpus_json()),
            (None, None) => Host::start(self.program()?, corpus_json()),
        }
    }

    /// An idle host, or a new one, caught up with the pool's scripts, for a
    /// request of script `index` (or of none): on the pipe when `pipe` (a
    /// `solve`) or when the script is not bundled. Only the scripts it lacks are
    /// copied (usually none: they are a few hundred kilobytes).
    fn host(&self, index: Option<usize>, pipe: bool) -> Result<Host, ScriptError> {
        let embedded = !pipe && {
            let scripts = self.scripts.lock().unwrap_or_else(|e| e.into_inner());
            index.is_none_or(|i| scripts.get(i).is_some_and(|s| s.bundled))
        };
        let mut h = self.take(embedded)?;
        if let Some(i) = index
            && h.handles.get(i).copied().flatten().is_none()
        {
            let script = {
                let scripts = self.scripts.lock().unwrap_or_else(|e| e.into_inner());
                scripts.get(i).cloned()
            };
            if let Some(script) = script {
                h.ensure(i, &script)?;
            }
        }
        Ok(h)
    }

    /// Puts a host that answered back in the pool, unless it is worn.
    fn give_back(&self, h: Host) {
        if h.worn() {
            return;
        }
        self.idle.lock().unwrap_or_else(|e| e.into_inner()).push(h);
    }

    /// Where a script was when its host died at a bound that left no position (the
    /// interpreter's own stack overflowing on a deep value: no code runs there to
    /// say the line). `req` goes again, traced (`"trace": true`: each statement's
    /// position written as it begins), to a host on the pipe that has loaded the
    /// script; scripts are hermetic, so it dies at the same statement, and `e`
    /// takes the last position written. `e` is left as it was otherwise.
    fn place(&self, e: &mut ScriptError, index: Option<usize>, req: Value, doing: Doing<'_>) {
        if e.position.is_some() || !e.message.contains(crate::script_child::STACK_OVERFLOW) {
            return;
        }
        let Value::Object(mut m) = req else {
            return;
        };
        m.insert("trace".into(), Value::Bool(true));
        let Ok(mut h) = self.host(index, true) else {
            return;
        };
        if let Some(i) = index {
            let Ok(handle) = h.handle(i, doing.file) else {
                return;
            };
            m.insert("handle".into(), handle.into());
        }
        // The traced host is dropped either way: it died, or it answered a request
        // the pool did not count (a load it holds no record of).
        if let Err(traced) = h.exchange(&Value::Object(m), doing)
            && traced.message.contains(crate::script_child::STACK_OVERFLOW)
        {
            e.position = traced.position;
        }
    }

    /// A request of no script (`reference`).
    fn call_any(&self, req: &Value) -> Result<Value, ScriptError> {
        let mut h = self.host(None, false)?;
        let out = h.exchange(
            req,
            Doing {
                file: "<host>",
                op: req.get("op").and_then(Value::as_str).unwrap_or("request"),
            },
        )?;
        self.give_back(h);
        value_of(out?.get())
    }

    /// A request `op` of `family`'s script, written by `req` given the host's
    /// handle for it.
    fn call(
        &self,
        family: &ScriptFamily,
        op: &str,
        req: impl FnOnce(u64) -> Value,
    ) -> Result<Value, ScriptError> {
        let mut h = self.host(Some(family.index), false)?;
        let handle = h.handle(family.index, &family.file)?;
        let doing = Doing {
            file: &family.file,
            op,
        };
        let req = req(handle);
        // A broken host is dropped (and killed); one that answered goes back.
        let out = match h.exchange(&req, doing) {
            Ok(out) => out,
            Err(mut e) => {
                self.place(&mut e, Some(family.index), req, doing);
                return Err(e);
            }
        };
        self.give_back(h);
        value_of(out?.get())
    }

    /// Loads a script into a host (and, from then on, into every host that
    /// serves it); its index in the pool and the host's answer.
    fn load(&self, file: &str, source: &str) -> Result<(usize, Value), ScriptError> {
        let bundled = is_bundled(source);
        // Held across the load: the script's index is the next one.
        let mut scripts = self.scripts.lock().unwrap_or_else(|e| e.into_inner());
        let mut h = self.take(bundled)?;
        h.handles.resize(scripts.len().max(h.handles.len()), None);
        let req = json!({"op": "load", "file": file, "source": source});
        let doing = Doing { file, op: "load" };
        let out = match h.exchange(&req, doing) {
            Ok(out) => out,
            Err(mut e) => {
                self.place(&mut e, None, req, doing);
                return Err(e);
            }
        };
        let index = scripts.len();
        if let Ok(ok) = &out {
            let handle = value_of(ok.get())?
                .get("handle")
                .and_then(Value::as_u64)
                .ok_or_else(|| ScriptError::host("the host's `load` answer has no handle"))?;
            scripts.push(Script {
                file: file.to_owned(),
                source: source.to_owned(),
                bundled,
            });
            h.handles.resize(index, None);
            h.handles.push(Some(handle));
        }
        self.give_back(h);
        Ok((index, value_of(out?.get())?))
    }
}

/// The host program: see the module docs for the order searched.
fn locate() -> Result<PathBuf, ScriptError> {
    if let Some(p) = std::env::var_os("TBSIM_SCRIPT_HOST") {
        let p = PathBuf::from(p);
        return if p.is_file() {
            Ok(p)
        } else {
            Err(ScriptError::host(format!(
                "TBSIM_SCRIPT_HOST names {}, which is not a file",
                p.display()
            )))
        };
    }
    let exe = std::env::current_exe().ok();
    let name = format!("tbsim-script{}", std::env::consts::EXE_SUFFIX);
    if let Some(beside) = exe.as_deref().and_then(Path::parent).map(|d| d.join(&name))
        && beside.is_file()
    {
        return Ok(beside);
    }
    // The source tree this tbsim was built from, if it is still there.
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .and_then(Path::parent)
        .map(Path::to_path_buf);
    let Some(root) = root.filter(|r| r.join("engine/script/Cargo.toml").is_file()) else {
        return Err(ScriptError::host(format!(
            "no family-script host: put `{name}` beside tbsim or name it in TBSIM_SCRIPT_HOST"
        )));
    };
    let target = root.join("target/script");
    let program = target.join("release").join(&name);
    if !program.is_file() || newest_source(&root) > modified(&program) {
        build(&root, &target)?;
    }
    Ok(program)
}

fn modified(p: &Path) -> Option<std::time::SystemTime> {
    std::fs::metadata(p).and_then(|m| m.modified()).ok()
}

/// The newest modification among the host's sources (its crate and tbsim-core's).
fn newest_source(root: &Path) -> Option<std::time::SystemTime> {
    fn walk(dir: &Path, newest: &mut Option<std::time::SystemTime>) {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, newest);
            } else if let Some(m) = modified(&p) {
                *newest = (*newest).max(Some(m));
            }
        }
    }
    let mut newest = None;
    for d in ["engine/script/src", "engine/core/src"] {
        walk(&root.join(d), &mut newest);
    }
    for f in ["engine/script/Cargo.toml", "engine/script/Cargo.lock"] {
        newest = newest.max(modified(&root.join(f)));
    }
    newest
}

fn build(root: &Path, target: &Path) -> Result<(), ScriptError> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    eprintln!("tbsim: building the family-script host (engine/script), once");
    let status = Command::new(&cargo)
        .args(["build", "--release", "--quiet", "--manifest-path"])
        .arg(root.join("engine/script/Cargo.toml"))
        .arg("--target-dir")
        .arg(target)
        // The host is its own workspace: nothing of an outer cargo run applies.
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("CARGO_BUILD_TARGET_DIR")
        .stdout(Stdio::null())
        .status()
        .map_err(|e| {
            ScriptError::host(format!(
                "cannot run cargo to build the family-script host: {e}; build it with tools/script-host.sh"
            ))
        })?;
    if status.success() {
        Ok(())
    } else {
        Err(ScriptError::host(format!(
            "building the family-script host failed ({status}); see tools/script-host.sh"
        )))
    }
}

/// The corpus as scripts see it (`ctx.corpus`): built once.
pub(crate) fn corpus_json() -> &'static serde_json::Value {
    use super::corpus;
    static C: OnceLock<serde_json::Value> = OnceLock::new();
    C.get_or_init(|| {
        serde_json::json!({
            "company": corpus::COMPANY,
            "kb_fix_manual": corpus::fill(corpus::KB_FIX_MANUAL, &[("company", corpus::COMPANY)]),
            "articles": corpus::ARTICLES
                .iter()
                .map(|a| serde_json::json!({"stem": a.stem, "title": a.title, "body": a.body}))
                .collect::<Vec<_>>(),
            "supplier_prefixes": corpus::SUPPLIER_PREFIXES,
            "supplier_suffixes": corpus::SUPPLIER_SUFFIXES,
            "catalogue": corpus::CATALOGUE
                .iter()
                .map(|c| serde_json::json!({"name": c.name, "min_price": c.min_price, "max_price": c.max_price}))
                .collect::<Vec<_>>(),
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_ok_line_is_taken_as_it_stands_and_read_once_by_whoever_asked() {
        let ok = OkText::of_line("{\"ok\":{\"a\":[1,\"}\"]}}\n".into()).unwrap();
        assert_eq!(ok.get(), "{\"a\":[1,\"}\"]}");
        assert_eq!(value_of(ok.get()).unwrap(), json!({"a": [1, "}"]}));
        assert_eq!(
            OkText::of_line("{\"ok\":null}".into()).unwrap().get(),
            "null"
        );
        // Lines of another shape go the general way.
        for other in [
            "{\"err\":{}}\n",
            "{ \"ok\":1}\n",
            "{\"ok\":1\n",
            "{\"call\":{}}",
        ] {
            assert_eq!(OkText::of_line(other.into()).unwrap_err(), other);
        }
        // A line that only looks like one `ok` is refused when its text is read.
        for bad in [
            "{\"ok\":1,\"err\":2}",
            "{\"ok\":{}}{\"ok\":{}}",
            "{\"ok\":}",
        ] {
            let ok = OkText::of_line(bad.into()).unwrap();
            assert!(value_of(ok.get()).is_err(), "{bad}");
        }
        let raw = RawValue::from_string("[1, 2]".into()).unwrap();
        assert_eq!(OkText::of_raw(raw).get(), "[1, 2]");
    }
}
