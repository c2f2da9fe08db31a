//! Meeting book over many seeds, and wrong guest lists that must not pass.

use std::collections::BTreeSet;

use tbsim_core::protocol::ToolCall;
use tbsim_core::protocol::{Decision, SimConfig};
use tbsim_engine::agent::Oracle;
use tbsim_engine::sim::Sim;
use tbsim_engine::tools::LivePython;
use tbsim_engine::trajectory::Trajectory;
use tbsim_gen::{Family, Suite, TaskPlan, meeting_book};
use tbsim_scenario::{Check, LoadedScenario, Scenario};

use crate::util::{
    SEEDS, assert_distinct_worlds, check_generated, generate_one, load_generated, one_task_suite,
};

fn suite(seed: u64, params: meeting_book::Params) -> Suite {
    one_task_suite("mb", seed, "mb", Family::MeetingBook(params))
}

fn load(text: &str) -> LoadedScenario {
    load_generated(text, "mb.ron")
}

/// Generates, round-trips and runs one instance; returns its text and variant.
fn check_instance(seed: u64, params: &meeting_book::Params) -> (String, String) {
    let (text, loaded) = check_generated(&format!("seed {seed}"), "mb.ron", || {
        suite(seed, params.clone())
    });
    (text, loaded.scenario.tasks[0].variant.clone())
}

#[test]
fn meeting_book_over_seeds_and_every_variant() {
    let mut variants = BTreeSet::new();
    assert_distinct_worlds("meeting_book", SEEDS, |seed| {
        let (text, variant) = check_instance(seed, &meeting_book::Params::default());
        variants.insert(variant);
        text
    });
    let all = meeting_book::variants();
    assert_eq!(all.len(), 6);
    for (key, params) in all {
        let (_, variant) = check_instance(1000, &params);
        assert_eq!(variant, key);
        variants.insert(variant);
    }
    assert_eq!(variants.len(), 6, "{variants:?}");
}

fn call(id: &str, name: &str, args: serde_json::Value) -> Decision {
    Decision {
        calls: vec![ToolCall {
            id: id.into(),
            name: name.into(),
            arguments: args.to_string(),
        }],
    }
}

/// A free room for `seats` people during the window, else the largest free one.
fn room_for(s: &Scenario, from: &str, to: &str, seats: usize) -> String {
    let mut free: Vec<_> = s
        .rooms
        .iter()
        .filter(|r| {
            !s.meetings
                .iter()
                .any(|m| m.room == r.key && m.start.as_str() < to && m.end.as_str() > from)
        })
        .collect();
    free.sort_by_key(|r| r.capacity);
    free.iter()
        .find(|r| r.capacity as usize >= seats)
        .or(free.last())
        .map(|r| r.key.clone())
        .unwrap()
}

#[test]
fn wrong_guest_lists_fail_the_invitee_checkpoint() {
    let mut tried = BTreeSet::new();
    for seed in 0..24 {
        let text = generate_one(&suite(seed, Default::default()));
        let loaded = load(&text);
        let task = &loaded.scenario.tasks[0];
        let Check::Booked {
            window_start,
            window_end,
            ..
        } = &task.checkpoints[1].check
        else {
            panic!("the second checkpoint is the booking")
        };
        let title = task.title.trim_start_matches("Book the ").to_owned();
        for (label, guests) in meeting_book::wrong_bookings(task, &loaded.scenario) {
            tried.insert(label.clone());
            let mut sim = Sim::new(
                &loaded,
                SimConfig::default(),
                Trajectory::in_memory(),
                Box::new(LivePython::default()),
            );
            sim.begin();
            let room = room_for(&loaded.scenario, window_start, window_end, guests.len() + 1);
            let obs = sim.step(&call(
                "1",
                "book_meeting",
                serde_json::json!({"title": title, "room": room, "start": window_start,
                                   "end": window_end, "attendees": guests}),
            ));
            let booked = obs.results[0].ok;
            if label == "every candidate" {
                // The calendar never reveals other people's commitments: the booking
                // goes through, and only the invitee checkpoint judges it.
                // (A room too small for everyone is a fair refusal: it names nobody.)
                let err = obs.results[0].error.as_ref().map(|e| e.message.clone());
                assert!(
                    booked || err.as_deref().is_some_and(|m| m.contains(" seats ")),
                    "seed {seed}: a booking error must not expose hidden commitments: {err:?}"
                );
            }
            if booked {
                sim.step(&call(
                    "2",
                    "wait",
                    serde_json::json!({"until": window_start}),
                ));
                let joined = sim.step(&call(
                    "3",
                    "join_meeting",
                    serde_json::json!({"meeting": "meeting/booked-001"}),
                ));
                assert!(joined.results[0].ok, "seed {seed}: {:?}", joined.results[0]);
            }
            sim.end(tbsim_core::protocol::EndReason::Finished);
            let r = sim.results();
            let cp = |k: &str| {
                r.tasks[0]
                    .checkpoints
                    .iter()
                    .find(|c| c.key == k)
                    .unwrap()
                    .passed
            };
            assert!(!cp("attendees_right"), "seed {seed}: {label} must not pass");
            assert!(!cp("availability_confirmed"), "nobody was asked");
            // Booking the brief's slot and joining it is no work without the
            // right guests: a wrong list earns nothing at all (the
            // book-by-conflicts adversary's 2 of 4).
            assert!(
                !cp("booked") && !cp("attended_on_time"),
                "seed {seed}: {label} (booked: {booked})"
            );
        }
    }
    assert_eq!(tried.len(), 4, "{tried:?}");
    let loaded = load(&generate_one(&suite(0, Default::default())));
    assert!(
        meeting_book::wrong_answers(&loaded.scenario.tasks[0], &loaded.scenario).is_empty(),
        "no answer file, so no file-shaped wrong answers"
    );
}

