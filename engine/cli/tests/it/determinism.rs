use tbsim_engine::agent::{Idle, Oracle};

use crate::util::{bundled, run};

#[test]
fn same_inputs_same_digest_and_bytes() {
    for path in bundled() {
        let loaded = tbsim_scenario::load_file(&path).unwrap();
        let (a, la) = run(&loaded, &mut Oracle::new(&loaded.scenario), None);
        let (b, lb) = run(&loaded, &mut Oracle::new(&loaded.scenario), None);
        assert_eq!(a.digest, b.digest, "{}", path.display());
        assert_eq!(la, lb);
        assert_eq!(a, b);
        assert!(
            la.iter()
                .all(|l| !l.contains("/tmp") && !l.contains("/work")),
            "no host paths in trajectories"
        );
    }
}

#[test]
fn the_seed_changes_npc_timing_but_not_the_outcome() {
    let loaded = crate::util::scenario("kb-fix-medium");
    let (a, _) = run(&loaded, &mut Oracle::new(&loaded.scenario), Some(1));
    let (b, _) = run(&loaded, &mut Oracle::new(&loaded.scenario), Some(2));
    assert_ne!(a.digest, b.digest, "reply delays are seeded");
    assert_eq!((a.checkpoint_score, b.checkpoint_score), (1.0, 1.0));
}

#[test]
fn bundled_scenarios_score_one_for_the_oracle_and_zero_for_idle() {
    for path in bundled() {
        let loaded = tbsim_scenario::load_file(&path).unwrap();
        let (o, _) = run(&loaded, &mut Oracle::new(&loaded.scenario), None);
        assert_eq!(
            (o.checkpoint_score, o.success_rate),
            (1.0, 1.0),
            "{}: {:#?}",
            path.display(),
            o.tasks
        );
        assert!(
            o.errors.is_empty(),
            "the oracle makes no bad calls: {:?}",
            o.errors
        );
        let (i, _) = run(&loaded, &mut Idle::default(), None);
        assert_eq!(i.checkpoint_score, 0.0, "{}", path.display());
        assert!(
            i.tasks
                .iter()
                .flat_map(|t| &t.checkpoints)
                .all(|c| !c.passed && c.feedback.is_some())
        );
    }
}

#[test]
fn in_process_replay_matches() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["busy-day", "transactions-none-abnormal"] {
        let loaded = crate::util::scenario(name);
        let out = dir.path().join(name);
        let config = tbsim_core::protocol::SimConfig {
            agent: "oracle".into(),
            hints: 2,
            ..Default::default()
        };
        let r = tbsim_engine::run::run_to_dir(
            &loaded,
            &mut Oracle::new(&loaded.scenario),
            config,
            &Default::default(),
            &out,
        )
        .unwrap();
        let rep = tbsim_engine::replay::replay(&out).unwrap();
        assert!(rep.identical(), "{name}: {:?}", rep.divergence);
        assert_eq!(rep.digest, r.digest);
    }
}

/// Pinned digests of every bundled example under the oracle: a change to the
/// engine that alters any run's bytes (event order, a system's effect, a tool's
/// output, the trajectory's shape) fails here, also when both runs of
/// `same_inputs_same_digest_and_bytes` would agree. The digest hashes every
/// trajectory line; the scenario's own hash is pinned beside it, so a content
/// regeneration shows as a changed scenario, an engine change as a changed run.
/// Review and accept intended changes with `cargo insta review`.
#[test]
fn bundled_examples_have_pinned_digests_under_the_oracle() {
    use std::fmt::Write as _;
    let mut table = String::from("scenario | scenario blake3 (16) | run digest\n");
    for path in bundled() {
        let bytes = std::fs::read(&path).unwrap();
        let loaded = tbsim_scenario::load_file(&path).unwrap();
        let (r, _) = run(&loaded, &mut Oracle::new(&loaded.scenario), None);
        let name = path.file_name().unwrap().to_string_lossy();
        let scenario_hash = blake3::hash(&bytes).to_hex();
        writeln!(table, "{name} | {} | {}", &scenario_hash[..16], r.digest).unwrap();
    }
    insta::assert_snapshot!("oracle_digests", table);
}
