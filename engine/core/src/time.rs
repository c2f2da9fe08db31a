//! Simulated time.
//!
//! [`SimTime`] counts whole seconds since the scenario's epoch, which is midnight at
//! the start of the scenario's first day. It is an integer on purpose: no rounding can
//! reorder events, and the same inputs always land on the same second. Calendar dates
//! are only computed to *render* a time for an agent or a report.

use std::fmt;

use serde::{Deserialize, Serialize};

/// Seconds since the scenario epoch (midnight of the first day).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Default,
)]
#[serde(transparent)]
pub struct SimTime(pub u64);

/// A non-negative span of simulated time, in seconds.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Default,
)]
#[serde(transparent)]
pub struct SimDuration(pub u64);

impl SimDuration {
    /// A span of whole minutes.
    pub const fn minutes(m: u64) -> Self {
        SimDuration(m * 60)
    }
    /// The span in whole minutes, rounded down.
    pub const fn as_minutes(self) -> u64 {
        self.0 / 60
    }
}

impl SimTime {
    /// The time `d` later, saturating instead of overflowing.
    pub fn after(self, d: SimDuration) -> SimTime {
        SimTime(self.0.saturating_add(d.0))
    }
    /// The span from `earlier` to `self` (zero if `earlier` is later).
    pub fn since(self, earlier: SimTime) -> SimDuration {
        SimDuration(self.0.saturating_sub(earlier.0))
    }
}

/// A calendar anchor: the civil date of the scenario's first day.
///
/// Converts between workplace timestamps (`2025-10-01T09:30`) and [`SimTime`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Epoch {
    /// Days since 1970-01-01 of the first scenario day.
    day0: i64,
}

/// A timestamp string that is not of the form `YYYY-MM-DDTHH:MM[:SS]`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("expected a time like `2025-10-01T09:30` (or `HH:MM` on the first day), found `{0}`")]
pub struct TimeFormatError(pub String);

const WEEKDAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];

impl Epoch {
    /// The epoch whose first day contains `timestamp` (`YYYY-MM-DDTHH:MM[:SS]`).
    pub fn from_timestamp(timestamp: &str) -> Result<Self, TimeFormatError> {
        let (days, _) = parse_absolute(timestamp)?;
        Ok(Epoch { day0: days })
    }

    /// The epoch `n` calendar days later (earlier when `n` is negative).
    pub fn days_later(self, n: i64) -> Self {
        Epoch {
            day0: self.day0 + n,
        }
    }

    /// Parses `YYYY-MM-DDTHH:MM[:SS]`, or `HH:MM[:SS]` meaning the first day.
    /// Times before the epoch are an error.
    pub fn parse(&self, s: &str) -> Result<SimTime, TimeFormatError> {
        let (days, secs) = if s.len() <= 8 && s.contains(':') && !s.contains('-') {
            (
                self.day0,
                parse_clock(s).ok_or_else(|| TimeFormatError(s.to_owned()))?,
            )
        } else {
            parse_absolute(s)?
        };
        let delta = days - self.day0;
        if delta < 0 {
            return Err(TimeFormatError(s.to_owned()));
        }
        Ok(SimTime(delta as u64 * 86_400 + secs))
    }

    /// `2025-10-01T09:30:00` form, stable and sortable; used in files and trajectories.
    pub fn iso(&self, t: SimTime) -> String {
        let (y, m, d) = civil_from_days(self.day0 + (t.0 / 86_400) as i64);
        let s = t.0 % 86_400;
        format!(
            "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}",
            s / 3600,
            s / 60 % 60,
            s % 60
        )
    }

    /// `Wed 2025-10-01 09:30` form shown to agents.
    pub fn display(&self, t: SimTime) -> String {
        let days = self.day0 + (t.0 / 86_400) as i64;
        let (y, m, d) = civil_from_days(days);
        let s = t.0 % 86_400;
        let wd = WEEKDAYS[days.rem_euclid(7) as usize];
        if s.is_multiple_of(60) {
            format!(
                "{wd} {y:04}-{m:02}-{d:02} {:02}:{:02}",
                s / 3600,
                s / 60 % 60
            )
        } else {
            format!(
                "{wd} {y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}",
                s / 3600,
                s / 60 % 60,
                s % 60
            )
        }
    }

