//! The one integration-test binary (matklad's advice): each module covers a subject.

mod util;

// The `tbsim` binary end to end: run, replay, validate, tools, gen.
mod cli;
// Same inputs, same bytes: repeated runs, shuffled schedules, regenerated content.
mod determinism;
// Every family over many seeds: oracle 1.0, idle 0, through a RON round trip.
mod families;
// ADs strategy: heatmap images, budget checker, wrong answers.
mod family_ads_strategy;
// Event planning: own map per instance, date ranges, itineraries.
mod family_event_planning;
// Adversarial and malformed tool calls are refused, counted, and never panic.
mod tools;
// Engine behaviours through the tools: interrupts, deadlines, events, chat, calendar, files.
mod engine;
// The discrete-event families: interrupts, changed requirements, handoff chains.
mod errors;
// Meeting book: seeds, variants, wrong guest lists.
mod family_meeting_book;
// Resume select: seeds, variants, trivially wrong shortlists.
mod family_resume_select;
// The sales analysis family (and sweep helpers shared by the families below).
mod family_sales;
// The website monitor family, its trap and its monitoring tools.
mod family_website_monitor;
// Attendance statistics: seeds, variants, wrong answers.
mod family_attendance;
// Data completion: seeds, variants, solvability, wrong answers.
mod family_changed_requirement;
mod family_data_completion;
mod family_handoff_chain;
mod family_urgent_interrupt;
