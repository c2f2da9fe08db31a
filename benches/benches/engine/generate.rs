//! Generating the 50-scenario suite `content/suites/traineebench.ron`, what
//! `tbsim gen --suite content/suites/traineebench.ron` does minus writing the files.
//!
//! The suite file is read and parsed once, outside timing; each iteration is one
//! `tbsim_gen::generate_suite` call (every scenario generated and serialised to
//! RON). This is not `tbsim suite new`, which also proves each scenario solvable with
//! the oracle. Throughput is in scenarios.

use std::hint::black_box;
use std::path::Path;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, SamplingMode, Throughput, criterion_group};
use tbsim_benches::scenarios_dir;
use tbsim_gen::{generate_suite, load_suite};

criterion_group!(benches, generate);

fn generate(c: &mut Criterion) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../content/suites/traineebench.ron");
    let suite = load_suite(&path).expect("load the traineebench suite");
    // Once, untimed: the suite generates, and (informational) whether the output
    // matches the committed scenarios.
    let out = generate_suite(&suite).expect("the suite generates");
    let n = out.len() as u64;
    assert_eq!(n, 50, "traineebench has 50 scenarios");
    let dir = scenarios_dir().join("traineebench");
    let same = out
        .iter()
        .filter(|(name, text)| std::fs::read_to_string(dir.join(name)).is_ok_and(|t| &t == text))
        .count();
    let bytes: usize = out.iter().map(|(_, t)| t.len()).sum();
    eprintln!(
        "traineebench generation: {n} scenarios, {bytes} bytes of RON, \
         {same}/{n} identical to content/scenarios/traineebench/"
    );

    let mut group = c.benchmark_group("generate");
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(10));
    group.sampling_mode(SamplingMode::Flat);
    group.sample_size(10);
    group.throughput(Throughput::Elements(n));
    group.bench_function(BenchmarkId::new("traineebench", "generate_suite"), |b| {
        b.iter(|| black_box(generate_suite(&suite).expect("the suite generates")));
    });
    group.finish();
}
