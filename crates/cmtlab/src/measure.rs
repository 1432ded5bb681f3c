//! `cmtlab send --measure SECONDS`: what these paths carry right now, iperf3's job —
//! generated data sent for a time through the usual transfer (the receiver runs `recv`
//! as for a file, `--out /dev/null` to keep nothing), then per path what it carried,
//! its round-trip times and retransmitted share, and a scenario that puts the same
//! paths into the simulator, so a measurement and a simulation can be compared.

use cmt_net::transfer::Report;

/// What a measurement reports.
pub struct Measurement {
    /// Per path what it carried (payload bytes sent over the transfer's time,
    /// retransmissions included), its RTTs and retransmitted share; the last line
    /// introduces the scenario.
    pub lines: Vec<String>,
    /// A scenario of the same paths for `cmtlab run` (TOML).
    pub scenario: String,
}

/// The measurement of the transfer `r`, run with `scheduler` and `rbuf`.
pub fn measure(r: &Report, scheduler: &str, rbuf: u32) -> Measurement {
    let secs = r.seconds.max(1e-9);
    let mut out = vec![format!(
        "measured for {:.1} s: {:.2} Mbit/s delivered in all",
        r.seconds,
        r.goodput_mbps()
    )];
    let mut toml = format!(
        "name = \"measured\"\nseed = 1\nduration = \"{:.0}s\"\n\n[association]\nscheduler = \"{scheduler}\"\n\n[receiver]\nrbuf = {rbuf}\n",
        r.seconds.ceil().max(1.0)
    );
    let mut names = Vec::new();
    for (i, p) in r
        .paths
        .iter()
        .enumerate()
        .filter(|(_, p)| p.sent_packets > 0)
    {
        let mbps = p.sent_bytes as f64 * 8.0 / secs / 1e6;
        let rtx = p.retransmissions as f64 / p.sent_packets as f64;
        let rtt = |v: Option<f64>| v.map_or("–".into(), |v| format!("{v:.1} ms"));
        out.push(format!(
            "  path {i}: carried {mbps:.2} Mbit/s, RTT {} (min {}), {:.2} % retransmitted",
            rtt(p.srtt_ms),
            rtt(p.min_rtt_ms),
            100.0 * rtx
        ));
        let delay = p.min_rtt_ms.unwrap_or(0.0) / 2.0;
        toml += &format!(
            "\n[[links]]\nname = \"path{i}\"\nrate = \"{:.3}Mbps\"\ndelay = \"{delay:.2}ms\"\nloss = {:.5}\n",
            mbps.max(0.001),
            rtx.min(0.5)
        );
        names.push(i);
    }
    for i in names {
        toml += &format!("\n[[paths]]\nname = \"path{i}\"\nlinks = [\"path{i}\"]\n");
    }
    out.push(
        "  reordering: measured where it happens, by the receiver (its report's reordering \
         line; with --json `reordering_latency_ms`, the key of the simulator's summary.json)"
            .into(),
    );
    out.push(
        "# the same paths in the simulator (rate: what each carried, a lower bound of its \
         capacity; delay: half the smallest RTT; loss: the retransmitted share, an upper \
         bound) — save the lines below as measured.toml and run `cmtlab run measured.toml`:"
            .into(),
    );
    Measurement {
        lines: out,
        scenario: toml,
    }
}
