//! The generators' one template dialect: `{name}` placeholders, where a name is one
//! or more of `a-z` and `_`, filled in a single pass by [`fill`].
//!
//! Braces that do not form a placeholder (a JSON example, `{ }`, `{Name}`) are text,
//! so templates need no escapes; inserted values are never scanned again. The corpus
//! documents, colleagues' replies and task wording all use it (`corpus` re-exports
//! both functions). Model prompt files (`content/prompts/*.md`, rendered in
//! `llm::prompt`) use a stricter dialect of the same `{name}` form, with `{{`/`}}`
//! escapes and unknown names refused when the file is loaded.

/// Returns the names of the `{name}` placeholders in `template`, in order of
/// appearance (duplicates included).
///
/// A placeholder is `{` followed by one or more of `a-z` and `_`, then `}`.
/// Other braces, such as those in a JSON example, are not placeholders.
pub fn placeholders(template: &str) -> Vec<&str> {
    let mut found = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        let after = &rest[open + 1..];
        let len = after
            .bytes()
            .take_while(|b| b.is_ascii_lowercase() || *b == b'_')
            .count();
        if len > 0 && after.as_bytes().get(len) == Some(&b'}') {
            found.push(&after[..len]);
            rest = &after[len + 1..];
        } else {
            rest = after;
        }
    }
    found
}

/// Replaces each `{name}` placeholder in `template` with the value paired
/// with `name` in `vars`.
///
/// Substitution is a single pass: inserted values are copied verbatim and
/// never scanned for further placeholders. Braces that do not form a
/// placeholder (see [`placeholders`]) are left as they are. Unused entries in
/// `vars` are ignored.
///
/// # Panics
///
/// In debug builds, panics if a placeholder has no entry in `vars`. In
/// release builds such a placeholder is left in the output unchanged.
pub fn fill(template: &str, vars: &[(&str, &str)]) -> String {
    let mut out = String::with_capacity(template.len());
    let mut missing: Vec<&str> = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let len = after
            .bytes()
            .take_while(|b| b.is_ascii_lowercase() || *b == b'_')
            .count();
        if len > 0 && after.as_bytes().get(len) == Some(&b'}') {
            let name = &after[..len];
            match vars.iter().find(|(key, _)| *key == name) {
                Some((_, value)) => out.push_str(value),
                None => {
                    missing.push(name);
                    out.push_str(&rest[open..open + len + 2]);
                }
            }
            rest = &after[len + 1..];
        } else {
            out.push('{');
            rest = after;
        }
    }
    out.push_str(rest);
    debug_assert!(
        missing.is_empty(),
        "unreplaced placeholders in template: {missing:?}"
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_lowercase_names_in_braces() {
        assert_eq!(
            placeholders("{a} {b_c} {D} {} {x-y} {{q}} {\"k\": 1}"),
            ["a", "b_c", "q"]
        );
    }

    #[test]
    fn fill_is_a_single_pass_that_leaves_other_braces_alone() {
        let out = fill(
            "{who} wrote {\"n\": {n}} and {{who}} {Who}",
            &[("who", "{n}"), ("n", "3")],
        );
        assert_eq!(out, "{n} wrote {\"n\": 3} and {{n}} {Who}");
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "unreplaced placeholders")]
    fn a_missing_value_is_a_bug() {
        let _ = fill("Hello {name}", &[]);
    }
}
