//! Per-decision cost of every scheduler with 2, 4 and 8 paths.
//! `cargo bench -p cmt-core --bench schedulers`

use std::hint::black_box;
use std::time::Instant;

use cmt_core::sched::{self, SchedContext};
use cmt_core::{Duration, Params, PathView, Time};

fn views(n: usize) -> Vec<PathView> {
    (0..n)
        .map(|i| {
            let srtt = Some(Duration::from_millis(10 + 15 * i as u64));
            PathView {
                cwnd: 20_000 + 3_000 * i as u64,
                ssthresh: 30_000,
                flight: 10_000,
                srtt,
                rttvar: Duration::from_millis(3),
                min_rtt: srtt,
                max_srtt: srtt,
                loss_rate: 0.01,
                can_send: i % 2 == 1 || n == 2,
                ..PathView::idle(i)
            }
        })
        .collect()
}

fn main() {
    println!(
        "{:<12} {:>10} {:>10} {:>10}",
        "scheduler", "2 paths", "4 paths", "8 paths"
    );
    for name in &sched::names() {
        let mut row = format!("{name:<12}");
        for n in [2, 4, 8] {
            let paths = views(n);
            let mut s = sched::by_name(name, &Params::default()).unwrap().build(n);
            let iters = 2_000_000u32;
            let t = Instant::now();
            for i in 0..iters {
                let ctx = SchedContext {
                    now: Time::from_nanos(i as u64 * 1000),
                    paths: &paths,
                    peer_rwnd: 64 * 1024,
                    chunk_len: 1452,
                    queued_bytes: u64::MAX,
                    chunks_available: usize::MAX,
                    reserved: 0,
                    peer_awnd: 1 << 20,
                    adverts: 0,
                };
                if let Some((p, _)) = black_box(s.select_at(&ctx)) {
                    s.on_sent(p, i as u64, 1452);
                }
            }
            row += &format!(" {:>7.1} ns", t.elapsed().as_nanos() as f64 / iters as f64);
        }
        println!("{row}");
    }
}
