//! The model-backed agent and colleagues over real HTTP, against the fake
//! OpenAI-compatible server in `tools/fake-llm`, driving the real `tbsim` binary.
//!
//! The server replays the oracle's plan (computed here, in process), three calls per
//! turn, so a model-backed run must score what the oracle scores.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use fake_llm::{Config, FakeServer, Fault, FaultRule, ScriptCall, script_from_trajectory};
use serde_json::{Value, json};
use tbsim_engine::agent::Oracle;
use tbsim_engine::trajectory::expand_requests;

use crate::util::{root, scenario};

const KEY: &str = "sk-test-5f0c1d2e3a4b-never-write-me";
const KEY_VAR: &str = "TBSIM_TEST_FAKE_KEY";

fn scen_path(name: &str) -> PathBuf {
    root().join(format!("content/scenarios/{name}.ron"))
}

/// The oracle's calls on a scenario, three per turn.
pub(crate) fn oracle_script(name: &str) -> Vec<Vec<fake_llm::ScriptCall>> {
    let l = scenario(name);
    let (_, lines) = crate::util::run(&l, &mut Oracle::new(&l.scenario), None);
    script_from_trajectory(&lines.join("\n"), 3)
}

fn server(name: &str, f: impl FnOnce(&mut Config)) -> FakeServer {
    let mut cfg = Config {
        script: oracle_script(name),
        key: Some(KEY.into()),
        ..Config::default()
    };
    f(&mut cfg);
    FakeServer::start(cfg).unwrap()
}

/// Writes `api_config.json` for the server: aliases `fake` (agent), `npc` and `default`.
fn api_config(dir: &Path, s: &FakeServer, extra: &str) -> PathBuf {
    let p = dir.join("api_config.json");
    let base = s.base_url();
    let text = format!(
        r#"{{
  "fake": {{"model_name": "fake-agent", "api_key_env": "{KEY_VAR}", "base_url": "{base}", "proxy_url": "",
            "retry_base_ms": 20, "retry_max_ms": 200, "price_in": 1.0, "price_out": 2.0 {extra}}},
  "npc": {{"model_name": "fake-npc", "api_key_env": "{KEY_VAR}", "base_url": "{base}", "retry_base_ms": 20}},
  "default": "fake"
}}"#
    );
    std::fs::write(&p, text).unwrap();
    p
}

fn command(args: &[&str], cwd: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_tbsim"));
    c.args(args)
        .current_dir(cwd)
        .env(KEY_VAR, KEY)
        .env_remove("TBSIM_API_CONFIG");
    c
}

fn tbsim(args: &[&str], cwd: &Path) -> Output {
    command(args, cwd).output().unwrap()
}

fn ok(o: &Output) -> String {
    let (out, err) = crate::util::text(o);
    assert!(o.status.success(), "tbsim failed: {out}\n{err}");
    out + &err
}

fn result(dir: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("result.json")).unwrap()).unwrap()
}

/// The trajectory's lines as written (turn requests may be in compact form).
fn raw_lines(dir: &Path) -> Vec<Value> {
    std::fs::read_to_string(dir.join("trajectory.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The trajectory's lines, every model line with its full `request`.
fn lines(dir: &Path) -> Vec<Value> {
    let mut v = raw_lines(dir);
    expand_requests(&mut v).unwrap();
    v
}

fn count(dir: &Path, kind: &str) -> usize {
    lines(dir).iter().filter(|v| v["type"] == kind).count()
}

/// No file under `dir` and no output holds the key.
fn assert_no_key(dir: &Path, outputs: &[&str]) {
    for o in outputs {
        assert!(!o.contains(KEY), "the key leaked into output");
    }
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let bytes = std::fs::read(&p).unwrap();
                let hit = bytes.windows(KEY.len()).any(|w| w == KEY.as_bytes());
                assert!(!hit, "the key leaked into {}", p.display());
            }
        }
    }
}

fn run_args<'a>(out: &'a str, cfg: &'a str, scen: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut v = vec!["run", "--api-config", cfg, "--out", out];
    v.extend_from_slice(extra);
    v.push(scen);
    v
}

#[test]
fn llm_run_scores_like_the_oracle_replays_offline_and_never_writes_the_key() {
    let tmp = tempfile::tempdir().unwrap();
    let s = server("kb-fix-medium", |_| {});
    // Found as ./api_config.json in the working directory.
    api_config(tmp.path(), &s, "");
    let out = tmp.path().join("run");
    let scen = scen_path("kb-fix-medium");
    // No --agent: the configured `default` alias is used, and the choice is announced.
    let o = tbsim(
        &[
            "run",
            "--out",
            out.to_str().unwrap(),
            "--npc-cache",
            tmp.path().join("cache").to_str().unwrap(),
            scen.to_str().unwrap(),
        ],
        tmp.path(),
    );
    let text = ok(&o);
    assert!(text.contains("using the model alias `default`"), "{text}");
    let r = result(&out);
    assert_eq!(r["checkpoint_score"], 1.0, "{r}");
    assert_eq!(r["end_reason"], "finished");
    assert_eq!(r["agent"], "llm:default");
    let turns = s.stats().turns;
    assert_eq!(r["model"]["calls"], turns);
    assert!(r["model"]["input_tokens"].as_u64().unwrap() > 0);
    assert!(r["model"]["cost"].as_f64().unwrap() > 0.0);
    assert_eq!(
        s.stats().unauthorised,
        0,
        "the key is sent as a bearer token"
    );
    assert_eq!(
        count(&out, "model") as u64,
        turns,
        "every request is recorded"
    );
    // Several calls per decision: the oracle's plan in a third as many decisions.
    assert!(r["steps"].as_u64().unwrap() * 2 < r["tool_calls"].as_u64().unwrap());
    drop(s);
    let o = tbsim(&["replay", out.to_str().unwrap()], tmp.path());
    let replay = ok(&o);
    assert!(replay.contains(": identical"), "{replay}");
    assert_no_key(tmp.path(), &[&text, &replay]);
}

#[test]
fn malformed_and_unknown_calls_are_counted_not_fatal() {
    let tmp = tempfile::tempdir().unwrap();
    let s = server("kb-fix-medium", |c| {
        c.faults = vec![
            FaultRule::at(1, Fault::MalformedArgs),
            FaultRule::at(2, Fault::UnknownTool),
        ];
    });
    let cfg = api_config(tmp.path(), &s, "");
    let out = tmp.path().join("run");
    let (o, c, sc) = (
        out.to_str().unwrap(),
        cfg.to_str().unwrap(),
        scen_path("kb-fix-medium"),
    );
    ok(&tbsim(
        &run_args(o, c, sc.to_str().unwrap(), &["--agent", "llm:fake"]),
        tmp.path(),
    ));
    let r = result(&out);
    assert_eq!(r["errors"]["malformed_json"], 1, "{r}");
    assert_eq!(r["errors"]["unknown_tool"], 1, "{r}");
    assert_eq!(r["end_reason"], "finished");
}

