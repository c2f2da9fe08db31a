//! Depth caps: deep source and deep values are errors, not stack overflows.
//!
//! The interpreter recurses on nested syntax (compiling a 150,000-deep bracket
//! overflowed the stack) and on nested values (`str`, `json.encode`, JSON
//! conversion and freezing a module each recurse once per level). What this
//! module can see before the interpreter does, it refuses with a located error:
//! nesting in the source, and the depth of values that cross to tbsim (what a
//! function returns, and the module's declarations). What it cannot see (a deep
//! value given to `str` inside the script) is left to the program host's large
//! stack and, past that, to the process boundary: the host dies, tbsim says
//! why, and starts another.

use std::collections::HashMap;

use starlark::values::Value;
use starlark::values::dict::DictRef;
use starlark::values::list::ListRef;
use starlark::values::structs::StructRef;
use starlark::values::tuple::TupleRef;

use crate::ScriptError;

/// How deeply brackets may nest in a script (Python's parser stops near 200).
pub const MAX_SOURCE_NESTING: usize = 100;

/// How many operators one logical line may chain (`1 + 1 + … + 1` is as deep as
/// it is long once parsed).
pub const MAX_LINE_OPERATORS: usize = 2_000;

/// How deeply a value that crosses to tbsim may nest.
pub const MAX_VALUE_DEPTH: usize = 128;

/// Refuses source whose brackets nest deeper than [`MAX_SOURCE_NESTING`], or a
/// logical line with more than [`MAX_LINE_OPERATORS`] operators, naming the
/// line and column where the bound is crossed. Strings and comments are skipped
/// (a quote inside them does not count).
pub fn source_nesting(file: &str, source: &str) -> Result<(), ScriptError> {
    let at = |line: usize, col: usize, message: String| ScriptError {
        file: file.to_owned(),
        position: Some((line, col)),
        message,
        trace: String::new(),
    };
    let bytes = source.as_bytes();
    let (mut line, mut col) = (1usize, 0usize);
    let mut depth = 0usize;
    let mut operators = 0usize;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        col += 1;
        match b {
            b'\n' => {
                line += 1;
                col = 0;
                if depth == 0 {
                    operators = 0;
                }
            }
            b'#' => {
                while i + 1 < bytes.len() && bytes[i + 1] != b'\n' {
                    i += 1;
                }
            }
            b'"' | b'\'' => {
                let triple = bytes.get(i..i + 3).is_some_and(|t| t == [b, b, b]);
                let close: &[u8] = if triple {
                    &bytes[i..i + 3]
                } else {
                    &bytes[i..=i]
                };
                i += close.len();
                col += close.len() - 1;
                while i < bytes.len() && !bytes[i..].starts_with(close) {
                    if bytes[i] == b'\\' {
                        i += 1;
                        col += 1;
                    }
                    if bytes.get(i) == Some(&b'\n') {
                        line += 1;
                        col = 0;
                    } else {
                        col += 1;
                    }
                    i += 1;
                }
                i += close.len();
                col += close.len();
                continue;
            }
            b'(' | b'[' | b'{' => {
                depth += 1;
                if depth > MAX_SOURCE_NESTING {
                    return Err(at(
                        line,
                        col,
                        format!(
                            "brackets nest more than {MAX_SOURCE_NESTING} deep (the depth bound)"
                        ),
                    ));
                }
            }
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            b'+' | b'-' | b'*' | b'/' | b'%' | b'|' | b'&' | b'^' | b'~' | b'<' | b'>' | b'=' => {
                operators += 1;
                if operators > MAX_LINE_OPERATORS {
                    return Err(at(
                        line,
                        col,
                        format!(
                            "one statement chains more than {MAX_LINE_OPERATORS} operators (the depth bound)"
                        ),
                    ));
                }
            }
            _ if b.is_ascii_alphabetic() => {
                let start = i;
                while i + 1 < bytes.len()
                    && (bytes[i + 1].is_ascii_alphanumeric() || bytes[i + 1] == b'_')
                {
                    i += 1;
                }
                let word = &source[start..=i];
                col += i - start;
                if matches!(word, "not" | "and" | "or" | "if" | "in" | "lambda") {
                    operators += 1;
                    if operators > MAX_LINE_OPERATORS {
                        return Err(at(
                            line,
                            col,
                            format!(
                                "one statement chains more than {MAX_LINE_OPERATORS} operators (the depth bound)"
                            ),
                        ));
                    }
                }
            }
            _ => {}
        }
        i += 1;
    }
    Ok(())
}

