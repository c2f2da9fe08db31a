//! `ctx`, the only window a script has on the world: the task's identity and day,
//! the company, seeded random streams, and a few builders. Nothing here reads a
//! file, the clock or unseeded randomness.

// `ProvidesStaticType`'s derive writes an `unsafe impl` (a type-id marker) for the
// two value types here; this module has no unsafe code of its own.
#![allow(unsafe_code)]

use std::borrow::Cow;
use std::sync::Mutex;

use allocative::Allocative;
use rand::RngExt;
use starlark::any::ProvidesStaticType;
use starlark::environment::{GlobalsBuilder, Methods, MethodsBuilder, MethodsStatic};
use starlark::starlark_module;
use starlark::starlark_simple_value;
use starlark::values::list::UnpackList;
use starlark::values::none::{NoneOr, NoneType};
use starlark::values::{Heap, NoSerialize, StarlarkValue, Value, starlark_value};

use tbsim_core::rng::{StreamRng, stream};

/// What a generator is told about its task (the Rust generators' `Ctx`, as data).
#[derive(Debug, Clone)]
pub struct GenInput {
    /// The suite seed.
    pub seed: u64,
    /// The scenario's name.
    pub scenario: String,
    /// The task id (slug).
    pub id: String,
    /// The task's day, `YYYY-MM-DD`.
    pub date: String,
    /// Start of work, `HH:MM`.
    pub start: String,
    /// The task's deadline, `HH:MM`.
    pub deadline: String,
    /// Day of the scenario, from 1.
    pub day: u32,
    /// Everyone at the company and its meeting rooms, frozen once per company.
    pub company: Company,
    /// The intern's manager (a person key).
    pub mentor: String,
    /// How the suite releases the task (the scenario format's `Release`, as JSON).
    pub release: serde_json::Value,
    /// The shared text corpus (company name, documents, articles, name lists),
    /// an object; the same for every task, so built once as a frozen value that
    /// every task's `ctx.corpus` shares.
    pub corpus: Corpus,
}

/// `ctx`'s attributes and what each holds (the reference in `docs/authoring.md` is
/// generated from this table; `get_attr` answers exactly these).
pub const CTX_ATTRS: &[(&str, &str)] = &[
    ("scenario", "The scenario's name."),
    ("id", "The task id (a slug, unique in the scenario)."),
    (
        "task_key",
        "`task/<id>`, the task's key (for clues' `task`).",
    ),
    ("date", "The task's day, `YYYY-MM-DD`."),
    ("start", "Start of work, `HH:MM`."),
    ("deadline", "The task's deadline, `YYYY-MM-DDTHH:MM`."),
    ("day", "Day of the scenario, from 1."),
    (
        "suffix",
        "`\"\"` on day 1, `\"_d2\"`... later: names unique across the days.",
    ),
    (
        "people",
        "Everyone at the company: `{key, name, department, position}` dicts, executives first.",
    ),
    ("mentor", "The intern's manager (a person key)."),
    ("rooms", "The meeting rooms: `{key, name, capacity}` dicts."),
    (
        "release",
        "How the suite releases the task: `\"Start\"`, `{\"At\": time}`, `{\"AfterCheckpoint\": {task, checkpoint}}` or `{\"InMeeting\": meeting}`.",
    ),
    (
        "corpus",
        "Shared texts: `company`, `kb_fix_manual`, `articles` (`stem`, `title`, `body`), `supplier_prefixes`, `supplier_suffixes`, `catalogue` (`name`, `min_price`, `max_price`).",
    ),
];

/// The corpus as a frozen Starlark value and the heap that holds it (a module that
/// shows it to a script adds a reference to the heap first; see `generate`).
#[derive(Debug, Clone)]
pub struct Corpus {
    /// The value.
    pub value: starlark::values::FrozenValue,
    /// Its heap.
    pub heap: starlark::values::FrozenHeapRef,
}

impl Corpus {
    /// Freezes a JSON corpus.
    pub fn new(json: serde_json::Value) -> Corpus {
        let heap = starlark::values::FrozenHeap::new();
        let value = heap.alloc(json);
        Corpus {
            value,
            heap: heap.into_ref(),
        }
    }
}

