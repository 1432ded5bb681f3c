//! `cmtlab calibrate`: a scenario of real paths from the packet traces of a transfer
//! over them (the sender's and the receiver's `--trace FILE.csv`), for `cmtlab run` to
//! predict what the paths will do with any scheduler (cmt_lab::calibrate; method and
//! limits in docs/calibrate.md). `send --measure --calibrate` does it from the sending
//! end alone, with the arrival times the receiver returns.

use std::path::{Path, PathBuf};

use cmt_lab::calibrate::{calibrate as fit, mahimahi, Setup};

/// What `cmtlab calibrate` was given.
pub(crate) struct Args<'a> {
    pub traces: &'a [PathBuf],
    pub out: Option<&'a Path>,
    pub mahimahi: bool,
    pub scheduler: Option<&'a str>,
    pub rbuf: u64,
    pub ip_header: u64,
    /// `--predict SIZE`: the file size to predict each scheduler's goodput for.
    pub predict: Option<&'a str>,
}

/// What `--predict` runs: a label and the scenario overrides that choose it.
const PREDICTED: [(&str, &str); 5] = [
    ("round-robin (CMT)", "association.scheduler=\"round-robin\""),
    ("minrtt", "association.scheduler=\"minrtt\""),
    ("linux-mptcp preset", "association.preset=\"linux-mptcp\""),
    ("db-cmt", "association.scheduler=\"db-cmt\""),
    ("blest", "association.scheduler=\"blest\""),
];

/// Seeds per prediction.
const SEEDS: u64 = 3;

/// Each of [`PREDICTED`] on the scenario `file` moving `size`: mean goodput over
/// [`SEEDS`] seeds and its range, one line each.
fn predict(file: &Path, size: &str) -> Result<Vec<String>, String> {
    let mut out = vec![format!(
        "predicted goodput moving {size} (the simulator, {SEEDS} seeds: mean, lowest–highest):"
    )];
    for (label, set) in PREDICTED {
        let mut g = Vec::new();
        for seed in 1..=SEEDS {
            let sets = [
                set.to_string(),
                format!("file_size=\"{size}\""),
                format!("seed={seed}"),
            ];
            let built = cmt_sim::load_file(file, &sets).map_err(|e| e.to_string())?;
            let mut sim =
                cmt_sim::Simulation::new(built).map_err(|e| format!("{}: {e}", file.display()))?;
            sim.try_run(&mut |_| {})
                .map_err(|why| format!("{}: {why}", file.display()))?;
            g.push(cmt_sim::Summary::of(&sim, 0.0).goodput_mbps);
        }
        let mean = g.iter().sum::<f64>() / g.len() as f64;
        let (lo, hi) = g
            .iter()
            .fold((f64::MAX, f64::MIN), |(l, h), x| (l.min(*x), h.max(*x)));
        out.push(format!("  {label:<20} {mean:8.2} Mbit/s ({lo:.2}–{hi:.2})"));
    }
    Ok(out)
}

/// `send --measure --calibrate FILE --predict SIZE`.
pub struct Calibrate {
    /// Where the scenario goes (the traces go beside it).
    pub out: PathBuf,
    /// The file size the predictions move.
    pub predict: String,
}

/// `FILE`'s name with its extension replaced by `ext` (`paths.toml` → `paths.rx.csv`).
fn beside(out: &Path, ext: &str) -> PathBuf {
    let stem = out
        .file_stem()
        .map_or("calibrated".into(), |s| s.to_string_lossy().into_owned());
    out.with_file_name(format!("{stem}.{ext}"))
}

/// The sender's trace a calibration from a measurement reads: `--trace`, else beside
/// the scenario.
pub(crate) fn sender_trace(trace: Option<&Path>, out: &Path) -> PathBuf {
    trace.map_or_else(|| beside(out, "tx.csv"), Path::to_path_buf)
}