/// Refuses a value nested deeper than [`MAX_VALUE_DEPTH`] (or holding itself),
/// without recursing: a value two million levels deep is walked on the heap.
/// A value reached twice at no greater depth is walked once, so shared parts
/// (`x = [y, y]`, repeated) cost their size, not their number of paths.
pub fn check(v: Value<'_>) -> Result<(), String> {
    let mut seen: HashMap<_, usize> = HashMap::new();
    let mut stack = vec![(v, 0usize)];
    while let Some((v, depth)) = stack.pop() {
        if depth > MAX_VALUE_DEPTH {
            return Err(format!(
                "data nested more than {MAX_VALUE_DEPTH} levels deep (the depth bound), or holding itself"
            ));
        }
        if v.unpack_str().is_some() || v.unpack_i32().is_some() || v.is_none() {
            continue;
        }
        match seen.get(&v.identity()) {
            Some(&d) if d <= depth => continue,
            _ => {
                seen.insert(v.identity(), depth);
            }
        }
        if let Some(l) = ListRef::from_value(v) {
            stack.extend(l.content().iter().map(|x| (*x, depth + 1)));
        } else if let Some(t) = TupleRef::from_value(v) {
            stack.extend(t.content().iter().map(|x| (*x, depth + 1)));
        } else if let Some(d) = DictRef::from_value(v) {
            for (k, x) in d.iter() {
                stack.push((k, depth + 1));
                stack.push((x, depth + 1));
            }
        } else if let Some(s) = StructRef::from_value(v) {
            stack.extend(s.iter().map(|(_, x)| (x, depth + 1)));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use starlark::environment::Module;

    #[test]
    fn deep_brackets_and_long_chains_are_refused_where_they_cross_the_bound() {
        let deep = format!("x = {}1{}\n", "(".repeat(150_000), ")".repeat(150_000));
        let e = source_nesting("f.star", &deep).unwrap_err();
        assert_eq!(e.position, Some((1, 4 + MAX_SOURCE_NESTING)));
        assert!(e.message.contains("depth bound"), "{e}");
        let chain = format!("x = 1{}\n", " + 1".repeat(10_000));
        assert!(source_nesting("f.star", &chain).is_err());
        let nots = format!("x = {}True\n", "not ".repeat(10_000));
        assert!(source_nesting("f.star", &nots).is_err());
        // Quotes, brackets and operators inside strings and comments do not count.
        let fine = format!(
            "# {}\nx = \"{}\"\ny = '''{}'''\nz = [[1], (2,), {{\"a\": 3}}]\n",
            "(".repeat(500),
            "[".repeat(500),
            "+\n".repeat(5_000)
        );
        source_nesting("f.star", &fine).unwrap();
        // Operators on many lines are many statements.
        source_nesting("f.star", &"x = 1 + 1\n".repeat(5_000)).unwrap();
        for src in [
            include_str!("../../../content/families/inventory_reorder/family.star"),
            include_str!("../../../content/families/incident_postmortem/family.star"),
            include_str!("../../../content/families/shift_roster/family.star"),
            crate::PRELUDE,
        ] {
            source_nesting("b.star", src).unwrap();
        }
    }

    #[test]
    fn deep_and_cyclic_values_are_refused_without_recursing() {
        Module::with_temp_heap(|m| {
            let heap = m.heap();
            let mut v = heap.alloc(1);
            for _ in 0..2_000_000 {
                v = heap.alloc(vec![v]);
            }
            assert!(check(v).unwrap_err().contains("depth bound"));
            let mut shared = heap.alloc("leaf");
            for _ in 0..100 {
                shared = heap.alloc(vec![shared, shared]);
            }
            check(shared).unwrap();
        });
    }
}
