//! Handoff chain over many seeds.

use tbsim_gen::{Family, generate_suite, handoff_chain};
use tbsim_scenario::Release;

use crate::family_urgent_interrupt::{
    assert_sample_wrong_fail, load, oracle, suite, sweep, with_plan,
};
use crate::util::{family_variants, generate_one};

fn variants() -> Vec<(String, Family)> {
    family_variants(handoff_chain::variants(), Family::HandoffChain)
}

#[test]
fn handoff_chain_over_seeds() {
    let sample = sweep(
        "handoff_chain",
        Family::HandoffChain(Default::default()),
        variants(),
    );
    assert_sample_wrong_fail(
        &sample,
        handoff_chain::wrong_answers,
        handoff_chain::wrong_messages,
    );
}

/// Each later stage waits on the previous one's answer checkpoint; a wrong first
/// answer keeps the rest of the chain unreleased.
#[test]
fn a_wrong_first_output_blocks_the_rest_of_the_chain() {
    for (i, (key, family)) in variants().into_iter().enumerate() {
        let text = generate_one(&suite(500 + i as u64, family));
        let loaded = load(&text);
        let tasks = &loaded.scenario.tasks;
        assert_eq!(tasks.len(), if key.ends_with("len3") { 3 } else { 2 });
        for w in tasks.windows(2) {
            assert_eq!(
                w[1].release,
                Release::AfterCheckpoint {
                    task: w[0].key.clone(),
                    checkpoint: "output_correct".into()
                }
            );
            // The later stage reads the earlier output.
            let out = w[0]
                .plan
                .iter()
                .rev()
                .find(|s| s.tool == "write_file")
                .unwrap();
            let path: serde_json::Value = serde_json::from_str(&out.args).unwrap();
            assert!(
                w[1].objective.contains(path["path"].as_str().unwrap()),
                "{key}"
            );
        }
        let first = tasks[0].key.clone();
        let broken = with_plan(&loaded, &first, |plan| {
            let w = plan
                .iter_mut()
                .rev()
                .find(|s| s.tool == "write_file")
                .unwrap();
            let mut args: serde_json::Value = serde_json::from_str(&w.args).unwrap();
            args["content"] = "{}".into();
            w.args = args.to_string();
        });
        let r = oracle(&broken);
        for t in &r.tasks[1..] {
            assert!(t.released_at.is_none(), "{key}: {} released", t.key);
            assert_eq!(t.score, 0.0);
        }
    }
}

#[test]
fn out_of_range_parameters_are_clear_errors() {
    let err = generate_suite(&suite(
        1,
        Family::HandoffChain(handoff_chain::Params {
            length: Some(4),
            ..Default::default()
        }),
    ))
    .unwrap_err()
    .to_string();
    assert!(err.contains("length 4 (2-3)"), "{err}");
}
