//! What several runtime tests share: a receiver trace's stall, addresses, data
//! patterns and scratch directories.

#![allow(dead_code)]

pub mod fed;
pub mod loris;
pub mod server;

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

/// A socket address from its text.
pub fn addr(s: &str) -> std::net::SocketAddr {
    s.parse().unwrap()
}

/// `len` bytes of a pattern that differs with `seed`.
pub fn pattern(len: usize, seed: u8) -> bytes::Bytes {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(17).wrapping_add(seed))
        .collect::<Vec<u8>>()
        .into()
}

/// An empty directory of this test process's own, under the system's temporary one.
pub fn fresh_dir(test: &str, name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("cmtlab-{test}-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}
