//! The tool catalogue: names, descriptions and JSON schemas.
//!
//! One catalogue serves every agent front end. Each tool's schema is derived from its
//! argument struct in [`super::args`], and every call is read into that struct, so
//! what an agent is shown is exactly what is enforced.

use serde::Serialize;
use serde_json::Value;

use super::args::*;

/// One tool as an agent sees it.
#[derive(Debug, Clone, Serialize)]
pub struct ToolSpec {
    /// Name.
    pub name: &'static str,
    /// Family (chat, files, calendar, compute, monitor, time).
    pub family: &'static str,
    /// What it does.
    pub description: &'static str,
    /// JSON schema of the arguments object.
    pub parameters: Value,
    /// Default cost in simulated minutes (`wait` and `join_meeting` take as long as they take).
    pub cost_minutes: u32,
}

/// Every tool name, in catalogue order.
pub const TOOL_NAMES: &[&str] = &[
    "list_colleagues",
    "send_message",
    "create_group",
    "send_group_message",
    "read_messages",
    "list_folder",
    "read_file",
    "write_file",
    "copy_from_drive",
    "available_rooms",
    "book_meeting",
    "cancel_booking",
    "join_meeting",
    "my_calendar",
    "my_tasks",
    "calculator",
    "run_python",
    "list_services",
    "service_health",
    "page_load_times",
    "error_logs",
    "reboot_server",
    "wait",
    "finish",
];

/// The catalogue, built once per process (every tool call looks its tool up here).
pub fn catalogue() -> &'static [ToolSpec] {
    static CATALOGUE: std::sync::LazyLock<Vec<ToolSpec>> = std::sync::LazyLock::new(build);
    &CATALOGUE
}

fn build() -> Vec<ToolSpec> {
    vec![
        ToolSpec {
            name: "list_colleagues",
            family: "chat",
            description: "List everyone in the company you can message: key, name, department and position.",
            parameters: parameters::<ListColleagues>(),
            cost_minutes: 1,
        },
        ToolSpec {
            name: "send_message",
            family: "chat",
            description: "Send a direct message to a colleague. Replies arrive later as notifications. Be specific: name what you need.",
            parameters: parameters::<SendMessage>(),
            cost_minutes: 5,
        },
        ToolSpec {
            name: "create_group",
            family: "chat",
            description: "Create a group chat with colleagues (you are added automatically). Returns the group key.",
            parameters: parameters::<CreateGroup>(),
            cost_minutes: 1,
        },
        ToolSpec {
            name: "send_group_message",
            family: "chat",
            description: "Send a message to a group chat. Each member who knows something relevant replies.",
            parameters: parameters::<SendGroupMessage>(),
            cost_minutes: 10,
        },
        ToolSpec {
            name: "read_messages",
            family: "chat",
            description: "Without `with`: list your conversations and unread counts. With `with` (a thread key, colleague key or name): the whole conversation.",
            parameters: parameters::<ReadMessages>(),
            cost_minutes: 1,
        },
        ToolSpec {
            name: "list_folder",
            family: "files",
            description: "List a folder on the shared drive (`drive/...`) or in your workspace (`workspace/...`). Without `path`, list the two roots.",
            parameters: parameters::<ListFolder>(),
            cost_minutes: 1,
        },
        ToolSpec {
            name: "read_file",
            family: "files",
            description: "Read a file from the drive or your workspace. Images come back as an attachment.",
            parameters: parameters::<ReadFile>(),
            cost_minutes: 1,
        },
        ToolSpec {
            name: "write_file",
            family: "files",
            description: "Create or overwrite a text file in your workspace (`workspace/...`). The drive is read-only.",
            parameters: parameters::<WriteFile>(),
            cost_minutes: 1,
        },
        ToolSpec {
            name: "copy_from_drive",
            family: "files",
            description: "Copy a file or folder from the shared drive into your workspace.",
            parameters: parameters::<CopyFromDrive>(),
            cost_minutes: 10,
        },
        ToolSpec {
            name: "available_rooms",
            family: "calendar",
            description: "Rooms free for the whole interval, within office hours.",
            parameters: parameters::<AvailableRooms>(),
            cost_minutes: 1,
        },
        ToolSpec {
            name: "book_meeting",
            family: "calendar",
            description: "Book a room and invite colleagues. Fails on room or attendee conflicts, listing them.",
            parameters: parameters::<BookMeeting>(),
            cost_minutes: 5,
        },
        ToolSpec {
            name: "cancel_booking",
            family: "calendar",
            description: "Cancel a meeting you booked, before it starts.",
            parameters: parameters::<CancelBooking>(),
            cost_minutes: 1,
        },
        ToolSpec {
            name: "join_meeting",
            family: "calendar",
            description: "Join a meeting you are invited to and stay until it ends. Joining opens shortly before the start; arrive on time to hear the announcements.",
            parameters: parameters::<JoinMeeting>(),
            cost_minutes: 0,
        },
        ToolSpec {
            name: "my_calendar",
            family: "calendar",
            description: "Your meetings (invited or booked), in time order.",
            parameters: parameters::<MyCalendar>(),
            cost_minutes: 1,
        },
        ToolSpec {
            name: "my_tasks",
            family: "time",
            description: "The tasks you have been given so far, with deadlines, priorities and status.",
            parameters: parameters::<MyTasks>(),
            cost_minutes: 1,
        },
        ToolSpec {
            name: "calculator",
            family: "compute",
            description: "Evaluate arithmetic: + - * / % ^ and parentheses.",
            parameters: parameters::<Calculator>(),
            cost_minutes: 1,
        },
        ToolSpec {
            name: "run_python",
            family: "compute",
            description: "Run a Python 3 script over a copy of your workspace (cwd = workspace root; no network, no subprocesses, time and memory limited). Files it writes come back into your workspace.",
            parameters: parameters::<RunPython>(),
            cost_minutes: 1,
        },
        ToolSpec {
            name: "list_services",
            family: "monitor",
            description: "List the production services the monitoring system watches: name, role, metrics and the pages each serves.",
            parameters: parameters::<ListServices>(),
            cost_minutes: 1,
        },
        ToolSpec {
            name: "service_health",
            family: "monitor",
            description: "Live health of one service or (without `service`) all of them: status (ok, warning, critical) and each metric's value, status and change over the last hour.",
            parameters: parameters::<ServiceHealth>(),
            cost_minutes: 1,
        },
        ToolSpec {
            name: "page_load_times",
            family: "monitor",
            description: "Mean page load times (ms) over a window ending now, for every page or one page.",
            parameters: parameters::<PageLoadTimes>(),
            cost_minutes: 1,
        },
        ToolSpec {
            name: "error_logs",
            family: "monitor",
            description: "The most recent log lines of a service, oldest first.",
            parameters: parameters::<ErrorLogs>(),
            cost_minutes: 1,
        },
        ToolSpec {
            name: "reboot_server",
            family: "monitor",
            description: "Reboot a production server. Needs production change rights.",
            parameters: parameters::<RebootServer>(),
            cost_minutes: 1,
        },
        ToolSpec {
            name: "wait",
            family: "time",
            description: "Let time pass: until a time, for some minutes, or (with no arguments) until the next notification. Any notification wakes you early.",
            parameters: parameters::<Wait>(),
            cost_minutes: 0,
        },
        ToolSpec {
            name: "finish",
            family: "time",
            description: "End your working day. Call it when all your tasks are done.",
            parameters: parameters::<Finish>(),
            cost_minutes: 0,
        },
    ]
}

