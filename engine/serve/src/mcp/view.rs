//! The resources an MCP client may read: the agent's own view of its world.
//!
//! A [`View`] is built only from what the agent has already been shown — the
//! briefing, the notifications that came with each observation and tool result, and
//! the results of its own `my_tasks` and `my_calendar` calls — never from the world
//! itself, so nothing hidden (answers, clues, colleagues' knowledge, the oracle's
//! plan) can leak through a resource.

use serde_json::{Value, json};

use tbsim_core::protocol::{Briefing, Notification, Observation, ToolResult};

/// The resources: URI, name, description.
pub const RESOURCES: &[(&str, &str, &str)] = &[
    (
        "tbsim://briefing",
        "briefing",
        "Who you are, your manager, your company and the working day (as told at the start).",
    ),
    (
        "tbsim://tasks",
        "tasks",
        "The tasks assigned to you so far (from task notifications), whether their deadline has passed, and the latest `my_tasks` result.",
    ),
    (
        "tbsim://calendar",
        "calendar",
        "Meetings you were told about (starting, announcements, ended) and the latest `my_calendar` result.",
    ),
    (
        "tbsim://mailbox",
        "mailbox",
        "Every message you have received, oldest first.",
    ),
    (
        "tbsim://notifications",
        "notifications",
        "Every notification you have been shown, oldest first.",
    ),
];

/// The agent's view (see the module docs).
#[derive(Debug, Default)]
pub struct View {
    briefing: Option<Briefing>,
    tasks: Vec<Value>,
    my_tasks: Option<Value>,
    meetings: Vec<Value>,
    my_calendar: Option<Value>,
    mailbox: Vec<Value>,
    log: Vec<Value>,
}

impl View {
    /// Records an observation: its briefing, its results and its notifications.
    pub fn observe(&mut self, obs: &Observation) {
        if let Some(b) = &obs.briefing {
            self.briefing = Some(b.clone());
        }
        for r in &obs.results {
            self.result(r);
        }
        self.notifications(&obs.notifications);
    }

    /// Records one tool result as shown: a `my_tasks` or `my_calendar` value, and
    /// its notifications.
    fn result(&mut self, r: &ToolResult) {
        if let Some(v) = r.result.as_ref().filter(|_| r.ok) {
            let shown = json!({"as_of": r.time, "result": v});
            match r.tool.as_str() {
                "my_tasks" => self.my_tasks = Some(shown),
                "my_calendar" => self.my_calendar = Some(shown),
                _ => {}
            }
        }
        self.notifications(&r.notifications);
    }

    fn notifications(&mut self, notes: &[Notification]) {
        for n in notes {
            let v = serde_json::to_value(n).expect("notifications serialise");
            match n {
                Notification::TaskReleased { .. } => {
                    let mut t = v.clone();
                    t["deadline_passed"] = json!(false);
                    self.tasks.push(t);
                }
                Notification::DeadlinePassed { task, .. } => {
                    for t in self.tasks.iter_mut().filter(|t| t["task"] == json!(task)) {
                        t["deadline_passed"] = json!(true);
                    }
                }
                Notification::MeetingStarting { .. }
                | Notification::Announcement { .. }
                | Notification::MeetingEnded { .. } => self.meetings.push(v.clone()),
                Notification::Message { .. } => self.mailbox.push(v.clone()),
                _ => {}
            }
            self.log.push(v);
        }
    }

    /// The resource at `uri` as JSON, or `None` for an unknown URI.
    pub fn read(&self, uri: &str) -> Option<Value> {
        Some(match uri {
            "tbsim://briefing" => json!({"briefing": self.briefing}),
            "tbsim://tasks" => json!({"tasks": self.tasks, "my_tasks": self.my_tasks}),
            "tbsim://calendar" => {
                json!({"meetings": self.meetings, "my_calendar": self.my_calendar})
            }
            "tbsim://mailbox" => json!({"messages": self.mailbox}),
            "tbsim://notifications" => json!({"notifications": self.log}),
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tbsim_core::protocol::Priority;
    use tbsim_core::time::SimTime;

    fn released(key: &str) -> Notification {
        Notification::TaskReleased {
            at: "09:00".into(),
            task: key.into(),
            title: "T".into(),
            objective: "Do it".into(),
            assigned_by: "M".into(),
            deadline: "17:00".into(),
            priority: Priority::Normal,
            hints: Vec::new(),
        }
    }

    #[test]
    fn tasks_mailbox_and_calendar_come_from_what_was_shown() {
        let mut v = View::default();
        v.observe(&Observation {
            step: 0,
            time: "09:00".into(),
            t: SimTime(0),
            briefing: None,
            results: vec![ToolResult {
                call_id: "c".into(),
                tool: "my_calendar".into(),
                ok: true,
                time: "09:01".into(),
                t: SimTime(60),
                result: Some(json!({"events": []})),
                error: None,
                attachments: Vec::new(),
                notifications: vec![
                    released("task/a"),
                    Notification::DeadlinePassed {
                        at: "17:00".into(),
                        task: "task/a".into(),
                        title: "T".into(),
                    },
                    Notification::Message {
                        at: "09:01".into(),
                        thread: "dm".into(),
                        from: "npc/x".into(),
                        from_name: "X".into(),
                        text: "hi".into(),
                    },
                ],
            }],
            notifications: vec![released("task/b")],
            over: false,
        });
        let tasks = v.read("tbsim://tasks").unwrap();
        assert_eq!(tasks["tasks"][0]["task"], "task/a");
        assert_eq!(tasks["tasks"][0]["deadline_passed"], true);
        assert_eq!(tasks["tasks"][1]["deadline_passed"], false);
        assert_eq!(
            v.read("tbsim://mailbox").unwrap()["messages"][0]["text"],
            "hi"
        );
        assert_eq!(
            v.read("tbsim://calendar").unwrap()["my_calendar"]["as_of"],
            "09:01"
        );
        assert_eq!(
            v.read("tbsim://notifications").unwrap()["notifications"]
                .as_array()
                .unwrap()
                .len(),
            4
        );
        assert!(v.read("tbsim://answers").is_none());
    }
}
