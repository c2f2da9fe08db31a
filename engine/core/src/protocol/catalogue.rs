//! The tool catalogue: names, descriptions and JSON schemas.
//!
//! One catalogue serves every agent front end. The same schema objects are used to
//! validate calls, so what an agent is shown is exactly what is enforced.

use serde::Serialize;
use serde_json::{Value, json};

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

fn obj(props: Value, required: &[&str]) -> Value {
    json!({"type": "object", "properties": props, "required": required, "additionalProperties": false})
}

/// The catalogue, built once per process (every tool call looks its tool up here).
pub fn catalogue() -> &'static [ToolSpec] {
    static CATALOGUE: std::sync::LazyLock<Vec<ToolSpec>> = std::sync::LazyLock::new(build);
    &CATALOGUE
}

fn build() -> Vec<ToolSpec> {
    let s = |d: &str| json!({"type": "string", "description": d});
    let t = |d: &str| json!({"type": "string", "description": format!("{d} Either `HH:MM` (today) or `YYYY-MM-DDTHH:MM`.")});
    vec![
        ToolSpec {
            name: "list_colleagues",
            family: "chat",
            description: "List everyone in the company you can message: key, name, department and position.",
            parameters: obj(json!({}), &[]),
            cost_minutes: 1,
        },
        ToolSpec {
            name: "send_message",
            family: "chat",
            description: "Send a direct message to a colleague. Replies arrive later as notifications. Be specific: name what you need.",
            parameters: obj(
                json!({"to": s("Colleague's key (e.g. `npc/dana-li`) or full name."), "text": s("The message.")}),
                &["to", "text"],
            ),
            cost_minutes: 5,
        },
        ToolSpec {
            name: "create_group",
            family: "chat",
            description: "Create a group chat with colleagues (you are added automatically). Returns the group key.",
            parameters: obj(
                json!({"name": s("Group name."), "members": {"type": "array", "items": {"type": "string"}, "minItems": 1, "description": "Colleagues' keys or full names."}}),
                &["name", "members"],
            ),
            cost_minutes: 1,
        },
        ToolSpec {
            name: "send_group_message",
            family: "chat",
            description: "Send a message to a group chat. Each member who knows something relevant replies.",
            parameters: obj(
                json!({"group": s("Group key from create_group."), "text": s("The message.")}),
                &["group", "text"],
            ),
            cost_minutes: 10,
        },
        ToolSpec {
            name: "read_messages",
            family: "chat",
            description: "Without `with`: list your conversations and unread counts. With `with` (a thread key, colleague key or name): the whole conversation.",
            parameters: obj(
                json!({"with": s("Thread key, colleague key or full name.")}),
                &[],
            ),
            cost_minutes: 1,
        },
        ToolSpec {
            name: "list_folder",
            family: "files",
            description: "List a folder on the shared drive (`drive/...`) or in your workspace (`workspace/...`). Without `path`, list the two roots.",
            parameters: obj(
                json!({"path": s("Folder path, e.g. `drive/finance`.")}),
                &[],
            ),
            cost_minutes: 1,
        },
        ToolSpec {
            name: "read_file",
            family: "files",
            description: "Read a file from the drive or your workspace. Images come back as an attachment.",
            parameters: obj(
                json!({"path": s("File path, e.g. `drive/kb/guide.md`.")}),
                &["path"],
            ),
            cost_minutes: 1,
        },
        ToolSpec {
            name: "write_file",
            family: "files",
            description: "Create or overwrite a text file in your workspace (`workspace/...`). The drive is read-only.",
            parameters: obj(
                json!({"path": s("Workspace path, e.g. `workspace/report.json`."), "content": s("Full file content.")}),
                &["path", "content"],
            ),
            cost_minutes: 1,
        },
        ToolSpec {
            name: "copy_from_drive",
            family: "files",
            description: "Copy a file or folder from the shared drive into your workspace.",
            parameters: obj(
                json!({"path": s("Drive path of a file or folder."), "to": s("Workspace destination (default: `workspace/<name>`). A folder or a path ending in `/` copies inside it.")}),
                &["path"],
            ),
            cost_minutes: 10,
        },
        ToolSpec {
            name: "available_rooms",
            family: "calendar",
            description: "Rooms free for the whole interval, within office hours.",
            parameters: obj(
                json!({"start": t("Start."), "end": t("End.")}),
                &["start", "end"],
            ),
            cost_minutes: 1,
        },
        ToolSpec {
            name: "book_meeting",
            family: "calendar",
            description: "Book a room and invite colleagues. Fails on room or attendee conflicts, listing them.",
            parameters: obj(
                json!({"title": s("Meeting title."), "room": s("Room key or name."), "start": t("Start."), "end": t("End."),
                       "attendees": {"type": "array", "items": {"type": "string"}, "description": "Colleagues' keys or full names."}}),
                &["title", "room", "start", "end", "attendees"],
            ),
            cost_minutes: 5,
        },
        ToolSpec {
            name: "cancel_booking",
            family: "calendar",
            description: "Cancel a meeting you booked, before it starts.",
            parameters: obj(
                json!({"meeting": s("Meeting key (or its title).")}),
                &["meeting"],
            ),
            cost_minutes: 1,
        },
        ToolSpec {
            name: "join_meeting",
            family: "calendar",
            description: "Join a meeting you are invited to and stay until it ends. Joining opens shortly before the start; arrive on time to hear the announcements.",
            parameters: obj(
                json!({"meeting": s("Meeting key (or its title).")}),
                &["meeting"],
            ),
            cost_minutes: 0,
        },
        ToolSpec {
            name: "my_calendar",
            family: "calendar",
            description: "Your meetings (invited or booked), in time order.",
            parameters: obj(json!({}), &[]),
            cost_minutes: 1,
        },
        ToolSpec {
            name: "my_tasks",
            family: "time",
            description: "The tasks you have been given so far, with deadlines, priorities and status.",
            parameters: obj(json!({}), &[]),
            cost_minutes: 1,
        },
        ToolSpec {
            name: "calculator",
            family: "compute",
            description: "Evaluate arithmetic: + - * / % ^ and parentheses.",
            parameters: obj(
                json!({"expression": s("E.g. `(120 + 45.5) * 3`.")}),
                &["expression"],
            ),
            cost_minutes: 1,
        },
        ToolSpec {
            name: "run_python",
            family: "compute",
            description: "Run a Python 3 script over a copy of your workspace (cwd = workspace root; no network, no subprocesses, time and memory limited). Files it writes come back into your workspace.",
            parameters: obj(json!({"code": s("The script.")}), &["code"]),
            cost_minutes: 1,
        },
        ToolSpec {
            name: "list_services",
            family: "monitor",
            description: "List the production services the monitoring system watches: name, role, metrics and the pages each serves.",
            parameters: obj(json!({}), &[]),
            cost_minutes: 1,
        },
        ToolSpec {
            name: "service_health",
            family: "monitor",
            description: "Live health of one service or (without `service`) all of them: status (ok, warning, critical) and each metric's value, status and change over the last hour.",
            parameters: obj(
                json!({"service": s("Service name from list_services.")}),
                &[],
            ),
            cost_minutes: 1,
        },
        ToolSpec {
            name: "page_load_times",
            family: "monitor",
            description: "Mean page load times (ms) over a window ending now, for every page or one page.",
            parameters: obj(
                json!({"window": s("`last_hour`, `last_24_hours` (default) or `last_7_days`."), "page": s("A page path, e.g. `/pricing`.")}),
                &[],
            ),
            cost_minutes: 1,
        },
        ToolSpec {
            name: "error_logs",
            family: "monitor",
            description: "The most recent log lines of a service, oldest first.",
            parameters: obj(
                json!({"service": s("Service name from list_services."), "lines": {"type": "integer", "minimum": 1, "description": "How many lines (default 20, at most 200)."}}),
                &["service"],
            ),
            cost_minutes: 1,
        },
        ToolSpec {
            name: "reboot_server",
            family: "monitor",
            description: "Reboot a production server. Needs production change rights.",
            parameters: obj(
                json!({"service": s("Service name from list_services.")}),
                &["service"],
            ),
            cost_minutes: 1,
        },
        ToolSpec {
            name: "wait",
            family: "time",
            description: "Let time pass: until a time, for some minutes, or (with no arguments) until the next notification. Any notification wakes you early.",
            parameters: obj(
                json!({"until": t("Wake at this time."), "minutes": {"type": "integer", "minimum": 1, "description": "Minutes to wait."}}),
                &[],
            ),
            cost_minutes: 0,
        },
        ToolSpec {
            name: "finish",
            family: "time",
            description: "End your working day. Call it when all your tasks are done.",
            parameters: obj(json!({}), &[]),
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
}
