//! tbsim's one template dialect: `{name}` placeholders, where a name is one or more of
//! `a-z` and `_`.
//!
//! Braces that do not form a placeholder (a JSON example, `{ }`, `{Name}`, `{{`) are
//! text, so templates need no escapes, and inserted values are never scanned again.
//! Both template users speak it: the generators' corpus documents, colleagues'
//! replies and task wording ([`fill`], where every placeholder must have a value),
//! and the model prompt files `content/prompts/*.md` (parsed once with [`pieces`];
//! a name the prompt does not offer is refused when the file is loaded).

/// A template cut at its placeholders.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Piece<'a> {
    /// Literal text (braces included when they form no placeholder).
    Text(&'a str),
    /// A placeholder's name.
    Var(&'a str),
}

/// `template` as alternating text and placeholders, in order. Empty text pieces are
/// left out.
pub fn pieces(template: &str) -> Vec<Piece<'_>> {
    let mut out = Vec::new();
    let mut text_start = 0;
    let mut pos = 0;
    while let Some(open) = template[pos..].find('{').map(|o| o + pos) {
        let after = &template[open + 1..];
        let len = after
            .bytes()
            .take_while(|b| b.is_ascii_lowercase() || *b == b'_')
            .count();
        if len > 0 && after.as_bytes().get(len) == Some(&b'}') {
            if open > text_start {
                out.push(Piece::Text(&template[text_start..open]));
            }
            out.push(Piece::Var(&after[..len]));
            text_start = open + len + 2;
            pos = text_start;
        } else {
            pos = open + 1;
        }
    }
    if text_start < template.len() {
        out.push(Piece::Text(&template[text_start..]));
    }
    out
}

/// Returns the names of the `{name}` placeholders in `template`, in order of
/// appearance (duplicates included).
pub fn placeholders(template: &str) -> Vec<&str> {
    pieces(template)
        .into_iter()
        .filter_map(|p| match p {
            Piece::Var(name) => Some(name),
            Piece::Text(_) => None,
        })
        .collect()
}

/// Replaces each `{name}` placeholder in `template` with the value paired
/// with `name` in `vars`.
///
/// Substitution is a single pass: inserted values are copied verbatim and
/// never scanned for further placeholders. Braces that do not form a
/// placeholder (see [`pieces`]) are left as they are. Unused entries in
/// `vars` are ignored.
///
/// # Panics
///
/// In debug builds, panics if a placeholder has no entry in `vars`. In
/// release builds such a placeholder is left in the output unchanged.
pub fn fill(template: &str, vars: &[(&str, &str)]) -> String {
    let mut out = String::with_capacity(template.len());
    let mut missing: Vec<&str> = Vec::new();
    for piece in pieces(template) {
        match piece {
            Piece::Text(text) => out.push_str(text),
            Piece::Var(name) => match vars.iter().find(|(key, _)| *key == name) {
                Some((_, value)) => out.push_str(value),
                None => {
                    missing.push(name);
                    out.push('{');
                    out.push_str(name);
                    out.push('}');
                }
            },
        }
    }
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
    fn pieces_alternate_text_and_names() {
        assert_eq!(
            pieces("a {b}{c} {D} {{e}}"),
            [
                Piece::Text("a "),
                Piece::Var("b"),
                Piece::Var("c"),
                Piece::Text(" {D} {"),
                Piece::Var("e"),
                Piece::Text("}"),
            ]
        );
        assert_eq!(pieces(""), []);
        assert_eq!(pieces("{"), [Piece::Text("{")]);
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "unreplaced placeholders")]
    fn a_missing_value_is_a_bug() {
        let _ = fill("Hello {name}", &[]);
    }
}
