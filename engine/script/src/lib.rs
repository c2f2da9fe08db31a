//! # tbsim-script — meta-task families written as hermetic Starlark scripts
//!
//! A script family is a folder `<name>/family.star` (plus a `README.md`). The
//! script declares `FAMILY` (key, functional domain, milestone), `VARIANTS`
//! (key, parameters) and `generate(ctx, params)`, which returns the instance as
//! plain data in the shape of the scenario format (see `docs/authoring.md`);
//! `wrong_answers(task, scenario)` is optional. This crate loads and runs scripts;
//! `tbsim-gen` turns what `generate` returns into scenario parts.
//!
//! Scripts are hermetic: no `load()`, no `print`, no clock, no file or network
//! access, and the only randomness is `ctx.rng(purpose)`, a stream keyed exactly
//! like a Rust generator's (`gen/<scenario>/<task id>/<purpose>`). Every
//! evaluation is bounded in ticks (calls and loop iterations), heap and call
//! depth, so a hostile script fails with an error instead of hanging the engine.
//! Every error is [`ScriptError`] (code TB0026), naming file:line:column.

#![deny(unsafe_code)]
#![warn(missing_docs)]

// The allocator tbsim itself uses (engine/cli/src/main.rs; measured there, in
// runs/bench/2026-11-27/gate-speed-s15.md), for the program and the library
// alike: the host allocates a value per Starlark operation, and in process the
// system allocator took up to 1.6x mimalloc's wall time per task (kb_fix_script;
// runs/bench/2026-11-27/script-gen-s18.md). Local-dynamic TLS (Cargo.toml), the
// model meant for a library loaded with dlopen.
#[global_allocator]
static ALLOCATOR: position::Guarded<mimalloc::MiMalloc> = position::Guarded(mimalloc::MiMalloc);

mod ctx;
pub mod depth;
pub mod embed;
mod json_text;
pub mod position;
pub mod protocol;
pub mod reference;
pub mod tools;

use std::path::Path;
use std::sync::OnceLock;
use std::time::Instant;

use starlark::environment::{FrozenModule, Globals, GlobalsBuilder, LibraryExtension, Module};
use starlark::eval::Evaluator;
use starlark::syntax::{AstModule, Dialect};
use starlark::values::Value;

pub use ctx::{Company, GenInput, Person, Room, ScriptCtx, ScriptRng};
pub use tbsim_core::script_error::{ERROR_CODE, ScriptError};

/// Bounds on one evaluation (loading a script, or one call into it).
///
/// These are the interpreter's own checks, which name the script's line. They are
/// not the last word: the heap and the clock are looked at every 1,000 ticks, and
/// one operation between two looks can allocate or run for any amount. The
/// program host therefore also runs under limits the kernel enforces, set by tbsim
/// (`engine/gen/src/script_host.rs`): address space, CPU, and a wall-clock
/// deadline after which it is killed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Function calls plus loop iterations.
    pub ticks: u64,
    /// Bytes of the Starlark heap (checked periodically, so a little over is possible).
    pub heap_bytes: usize,
    /// Call depth.
    pub call_depth: usize,
    /// Wall-clock time per evaluation (checked with the heap); `None`: unbounded.
    pub wall: Option<std::time::Duration>,
}

/// The wall-clock limit per evaluation, in milliseconds, unless
/// `TBSIM_SCRIPT_DEADLINE_MS` says otherwise (tbsim's side reads the same
/// variable, and kills a host that overruns it by a grace period).
pub const DEFAULT_DEADLINE_MS: u64 = 10_000;

/// The wall-clock limit per evaluation: `TBSIM_SCRIPT_DEADLINE_MS`, else
/// [`DEFAULT_DEADLINE_MS`].
pub fn deadline_from_env() -> std::time::Duration {
    let ms = std::env::var("TBSIM_SCRIPT_DEADLINE_MS")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|&ms| ms > 0)
        .unwrap_or(DEFAULT_DEADLINE_MS);
    std::time::Duration::from_millis(ms)
}

impl Default for Limits {
    /// Far above what a family needs (the bundled ones use under 1% of each).
    fn default() -> Self {
        Limits {
            ticks: 20_000_000,
            heap_bytes: 512 << 20,
            call_depth: 200,
            wall: Some(deadline_from_env()),
        }
    }
}

