//! Every tool's arguments as a typed struct: the one definition from which the JSON
//! schema an agent is shown ([`parameters`]), the checking of a call and the values
//! the dispatcher hands to the tool ([`ToolArgs::parse`]) all come.
//!
//! Each struct denies unknown fields (so its schema says `additionalProperties:
//! false`), and its doc comments are the schema's field descriptions. A missing
//! required field, a value of the wrong type or an unknown field fails to parse;
//! nothing is ever defaulted to an empty string or zero. Optional fields may be left
//! out but not sent as `null`.
//!
//! This module depends only on serde, serde_json and schemars.

use std::borrow::Cow;

use schemars::generate::SchemaSettings;
use schemars::transform::Transform;
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::Deserialize;
use serde::de::{DeserializeOwned, Deserializer, Error as _, Unexpected};
use serde_json::{Map, Value};

/// Arguments of `list_colleagues` (none).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListColleagues {}

/// Arguments of `send_message`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SendMessage {
    /// Colleague's key (e.g. `npc/dana-li`) or full name.
    pub to: String,
    /// The message.
    pub text: String,
}

/// Arguments of `create_group`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateGroup {
    /// Group name.
    pub name: String,
    /// Colleagues' keys or full names.
    #[serde(deserialize_with = "non_empty")]
    #[schemars(length(min = 1))]
    pub members: Vec<String>,
}

/// Arguments of `send_group_message`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SendGroupMessage {
    /// Group key from create_group.
    pub group: String,
    /// The message.
    pub text: String,
}

/// Arguments of `read_messages`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadMessages {
    /// Thread key, colleague key or full name.
    #[serde(default, deserialize_with = "present")]
    #[schemars(with = "String")]
    pub with: Option<String>,
}

/// Arguments of `list_folder`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListFolder {
    /// Folder path, e.g. `drive/finance`.
    #[serde(default, deserialize_with = "present")]
    #[schemars(with = "String")]
    pub path: Option<String>,
}

/// Arguments of `read_file`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadFile {
    /// File path, e.g. `drive/kb/guide.md`.
    pub path: String,
}

/// Arguments of `write_file`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WriteFile {
    /// Workspace path, e.g. `workspace/report.json`.
    pub path: String,
    /// Full file content.
    pub content: String,
}

/// Arguments of `copy_from_drive`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CopyFromDrive {
    /// Drive path of a file or folder.
    pub path: String,
    /// Workspace destination (default: `workspace/<name>`). A folder or a path ending in `/` copies inside it.
    #[serde(default, deserialize_with = "present")]
    #[schemars(with = "String")]
    pub to: Option<String>,
}

/// Arguments of `available_rooms`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AvailableRooms {
    /// Start. Either `HH:MM` (today) or `YYYY-MM-DDTHH:MM`.
    pub start: String,
    /// End. Either `HH:MM` (today) or `YYYY-MM-DDTHH:MM`.
    pub end: String,
}

/// Arguments of `book_meeting`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BookMeeting {
    /// Meeting title.
    pub title: String,
    /// Room key or name.
    pub room: String,
    /// Start. Either `HH:MM` (today) or `YYYY-MM-DDTHH:MM`.
    pub start: String,
    /// End. Either `HH:MM` (today) or `YYYY-MM-DDTHH:MM`.
    pub end: String,
    /// Colleagues' keys or full names.
    pub attendees: Vec<String>,
}

/// Arguments of `cancel_booking`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CancelBooking {
    /// Meeting key (or its title).
    pub meeting: String,
}

/// Arguments of `join_meeting`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct JoinMeeting {
    /// Meeting key (or its title).
    pub meeting: String,
}

/// Arguments of `my_calendar` (none).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MyCalendar {}

/// Arguments of `my_tasks` (none).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MyTasks {}

/// Arguments of `calculator`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Calculator {
    /// E.g. `(120 + 45.5) * 3`.
    pub expression: String,
}

/// Arguments of `run_python`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunPython {
    /// The script.
    pub code: String,
}

/// Arguments of `list_services` (none).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListServices {}

/// Arguments of `service_health`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ServiceHealth {
    /// Service name from list_services.
    #[serde(default, deserialize_with = "present")]
    #[schemars(with = "String")]
    pub service: Option<String>,
}