/// Checks `args` against a catalogue schema (the subset the catalogue uses).
/// Returns a message naming the offending field.
pub fn check_args(schema: &Value, args: &Value) -> Result<(), String> {
    let Value::Object(map) = args else {
        return Err(format!(
            "arguments must be a JSON object, found {}",
            kind(args)
        ));
    };
    let props = schema["properties"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    for (k, v) in map {
        let Some(p) = props.get(k) else {
            let allowed: Vec<&String> = props.keys().collect();
            return Err(if allowed.is_empty() {
                format!("unexpected argument `{k}`; this tool takes no arguments (send `{{}}`)")
            } else {
                format!(
                    "unexpected argument `{k}`; allowed: {}",
                    allowed
                        .iter()
                        .map(|a| format!("`{a}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            });
        };
        check_value(k, p, v)?;
    }
    for r in schema["required"].as_array().into_iter().flatten() {
        if let Some(r) = r.as_str()
            && !map.contains_key(r)
        {
            return Err(format!("missing required argument `{r}`"));
        }
    }
    Ok(())
}

fn check_value(name: &str, p: &Value, v: &Value) -> Result<(), String> {
    match p["type"].as_str() {
        Some("string") if !v.is_string() => {
            Err(format!("`{name}` must be a string, found {}", kind(v)))
        }
        Some("integer") => {
            let Some(n) = v.as_i64().or_else(|| {
                v.as_f64()
                    .filter(|f| f.fract() == 0.0 && f.abs() < 9e15)
                    .map(|f| f as i64)
            }) else {
                return Err(format!("`{name}` must be an integer, found {}", kind(v)));
            };
            match p["minimum"].as_i64() {
                Some(min) if n < min => Err(format!("`{name}` must be at least {min}, found {n}")),
                _ => Ok(()),
            }
        }
        Some("array") => {
            let Some(items) = v.as_array() else {
                return Err(format!("`{name}` must be an array, found {}", kind(v)));
            };
            if let Some(min) = p["minItems"].as_u64()
                && (items.len() as u64) < min
            {
                return Err(format!("`{name}` needs at least {min} item(s)"));
            }
            for (i, it) in items.iter().enumerate() {
                check_value(&format!("{name}[{i}]"), &p["items"], it)?;
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_match_the_catalogue() {
        let names: Vec<&str> = catalogue().iter().map(|t| t.name).collect();
        assert_eq!(names, TOOL_NAMES);
    }

    #[test]
    fn validates_the_subset() {
        let cat = catalogue();
        let wait = &cat.iter().find(|t| t.name == "wait").unwrap().parameters;
        assert!(check_args(wait, &json!({})).is_ok());
        assert!(check_args(wait, &json!({"minutes": 5})).is_ok());
        assert!(
            check_args(wait, &json!({"minutes": -5}))
                .unwrap_err()
                .contains("at least 1")
        );
        assert!(
            check_args(wait, &json!({"minutes": "5"}))
                .unwrap_err()
                .contains("integer")
        );
        assert!(check_args(wait, &json!([])).unwrap_err().contains("object"));
        let send = &cat
            .iter()
            .find(|t| t.name == "send_message")
            .unwrap()
            .parameters;
        assert!(
            check_args(send, &json!({"to": "x"}))
                .unwrap_err()
                .contains("`text`")
        );
        assert!(
            check_args(send, &json!({"to": "x", "text": "y", "cc": 1}))
                .unwrap_err()
                .contains("`cc`")
        );
        let group = &cat
            .iter()
            .find(|t| t.name == "create_group")
            .unwrap()
            .parameters;
        assert!(
            check_args(group, &json!({"name": "g", "members": [1]}))
                .unwrap_err()
                .contains("members[0]")
        );
        let fin = &cat.iter().find(|t| t.name == "finish").unwrap().parameters;
        assert!(
            check_args(fin, &json!({"x": 1}))
                .unwrap_err()
                .contains("no arguments")
        );
    }

    /// `tbsim tools --json` as it was when the schemas were written by hand: what
    /// agents, and the model requests recorded in trajectories, have always seen.
    const PINNED: &str = include_str!("catalogue.json");

    #[test]
    fn each_schema_is_the_one_agents_have_always_seen() {
        let pinned: Value = serde_json::from_str(PINNED).unwrap();
        let pinned = pinned.as_array().unwrap();
        assert_eq!(pinned.len(), catalogue().len());
        for (spec, was) in catalogue().iter().zip(pinned) {
            assert_eq!(was["name"], spec.name);
            assert_eq!(spec.parameters, was["parameters"], "{}", spec.name);
        }
        // Byte for byte, the whole catalogue (names, families, descriptions, costs).
        let now = serde_json::to_string_pretty(catalogue()).unwrap();
        assert_eq!(format!("{now}\n"), PINNED);
    }

    #[test]
    fn every_tool_has_its_argument_struct() {
        assert_eq!(ToolArgs::TOOLS, TOOL_NAMES);
        for spec in catalogue() {
            assert_eq!(
                ToolArgs::parameters(spec.name).as_ref(),
                Some(&spec.parameters),
                "{}",
                spec.name
            );
        }
    }

    fn arb_value() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(|n| json!(n)),
            any::<u64>().prop_map(|n| json!(n)),
            (-3i64..300).prop_map(|n| json!(n)),
            (-3i64..300).prop_map(|n| json!(n as f64)),
            (-3i64..300).prop_map(|n| json!(n as f64 + 0.5)),
            any::<f64>().prop_map(|f| json!(f)),
            Just(json!(9e15)),
            Just(json!(-0.0)),
            "[a-z/:. -]{0,8}".prop_map(Value::String),
        ];
        leaf.prop_recursive(2, 12, 3, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
                proptest::collection::btree_map("[a-z]{1,4}", inner, 0..3)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    /// Argument objects built from every field name any tool takes, plus strangers.
    fn arb_args() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        let mut names: Vec<String> = catalogue()
            .iter()
            .flat_map(|t| {
                t.parameters["properties"]
                    .as_object()
                    .unwrap()
                    .keys()
                    .cloned()
            })
            .collect();
        names.sort();
        names.dedup();
        names.extend(["x".to_owned(), "cc".to_owned()]);
        prop_oneof![
            9 => proptest::collection::btree_map(proptest::sample::select(names), arb_value(), 0..5)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
            1 => arb_value(),
        ]
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 2000, ..Default::default() })]
        /// The typed parse and the schema walker that phrases its refusals agree on
        /// what fits every tool, and neither panics.
        #[test]
        fn parsing_agrees_with_the_schema(tool in proptest::sample::select(TOOL_NAMES), args in arb_args()) {
            let spec = catalogue().iter().find(|t| t.name == tool).unwrap();
            let parsed = ToolArgs::parse(tool, &args);
            let checked = check_args(&spec.parameters, &args);
            proptest::prop_assert_eq!(parsed.is_ok(), checked.is_ok(), "{} {} parsed {:?} checked {:?}", tool, args, parsed, checked);
            if let Err(m) = checked {
                proptest::prop_assert!(!m.is_empty());
            }
        }
    }
}
