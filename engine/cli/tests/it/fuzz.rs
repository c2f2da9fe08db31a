//! A smoke run of the fuzz targets (`engine/fuzz/`) inside the normal tests, with no
//! cargo-fuzz or nightly toolchain: the same entry points ([`tbsim_engine::fuzz`]) are fed
//! the seed corpus (the HTTP target's is [`tbsim_serve::fuzz`]'s), every input the real fuzzers found that once failed
//! (`engine/fuzz/regressions/<target>/`), and a few thousand seeded mutations of the
//! seeds. A panic fails the test with the input that caused it.

use std::path::{Path, PathBuf};

use rand::{RngExt, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use tbsim_scenario::LoadedScenario;

use crate::util::{root, scenario};

/// Mutations per target: each input builds a world, which a debug build does in
/// milliseconds, so these keep the smoke run to seconds.
const SCENARIO_MUTATIONS: usize = 500;
const TOOL_MUTATIONS: usize = 120;
/// Each re-drives a short run and forks it, a few milliseconds in a debug build.
const RUN_DIR_MUTATIONS: usize = 150;
/// Requests through the router; most are refused before a world is built, and
/// those that build one build meeting-only's.
const HTTP_MUTATIONS: usize = 300;

/// Fragments that mean something to RON, JSON, paths, times or the tools.
const TOKENS: &[&[u8]] = &[
    b"\"",
    b"{",
    b"}",
    b"[",
    b"]",
    b"(",
    b")",
    b",",
    b":",
    b"\t",
    b"\n",
    b"\\",
    b"-1",
    b"0",
    b"1e308",
    b"NaN",
    b"inf",
    b"18446744073709551616",
    b"../",
    b"/",
    b"drive/",
    b"workspace/",
    b"\\u0000",
    b"9999-12-31T23:59",
    b"2025-10-07T09:00",
    b"None",
    b"Some(",
    b"r#\"",
    b"\"#",
    b"{\"path\":",
    b"null",
    b"true",
    b"\xff\xfe",
    b"\xc3",
];

/// One seeded mutation of `data`, sometimes spliced with `other`.
fn mutate(rng: &mut Xoshiro256PlusPlus, data: &[u8], other: &[u8]) -> Vec<u8> {
    let mut out = data.to_vec();
    for _ in 0..rng.random_range(1..=4u32) {
        let len = out.len();
        let at = if len == 0 {
            0
        } else {
            rng.random_range(0..len)
        };
        match rng.random_range(0..6u32) {
            0 if len > 0 => out[at] ^= 1 << rng.random_range(0..8u32),
            1 => out.insert(at, rng.random()),
            2 if len > 0 => {
                let n = rng.random_range(1..=64.min(len - at));
                out.drain(at..at + n);
            }
            3 if len > 0 => {
                let n = rng.random_range(1..=256.min(len - at));
                let piece = out[at..at + n].to_vec();
                let to = rng.random_range(0..=out.len());
                out.splice(to..to, piece);
            }
            4 if !other.is_empty() => {
                let from = rng.random_range(0..other.len());
                let n = rng.random_range(1..=512.min(other.len() - from));
                out.splice(at..at, other[from..from + n].iter().copied());
            }
            _ => {
                let t = TOKENS[rng.random_range(0..TOKENS.len())];
                out.splice(at..at, t.iter().copied());
            }
        }
    }
    out
}

fn files_in(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| rd.filter_map(|e| Some(e.ok()?.path())).collect())
        .unwrap_or_default();
    v.retain(|p| p.is_file());
    v.sort();
    v
}

fn regressions(target: &str) -> Vec<Vec<u8>> {
    files_in(&root().join("engine/fuzz/regressions").join(target))
        .iter()
        .map(|p| std::fs::read(p).unwrap())
        .collect()
}

/// Runs `f` on `input`, failing with the input (escaped) if it panics.
fn check(what: &str, input: &[u8], f: impl FnOnce(&[u8])) {
    if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(input))).is_err() {
        panic!(
            "{what} panicked on input {:?}",
            String::from_utf8_lossy(input)
        );
    }
}

/// `dir/scenario/`: every bundled scenario file; `dir/tool_calls/`: `seeds`.
fn write_seeds(dir: &Path, seeds: &[Vec<u8>]) {
    let scen = dir.join("scenario");
    let tools = dir.join("tool_calls");
    std::fs::create_dir_all(&scen).unwrap();
    std::fs::create_dir_all(&tools).unwrap();
    let content = root().join("content/scenarios");
    let mut stack = vec![content.clone()];
    while let Some(d) = stack.pop() {
        for p in files_in(&d) {
            if p.extension().is_some_and(|e| e == "ron") {
                let rel = p
                    .strip_prefix(&content)
                    .unwrap()
                    .to_string_lossy()
                    .replace('/', "_");
                std::fs::copy(&p, scen.join(rel)).unwrap();
            }
        }
        let rd = std::fs::read_dir(&d).unwrap();
        stack.extend(
            rd.filter_map(|e| Some(e.ok()?.path()))
                .filter(|p| p.is_dir()),
        );
    }
    for (i, s) in seeds.iter().enumerate() {
        std::fs::write(tools.join(format!("seed-{i:03}")), s).unwrap();
    }
}

