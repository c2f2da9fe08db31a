//! Monitored services: health metrics, page load times and logs as functions of
//! simulated time.
//!
//! A series is a list of `(time, value)` points in time order. Its value at `t` is
//! the linear interpolation between the points around `t`, and flat before the
//! first and after the last point, so a disk that fills up is two points and a
//! step change is two points one second apart. The monitoring tools read these
//! at the current simulated time; nothing here reads the wall clock.

use bevy_ecs::prelude::*;
use serde::Serialize;

use crate::time::SimTime;
use tbsim_scenario::LogLevel;

/// A value over time: `(time, value)` points in time order.
pub type Series = Vec<(SimTime, f64)>;

/// The value of a series at `t` (0 for an empty series).
pub fn series_at(points: &[(SimTime, f64)], t: SimTime) -> f64 {
    let Some(first) = points.first() else {
        return 0.0;
    };
    if t <= first.0 {
        return first.1;
    }
    for w in points.windows(2) {
        let ((t0, v0), (t1, v1)) = (w[0], w[1]);
        if t <= t1 {
            if t1 == t0 {
                return v1;
            }
            let f = (t.0 - t0.0) as f64 / (t1.0 - t0.0) as f64;
            return v0 + (v1 - v0) * f;
        }
    }
    points.last().map_or(0.0, |p| p.1)
}

/// A health status, worst last.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Health {
    /// Within limits.
    Ok,
    /// Past the warning threshold.
    Warning,
    /// Past the critical threshold.
    Critical,
}

/// A health metric.
#[derive(Debug, Clone)]
pub struct Metric {
    /// Name.
    pub name: String,
    /// Unit.
    pub unit: String,
    /// Value over time.
    pub points: Series,
    /// `(warning, critical)`; warning > critical means lower is worse.
    pub thresholds: Option<(f64, f64)>,
}

impl Metric {
    /// The value at `t`.
    pub fn value_at(&self, t: SimTime) -> f64 {
        series_at(&self.points, t)
    }

    /// The status of a value.
    pub fn status(&self, v: f64) -> Health {
        match self.thresholds {
            None => Health::Ok,
            Some((warn, crit)) if warn <= crit => {
                if v >= crit {
                    Health::Critical
                } else if v >= warn {
                    Health::Warning
                } else {
                    Health::Ok
                }
            }
            Some((warn, crit)) => {
                if v <= crit {
                    Health::Critical
                } else if v <= warn {
                    Health::Warning
                } else {
                    Health::Ok
                }
            }
        }
    }
}

/// A page served by a service.
#[derive(Debug, Clone)]
pub struct Page {
    /// URL path.
    pub path: String,
    /// Window name -> mean load time (ms) over the window ending at each time.
    pub windows: Vec<(String, Series)>,
}

/// A log line.
#[derive(Debug, Clone)]
pub struct Log {
    /// When written.
    pub at: SimTime,
    /// Severity.
    pub level: LogLevel,
    /// Message.
    pub text: String,
}

/// A monitored service.
#[derive(Component, Debug, Clone)]
pub struct Service {
    /// Name the tools use.
    pub name: String,
    /// What it does.
    pub role: String,
    /// Metrics.
    pub metrics: Vec<Metric>,
    /// Pages served.
    pub pages: Vec<Page>,
    /// Logs in time order.
    pub logs: Vec<Log>,
}

impl Service {
    /// The worst status of its metrics at `t`.
    pub fn health_at(&self, t: SimTime) -> Health {
        self.metrics
            .iter()
            .map(|m| m.status(m.value_at(t)))
            .max()
            .unwrap_or(Health::Ok)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(points: &[(u64, f64)]) -> Series {
        points.iter().map(|(t, v)| (SimTime(*t), *v)).collect()
    }

    #[test]
    fn series_interpolate_and_hold_flat_outside() {
        let p = s(&[(100, 90.0), (200, 100.0)]);
        assert_eq!(series_at(&p, SimTime(0)), 90.0);
        assert_eq!(series_at(&p, SimTime(100)), 90.0);
        assert_eq!(series_at(&p, SimTime(150)), 95.0);
        assert_eq!(series_at(&p, SimTime(200)), 100.0);
        assert_eq!(series_at(&p, SimTime(10_000)), 100.0);
        assert_eq!(series_at(&[], SimTime(5)), 0.0);
        // A step: two points at the same instant take the later value from then on.
        let step = s(&[(0, 1.0), (50, 1.0), (50, 7.0)]);
        assert_eq!(series_at(&step, SimTime(49)), 1.0);
        assert_eq!(series_at(&step, SimTime(50)), 1.0);
        assert_eq!(series_at(&step, SimTime(51)), 7.0);
    }

    #[test]
    fn thresholds_work_both_ways() {
        let m = |th| Metric {
            name: "m".into(),
            unit: String::new(),
            points: Vec::new(),
            thresholds: th,
        };
        let disk = m(Some((80.0, 90.0)));
        assert_eq!(disk.status(79.9), Health::Ok);
        assert_eq!(disk.status(80.0), Health::Warning);
        assert_eq!(disk.status(95.0), Health::Critical);
        let hit_rate = m(Some((90.0, 70.0)));
        assert_eq!(hit_rate.status(99.0), Health::Ok);
        assert_eq!(hit_rate.status(85.0), Health::Warning);
        assert_eq!(hit_rate.status(70.0), Health::Critical);
        assert_eq!(m(None).status(1e9), Health::Ok);
    }

    #[test]
    fn service_health_is_the_worst_metric_at_the_time() {
        let svc = Service {
            name: "db".into(),
            role: "database".into(),
            metrics: vec![
                Metric {
                    name: "cpu".into(),
                    unit: "%".into(),
                    points: s(&[(0, 20.0)]),
                    thresholds: Some((75.0, 90.0)),
                },
                Metric {
                    name: "disk".into(),
                    unit: "%".into(),
                    points: s(&[(0, 85.0), (3600, 95.0)]),
                    thresholds: Some((80.0, 90.0)),
                },
            ],
            pages: Vec::new(),
            logs: Vec::new(),
        };
        assert_eq!(svc.health_at(SimTime(0)), Health::Warning);
        assert_eq!(svc.health_at(SimTime(3600)), Health::Critical);
    }
}