/// Arguments of `page_load_times`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PageLoadTimes {
    /// `last_hour`, `last_24_hours` (default) or `last_7_days`.
    #[serde(default, deserialize_with = "present")]
    #[schemars(with = "String")]
    pub window: Option<String>,
    /// A page path, e.g. `/pricing`.
    #[serde(default, deserialize_with = "present")]
    #[schemars(with = "String")]
    pub page: Option<String>,
}

/// Arguments of `error_logs`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ErrorLogs {
    /// Service name from list_services.
    pub service: String,
    /// How many lines (default 20, at most 200).
    #[serde(default, deserialize_with = "present")]
    #[schemars(with = "Positive")]
    pub lines: Option<Positive>,
}

/// Arguments of `reboot_server`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RebootServer {
    /// Service name from list_services.
    pub service: String,
}

/// Arguments of `wait`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Wait {
    /// Wake at this time. Either `HH:MM` (today) or `YYYY-MM-DDTHH:MM`.
    #[serde(default, deserialize_with = "present")]
    #[schemars(with = "String")]
    pub until: Option<String>,
    /// Minutes to wait.
    #[serde(default, deserialize_with = "present")]
    #[schemars(with = "Positive")]
    pub minutes: Option<Positive>,
}

/// Arguments of `finish` (none).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Finish {}

/// A whole number of at least 1: an integer up to 2⁶³−1, or a number written with a
/// fraction of zero below 9·10¹⁵ (`5.0` is 5); `5.5`, `0` and `-5` are refused. The
/// same rule as the schema walker's `integer` with `minimum: 1`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Positive(pub u64);

impl<'de> Deserialize<'de> for Positive {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let n = serde_json::Number::deserialize(d)?;
        let whole = n.as_i64().or_else(|| {
            n.as_f64()
                .filter(|f| f.fract() == 0.0 && f.abs() < 9e15)
                .map(|f| f as i64)
        });
        match whole {
            Some(w) if w >= 1 => Ok(Positive(w.unsigned_abs())),
            Some(w) => Err(D::Error::invalid_value(
                Unexpected::Signed(w),
                &"a whole number of at least 1",
            )),
            None => Err(D::Error::invalid_value(
                Unexpected::Other(&format!("the number {n}")),
                &"a whole number of at least 1",
            )),
        }
    }
}

impl JsonSchema for Positive {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> Cow<'static, str> {
        "Positive".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({"type": "integer", "minimum": 1})
    }
}

/// An optional field that, when given, must hold a value: `null` is refused (serde
/// would otherwise read it as absent).
fn present<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<T>, D::Error> {
    T::deserialize(d).map(Some)
}

fn non_empty<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    let v = Vec::<String>::deserialize(d)?;
    if v.is_empty() {
        return Err(D::Error::invalid_length(0, &"at least one name"));
    }
    Ok(v)
}

/// The JSON schema of a tool's arguments object, as agents are shown it:
/// `{"type": "object", "properties": {...}, "required": [...], "additionalProperties": false}`,
/// every property inline with its type, constraints and description.
pub fn parameters<T: JsonSchema>() -> Value {
    SchemaSettings::draft2020_12()
        .with(|s| s.meta_schema = None)
        .with_transform(AgentFacing)
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value()
}

/// Shapes a derived schema as the catalogue has always shown it: no `title` or
/// struct-level `description` (the tool has its own), no `format` (`uint64` and the
/// like are not JSON Schema vocabulary agents need) or `default: null` (the derive's
/// record of an absent optional field), `properties` and `required` always present,
/// and keys in one fixed order: `type`, `properties`, `required`,
/// `additionalProperties` on the object; `type`, `items`, `minItems`, `minimum`,
/// `description` on a property (serde_json sorts keys unless its `preserve_order`
/// feature is on; then this order is the one the hand-written schemas had).
#[derive(Debug, Clone, Copy)]
struct AgentFacing;

