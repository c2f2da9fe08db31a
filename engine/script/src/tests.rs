use rand::RngExt;

use super::*;

const MINI: &str = r#"
FAMILY = {"key": "mini", "domain": "information_synthesis", "milestone": "done"}
VARIANTS = [{"key": "easy", "params": {"n": 2}}, {"key": "hard", "params": {"n": 5}}]

def generate(ctx, params):
    r = ctx.rng("mini")
    xs = [r.range(100, 1000) for _ in range(params["n"])]
    return {"values": xs, "task_key": ctx.task_key, "pick": r.choice(["a", "b", "c"]),
            "csv": csv([["id", "note"], [1, "a,b"]]), "slug": slug(ctx.people[0]["name"])}
"#;

fn input() -> GenInput {
    GenInput {
        seed: 7,
        scenario: "s".into(),
        id: "t".into(),
        date: "2025-10-01".into(),
        start: "09:00".into(),
        deadline: "17:00".into(),
        day: 1,
        company: crate::Company::new(
            &[crate::Person {
                key: "npc/ann-lee".into(),
                name: "Ann Lee".into(),
                department: "Ops".into(),
                position: "Analyst".into(),
            }],
            &[],
        ),
        mentor: "npc/ann-lee".into(),
        release: serde_json::json!("Start"),
        corpus: crate::ctx::Corpus::default(),
    }
}

fn load(src: &str) -> Result<ScriptFamily, ScriptError> {
    ScriptFamily::from_source("fam/family.star", src, Limits::default())
}

#[test]
fn declarations_are_read_and_generation_is_seeded_like_a_rust_stream() {
    let f = load(MINI).unwrap();
    assert_eq!(f.key(), "mini");
    assert_eq!(f.domain(), "information_synthesis");
    assert_eq!(f.milestone(), Some("done"));
    let keys: Vec<&str> = f.variants().iter().map(|v| v.key.as_str()).collect();
    assert_eq!(keys, ["mini/easy", "mini/hard"]);
    let out = f.generate(&input(), &serde_json::json!({"n": 3})).unwrap();
    // The same draws as the Rust generators' stream for this task and purpose.
    let mut rust = tbsim_core::rng::stream(7, "gen/s/t/mini");
    let expect: Vec<i64> = (0..3).map(|_| rust.random_range(100..1000i64)).collect();
    assert_eq!(out["values"], serde_json::json!(expect));
    assert_eq!(out["task_key"], "task/t");
    assert_eq!(out["csv"], "id,note\n1,\"a,b\"\n");
    assert_eq!(out["slug"], "ann-lee");
    assert_eq!(
        f.generate(&input(), &serde_json::json!({"n": 3})).unwrap(),
        out,
        "same inputs, same output"
    );
    let mut other = input();
    other.seed = 8;
    assert_ne!(
        f.generate(&other, &serde_json::json!({"n": 3})).unwrap(),
        out
    );
}

#[test]
fn load_is_refused() {
    let e = load("load(\"other.star\", \"x\")\n").unwrap_err();
    assert!(
        e.to_string()
            .starts_with("fam/family.star:1:1: error[TB0026]"),
        "{e}"
    );
}

#[test]
fn no_print_no_time_no_io() {
    for src in ["print(1)\n", "x = time()\n", "x = open('f')\n"] {
        let e = load(src).unwrap_err();
        assert!(e.to_string().contains("error[TB0026]"), "{e}");
        assert!(
            e.message.contains("not found") || e.message.contains("Variable"),
            "{e}"
        );
    }
}

