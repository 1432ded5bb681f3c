//! The cmtlab command line plus this crate's `fixed-share` scheduler and `outage` loss
//! model: `cargo run -p custom-scheduler -- run examples/custom-scheduler/scenarios/split.toml`.

use custom_scheduler::{FixedShare, Outage};

fn main() -> std::process::ExitCode {
    cmtlab::Cmtlab::new()
        .scheduler(
            "fixed-share",
            "a fixed share of new chunks on the first path (example crate)",
            FixedShare::from_params,
        )
        .loss_model(
            "outage",
            "every packet lost during periodic outages (example crate)",
            Outage::from_params,
        )
        .main()
}
