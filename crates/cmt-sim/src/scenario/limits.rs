//! The limits a scenario's values must stay within: larger ones are mistakes (a unit or
//! an exponent too many), refused with the key that holds them.

use cmt_core::Duration;

use super::BuildError;

/// Longest simulated run, `duration` or `time_limit` (about 11.6 days): longer ones are
/// mistakes (a unit left out), not experiments.
pub(super) const MAX_SIM_TIME: Duration = Duration::from_secs(1_000_000);
/// Most time-series bins one run may record (`duration / metrics.bin`).
pub(super) const MAX_BINS: u64 = 1_000_000;
/// Largest `file_size` (1 TiB): at 10 Gbit/s a quarter of an hour of simulated time and
/// about 10^9 packets; larger ones are mistakes (a unit or an exponent too many).
pub(super) const MAX_FILE_SIZE: u64 = 1 << 40;

/// Refuses a simulated time above [`MAX_SIM_TIME`].
pub(super) fn at_most_max_time(key: &str, t: Duration) -> Result<Duration, BuildError> {
    if t > MAX_SIM_TIME {
        return Err(BuildError::new(
            key.into(),
            format!(
                "{} s is above the limit of {} s of simulated time",
                t.as_secs_f64(),
                MAX_SIM_TIME.as_secs_f64()
            ),
        ));
    }
    Ok(t)
}