/// A Starlark error as a [`ScriptError`]: its span's file, line and column.
fn starlark_error(file: &str, e: &starlark::Error) -> ScriptError {
    let position = e.span().map(|s| {
        let r = s.resolve_span();
        (r.begin.line + 1, r.begin.column + 1)
    });
    let trace = e.call_stack().to_string();
    ScriptError {
        file: e
            .span()
            .map_or_else(|| file.to_owned(), |s| s.file.filename().to_owned()),
        position,
        message: e.without_diagnostic().to_string().trim().to_owned(),
        trace,
    }
}

/// One declared variant.
#[derive(Debug, Clone, PartialEq)]
pub struct ScriptVariant {
    /// The full key, `<family>/<variant>`.
    pub key: String,
    /// Its parameters, a JSON object.
    pub params: serde_json::Value,
}

/// A loaded family script: its declarations and its evaluated (frozen) module.
pub struct ScriptFamily {
    file: String,
    source: String,
    key: String,
    domain: String,
    milestone: Option<String>,
    min_window_minutes: Option<u32>,
    variants: Vec<ScriptVariant>,
    module: FrozenModule,
    limits: Limits,
}

impl std::fmt::Debug for ScriptFamily {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScriptFamily")
            .field("file", &self.file)
            .field("key", &self.key)
            .field("variants", &self.variants.len())
            .finish()
    }
}

/// The dialect scripts are written in: Python-like, with `load()` refused.
fn dialect() -> Dialect {
    Dialect {
        enable_load: false,
        enable_f_strings: true,
        ..Dialect::Extended
    }
}

/// The built-ins: the Starlark standard, `struct`, `json`, `map`, `filter`,
/// `partial`, `set`, the `ctx` type helpers and the prelude. Nothing that prints,
/// reads or tells the time.
fn globals() -> &'static Globals {
    static G: OnceLock<Globals> = OnceLock::new();
    G.get_or_init(|| {
        GlobalsBuilder::extended_by(&[
            LibraryExtension::StructType,
            LibraryExtension::Json,
            LibraryExtension::Map,
            LibraryExtension::Filter,
            LibraryExtension::Partial,
            LibraryExtension::SetType,
        ])
        .with(ctx::register_globals)
        .build()
    })
}

/// The prelude: small builders for the scenario format, written in Starlark.
pub const PRELUDE: &str = include_str!("prelude.star");

/// The prelude's file name in spans and errors.
pub(crate) const PRELUDE_FILE: &str = "prelude.star";

pub(crate) fn prelude() -> &'static FrozenModule {
    static P: OnceLock<FrozenModule> = OnceLock::new();
    P.get_or_init(|| {
        let ast = AstModule::parse(PRELUDE_FILE, PRELUDE.to_owned(), &dialect())
            .expect("the prelude parses");
        Module::with_temp_heap(|module| {
            {
                let mut eval = Evaluator::new(&module);
                eval.eval_module(ast, globals())
                    .expect("the prelude evaluates");
            }
            module.freeze().expect("the prelude freezes")
        })
    })
}

fn bounded<'v, 'a, 'e>(
    eval: &mut Evaluator<'v, 'a, 'e>,
    limits: &Limits,
) -> (Option<Instant>, position::Evaluation) {
    // Each setter fails only when called twice or with 0; neither happens here.
    let _ = eval.set_max_tick_count(limits.ticks.max(1));
    let _ = eval.set_max_heap_size(limits.heap_bytes.max(1));
    let _ = eval.set_max_callstack_size(limits.call_depth.max(1));
    let deadline = limits.wall.map(|w| Instant::now() + w);
    if let Some(at) = deadline {
        // Looked at with the heap, every 1,000 ticks: the error then names the
        // line. A single long operation is caught by tbsim's kill instead.
        eval.set_check_cancelled(Box::new(move || Instant::now() >= at));
    }
    position::follow(eval);
    (deadline, position::Evaluation::begin(deadline))
}

