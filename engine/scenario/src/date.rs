//! The one calendar date and clock-time type of scenarios, their checks and their
//! generators: [`Date`] (a civil date, on the `jiff` crate) and [`Clock`] (minutes
//! after midnight, written `HH:MM`).

use std::fmt;

/// A civil date, written `YYYY-MM-DD`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Date(jiff::civil::Date);

impl Date {
    /// The date `year-month-day`, if it exists (years -9999 to 9999).
    pub fn new(year: i32, month: u32, day: u32) -> Option<Date> {
        let (y, m, d) = (
            i16::try_from(year).ok()?,
            i8::try_from(month).ok()?,
            i8::try_from(day).ok()?,
        );
        jiff::civil::Date::new(y, m, d).ok().map(Date)
    }

    /// Exactly `YYYY-MM-DD` (four, two and two ASCII digits) naming a real day.
    pub fn parse(s: &str) -> Option<Date> {
        let b = s.as_bytes();
        if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
            return None;
        }
        let num = |r: std::ops::Range<usize>| -> Option<u32> {
            let t = s.get(r)?;
            t.bytes()
                .all(|c| c.is_ascii_digit())
                .then(|| t.parse().ok())?
        };
        Date::new(i32::try_from(num(0..4)?).ok()?, num(5..7)?, num(8..10)?)
    }

    /// The year.
    pub fn year(self) -> i32 {
        i32::from(self.0.year())
    }

    /// The month, 1 to 12.
    pub fn month(self) -> u32 {
        self.0.month() as u32
    }

    /// The day of the month, from 1.
    pub fn day(self) -> u32 {
        self.0.day() as u32
    }

    /// Day of the week, 0 = Sunday.
    pub fn weekday_from_sunday(self) -> u32 {
        self.0.weekday().to_sunday_zero_offset() as u32
    }

    /// Days in this date's month.
    pub fn days_in_month(self) -> u32 {
        self.0.days_in_month() as u32
    }

    /// The date `days` later (earlier when negative), if within the supported years.
    pub fn add_days(self, days: i64) -> Option<Date> {
        self.0
            .checked_add(jiff::Span::new().try_days(days).ok()?)
            .ok()
            .map(Date)
    }
}

impl fmt::Display for Date {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:04}-{:02}-{:02}",
            self.year(),
            self.month(),
            self.day()
        )
    }
}

/// A time of day as minutes after midnight, written `HH:MM`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Clock(pub u32);

impl Clock {
    /// `HH:MM` or `H:MM` (surrounding whitespace ignored) naming a time of day.
    pub fn parse(s: &str) -> Option<Clock> {
        let (h, m) = s.trim().split_once(':')?;
        if h.is_empty() || h.len() > 2 || m.len() != 2 {
            return None;
        }
        let (h, m): (u32, u32) = (h.parse().ok()?, m.parse().ok()?);
        (h < 24 && m < 60).then_some(Clock(h * 60 + m))
    }

    /// Minutes after midnight.
    pub fn minutes(self) -> u32 {
        self.0
    }
}

/// `HH:MM`, zero-padded; minutes past a day carry into the hours (`24:30`).
impl fmt::Display for Clock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:02}:{:02}", self.0 / 60, self.0 % 60)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_parse_strictly() {
        let d = Date::parse("2024-02-29").unwrap();
        assert_eq!((d.year(), d.month(), d.day()), (2024, 2, 29));
        assert_eq!(d.to_string(), "2024-02-29");
        for bad in [
            "2025-02-29",
            "2025-13-01",
            "2025-00-10",
            "2025-04-31",
            "2025-4-01",
            "2025-04-01T09:00",
            "+025-04-01",
            "2025/04/01",
            "",
        ] {
            assert_eq!(Date::parse(bad), None, "{bad}");
        }
        assert!(Date::parse("2000-02-29").is_some());
        assert!(Date::parse("1900-02-29").is_none());
        assert!(Date::parse("2025-10-01") < Date::parse("2025-10-02"));
    }

    #[test]
    fn weekdays_month_lengths_and_shifts() {
        let d = Date::new(2025, 10, 1).unwrap();
        assert_eq!(d.weekday_from_sunday(), 3, "a Wednesday");
        assert_eq!(Date::new(2025, 10, 5).unwrap().weekday_from_sunday(), 0);
        assert_eq!(d.days_in_month(), 31);
        assert_eq!(Date::new(2024, 2, 1).unwrap().days_in_month(), 29);
        assert_eq!(Date::new(2100, 2, 1).unwrap().days_in_month(), 28);
        assert_eq!(d.add_days(-1).unwrap().to_string(), "2025-09-30");
        assert_eq!(d.add_days(92).unwrap().to_string(), "2026-01-01");
        assert_eq!(
            Date::new(2024, 3, 1)
                .unwrap()
                .add_days(-1)
                .unwrap()
                .to_string(),
            "2024-02-29"
        );
        assert_eq!(Date::new(9999, 12, 31).unwrap().add_days(1), None);
    }

    #[test]
    fn clock_times() {
        assert_eq!(Clock::parse("09:05"), Some(Clock(545)));
        assert_eq!(Clock::parse(" 9:05 "), Some(Clock(545)));
        for bad in ["24:00", "9:5", "123:00", ":30", "09:60", "0905", "ab:cd"] {
            assert_eq!(Clock::parse(bad), None, "{bad}");
        }
        assert_eq!(Clock(545).to_string(), "09:05");
        assert_eq!(Clock(0).to_string(), "00:00");
        assert_eq!(Clock(1470).to_string(), "24:30");
    }
}
