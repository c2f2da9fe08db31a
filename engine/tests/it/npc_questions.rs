//! Colleagues' disclosure rules through the real chat tools.

use tbsim::generate::Family;

use crate::util::{generate_one, load_generated, one_task_suite};

#[test]
#[ignore]
fn dump_clues() {
    let mut seen = std::collections::BTreeSet::new();
    for v in Family::all_variants() {
        let fam = v.family.key();
        for seed in [1u64, 2] {
            let text = generate_one(&one_task_suite("dump", seed, "t", v.family.clone()));
            let l = load_generated(&text, "dump.ron");
            let s = &l.scenario;
            println!("##### {} seed {seed}", v.key);
            for t in &s.tasks {
                println!(
                    "TASK {} release {:?}\n  OBJ: {}",
                    t.key, t.release, t.objective
                );
            }
            for p in &s.company.people {
                for c in &p.clues {
                    if !seen.insert((fam, c.key.clone(), seed)) {
                        continue;
                    }
                    println!(
                        "  CLUE {} @{} ({}) task={:?} after={:?}\n    TRIG {:?}\n    RESP {}",
                        c.key, p.name, p.position, c.task, c.after, c.trigger, c.response
                    );
                }
            }
        }
    }
}