/// A person as scripts see them (`ctx.people`): no persona or reply texts. The
/// texts are borrowed from the request where they need no unescaping.
#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Person<'a> {
    /// `npc/<slug>`.
    #[serde(borrow)]
    pub key: Cow<'a, str>,
    /// Full name.
    #[serde(borrow)]
    pub name: Cow<'a, str>,
    /// Department.
    #[serde(borrow)]
    pub department: Cow<'a, str>,
    /// Job title.
    #[serde(borrow)]
    pub position: Cow<'a, str>,
}

/// A meeting room as scripts see it (`ctx.rooms`).
#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Room<'a> {
    /// `room/<slug>`.
    #[serde(borrow)]
    pub key: Cow<'a, str>,
    /// Display name.
    #[serde(borrow)]
    pub name: Cow<'a, str>,
    /// Seats.
    pub capacity: u32,
}

/// The company as scripts see it: `ctx.people` (`{key, name, department,
/// position}` dicts, executives first) and `ctx.rooms` (`{key, name, capacity}`
/// dicts), frozen once and shared by every task of that company. A host is told
/// a company once, not with every task, and builds the dicts straight from the
/// typed lists: converting the people list through JSON values was about a third
/// of a generation's time in the host.
#[derive(Debug, Clone)]
pub struct Company {
    people: starlark::values::FrozenValue,
    rooms: starlark::values::FrozenValue,
    heap: starlark::values::FrozenHeapRef,
}

impl Company {
    /// Freezes a company's people and rooms. Keys are in sorted order, as a JSON
    /// object converted to Starlark has them.
    pub fn new(people: &[Person<'_>], rooms: &[Room<'_>]) -> Company {
        use starlark::values::dict::AllocDict;
        use starlark::values::list::AllocList;
        let heap = starlark::values::FrozenHeap::new();
        // Each key string allocated once, not looked up again for every person.
        let [department, key, name, position] =
            ["department", "key", "name", "position"].map(|k| heap.alloc(k));
        let people = heap.alloc(AllocList(people.iter().map(|p| {
            AllocDict([
                (department, heap.alloc(&*p.department)),
                (key, heap.alloc(&*p.key)),
                (name, heap.alloc(&*p.name)),
                (position, heap.alloc(&*p.position)),
            ])
        })));
        let rooms = heap.alloc(AllocList(rooms.iter().map(|r| {
            AllocDict([
                ("capacity", heap.alloc(r.capacity)),
                ("key", heap.alloc(&*r.key)),
                ("name", heap.alloc(&*r.name)),
            ])
        })));
        Company {
            people,
            rooms,
            heap: heap.into_ref(),
        }
    }

    /// The heap holding both lists.
    pub fn heap(&self) -> &starlark::values::FrozenHeapRef {
        &self.heap
    }
}

impl Default for Corpus {
    fn default() -> Corpus {
        Corpus::new(serde_json::json!({}))
    }
}

/// The `ctx` value a script's `generate` receives.
#[derive(Debug, ProvidesStaticType, NoSerialize, Allocative)]
pub struct ScriptCtx {
    #[allocative(skip)]
    input: GenInput,
    /// `ctx.release`, converted once per task and frozen (as `ctx.people` and
    /// `ctx.rooms` are once per company): scripts read them inside loops, and
    /// converting the JSON on every read was most of a generation's time.
    #[allocative(skip)]
    release: starlark::values::FrozenValue,
    #[allocative(skip)]
    heap: starlark::values::FrozenHeapRef,
}

impl ScriptCtx {
    /// The context of one task.
    pub fn new(mut input: GenInput) -> ScriptCtx {
        let heap = starlark::values::FrozenHeap::new();
        let release = heap.alloc(std::mem::take(&mut input.release));
        ScriptCtx {
            input,
            release,
            heap: heap.into_ref(),
        }
    }