#[test]
fn a_runaway_script_stops_at_the_tick_limit() {
    let src = format!(
        "{}\ndef spin():\n    n = 0\n    for i in range(1000000000):\n        n += i\n    return n\n\nX = spin()\n",
        MINI
    );
    let limits = Limits {
        ticks: 100_000,
        ..Limits::default()
    };
    let t = std::time::Instant::now();
    let e = ScriptFamily::from_source("fam/family.star", &src, limits).unwrap_err();
    assert!(t.elapsed().as_secs() < 20, "stopped promptly");
    assert!(e.to_string().contains("error[TB0026]"), "{e}");
    assert!(e.message.contains("the tick bound"), "{e}");
    // Starlark's tick error has no span: the statement the script was at names it.
    let line = MINI.lines().count() + 5;
    assert_eq!(e.position, Some((line, 9)), "{e}");
    assert_eq!(e.file, "fam/family.star");
}

#[test]
fn recursion_is_refused_or_bounded() {
    let src = format!("{MINI}\ndef f(n):\n    return f(n + 1)\n\nX = f(0)\n");
    let e = load(&src).unwrap_err();
    assert!(e.to_string().contains("error[TB0026]"), "{e}");
}

#[test]
fn a_deep_value_declared_at_load_is_named_not_overflowed() {
    // Deep enough that a recursive walk of it (Starlark's collector runs between
    // top-level statements) would overflow a test thread's stack.
    let src = format!(
        "{MINI}\ndef deep():\n    x = []\n    for i in range(300000):\n        x = [x]\n    return x\n\nDEEP = deep()\nAFTER = 1\n"
    );
    let e = load(&src).unwrap_err();
    assert!(e.message.contains("`DEEP`"), "{e}");
    assert!(e.message.contains("depth bound"), "{e}");
}

#[test]
fn runtime_errors_name_file_line_and_column() {
    let src = "FAMILY = {\"key\": \"m\", \"domain\": \"time_management\"}\nVARIANTS = [{\"key\": \"a\"}]\n\ndef helper(x):\n    return x[\"missing\"]\n\ndef generate(ctx, params):\n    return helper(params)\n";
    let f = load(src).unwrap();
    let e = f.generate(&input(), &serde_json::json!({})).unwrap_err();
    // Starlark locates a failure inside a nested call at the outermost call site
    // in `generate` (line 8); the message names what failed.
    let s = e.to_string();
    assert!(matches!(e.position, Some((5 | 8, _))), "{s}");
    assert!(s.starts_with("fam/family.star:"), "{s}");
    assert!(s.contains("missing"), "{s}");
}

#[test]
fn bad_declarations_are_explained() {
    let e = load("VARIANTS = []\n").unwrap_err();
    assert!(e.message.contains("FAMILY"), "{e}");
    let e = load("FAMILY = {\"key\": \"Bad Key\", \"domain\": \"time_management\"}\n").unwrap_err();
    assert!(e.message.contains("key"), "{e}");
    let e =
        load("FAMILY = {\"key\": \"k\", \"domain\": \"cooking\"}\nVARIANTS=[{\"key\":\"a\"}]\n")
            .unwrap_err();
    assert!(e.message.contains("domain"), "{e}");
    let e = load(
        "FAMILY = {\"key\": \"k\", \"domain\": \"time_management\"}\nVARIANTS=[{\"key\":\"a\"}]\n",
    )
    .unwrap_err();
    assert!(e.message.contains("generate"), "{e}");
    let e = load("x = = 1\n").unwrap_err();
    assert_eq!(e.position, Some((1, 5)), "{e}");
}

#[test]
fn prelude_builders_produce_the_scenario_shapes() {
    let src = format!(
        "{MINI}\ndef shapes(ctx, params):\n    return [step(\"read_file\", {{\"path\": \"a\"}}, reply_from = \"npc/x\"), file_text(\"workspace/a\", \"b\"), text_file(\"drive/a.md\", \"x\")]\n"
    );
    let f = load(&src).unwrap();
    let out = f
        .call("shapes", |m| {
            vec![m.heap().alloc(ScriptCtx::new(input())), Value::new_none()]
        })
        .unwrap();
    assert_eq!(
        out,
        serde_json::json!([
            {"gate": {"ReplyFrom": "npc/x"}, "tool": "read_file", "args": {"path": "a"}},
            {"FileText": {"path": "workspace/a", "expected": "b"}},
            {"path": "drive/a.md", "content": {"Text": "x"}},
        ])
    );
}

