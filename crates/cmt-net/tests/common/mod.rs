//! What several runtime tests read from a receiver's per-packet trace.

#![allow(dead_code)]

/// The longest gap between two in-order deliveries in a receiver's trace (`--trace`
/// CSV), in seconds: the stream's stall.
pub fn stall(trace: &std::path::Path) -> f64 {
    let text = std::fs::read_to_string(trace).unwrap();
    let times: Vec<f64> = text
        .lines()
        .skip(1)
        .filter(|l| l.split(',').nth(5) == Some("deliver"))
        .filter_map(|l| l.split(',').next()?.parse().ok())
        .collect();
    times.windows(2).map(|w| w[1] - w[0]).fold(0.0, f64::max)
}