#[test]
fn the_booking_attempt_hides_clashes_and_the_right_list_passes() {
    let text = generate_one(&suite(
        3,
        meeting_book::Params {
            kind: Some(meeting_book::Kind::Department),
            conflicts: Some(1),
            ..Default::default()
        },
    ));
    let loaded = load(&text);
    let task = &loaded.scenario.tasks[0];
    let Check::Booked {
        window_start,
        window_end,
        must_invite,
        must_not_invite,
        ..
    } = &task.checkpoints[2].check
    else {
        panic!()
    };
    let mut sim = Sim::new(
        &loaded,
        SimConfig::default(),
        Trajectory::in_memory(),
        Box::new(LivePython::default()),
    );
    sim.begin();
    let room = room_for(
        &loaded.scenario,
        window_start,
        window_end,
        must_invite.len() + 2,
    );
    let mut everyone = must_invite.clone();
    everyone.extend(must_not_invite.iter().cloned());
    let obs = sim.step(&call(
        "1",
        "book_meeting",
        serde_json::json!({"title": "x", "room": room, "start": window_start, "end": window_end, "attendees": everyone}),
    ));
    // The reported book-by-conflicts attack: the error used to name everyone with a
    // clashing commitment. Now the booking of everyone goes through and names nobody.
    let first = &obs.results[0];
    assert!(first.ok, "{first:?}");
    let clash = loaded
        .scenario
        .company
        .people
        .iter()
        .find(|p| p.key == must_not_invite[0])
        .unwrap();
    // Everyone invited is listed back (the agent named them), and nothing else about
    // them: no conflict, no other meeting.
    let result = first.result.as_ref().unwrap();
    let keys: Vec<&str> = result
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        ["attendees", "booked", "end", "room", "start"],
        "{result}"
    );
    assert!(result["attendees"].to_string().contains(&clash.name));
    let key = first.result.as_ref().unwrap()["booked"]
        .as_str()
        .unwrap()
        .to_owned();
    sim.step(&call(
        "c",
        "cancel_booking",
        serde_json::json!({ "meeting": key }),
    ));
    let obs = sim.step(&call(
        "2",
        "book_meeting",
        serde_json::json!({"title": task.title.trim_start_matches("Book the "), "room": room,
                           "start": window_start, "end": window_end, "attendees": must_invite}),
    ));
    assert!(obs.results[0].ok, "{:?}", obs.results[0]);
    sim.end(tbsim_core::protocol::EndReason::Finished);
    let r = sim.results();
    let passed: Vec<&str> = r.tasks[0]
        .checkpoints
        .iter()
        .filter(|c| c.passed)
        .map(|c| c.key.as_str())
        .collect();
    assert_eq!(passed, ["booked", "attendees_right"]);
}

#[test]
fn both_families_compose_with_the_others_on_one_day() {
    use tbsim_gen::{kb_fix, meeting_attend, resume_select, transaction_review};
    let task = |id: &str, family: Family| TaskPlan {
        id: id.into(),
        family,
        release: Default::default(),
        deadline: None,
        priority: Default::default(),
    };
    for seed in 0..6 {
        let mut s = suite(seed, Default::default());
        s.scenarios[0].tasks = vec![
            task(
                "ma",
                Family::MeetingAttend(meeting_attend::Params::default()),
            ),
            task("mb", Family::MeetingBook(meeting_book::Params::default())),
            task("rs", Family::ResumeSelect(resume_select::Params::default())),
            task("kb", Family::KbFix(kb_fix::Params::default())),
            task(
                "tr",
                Family::TransactionReview(transaction_review::Params::default()),
            ),
        ];
        let loaded = load(&generate_one(&s));
        let (o, _) = crate::util::run(&loaded, &mut Oracle::new(&loaded.scenario), None);
        assert_eq!(o.checkpoint_score, 1.0, "seed {seed}: {:#?}", o.tasks);
        assert!(o.errors.is_empty(), "seed {seed}: {:?}", o.errors);
    }
}
