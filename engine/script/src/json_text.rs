//! Starlark values written as JSON text, for what `generate` returns (a task of
//! tens of kilobytes, mostly strings, lists and dicts). Going through serde's
//! erased serializer cost more than evaluating the script itself; walking the
//! common shapes directly is several times faster. Anything else (floats, big
//! integers, structs, sets) is written by the value's own `Serialize`, so the text
//! means what `serde_json::to_string(&value)` would, members in the same order.

use std::io::Write;

use starlark::values::Value;
use starlark::values::dict::DictRef;
use starlark::values::list::ListRef;
use starlark::values::tuple::TupleRef;

/// How deeply data may nest: far beyond any task, and well within the stack.
const MAX_DEPTH: usize = 128;

/// `v` as JSON text.
pub(crate) fn to_string(v: Value<'_>) -> anyhow::Result<String> {
    let mut out = Vec::with_capacity(4096);
    write(v, &mut out, 0)?;
    // Only valid UTF-8 is written: JSON punctuation, serde_json's output, and
    // strings that were `str` already.
    Ok(String::from_utf8(out)?)
}

fn write(v: Value<'_>, out: &mut Vec<u8>, depth: usize) -> anyhow::Result<()> {
    if depth > MAX_DEPTH {
        anyhow::bail!("data nested more than {MAX_DEPTH} levels deep");
    }
    // The common shapes first: a generated task is mostly strings in dicts.
    if let Some(s) = v.unpack_str() {
        string(s, out);
    } else if let Some(d) = DictRef::from_value(v) {
        let start = out.len();
        out.push(b'{');
        for (i, (k, x)) in d.iter().enumerate() {
            let Some(k) = k.unpack_str() else {
                // serde writes (or refuses) other keys: the dict is its to write.
                out.truncate(start);
                serde_json::to_writer(&mut *out, &v)?;
                return Ok(());
            };
            if i > 0 {
                out.push(b',');
            }
            string(k, out);
            out.push(b':');
            write(x, out, depth + 1)?;
        }
        out.push(b'}');
    } else if let Some(l) = ListRef::from_value(v) {
        seq(l.content(), out, depth)?;
    } else if let Some(i) = v.unpack_i32() {
        write!(out, "{i}")?;
    } else if v.is_none() {
        out.extend_from_slice(b"null");
    } else if let Some(b) = v.unpack_bool() {
        out.extend_from_slice(if b { b"true" } else { b"false" });
    } else if let Some(t) = TupleRef::from_value(v) {
        seq(t.content(), out, depth)?;
    } else {
        serde_json::to_writer(&mut *out, &v)?;
    }
    Ok(())
}

/// Whether `v` can be written as JSON (by [`to_string`]): the same verdict, and
/// the same error, without writing the text.
pub(crate) fn check(v: Value<'_>) -> anyhow::Result<()> {
    fn walk(v: Value<'_>, depth: usize) -> anyhow::Result<()> {
        if depth > MAX_DEPTH {
            anyhow::bail!("data nested more than {MAX_DEPTH} levels deep");
        }
        if v.unpack_str().is_some() || v.unpack_i32().is_some() || v.is_none() {
            return Ok(());
        }
        if let Some(d) = DictRef::from_value(v)
            && d.iter().all(|(k, _)| k.unpack_str().is_some())
        {
            return d.iter().try_for_each(|(_, x)| walk(x, depth + 1));
        }
        if let Some(l) = ListRef::from_value(v) {
            return l.content().iter().try_for_each(|x| walk(*x, depth + 1));
        }
        if let Some(t) = TupleRef::from_value(v) {
            return t.content().iter().try_for_each(|x| walk(*x, depth + 1));
        }
        if v.unpack_bool().is_some() {
            return Ok(());
        }
        serde_json::to_writer(std::io::sink(), &v)?;
        Ok(())
    }
    walk(v, 0)
}

/// `v` as indented JSON text, dicts' keys in sorted order: what
/// `serde_json::to_string_pretty(&v.to_json_value()?)` writes (`json_pretty`),
/// without building the JSON value. `None` when `v` holds anything but None,
/// booleans, small ints, strings, lists, tuples and dicts keyed by strings; the
/// caller then takes serde's way, which handles (or refuses) the rest.
pub(crate) fn to_pretty_string(v: Value<'_>) -> Option<String> {
    let mut out = Vec::with_capacity(1024);
    pretty(v, &mut out, 0)?;
    String::from_utf8(out).ok()
}