/// The example on `docs/errors/TB0026.md` prints what the page says.
#[test]
fn the_error_page_example_prints_what_the_page_shows() {
    let page = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/errors/TB0026.md"
    ))
    .unwrap();
    let block = |lang: &str| -> String {
        let start = page.find(&format!("```{lang}\n")).unwrap() + lang.len() + 4;
        page[start..][..page[start..].find("```").unwrap()].to_owned()
    };
    let f =
        ScriptFamily::from_source("demo/family.star", &block("python"), Limits::default()).unwrap();
    let e = f.generate(&input(), &serde_json::json!({})).unwrap_err();
    assert_eq!(e.to_string().lines().next().unwrap(), block("text").trim());
}

#[test]
fn whole_numbers_finds_what_a_starlark_digit_scan_finds() {
    // The scan families wrote before the builtin existed, kept as the reference.
    let src = r#"
FAMILY = {"key": "nums", "domain": "information_synthesis"}
VARIANTS = [{"key": "one"}]
def scan(text):
    out = []
    digits = ""
    for ch in (text + " ").elems():
        if ch.isdigit():
            digits += ch
        elif digits:
            out.append(int(digits))
            digits = ""
    return out
TEXTS = ["", "none", "7", "3 x 120 at 5 each", "a1b22c333", "2025-10-01T09:30",
         "cap 4250 EUR.", "007 and 0", "12345678901234567890123 long", "trailing 42"]
def generate(ctx, params):
    return {"same": [whole_numbers(t) == scan(t) for t in TEXTS],
            "example": whole_numbers("3 x 120, at 5"),
            "long": str(whole_numbers("id 12345678901234567890123")[0] + 1)}
"#;
    let f = load(src).unwrap();
    let out = f.generate(&input(), &serde_json::json!({})).unwrap();
    assert!(
        out["same"].as_array().unwrap().iter().all(|b| b == true),
        "{out}"
    );
    assert_eq!(out["example"], serde_json::json!([3, 120, 5]));
    assert_eq!(out["long"], "12345678901234567890124");
}

#[test]
fn a_plan_step_carries_its_arguments_and_its_gate() {
    let f = load(
        r#"
FAMILY = {"key": "steps", "domain": "information_synthesis"}
VARIANTS = [{"key": "one"}]
def generate(ctx, params):
    args = {"path": "workspace/a.md", "content": "line \"1\"\n\tline 2", "n": [1, 2.5, None]}
    return [step("write_file", args), step("read_messages", {"with": "npc/b"}, reply_from = "npc/b"),
            step("read_file", {}, None, "10:30"), step("x", args)["args"] == args]
"#,
    )
    .unwrap();
    let out = f.generate_json(input(), &serde_json::json!({})).unwrap();
    // The arguments stay a value, written once as JSON (tbsim keeps that text).
    let args = r#"{"path":"workspace/a.md","content":"line \"1\"\n\tline 2","n":[1,2.5,null]}"#;
    assert_eq!(
        out,
        format!(
            r#"[{{"gate":"Ready","tool":"write_file","args":{args}}},{{"gate":{{"ReplyFrom":"npc/b"}},"tool":"read_messages","args":{{"with":"npc/b"}}}},{{"gate":{{"NotBefore":"10:30"}},"tool":"read_file","args":{{}}}},true]"#
        )
    );
    let e = load(
        r#"
FAMILY = {"key": "bad", "domain": "information_synthesis"}
VARIANTS = [{"key": "one"}]
def generate(ctx, params):
    return step("read_file", {"f": len})
"#,
    )
    .unwrap()
    .generate(&input(), &serde_json::json!({}))
    .unwrap_err();
    // Arguments that cannot be JSON fail at the step, not at the end.
    assert_eq!(e.position.map(|p| p.0), Some(5), "{e}");
}
