//! Running a scenario text and reading its time-series bins per path, for the tests of
//! path management (backup paths, paths that come and go).

use cmt_sim::{load_str, Simulation};

/// Scenario `text` with `overrides`, run: the simulation and its bin width (s).
pub fn run(text: &str, overrides: &[&str]) -> (Simulation, f64) {
    let set: Vec<String> = overrides.iter().map(|o| o.to_string()).collect();
    let built = load_str(text, "t", None, &set).unwrap();
    let bin = built.bin.as_secs_f64();
    let mut sim = Simulation::new(built).unwrap();
    sim.run(&mut |_| {});
    (sim, bin)
}

/// Bytes that arrived on path `p` in the bins ending in `(from, to]`.
pub fn arrived(sim: &Simulation, bin: f64, p: usize, from: f64, to: f64) -> u64 {
    let rec = sim.recorder();
    rec.bins
        .iter()
        .enumerate()
        .filter(|(i, _)| {
            let t = (*i + 1) as f64 * bin;
            t > from + 1e-9 && t <= to + 1e-9
        })
        .map(|(_, b)| b.received_per_path[p])
        .sum()
}

/// End of the first bin after `from` in which data arrived on path `p`.
pub fn first_arrival(sim: &Simulation, bin: f64, p: usize, from: f64) -> Option<f64> {
    let rec = sim.recorder();
    rec.bins
        .iter()
        .enumerate()
        .map(|(i, b)| ((i + 1) as f64 * bin, b.received_per_path[p]))
        .find(|&(t, bytes)| t > from + 1e-9 && bytes > 0)
        .map(|(t, _)| t)
}
