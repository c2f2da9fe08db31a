//! The one integration-test binary (matklad's advice): each module covers a subject.

mod util;

// Content-blind adversaries on every bundled suite stay under the score ceiling.
mod adversary;
// Batch runs (concurrency, trials, async agents) and `tbsim report`.
mod batch;
// The `tbsim` binary end to end: run, replay, validate, tools, gen, suites, metatasks.
mod cli;
// The web console in headless Chromium (tools/console-tests).
mod console;
// The console's HTTP routes: watch, step, guide, play, fork; `tbsim view`, `tbsim run --ui`; nothing hidden.
mod console_api;
// Finished runs' end worlds put in the console's view cache when they end.
mod console_cache;
// Runs and batches compared side by side; `tbsim view --export`.
mod console_compare;
// Same inputs, same bytes: repeated runs, pinned digests, regenerated content.
mod determinism;
// Engine behaviours through the tools: interrupts, deadlines, events, chat, calendar, files, days.
mod engine;
// Every scenario error code: its page's example fails as documented; message snapshots.
mod errors;
// The fuzz targets' smoke run: seed corpus, found crashes, seeded mutations.
mod fuzz;
// Content-blind echo attacks (issue 25): each copies, echoes or picks by position.
mod echo_leaks;
// The first three families over many seeds, every variant, trivially wrong answers.
mod families;
// One module per further family: seeds, variants, validity and its own edge cases.
mod family_ads_strategy;
mod family_attendance;
mod family_changed_requirement;
mod family_data_completion;
mod family_event_planning;
mod family_handoff_chain;
mod family_meeting_book;
mod family_resume_select;
mod family_sales;
mod family_script;
mod family_urgent_interrupt;
mod family_website_monitor;
// Human guidance through a console's control (recorded, counted, reported, replayed); `tbsim fork`.
mod guidance;
// Content attacks: guessable answers, listing past a colleague, days that disagree.
mod giveaways;
// Hostile scenario files: escaping sidecars, special files, sizes, impossible values.
mod hostile_scenarios;

// The crates import only the layers below them; no module cycles.
mod house;
mod security;
// `tbsim mcp` and `/mcp`: a real MCP client replays the oracle; refused calls; resources; raw JSON-RPC.
mod mcp;
// After a session: tags, finished sessions kept then read back, clients that go away.
mod finished;
// Scenarios by name: `tbsim scenarios`, `GET /v1/scenarios`, `run|mcp NAME`, content beside the binary.
mod names;
// User-facing text in plain words, no debug formatting.
mod plain_text;
// The Python package: its wheel built, installed in a fresh venv, tested there.
mod python;
// `tbsim serve`: sessions over HTTP reproduce `tbsim run`; hostile requests; the Python client.
mod serve;
// The independent solver over every variant of every family.
mod solver;
// Colleagues answer specific questions, in other words too, and never keyword soup.
mod npc_questions;
// A held-out probe of colleagues over the TraineeBench scenarios (issue 25).
mod npc_probe;
// The model-backed agent and colleagues over HTTP against tools/fake-llm.
mod llm;
// The bundled benchmark suites and freshly drawn ones.
mod suites;
// Adversarial and malformed tool calls are refused, counted, and never panic.
mod tools;
mod validity_scan;
