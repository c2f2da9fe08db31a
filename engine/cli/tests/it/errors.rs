//! The error-code pages in `docs/errors/` and the messages bad scenarios produce.
//!
//! Every page's example is loaded for real and must fail with the page's code and
//! exactly the message the page shows; snapshot tests pin the wording for a few
//! realistic mistakes.

use std::path::{Path, PathBuf};

use tbsim_scenario::{ErrorCode, ScenarioErrors, load_file};

fn docs_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/errors")
}

/// The bodies of every fenced block tagged `lang` in a Markdown page.
fn fenced_blocks(page: &str, lang: &str) -> Vec<String> {
    let open = format!("```{lang}");
    let mut blocks = Vec::new();
    let mut current: Option<Vec<&str>> = None;
    for line in page.lines() {
        match &mut current {
            None if line.trim_end() == open => current = Some(Vec::new()),
            None => {}
            Some(_) if line.trim_end() == "```" => {
                blocks.push(current.take().unwrap_or_default().join("\n"));
            }
            Some(body) => body.push(line),
        }
    }
    assert!(current.is_none(), "unclosed ```{lang} block");
    blocks
}

/// Loads `dir/name` and renders its errors with the directory prefix removed, so the
/// text reads `name: error[...]`. Panics if the file loads.
fn load_errors(dir: &Path, name: &str) -> (ScenarioErrors, String) {
    let errors = match load_file(&dir.join(name)) {
        Ok(_) => panic!("{name} loaded without errors"),
        Err(e) => e,
    };
    let prefix = format!("{}{}", dir.display(), std::path::MAIN_SEPARATOR);
    let text = errors.to_string().replace(&prefix, "");
    (errors, text)
}

/// Writes `src` to a fresh temp dir as `name` and loads it.
fn render(name: &str, src: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(name), src).unwrap();
    load_errors(dir.path(), name).1
}

#[test]
fn every_error_page_example_fails_with_its_code_and_message() {
    let docs = docs_dir();
    for code in ErrorCode::ALL {
        let page_path = docs.join(format!("{code}.md"));
        let page = std::fs::read_to_string(&page_path)
            .unwrap_or_else(|e| panic!("{}: {e}", page_path.display()));
        let title = page.lines().next().unwrap_or_default();
        assert!(
            title.starts_with(&format!("# {code}: ")) && title.len() > "# TB0000: ".len(),
            "{code}.md must start with `# {code}: <meaning>`, found {title:?}"
        );

        let ron = fenced_blocks(&page, "ron");
        let text = fenced_blocks(&page, "text");
        assert_eq!(text.len(), 1, "{code}.md needs exactly one ```text block");
        let expected = &text[0];

        let dir = tempfile::tempdir().unwrap();
        let name = format!("{code}.ron");
        match ron.as_slice() {
            [src] => std::fs::write(dir.path().join(&name), src).unwrap(),
            // Only an unreadable file may go without an example: the page shows
            // what loading a missing file prints.
            [] if code == ErrorCode::Io => {}
            _ => panic!(
                "{code}.md needs exactly one ```ron block, found {}",
                ron.len()
            ),
        }
        if code == ErrorCode::TooLarge {
            // The page's sidecar is too large to print: make it (sparse, so cheap).
            let big = std::fs::File::create(dir.path().join("big.bin")).unwrap();
            big.set_len(tbsim_scenario::limits::MAX_SIDECAR_BYTES + 1)
                .unwrap();
        }
        let (errors, rendered) = load_errors(dir.path(), &name);

        assert_eq!(
            errors.0[0].code, code,
            "{code}.md example fails with another code:\n{rendered}"
        );
        if !matches!(code, ErrorCode::Syntax | ErrorCode::Io) {
            let others: Vec<_> = errors.0.iter().filter(|e| e.code != code).collect();
            assert!(
                others.is_empty(),
                "{code}.md example also triggers other codes:\n{rendered}"
            );
        }
        assert_eq!(
            &rendered, expected,
            "{code}.md shows a different message from the one tbsim prints"
        );
    }
}

#[test]
fn missing_scenario_file_is_tb0017() {
    let dir = tempfile::tempdir().unwrap();
    let (errors, text) = load_errors(dir.path(), "absent.ron");
    assert_eq!(errors.0.len(), 1);
    assert_eq!(errors.0[0].code, ErrorCode::Io);
    assert!(
        text.starts_with("absent.ron: error[TB0017]: cannot read the scenario file: "),
        "{text}"
    );
}

#[test]
fn error_index_lists_every_code_and_nothing_else() {
    let docs = docs_dir();
    let readme = std::fs::read_to_string(docs.join("README.md")).unwrap();
    for code in ErrorCode::ALL {
        assert!(
            readme.contains(&format!("| [{code}]({code}.md) |")),
            "README.md does not list {code}"
        );
    }
    for entry in std::fs::read_dir(&docs).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        if let Some(stem) = name.strip_suffix(".md")
            && stem != "README"
        {
            // TB0026 is the script families' code (`tbsim_gen::script_host::ERROR_CODE`); its
            // page's example is checked by that crate's tests.
            assert!(
                ErrorCode::ALL.iter().any(|c| c.as_str() == stem)
                    || stem == tbsim_gen::script_host::ERROR_CODE,
                "docs/errors/{name} documents no known code"
            );
        }
    }
}

