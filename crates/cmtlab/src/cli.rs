//! The command line: arguments and what each subcommand calls.

use std::path::PathBuf;

use clap::{Parser, Subcommand};

use crate::{net, run, sweep};

/// Concurrent multipath transfer lab: simulate CMT schedulers, retransmission policies
/// and congestion control over heterogeneous paths.
#[derive(Parser)]
#[command(name = "cmtlab", version, about, after_help = algorithms_help())]
pub(crate) struct Cli {
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
        /// Write summary.json, timeseries.csv, paths.csv and the run's figures (SVG and
        /// PNG) into this directory.
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
        /// Capture the association's packets to this pcap file (SCTP over UDP over
        /// IPv4, simulated time; Wireshark and tshark decode it).
        #[arg(long, value_name = "FILE")]
        pcap: Option<PathBuf>,
        /// Write the run's summary as JSON (what `--out` puts in summary.json) to this
        /// file, without the CSV files and figures.
        #[arg(long, value_name = "FILE")]
        json: Option<PathBuf>,
        /// Write a per-packet trace to this file: one row per send, retransmission,
        /// drop (with its cause), arrival, delivery, SACK and timeout; CSV, Parquet for
        /// a `.parquet` name (built with `--features parquet`), qlog (JSON-SEQ, for
        /// qvis) for a `.qlog` or `.sqlog` name. Columns in docs/metrics.md.
        #[arg(long, value_name = "FILE")]
        trace: Option<PathBuf>,
    },
    /// Run a sweep (grid of scenario variations × seeds) and aggregate it.
    Sweep {
        /// Sweep file (TOML).
        file: PathBuf,
        /// Parallel runs (default: the number of CPUs).
        #[arg(long)]
        jobs: Option<usize>,
        /// Output directory (default: `out/<sweep name>`).
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
        /// Run only runs with index ≡ I (mod N), e.g. `--shard 0/3`.
        #[arg(long, value_name = "I/N")]
        shard: Option<String>,
    },
    /// Reproduce a study: run its sweeps and check its claims.
    Reproduce {
        /// Study name (a folder under scenarios/studies/) or a study folder.
        #[arg(required_unless_present = "all", conflicts_with = "all")]
        study: Option<String>,
        /// Every study of the studies folder, in name order, each into `<out>/<study>`
        /// (default `out/<study>`), with the wall time of each and of all.
        #[arg(long)]
        all: bool,
        /// Fewer seeds and shorter runs (minutes on two cores).
        #[arg(long)]
        quick: bool,
        /// Also run the grid points the study's `[real]` section names over real sockets
        /// (the real runtime through loopback relays), next to the simulated ones.
        #[arg(long)]
        real: bool,
        /// Parallel runs (default: the number of CPUs).
        #[arg(long)]
        jobs: Option<usize>,
        /// Output directory (default: `out/<study>` or `out/<study>-quick`; with `--all`,
        /// the folder the studies' folders go into, default `out`).
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
        /// Where to look for studies by name (default: `$CMTLAB_STUDIES`, then
        /// `scenarios/studies` here, then that of the checkout cmtlab was built from).
        #[arg(long, value_name = "DIR")]
        studies: Option<PathBuf>,
    },
    /// List every algorithm name the scenario keys accept, with a line on each
    /// (including those this program registered).
    Algorithms,
    /// Re-draw the figures (and the report of a sweep) from saved results.
    Plot {
        /// A `cmtlab run --out` or `cmtlab sweep` output directory.
        dir: PathBuf,
    },
    /// Send a file over several real paths (SCTP packets in UDP, RFC 6951).
    #[command(after_help = algorithms_help())]
    Send {
        /// The file, or `-` for standard input (a pipe: `tar c DIR | cmtlab send - …`);
        /// a FIFO or `/dev/stdin` is sent as a stream too. The receiver confirms a
        /// stream's length and SHA-256 like a file's. Not with `--measure`.
        #[arg(required_unless_present = "measure", conflicts_with = "measure")]
        file: Option<PathBuf>,
        /// Measure the paths instead of sending a file: generated data for SECONDS
        /// (the receiver runs `recv` as usual, `--out /dev/null` to keep nothing), then
        /// per path what it carried, its RTTs and retransmitted share, and a scenario
        /// that puts the same paths into the simulator.
        #[arg(long, value_name = "SECONDS")]
        measure: Option<f64>,
        /// With `--measure`: fit a scenario of the paths to the measurement — this
        /// end's packet trace and the arrival times the receiver returns with its SACKs
        /// — and write it to FILE, with the two traces beside it (FILE's name with
        /// `.tx.csv` and `.rx.csv`); then predict what round-robin, minRTT, the
        /// linux-mptcp preset, DB-CMT's and BLEST's schedulers would each do on these
        /// paths (docs/calibrate.md).
        #[arg(long, value_name = "FILE", requires = "measure")]
        calibrate: Option<PathBuf>,
        /// With `--calibrate`: the file size the predictions move.
        #[arg(
            long,
            value_name = "SIZE",
            requires = "calibrate",
            default_value = "20MB"
        )]
        predict: String,
        /// Local addresses, one per path, e.g. `127.0.1.1:0,127.0.1.2:0`, or interface
        /// names (`wlan0,eth1`: each one's first IPv4 address), or `auto` (every
        /// interface with a usable IPv4 address, in name order, but loopback, virtual
        /// ones — docker*, br-*, virbr*, veth*, vnet*, vmnet*, vboxnet*, tun*, tap*, wg*,
        /// tailscale* — and `--exclude`; an interface that appears during the transfer
        /// is adopted as a new path too). A path named by its interface follows it: it
        /// stops carrying data the moment the interface loses its address and is used
        /// again, verified, when it gets one; the receiver is told of each change (RFC
        /// 5061 ADD-IP / DEL-IP). An interface may be without an address at the start
        /// (all but the first): its path starts when it gets one.
        #[arg(long, value_delimiter = ',', required = true)]
        local: Vec<String>,
        /// Interfaces `--local auto` leaves out, e.g. `--exclude eth1`.
        #[arg(long, value_delimiter = ',')]
        exclude: Vec<String>,
        /// The receiver's addresses, in the same order, e.g. `127.0.0.1:9899,127.0.0.2:9899`;
        /// one address: every path goes to it (the receiver pairs each of our addresses
        /// with one of its own).
        #[arg(long, value_delimiter = ',', required = true)]
        remote: Vec<String>,
        /// Backup paths, each named by its `--local` entry (address or interface) or
        /// its `--remote` address: they carry data only while no other path works
        /// (MPTCP's backup flag), e.g. a metered LTE interface `--backup wwan0`.
        #[arg(long, value_delimiter = ',')]
        backup: Vec<String>,
        /// The name a serving receiver (`recv --dir`) stores the data under (default:
        /// the file's own name; a stream from standard input needs one there).
        #[arg(long, value_name = "NAME", conflicts_with = "measure")]
        name: Option<String>,
        #[command(flatten)]
        algs: crate::transfer_args::AlgArgs,
    },
    /// Receive one file over several real paths — or, with `--dir`, serve: store any
    /// number of transfers, several at once, under the names their senders give.
    #[command(after_help = algorithms_help())]
    Recv {
        /// Addresses to listen on, one per path, e.g. `127.0.0.1:9899,127.0.0.2:9899`,
        /// or interfaces with the port (`eth0:9899`), which the receiver follows: when
        /// one's address changes it moves there and tells the sender (RFC 5061).
        #[arg(long, value_delimiter = ',', required = true)]
        listen: Vec<String>,
        /// Where the file goes; `-`: standard output, written as it arrives (the
        /// report then goes to standard error; a failed transfer leaves a truncated
        /// stream and a non-zero exit status). Or `--dir` to serve many.
        #[arg(long, value_name = "FILE", required_unless_present = "dir")]
        out: Option<PathBuf>,
        /// Accept an association only from these IP addresses, e.g. `127.0.1.1,127.0.1.2`
        /// (default: anyone).
        #[arg(long, value_delimiter = ',')]
        peer: Vec<String>,
        #[command(flatten)]
        serve: crate::serve::ServeArgs,
        #[command(flatten)]
        algs: crate::transfer_args::AlgArgs,
    },
    /// Impair real paths in userspace with the simulator's link model (runs until
    /// interrupted, then prints per path what it forwarded and dropped, by cause, on
    /// standard error). A path carries any number of senders (associations): each
    /// sender's address and port gets a port of its own towards the target, as behind
    /// a NAT, expiring when idle; they share the path's rate and queue.
    Relay {
        /// One per path: `LISTEN>TARGET[,rate=R][,delay=D][,jitter=D][,jitter_model=half-normal][,loss=P][,loss_direction=forward][,queue=N|unlimited][,gilbert=markov1pct][,trace=FILE][,change=T/KEY=V…][,idle=D][,senders=N]`;
        /// `change=8s/delay=200ms` or `change=5s/state=down` changes the path at T;
        /// `idle` (60s) ends a sender's mapping after that long without a datagram;
        /// `senders` (256) bounds the mappings at once (datagrams of more are refused).
        #[arg(long = "path", required = true)]
        paths: Vec<String>,
        /// Seed of the loss and jitter streams.
        #[arg(long, default_value_t = 1)]
        seed: u64,
    },
    /// Fit a scenario of real paths to the packet traces of a transfer over them (the
    /// sender's and the receiver's `--trace FILE.csv`): per path its capacity, one-way
    /// delay, queue and random loss, with their uncertainty (docs/calibrate.md). Run the
    /// scenario with `cmtlab run` to predict what each scheduler does on these paths.
    Calibrate {
        /// The transfer's traces, CSV: the sender's and the receiver's (either order), or
        /// one simulated run's.
        #[arg(required = true)]
        traces: Vec<PathBuf>,
        /// Write the scenario here (else print it).
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
        /// Also write each path's capacity as a Mahimahi trace beside the scenario
        /// (`NAME.pathI.trace`: its busy periods as measured, the fitted rate between
        /// them), and use it in the scenario.
        #[arg(long)]
        mahimahi: bool,
        /// The scheduler the scenario names (else none: the simulator's default,
        /// round-robin, and a preset given later chooses its own).
        #[arg(long, value_name = "NAME")]
        scheduler: Option<String>,
        /// The receiver's buffer in the scenario, bytes (the runtime's default).
        #[arg(long, default_value_t = 4 << 20, value_name = "BYTES")]
        rbuf: u64,
        /// Bytes below SCTP per packet: 28 for the runtime's IPv4 + UDP, 48 over IPv6,
        /// 20 for a simulated run's trace (its default `association.ip_header`).
        #[arg(long, default_value_t = 28, value_name = "BYTES")]
        ip_header: u64,
        /// Then predict with the simulator what round-robin, minRTT, the linux-mptcp
        /// preset, DB-CMT's and BLEST's schedulers would each do moving a file of this
        /// size over these paths (e.g. `50MB`; three seeds each).
        #[arg(long, value_name = "SIZE")]
        predict: Option<String>,
    },
    /// Combine the output directories of a sharded sweep.
    Merge {
        /// Shard output directories.
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
        /// Where the merged results go.
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
    },
}