    /// The heap holding `ctx.release`: a module that shows this `ctx` to a script
    /// references it first (as it does the corpus' and the company's).
    pub fn heap(&self) -> &starlark::values::FrozenHeapRef {
        &self.heap
    }
    fn suffix(&self) -> String {
        if self.input.day <= 1 {
            String::new()
        } else {
            format!("_d{}", self.input.day)
        }
    }
}

impl std::fmt::Display for ScriptCtx {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ctx")
    }
}

starlark_simple_value!(ScriptCtx);

#[starlark_value(type = "ctx")]
impl<'v> StarlarkValue<'v> for ScriptCtx {
    fn get_methods() -> Option<&'static Methods> {
        static RES: MethodsStatic = MethodsStatic::new("ctx", ctx_methods);
        Some(RES.methods())
    }

    fn get_attr(&self, attribute: &str, heap: Heap<'v>) -> Option<Value<'v>> {
        let i = &self.input;
        Some(match attribute {
            "scenario" => heap.alloc(i.scenario.as_str()),
            "id" => heap.alloc(i.id.as_str()),
            "task_key" => heap.alloc(format!("task/{}", i.id)),
            "date" => heap.alloc(i.date.as_str()),
            "start" => heap.alloc(i.start.as_str()),
            "deadline" => heap.alloc(format!("{}T{}", i.date, i.deadline)),
            "day" => heap.alloc(i.day),
            "suffix" => heap.alloc(self.suffix()),
            "people" => i.company.people.to_value(),
            "mentor" => heap.alloc(i.mentor.as_str()),
            "rooms" => i.company.rooms.to_value(),
            "release" => self.release.to_value(),
            "corpus" => i.corpus.value.to_value(),
            _ => return None,
        })
    }

    fn dir_attr(&self) -> Vec<String> {
        CTX_ATTRS.iter().map(|(n, _)| (*n).to_owned()).collect()
    }
}

#[starlark_module]
fn ctx_methods(builder: &mut MethodsBuilder) {
    /// The random stream for one purpose of this task: the same stream a Rust
    /// generator gets from `ctx.rng(purpose)`.
    fn rng(this: &ScriptCtx, purpose: &str) -> anyhow::Result<ScriptRng> {
        let i = &this.input;
        Ok(ScriptRng {
            rng: Mutex::new(stream(
                i.seed,
                &format!("gen/{}/{}/{}", i.scenario, i.id, purpose),
            )),
        })
    }

    /// A drive folder for this family: `base` on day 1, `base/day2` on day 2, ...
    fn folder(this: &ScriptCtx, base: &str) -> anyhow::Result<String> {
        Ok(if this.input.day <= 1 {
            base.to_owned()
        } else {
            format!("{base}/day{}", this.input.day)
        })
    }

    /// `YYYY-MM-DDTHH:MM` on the task's day.
    fn at(this: &ScriptCtx, hhmm: &str) -> anyhow::Result<String> {
        let ok = hhmm.len() == 5
            && hhmm.as_bytes()[2] == b':'
            && hhmm[..2].parse::<u32>().is_ok_and(|h| h < 24)
            && hhmm[3..].parse::<u32>().is_ok_and(|m| m < 60);
        if !ok {
            anyhow::bail!("ctx.at wants HH:MM, got {hhmm:?}");
        }
        Ok(format!("{}T{hhmm}", this.input.date))
    }

    /// A clue key of this task unique to `name`: `clue/<task id>/<slug of name>`.
    fn clue_key(this: &ScriptCtx, name: &str) -> anyhow::Result<String> {
        Ok(format!("clue/{}/{}", this.input.id, slug(name)))
    }
}

/// A seeded random stream (`ctx.rng(purpose)`).
#[derive(Debug, ProvidesStaticType, NoSerialize, Allocative)]
pub struct ScriptRng {
    #[allocative(skip)]
    rng: Mutex<StreamRng>,
}

impl std::fmt::Display for ScriptRng {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("rng")
    }
}

starlark_simple_value!(ScriptRng);

#[starlark_value(type = "rng")]
impl<'v> StarlarkValue<'v> for ScriptRng {
    fn get_methods() -> Option<&'static Methods> {
        static RES: MethodsStatic = MethodsStatic::new("rng", rng_methods);
        Some(RES.methods())
    }
}

