//! Wall-clock times as RFC 3339 UTC text (`2026-11-22T15:34:19.123Z`), the one form every
//! JSON document and log line uses. Written here rather than pulled from a date crate: the
//! tool only ever formats UTC instants, which is a few lines of civil-calendar arithmetic.
//!
//! Ages that decide something across processes (a lease, the verified point's
//! `max_age_secs`) are measured on one clock, the directory's (`UNIX_TIMESTAMP()` on the
//! directory node): a resume on another host, or a local clock stepped by NTP between the
//! verification and `confirm`, must not make a stale point look fresh. [`DirectoryClock`]
//! reads it once and counts on from there with the local monotonic clock, which never
//! steps.

use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// The directory's clock: its Unix time read once, carried forward by the monotonic clock.
#[derive(Debug, Clone, Copy)]
pub struct DirectoryClock {
    read_at: Instant,
    unix_secs: i64,
}

impl DirectoryClock {
    /// The clock, given the directory's Unix time read just now.
    pub fn read(directory_unix_secs: i64) -> DirectoryClock {
        DirectoryClock {
            read_at: Instant::now(),
            unix_secs: directory_unix_secs,
        }
    }

    /// The directory's Unix time now, in whole seconds.
    pub fn unix_secs(&self) -> i64 {
        self.unix_secs + self.read_at.elapsed().as_secs() as i64
    }

    /// Seconds from `then` (a Unix time on the directory's clock) to now on it; negative
    /// when `then` is ahead (a point journaled with the local clock of a host ahead of the
    /// directory's).
    pub fn age_secs(&self, then: i64) -> i64 {
        self.unix_secs() - then
    }
}

/// `at` as RFC 3339 UTC with milliseconds.
pub fn rfc3339(at: SystemTime) -> String {
    let millis = match at.duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_millis() as i64,
        Err(e) => -(e.duration().as_millis() as i64),
    };
    rfc3339_millis(millis)
}

/// The current time as RFC 3339 UTC with milliseconds.
pub fn now() -> String {
    rfc3339(SystemTime::now())
}

/// Milliseconds since the Unix epoch now (0 on a clock before it).
pub fn unix_millis() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// Whole seconds since the Unix epoch now.
pub fn unix_secs() -> i64 {
    (unix_millis() / 1000) as i64
}

/// Milliseconds since the Unix epoch as RFC 3339 UTC with milliseconds.
pub fn rfc3339_millis(unix_millis: i64) -> String {
    let secs = unix_millis.div_euclid(1000);
    let ms = unix_millis.rem_euclid(1000);
    let days = secs.div_euclid(86_400);
    let of_day = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{ms:03}Z",
        of_day / 3600,
        of_day % 3600 / 60,
        of_day % 60
    )
}

/// Whole Unix seconds of an RFC 3339 time: `2026-11-25T18:00:00Z`, with optional fractional
/// seconds (dropped) and a `Z` or `+HH:MM`/`-HH:MM` offset (`t` and `z`, and a space for the
/// `T`, as RFC 3339 allows). None for anything else, an impossible date included.
pub fn parse_rfc3339(text: &str) -> Option<i64> {
    let b = text.as_bytes();
    let num = |from: usize, len: usize| -> Option<i64> {
        let part = text.get(from..from + len)?;
        part.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| part.parse().ok())?
    };
    if b.len() < 20
        || b[4] != b'-'
        || b[7] != b'-'
        || !matches!(b[10], b'T' | b't' | b' ')
        || b[13] != b':'
        || b[16] != b':'
    {
        return None;
    }
    let (y, m, d) = (num(0, 4)?, num(5, 2)?, num(8, 2)?);
    let (hh, mm, ss) = (num(11, 2)?, num(14, 2)?, num(17, 2)?);
    let mut at = 19;
    if b[at] == b'.' {
        at += 1;
        let digits = b[at..].iter().take_while(|c| c.is_ascii_digit()).count();
        if digits == 0 {
            return None;
        }
        at += digits;
    }
    let offset = match b.get(at..)? {
        [b'Z' | b'z'] => 0,
        [sign @ (b'+' | b'-'), _, _, b':', _, _] => {
            let (oh, om) = (num(at + 1, 2)?, num(at + 4, 2)?);
            if oh > 23 || om > 59 {
                return None;
            }
            let o = oh * 3600 + om * 60;
            if *sign == b'-' {
                -o
            } else {
                o
            }
        }
        _ => return None,
    };
    let days = days_from_civil(y, m as u32, d as u32);
    if !(1..=12).contains(&m) || d < 1 || civil_from_days(days) != (y, m as u32, d as u32) {
        return None;
    }
    if hh > 23 || mm > 59 || ss > 60 {
        return None;
    }
    Some(days * 86_400 + hh * 3600 + mm * 60 + ss - offset)
}

