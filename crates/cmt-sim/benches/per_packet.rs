//! CPU time per data packet as the receive window grows, on a topology where the window
//! binds: two paths, 10 Mbit/s with 20 ms and 1 Mbit/s with 4 s one-way delay, so the
//! slow path holds up to the whole window out of order. Ideally the cost per packet is
//! flat; SACK processing that walks what is outstanding makes it grow with the window.
//!
//! `cargo bench -p cmt-sim --bench per_packet` — prints, per window, data packets sent,
//! events per data packet and process CPU time per data packet (median of 3 runs).

use cpu_time::ProcessTime;

const SCENARIO: &str = include_str!("window-binds.toml");

fn main() {
    println!(
        "{:>8} {:>10} {:>14} {:>16}",
        "rbuf", "data pkts", "events / pkt", "CPU µs / pkt"
    );
    for rbuf in ["64KB", "256KB", "1MB", "4MB", "16MB"] {
        let mut costs = Vec::new();
        let (mut pkts, mut events) = (0, 0);
        for _ in 0..3 {
            let set = [format!("receiver.rbuf={rbuf}")];
            let built = cmt_sim::load_str(SCENARIO, "bench", None, &set).expect("scenario loads");
            let mut sim = cmt_sim::Simulation::new(built).expect("scenario builds");
            let t = ProcessTime::now();
            sim.run(&mut |_| {});
            let cpu = t.elapsed().as_secs_f64();
            let s = cmt_sim::Summary::of(&sim, cpu);
            pkts = s.paths.iter().map(|p| p.sent_packets).sum::<u64>();
            events = s.events;
            costs.push(cpu / pkts as f64);
        }
        costs.sort_by(f64::total_cmp);
        println!(
            "{rbuf:>8} {pkts:>10} {:>14.2} {:>16.3}",
            events as f64 / pkts as f64,
            costs[1] * 1e6
        );
    }
}