impl ScriptRng {
    fn with<T>(&self, f: impl FnOnce(&mut StreamRng) -> T) -> T {
        // A script runs on one thread; a poisoned lock still holds a valid stream.
        let mut g = self.rng.lock().unwrap_or_else(|e| e.into_inner());
        f(&mut g)
    }
    /// An index below `len` (which must be positive).
    fn index(&self, len: usize) -> usize {
        self.with(|r| r.random_range(0..len))
    }
}

#[starlark_module]
fn rng_methods(builder: &mut MethodsBuilder) {
    /// An integer in `[lo, hi)`, like Python's `random.randrange(lo, hi)`.
    fn range(this: &ScriptRng, lo: i64, hi: i64) -> anyhow::Result<i64> {
        if lo >= hi {
            anyhow::bail!("rng.range({lo}, {hi}): the range is empty");
        }
        Ok(this.with(|r| r.random_range(lo..hi)))
    }

    /// An integer in `[lo, hi]`, like Python's `random.randint(lo, hi)`.
    fn int(this: &ScriptRng, lo: i64, hi: i64) -> anyhow::Result<i64> {
        if lo > hi {
            anyhow::bail!("rng.int({lo}, {hi}): the range is empty");
        }
        Ok(this.with(|r| r.random_range(lo..=hi)))
    }

    /// An index below `n` (the Rust generators' `random_range(0..n)`).
    fn below(this: &ScriptRng, n: i64) -> anyhow::Result<i64> {
        if n <= 0 {
            anyhow::bail!("rng.below({n}): n must be positive");
        }
        Ok(this.index(n as usize) as i64)
    }

    /// A float in `[0, 1)`.
    fn float(this: &ScriptRng) -> anyhow::Result<f64> {
        Ok(this.with(|r| r.random::<f64>()))
    }

    /// One element of a non-empty list.
    fn choice<'v>(this: &ScriptRng, xs: UnpackList<Value<'v>>) -> anyhow::Result<Value<'v>> {
        if xs.items.is_empty() {
            anyhow::bail!("rng.choice of an empty list");
        }
        Ok(xs.items[this.index(xs.items.len())])
    }

    /// `k` distinct elements in draw order (all of them, shuffled, when `k` is at
    /// least the length): the Rust generators' `pick_distinct`.
    fn sample<'v>(
        this: &ScriptRng,
        xs: UnpackList<Value<'v>>,
        k: i64,
    ) -> anyhow::Result<Vec<Value<'v>>> {
        let mut pool = xs.items;
        let k = (k.max(0) as usize).min(pool.len());
        let mut out = Vec::with_capacity(k);
        for _ in 0..k {
            let i = this.index(pool.len());
            out.push(pool.swap_remove(i));
        }
        Ok(out)
    }

    /// A shuffled copy of the list.
    fn shuffle<'v>(this: &ScriptRng, xs: UnpackList<Value<'v>>) -> anyhow::Result<Vec<Value<'v>>> {
        let mut v = xs.items;
        for i in (1..v.len()).rev() {
            let j = this.index(i + 1);
            v.swap(i, j);
        }
        Ok(v)
    }
}

/// Lower-case ASCII slug (the Rust generators' `company::slug`).
pub(crate) fn slug(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
    }
    out.trim_end_matches('-').to_owned()
}

/// One CSV field, quoted when it holds a comma, quote or line break.
fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_owned()
    }
}

/// The text of a cell: strings as they are, everything else as `str()` would.
fn cell(v: Value<'_>) -> String {
    match v.unpack_str() {
        Some(s) => s.to_owned(),
        None => v.to_str(),
    }
}

