//! Sweep throughput: the same 60-run sweep of the demo scenario with 1 and 2 worker
//! threads; prints wall times and the speed-up. `cargo bench -p cmt-lab`

use std::time::Instant;

use cmt_lab::sweep::{run_plan, Plan, RunOptions};

fn main() {
    let dir = std::env::temp_dir().join(format!("cmtlab-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let demo = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/demo.toml");
    let sweep = format!(
        "name = \"bench\"\nbase = \"{demo}\"\nseeds = 20\n[[axes]]\nkey = \"receiver.rbuf\"\nvalues = [\"32KB\", \"64KB\", \"128KB\"]\n"
    );
    let file = dir.join("bench.toml");
    std::fs::write(&file, sweep).unwrap();
    let plan = Plan::load(&file).expect("bench sweep loads");
    let mut walls = Vec::new();
    for jobs in [1, 2] {
        let out = dir.join(format!("j{jobs}"));
        let _ = std::fs::remove_dir_all(&out);
        let t = Instant::now();
        run_plan(
            &plan,
            &RunOptions {
                jobs,
                shard: None,
                out: out.clone(),
            },
            &|_, _| {},
        )
        .expect("runs");
        cmt_lab::finalize(&plan, &out, &out).expect("finalizes");
        let wall = t.elapsed().as_secs_f64();
        println!("{} runs with --jobs {jobs}: {wall:.3} s", plan.runs.len());
        walls.push(wall);
    }
    println!("speed-up with 2 jobs: {:.2}x", walls[0] / walls[1]);
    let _ = std::fs::remove_dir_all(&dir);
}
