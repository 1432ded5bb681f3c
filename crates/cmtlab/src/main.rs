//! `cmtlab` — the command-line program.

mod run;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Concurrent multipath transfer lab: simulate CMT schedulers, retransmission policies
/// and congestion control over heterogeneous paths.
#[derive(Parser)]
#[command(name = "cmtlab", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Simulate one scenario and print its summary table.
    Run {
        /// Scenario file (TOML).
        file: PathBuf,
        /// Override a scenario key by dotted path, e.g. `receiver.rbuf=32KB` or
        /// `links.wifi-access.rate=5Mbps` (repeatable).
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// Write summary.json, timeseries.csv and paths.csv into this directory.
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run { file, set, out } => run::run(&file, &set, out.as_deref()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}