/// Days since 1970-01-01 of a proleptic Gregorian date: the inverse of
/// [`civil_from_days`] (Howard Hinnant's `days_from_civil`).
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let m = i64::from(m);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Year, month and day of a count of days since 1970-01-01 in the proleptic Gregorian
/// calendar (Howard Hinnant's `civil_from_days`: eras of 400 years, March-based years so
/// the leap day falls last).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
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
    use std::time::Duration;

    #[test]
    fn rfc3339_times_read_back_as_unix_seconds() {
        for secs in [0, 951_782_400, 1_795_629_600, 4_102_444_800, -86_400] {
            let text = rfc3339_millis(secs * 1000);
            assert_eq!(parse_rfc3339(&text), Some(secs), "{text}");
        }
        assert_eq!(parse_rfc3339("2026-11-25T18:00:00Z"), Some(1_795_629_600));
        assert_eq!(
            parse_rfc3339("2026-11-25T19:30:00+01:30"),
            Some(1_795_629_600)
        );
        assert_eq!(
            parse_rfc3339("2026-11-25t17:00:00.5-01:00"),
            Some(1_795_629_600)
        );
        for bad in [
            "",
            "2026-11-25",
            "2026-11-25T18:00:00",
            "2026-02-30T18:00:00Z",
            "2026-13-01T18:00:00Z",
            "2026-11-25T24:00:00Z",
            "2026-11-25T18:00:00.Z",
            "2026-11-25T18:00:00+0100",
            "2026-11-25T18:00:00Zjunk",
            "+026-11-25T18:00:00Z",
        ] {
            assert_eq!(parse_rfc3339(bad), None, "{bad}");
        }
    }

    /// The age comes from the directory's time, not the local one: with a directory an
    /// hour behind this host, a point stamped on the directory's clock a minute ago is a
    /// minute old (the local clock would call it 61 minutes old, or a local stamp -59).
    #[test]
    fn ages_are_measured_on_the_directory_clock() {
        let directory_now = unix_secs() - 3600;
        let clock = DirectoryClock::read(directory_now);
        assert_eq!(clock.age_secs(directory_now - 60), 60);
        assert_ne!(unix_secs() - (directory_now - 60), 60);
        assert!(
            clock.age_secs(unix_secs()) <= -3599,
            "a local stamp is an hour ahead"
        );
    }

    fn at(secs: i64, millis: u64) -> String {
        let t = if secs >= 0 {
            UNIX_EPOCH + Duration::from_secs(secs as u64) + Duration::from_millis(millis)
        } else {
            UNIX_EPOCH - Duration::from_secs(secs.unsigned_abs()) + Duration::from_millis(millis)
        };
        rfc3339(t)
    }

    #[test]
    fn timestamps_are_rfc3339_utc_with_milliseconds() {
        assert_eq!(at(0, 0), "1970-01-01T00:00:00.000Z");
        assert_eq!(at(0, 1), "1970-01-01T00:00:00.001Z");
        // `date -u -d @951782400`: the leap day of 2000 (divisible by 400).
        assert_eq!(at(951_782_400, 0), "2000-02-29T00:00:00.000Z");
        assert_eq!(at(951_868_799, 999), "2000-02-29T23:59:59.999Z");
        assert_eq!(at(951_868_800, 0), "2000-03-01T00:00:00.000Z");
        // 2024 is a leap year; 2100 is not (divisible by 100, not by 400).
        assert_eq!(at(1_709_208_245, 42), "2024-02-29T12:04:05.042Z");
        assert_eq!(at(1_709_251_199, 0), "2024-02-29T23:59:59.000Z");
        assert_eq!(at(1_709_251_200, 0), "2024-03-01T00:00:00.000Z");
        assert_eq!(at(4_107_542_399, 0), "2100-02-28T23:59:59.000Z");
        assert_eq!(at(4_107_542_400, 0), "2100-03-01T00:00:00.000Z");
        // Year ends, the 32-bit rollover, and a day before the epoch.
        assert_eq!(at(1_703_980_800, 0), "2023-12-31T00:00:00.000Z");
        assert_eq!(at(1_704_067_199, 500), "2023-12-31T23:59:59.500Z");
        assert_eq!(at(1_704_067_200, 0), "2024-01-01T00:00:00.000Z");
        assert_eq!(at(2_147_483_647, 0), "2038-01-19T03:14:07.000Z");
        assert_eq!(at(-86_400, 0), "1969-12-31T00:00:00.000Z");
        assert_eq!(at(-1, 250), "1969-12-31T23:59:59.250Z");
        assert_eq!(at(-2_203_977_600, 0), "1900-02-28T00:00:00.000Z");
        assert_eq!(at(-2_203_891_200, 0), "1900-03-01T00:00:00.000Z");
    }

    fn leap(y: i64) -> bool {
        (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
    }

    fn month_len(y: i64, m: u32) -> u32 {
        match m {
            2 if leap(y) => 29,
            2 => 28,
            4 | 6 | 9 | 11 => 30,
            _ => 31,
        }
    }

    #[test]
    fn known_instants() {
        assert_eq!(rfc3339_millis(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(rfc3339_millis(951_782_400_000), "2000-02-29T00:00:00.000Z");
        assert_eq!(
            rfc3339_millis(1_709_251_199_999),
            "2024-02-29T23:59:59.999Z"
        );
        assert_eq!(
            rfc3339_millis(4_107_542_400_000),
            "2100-03-01T00:00:00.000Z"
        );
        assert_eq!(rfc3339_millis(-1), "1969-12-31T23:59:59.999Z");
    }

    /// Every day of two centuries against a calendar counted one day at a time,
    /// independently of the era arithmetic.
    #[test]
    fn every_day_of_two_centuries_matches_a_day_by_day_count() {
        let (mut y, mut m, mut d) = (1970_i64, 1_u32, 1_u32);
        for days in 0..73_100 {
            assert_eq!(civil_from_days(days), (y, m, d), "day {days}");
            d += 1;
            if d > month_len(y, m) {
                d = 1;
                m += 1;
                if m > 12 {
                    m = 1;
                    y += 1;
                }
            }
        }
    }
}