#[test]
fn scenario_target_survives_seeds_regressions_and_mutations() {
    // The small scenarios as mutation seeds (each valid mutation builds a world).
    let seeds: Vec<Vec<u8>> = ["meeting-only", "meeting-check-sum", "kb-fix-medium"]
        .iter()
        .map(|n| std::fs::read(root().join(format!("content/scenarios/{n}.ron"))).unwrap())
        .collect();
    // Every bundled scenario loads through the target as it does through `tbsim run`.
    let t0 = std::time::Instant::now();
    for p in crate::util::bundled() {
        check(
            &p.display().to_string(),
            &std::fs::read(&p).unwrap(),
            tbsim_engine::fuzz::scenario_bytes,
        );
    }
    for r in regressions("scenario") {
        check(
            "a scenario regression",
            &r,
            tbsim_engine::fuzz::scenario_bytes,
        );
    }
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(0x5ce9_a210);
    for i in 0..SCENARIO_MUTATIONS {
        let s = &seeds[i % seeds.len()];
        let o = &seeds[(i + 1) % seeds.len()];
        let m = mutate(&mut rng, s, o);
        check(
            &format!("scenario mutation {i}"),
            &m,
            tbsim_engine::fuzz::scenario_bytes,
        );
    }
    eprintln!("scenario smoke: {:?}", t0.elapsed());
}

#[test]
fn tool_call_target_survives_seeds_regressions_and_mutations() {
    let world: LoadedScenario = scenario("busy-day");
    let seeds = tbsim_engine::fuzz::tool_seeds(&world.scenario);
    assert!(seeds.len() >= 10, "plans and hand-made calls");
    // `TBSIM_FUZZ_SEEDS=<dir>` writes the seed corpora for the real fuzzers.
    if let Some(dir) = std::env::var_os("TBSIM_FUZZ_SEEDS") {
        write_seeds(Path::new(&dir), &seeds);
    }
    let run = |d: &[u8]| tbsim_engine::fuzz::tool_calls(&world, d);
    let t0 = std::time::Instant::now();
    for (i, s) in seeds.iter().enumerate() {
        check(&format!("tool seed {i}"), s, run);
    }
    for r in regressions("tool_calls") {
        check("a tool-call regression", &r, run);
    }
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(0x7001_ca11);
    for i in 0..TOOL_MUTATIONS {
        let s = &seeds[rng.random_range(0..seeds.len())];
        let o = &seeds[rng.random_range(0..seeds.len())];
        let m = mutate(&mut rng, s, o);
        check(&format!("tool-call mutation {i}"), &m, run);
    }
    eprintln!("tool-call smoke: {:?}", t0.elapsed());
}

/// An oracle run of meeting-only as the run-directory target reads it: its files
/// joined by the separator.
fn run_dir_seed(dir: &Path) -> Vec<u8> {
    let mut seed = std::fs::read(dir.join("trajectory.jsonl")).unwrap();
    for f in ["result.json", "run.json"] {
        seed.push(tbsim_engine::fuzz::RUN_DIR_SEPARATOR);
        seed.extend(std::fs::read(dir.join(f)).unwrap());
    }
    seed
}

#[test]
fn run_dir_target_survives_seeds_and_mutations() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    crate::util::run_agent(
        "oracle",
        &run,
        &[&root().join("content/scenarios/meeting-only.ron")],
    );
    let seed = run_dir_seed(&run);
    if let Some(dir) = std::env::var_os("TBSIM_FUZZ_SEEDS") {
        let d = Path::new(&dir).join("run_dir");
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("seed-000"), &seed).unwrap();
    }
    let t0 = std::time::Instant::now();
    check("the run_dir seed", &seed, tbsim_engine::fuzz::run_dir_bytes);
    for r in regressions("run_dir") {
        check(
            "a run_dir regression",
            &r,
            tbsim_engine::fuzz::run_dir_bytes,
        );
    }
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(0x7261_6e64);
    for i in 0..RUN_DIR_MUTATIONS {
        let m = mutate(&mut rng, &seed, &seed);
        check(
            &format!("run_dir mutation {i}"),
            &m,
            tbsim_engine::fuzz::run_dir_bytes,
        );
    }
    eprintln!("run_dir smoke: {:?}", t0.elapsed());
}

#[test]
fn http_body_target_survives_seeds_regressions_and_mutations() {
    let seeds = tbsim_serve::fuzz::http_seeds();
    assert!(
        seeds.len() >= tbsim_serve::fuzz::ROUTES.len(),
        "a seed per route"
    );
    if let Some(dir) = std::env::var_os("TBSIM_FUZZ_SEEDS") {
        let d = Path::new(&dir).join("http_body");
        std::fs::create_dir_all(&d).unwrap();
        for (i, s) in seeds.iter().enumerate() {
            std::fs::write(d.join(format!("seed-{i:03}")), s).unwrap();
        }
    }
    let t0 = std::time::Instant::now();
    for (i, s) in seeds.iter().enumerate() {
        check(&format!("http seed {i}"), s, tbsim_serve::fuzz::http_body);
    }
    for r in regressions("http_body") {
        check("an http_body regression", &r, tbsim_serve::fuzz::http_body);
    }
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(0x4854_5450);
    for i in 0..HTTP_MUTATIONS {
        let s = &seeds[rng.random_range(0..seeds.len())];
        let o = &seeds[rng.random_range(0..seeds.len())];
        let m = mutate(&mut rng, s, o);
        check(
            &format!("http_body mutation {i}"),
            &m,
            tbsim_serve::fuzz::http_body,
        );
    }
    eprintln!("http_body smoke: {:?}", t0.elapsed());
}