impl Transform for AgentFacing {
    fn transform(&mut self, schema: &mut Schema) {
        let Some(root) = schema.as_object_mut() else {
            return;
        };
        root.remove("title");
        root.remove("description");
        let mut props = match root.remove("properties") {
            Some(Value::Object(p)) => p,
            _ => Map::new(),
        };
        for p in props.values_mut() {
            tidy_property(p);
        }
        let required = root
            .remove("required")
            .unwrap_or_else(|| Value::Array(Vec::new()));
        let mut out = Map::new();
        if let Some(t) = root.remove("type") {
            out.insert("type".into(), t);
        }
        out.insert("properties".into(), Value::Object(props));
        out.insert("required".into(), required);
        if let Some(a) = root.remove("additionalProperties") {
            out.insert("additionalProperties".into(), a);
        }
        out.append(root);
        *root = out;
    }
}

fn tidy_property(p: &mut Value) {
    let Value::Object(m) = p else {
        return;
    };
    m.remove("format");
    if m.get("default") == Some(&Value::Null) {
        m.remove("default");
    }
    if let Some(items) = m.get_mut("items") {
        tidy_property(items);
    }
    let mut out = Map::new();
    for k in ["type", "items", "minItems", "minimum", "description"] {
        if let Some(v) = m.remove(k) {
            out.insert(k.into(), v);
        }
    }
    out.append(m);
    *m = out;
}

/// The refusal of arguments that are not a JSON object.
fn not_an_object(args: &Value) -> String {
    let found = match args {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    };
    format!("arguments must be a JSON object, found {found}")
}

fn from_object<T: DeserializeOwned>(args: &Value) -> Result<T, String> {
    if !args.is_object() {
        // A struct would also read a JSON array positionally; a call names its fields.
        return Err(not_an_object(args));
    }
    T::deserialize(args).map_err(|e| e.to_string())
}

macro_rules! tool_args {
    ($($name:literal => $ty:ident,)*) => {
        /// A call's arguments, parsed into its tool's struct: one variant per tool,
        /// named after the struct.
        #[derive(Debug, Clone, PartialEq, Eq)]
        pub enum ToolArgs {
            $(
                #[doc = concat!("`", $name, "`.")]
                $ty($ty),
            )*
        }

        impl ToolArgs {
            /// Every tool, in catalogue order.
            pub const TOOLS: &[&str] = &[$($name),*];

            /// Parses `args` (the call's JSON arguments) for `tool`. The error names
            /// the field and what was expected (serde's wording); an unknown tool is
            /// an error too.
            pub fn parse(tool: &str, args: &Value) -> Result<ToolArgs, String> {
                match tool {
                    $($name => from_object(args).map(ToolArgs::$ty),)*
                    other => Err(format!("there is no tool `{other}`")),
                }
            }

            /// The JSON schema of `tool`'s arguments ([`parameters`] of its struct).
            pub fn parameters(tool: &str) -> Option<Value> {
                match tool {
                    $($name => Some(parameters::<$ty>()),)*
                    _ => None,
                }
            }

            /// The tool these arguments are for.
            pub fn tool(&self) -> &'static str {
                match self {
                    $(ToolArgs::$ty(_) => $name,)*
                }
            }
        }
    };
}