#[test]
fn rate_limits_server_errors_slow_replies_and_dropped_connections_are_retried() {
    let tmp = tempfile::tempdir().unwrap();
    let s = server("kb-fix-medium", |c| {
        c.faults = vec![
            FaultRule::at(
                0,
                Fault::RateLimit {
                    retry_after_secs: 1,
                },
            ),
            FaultRule::at(2, Fault::ServerError),
            FaultRule::at(4, Fault::Drop),
            FaultRule::at(6, Fault::Slow { ms: 2500 }),
        ];
    });
    // Long enough that a loaded CI machine never times out an ordinary reply.
    let cfg = api_config(tmp.path(), &s, r#", "timeout_secs": 1.0"#);
    let out = tmp.path().join("run");
    let (o, c, sc) = (
        out.to_str().unwrap(),
        cfg.to_str().unwrap(),
        scen_path("kb-fix-medium"),
    );
    let t0 = Instant::now();
    ok(&tbsim(
        &run_args(o, c, sc.to_str().unwrap(), &["--agent", "llm:fake"]),
        tmp.path(),
    ));
    assert!(
        t0.elapsed() >= Duration::from_secs(1),
        "Retry-After is honoured"
    );
    let r = result(&out);
    assert_eq!(r["checkpoint_score"], 1.0, "{r}");
    let st = s.stats();
    assert_eq!(
        st.agent_requests,
        st.turns + 4,
        "four failed attempts, each retried"
    );
    let failures: Vec<String> = lines(&out)
        .iter()
        .filter(|v| v["type"] == "model")
        .flat_map(|v| v["failures"].as_array().cloned().unwrap_or_default())
        .map(|f| f.as_str().unwrap().to_owned())
        .collect();
    assert_eq!(failures.len(), 4, "{failures:?}");
    assert!(failures[0].contains("429"), "{failures:?}");
    assert!(failures[1].contains("500"), "{failures:?}");
    assert!(failures[3].contains("timed out"), "{failures:?}");
}

#[test]
fn retry_exhaustion_ends_as_an_infra_failure_that_can_be_resumed() {
    let tmp = tempfile::tempdir().unwrap();
    let s = server("kb-fix-medium", |c| {
        c.faults = vec![FaultRule {
            from: 2,
            to: 1_000,
            fault: Fault::ServerError,
        }];
    });
    let cfg = api_config(tmp.path(), &s, r#", "max_retries": 2"#);
    let out = tmp.path().join("run");
    let (o, c, sc) = (
        out.to_str().unwrap(),
        cfg.to_str().unwrap(),
        scen_path("kb-fix-medium"),
    );
    let res = tbsim(
        &run_args(o, c, sc.to_str().unwrap(), &["--agent", "llm:fake"]),
        tmp.path(),
    );
    let (stdout, stderr) = crate::util::text(&res);
    assert_eq!(res.status.code(), Some(3), "{stdout}{stderr}");
    assert!(stderr.contains("infrastructure failure"), "{stderr}");
    assert!(stdout.contains("INFRASTRUCTURE FAILURE"), "{stdout}");
    let r = result(&out);
    assert_eq!(r["end_reason"], "infra_error");
    assert!(
        r["infra_error"]
            .as_str()
            .unwrap()
            .contains("failed 3 times"),
        "{r}"
    );
    assert_eq!(s.stats().agent_requests, 2 + 3);
    // The failed attempts are on record, and replay reproduces the run offline.
    let last = lines(&out)
        .into_iter()
        .rfind(|v| v["type"] == "model")
        .unwrap();
    assert!(last["error"].is_string() && last["failures"].as_array().unwrap().len() == 3);
    ok(&tbsim(&["replay", o], tmp.path()));
    // Once the API is back, the run continues where it stopped.
    s.configure(|c| c.faults.clear());
    let before = s.stats().agent_requests;
    // The model configuration is the user's, never the one run.json names.
    ok(&tbsim(
        &["run", "--resume", o, "--api-config", c],
        tmp.path(),
    ));
    let r = result(&out);
    assert_eq!(r["checkpoint_score"], 1.0, "{r}");
    assert_eq!(r["end_reason"], "finished");
    assert_eq!(s.stats().turns, (s.stats().agent_requests - before) + 2);
    // The failed call stays on record, followed by its retry.
    let models = model_lines(&out);
    let failed = models.iter().position(|m| m["error"].is_string()).unwrap();
    assert_eq!(models[failed], last, "kept verbatim");
    let retry = &models[failed + 1];
    assert_eq!(retry["request"], last["request"]);
    assert!(retry["response"].is_object() && retry["step"] == last["step"]);
    ok(&tbsim(&["replay", o], tmp.path()));
}

#[test]
fn a_killed_run_resumes_to_the_same_result_without_repeating_calls() {
    let tmp = tempfile::tempdir().unwrap();
    let s = server("kb-fix-medium", |_| {});
    let cfg = api_config(tmp.path(), &s, "");
    let scen = scen_path("kb-fix-medium");
    let (c, sc) = (cfg.to_str().unwrap(), scen.to_str().unwrap());
    let whole = tmp.path().join("whole");
    ok(&tbsim(
        &run_args(whole.to_str().unwrap(), c, sc, &["--agent", "llm:fake"]),
        tmp.path(),
    ));
    let total_turns = s.stats().turns;

    s.configure(|c| c.delay_ms = 300);
    let cut = tmp.path().join("cut");
    let o = cut.to_str().unwrap();
    let mut child = command(&run_args(o, c, sc, &["--agent", "llm:fake"]), tmp.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    let decided = loop {
        let n = std::fs::read_to_string(cut.join("trajectory.jsonl"))
            .map(|t| t.matches(r#""type":"decision""#).count())
            .unwrap_or(0);
        if n >= 2 {
            break n;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "the run never got going"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(!cut.join("result.json").exists(), "killed before the end");
    s.configure(|c| c.delay_ms = 0);
    let before = s.stats().agent_requests;
    // The model configuration is the user's, never the one run.json names.
    ok(&tbsim(
        &["run", "--resume", o, "--api-config", c],
        tmp.path(),
    ));
    let asked = s.stats().agent_requests - before;
    assert!(
        asked <= total_turns - decided as u64 + 1,
        "{asked} requests after {decided} of {total_turns} decisions"
    );
    let (a, b) = (result(&whole), result(&cut));
    assert_eq!(a["checkpoint_score"], b["checkpoint_score"]);
    assert_eq!(
        a["digest"], b["digest"],
        "the same trajectory, byte for byte"
    );
    assert_eq!(a["model"], b["model"]);
    drop(s);
    ok(&tbsim(&["replay", o], tmp.path()));
}

#[test]
fn model_played_colleagues_are_cached_replayed_and_disclose() {
    let tmp = tempfile::tempdir().unwrap();
    let s = server("kb-fix-medium", |_| {});
    let cfg = api_config(tmp.path(), &s, "");
    let scen = scen_path("kb-fix-medium");
    let cache = tmp.path().join("npc-cache");
    let (c, sc, ca) = (
        cfg.to_str().unwrap(),
        scen.to_str().unwrap(),
        cache.to_str().unwrap(),
    );
    let extra = ["--agent", "llm:fake", "--npc", "llm:npc", "--npc-cache", ca];
    let first = tmp.path().join("first");
    ok(&tbsim(
        &run_args(first.to_str().unwrap(), c, sc, &extra),
        tmp.path(),
    ));
    let asked = s.stats().npc_requests;
    assert!(asked >= 3, "colleagues were asked: {asked}");
    let r = result(&first);
    assert_eq!(r["checkpoint_score"], 1.0, "{r}");
    assert_eq!(r["npc_model"]["calls"], asked);
    let npc_lines = count(&first, "npc");
    assert_eq!(
        npc_lines as u64, asked,
        "every colleague request is recorded"
    );
    assert!(count(&first, "disclosure") >= 3, "disclosures are recorded");

    let second = tmp.path().join("second");
    ok(&tbsim(
        &run_args(second.to_str().unwrap(), c, sc, &extra),
        tmp.path(),
    ));
    assert_eq!(
        s.stats().npc_requests,
        asked,
        "the re-run is served from the cache"
    );
    assert_eq!(result(&second)["npc_model"]["calls"], 0);
    assert_eq!(
        result(&first)["digest"],
        result(&second)["digest"],
        "and is exact"
    );
    drop(s);
    let o = tbsim(&["replay", first.to_str().unwrap()], tmp.path());
    assert!(ok(&o).contains(": identical"));
    assert_no_key(tmp.path(), &[]);
}

#[test]
fn notes_between_days_history_summaries_and_budgets() {
    let tmp = tempfile::tempdir().unwrap();
    let s = server("two-days", |_| {});
    let cfg = api_config(tmp.path(), &s, "");
    let scen = scen_path("two-days");
    let (c, sc) = (cfg.to_str().unwrap(), scen.to_str().unwrap());
    let mem = tmp.path().join("mem");
    let extra = [
        "--agent",
        "llm:fake",
        "--memory",
        "notes",
        "--history-tokens",
        "6000",
    ];
    ok(&tbsim(
        &run_args(mem.to_str().unwrap(), c, sc, &extra),
        tmp.path(),
    ));
    let r = result(&mem);
    assert_eq!(r["checkpoint_score"], 1.0, "{r}");
    let models: Vec<Value> = lines(&mem)
        .into_iter()
        .filter(|v| v["type"] == "model")
        .collect();
    let purpose = |p: &str| models.iter().filter(|m| m["purpose"] == p).count();
    assert_eq!(
        purpose("reflection"),
        1,
        "one reflection between the two days"
    );
    assert!(purpose("summary") >= 1, "the history was summarised");
    let notes = Config::default().text_reply;
    let day2 = models
        .iter()
        .find(|m| {
            m["purpose"] == "turn"
                && m["request"]["messages"][1]["content"]
                    .as_str()
                    .is_some_and(|t| t.contains("(day 2)"))
        })
        .expect("a turn opening day 2");
    assert!(
        day2["request"]["messages"][1]["content"]
            .as_str()
            .unwrap()
            .contains(&notes)
    );
    ok(&tbsim(&["replay", mem.to_str().unwrap()], tmp.path()));

    // A token budget and a simulated-time budget end the run cleanly, with the reason.
    let tok = tmp.path().join("tok");
    ok(&tbsim(
        &run_args(
            tok.to_str().unwrap(),
            c,
            sc,
            &["--agent", "llm:fake", "--token-budget", "3000"],
        ),
        tmp.path(),
    ));
    assert_eq!(result(&tok)["end_reason"], "token_budget");
    let time = tmp.path().join("time");
    ok(&tbsim(
        &run_args(
            time.to_str().unwrap(),
            c,
            sc,
            &[
                "--agent",
                "llm:fake",
                "--time-budget",
                "30",
                "--token-cost",
                "600",
            ],
        ),
        tmp.path(),
    ));
    let r = result(&time);
    assert_eq!(r["end_reason"], "time_budget", "{r}");
    let ls = lines(&time);
    assert_eq!(ls[0]["token_cost_secs"], 600);
    assert!(
        ls.iter()
            .any(|v| v["type"] == "decision" && v["tokens_out"].as_u64() > Some(0))
    );
    ok(&tbsim(&["replay", time.to_str().unwrap()], tmp.path()));
}

#[test]
fn configuration_errors_say_what_to_set() {
    let tmp = tempfile::tempdir().unwrap();
    let s = server("meeting-only", |_| {});
    let cfg = api_config(tmp.path(), &s, "");
    let scen = scen_path("meeting-only");
    let (c, sc) = (cfg.to_str().unwrap(), scen.to_str().unwrap());
    let out = tmp.path().join("x");
    let o = tbsim(
        &run_args(out.to_str().unwrap(), c, sc, &["--agent", "llm:nope"]),
        tmp.path(),
    );
    let (_, err) = crate::util::text(&o);
    assert!(!o.status.success());
    assert!(
        err.contains("no model alias `nope`") && err.contains("fake"),
        "{err}"
    );
    let o = command(
        &run_args(out.to_str().unwrap(), c, sc, &["--agent", "llm:fake"]),
        tmp.path(),
    )
    .env_remove(KEY_VAR)
    .output()
    .unwrap();
    let (_, err) = crate::util::text(&o);
    assert!(err.contains(&format!("export {KEY_VAR}")), "{err}");
    let o = command(&["run", "--agent", "llm:fake", sc], tmp.path())
        .env("TBSIM_API_CONFIG", tmp.path().join("missing.json"))
        .output()
        .unwrap();
    let (_, err) = crate::util::text(&o);
    assert!(
        err.contains("missing.json") && err.contains("--api-config"),
        "{err}"
    );
}

/// The `image_url` data URLs of a request body's messages, as (message index, url).
fn image_urls(body: &Value) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (i, m) in body["messages"].as_array().unwrap().iter().enumerate() {
        for p in m["content"].as_array().into_iter().flatten() {
            if p["type"] == "image_url" {
                out.push((i, p["image_url"]["url"].as_str().unwrap().to_owned()));
            }
        }
    }
    out
}

/// A generated one-task ADs-strategy scenario, written to a file: the densities the
/// task needs exist only in PNG heatmaps on the drive.
struct ImageScenario {
    path: PathBuf,
    loaded: tbsim_scenario::LoadedScenario,
    /// The drive path of the heatmap the task needs.
    heat: String,
    /// Its bytes as the world built from the file holds them.
    png: Vec<u8>,
    /// The other audience groups' heatmaps (distractors), rendered.
    others: Vec<Vec<u8>>,
}

fn image_scenario(dir: &Path) -> ImageScenario {
    use tbsim_core::protocol::SimConfig;
    use tbsim_engine::sim::Sim;
    use tbsim_gen::{Family, ads_strategy};
    use tbsim_scenario::{Check, Content, load_file};

    let family = Family::AdsStrategy(ads_strategy::Params {
        difficulty: Some(ads_strategy::Level::VeryEasy),
        ..Default::default()
    });
    let text = crate::util::generate_one(&crate::util::one_task_suite("img", 3, "t", family));
    let path = dir.join("ads.ron");
    std::fs::write(&path, &text).unwrap();
    let loaded = load_file(&path).unwrap();
    let heat = loaded.scenario.tasks[0]
        .checkpoints
        .iter()
        .find(|c| c.key == "heatmap_viewed")
        .map(|c| match &c.check {
            Check::Consulted(p) => p.clone(),
            other => panic!("heatmap_viewed checks {other:?}"),
        })
        .unwrap();
    let drawing = loaded
        .scenario
        .files
        .iter()
        .find(|f| f.path == heat)
        .map(|f| match &f.content {
            Content::Drawing(d) => d.clone(),
            _ => panic!("`{heat}` is not a drawing"),
        })
        .unwrap();
    let sim = Sim::new(
        &loaded,
        SimConfig::default(),
        tbsim_engine::trajectory::Trajectory::in_memory(),
        Box::new(tbsim_engine::tools::LivePython::default()),
    );
    let png = tbsim_engine::world::file_bytes(sim.world(), &heat)
        .expect("the heatmap is on the drive")
        .to_vec();
    drop(sim);
    assert!(
        png == drawing.png(),
        "the world renders the scenario's recipe"
    );
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"));
    let others: Vec<Vec<u8>> = loaded
        .scenario
        .files
        .iter()
        .filter(|f| f.path != heat)
        .filter_map(|f| match &f.content {
            Content::Drawing(d) => Some(d.png()),
            _ => None,
        })
        .collect();
    assert!(
        !others.is_empty() && !others.contains(&png),
        "the other groups' heatmaps are distinct distractors"
    );
    ImageScenario {
        path,
        loaded,
        heat,
        png,
        others,
    }
}

/// A `read_file` call of `path`.
fn reads(name: &str, args: &str, path: &str) -> bool {
    name == "read_file" && serde_json::from_str::<Value>(args).unwrap()["path"] == path
}

/// The oracle's calls as a script: three a turn up to the read of `heat`, which
/// shares a turn with the calls before it; then one a turn, and a last look at the
/// task list, so that several requests follow the one with the image. The oracle's
/// closing `finish` is left to the server, which sends it past the script. Returns
/// the script and the index of the turn that reads the image.
fn image_script(x: &ImageScenario) -> (Vec<Vec<ScriptCall>>, usize) {
    let (oracle, lines) = crate::util::run(&x.loaded, &mut Oracle::new(&x.loaded.scenario), None);
    assert_eq!(oracle.checkpoint_score, 1.0);
    let calls: Vec<ScriptCall> = script_from_trajectory(&lines.join("\n"), 1)
        .into_iter()
        .flatten()
        .filter(|c| c.name != "finish")
        .collect();
    let at: Vec<usize> = (0..calls.len())
        .filter(|&i| reads(&calls[i].name, &calls[i].arguments, &x.heat))
        .collect();
    assert_eq!(at.len(), 1, "the plan reads the heatmap once");
    let h = at[0];
    assert!(h > 0, "the heatmap is not the first call");
    let mut script: Vec<Vec<ScriptCall>> = calls[..h].chunks(3).map(<[_]>::to_vec).collect();
    script.last_mut().unwrap().push(calls[h].clone());
    let image_turn = script.len() - 1;
    script.extend(calls[h + 1..].iter().map(|c| vec![c.clone()]));
    script.push(vec![ScriptCall {
        name: "my_tasks".into(),
        arguments: "{}".into(),
    }]);
    (script, image_turn)
}

#[test]
fn images_read_by_a_tool_reach_the_model_as_image_url_parts_over_http() {
    use base64::Engine;
    let b64 = |bytes: &[u8]| base64::engine::general_purpose::STANDARD.encode(bytes);

    let tmp = tempfile::tempdir().unwrap();
    let x = image_scenario(tmp.path());
    let (script, image_turn) = image_script(&x);
    let turns = script.len();
    let s = FakeServer::start(Config {
        script,
        key: Some(KEY.into()),
        ..Config::default()
    })
    .unwrap();
    let cfg = api_config(tmp.path(), &s, "");
    let out = tmp.path().join("run");
    let (o, c, sc) = (
        out.to_str().unwrap(),
        cfg.to_str().unwrap(),
        x.path.to_str().unwrap(),
    );
    ok(&tbsim(
        &run_args(o, c, sc, &["--agent", "llm:fake"]),
        tmp.path(),
    ));
    let r = result(&out);
    assert_eq!(r["checkpoint_score"], 1.0, "scores like the oracle: {r}");
    assert_eq!(r["end_reason"], "finished");
    let viewed = r["tasks"][0]["checkpoints"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["key"] == "heatmap_viewed")
        .unwrap()
        .clone();
    assert_eq!(viewed["passed"], true, "{viewed}");

    let bodies = s.stats().bodies;
    assert!(
        bodies.iter().all(|b| b.get("tools").is_some()),
        "agent turns only"
    );
    assert_eq!(
        bodies.len(),
        turns + 1,
        "no retries: the script, then `finish`"
    );
    let reads_heatmap = |m: &Value| {
        m["tool_calls"].as_array().into_iter().flatten().any(|tc| {
            reads(
                tc["function"]["name"].as_str().unwrap(),
                tc["function"]["arguments"].as_str().unwrap(),
                &x.heat,
            )
        })
    };
    // The request after the read: the assistant's calls, one tool message per call
    // in call order, then one user message with the status line and the image.
    let at = image_turn + 1;
    let body = &bodies[at];
    let msgs = body["messages"].as_array().unwrap();
    let a = msgs
        .iter()
        .position(reads_heatmap)
        .expect("the read is in the history");
    let calls = msgs[a]["tool_calls"].as_array().unwrap();
    assert!(calls.len() >= 2, "the read is one of parallel calls");
    assert_eq!(
        msgs.len(),
        a + calls.len() + 2,
        "the calls' answers and one user message end the request"
    );
    let data = b64(&x.png);
    for (i, call) in calls.iter().enumerate() {
        let m = &msgs[a + 1 + i];
        assert_eq!(m["role"], "tool", "{m}");
        assert_eq!(m["tool_call_id"], call["id"], "answers in call order");
        let content = m["content"].as_str().expect("tool content is text");
        assert!(
            !content.contains(&data[..64]) && !content.contains("data:image"),
            "a tool message carries no image bytes"
        );
        if reads_heatmap(&json!({"tool_calls": [call]})) {
            let v: Value = serde_json::from_str(content).unwrap();
            assert_eq!(v["ok"], true, "{v}");
            assert_eq!(v["result"]["kind"], "image", "{v}");
            assert_eq!(v["result"]["mime"], "image/png");
            assert_eq!(v["result"]["bytes"], x.png.len());
            assert!(
                v["attachments"].is_string(),
                "points to the next message: {v}"
            );
        }
    }
    let user = msgs.last().unwrap();
    assert_eq!(user["role"], "user");
    let parts = user["content"]
        .as_array()
        .expect("a multi-part user message");
    assert_eq!(parts[0]["type"], "text");
    let status = parts[0]["text"].as_str().unwrap().lines().next().unwrap();
    assert!(
        status.starts_with("[System time]") && status.ends_with(&format!(" · step {at}")),
        "the status line leads: {status}"
    );
    let urls = image_urls(body);
    assert_eq!(urls.len(), 1, "one image, in the last message: {urls:?}");
    assert_eq!(urls[0].0, msgs.len() - 1);
    let sent = urls[0]
        .1
        .strip_prefix("data:image/png;base64,")
        .expect("a PNG data URL");
    let sent = base64::engine::general_purpose::STANDARD
        .decode(sent)
        .unwrap();
    assert!(
        sent == x.png,
        "the drive file's bytes, exactly: {} bytes sent, {} on the drive",
        sent.len(),
        x.png.len()
    );
    assert!(!x.others.contains(&sent), "not another group's heatmap");

    // No image before the read; afterwards the history holds it once, in the same
    // message, and its bytes appear nowhere else in the request.
    for (i, b) in bodies.iter().enumerate() {
        let urls = image_urls(b);
        let copies = b.to_string().matches(data.as_str()).count();
        if i < at {
            assert!(urls.is_empty(), "request {i} has an image before the read");
            assert_eq!(copies, 0, "request {i}");
        } else {
            assert_eq!(urls.len(), 1, "request {i}: {urls:?}");
            assert_eq!(urls[0].0, msgs.len() - 1, "request {i}: the same message");
            assert_eq!(copies, 1, "request {i}: the bytes once");
        }
    }

    // The trajectory records every request exactly as it was sent.
    let recorded: Vec<Value> = lines(&out)
        .into_iter()
        .filter(|v| v["type"] == "model" && v["purpose"] == "turn")
        .map(|v| v["request"].clone())
        .collect();
    assert_eq!(recorded.len(), bodies.len());
    assert!(
        recorded[at] == *body,
        "the image-bearing request is on record"
    );
    assert!(recorded == bodies, "and every other");
    // Each later turn resends the image, but its line only holds the new messages.
    let text = std::fs::read_to_string(out.join("trajectory.jsonl")).unwrap();
    let in_bodies: usize = bodies
        .iter()
        .map(|b| b.to_string().matches(data.as_str()).count())
        .sum();
    assert!(in_bodies >= 3, "sent {in_bodies} times");
    let in_model_lines: usize = text
        .lines()
        .filter(|l| l.contains(r#""type":"model""#))
        .map(|l| l.matches(data.as_str()).count())
        .sum();
    assert_eq!(
        (in_model_lines, text.matches(data.as_str()).count()),
        (1, 2),
        "written once by the model lines (with the turn after the read), once by the \
         read's result line"
    );
    // Replay needs no network.
    drop(s);
    let replay = ok(&tbsim(&["replay", o], tmp.path()));
    assert!(replay.contains(": identical"), "{replay}");
}

#[test]
fn turn_requests_are_recorded_compactly_and_old_full_trajectories_still_resume() {
    let tmp = tempfile::tempdir().unwrap();
    let l = scenario("kb-fix-medium");
    let (_, oracle) = crate::util::run(&l, &mut Oracle::new(&l.scenario), None);
    // One call a turn: a long conversation resent every turn.
    let script = script_from_trajectory(&oracle.join("\n"), 1);
    let scen = scen_path("kb-fix-medium");
    let sc = scen.to_str().unwrap();
    let whole = tmp.path().join("whole");
    let (s, cfg) = server_with(tmp.path(), "whole", &script, |_| {});
    ok(&tbsim(
        &run_args(
            whole.to_str().unwrap(),
            cfg.to_str().unwrap(),
            sc,
            &["--agent", "llm:fake"],
        ),
        tmp.path(),
    ));
    let r = result(&whole);
    assert_eq!(r["checkpoint_score"], 1.0, "{r}");
    let bodies = s.stats().bodies;
    drop(s);
    assert!(bodies.len() >= 18, "{} requests", bodies.len());

    let raw: Vec<Value> = raw_lines(&whole)
        .into_iter()
        .filter(|v| v["type"] == "model")
        .collect();
    assert_eq!(raw.len(), bodies.len(), "every request is recorded");
    assert!(raw[0]["request"].is_object() && raw[0].get("request_delta").is_none());
    for m in &raw[1..] {
        assert_eq!(m["purpose"], "turn");
        let d = &m["request_delta"];
        assert!(m.get("request").is_none() && d.is_object(), "{m}");
        assert_eq!(d["same_tools"], true, "the tools are not written again");
        assert_eq!(d["model"], "fake-agent");
    }
    let expanded: Vec<Value> = model_lines(&whole)
        .into_iter()
        .map(|m| m["request"].clone())
        .collect();
    assert!(expanded == bodies, "the requests sent, exactly");

    let text = std::fs::read_to_string(whole.join("trajectory.jsonl")).unwrap();
    let sent: usize = bodies.iter().map(|b| b.to_string().len()).sum();
    eprintln!(
        "trajectory {} bytes; request bodies {sent} bytes; {:.1}%",
        text.len(),
        100.0 * text.len() as f64 / sent as f64
    );
    let full_size: usize = text
        .lines()
        .zip(lines(&whole))
        .map(|(l, v)| {
            1 + if v["type"] == "model" {
                v.to_string().len()
            } else {
                l.len()
            }
        })
        .sum();
    eprintln!("with every request in full: {full_size} bytes");
    assert!(
        text.len() * 100 < sent * 25,
        "{} trajectory bytes for {sent} bytes of requests",
        text.len()
    );
    let replay = ok(&tbsim(&["replay", whole.to_str().unwrap()], tmp.path()));
    assert!(replay.contains(": identical"), "{replay}");

    // The same run as a trajectory from before the compact form (every request in
    // full): it replays; cut after a decision halfway and the next turn's reply, it
    // resumes without asking anything already answered.
    let full = lines(&whole);
    let old_shape = |models: usize| {
        let mut seen = 0;
        let mut out = String::new();
        for (line, value) in text.lines().zip(&full) {
            if value["type"] == "model" {
                seen += 1;
                out.push_str(&value.to_string());
            } else {
                out.push_str(line);
            }
            out.push('\n');
            if seen == models {
                break;
            }
        }
        assert!(!out.contains("request_delta"));
        out
    };
    let old = tmp.path().join("old");
    copy_dir(&whole, &old);
    std::fs::remove_file(old.join("result.json")).unwrap();
    std::fs::write(old.join("trajectory.jsonl"), old_shape(usize::MAX)).unwrap();
    let replay = ok(&tbsim(&["replay", old.to_str().unwrap()], tmp.path()));
    assert!(replay.contains(": identical"), "{replay}");
    let cut_at = raw.len() / 2;
    // Up to the turn line of model call `cut_at`, before its decision.
    let old_text = old_shape(cut_at + 1);
    std::fs::write(old.join("trajectory.jsonl"), &old_text).unwrap();
    let asked = resume_fresh(tmp.path(), &old, "resume-old", &script);
    assert!(
        asked == bodies[cut_at + 1..],
        "the answered turn is not asked again, the rest is: {} of {} asked",
        asked.len(),
        bodies.len()
    );
    let resumed = std::fs::read_to_string(old.join("trajectory.jsonl")).unwrap();
    assert!(resumed.starts_with(&old_text), "the old lines are kept");
    assert!(
        lines(&old) == full,
        "the same run: the new lines compact, relative to the old full ones"
    );
    let new_models: Vec<Value> = raw_lines(&old)
        .into_iter()
        .filter(|v| v["type"] == "model")
        .skip(cut_at + 1)
        .collect();
    assert_eq!(new_models.len(), bodies.len() - cut_at - 1);
    assert!(
        new_models.iter().all(|m| m["request_delta"].is_object()),
        "written compactly after the resumed full lines"
    );
    assert_eq!(result(&old)["checkpoint_score"], 1.0);
}

/// The `model` lines of a run, in order.
fn model_lines(dir: &Path) -> Vec<Value> {
    lines(dir)
        .into_iter()
        .filter(|v| v["type"] == "model")
        .collect()
}

/// A child process killed when dropped (a failing test leaves nothing running).
struct Killed(std::process::Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let p = e.unwrap().path();
        let dest = to.join(p.file_name().unwrap());
        if p.is_dir() {
            copy_dir(&p, &dest);
        } else {
            std::fs::copy(&p, &dest).unwrap();
        }
    }
}

/// A server playing `script`, and a config for it in its own directory.
fn server_with(
    tmp: &Path,
    name: &str,
    script: &[Vec<ScriptCall>],
    f: impl FnOnce(&mut Config),
) -> (FakeServer, PathBuf) {
    let mut config = Config {
        script: script.to_vec(),
        key: Some(KEY.into()),
        ..Config::default()
    };
    f(&mut config);
    let s = FakeServer::start(config).unwrap();
    let dir = tmp.join(format!("cfg-{name}"));
    std::fs::create_dir_all(&dir).unwrap();
    let cfg = api_config(&dir, &s, "");
    (s, cfg)
}

/// Resumes `dir` against a fresh server (no faults); returns the bodies it received.
fn resume_fresh(tmp: &Path, dir: &Path, name: &str, script: &[Vec<ScriptCall>]) -> Vec<Value> {
    let (s, cfg) = server_with(tmp, name, script, |_| {});
    ok(&tbsim(
        &[
            "run",
            "--resume",
            dir.to_str().unwrap(),
            "--api-config",
            cfg.to_str().unwrap(),
            // A fresh server listens on another port than the one the run recorded.
            "--accept-endpoint",
        ],
        tmp,
    ));
    let st = s.stats();
    assert_eq!(st.agent_requests as usize, st.bodies.len());
    st.bodies
}

/// Asserts `dir` ended as `whole` did, byte for byte, and replays offline.
fn assert_same_run(tmp: &Path, whole: &Path, dir: &Path) {
    let (a, b) = (result(whole), result(dir));
    assert_eq!(
        a["digest"], b["digest"],
        "the same trajectory, byte for byte"
    );
    assert_eq!(a["checkpoint_score"], b["checkpoint_score"]);
    assert_eq!(a["model"], b["model"], "the same usage");
    let replay = ok(&tbsim(&["replay", dir.to_str().unwrap()], tmp));
    assert!(replay.contains(": identical"), "{replay}");
}

#[test]
fn calls_completed_before_a_kill_are_on_record_and_not_made_again() {
    let tmp = tempfile::tempdir().unwrap();
    let scen = scen_path("kb-fix-medium");
    let sc = scen.to_str().unwrap();
    // One call a turn and a low threshold: the history is summarised several times.
    let extra = ["--agent", "llm:fake", "--history-tokens", "4000"];
    let l = crate::util::scenario("kb-fix-medium");
    let (_, oracle) = crate::util::run(&l, &mut Oracle::new(&l.scenario), None);
    let script = script_from_trajectory(&oracle.join("\n"), 1);

    let whole = tmp.path().join("whole");
    let (s, cfg) = server_with(tmp.path(), "whole", &script, |_| {});
    ok(&tbsim(
        &run_args(whole.to_str().unwrap(), cfg.to_str().unwrap(), sc, &extra),
        tmp.path(),
    ));
    drop(s);
    let models = model_lines(&whole);
    let whole_text = std::fs::read_to_string(whole.join("trajectory.jsonl")).unwrap();
    let summary = models
        .iter()
        .position(|m| m["purpose"] == "summary")
        .expect("the history was summarised");
    let turn = summary + 1;
    assert_eq!(models[turn]["purpose"], "turn");
    assert_eq!(
        models[turn]["step"], models[summary]["step"],
        "one decision"
    );

    // The turn after the summary hangs (the server counts every request, from 0);
    // the run is killed while it is in flight.
    let (slow, cfg) = server_with(tmp.path(), "cut", &script, |c| {
        c.faults = vec![FaultRule::at(turn as u64, Fault::Slow { ms: 30_000 })];
    });
    let cut = tmp.path().join("cut");
    let child = Killed(
        command(
            &run_args(cut.to_str().unwrap(), cfg.to_str().unwrap(), sc, &extra),
            tmp.path(),
        )
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap(),
    );
    let traj = cut.join("trajectory.jsonl");
    let t0 = Instant::now();
    let on_disk = loop {
        let text = std::fs::read_to_string(&traj).unwrap_or_default();
        let in_flight = slow.stats().agent_requests > turn as u64;
        if in_flight && text.matches(r#""type":"model""#).count() > summary {
            break text;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "the summary is not on record while the turn after it is in flight \
             ({} requests, {} model lines)",
            slow.stats().agent_requests,
            text.matches(r#""type":"model""#).count()
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    drop(child);
    assert!(
        t0.elapsed() < Duration::from_secs(25),
        "killed mid-turn, not after it"
    );
    assert!(!cut.join("result.json").exists());
    let last: Value = serde_json::from_str(on_disk.lines().last().unwrap()).unwrap();
    assert_eq!(
        last["purpose"], "summary",
        "the kill came after the summary"
    );
    assert!(
        whole_text.starts_with(&on_disk),
        "what was written is what an uninterrupted run writes"
    );
    drop(slow);

    let asked = resume_fresh(tmp.path(), &cut, "resume-cut", &script);
    assert!(
        !asked.contains(&models[summary]["request"]),
        "the summary is not asked again"
    );
    assert_eq!(
        asked[0], models[turn]["request"],
        "the turn cut short is asked first, as it was"
    );
    assert_eq!(
        asked.len(),
        models.len() - turn,
        "and then only what followed"
    );
    assert_same_run(tmp.path(), &whole, &cut);

    // A kill after the turn's reply arrived, before its decision was written, leaves
    // the trajectory ending with the turn's line: resuming does not ask it again.
    let after = tmp.path().join("after-reply");
    copy_dir(&whole, &after);
    std::fs::remove_file(after.join("result.json")).unwrap();
    let kept: Vec<&str> = whole_text
        .lines()
        .scan(0, |n, l| {
            let before = *n;
            *n += usize::from(l.contains(r#""type":"model""#));
            (before <= turn).then_some(l)
        })
        .collect();
    let mut kept_values: Vec<Value> = kept
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(
        kept_values.last().unwrap()["request_delta"].is_object(),
        "the cut-off turn is written in compact form"
    );
    expand_requests(&mut kept_values).unwrap();
    assert_eq!(
        kept_values.last().unwrap()["request"],
        models[turn]["request"]
    );
    std::fs::write(after.join("trajectory.jsonl"), kept.join("\n") + "\n").unwrap();
    let asked = resume_fresh(tmp.path(), &after, "resume-after", &script);
    assert!(!asked.contains(&models[summary]["request"]));
    assert!(
        !asked.contains(&models[turn]["request"]),
        "the answered turn is not asked again"
    );
    assert_eq!(asked.len(), models.len() - turn - 1);
    assert_same_run(tmp.path(), &whole, &after);
}

#[test]
fn a_reflection_written_before_a_kill_is_not_asked_again() {
    let tmp = tempfile::tempdir().unwrap();
    let scen = scen_path("two-days");
    let script = oracle_script("two-days");
    let extra = ["--agent", "llm:fake", "--memory", "notes"];
    let whole = tmp.path().join("whole");
    let (s, cfg) = server_with(tmp.path(), "whole", &script, |_| {});
    ok(&tbsim(
        &run_args(
            whole.to_str().unwrap(),
            cfg.to_str().unwrap(),
            scen.to_str().unwrap(),
            &extra,
        ),
        tmp.path(),
    ));
    drop(s);
    let models = model_lines(&whole);
    let reflection = models
        .iter()
        .position(|m| m["purpose"] == "reflection")
        .expect("a reflection between the days");

    // The state a kill leaves while the first turn of day 2 is in flight.
    let cut = tmp.path().join("cut");
    copy_dir(&whole, &cut);
    std::fs::remove_file(cut.join("result.json")).unwrap();
    let text = std::fs::read_to_string(whole.join("trajectory.jsonl")).unwrap();
    let mut seen = 0;
    let kept: Vec<&str> = text
        .lines()
        .take_while(|l| {
            let keep = seen <= reflection;
            seen += usize::from(l.contains(r#""type":"model""#));
            keep
        })
        .collect();
    let last: Value = serde_json::from_str(kept.last().unwrap()).unwrap();
    assert_eq!(last["purpose"], "reflection");
    std::fs::write(cut.join("trajectory.jsonl"), kept.join("\n") + "\n").unwrap();

    let asked = resume_fresh(tmp.path(), &cut, "resume", &script);
    assert!(
        !asked.contains(&models[reflection]["request"]),
        "the reflection is not asked again"
    );
    assert_eq!(
        asked[0],
        models[reflection + 1]["request"],
        "day 2 opens as it did"
    );
    assert_eq!(asked.len(), models.len() - reflection - 1);
    assert_same_run(tmp.path(), &whole, &cut);
}

/// Runs kb-fix-medium against `s` with the fake agent; returns the run directory and
/// everything tbsim printed.
fn run_fake(tmp: &Path, s: &FakeServer) -> (PathBuf, String) {
    let cfg = api_config(tmp, s, "");
    let out = tmp.join("run");
    let sc = scen_path("kb-fix-medium");
    let text = ok(&tbsim(
        &run_args(
            out.to_str().unwrap(),
            cfg.to_str().unwrap(),
            sc.to_str().unwrap(),
            &["--agent", "llm:fake"],
        ),
        tmp,
    ));
    (out, text)
}

/// Issue 9.11: three turns in a row each send an 8 MB `write_file` argument.
#[test]
fn a_flood_of_argument_bytes_is_cut_in_the_trajectory_and_in_later_requests() {
    const FLOOD: usize = 8 << 20;
    let tmp = tempfile::tempdir().unwrap();
    let s = server("kb-fix-medium", |c| {
        c.faults = vec![FaultRule {
            from: 0,
            to: 3,
            fault: Fault::HugeArgs {
                bytes: FLOOD as u64,
            },
        }];
    });
    let (out, _) = run_fake(tmp.path(), &s);
    let r = result(&out);
    assert_eq!(r["errors"]["schema"], 3, "each flood refused: {r}");
    assert_eq!(
        r["checkpoint_score"], 1.0,
        "the real work still counts: {r}"
    );
    assert_eq!(r["end_reason"], "finished");
    // 24 MB were sent; the trajectory holds a marker for each, not the bytes.
    let size = std::fs::metadata(out.join("trajectory.jsonl"))
        .unwrap()
        .len();
    assert!(size < 2 << 20, "trajectory is {size} bytes");
    let st = s.stats();
    let biggest = st.bodies.iter().map(|b| b.to_string().len()).max().unwrap();
    assert!(biggest < 512 << 10, "a request of {biggest} bytes");
    // The marker keeps the original length and hash, in the record and the decision.
    let sent = format!(
        "{{\"path\":\"workspace/huge.txt\",\"content\":\"{}\"}}",
        "x".repeat(FLOOD)
    );
    let hash = blake3::hash(sent.as_bytes()).to_hex().to_string();
    let all = lines(&out);
    let turn = all
        .iter()
        .find(|v| v["type"] == "model" && v["purpose"] == "turn")
        .unwrap();
    let args = turn["response"]["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"]
        .as_str()
        .unwrap();
    assert_eq!(
        tbsim_model::reply::marker_of(args),
        Some((sent.len() as u64, hash.clone()))
    );
    let decision = all.iter().find(|v| v["type"] == "decision").unwrap();
    assert_eq!(decision["calls"][0]["arguments"], args);
    // The model is told what happened, hash included, in the next request.
    let told = st.bodies[1]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .any(|m| m["role"] == "tool" && m["content"].as_str().unwrap().contains(&hash));
    assert!(told, "the refusal reaches the model");
    drop(s);
    let replay = ok(&tbsim(&["replay", out.to_str().unwrap()], tmp.path()));
    assert!(replay.contains(": identical"), "{replay}");
}

/// Issue 9.12: a 200 reply whose tool call's arguments are an object nested
/// 100,000 deep is the agent's malformed call, not a provider failure.
#[test]
fn an_over_deep_tool_call_is_the_agents_error_not_the_providers() {
    let tmp = tempfile::tempdir().unwrap();
    let s = server("kb-fix-medium", |c| {
        c.faults = vec![FaultRule::at(1, Fault::DeepArgs { depth: 100_000 })];
    });
    let (out, _) = run_fake(tmp.path(), &s);
    let r = result(&out);
    assert_eq!(r["end_reason"], "finished", "{r}");
    assert_eq!(r["errors"]["malformed_json"], 1, "counted: {r}");
    assert_eq!(r["checkpoint_score"], 1.0, "{r}");
    let st = s.stats();
    assert_eq!(st.agent_requests, st.turns, "nothing was retried");
    let failures: usize = lines(&out)
        .iter()
        .filter(|v| v["type"] == "model")
        .map(|v| v["failures"].as_array().map_or(0, Vec::len))
        .sum();
    assert_eq!(failures, 0);
    // Returned to the model as a structured error; its bulk is not sent back.
    let next = st.bodies[2].to_string();
    assert!(
        next.contains("malformed_json"),
        "the error reaches the model"
    );
    assert!(
        next.len() < 256 << 10,
        "the next request is {} bytes",
        next.len()
    );
    drop(s);
    let replay = ok(&tbsim(&["replay", out.to_str().unwrap()], tmp.path()));
    assert!(replay.contains(": identical"), "{replay}");
}

/// Issue 9.13: the model echoes its API key in its text and in a file it writes.
#[test]
fn a_key_the_model_echoes_is_redacted_from_everything_written() {
    let tmp = tempfile::tempdir().unwrap();
    let s = server("kb-fix-medium", |c| {
        c.faults = vec![FaultRule::at(1, Fault::EchoKey)];
    });
    let (out, text) = run_fake(tmp.path(), &s);
    let st = s.stats();
    let echoed = st.bodies[2].to_string();
    assert!(
        echoed.contains("my API key is [redacted]"),
        "the reply was used, redacted"
    );
    let r = result(&out);
    assert_eq!(r["end_reason"], "finished", "{r}");
    assert_eq!(r["checkpoint_score"], 1.0, "{r}");
    let traj = std::fs::read_to_string(out.join("trajectory.jsonl")).unwrap();
    assert!(
        traj.contains("my key is [redacted]"),
        "the written file too"
    );
    drop(s);
    let replay = ok(&tbsim(&["replay", out.to_str().unwrap()], tmp.path()));
    assert!(replay.contains(": identical"), "{replay}");
    assert_no_key(tmp.path(), &[&text, &replay]);
}

/// A model-backed agent started from the console of `tbsim serve`: the runs list
/// says when it waits for its model, the timeline shows its model calls with their
/// tokens and prompts (a colleague's never), and the run scores as `tbsim run` would.
#[test]
fn the_console_watches_a_model_backed_agent_wait_for_its_model() {
    let tmp = tempfile::tempdir().unwrap();
    let s = server("meeting-only", |c| c.delay_ms = 300);
    let cfg = api_config(tmp.path(), &s, "");
    let out = tmp.path().join("serve");
    let (child, addr) = crate::util::spawn_listening(command(
        &[
            "serve",
            "--bind",
            "127.0.0.1:0",
            "--out",
            out.to_str().unwrap(),
            "--api-config",
            cfg.to_str().unwrap(),
            "--scenarios",
            root().join("content/scenarios").to_str().unwrap(),
        ],
        tmp.path(),
    ));
    let addr = addr.parse().unwrap();
    let web = crate::serve::Server {
        child,
        addr,
        token: None,
    };
    let (code, info) = web.request("GET", "/v1/console/info", None);
    assert_eq!(code, 200);
    assert!(
        info["agents"]
            .as_array()
            .unwrap()
            .contains(&json!("llm:fake")),
        "{info}"
    );
    let (code, v) = web.post(
        "/v1/console/start",
        &json!({"scenario": "meeting-only", "agent": "llm:fake"}),
    );
    assert_eq!(code, 200, "{v}");
    let id = v["id"].as_str().unwrap().to_owned();
    let start = Instant::now();
    let mut states = Vec::new();
    loop {
        let (_, d) = web.request("GET", &format!("/v1/console/runs/{id}"), None);
        let st = d["state"].as_str().unwrap().to_owned();
        if states.last() != Some(&st) {
            states.push(st.clone());
        }
        if st == "finished" {
            assert_eq!(d["score"], 1.0, "{d}");
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(60), "{states:?}");
        std::thread::sleep(Duration::from_millis(40));
    }
    assert!(
        states.iter().any(|s| s == "waiting_for_model"),
        "{states:?}"
    );
    let (_, t) = web.request("GET", &format!("/v1/console/runs/{id}/timeline"), None);
    let models: Vec<&Value> = t["lines"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["type"] == "model")
        .collect();
    assert!(!models.is_empty());
    for m in &models {
        assert!(m["usage"]["output_tokens"].as_u64().is_some(), "{m}");
        // The agent's prompt is its transcript: shown, in full or compact form.
        assert!(
            m["request"]["messages"].is_array() || m["request_delta"]["keep"].is_u64(),
            "{m}"
        );
    }
    assert!(models[0]["request"]["messages"][0]["role"] == "system");
    // Colleagues' model requests (their personas and clues) stay hidden.
    for n in t["lines"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["type"] == "npc")
    {
        assert!(
            n.get("request").is_none() && n.get("response").is_none(),
            "{n}"
        );
    }
    assert!(!t.to_string().contains(KEY));
}

/// The last user message of a request body, as text.
fn last_user(body: &Value) -> String {
    let m = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .unwrap();
    match &m["content"] {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A server answering as llama.cpp does: tool calls, a reply with text only, a reply
/// cut off at the reply limit, then a refusal of the prompt as longer than the
/// context window. The run ends as the agent's failure, with a result and exit code
/// 0 (not the infrastructure's 3); its report shows the tokens the run itself wrote
/// to `result.json`; `--resume` does not send the refused request again.
#[test]
fn a_full_context_ends_the_run_as_the_agents_failure_reported_and_never_resumed() {
    let tmp = tempfile::tempdir().unwrap();
    let call = |name: &str| ScriptCall {
        name: name.into(),
        arguments: "{}".into(),
    };
    // Turns by step: 0 a call, 1 text only, 2 (cut off by a fault), 3 refused.
    let script = vec![vec![call("my_tasks")], vec![], vec![call("read_messages")]];
    let (s, cfg) = server_with(tmp.path(), "llama", &script, |c| {
        c.faults = vec![
            FaultRule::at(2, Fault::CutOff),
            FaultRule::at(3, Fault::ContextFull),
        ];
    });
    let out = tmp.path().join("run");
    let (o, c) = (out.to_str().unwrap(), cfg.to_str().unwrap());
    let sc = scen_path("meeting-only");
    let res = tbsim(
        &run_args(o, c, sc.to_str().unwrap(), &["--agent", "llm:fake"]),
        tmp.path(),
    );
    let (stdout, stderr) = crate::util::text(&res);
    assert_eq!(res.status.code(), Some(0), "{stdout}{stderr}");
    assert!(!stdout.contains("INFRASTRUCTURE"), "{stdout}");
    assert!(
        stdout.contains("ended by the agent's failure (context_exceeded, scored)")
            && stdout.contains("exceeds the available context size"),
        "{stdout}"
    );
    assert!(stdout.contains("empty turns: 2"), "{stdout}");
    let r = result(&out);
    assert_eq!(r["end_reason"], "context_exceeded", "{r}");
    assert!(r.get("infra_error").is_none(), "{r}");
    assert_eq!(r["steps"], 3);
    assert_eq!(r["empty_turns"], 2, "the text-only and the cut-off replies");
    let m = &r["model"];
    assert_eq!(
        (m["calls"].as_u64(), m["cut_off"].as_u64()),
        (Some(3), Some(1))
    );
    // The tokens are the server's, as the trajectory recorded them.
    let (mut tin, mut tout) = (0, 0);
    for l in lines(&out).iter().filter(|l| l["type"] == "model") {
        tin += l["usage"]["input_tokens"].as_u64().unwrap_or(0);
        tout += l["usage"]["output_tokens"].as_u64().unwrap_or(0);
    }
    assert!(tin > 1000 && tout > 0, "{tin} {tout}");
    assert_eq!(
        (m["input_tokens"].as_u64(), m["output_tokens"].as_u64()),
        (Some(tin), Some(tout))
    );

    // What the model was told: a reply limit with every request, the nudge after the
    // text-only reply (with the step it led to), the cut-off after the cut reply.
    let bodies = s.stats().bodies;
    assert_eq!(bodies.len(), 4);
    assert!(
        bodies.iter().all(|b| b["max_tokens"] == 2048),
        "the default reply limit"
    );
    let nudged = last_user(&bodies[2]);
    assert!(
        nudged.contains("· step 2") && nudged.contains("You did not call any tool"),
        "{nudged}"
    );
    let cut = last_user(&bodies[3]);
    assert!(
        cut.contains("· step 3") && cut.contains("cut off at the reply limit (2048 tokens)"),
        "{cut}"
    );

    // Wall time, attempts and timeouts per call, beside the trajectory.
    let calls: Vec<Value> = std::fs::read_to_string(out.join("model_calls.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(calls.len(), 4, "{calls:?}");
    assert!(
        calls
            .iter()
            .all(|c| c["attempts"] == 1 && c["wall_ms"].is_u64())
    );
    assert_eq!(calls[3]["ok"], false);
    assert_eq!(
        calls
            .iter()
            .map(|c| c["step"].as_u64().unwrap())
            .collect::<Vec<_>>(),
        [1, 2, 3, 4]
    );

    // The report reads what the run wrote.
    let rep_dir = tmp.path().join("report");
    ok(&tbsim(
        &["report", o, "--out", rep_dir.to_str().unwrap()],
        tmp.path(),
    ));
    let rep: Value =
        serde_json::from_str(&std::fs::read_to_string(rep_dir.join("report.json")).unwrap())
            .unwrap();
    let t = &rep["tokens"][0];
    assert_eq!(
        (t["tokens_in"].as_u64(), t["tokens_out"].as_u64()),
        (Some(tin), Some(tout))
    );
    assert_eq!(t["calls"], 3);
    let mc = &rep["model_calls"][0];
    assert_eq!(
        (
            &mc["empty_turns"],
            &mc["cut_off"],
            &mc["timed_calls"],
            &mc["failed"]
        ),
        (&json!(2), &json!(1), &json!(4), &json!(1))
    );
    assert_eq!(rep["models"][0]["runs"], 1, "the agent's failure is scored");
    assert_eq!(rep["models"][0]["infra_failures"], 0);
    let md = std::fs::read_to_string(rep_dir.join("report.md")).unwrap();
    assert!(
        md.contains(&format!("| llm:fake | 1 | 3 | {tin} | {tout} |")),
        "{md}"
    );

    // Replay reproduces it offline; resuming it sends nothing.
    ok(&tbsim(&["replay", o], tmp.path()));
    let before = s.stats().agent_requests;
    let again = tbsim(&["run", "--resume", o, "--api-config", c], tmp.path());
    let (stdout, stderr) = crate::util::text(&again);
    assert_eq!(again.status.code(), Some(0), "{stdout}{stderr}");
    assert!(stdout.contains("context_exceeded"), "{stdout}");
    assert_eq!(
        s.stats().agent_requests,
        before,
        "the refusal is not repeated"
    );
    assert_eq!(result(&out), r);
}

/// A context window the server reports (`/props`, as llama.cpp) keeps the history
/// within it, counting the tool catalogue and calibrated on the server's counts:
/// the run is never refused, and it summarises now and then, not before every turn.
#[test]
fn a_reported_context_window_is_kept_without_summarising_every_turn() {
    let tmp = tempfile::tempdir().unwrap();
    let script = oracle_script("busy-day");
    // One call per turn: many turns, a history that grows.
    let script: Vec<Vec<ScriptCall>> = script.into_iter().flatten().map(|c| vec![c]).collect();
    let window = 9_000;
    let (s, cfg) = server_with(tmp.path(), "window", &script, |c| {
        c.context_tokens = Some(window);
    });
    let out = tmp.path().join("run");
    let (o, c) = (out.to_str().unwrap(), cfg.to_str().unwrap());
    let sc = scen_path("busy-day");
    let res = tbsim(
        &run_args(o, c, sc.to_str().unwrap(), &["--agent", "llm:fake"]),
        tmp.path(),
    );
    let (stdout, stderr) = crate::util::text(&res);
    assert!(res.status.success(), "{stdout}{stderr}");
    assert!(
        stderr.contains("context window of 9000 tokens") && stderr.contains("/props"),
        "{stderr}"
    );
    let st = s.stats();
    assert_eq!(st.context_refusals, 0, "never refused");
    let r = result(&out);
    assert_ne!(r["end_reason"], "context_exceeded", "{r}");
    let purposes: Vec<String> = model_lines(&out)
        .iter()
        .map(|l| l["purpose"].as_str().unwrap().to_owned())
        .collect();
    let turns = purposes.iter().filter(|p| *p == "turn").count();
    let summaries = purposes.iter().filter(|p| *p == "summary").count();
    assert!(summaries >= 1, "the window was reached: {purposes:?}");
    assert!(
        summaries * 4 <= turns,
        "{summaries} summaries for {turns} turns: compressed to a low-water mark"
    );
    // Every request fitted, as the server counts (a quarter of the body's bytes).
    for b in &st.bodies {
        assert!((b.to_string().len() as u64) / 4 <= window);
    }
    ok(&tbsim(&["replay", o], tmp.path()));
}
