//! How the simulator's cost per packet scales with the work: process CPU time per data
//! packet (1) as the association grows from 2 to 16 paths, (2) as 0 to 1,000 competing
//! TCP-like flows share the bottleneck with a two-path association, and (3) the same
//! with FQ-CoDel at the bottleneck instead of drop-tail (a queue per flow), and (4) the
//! same with the competing flows as further two-path associations (`kind = "cmt"`,
//! LIA), as web-like flows (`kind = "web"`: objects and think times) or as paced BBR
//! flows (`cc = "bbr"`). Ideally all stay flat (the goal: within 1.3× across each
//! range, and FQ-CoDel within 1.3× of drop-tail).
//!
//! `cargo bench -p cmt-sim --bench scaling` — prints, per case, data packets (the CMT
//! association's, plus the TCP flows' estimated from their offered rate and 1500-byte
//! packets), events per packet and CPU µs per packet, median of 3 runs.

use cpu_time::ProcessTime;

/// `n` loss-free 10 Mbit/s paths (20–35 ms one way), a 4 MB window, 60 s. (With 16 MB
/// and 16 paths the association fails within 1.2 s: slow start overshoots every queue at
/// once and the timeouts, counted together against Association.Max.Retrans = 10 as RFC
/// 9260 does, exceed the limit before a SACK resets the count.)
fn paths(n: usize) -> String {
    let mut s = String::from(
        "name = \"paths\"\nseed = 1\nduration = \"60s\"\n[receiver]\nrbuf = \"4MB\"\n",
    );
    for i in 0..n {
        let delay = 20 + i;
        s += &format!(
            "[[links]]\nname = \"l{i}\"\nrate = \"10Mbps\"\ndelay = \"{delay}ms\"\nqueue = 100\n"
        );
    }
    for i in 0..n {
        s += &format!("[[paths]]\nname = \"p{i}\"\nlinks = [\"l{i}\"]\n");
    }
    s
}

/// A two-path association whose paths meet at a 100 Mbit/s core link under `aqm`
/// shared with `f` backlogged TCP-like flows, 20 s.
fn flows(f: usize, aqm: &str) -> String {
    let mut s = format!(
        "name = \"flows\"\nseed = 1\nduration = \"20s\"\n[receiver]\nrbuf = \"4MB\"\n\
         [[links]]\nname = \"a0\"\nrate = \"50Mbps\"\ndelay = \"5ms\"\nqueue = 100\n\
         [[links]]\nname = \"a1\"\nrate = \"50Mbps\"\ndelay = \"10ms\"\nqueue = 100\n\
         [[links]]\nname = \"core\"\nrate = \"100Mbps\"\ndelay = \"20ms\"\nqueue = 1000\n\
         aqm = \"{aqm}\"\n\
         [[paths]]\nname = \"p0\"\nlinks = [\"a0\", \"core\"]\n\
         [[paths]]\nname = \"p1\"\nlinks = [\"a1\", \"core\"]\n",
    );
    if f > 0 {
        s += &format!(
            "[[traffic]]\nname = \"tcp\"\nkind = \"tcp\"\nlinks = [\"core\"]\ncount = {f}\n"
        );
    }
    s
}

/// As [`flows`] under drop-tail, the competitors being `f` two-path LIA associations
/// over both access links and the core (`kind = "cmt"`), `f` web-like flows over the
/// core (`kind = "web"`, 50 KB Pareto objects, 1 s think times) or `f` BBR flows over
/// the core (paced: every packet waits for its pacing time).
fn sources(f: usize, kind: &str) -> String {
    let mut s = flows(0, "droptail");
    s += &match kind {
        "cmt" => format!(
            "[[traffic]]\nname = \"mp\"\nkind = \"cmt\"\ncc = \"lia\"\ncount = {f}\n\
             paths = [[\"a0\", \"core\"], [\"a1\", \"core\"]]\n"
        ),
        "bbr" => format!(
            "[[traffic]]\nname = \"bbr\"\nkind = \"tcp\"\ncc = \"bbr\"\nlinks = [\"core\"]\n\
             count = {f}\n"
        ),
        _ => format!(
            "[[traffic]]\nname = \"web\"\nkind = \"web\"\nlinks = [\"core\"]\ncount = {f}\n"
        ),
    };
    s
}

/// Median CPU µs per packet, packets and events per packet of `text`.
fn measure(text: &str) -> (f64, u64, f64) {
    let mut costs = Vec::new();
    let (mut pkts, mut events) = (0, 0);
    for _ in 0..3 {
        let built = cmt_sim::load_str(text, "bench", None, &[]).expect("scenario loads");
        let mut sim = cmt_sim::Simulation::new(built).expect("scenario builds");
        let t = ProcessTime::now();
        sim.run(&mut |_| {});
        let cpu = t.elapsed().as_secs_f64();
        let s = cmt_sim::Summary::of(&sim, cpu);
        let tcp: f64 = s
            .background
            .iter()
            .filter(|b| b.tcp)
            .map(|b| b.offered_mbps * 1e6 / 8.0 * s.sim_time_s / 1500.0)
            .sum();
        pkts = s.paths.iter().map(|p| p.sent_packets).sum::<u64>() + tcp as u64;
        events = s.events;
        costs.push(cpu / pkts as f64);
    }
    costs.sort_by(f64::total_cmp);
    (costs[1] * 1e6, pkts, events as f64 / pkts as f64)
}

fn main() {
    println!(
        "{:>22} {:>10} {:>14} {:>16}",
        "case", "packets", "events / pkt", "CPU µs / pkt"
    );
    for n in [2, 4, 8, 16] {
        let (us, pkts, ev) = measure(&paths(n));
        println!(
            "{:>22} {pkts:>10} {ev:>14.2} {us:>16.3}",
            format!("{n} paths")
        );
    }
    for aqm in ["droptail", "fq_codel"] {
        for f in [0, 10, 100, 1000] {
            let (us, pkts, ev) = measure(&flows(f, aqm));
            println!(
                "{:>22} {pkts:>10} {ev:>14.2} {us:>16.3}",
                format!("{f} TCP flows, {aqm}")
            );
        }
    }
    for kind in ["cmt", "web", "bbr"] {
        for f in [10, 100, 1000] {
            let (us, pkts, ev) = measure(&sources(f, kind));
            println!(
                "{:>22} {pkts:>10} {ev:>14.2} {us:>16.3}",
                format!("{f} {kind} flows")
            );
        }
    }
}
