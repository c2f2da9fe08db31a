//! What of a run the console may show, and to whom: nothing of a run a person is
//! playing (its world is seen through the tools), nothing of a job not started, and,
//! while a person plays a scenario, nothing of any other run of that scenario (an
//! oracle's run, a played fork's parent: their steps and files are the answers).
//!
//! Shared by the routes and by compare, which both ask before they read a run.

use axum::http::StatusCode;

use super::{Console, Found, RunKind};
use crate::http::ApiError;

/// An API error.
pub(crate) fn err(status: StatusCode, code: &'static str, message: impl Into<String>) -> ApiError {
    ApiError {
        status,
        code,
        message: message.into(),
    }
}

/// Whether `found` is a person's play session still going: its page shows only
/// what the tools return (each view of the world costs the tool's time), so the
/// free views (world, files, timeline) and guidance are refused until it ends.
pub(crate) fn playing(found: &Found) -> bool {
    match found {
        Found::Session(_, e) => {
            !e.info.builtin
                && e.info.agent.starts_with("human:")
                && e.info.failure().is_none()
                && e.info.control.status().state != tbsim_engine::live::LiveState::Finished
        }
        Found::Fixed(_) => false,
    }
}

/// The scenario of a run.
fn scenario_of(found: &Found) -> &str {
    match found {
        Found::Session(_, e) => &e.info.scenario,
        Found::Fixed(f) => &f.scenario,
    }
}

fn id_of(found: &Found) -> &str {
    match found {
        Found::Session(id, _) => id,
        Found::Fixed(f) => &f.id,
    }
}

/// The scenarios a person is playing now (play sessions still going).
pub(crate) fn played_scenarios(c: &Console) -> Vec<(String, String)> {
    c.registry()
        .list()
        .into_iter()
        .filter_map(|(id, e)| {
            let s = e.info.scenario.clone();
            playing(&Found::Session(id.clone(), e)).then_some((id, s))
        })
        .collect()
}

/// Whether another run of `scenario` is being played now (so this one, `id`, shows
/// nothing: its steps would give the player the answers).
pub(crate) fn locked_by_play(played: &[(String, String)], id: &str, scenario: &str) -> bool {
    played.iter().any(|(p, s)| p != id && s == scenario)
}

fn refuse_locked(c: &Console, found: &Found) -> Result<(), ApiError> {
    if locked_by_play(&played_scenarios(c), id_of(found), scenario_of(found)) {
        return Err(err(
            StatusCode::FORBIDDEN,
            "hidden_while_playing",
            "a person is playing this run's scenario: its runs are hidden until the play ends",
        ));
    }
    Ok(())
}

pub(crate) fn refuse_while_playing(c: &Console, found: &Found) -> Result<(), ApiError> {
    if playing(found) {
        return Err(err(
            StatusCode::FORBIDDEN,
            "hidden_while_playing",
            "a person is playing this run: the world is seen through the tools (each costs its simulated time) until the run ends",
        ));
    }
    refuse_locked(c, found)
}

/// A batch job not started yet has no world: said so, without its directory.
pub(crate) fn queued_check(found: &Found) -> Result<(), ApiError> {
    if let Found::Fixed(f) = found
        && f.kind == RunKind::Batch
        && f.control().is_none()
    {
        return Err(err(
            StatusCode::CONFLICT,
            "no_world",
            "queued: the job has not started yet",
        ));
    }
    Ok(())
}

/// Whether the run's world may be shown at all: not while a person plays it or its
/// scenario, not before a batch job starts.
pub(crate) fn viewable(c: &Console, found: &Found) -> Result<(), ApiError> {
    refuse_while_playing(c, found)?;
    queued_check(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_played_scenario_locks_its_other_runs_only() {
        let played = vec![("play-1".to_owned(), "meeting-only".to_owned())];
        assert!(locked_by_play(&played, "oracle-run", "meeting-only"));
        assert!(!locked_by_play(&played, "play-1", "meeting-only"));
        assert!(!locked_by_play(&played, "other", "sales-report"));
        assert!(!locked_by_play(&[], "oracle-run", "meeting-only"));
    }
}
