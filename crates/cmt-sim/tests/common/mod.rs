//! What the simulator's integration tests share: running a scenario given as text.

use cmt_sim::{load_str, Simulation, Summary};

/// Runs the scenario `text` (named `name` in errors) to its end and summarises it.
pub fn run(text: &str, name: &str) -> Summary {
    let built = load_str(text, name, None, &[]).unwrap();
    let mut sim = Simulation::new(built).unwrap();
    sim.run(&mut |_| {});
    Summary::of(&sim, 0.0)
}
