//! A live run's remote control: what a console watching the run may do to it.
//!
//! A [`Control`] is shared between the runner (which drives the run) and any number
//! of watchers (the console's HTTP handlers). Watchers may pause the agent, resume
//! it, let exactly one decision through while paused, and queue human guidance (a
//! task's next hint tier, or a free-text message). The runner publishes the run's
//! [`LiveStatus`] after every decision and reads the control only at decision
//! boundaries, so nothing a watcher does can change a decision in flight.
//!
//! ## Ordering
//!
//! Guidance is applied by the runner right before the agent is asked for its next
//! decision, in the order it was queued: it is recorded as `guidance` lines ahead of
//! that decision (`guidance` lines, see the trajectory module) and reaches the agent as
//! notifications in the observation it decides on. Replay applies the recorded lines
//! at the same place, so a guided run replays without its watcher. When and whether
//! a watcher acts is wall-clock dependent; what the run records is not: the
//! trajectory holds exactly what was applied.
//!
//! A request is checked twice: when queued (against the last published status, so
//! the watcher hears at once why it is refused) and when applied (against the world,
//! which is the rule; a request refused then is dropped and counted in
//! [`LiveStatus::dropped`]).

use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use serde::Serialize;
use tokio::sync::Notify;

pub use crate::guidance::{
    GuidanceKind, GuidanceRequest, GuideError, MAX_BY_CHARS, MAX_MESSAGE_CHARS,
};
use crate::progress::Progress;

/// What a live run is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LiveState {
    /// Stepping on its own.
    Running,
    /// Held before its next decision by a watcher.
    Paused,
    /// Its model is deciding.
    WaitingForModel,
    /// An external agent (a program or a person) is deciding.
    WaitingForAgent,
    /// Over; its directory is written.
    Finished,
}

/// A live run's state as last published by its runner.
#[derive(Debug, Clone, Serialize)]
pub struct LiveStatus {
    /// What the run is doing.
    pub state: LiveState,
    /// The run's progress after its latest decision (`None` before the first).
    pub progress: Option<Progress>,
    /// Per released task: hint tiers given so far (up front and by guidance), and
    /// how many the task has.
    pub hint_tiers: BTreeMap<String, (u8, u8)>,
    /// Guidance queued but not yet applied.
    pub queued: usize,
    /// Guidance refused when it was applied (the world had moved on).
    pub dropped: u64,
}

#[derive(Debug)]
struct Inner {
    paused: bool,
    /// The run is to end as abandoned at its next decision boundary.
    cancelled: bool,
    /// Decisions let through while paused.
    credits: u32,
    queue: VecDeque<GuidanceRequest>,
    /// Guidance the runner has taken from the queue and not yet published the
    /// tiers after: still counted when checking a new hint, or a request made in
    /// that window would be checked against tiers that miss it.
    applying: Vec<GuidanceRequest>,
    status: LiveStatus,
}

/// A live run's remote control (see the module docs).
#[derive(Debug)]
pub struct Control {
    inner: Mutex<Inner>,
    /// Wakes a runner held at a decision boundary. An async wait, not a thread's:
    /// a session's world may be driven on a server's connection task, which must
    /// not block its thread while a watcher holds the agent (and waking nobody costs
    /// no system call, where a condition variable's notify made one a publish).
    wake: Notify,
    version: AtomicU64,
}

/// What the runner is told at a decision boundary.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Gate {
    /// Decide.
    Go,
    /// Apply these first, then ask again.
    Guidance(Vec<GuidanceRequest>),
    /// End the run as abandoned (its watcher closed it).
    Stop,
}

