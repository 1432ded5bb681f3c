//! # cmt-sim — deterministic discrete-event simulation of multipath transfers
//!
//! Runs two endpoints of [`cmt_core`] over simulated links. Everything is ordered by
//! `(time, seq)` in integer nanoseconds, and every random draw comes from a stream named
//! after its component and derived from the scenario seed ([`rng`]), so a scenario and
//! seed always give the same result.
//!
//! * [`units`], [`scenario`] — scenario files (TOML) and their validation;
//! * [`queue`], [`link`], [`loss`], [`traffic`] — the network: event queue, links, loss
//!   models, background traffic;
//! * [`world`] — the simulation loop;
//! * [`recorder`], [`bound`], [`reno_model`], [`summary`] — metrics, the two bounds
//!   (receive buffer; congestion-control-aware), outputs;
//! * [`pcap`], [`capture`], [`packet_trace`] — file formats: pcap framing of SCTP over
//!   UDP (shared with the real runtime's capture), the simulator's capture, per-packet
//!   traces.

pub mod app;
pub mod bound;
pub mod build_info;
pub mod capture;
pub mod energy;
pub mod ids;
pub mod input_file;
pub mod link;
pub mod loss;
pub mod loss_model;
pub mod packet_trace;
pub mod pcap;
pub mod queue;
pub mod recorder;
pub mod reno_model;
pub mod rng;
pub mod scenario;
pub mod summary;
pub mod trace;
pub mod traffic;
pub mod units;
pub mod world;

pub use build_info::{build, Build};
pub use scenario::{load_file, load_str, load_str_in, AlgorithmParams, Built, ScenarioError};
pub use summary::{
    fairness_names, write_outputs, Fairness, Share, Summary, FLOW_METRICS, METRICS, PATH_METRICS,
};
pub use world::{Ending, Simulation};

/// Loads, runs and summarises a scenario in one call (no progress, no files).
pub fn run_str(text: &str, overrides: &[String]) -> Result<Summary, String> {
    run_built(load_str(text, "scenario", None, overrides).map_err(|e| e.to_string())?)
}

/// Runs an already loaded scenario to its end and summarises it (no progress, no files).
pub fn run_built(built: Built) -> Result<Summary, String> {
    let mut sim = Simulation::new(built)?;
    let start = std::time::Instant::now();
    sim.try_run(&mut |_| {})?;
    Ok(Summary::of(&sim, start.elapsed().as_secs_f64()))
}