/// A Starlark error, its cancellation read as the wall-clock limit it stands for.
fn evaluation_error(
    file: &str,
    what: &str,
    e: &starlark::Error,
    deadline: Option<Instant>,
    limits: &Limits,
) -> ScriptError {
    let mut err = starlark_error(file, e);
    if let (Some(at), Some(wall)) = (deadline, limits.wall)
        && Instant::now() >= at
        && err.message.contains("Evaluation cancelled")
    {
        err.message = format!(
            "`{what}` ran past its wall-clock limit of {} ms (TBSIM_SCRIPT_DEADLINE_MS; the time bound)",
            wall.as_millis()
        );
    } else if err.message.contains("ticks has been exceeded") {
        err.message = format!(
            "`{what}` ran past its limit of {} ticks (calls and loop iterations; the tick bound)",
            limits.ticks
        );
    }
    // Some bounds carry no span: the statement the script was at names them.
    if err.position.is_none() {
        err.file = file.to_owned();
        err.position = position::current();
    }
    err
}

fn str_field(v: &serde_json::Value, field: &str) -> Option<String> {
    v.get(field).and_then(|x| x.as_str()).map(str::to_owned)
}

/// Whether `s` is a family or variant key segment: `a-z`, `0-9`, `_`, 1-64 bytes.
fn is_key(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 64
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

/// The functional domains a family may declare (`tbsim-gen`'s `Domain`).
pub const DOMAINS: [&str; 4] = [
    "information_synthesis",
    "time_management",
    "proactive_inquiry",
    "strategic_modelling",
];

impl ScriptFamily {
    /// Reads and evaluates `dir/family.star`.
    pub fn load_dir(dir: &Path) -> Result<ScriptFamily, ScriptError> {
        let path = dir.join("family.star");
        let file = path.display().to_string();
        let source = std::fs::read_to_string(&path)
            .map_err(|e| ScriptError::at_file(&file, format!("cannot read the script: {e}")))?;
        ScriptFamily::from_source(&file, &source, Limits::default())
    }

    /// Evaluates a script's text, `file` naming it in errors.
    pub fn from_source(
        file: &str,
        source: &str,
        limits: Limits,
    ) -> Result<ScriptFamily, ScriptError> {
        if source.len() > 1 << 20 {
            return Err(ScriptError::at_file(
                file,
                "the script is over 1 MiB; split data into generated tables instead",
            ));
        }
        depth::source_nesting(file, source)?;
        let ast = AstModule::parse(file, source.to_owned(), &dialect())
            .map_err(|e| starlark_error(file, &e))?;
        let module = Module::with_temp_heap(|module| {
            module.import_public_symbols(prelude());
            {
                let mut eval = Evaluator::new(&module);
                // Starlark's collector copies values recursively between top-level
                // statements, so a deep value would overflow the stack before the
                // depth check below could name it; the heap bound caps memory instead.
                eval.disable_gc();
                let (deadline, _evaluation) = bounded(&mut eval, &limits);
                position::loading(&ast);
                let out = eval.eval_module(ast, globals());
                position::loaded();
                out.map_err(|e| evaluation_error(file, "load", &e, deadline, &limits))?;
            }
            // Freezing walks every value the module holds, recursively.
            for name in module.names() {
                if let Some(v) = module.get(&name) {
                    depth::check(v).map_err(|m| {
                        ScriptError::at_file(file, format!("`{}`: {m}", name.as_str()))
                    })?;
                }
            }
            module
                .freeze()
                .map_err(|e| ScriptError::at_file(file, format!("cannot freeze the module: {e:?}")))
        })?;
        let decl = |name: &str| -> Result<serde_json::Value, ScriptError> {
            let v = module.get(name).map_err(|_| {
                ScriptError::at_file(file, format!("the script must define `{name}`"))
            })?;
            depth::check(v.value())
                .map_err(|m| ScriptError::at_file(file, format!("`{name}`: {m}")))?;
            v.value().to_json_value().map_err(|e| {
                ScriptError::at_file(file, format!("`{name}` must be plain data: {e}"))
            })
        };
        let fam = decl("FAMILY")?;
        let key = str_field(&fam, "key")
            .filter(|k| is_key(k))
            .ok_or_else(|| {
                ScriptError::at_file(
                    file,
                    "FAMILY[\"key\"] must be a string of a-z, 0-9 and _ (1-64 bytes)",
                )
            })?;
        let domain = str_field(&fam, "domain")
            .filter(|d| DOMAINS.contains(&d.as_str()))
            .ok_or_else(|| {
                ScriptError::at_file(
                    file,
                    format!("FAMILY[\"domain\"] must be one of {}", DOMAINS.join(", ")),
                )
            })?;
        let milestone = str_field(&fam, "milestone");
        let min_window_minutes = fam
            .get("min_window_minutes")
            .and_then(|v| v.as_u64())
            .map(|m| m.min(24 * 60) as u32);
        let vs = decl("VARIANTS")?;
        let list = vs.as_array().filter(|l| !l.is_empty()).ok_or_else(|| {
            ScriptError::at_file(file, "VARIANTS must be a non-empty list of dicts")
        })?;
        let mut variants = Vec::new();
        for v in list {
            let k = str_field(v, "key").filter(|k| is_key(k)).ok_or_else(|| {
                ScriptError::at_file(
                    file,
                    format!("every variant needs a \"key\" of a-z, 0-9 and _: {v}"),
                )
            })?;
            let params = v.get("params").cloned().unwrap_or(serde_json::json!({}));
            if !params.is_object() {
                return Err(ScriptError::at_file(
                    file,
                    format!("variant `{k}`: \"params\" must be a dict"),
                ));
            }
            let full = format!("{key}/{k}");
            if variants.iter().any(|x: &ScriptVariant| x.key == full) {
                return Err(ScriptError::at_file(
                    file,
                    format!("variant `{k}` is declared twice"),
                ));
            }
            variants.push(ScriptVariant { key: full, params });
        }
        match module.get("generate") {
            Ok(g) if g.value().get_type() == "function" => {}
            _ => {
                return Err(ScriptError::at_file(
                    file,
                    "the script must define `def generate(ctx, params)`",
                ));
            }
        }
        Ok(ScriptFamily {
            file: file.to_owned(),
            source: source.to_owned(),
            key,
            domain,
            milestone,
            min_window_minutes,
            variants,
            module,
            limits,
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
    /// `FAMILY["domain"]`, one of [`DOMAINS`].
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
        self.module
            .get(name)
            .is_ok_and(|v| v.value().get_type() == "function")
    }

    /// Calls the script's function `name` with `args` (built on the call's heap),
    /// bounded by the family's limits; returns its result as JSON.
    fn call(
        &self,
        name: &str,
        args: impl for<'v> FnOnce(&Module<'v>) -> Vec<Value<'v>>,
    ) -> Result<serde_json::Value, ScriptError> {
        self.call_with(name, args, |v| v.to_json_value())
    }

    /// [`call`](Self::call), its result written straight to JSON text: no
    /// intermediate `serde_json::Value` (a generated task is tens of kilobytes,
    /// and building its maps was a large share of a generation's time).
    fn call_text(
        &self,
        name: &str,
        args: impl for<'v> FnOnce(&Module<'v>) -> Vec<Value<'v>>,
    ) -> Result<String, ScriptError> {
        self.call_with(name, args, json_text::to_string)
    }

    fn call_with<T>(
        &self,
        name: &str,
        args: impl for<'v> FnOnce(&Module<'v>) -> Vec<Value<'v>>,
        finish: impl for<'v> FnOnce(Value<'v>) -> anyhow::Result<T>,
    ) -> Result<T, ScriptError> {
        let owned = self
            .module
            .get(name)
            .map_err(|_| ScriptError::at_file(&self.file, format!("no function `{name}`")))?;
        Module::with_temp_heap(|module| {
            // The call's heap references the family's frozen heap, which keeps the
            // function (a frozen value) alive for as long as this call can see it.
            module.frozen_heap().add_reference(owned.owner());
            let mut frozen = None;
            let _ = owned.map(|v| {
                frozen = Some(v);
                v
            });
            let f = frozen
                .map(|v| v.to_value())
                .ok_or_else(|| ScriptError::at_file(&self.file, format!("no function `{name}`")))?;
            let args = args(&module);
            let mut eval = Evaluator::new(&module);
            let (deadline, _evaluation) = bounded(&mut eval, &self.limits);
            let out = eval
                .eval_function(f, &args, &[])
                .map_err(|e| evaluation_error(&self.file, name, &e, deadline, &self.limits))?;
            depth::check(out).map_err(|m| {
                ScriptError::at_file(&self.file, format!("what `{name}` returned: {m}"))
            })?;
            finish(out).map_err(|e| {
                ScriptError::at_file(
                    &self.file,
                    format!("`{name}` must return plain data (dicts, lists, strings, numbers, booleans, None): {e}"),
                )
            })
        })
    }

    /// Runs `generate(ctx, params)` for one task; returns what it returned.
    pub fn generate(
        &self,
        input: &GenInput,
        params: &serde_json::Value,
    ) -> Result<serde_json::Value, ScriptError> {
        let text = self.generate_json(input.clone(), params)?;
        serde_json::from_str(&text).map_err(|e| ScriptError::at_file(&self.file, e.to_string()))
    }

    /// [`generate`](Self::generate), its result as JSON text (what the host sends).
    pub fn generate_json(
        &self,
        input: GenInput,
        params: &serde_json::Value,
    ) -> Result<String, ScriptError> {
        let corpus = input.corpus.heap.clone();
        let company = input.company.heap().clone();
        let ctx = ScriptCtx::new(input);
        self.call_text("generate", |m| {
            // `ctx.corpus` is a value of the corpus' own frozen heap, `ctx.people`
            // and `ctx.rooms` of the company's, and `ctx.release` of the ctx's.
            m.frozen_heap().add_reference(&corpus);
            m.frozen_heap().add_reference(&company);
            m.frozen_heap().add_reference(ctx.heap());
            vec![m.heap().alloc(ctx), m.heap().alloc(params.clone())]
        })
    }

    /// Runs `solve(tools, task)`: the script's own solver, working through `tools`
    /// (each method a round trip to tbsim). Returns what `solve` returned.
    pub fn solve(
        &self,
        tools: tools::ScriptTools,
        task: &serde_json::Value,
    ) -> Result<serde_json::Value, ScriptError> {
        if !self.defines("solve") {
            return Err(ScriptError::at_file(
                &self.file,
                "the script defines no `def solve(tools, task)`",
            ));
        }
        self.call("solve", |m| {
            vec![m.heap().alloc(tools), m.heap().alloc(task.clone())]
        })
    }

    /// Runs `claims(task)` when the script defines it: whether its `solve` is for
    /// this released task. `None` when the script does not say.
    pub fn claims(&self, task: &serde_json::Value) -> Result<Option<bool>, ScriptError> {
        if !self.defines("claims") {
            return Ok(None);
        }
        let out = self.call("claims", |m| vec![m.heap().alloc(task.clone())])?;
        out.as_bool().map(Some).ok_or_else(|| {
            ScriptError::at_file(&self.file, "`claims(task)` must return True or False")
        })
    }

    /// Runs `wrong_answers(task, scenario)` when the script defines it (else no
    /// answers): `(path, content)` pairs that must pass no checkpoint of `task`.
    pub fn wrong_answers(
        &self,
        task: &serde_json::Value,
        scenario: &serde_json::Value,
    ) -> Result<Vec<(String, String)>, ScriptError> {
        if !self.defines("wrong_answers") {
            return Ok(Vec::new());
        }
        let out = self.call("wrong_answers", |m| {
            vec![
                m.heap().alloc(task.clone()),
                m.heap().alloc(scenario.clone()),
            ]
        })?;
        let shape = || {
            ScriptError::at_file(
                &self.file,
                "`wrong_answers` must return a list of [path, content] pairs",
            )
        };
        out.as_array()
            .ok_or_else(shape)?
            .iter()
            .map(|p| match p.as_array().map(Vec::as_slice) {
                Some([a, b]) => match (a.as_str(), b.as_str()) {
                    (Some(a), Some(b)) => Ok((a.to_owned(), b.to_owned())),
                    _ => Err(shape()),
                },
                _ => Err(shape()),
            })
            .collect()
    }
}

#[cfg(test)]
mod fuzz_smoke;
#[cfg(test)]
mod tests;