/// Runs the subcommand `cli` names.
pub(crate) fn dispatch(cli: Cli) -> Result<(), String> {
    match cli.command {
        Command::Run {
            file,
            set,
            out,
            pcap,
            json,
            trace,
        } => run::run(
            &file,
            &set,
            run::Outputs {
                out: out.as_deref(),
                pcap: pcap.as_deref(),
                json: json.as_deref(),
                trace: trace.as_deref(),
            },
        ),
        Command::Sweep {
            file,
            jobs,
            out,
            shard,
        } => sweep::sweep(&file, jobs, out, shard.as_deref()),
        Command::Merge { dirs, out } => sweep::merge(&dirs, &out),
        Command::Calibrate {
            traces,
            out,
            mahimahi,
            scheduler,
            rbuf,
            ip_header,
            predict,
        } => crate::calibrate::run(&crate::calibrate::Args {
            traces: &traces,
            out: out.as_deref(),
            mahimahi,
            scheduler: scheduler.as_deref(),
            rbuf,
            ip_header,
            predict: predict.as_deref(),
        }),
        Command::Send {
            file,
            measure,
            calibrate,
            predict,
            local,
            exclude,
            remote,
            backup,
            name,
            algs,
        } => {
            let what = match (file, measure) {
                (_, Some(secs)) => net::What::Measure(
                    secs,
                    calibrate.map(|out| crate::calibrate::Calibrate { out, predict }),
                ),
                (Some(f), None) => net::What::File(f, name),
                (None, None) => {
                    return Err("give a file, - for standard input, or --measure SECONDS".into())
                }
            };
            net::send(&what, (&local, &exclude), &remote, &backup, &algs)
        }
        Command::Recv {
            listen,
            out,
            peer,
            serve,
            algs,
        } => match (serve.dir.clone(), out) {
            (Some(dir), _) => crate::serve::serve(dir, (&listen, &peer), &serve, &algs),
            (None, _) if serve.overwrite || serve.log.is_some() => {
                Err("--overwrite and --log apply to a serving receiver: give --dir DIR".into())
            }
            (None, Some(out)) => net::recv(&listen, &out, &peer, &algs),
            (None, None) => Err("give --out FILE, or --dir DIR to serve".into()),
        },
        Command::Relay { paths, seed } => net::relay(&paths, seed),
        Command::Plot { dir } => sweep::plot(&dir),
        Command::Algorithms => {
            list_algorithms();
            Ok(())
        }
        Command::Reproduce {
            study,
            all,
            quick,
            real,
            jobs,
            out,
            studies,
        } => {
            let mode = sweep::StudyMode { quick, real, jobs };
            match study {
                Some(study) if !all => sweep::reproduce(&study, studies.as_deref(), mode, out),
                _ => sweep::reproduce_all(studies.as_deref(), mode, out),
            }
        }
    }
}