#[starlark_module]
fn script_globals(builder: &mut GlobalsBuilder) {
    /// Lower-case ASCII slug of a name: `"Ann Lee"` -> `"ann-lee"`.
    fn slug(s: &str) -> anyhow::Result<String> {
        Ok(self::slug(s))
    }

    /// CSV text from rows of cells (the first row is the header), with RFC 4180
    /// quoting and a final newline.
    fn csv<'v>(rows: UnpackList<UnpackList<Value<'v>>>) -> anyhow::Result<String> {
        let mut out = String::new();
        for row in rows.items {
            let cells: Vec<String> = row.items.into_iter().map(|c| csv_field(&cell(c))).collect();
            out.push_str(&cells.join(","));
            out.push('\n');
        }
        Ok(out)
    }

    /// A Markdown table from a header and rows.
    fn table<'v>(
        header: UnpackList<Value<'v>>,
        rows: UnpackList<UnpackList<Value<'v>>>,
    ) -> anyhow::Result<String> {
        let esc = |v: Value<'v>| cell(v).replace('|', "\\|").replace('\n', " ");
        let h: Vec<String> = header.items.into_iter().map(esc).collect();
        let mut out = format!(
            "| {} |\n|{}|\n",
            h.join(" | "),
            vec!["---"; h.len()].join("|")
        );
        for row in rows.items {
            let r: Vec<String> = row.items.into_iter().map(esc).collect();
            out.push_str(&format!("| {} |\n", r.join(" | ")));
        }
        Ok(out)
    }

    /// Every whole number written in `text`, in order: each run of ASCII digits as an
    /// int (`whole_numbers("3 x 120, at 5") == [3, 120, 5]`).
    fn whole_numbers<'v>(text: &str, heap: Heap<'v>) -> anyhow::Result<Vec<Value<'v>>> {
        // Scanning in Starlark, a character per loop iteration, was the largest part
        // of generating a family that checks its brief's numbers.
        text.split(|c: char| !c.is_ascii_digit())
            .filter(|run| !run.is_empty())
            .map(|run| match run.parse::<i64>() {
                Ok(n) => Ok(heap.alloc(n)),
                Err(_) => num_bigint::BigInt::parse_bytes(run.as_bytes(), 10)
                    .map(|n| heap.alloc(n))
                    .ok_or_else(|| anyhow::anyhow!("{run:?} is not a number")),
            })
            .collect()
    }

    /// JSON text of a value, indented by two spaces, keys in sorted order.
    fn json_pretty<'v>(x: Value<'v>) -> anyhow::Result<String> {
        // Plain data is written directly; serde writes (or refuses) the rest.
        match crate::json_text::to_pretty_string(x) {
            Some(text) => Ok(text),
            None => Ok(serde_json::to_string_pretty(&x.to_json_value()?)?),
        }
    }

    /// One oracle plan step: a tool call (`args` as the tool takes them), gated on a
    /// reply from `reply_from` (a person key) or on the time `not_before`, or ready.
    /// `args` stays a value here; tbsim stores its JSON text.
    fn step<'v>(
        tool: &str,
        args: Value<'v>,
        #[starlark(default = NoneOr::None)] reply_from: NoneOr<Value<'v>>,
        #[starlark(default = NoneOr::None)] not_before: NoneOr<Value<'v>>,
        heap: Heap<'v>,
    ) -> anyhow::Result<Value<'v>> {
        use starlark::values::dict::AllocDict;
        // Native, not a prelude `def`, and `args` not turned into text here: a
        // plan step's arguments hold whole files (a fixed article, a report), which
        // as text inside the task's JSON were escaped twice, written and read.
        // Whether they can be JSON at all is still decided here, at this line.
        crate::json_text::check(args)?;
        let gate = match (reply_from, not_before) {
            (NoneOr::Other(who), _) => heap.alloc(AllocDict([("ReplyFrom", who)])),
            (NoneOr::None, NoneOr::Other(at)) => heap.alloc(AllocDict([("NotBefore", at)])),
            (NoneOr::None, NoneOr::None) => heap.alloc("Ready"),
        };
        Ok(heap.alloc(AllocDict([
            ("gate", gate),
            ("tool", heap.alloc(tool)),
            ("args", args),
        ])))
    }

    /// Fails the script with `message` (the error names the calling line).
    fn fail_if(cond: bool, message: &str) -> anyhow::Result<NoneType> {
        if cond {
            anyhow::bail!("{message}");
        }
        Ok(NoneType)
    }
}

pub(crate) fn register_globals(b: &mut GlobalsBuilder) {
    script_globals(b);
}
