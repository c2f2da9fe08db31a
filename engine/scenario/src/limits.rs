//! Size limits for scenario files, which are untrusted input (people share packs).
//!
//! Every limit is far above what a real scenario needs (the bundled ones stay well
//! under each) and low enough that loading, validating and running a file at the
//! limits stays fast. The table is in `docs/errors/README.md`; each kind of breach has
//! its own code.
//!
//! Counts, string sizes and non-finite numbers are found by one walk over the parsed
//! scenario through its `Serialize` impl, so every field is covered, including ones
//! added later, and each problem is reported at its object path.

use std::fmt::Display;

use serde::Serialize;
use serde::ser::{self, Impossible};

use super::Scenario;
use super::error::ErrorCode;

/// Largest scenario file, in bytes (TB0022).
pub const MAX_SCENARIO_BYTES: u64 = 8 * 1024 * 1024;
/// Largest sidecar file, in bytes (TB0022).
pub const MAX_SIDECAR_BYTES: u64 = 16 * 1024 * 1024;
/// Most sidecar bytes one scenario may load, all files together (TB0022).
pub const MAX_SIDECAR_TOTAL_BYTES: u64 = 64 * 1024 * 1024;
/// Longest string anywhere in a scenario, in bytes (TB0020).
pub const MAX_STRING_BYTES: usize = 1024 * 1024;
/// Longest key, name or title, in bytes (TB0020).
pub const MAX_NAME_BYTES: usize = 200;
/// Longest drive, workspace or sidecar path, in bytes (TB0021).
pub const MAX_PATH_BYTES: usize = 240;
/// Most components in a drive, workspace or sidecar path, root included (TB0021).
pub const MAX_PATH_DEPTH: usize = 16;
/// Longest single component of a path, in bytes (TB0021).
pub const MAX_PATH_COMPONENT_BYTES: usize = 100;
/// Deepest nesting of `All(...)` checks (TB0019).
pub const MAX_CHECK_DEPTH: usize = 8;
/// Most items in any list or map without its own limit below (TB0019).
pub const MAX_ITEMS: usize = 10_000;
/// Most knapsack cells (items x capacity) over all distinct budget checks of one
/// scenario; each is solved exactly at load time (TB0019).
pub const MAX_BUDGET_CELLS_TOTAL: u64 = 40_000_000;
/// Most distinct outing maps in one scenario; each is solved at load time (TB0019).
pub const MAX_OUTING_MAPS: usize = 200;

/// Most items in lists named so, wherever they appear (TB0019).
pub const LIST_LIMITS: &[(&str, usize)] = &[
    ("people", 1_000),
    ("rooms", 200),
    ("meetings", 2_000),
    ("tasks", 200),
    ("files", 5_000),
    ("events", 5_000),
    ("services", 50),
    ("clues", 200),
    ("checkpoints", 64),
    ("plan", 200),
    ("attendees", 200),
    ("trigger", 16),
    ("trigger group", 128),
    ("after", 32),
    ("metrics", 50),
    ("pages", 50),
    ("All", 64),
    ("items", 1_000),
    ("roads", 2_000),
    ("shapes", 20_000),
    ("costs", 64),
];

/// Fields whose strings are keys, names or titles and get [`MAX_NAME_BYTES`].
const NAME_FIELDS: &[&str] = &["key", "name", "title", "family", "variant"];

/// The limit for a list reached through the field `name`.
fn list_limit(name: &str) -> usize {
    LIST_LIMITS
        .iter()
        .find(|(n, _)| *n == name)
        .map_or(MAX_ITEMS, |(_, l)| *l)
}

/// One breach found by [`walk`].
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Breach {
    pub code: ErrorCode,
    pub path: String,
    pub message: String,
}

/// Walks every value of `s`, reporting lists over their limit, strings over theirs,
/// and numbers that are not finite (no answer can ever equal `NaN`).
pub(super) fn walk(s: &Scenario) -> Vec<Breach> {
    let mut w = Walker {
        path: Vec::new(),
        breaches: Vec::new(),
    };
    // The walker itself never fails; an error here would be a serde impl bug.
    let _ = s.serialize(&mut w);
    w.breaches
}

/// A path segment: a field, a variant or an index.
enum Seg {
    Field(String),
    Index(usize),
}

struct Walker {
    path: Vec<Seg>,
    breaches: Vec<Breach>,
}