    /// `HH:MM` on the time's own day.
    pub fn clock(t: SimTime) -> String {
        let s = t.0 % 86_400;
        format!("{:02}:{:02}", s / 3600, s / 60 % 60)
    }

    /// Zero-based day index of `t` (day 0 is the first scenario day).
    pub fn day_of(t: SimTime) -> u64 {
        t.0 / 86_400
    }
}

impl fmt::Display for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "t+{}s", self.0)
    }
}

fn parse_clock(s: &str) -> Option<u64> {
    let mut parts = s.split(':');
    let h: u64 = num(parts.next()?, 2)?;
    let m: u64 = num(parts.next()?, 2)?;
    let sec: u64 = match parts.next() {
        Some(p) => num(p, 2)?,
        None => 0,
    };
    if parts.next().is_some() || h > 23 || m > 59 || sec > 59 {
        return None;
    }
    Some(h * 3600 + m * 60 + sec)
}

fn num(s: &str, width: usize) -> Option<u64> {
    if s.len() != width || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

fn parse_absolute(s: &str) -> Result<(i64, u64), TimeFormatError> {
    let err = || TimeFormatError(s.to_owned());
    let (date, clock) = s.split_once('T').ok_or_else(err)?;
    let mut dp = date.split('-');
    let y = num(dp.next().ok_or_else(err)?, 4).ok_or_else(err)? as i64;
    let m = num(dp.next().ok_or_else(err)?, 2).ok_or_else(err)? as u32;
    let d = num(dp.next().ok_or_else(err)?, 2).ok_or_else(err)? as u32;
    if dp.next().is_some() || !(1..=12).contains(&m) || d == 0 || d > days_in_month(y, m) {
        return Err(err());
    }
    let secs = parse_clock(clock).ok_or_else(err)?;
    Ok((days_from_civil(y, m, d), secs))
}

fn days_in_month(y: i64, m: u32) -> u32 {
    match m {
        2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 for a proleptic Gregorian date (era-based arithmetic).
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m as i64 + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_dates_across_months_and_leap_days() {
        let e = Epoch::from_timestamp("2024-02-28T08:00").unwrap();
        assert_eq!(
            e.parse("2024-02-28T09:30").unwrap(),
            SimTime(9 * 3600 + 1800)
        );
        let leap = e.parse("2024-02-29T00:00").unwrap();
        assert_eq!(leap, SimTime(86_400));
        assert_eq!(e.iso(leap), "2024-02-29T00:00:00");
        assert_eq!(e.iso(SimTime(2 * 86_400 + 61)), "2024-03-01T00:01:01");
        for days in [-1000i64, 0, 1, 59, 365, 20_000, 60_000] {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days);
        }
    }

    #[test]
    fn displays_weekday_and_short_clock() {
        let e = Epoch::from_timestamp("2025-10-01T08:00").unwrap();
        assert_eq!(e.display(e.parse("09:05").unwrap()), "Wed 2025-10-01 09:05");
        assert_eq!(e.display(SimTime(86_400 + 30)), "Thu 2025-10-02 00:00:30");
        assert_eq!(Epoch::clock(SimTime(86_400 + 13 * 3600 + 60)), "13:01");
    }

    #[test]
    fn rejects_malformed_and_pre_epoch_times() {
        let e = Epoch::from_timestamp("2025-10-01T08:00").unwrap();
        for bad in [
            "",
            "9:30",
            "25:00",
            "2025-13-01T09:00",
            "2025-02-30T09:00",
            "2025-10-01 09:00",
            "2025-09-30T23:00",
            "10:61",
            "2025-10-01T09:00:00:00",
        ] {
            assert!(e.parse(bad).is_err(), "{bad} should be rejected");
        }
    }
}
