//! The core's own clock types: integer nanoseconds, never read from the OS.
//!
//! Every `handle_*` / `poll_*` call takes `now: Time` from the driver (simulator or
//! runtime). Keeping time as plain integers makes simulation deterministic and lets the
//! same code run against a virtual clock or a real one.

use std::fmt;
use std::ops::{Add, AddAssign, Mul, Sub};

/// A point in time, in nanoseconds since an arbitrary epoch chosen by the driver.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Time(u64);

/// A span of time in nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Duration(u64);

impl Time {
    /// The epoch.
    pub const ZERO: Time = Time(0);
    /// The latest representable time; used as "never".
    pub const MAX: Time = Time(u64::MAX);

    /// A time `ns` nanoseconds after the epoch.
    pub const fn from_nanos(ns: u64) -> Self {
        Time(ns)
    }
    /// Nanoseconds since the epoch.
    pub const fn as_nanos(self) -> u64 {
        self.0
    }
    /// Seconds since the epoch as a float (for reporting only).
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e9
    }
    /// Time elapsed since `earlier`, saturating at zero.
    pub fn saturating_since(self, earlier: Time) -> Duration {
        Duration(self.0.saturating_sub(earlier.0))
    }
}

impl Duration {
    /// Zero length.
    pub const ZERO: Duration = Duration(0);
    /// The longest representable span.
    pub const MAX: Duration = Duration(u64::MAX);

    /// From nanoseconds.
    pub const fn from_nanos(ns: u64) -> Self {
        Duration(ns)
    }
    /// From microseconds.
    pub const fn from_micros(us: u64) -> Self {
        Duration(us * 1_000)
    }
    /// From milliseconds.
    pub const fn from_millis(ms: u64) -> Self {
        Duration(ms * 1_000_000)
    }
    /// From whole seconds.
    pub const fn from_secs(s: u64) -> Self {
        Duration(s * 1_000_000_000)
    }
    /// From fractional seconds, rounded to the nearest nanosecond; negative and NaN give zero.
    pub fn from_secs_f64(s: f64) -> Self {
        if s.is_nan() || s <= 0.0 {
            Duration(0)
        } else if s >= u64::MAX as f64 * 1e-9 {
            Duration(u64::MAX)
        } else {
            Duration((s * 1e9).round() as u64)
        }
    }
    /// Nanoseconds.
    pub const fn as_nanos(self) -> u64 {
        self.0
    }
    /// Seconds as a float.
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e9
    }
    /// Milliseconds as a float.
    pub fn as_millis_f64(self) -> f64 {
        self.0 as f64 / 1e6
    }
    /// Time to serialise `bytes` at `bits_per_sec`, rounded up to a whole nanosecond.
    pub fn transmission(bytes: u64, bits_per_sec: u64) -> Self {
        if bits_per_sec == 0 {
            return Duration::MAX;
        }
        // Bit-nanoseconds fit 64 bits for anything up to 2.3 GB, every packet: a 64-bit
        // division then, several times cheaper than a 128-bit one (same result).
        if let Some(bits) = bytes.checked_mul(8_000_000_000) {
            return Duration(bits.div_ceil(bits_per_sec));
        }
        let bits = bytes as u128 * 8 * 1_000_000_000;
        let ns = bits.div_ceil(bits_per_sec as u128);
        Duration(ns.min(u64::MAX as u128) as u64)
    }
    /// `self * num / den` without intermediate overflow.
    pub fn mul_div(self, num: u64, den: u64) -> Self {
        Duration((self.0 as u128 * num as u128 / den.max(1) as u128).min(u64::MAX as u128) as u64)
    }
    /// Saturating subtraction.
    pub fn saturating_sub(self, other: Duration) -> Duration {
        Duration(self.0.saturating_sub(other.0))
    }
}

impl Add<Duration> for Time {
    type Output = Time;
    fn add(self, d: Duration) -> Time {
        Time(self.0.saturating_add(d.0))
    }
}
impl AddAssign<Duration> for Time {
    fn add_assign(&mut self, d: Duration) {
        *self = *self + d;
    }
}
impl Sub<Time> for Time {
    type Output = Duration;
    /// Saturating: a later `rhs` gives zero.
    fn sub(self, rhs: Time) -> Duration {
        self.saturating_since(rhs)
    }
}
impl Sub<Duration> for Time {
    type Output = Time;
    /// Saturating at the epoch.
    fn sub(self, d: Duration) -> Time {
        Time(self.0.saturating_sub(d.0))
    }
}
impl Add for Duration {
    type Output = Duration;
    fn add(self, d: Duration) -> Duration {
        Duration(self.0.saturating_add(d.0))
    }
}
impl Mul<u64> for Duration {
    type Output = Duration;
    fn mul(self, k: u64) -> Duration {
        Duration(self.0.saturating_mul(k))
    }
}

impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.6}s", self.as_secs_f64())
    }
}
impl fmt::Display for Duration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.3}ms", self.as_millis_f64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transmission_time_rounds_up() {
        // 1500 B at 10 Mbit/s = 1.2 ms exactly.
        assert_eq!(
            Duration::transmission(1500, 10_000_000),
            Duration::from_micros(1200)
        );
        // 1 B at 3 bit/s = 8/3 s, rounded up.
        assert_eq!(Duration::transmission(1, 3).as_nanos(), 2_666_666_667);
        // The 64-bit shortcut and the 128-bit formula agree, on both sides of where
        // bit-nanoseconds stop fitting 64 bits (2,305,843,009 bytes).
        let wide = |b: u64, r: u64| {
            ((b as u128 * 8_000_000_000).div_ceil(r as u128)).min(u64::MAX as u128) as u64
        };
        for b in [
            0,
            1,
            1500,
            65_535,
            2_305_843_008,
            2_305_843_009,
            2_305_843_010,
            u64::MAX,
        ] {
            for r in [1, 3, 56_000, 10_000_000, 999_999_937, u64::MAX] {
                assert_eq!(
                    Duration::transmission(b, r).as_nanos(),
                    wide(b, r),
                    "{b} B at {r}"
                );
            }
        }
    }

    #[test]
    fn arithmetic_saturates_instead_of_wrapping() {
        assert_eq!(Time::ZERO - Time::from_nanos(5), Duration::ZERO);
        assert_eq!(Time::MAX + Duration::from_secs(1), Time::MAX);
        assert_eq!(Duration::from_secs_f64(-1.0), Duration::ZERO);
        assert_eq!(Duration::from_secs_f64(f64::NAN), Duration::ZERO);
    }
}