fn pretty(v: Value<'_>, out: &mut Vec<u8>, depth: usize) -> Option<()> {
    if depth > MAX_DEPTH {
        return None;
    }
    let indent = |out: &mut Vec<u8>, depth: usize| {
        out.push(b'\n');
        out.resize(out.len() + 2 * depth, b' ');
    };
    let items = |xs: &[Value<'_>], out: &mut Vec<u8>| {
        if xs.is_empty() {
            out.extend_from_slice(b"[]");
            return Some(());
        }
        out.push(b'[');
        for (i, x) in xs.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            indent(out, depth + 1);
            pretty(*x, out, depth + 1)?;
        }
        indent(out, depth);
        out.push(b']');
        Some(())
    };
    if v.is_none() {
        out.extend_from_slice(b"null");
    } else if let Some(b) = v.unpack_bool() {
        out.extend_from_slice(if b { b"true" } else { b"false" });
    } else if let Some(s) = v.unpack_str() {
        string(s, out);
    } else if let Some(i) = v.unpack_i32() {
        write!(out, "{i}").ok()?;
    } else if let Some(l) = ListRef::from_value(v) {
        items(l.content(), out)?;
    } else if let Some(t) = TupleRef::from_value(v) {
        items(t.content(), out)?;
    } else if let Some(d) = DictRef::from_value(v) {
        let mut members = d
            .iter()
            .map(|(k, x)| Some((k.unpack_str()?, x)))
            .collect::<Option<Vec<_>>>()?;
        if members.is_empty() {
            out.extend_from_slice(b"{}");
            return Some(());
        }
        // A JSON value's object sorts its keys (byte order); a dict's keys differ.
        members.sort_unstable_by(|a, b| a.0.cmp(b.0));
        out.push(b'{');
        for (i, (k, x)) in members.into_iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            indent(out, depth + 1);
            string(k, out);
            out.extend_from_slice(b": ");
            pretty(x, out, depth + 1)?;
        }
        indent(out, depth);
        out.push(b'}');
    } else {
        return None;
    }
    Some(())
}

/// Whether serde_json writes `b` escaped in a string: `"`, `\\` and controls.
fn escaped(b: u8) -> bool {
    b < 0x20 || b == b'"' || b == b'\\'
}

/// Bit 7 of each byte of `w` (little-endian) set where the byte is one serde_json
/// escapes: below 0x20, `"` or `\\`. Borrows can also set bits above a true match,
/// never below one, so the lowest set bit marks the first byte that needs escaping.
fn escapes_in(w: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let below_space = w.wrapping_sub(ONES * 0x20);
    let quote = (w ^ (ONES * u64::from(b'"'))).wrapping_sub(ONES);
    let backslash = (w ^ (ONES * u64::from(b'\\'))).wrapping_sub(ONES);
    let zero_quote = quote & !(w ^ (ONES * u64::from(b'"')));
    let zero_backslash = backslash & !(w ^ (ONES * u64::from(b'\\')));
    (below_space & !w | zero_quote | zero_backslash) & HIGH
}

/// `s` as a JSON string, escaped exactly as serde_json escapes it. Text is
/// scanned a word (8 bytes) at a time for the next byte that needs escaping; most
/// of a generated task's text is files and briefs, with an escape a line at most.
fn string(s: &str, out: &mut Vec<u8>) {
    let bytes = s.as_bytes();
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    let (mut start, mut i) = (0, 0);
    while i < bytes.len() {
        if let Some(word) = bytes
            .get(i..i + 8)
            .and_then(|b| <[u8; 8]>::try_from(b).ok())
        {
            let found = escapes_in(u64::from_le_bytes(word));
            if found == 0 {
                i += 8;
                continue;
            }
            i += (found.trailing_zeros() / 8) as usize;
        } else if !escaped(bytes[i]) {
            i += 1;
            continue;
        }
        out.extend_from_slice(&bytes[start..i]);
        escape(bytes[i], out);
        i += 1;
        start = i;
    }
    out.extend_from_slice(&bytes[start..]);
    out.push(b'"');
}

/// The escape serde_json writes for `b` (one that [`escaped`] names).
fn escape(b: u8, out: &mut Vec<u8>) {
    match b {
        b'"' => out.extend_from_slice(b"\\\""),
        b'\\' => out.extend_from_slice(b"\\\\"),
        b'\n' => out.extend_from_slice(b"\\n"),
        b'\r' => out.extend_from_slice(b"\\r"),
        b'\t' => out.extend_from_slice(b"\\t"),
        0x08 => out.extend_from_slice(b"\\b"),
        0x0c => out.extend_from_slice(b"\\f"),
        _ => {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.extend_from_slice(b"\\u00");
            out.push(HEX[usize::from(b >> 4)]);
            out.push(HEX[usize::from(b & 0xf)]);
        }
    }
}

fn seq(items: &[Value<'_>], out: &mut Vec<u8>, depth: usize) -> anyhow::Result<()> {
    out.push(b'[');
    for (i, x) in items.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write(*x, out, depth + 1)?;
    }
    out.push(b']');
    Ok(())
}

#[cfg(test)]
mod tests {
    use starlark::environment::{Globals, Module};
    use starlark::eval::Evaluator;
    use starlark::syntax::{AstModule, Dialect};

