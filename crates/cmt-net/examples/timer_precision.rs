//! How late timers wake: tokio's `sleep_until` against `io::sleep_precisely_until`.
//! `cargo run --release -p cmt-net --example timer_precision`

use std::time::Duration;

use rand::{Rng, SeedableRng};

fn report(name: &str, mut late: Vec<f64>) {
    late.sort_by(f64::total_cmp);
    let mean = late.iter().sum::<f64>() / late.len() as f64;
    let p99 = late[late.len() * 99 / 100];
    println!("{name:<24} lateness mean {mean:7.1} µs   p99 {p99:7.1} µs");
}

fn main() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        let waits: Vec<Duration> = (0..2000)
            .map(|_| Duration::from_micros(rng.gen_range(100..3000)))
            .collect();
        let mut coarse = Vec::new();
        let mut fine = Vec::new();
        for &w in &waits {
            let d = tokio::time::Instant::now() + w;
            tokio::time::sleep_until(d).await;
            coarse.push((tokio::time::Instant::now() - d).as_secs_f64() * 1e6);
            let d = tokio::time::Instant::now() + w;
            cmt_net::io::sleep_precisely_until(d).await;
            fine.push((tokio::time::Instant::now() - d).as_secs_f64() * 1e6);
        }
        report("tokio sleep_until", coarse);
        report("sleep_precisely_until", fine);
    });
}
