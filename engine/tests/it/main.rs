//! The one integration-test binary (matklad's advice): each module covers a subject.

mod util;

// The `tbsim` binary end to end: run, replay, validate, tools, gen.
mod cli;
// Same inputs, same bytes: repeated runs, shuffled schedules, regenerated content.
mod determinism;
// Every family over many seeds: oracle 1.0, idle 0, through a RON round trip.
mod families;
// Adversarial and malformed tool calls are refused, counted, and never panic.
mod tools;
// Engine behaviours through the tools: interrupts, deadlines, events, chat, calendar, files.
mod engine;
mod errors;
// The model-backed agent and colleagues over HTTP against tools/fake-llm.
mod llm;
