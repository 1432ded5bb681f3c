//! A registered algorithm that fails (a Python scheduler that raises, …) fails its run:
//! the simulation stops early with the message, `run_built` returns it as an error,
//! and in a sweep the run leaves no result behind (so a resumed sweep runs it again).

use cmt_core::sched::{self, FnFactory, SchedContext, Scheduler};
use cmt_core::PathId;
use cmt_lab::sweep::{run_file, run_plan, Plan, RunOptions};
use std::sync::atomic::{AtomicU32, Ordering};

/// Round-robin over paths with room that gives up after `limit` choices.
struct GivesUp {
    chosen: u32,
    limit: u32,
}

impl Scheduler for GivesUp {
    fn select(&mut self, ctx: &SchedContext<'_>) -> Option<PathId> {
        if self.chosen == self.limit {
            cmt_core::extension_failure::fail("scheduler `gives-up`: enough");
            return None;
        }
        self.chosen += 1;
        ctx.paths.iter().find(|p| p.can_send).map(|p| p.id)
    }

    fn on_sent(&mut self, _path: PathId, _tsn: u64, _bytes: u32) {
        if cmt_core::extension_failure::failed() {
            SENT_AFTER_FAILING.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// New chunks sent after a scheduler failed (must stay 0).
static SENT_AFTER_FAILING: AtomicU32 = AtomicU32::new(0);

fn register() {
    // Several tests of this binary may register; the first one wins.
    let _ = sched::register("gives-up", "fails after 200 choices", |_| {
        Ok(FnFactory::new("gives-up", |_| {
            Box::new(GivesUp {
                chosen: 0,
                limit: 200,
            })
        }))
    });
}

const SCENARIO: &str = r#"
name = "two-paths"
seed = 1
duration = "60s"
[association]
scheduler = "gives-up"
[[links]]
name = "a"
rate = "10Mbps"
delay = "10ms"
[[links]]
name = "b"
rate = "5Mbps"
delay = "30ms"
[[paths]]
name = "pa"
links = ["a"]
[[paths]]
name = "pb"
links = ["b"]
"#;

#[test]
fn the_simulation_stops_early_and_reports_the_failure() {
    register();
    let built = cmt_sim::load_str(SCENARIO, "t", None, &[]).unwrap();
    let mut sim = cmt_sim::Simulation::new(built).unwrap();
    assert_eq!(sim.run(&mut |_| {}), cmt_sim::Ending::ExtensionFailed);
    assert_eq!(
        sim.extension_failure(),
        Some("scheduler `gives-up`: enough")
    );
    // After the failure no new data goes out: every new chunk takes a choice, and the
    // scheduler made 200, so at most 200 packets carried new data.
    assert_eq!(SENT_AFTER_FAILING.load(Ordering::Relaxed), 0);
    let failed = cmt_sim::Summary::of(&sim, 0.0);
    let new: u64 = failed
        .paths
        .iter()
        .map(|p| p.sent_packets.saturating_sub(p.retransmissions))
        .sum();
    assert!(new <= 200, "{new} packets of new data");
    let e = cmt_sim::run_str(SCENARIO, &[]).unwrap_err();
    assert_eq!(e, "scheduler `gives-up`: enough");
    // Nothing is left over for the next run on this thread.
    assert!(!cmt_core::extension_failure::failed());
}

#[test]
fn a_failed_run_of_a_sweep_writes_no_result() {
    register();
    let dir = std::env::temp_dir().join(format!("cmtlab-extfail-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("base.toml"), SCENARIO).unwrap();
    let sweep = r#"
base = "base.toml"
seeds = 1
metrics = ["goodput_mbps"]
[set]
duration = "5s"
[[axes]]
key = "association.scheduler"
values = ["round-robin", "gives-up"]
"#;
    let plan = Plan::from_text(sweep, "sweep", "s", &dir, |_| {}).unwrap();
    let out = dir.join("out");
    let opts = RunOptions {
        jobs: 1,
        shard: None,
        out: out.clone(),
    };
    let e = run_plan(&plan, &opts, &|_, _| {}).unwrap_err().to_string();
    assert!(e.contains("scheduler `gives-up`: enough"), "{e}");
    let failed = &plan.runs[1];
    assert!(e.contains(&failed.id), "{e}");
    assert!(!run_file(&out, &failed.id).exists());
    let _ = std::fs::remove_dir_all(&dir);
}