/// The algorithm names every registry knows (built in and registered), for `--help`.
fn algorithms_help() -> String {
    let wrap = |names: Vec<String>| names.join(", ");
    format!(
        "Algorithms (scenario keys association.scheduler / .rtx / .cc, links[].loss_model; \
         send and recv --scheduler / --rtx / --cc):\n  schedulers: {}\n  retransmission \
         policies: {}\n  congestion control: {}\n  loss models: {}\n`cmtlab algorithms` \
         describes each; docs/algorithms.md gives their sources.",
        wrap(cmt_core::sched::names()),
        wrap(cmt_core::rtx::names()),
        wrap(cmt_core::cc::names()),
        wrap(cmt_sim::loss_model::REGISTRY.names())
    )
}

/// `cmtlab algorithms`: every table, one line per name.
fn list_algorithms() {
    fn table<F: ?Sized>(t: &cmt_core::registry::Table<F>) {
        sayln!("{}:", t.kind());
        for e in t.entries() {
            let mut names = e.name.clone();
            for a in &e.aliases {
                names.push_str(&format!(" ({a})"));
            }
            let ext = if e.extension { " [registered]" } else { "" };
            sayln!("  {names:<24} {}{ext}", e.summary);
        }
    }
    table(&cmt_core::sched::REGISTRY.snapshot());
    table(&cmt_core::rtx::REGISTRY.snapshot());
    table(&cmt_core::cc::REGISTRY.snapshot());
    table(&cmt_sim::loss_model::REGISTRY.snapshot());
}
