//! The live progress line of `cmtlab send` / `cmtlab recv` on a terminal (standard
//! error; nothing when it is not a terminal): bytes done and the total rate, and per
//! path its rate, smoothed round-trip time, retransmitted share of the DATA packets
//! sent (the sender's view of loss: lost, or taken for lost) and share of the bytes —
//! redrawn every 250 ms by `indicatif`, cut to the terminal's width.

use std::sync::{Mutex, OnceLock};
use std::time::Instant;

use cmt_net::transfer::PathCount;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// The bar and the previous report (for rates).
struct Live {
    bar: ProgressBar,
    last: Option<(Instant, u64, Vec<u64>)>,
}

static LIVE: OnceLock<Mutex<Live>> = OnceLock::new();

fn live() -> &'static Mutex<Live> {
    LIVE.get_or_init(|| {
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
        bar.set_style(ProgressStyle::with_template("{spinner} {wide_msg}").expect("template"));
        Mutex::new(Live { bar, last: None })
    })
}

/// A path's own bytes on this side: sent by a sender, received by a receiver.
fn bytes_of(p: &PathCount) -> u64 {
    p.sent_bytes.max(p.received_bytes)
}

/// What was reported last: when, bytes done, each path's bytes.
type Sample = (Instant, u64, Vec<u64>);

/// One progress report (the transfer's `Options::progress`).
pub fn show(done: u64, paths: &[PathCount]) {
    let Ok(mut l) = live().lock() else { return };
    let now = (Instant::now(), done, paths.iter().map(bytes_of).collect());
    let msg = message(&now, paths, l.last.as_ref());
    l.bar.set_message(msg);
    l.bar.tick();
    l.last = Some(now);
}

/// The progress line for the sample `now` of `paths`, rates over the time since `last`.
fn message(now: &Sample, paths: &[PathCount], last: Option<&Sample>) -> String {
    let (t, done, per) = now;
    let (dt, before, before_per) = match last {
        Some((t0, d, p)) => (t.duration_since(*t0).as_secs_f64(), *d, p.as_slice()),
        None => (0.0, *done, per.as_slice()),
    };
    let mbps = |b: u64| {
        if dt > 0.0 {
            b as f64 * 8.0 / dt / 1e6
        } else {
            0.0
        }
    };
    let total: u64 = per.iter().sum();
    let mut msg = format!(
        "{:.1} MB {:.1} Mbit/s",
        *done as f64 / 1e6,
        mbps(done.saturating_sub(before))
    );
    for (i, p) in paths.iter().enumerate().filter(|(_, p)| bytes_of(p) > 0) {
        let moved = per[i].saturating_sub(before_per.get(i).copied().unwrap_or(0));
        let rtt = p.srtt_ms.map_or("–".into(), |r| format!("{r:.0}ms"));
        let rtx = if p.sent_packets > 0 {
            format!(
                " rtx {:.1}%",
                100.0 * p.retransmissions as f64 / p.sent_packets as f64
            )
        } else {
            String::new()
        };
        let share = 100.0 * per[i] as f64 / total.max(1) as f64;
        msg += &format!(" │ {i}: {:.1} Mbit/s {rtt}{rtx} {share:.0}%", mbps(moved));
    }
    msg
}

/// Removes the progress line (before the final report), if one was drawn.
pub fn clear() {
    if let Some(l) = LIVE.get() {
        if let Ok(l) = l.lock() {
            l.bar.finish_and_clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_gives_rates_over_the_last_interval_rtt_retransmissions_and_shares() {
        let path = |sent: u64, bytes: u64, rtx: u64, rtt: Option<f64>| PathCount {
            sent_packets: sent,
            sent_bytes: bytes,
            retransmissions: rtx,
            srtt_ms: rtt,
            ..PathCount::default()
        };
        let t0 = Instant::now();
        let t1 = t0 + std::time::Duration::from_millis(500);
        let before: Sample = (t0, 1_000_000, vec![750_000, 250_000, 0]);
        let paths = [
            path(1000, 1_500_000, 10, Some(21.4)),
            path(400, 500_000, 0, None),
            path(0, 0, 0, None),
        ];
        let now: Sample = (t1, 2_000_000, vec![1_500_000, 500_000, 0]);
        let m = message(&now, &paths, Some(&before));
        // 1 MB in 0.5 s = 16 Mbit/s; path 0 moved 750 kB = 12, path 1 250 kB = 4.
        assert_eq!(
            m,
            "2.0 MB 16.0 Mbit/s │ 0: 12.0 Mbit/s 21ms rtx 1.0% 75% │ 1: 4.0 Mbit/s – rtx 0.0% 25%"
        );
        // The first report has no interval: rates 0; a path without bytes is left out.
        let first = message(&now, &paths, None);
        assert!(
            first.starts_with("2.0 MB 0.0 Mbit/s │ 0: 0.0 Mbit/s"),
            "{first}"
        );
        assert!(!first.contains("│ 2:"), "{first}");
    }
}