/// Readies a measurement's options for `--calibrate`: the receiver is asked for its
/// arrival times and this end writes its packet trace (CSV, which the fit reads). What
/// would only fail after the measurement is checked now.
pub(crate) fn prepare(
    o: &mut cmt_net::transfer::Options,
    c: &Calibrate,
    json: bool,
) -> Result<(), String> {
    let out = &c.out;
    cmt_sim::units::parse_size(&cmt_sim::units::Raw::Text(c.predict.clone()))
        .map_err(|e| format!("--predict {}: {e}", c.predict))?;
    let dir = out.parent().filter(|d| !d.as_os_str().is_empty());
    if dir.is_some_and(|d| !d.is_dir()) {
        return Err(format!("--calibrate {}: no such directory", out.display()));
    }
    if json {
        return Err(
            "--calibrate prints its fit and predictions as text: not with --json \
                    (the written scenario keeps the fit)"
                .into(),
        );
    }
    let tx = sender_trace(o.outputs.trace.as_deref(), out);
    if cmt_sim::packet_trace::Format::of(&tx) != cmt_sim::packet_trace::Format::Csv {
        return Err(format!(
            "--trace {}: --calibrate reads the trace as CSV: give a .csv name",
            tx.display()
        ));
    }
    o.outputs.trace = Some(tx);
    o.send.return_arrivals = true;
    Ok(())
}

/// After a measurement (`send --measure --calibrate`): the receiver's trace rebuilt
/// from the arrival times it returned, written beside the scenario, then the fit and
/// the predictions, as `cmtlab calibrate` gives them. `tx`: this end's trace.
pub(crate) fn from_measurement(
    r: &cmt_net::transfer::Report,
    c: &Calibrate,
    tx: &Path,
    rbuf: u32,
) -> Result<(), String> {
    let Some(recs) = &r.arrivals else {
        return Err(
            "--calibrate: the receiver returned no arrival times (a cmtlab receiver \
                    from before ARRIVALS); run it with --trace FILE.csv and give both traces \
                    to `cmtlab calibrate`"
                .into(),
        );
    };
    let csv = cmt_net::transfer::receiver_trace_csv(recs);
    let rx = beside(&c.out, "rx.csv");
    cmt_lab::sweep::write_atomic(&rx, csv.as_bytes())
        .map_err(|e| format!("{}: {e}", rx.display()))?;
    let missing = recs.last().map_or(0, |l| l.seq + 1 - recs.len() as u64);
    sayln!(
        "arrival times returned by the receiver: {} packets ({missing} lost with their \
         SACKs); traces {} and {}",
        recs.len(),
        tx.display(),
        rx.display()
    );
    let ipv6 = r.routes.first().is_some_and(|(_, remote)| remote.is_ipv6());
    run(&Args {
        traces: &[tx.to_path_buf(), rx],
        out: Some(&c.out),
        mahimahi: false,
        scheduler: None,
        rbuf: rbuf as u64,
        ip_header: if ipv6 { 48 } else { 28 },
        predict: Some(&c.predict),
    })
}

/// Fits the paths and prints (or writes) the scenario.
pub(crate) fn run(a: &Args<'_>) -> Result<(), String> {
    if (a.mahimahi || a.predict.is_some()) && a.out.is_none() {
        return Err(
            "--mahimahi and --predict work on the written scenario: give --out FILE".into(),
        );
    }
    let files: Vec<&Path> = a.traces.iter().map(PathBuf::as_path).collect();
    let setup = Setup {
        ip_header: a.ip_header,
        rbuf: a.rbuf,
        scheduler: a.scheduler.map(str::to_string),
        ..Setup::default()
    };
    let cal = fit(&files, setup)?;
    let Some(out) = a.out else {
        say!("{}", cal.scenario(None));
        return Ok(());
    };
    let mut names = Vec::new();
    if a.mahimahi {
        for (i, p) in cal.paths.iter().enumerate() {
            // A path that never queued has no capacity to trace (nor a rate: the
            // scenario's stands in, and says so).
            if p.rate_bps.is_none() {
                names.push(String::new());
                continue;
            }
            let file = beside(out, &format!("path{i}.trace"));
            cmt_lab::sweep::write_atomic(&file, mahimahi(p).as_bytes())
                .map_err(|e| format!("{}: {e}", file.display()))?;
            // The scenario names it relative to itself: they are side by side.
            names.push(
                file.file_name()
                    .unwrap_or_default()
                    .to_string_lossy()
                    .into_owned(),
            );
        }
    }
    let text = cal.scenario(a.mahimahi.then_some(&names[..]));
    cmt_lab::sweep::write_atomic(out, text.as_bytes())
        .map_err(|e| format!("{}: {e}", out.display()))?;
    for l in cal.lines() {
        sayln!("{l}");
    }
    sayln!("scenario written to {}", out.display());
    if let Some(size) = a.predict {
        for l in predict(out, size)? {
            sayln!("{l}");
        }
    }
    Ok(())
}