    /// Evaluates `expr`; the direct text and serde's (or their errors' absence).
    fn both(expr: &str) -> (Option<String>, Option<String>) {
        with_value(expr, |v| {
            (super::to_string(v).ok(), serde_json::to_string(&v).ok())
        })
    }

    /// Runs `check` on the value `expr` evaluates to.
    fn with_value<T>(expr: &str, check: impl FnOnce(starlark::values::Value<'_>) -> T) -> T {
        Module::with_temp_heap(|m| {
            let ast = AstModule::parse("t.star", expr.to_owned(), &Dialect::Extended).unwrap();
            let mut eval = Evaluator::new(&m);
            let v = eval
                .eval_module(ast, &Globals::extended_internal())
                .unwrap();
            check(v)
        })
    }

    #[test]
    fn writes_what_serde_writes() {
        for expr in [
            "None",
            "True",
            "[False, 1, -2147483648, 2147483647, 2147483648, -99999999999999999999]",
            r#"{"b": 1, "a": [1, (2, 3)], "c": {"x": None}, "é\"\n\u0001": "\t"}"#,
            "[1.5, 0.1, 1e300, -0.0, float('inf')]",
            r#"struct(a = 1, b = [struct(c = "d")])"#,
            r#"{"k": set([3, 1, 2])}"#,
            "[]",
            "{}",
            "()",
            "{1: 2}",
        ] {
            let (ours, theirs) = both(expr);
            assert!(ours.is_some(), "{expr}");
            assert_eq!(ours, theirs, "{expr}");
        }
    }

    #[test]
    fn strings_are_escaped_as_serde_escapes_them() {
        let mut every: String = (0u8..128).map(char::from).collect();
        every.push_str("é€😀");
        let long = "plain text, long enough to skip in chunks; ".repeat(3);
        let cases = [
            String::new(),
            every.clone(),
            every.repeat(3),
            format!("{long}\"quoted\"{long}\\{long}\n"),
            format!("{long}{}", char::from(0x1f)),
            "x".repeat(15) + "\n" + &"y".repeat(17),
        ];
        // Every byte at every offset of a word, after and before plain text and
        // next to bytes that sit just outside the escaped ranges.
        let mut cases = cases.to_vec();
        for b in (0u8..128).chain([0xc3]) {
            let c = if b < 128 {
                char::from(b).to_string()
            } else {
                "é".into()
            };
            for at in 0..17 {
                cases.push(format!(
                    "{}{c}{}",
                    "!#[]".repeat(8)[..at].to_owned(),
                    " ~^]!"
                ));
            }
        }
        for s in cases {
            let mut ours = Vec::new();
            super::string(&s, &mut ours);
            assert_eq!(
                String::from_utf8(ours).unwrap(),
                serde_json::to_string(&s).unwrap(),
                "{s:?}"
            );
        }
    }

    #[test]
    fn pretty_text_is_what_serde_writes_from_the_json_value() {
        for expr in [
            "None",
            "[]",
            "{}",
            r#"{"b": [1, [], {}, (2, "x\n")], "a": {"z": None, "y": True, "é": -3}, "": ""}"#,
            r#"[{"k": [[1], [2, [3]]]}, "q\"", False]"#,
        ] {
            with_value(expr, |v| {
                let theirs = serde_json::to_string_pretty(&v.to_json_value().unwrap()).unwrap();
                assert_eq!(super::to_pretty_string(v), Some(theirs), "{expr}");
            });
        }
        // What it leaves to serde: floats, big ints, other keys, other types.
        for expr in ["[1.5]", "{\"a\": 2147483648}", "{1: 2}", "[struct(a = 1)]"] {
            with_value(expr, |v| {
                assert_eq!(super::to_pretty_string(v), None, "{expr}");
            });
        }
    }

    #[test]
    fn refuses_what_serde_refuses() {
        for expr in ["[{(1, 2): 3}]", "len", "[lambda x: x]", "{None: 1}"] {
            assert_eq!(both(expr), (None, None), "{expr}");
            with_value(expr, |v| {
                assert_eq!(
                    super::check(v).map_err(|e| e.to_string()),
                    super::to_string(v).map(drop).map_err(|e| e.to_string()),
                    "{expr}"
                );
            });
        }
    }

    #[test]
    fn refuses_data_nested_too_deep() {
        let nested = |n: usize| {
            Module::with_temp_heap(|m| {
                let src = format!(
                    "def f():\n    x = 1\n    for _ in range({n}):\n        x = [x]\n    return x\nf()"
                );
                let ast = AstModule::parse("t.star", src, &Dialect::Extended).unwrap();
                let mut eval = Evaluator::new(&m);
                let v = eval
                    .eval_module(ast, &Globals::extended_internal())
                    .unwrap();
                super::to_string(v).map_err(|e| e.to_string())
            })
        };
        assert!(nested(100).is_ok());
        assert!(nested(5000).unwrap_err().contains("nested"));
    }
}