tool_args! {
    "list_colleagues" => ListColleagues,
    "send_message" => SendMessage,
    "create_group" => CreateGroup,
    "send_group_message" => SendGroupMessage,
    "read_messages" => ReadMessages,
    "list_folder" => ListFolder,
    "read_file" => ReadFile,
    "write_file" => WriteFile,
    "copy_from_drive" => CopyFromDrive,
    "available_rooms" => AvailableRooms,
    "book_meeting" => BookMeeting,
    "cancel_booking" => CancelBooking,
    "join_meeting" => JoinMeeting,
    "my_calendar" => MyCalendar,
    "my_tasks" => MyTasks,
    "calculator" => Calculator,
    "run_python" => RunPython,
    "list_services" => ListServices,
    "service_health" => ServiceHealth,
    "page_load_times" => PageLoadTimes,
    "error_logs" => ErrorLogs,
    "reboot_server" => RebootServer,
    "wait" => Wait,
    "finish" => Finish,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(tool: &str, args: Value) -> Result<ToolArgs, String> {
        ToolArgs::parse(tool, &args)
    }

    #[test]
    fn reads_each_field_into_its_struct() {
        assert_eq!(
            parse("send_message", json!({"to": "npc/dana-li", "text": "hi"})),
            Ok(ToolArgs::SendMessage(SendMessage {
                to: "npc/dana-li".into(),
                text: "hi".into()
            }))
        );
        assert_eq!(
            parse("wait", json!({"minutes": 5.0})),
            Ok(ToolArgs::Wait(Wait {
                until: None,
                minutes: Some(Positive(5))
            }))
        );
        assert_eq!(
            parse("copy_from_drive", json!({"path": "drive/kb"})),
            Ok(ToolArgs::CopyFromDrive(CopyFromDrive {
                path: "drive/kb".into(),
                to: None
            }))
        );
        assert_eq!(parse("finish", json!({})), Ok(ToolArgs::Finish(Finish {})));
    }

    #[test]
    fn a_missing_required_field_is_an_error_never_an_empty_string() {
        let e = parse("send_message", json!({"to": "npc/dana-li"})).unwrap_err();
        assert_eq!(e, "missing field `text`");
        let e = parse(
            "book_meeting",
            json!({"title": "t", "room": "r", "start": "10:00", "end": "11:00"}),
        )
        .unwrap_err();
        assert_eq!(e, "missing field `attendees`");
        assert!(parse("read_file", json!({})).is_err());
    }

    #[test]
    fn a_wrong_type_is_an_error() {
        let e = parse("read_file", json!({"path": 7})).unwrap_err();
        assert_eq!(e, "invalid type: integer `7`, expected a string");
        let e = parse("create_group", json!({"name": "g", "members": ["a", 1]})).unwrap_err();
        assert!(e.contains("expected a string"), "{e}");
        let e = parse("create_group", json!({"name": "g", "members": []})).unwrap_err();
        assert!(e.contains("at least one name"), "{e}");
        let e = parse("wait", json!({"minutes": "5"})).unwrap_err();
        assert!(e.contains("number"), "{e}");
        for bad in [
            json!(0),
            json!(-5),
            json!(1.5),
            json!(1e300),
            json!(u64::MAX),
        ] {
            let e = parse("wait", json!({ "minutes": bad })).unwrap_err();
            assert!(e.contains("a whole number of at least 1"), "{bad}: {e}");
        }
        // An optional field may be left out, not sent as null.
        let e = parse("read_messages", json!({"with": null})).unwrap_err();
        assert!(e.contains("null"), "{e}");
        let e = parse("read_file", json!(["drive/kb/guide.md"])).unwrap_err();
        assert_eq!(e, "arguments must be a JSON object, found an array");
    }

    #[test]
    fn an_unknown_field_is_an_error() {
        let e = parse("send_message", json!({"to": "x", "text": "y", "cc": 1})).unwrap_err();
        assert!(e.starts_with("unknown field `cc`"), "{e}");
        let e = parse("finish", json!({"now": true})).unwrap_err();
        assert!(e.starts_with("unknown field `now`"), "{e}");
        assert_eq!(
            parse("hack_the_planet", json!({})).unwrap_err(),
            "there is no tool `hack_the_planet`"
        );
    }

    #[test]
    fn schemas_are_plain_objects_with_inline_properties() {
        assert_eq!(
            parameters::<ErrorLogs>(),
            json!({
                "type": "object",
                "properties": {
                    "service": {"type": "string", "description": "Service name from list_services."},
                    "lines": {"type": "integer", "minimum": 1, "description": "How many lines (default 20, at most 200)."},
                },
                "required": ["service"],
                "additionalProperties": false,
            })
        );
        assert_eq!(
            parameters::<Finish>(),
            json!({"type": "object", "properties": {}, "required": [], "additionalProperties": false})
        );
        for tool in ToolArgs::TOOLS {
            let p = ToolArgs::parameters(tool).unwrap();
            for (name, prop) in p["properties"].as_object().unwrap() {
                assert!(prop["type"].is_string(), "{tool}.{name}: {prop}");
                assert!(prop["description"].is_string(), "{tool}.{name}: {prop}");
                assert!(prop.get("format").is_none() && prop.get("default").is_none());
            }
        }
    }

    #[test]
    fn each_variant_knows_its_tool() {
        for tool in ToolArgs::TOOLS {
            if let Ok(a) = ToolArgs::parse(tool, &json!({})) {
                assert_eq!(a.tool(), *tool);
            }
        }
    }
}
