//! The script API reference, generated from the code: `ctx`'s attributes (from
//! [`crate::ctx::CTX_ATTRS`]) and methods, `rng`'s and `tools`' methods, the
//! built-in functions and the prelude's builders, each with its signature and the
//! first line of its doc comment or docstring. `docs/authoring.md` holds this text
//! between markers, and a test keeps the two equal.

use starlark::docs::{DocItem, DocMember, DocType};
use starlark::environment::GlobalsBuilder;

use crate::ctx::{CTX_ATTRS, ScriptCtx, ScriptRng};
use crate::tools::ScriptTools;

/// `def name(a, b = 1) -> str:` as `name(a, b = 1)`.
fn signature(name: &str, m: &DocMember) -> String {
    match m {
        DocMember::Property(_) => name.to_owned(),
        DocMember::Function(f) => {
            let code = f.render_as_code(name);
            let head = code.split(":\n").next().unwrap_or(&code);
            let head = head.strip_prefix("def ").unwrap_or(head);
            // Parameters are listed one per line when long; one line here.
            let one: Vec<&str> = head.split_whitespace().collect();
            let mut s = one.join(" ").replace("( ", "(").replace(", )", ")");
            if let Some(i) = s.find(") ->") {
                s.truncate(i + 1);
            }
            s.replace('|', "\\|")
        }
    }
}

fn summary(m: &DocMember) -> String {
    let docs = match m {
        DocMember::Property(p) => p.docs.as_ref(),
        DocMember::Function(f) => f.docs.as_ref(),
    };
    docs.map(|d| d.summary.replace('|', "\\|"))
        .unwrap_or_default()
}

fn table(rows: &[(String, String)]) -> String {
    let mut s = String::from("| name | what it does |\n| --- | --- |\n");
    for (n, d) in rows {
        s.push_str(&format!("| `{n}` | {d} |\n"));
    }
    s
}

fn methods(prefix: &str, t: &DocType) -> Vec<(String, String)> {
    let mut rows: Vec<(String, String)> = t
        .members
        .iter()
        .map(|(n, m)| (format!("{prefix}.{}", signature(n, m)), summary(m)))
        .collect();
    rows.sort();
    rows
}

/// The reference as Markdown.
pub fn markdown() -> String {
    let mut out = String::new();
    out.push_str("### `ctx` (the argument of `generate`)\n\n");
    let mut rows: Vec<(String, String)> = CTX_ATTRS
        .iter()
        .map(|(n, d)| (format!("ctx.{n}"), (*d).replace('|', "\\|")))
        .collect();
    rows.extend(methods("ctx", &DocType::from_starlark_value::<ScriptCtx>()));
    out.push_str(&table(&rows));
    out.push_str("\n### `rng` (from `ctx.rng(purpose)`)\n\n");
    out.push_str(&table(&methods(
        "rng",
        &DocType::from_starlark_value::<ScriptRng>(),
    )));
    out.push_str(
        "\n### `tools` (the argument of `solve`; each method is real tool calls in the run)\n\n",
    );
    out.push_str(&table(&methods(
        "tools",
        &DocType::from_starlark_value::<ScriptTools>(),
    )));
    out.push_str("\n### Built-in functions\n\n");
    let globals = GlobalsBuilder::new()
        .with(crate::ctx::register_globals)
        .build();
    let mut rows: Vec<(String, String)> = globals
        .documentation()
        .members
        .iter()
        .filter_map(|(n, item)| match item {
            DocItem::Member(m) => Some((signature(n, m), summary(m))),
            _ => None,
        })
        .collect();
    rows.sort();
    out.push_str(&table(&rows));
    out.push_str("\n### The prelude's builders (`engine/script/src/prelude.star`)\n\n");
    let mut rows: Vec<(String, String)> = crate::prelude()
        .documentation()
        .members
        .iter()
        .filter_map(|(n, item)| match item {
            DocItem::Member(m) => Some((signature(n, m), summary(m))),
            _ => None,
        })
        .collect();
    rows.sort();
    out.push_str(&table(&rows));
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_part_of_the_api_is_listed_with_its_signature() {
        let md = super::markdown();
        for needle in [
            "| `ctx.corpus` |",
            "| `ctx.rng(",
            "| `rng.choice(",
            "| `tools.send_message(",
            "| `tools.read_file(",
            "| `csv(",
            "| `checkpoint(",
        ] {
            assert!(md.contains(needle), "{needle} missing from\n{md}");
        }
        // Every entry says what it does.
        for line in md.lines().filter(|l| l.starts_with("| `")) {
            assert!(!line.ends_with("|  |"), "undocumented: {line}");
        }
    }
}