impl Walker {
    fn path_text(&self) -> String {
        let mut out = String::new();
        for s in &self.path {
            match s {
                Seg::Field(f) if out.is_empty() => out.push_str(f),
                Seg::Field(f) => {
                    out.push('.');
                    out.push_str(f);
                }
                Seg::Index(i) => {
                    out.push('[');
                    out.push_str(&i.to_string());
                    out.push(']');
                }
            }
        }
        out
    }

    /// The innermost field name, the one that says what a list or string is.
    fn field(&self) -> &str {
        self.path
            .iter()
            .rev()
            .find_map(|s| match s {
                Seg::Field(f) => Some(f.as_str()),
                Seg::Index(_) => None,
            })
            .unwrap_or("")
    }

    fn breach(&mut self, code: ErrorCode, message: String) {
        let path = self.path_text();
        self.breaches.push(Breach {
            code,
            path,
            message,
        });
    }

    fn list(&mut self, len: Option<usize>) {
        // A trigger is a list of groups, each a list of alternatives: the two levels
        // get their own limits (a few groups, many phrasings of each).
        let what = match (self.path.last(), self.field()) {
            (Some(Seg::Index(_)), "trigger") => "trigger group".to_owned(),
            (_, f) => f.to_owned(),
        };
        let limit = list_limit(&what);
        if let Some(n) = len
            && n > limit
        {
            self.breach(
                ErrorCode::TooMany,
                format!("{n} entries in `{what}`; at most {limit} are allowed"),
            );
        }
    }

    fn string(&mut self, v: &str) {
        let direct_field = matches!(self.path.last(), Some(Seg::Field(_)));
        let limit = if direct_field && NAME_FIELDS.contains(&self.field()) {
            MAX_NAME_BYTES
        } else {
            MAX_STRING_BYTES
        };
        if v.len() > limit {
            self.breach(
                ErrorCode::TooLong,
                format!(
                    "a string of {} bytes; at most {limit} are allowed here",
                    v.len()
                ),
            );
        }
    }

    fn float(&mut self, v: f64) {
        if !v.is_finite() {
            self.breach(
                ErrorCode::NeverMet,
                format!("{v} is not a finite number, so no answer or reading can ever match it"),
            );
        }
    }

    fn nested<T: Serialize + ?Sized>(&mut self, seg: Seg, v: &T) -> Result<(), WalkError> {
        self.path.push(seg);
        let r = v.serialize(&mut *self);
        self.path.pop();
        r
    }
}

/// Never produced; serde needs an error type.
#[derive(Debug)]
pub(super) struct WalkError;

impl Display for WalkError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("walk error")
    }
}

impl std::error::Error for WalkError {}

impl ser::Error for WalkError {
    fn custom<T: Display>(_: T) -> Self {
        WalkError
    }
}

/// A list, tuple or map being walked: counts its elements for their indices.
struct Compound<'a> {
    w: &'a mut Walker,
    next: usize,
    /// The key of the map entry whose value comes next.
    key: Option<String>,
    /// Pushed a variant name segment that `end` must pop.
    variant: bool,
}

impl Compound<'_> {
    fn element<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), WalkError> {
        let i = self.next;
        self.next += 1;
        self.w.nested(Seg::Index(i), v)
    }

    fn finish(self) -> Result<(), WalkError> {
        if self.variant {
            self.w.path.pop();
        }
        Ok(())
    }
}

/// Turns a map key into its text, for the path.
struct KeyText;

impl ser::Serializer for KeyText {
    type Ok = String;
    type Error = WalkError;
    type SerializeSeq = Impossible<String, WalkError>;
    type SerializeTuple = Impossible<String, WalkError>;
    type SerializeTupleStruct = Impossible<String, WalkError>;
    type SerializeTupleVariant = Impossible<String, WalkError>;
    type SerializeMap = Impossible<String, WalkError>;
    type SerializeStruct = Impossible<String, WalkError>;
    type SerializeStructVariant = Impossible<String, WalkError>;