/// A small valid scenario that the snapshot tests break in one place each.
const VALID: &str = r#"Scenario(
  name: "report",
  seed: 7,
  clock: ClockSpec(start: "2025-10-08T09:00", end: "2025-10-08T18:00"),
  company: Company(
    name: "Acme",
    people: [
      Person(key: "npc/ann", name: "Ann Lee", department: "Ops", position: "Manager"),
    ],
  ),
  intern: Intern(key: "agent/intern", name: "Avery Smith", department: "Ops", manager: "npc/ann"),
  tasks: [
    TaskSpec(
      key: "task/report",
      family: "demo",
      variant: "demo/easy",
      difficulty: easy,
      title: "Write the report",
      objective: "Write workspace/report.md.",
      assigned_by: "npc/ann",
      release: Start,
      deadline: "2025-10-08T17:00",
      checkpoints: [
        CheckpointSpec(
          key: "written",
          description: "The report exists",
          check: FileExists(path: "workspace/report.md"),
          feedback: "Write workspace/report.md.",
        ),
      ],
    ),
  ],
)
"#;

/// `VALID` with one substring replaced (which must occur).
fn broken(from: &str, to: &str) -> String {
    assert!(VALID.contains(from), "{from:?} not in the valid scenario");
    VALID.replacen(from, to, 1)
}

#[test]
fn the_snapshot_base_scenario_is_valid() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("report.ron");
    std::fs::write(&path, VALID).unwrap();
    if let Err(e) = load_file(&path) {
        panic!("{e}");
    }
}

#[test]
fn snapshot_typo_in_field_name() {
    let src = broken("assigned_by:", "asigned_by:");
    insta::assert_snapshot!("typo_in_field_name", render("report.ron", &src));
}

#[test]
fn snapshot_wrong_release_variant() {
    let src = broken("release: Start", "release: OnStart");
    insta::assert_snapshot!("wrong_release_variant", render("report.ron", &src));
}

#[test]
fn snapshot_negative_seed() {
    let src = broken("seed: 7", "seed: -7");
    insta::assert_snapshot!("negative_seed", render("report.ron", &src));
}

#[test]
fn snapshot_missing_comma() {
    let src = broken("difficulty: easy,", "difficulty: easy");
    insta::assert_snapshot!("missing_comma", render("report.ron", &src));
}

/// Six independent mistakes; validation must report them all, each at its object.
const MANY_MISTAKES: &str = r#"Scenario(
  name: "onboarding-week",
  seed: 42,
  clock: ClockSpec(start: "2025-10-08T08:00", end: "2025-10-08T18:00"),
  company: Company(
    name: "Acme",
    people: [
      Person(
        key: "npc/ann",
        name: "Ann Lee",
        department: "Ops",
        position: "Manager",
        clues: [
          Clue(
            key: "clue/template",
            trigger: [["template"]],
            after: [Passed(task: "task/ghost", checkpoint: "done")],
            response: "The template is in drive/templates/.",
          ),
        ],
      ),
      Person(key: "npc/ann", name: "Ann Park", department: "Sales", position: "Analyst"),
    ],
  ),
  intern: Intern(key: "agent/intern", name: "Avery Smith", department: "Ops", manager: "npc/ann"),
  rooms: [
    Room(key: "room/atlas", name: "Atlas Room", capacity: 4),
  ],
  meetings: [
    MeetingSpec(
      key: "meeting/breakfast",
      title: "Team breakfast",
      room: "room/atlas",
      start: "2025-10-08T08:00",
      end: "2025-10-08T08:30",
      organizer: "npc/ann",
      attendees: ["npc/bob", "agent/intern"],
    ),
  ],
  tasks: [
    TaskSpec(
      key: "task/draft",
      family: "demo",
      variant: "demo/easy",
      difficulty: easy,
      title: "Draft the report",
      objective: "Write workspace/draft.md.",
      assigned_by: "npc/ann",
      release: AfterCheckpoint(task: "task/review", checkpoint: "approved"),
      deadline: "2025-10-08T12:00",
      checkpoints: [
        CheckpointSpec(
          key: "written",
          description: "The draft exists",
          check: FileExists(path: "workspace/draft.md"),
          feedback: "Write workspace/draft.md.",
        ),
      ],
    ),
    TaskSpec(
      key: "task/review",
      family: "demo",
      variant: "demo/easy",
      difficulty: easy,
      title: "Review the draft",
      objective: "Review workspace/draft.md.",
      assigned_by: "npc/ann",
      release: AfterCheckpoint(task: "task/draft", checkpoint: "written"),
      deadline: "2025-10-08T16:00",
      checkpoints: [
        CheckpointSpec(
          key: "approved",
          description: "The review exists",
          check: FileExists(path: "workspace/review.md"),
          feedback: "Write workspace/review.md.",
        ),
      ],
    ),
    TaskSpec(
      key: "task/summary",
      family: "demo",
      variant: "demo/easy",
      difficulty: easy,
      title: "Summarise the week",
      objective: "Write workspace/summary.md.",
      assigned_by: "npc/ann",
      release: At("2025-10-08T15:00"),
      deadline: "2025-10-08T14:00",
      checkpoints: [
        CheckpointSpec(
          key: "written",
          description: "The summary exists",
          check: FileExists(path: "workspace/summary.md"),
          feedback: "Write workspace/summary.md.",
        ),
      ],
    ),
  ],
)
"#;

#[test]
fn snapshot_several_semantic_errors_are_reported_together() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("week.ron"), MANY_MISTAKES).unwrap();
    let (errors, text) = load_errors(dir.path(), "week.ron");
    let mut codes: Vec<ErrorCode> = errors.0.iter().map(|e| e.code).collect();
    codes.sort();
    assert_eq!(
        codes,
        [
            ErrorCode::UnknownPerson,
            ErrorCode::UnknownTask,
            ErrorCode::DuplicateKey,
            ErrorCode::DependencyCycle,
            ErrorCode::DeadlineBeforeRelease,
            ErrorCode::MeetingOutsideDay,
        ],
        "{text}"
    );
    insta::assert_snapshot!("several_semantic_errors", text);
}