impl Control {
    /// A control for a run that starts paused or not.
    pub fn new(paused: bool) -> Arc<Control> {
        Arc::new(Control {
            inner: Mutex::new(Inner {
                paused,
                cancelled: false,
                credits: 0,
                queue: VecDeque::new(),
                applying: Vec::new(),
                status: LiveStatus {
                    state: if paused {
                        LiveState::Paused
                    } else {
                        LiveState::Running
                    },
                    progress: None,
                    hint_tiers: BTreeMap::new(),
                    queued: 0,
                    dropped: 0,
                },
            }),
            wake: Notify::new(),
            version: AtomicU64::new(0),
        })
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn changed(&self) {
        self.version.fetch_add(1, Ordering::SeqCst);
        self.wake.notify_waiters();
    }

    /// Holds the agent before its next decision.
    pub fn pause(&self) {
        let mut i = self.lock();
        i.paused = true;
        i.credits = 0;
        if i.status.state == LiveState::Running {
            i.status.state = LiveState::Paused;
        }
        drop(i);
        self.changed();
    }

    /// Lets the agent go on.
    pub fn resume(&self) {
        let mut i = self.lock();
        i.paused = false;
        i.credits = 0;
        if i.status.state == LiveState::Paused {
            i.status.state = LiveState::Running;
        }
        drop(i);
        self.changed();
    }

    /// While paused, lets exactly one more decision through (no effect otherwise).
    pub fn step_once(&self) {
        let mut i = self.lock();
        if i.paused {
            i.credits = i.credits.saturating_add(1);
        }
        drop(i);
        self.changed();
    }

    /// Ends the run as abandoned at its next decision boundary (a paused run at
    /// once). Its directory is written as for any run.
    pub fn cancel(&self) {
        self.lock().cancelled = true;
        self.changed();
    }

    /// Whether a watcher holds the agent.
    pub fn is_paused(&self) -> bool {
        self.lock().paused
    }

    /// Queues guidance; returns the hint tier it will give (0 for a message).
    pub fn guide(&self, g: GuidanceRequest) -> Result<u8, GuideError> {
        g.check_shape()?;
        let mut i = self.lock();
        if i.status.state == LiveState::Finished {
            return Err(GuideError::Over);
        }
        let tier = match (&g.kind, &g.task) {
            (_, Some(task)) => {
                let Some(&(given, total)) = i.status.hint_tiers.get(task) else {
                    return Err(GuideError::UnknownTask(task.clone()));
                };
                if g.kind == GuidanceKind::NextHint {
                    let queued = i
                        .queue
                        .iter()
                        .chain(&i.applying)
                        .filter(|q| {
                            q.kind == GuidanceKind::NextHint && q.task.as_ref() == Some(task)
                        })
                        .count();
                    let next = usize::from(given) + queued + 1;
                    if next > usize::from(total) {
                        return Err(GuideError::NoMoreTiers(task.clone()));
                    }
                    u8::try_from(next).unwrap_or(u8::MAX)
                } else {
                    0
                }
            }
            (GuidanceKind::NextHint, None) => return Err(GuideError::NeedsTask),
            (GuidanceKind::Message(_), None) => 0,
        };
        i.queue.push_back(g);
        i.status.queued = i.queue.len() + i.applying.len();
        drop(i);
        self.changed();
        Ok(tier)
    }

    /// The run's state as last published.
    pub fn status(&self) -> LiveStatus {
        self.lock().status.clone()
    }

    /// A number that grows whenever anything here changes (for watchers polling).
    pub fn version(&self) -> u64 {
        self.version.load(Ordering::SeqCst)
    }

    /// Publishes the run's state (runner side).
    pub(crate) fn publish(
        &self,
        state: LiveState,
        progress: Option<Progress>,
        hint_tiers: Option<BTreeMap<String, (u8, u8)>>,
    ) {
        let mut i = self.lock();
        // A watcher's pause shows while the run is between decisions.
        i.status.state = if state == LiveState::Running && i.paused {
            LiveState::Paused
        } else {
            state
        };
        if progress.is_some() {
            i.status.progress = progress;
        }
        if let Some(h) = hint_tiers {
            i.status.hint_tiers = h;
            // The tiers now count what was being applied.
            i.applying.clear();
            i.status.queued = i.queue.len();
        }
        drop(i);
        self.changed();
    }

    /// Counts guidance refused when applied (runner side).
    pub(crate) fn dropped(&self) {
        self.lock().status.dropped += 1;
        self.changed();
    }

    /// At a decision boundary (runner side): waits while paused without credit,
    /// returning queued guidance as soon as there is some, or [`Gate::Go`] when the
    /// agent may decide (taking a credit if paused). The wait is a future's, so the
    /// thread driving the run is free while it is held.
    pub(crate) async fn gate(&self) -> Gate {
        loop {
            // Registered before the state is read: a change between the read and
            // the wait wakes it.
            let changed = self.wake.notified();
            let mut changed = std::pin::pin!(changed);
            changed.as_mut().enable();
            if let Some(g) = self.try_gate() {
                return g;
            }
            changed.await;
        }
    }

    /// [`Control::gate`] without waiting: `None` while the agent is held.
    fn try_gate(&self) -> Option<Gate> {
        let mut i = self.lock();
        if i.cancelled {
            return Some(Gate::Stop);
        }
        if !i.queue.is_empty() {
            let g: Vec<GuidanceRequest> = i.queue.drain(..).collect();
            i.applying.extend(g.iter().cloned());
            return Some(Gate::Guidance(g));
        }
        if !i.paused {
            return Some(Gate::Go);
        }
        if i.credits > 0 {
            i.credits -= 1;
            return Some(Gate::Go);
        }
        i.status.state = LiveState::Paused;
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hint(task: &str) -> GuidanceRequest {
        GuidanceRequest {
            by: "ana".into(),
            task: Some(task.into()),
            kind: GuidanceKind::NextHint,
        }
    }

    #[test]
    fn hints_are_checked_against_the_published_tiers_and_the_queue() {
        let c = Control::new(false);
        assert_eq!(
            c.guide(hint("t1")),
            Err(GuideError::UnknownTask("t1".into()))
        );
        let tiers = BTreeMap::from([("t1".to_owned(), (1u8, 3u8))]);
        c.publish(LiveState::Running, None, Some(tiers));
        assert_eq!(c.guide(hint("t1")), Ok(2));
        assert_eq!(c.guide(hint("t1")), Ok(3));
        assert_eq!(
            c.guide(hint("t1")),
            Err(GuideError::NoMoreTiers("t1".into()))
        );
        let no_task = GuidanceRequest {
            task: None,
            ..hint("t1")
        };
        assert_eq!(c.guide(no_task), Err(GuideError::NeedsTask));
        let empty = GuidanceRequest {
            by: "ana".into(),
            task: None,
            kind: GuidanceKind::Message("  ".into()),
        };
        assert_eq!(c.guide(empty), Err(GuideError::Empty));
        assert_eq!(c.status().queued, 2);
        assert_eq!(
            crate::agent::block_on(c.gate()),
            Gate::Guidance(vec![hint("t1"), hint("t1")])
        );
        assert_eq!(crate::agent::block_on(c.gate()), Gate::Go);
    }

    /// Between the runner taking guidance and publishing the tiers after it, a new
    /// hint is checked against both (it once saw neither, and was granted tier 2
    /// of a task whose tiers had run out).
    #[test]
    fn hints_taken_but_not_yet_published_still_count() {
        let c = Control::new(false);
        let tiers = BTreeMap::from([("t1".to_owned(), (1u8, 3u8))]);
        c.publish(LiveState::Running, None, Some(tiers));
        assert_eq!(c.guide(hint("t1")), Ok(2));
        assert_eq!(c.guide(hint("t1")), Ok(3));
        assert_eq!(
            crate::agent::block_on(c.gate()),
            Gate::Guidance(vec![hint("t1"), hint("t1")])
        );
        // Taken, not applied yet.
        assert_eq!(c.status().queued, 2);
        assert_eq!(
            c.guide(hint("t1")),
            Err(GuideError::NoMoreTiers("t1".into()))
        );
        // Applied and published.
        let tiers = BTreeMap::from([("t1".to_owned(), (3u8, 3u8))]);
        c.publish(LiveState::Running, None, Some(tiers));
        assert_eq!(c.status().queued, 0);
        assert_eq!(
            c.guide(hint("t1")),
            Err(GuideError::NoMoreTiers("t1".into()))
        );
    }

    #[test]
    fn a_paused_run_waits_and_a_step_lets_one_decision_through() {
        let c = Control::new(true);
        let runner = {
            let c = Arc::clone(&c);
            std::thread::spawn(move || {
                let first = crate::agent::block_on(c.gate());
                let second = crate::agent::block_on(c.gate());
                (first, second)
            })
        };
        let held = || {
            std::thread::sleep(std::time::Duration::from_millis(100));
            !runner.is_finished()
        };
        assert!(held(), "held before the first decision");
        c.step_once();
        assert!(held(), "one decision let through, held before the second");
        c.resume();
        let (first, second) = runner.join().unwrap();
        assert_eq!(first, Gate::Go);
        assert_eq!(second, Gate::Go);
        assert!(!c.is_paused());
    }

    #[test]
    fn guidance_for_a_finished_run_is_refused() {
        let c = Control::new(false);
        c.publish(LiveState::Finished, None, None);
        let m = GuidanceRequest {
            by: "ana".into(),
            task: None,
            kind: GuidanceKind::Message("hello".into()),
        };
        assert_eq!(c.guide(m), Err(GuideError::Over));
    }
}