    fn serialize_str(self, v: &str) -> Result<String, WalkError> {
        Ok(v.to_owned())
    }
    fn serialize_bool(self, v: bool) -> Result<String, WalkError> {
        Ok(v.to_string())
    }
    fn serialize_i8(self, v: i8) -> Result<String, WalkError> {
        Ok(v.to_string())
    }
    fn serialize_i16(self, v: i16) -> Result<String, WalkError> {
        Ok(v.to_string())
    }
    fn serialize_i32(self, v: i32) -> Result<String, WalkError> {
        Ok(v.to_string())
    }
    fn serialize_i64(self, v: i64) -> Result<String, WalkError> {
        Ok(v.to_string())
    }
    fn serialize_u8(self, v: u8) -> Result<String, WalkError> {
        Ok(v.to_string())
    }
    fn serialize_u16(self, v: u16) -> Result<String, WalkError> {
        Ok(v.to_string())
    }
    fn serialize_u32(self, v: u32) -> Result<String, WalkError> {
        Ok(v.to_string())
    }
    fn serialize_f32(self, v: f32) -> Result<String, WalkError> {
        Ok(v.to_string())
    }
    fn serialize_u64(self, v: u64) -> Result<String, WalkError> {
        Ok(v.to_string())
    }
    fn serialize_f64(self, v: f64) -> Result<String, WalkError> {
        Ok(v.to_string())
    }
    fn serialize_char(self, v: char) -> Result<String, WalkError> {
        Ok(v.to_string())
    }
    fn serialize_bytes(self, _: &[u8]) -> Result<String, WalkError> {
        Ok("?".into())
    }
    fn serialize_none(self) -> Result<String, WalkError> {
        Ok("?".into())
    }
    fn serialize_some<T: Serialize + ?Sized>(self, v: &T) -> Result<String, WalkError> {
        v.serialize(self)
    }
    fn serialize_unit(self) -> Result<String, WalkError> {
        Ok("?".into())
    }
    fn serialize_unit_struct(self, name: &'static str) -> Result<String, WalkError> {
        Ok(name.into())
    }
    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
    ) -> Result<String, WalkError> {
        Ok(variant.into())
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        v: &T,
    ) -> Result<String, WalkError> {
        v.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _: &T,
    ) -> Result<String, WalkError> {
        Ok(variant.into())
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, WalkError> {
        Err(WalkError)
    }
    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, WalkError> {
        Err(WalkError)
    }
    fn serialize_tuple_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleStruct, WalkError> {
        Err(WalkError)
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, WalkError> {
        Err(WalkError)
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, WalkError> {
        Err(WalkError)
    }
    fn serialize_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStruct, WalkError> {
        Err(WalkError)
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, WalkError> {
        Err(WalkError)
    }
}

impl<'a> ser::Serializer for &'a mut Walker {
    type Ok = ();
    type Error = WalkError;
    type SerializeSeq = Compound<'a>;
    type SerializeTuple = Compound<'a>;
    type SerializeTupleStruct = Compound<'a>;
    type SerializeTupleVariant = Compound<'a>;
    type SerializeMap = Compound<'a>;
    type SerializeStruct = Compound<'a>;
    type SerializeStructVariant = Compound<'a>;

    fn serialize_bool(self, _: bool) -> Result<(), WalkError> {
        Ok(())
    }
    fn serialize_i8(self, _: i8) -> Result<(), WalkError> {
        Ok(())
    }
    fn serialize_i16(self, _: i16) -> Result<(), WalkError> {
        Ok(())
    }
    fn serialize_i32(self, _: i32) -> Result<(), WalkError> {
        Ok(())
    }
    fn serialize_i64(self, _: i64) -> Result<(), WalkError> {
        Ok(())
    }
    fn serialize_u8(self, _: u8) -> Result<(), WalkError> {
        Ok(())
    }
    fn serialize_u16(self, _: u16) -> Result<(), WalkError> {
        Ok(())
    }
    fn serialize_u32(self, _: u32) -> Result<(), WalkError> {
        Ok(())
    }
    fn serialize_u64(self, _: u64) -> Result<(), WalkError> {
        Ok(())
    }
    fn serialize_f32(self, v: f32) -> Result<(), WalkError> {
        self.float(f64::from(v));
        Ok(())
    }
    fn serialize_f64(self, v: f64) -> Result<(), WalkError> {
        self.float(v);
        Ok(())
    }
    fn serialize_char(self, _: char) -> Result<(), WalkError> {
        Ok(())
    }
    fn serialize_str(self, v: &str) -> Result<(), WalkError> {
        self.string(v);
        Ok(())
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<(), WalkError> {
        self.list(Some(v.len()));
        Ok(())
    }
    fn serialize_none(self) -> Result<(), WalkError> {
        Ok(())
    }
    fn serialize_some<T: Serialize + ?Sized>(self, v: &T) -> Result<(), WalkError> {
        v.serialize(self)
    }
    fn serialize_unit(self) -> Result<(), WalkError> {
        Ok(())
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<(), WalkError> {
        Ok(())
    }
    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
    ) -> Result<(), WalkError> {
        Ok(())
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        v: &T,
    ) -> Result<(), WalkError> {
        v.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        v: &T,
    ) -> Result<(), WalkError> {
        self.nested(Seg::Field(variant.to_owned()), v)
    }
    fn serialize_seq(self, len: Option<usize>) -> Result<Compound<'a>, WalkError> {
        self.list(len);
        Ok(Compound {
            w: self,
            next: 0,
            key: None,
            variant: false,
        })
    }
    fn serialize_tuple(self, _: usize) -> Result<Compound<'a>, WalkError> {
        Ok(Compound {
            w: self,
            next: 0,
            key: None,
            variant: false,
        })
    }
    fn serialize_tuple_struct(self, _: &'static str, _: usize) -> Result<Compound<'a>, WalkError> {
        self.serialize_tuple(0)
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<Compound<'a>, WalkError> {
        self.path.push(Seg::Field(variant.to_owned()));
        Ok(Compound {
            w: self,
            next: 0,
            key: None,
            variant: true,
        })
    }
    fn serialize_map(self, len: Option<usize>) -> Result<Compound<'a>, WalkError> {
        self.serialize_seq(len)
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Compound<'a>, WalkError> {
        self.serialize_tuple(0)
    }
    fn serialize_struct_variant(
        self,
        name: &'static str,
        i: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Compound<'a>, WalkError> {
        self.serialize_tuple_variant(name, i, variant, len)
    }
}

/// Sequences, tuples and tuple variants all walk their elements the same way.
macro_rules! walk_elements {
    ($($trait:ident :: $method:ident),* $(,)?) => {$(
        impl ser::$trait for Compound<'_> {
            type Ok = ();
            type Error = WalkError;
            fn $method<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), WalkError> {
                self.element(v)
            }
            fn end(self) -> Result<(), WalkError> {
                self.finish()
            }
        }
    )*};
}

