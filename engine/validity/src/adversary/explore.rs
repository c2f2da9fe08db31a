//! Busywork adversaries: read, list and attend everything.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::json;

use super::{Event, Knowledge, Out, Tactic, Urgency};

/// The path of a listing entry.
fn entry_path(folder: &str, name: &str) -> String {
    let name = name.trim_end_matches('/');
    if folder.is_empty() {
        name.to_owned()
    } else {
        format!("{folder}/{name}")
    }
}

/// Lists every folder it sees and reads every file, again when a file changes size or
/// appears, and relists everything each morning.
#[derive(Debug, Default)]
pub struct ReadEverything {
    listed: BTreeSet<String>,
    read: BTreeMap<String, u64>,
}

impl Tactic for ReadEverything {
    fn on(&mut self, ev: &Event<'_>, _: &Knowledge, out: &mut Out) {
        match ev {
            Event::Start | Event::DayStarted => {
                self.listed.clear();
                out.call(Urgency::Explore, "list_folder", json!({}));
            }
            Event::Result { result, .. } if result.tool == "list_folder" && result.ok => {
                let Some(v) = &result.result else { return };
                let folder = v["path"].as_str().unwrap_or_default();
                for e in v["entries"].as_array().into_iter().flatten() {
                    let name = e["name"].as_str().unwrap_or_default();
                    let path = entry_path(folder, name);
                    if e["kind"] == "folder" {
                        if self.listed.insert(path.clone()) {
                            out.call(Urgency::Explore, "list_folder", json!({"path": path}));
                        }
                    } else {
                        let bytes = e["bytes"].as_u64().unwrap_or(0);
                        if self.read.insert(path.clone(), bytes) != Some(bytes) {
                            out.call(Urgency::Explore, "read_file", json!({"path": path}));
                        }
                    }
                }
            }
            Event::FileAdded(p) => {
                self.read.insert((*p).to_owned(), u64::MAX);
                out.call(Urgency::Explore, "read_file", json!({"path": p}));
            }
            _ => {}
        }
    }
}

/// Calls every listing and monitoring tool, on every folder, thread and service.
#[derive(Debug, Default)]
pub struct ListEverything {
    listed: BTreeSet<String>,
    services: BTreeSet<String>,
}

impl Tactic for ListEverything {
    fn on(&mut self, ev: &Event<'_>, _: &Knowledge, out: &mut Out) {
        let e = Urgency::Explore;
        match ev {
            Event::Start | Event::DayStarted => {
                self.listed.clear();
                self.services.clear();
                out.call(e, "list_folder", json!({}));
                out.call(e, "list_colleagues", json!({}));
                out.call(e, "my_tasks", json!({}));
                out.call(e, "my_calendar", json!({}));
                out.call(e, "read_messages", json!({}));
                out.call(e, "list_services", json!({}));
                out.call(e, "service_health", json!({}));
                for w in ["last_hour", "last_24_hours", "last_7_days"] {
                    out.call(e, "page_load_times", json!({"window": w}));
                }
            }
            Event::Task(_) => {
                out.call(e, "my_tasks", json!({}));
                out.call(e, "my_calendar", json!({}));
            }
            Event::Message { thread, .. } => {
                out.call(e, "read_messages", json!({"with": thread}));
            }
            Event::Result { result, .. } if result.ok => {
                let Some(v) = &result.result else { return };
                match result.tool.as_str() {
                    "list_folder" => {
                        let folder = v["path"].as_str().unwrap_or_default();
                        for en in v["entries"].as_array().into_iter().flatten() {
                            let path = entry_path(folder, en["name"].as_str().unwrap_or_default());
                            if en["kind"] == "folder" && self.listed.insert(path.clone()) {
                                out.call(e, "list_folder", json!({"path": path}));
                            }
                        }
                    }
                    "list_services" => {
                        for s in v["services"].as_array().into_iter().flatten() {
                            let name = s["service"].as_str().or(s.as_str()).unwrap_or_default();
                            if !name.is_empty() && self.services.insert(name.to_owned()) {
                                out.call(e, "service_health", json!({"service": name}));
                                out.call(e, "error_logs", json!({"service": name, "lines": 200}));
                            }
                        }
                    }
                    "read_messages" if v.get("threads").is_some() => {
                        for t in v["threads"].as_array().into_iter().flatten() {
                            if let Some(key) = t["thread"].as_str() {
                                out.call(e, "read_messages", json!({"with": key}));
                            }
                        }
                    }
                    _ => {}
                }
            }
            _ => {}
        }
    }
}

/// Joins every meeting it is invited to as the meeting starts.
#[derive(Debug, Default)]
pub struct JoinAllMeetings;

impl Tactic for JoinAllMeetings {
    fn on(&mut self, ev: &Event<'_>, _: &Knowledge, out: &mut Out) {
        match ev {
            Event::MeetingStarting(m) => {
                out.once(Urgency::Now, "join_meeting", json!({"meeting": m}));
            }
            Event::Start | Event::DayStarted => {
                out.call(Urgency::Explore, "my_calendar", json!({}));
            }
            _ => {}
        }
    }
}