walk_elements!(
    SerializeSeq::serialize_element,
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field,
    SerializeTupleVariant::serialize_field,
);

impl ser::SerializeMap for Compound<'_> {
    type Ok = ();
    type Error = WalkError;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, k: &T) -> Result<(), WalkError> {
        let text = k.serialize(KeyText).unwrap_or_else(|_| "?".into());
        // Map keys name things (tools, fields), so they are bounded like names.
        if text.len() > MAX_NAME_BYTES {
            self.w.path.push(Seg::Field(text.clone()));
            self.w.breach(
                ErrorCode::TooLong,
                format!(
                    "a key of {} bytes; at most {MAX_NAME_BYTES} are allowed",
                    text.len()
                ),
            );
            self.w.path.pop();
        }
        self.key = Some(text);
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), WalkError> {
        let key = self.key.take().unwrap_or_else(|| "?".into());
        self.w.nested(Seg::Field(key), v)
    }
    fn end(self) -> Result<(), WalkError> {
        self.finish()
    }
}

impl ser::SerializeStruct for Compound<'_> {
    type Ok = ();
    type Error = WalkError;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        name: &'static str,
        v: &T,
    ) -> Result<(), WalkError> {
        self.w.nested(Seg::Field(name.to_owned()), v)
    }
    fn end(self) -> Result<(), WalkError> {
        self.finish()
    }
}

impl ser::SerializeStructVariant for Compound<'_> {
    type Ok = ();
    type Error = WalkError;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        name: &'static str,
        v: &T,
    ) -> Result<(), WalkError> {
        self.w.nested(Seg::Field(name.to_owned()), v)
    }
    fn end(self) -> Result<(), WalkError> {
        self.finish()
    }
}

/// Checks a drive, workspace or sidecar path against the length and depth limits;
/// `None` when it is within them.
pub(super) fn path_problem(p: &str) -> Option<String> {
    let parts: Vec<&str> = p.split('/').filter(|c| !c.is_empty()).collect();
    if p.len() > MAX_PATH_BYTES {
        Some(format!(
            "the path is {} bytes long; at most {MAX_PATH_BYTES} are allowed",
            p.len()
        ))
    } else if parts.len() > MAX_PATH_DEPTH {
        Some(format!(
            "the path has {} levels; at most {MAX_PATH_DEPTH} are allowed",
            parts.len()
        ))
    } else {
        parts
            .iter()
            .find(|c| c.len() > MAX_PATH_COMPONENT_BYTES)
            .map(|c| {
                format!(
                    "the path component `{}...` is {} bytes long; at most {MAX_PATH_COMPONENT_BYTES} are allowed",
                    c.chars().take(16).collect::<String>(),
                    c.len()
                )
            })
    }
}
