//! `cmtlab recv --dir DIR`: a receiver that serves — any number of transfers, several at
//! once, each stored in DIR under the name its sender gives, until it is signalled. One
//! line per finished transfer on standard output (a JSON object with `--json`), the
//! same as a JSON line appended to `--log FILE`; a summary on standard error at the end.

use std::io::Write;
use std::path::PathBuf;

use cmt_net::transfer::serve::{self, Finished, Serve, ServeStats};

use crate::net;
use crate::transfer_args::AlgArgs;

/// The flags of a serving receiver.
#[derive(clap::Args, Clone, Debug)]
pub struct ServeArgs {
    /// Serve: store every transfer in DIR, under the name its sender gives (its file's
    /// name, or `send --name`); run until SIGINT/SIGTERM/SIGHUP. A name must be one
    /// plain file name (no `/`, no leading dot, no control characters).
    #[arg(long, value_name = "DIR", conflicts_with_all = ["out", "resume", "summary"])]
    pub dir: Option<PathBuf>,
    /// With --dir: replace a file of the same name (by default such a transfer is
    /// refused and the sender told why).
    #[arg(long)]
    pub overwrite: bool,
    /// With --dir: transfers at once; a sender beyond that is refused at once
    /// ("out of resource") and may try again later.
    #[arg(long, default_value_t = 64, value_name = "N")]
    pub max_associations: usize,
    /// With --dir: memory all transfers may hold together (their receive windows,
    /// queued datagrams and write buffers), a size as `--rbuf` takes it; receive
    /// windows shrink as it fills, keeping room for every slot (docs/runtime.md).
    #[arg(long, default_value = "512MB", value_name = "SIZE", value_parser = parse_memory)]
    pub max_memory: u64,
    /// With --dir: append one JSON line per finished transfer to FILE (the keys of
    /// `--summary`, with `time`, `peer`, `stored_as` and `error`).
    #[arg(long, value_name = "FILE")]
    pub log: Option<PathBuf>,
}

/// Serves `dir` on `listen` until signalled.
pub fn serve(
    dir: PathBuf,
    (listen, peers): (&[String], &[String]),
    s: &ServeArgs,
    a: &AlgArgs,
) -> Result<(), String> {
    if !(1..=100_000).contains(&s.max_associations) {
        return Err(format!(
            "--max-associations {}: give 1 to 100000",
            s.max_associations
        ));
    }
    let (listen, _, peers) = crate::locals::listen_and_peers(listen, peers)?;
    let mut log = match &s.log {
        Some(p) => Some(Log::open(p)?),
        None => None,
    };
    let mut serve = Serve {
        dir,
        overwrite: s.overwrite,
        max_associations: s.max_associations,
        max_memory: s.max_memory,
        stop: None,
    };
    let stats = net::runtime()?.block_on(async {
        // The signals stop the server; each association's abort is the server's to give.
        serve.stop = Some(net::notify_on_signals()?);
        let mut o = crate::transfer_args::options(a)?;
        o.receive.peers = peers;
        let socks = cmt_net::io::Sockets::bind(&listen)
            .await
            .map_err(|e| e.to_string())?;
        serve.check(&o, &socks.local_addrs())?;
        let addrs: Vec<String> = socks.local_addrs().iter().map(|l| l.to_string()).collect();
        eprintln!(
            "serving {} on {} (at most {} transfers at once, {} MiB between them)",
            serve.dir.display(),
            addrs.join(", "),
            serve.max_associations,
            serve.max_memory >> 20
        );
        let record = |f: Finished| {
            let v = transfer_json(&f, a);
            if a.json {
                sayln!("{}", serde_json::to_string(&v).unwrap_or_default());
            } else {
                sayln!("{}", transfer_line(&f, &v));
            }
            if let Some(l) = log.as_mut() {
                l.append(&v);
            }
        };
        Ok::<_, String>(serve::serve_on(socks, &serve, &o, record).await?)
    })?;
    eprintln!("{}", stats_line(&stats));
    Ok(())
}

/// `--max-memory`: bytes, or a size with its unit ("512MB", "2GB").
fn parse_memory(text: &str) -> Result<u64, String> {
    let raw = match text.trim().parse::<f64>() {
        Ok(x) => cmt_sim::units::Raw::Num(x),
        Err(_) => cmt_sim::units::Raw::Text(text.to_string()),
    };
    cmt_sim::units::parse_size(&raw).map_err(|e| format!("{text}: {e}"))
}

/// The JSON object of a finished transfer: `--summary`'s keys for a stored file, with
/// when it ended, from where, where it went and (failed) why not.
fn transfer_json(f: &Finished, a: &AlgArgs) -> serde_json::Value {
    let time = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    let mut v = match &f.result {
        Ok(r) => crate::transfer_report::summary_json(r, "recv", a, &[]),
        Err(_) => serde_json::json!({}),
    };
    v["time"] = time.into();
    v["peer"] = f.peer.to_string().into();
    v["stored_as"] = match &f.result {
        Ok(r) => r.stored_as.as_ref().map(|p| p.display().to_string()).into(),
        Err(_) => serde_json::Value::Null,
    };
    v["error"] = match &f.result {
        Ok(_) => serde_json::Value::Null,
        Err(e) => e.to_string().into(),
    };
    v
}

/// The text line of a finished transfer.
fn transfer_line(f: &Finished, v: &serde_json::Value) -> String {
    let time = v["time"].as_str().unwrap_or_default();
    match &f.result {
        Ok(r) => format!(
            "{time} stored {} from {}: {} bytes in {:.3} s = {:.3} Mbit/s, paths {}, sha256 {}",
            r.stored_as
                .as_ref()
                .map_or(String::new(), |p| p.display().to_string()),
            f.peer,
            r.bytes,
            r.seconds,
            r.goodput_mbps(),
            r.paths.len(),
            r.sha256
        ),
        Err(e) => format!("{time} failed from {}: {e}", f.peer),
    }
}

/// The summary at the end.
fn stats_line(s: &ServeStats) -> String {
    format!(
        "served: {} stored, {} failed ({} of them shed: no header, no progress, or \
         making room), {} refused (at the limit of transfers at once); {} datagrams \
         rejected, {} dropped (an association's queue full); at most {} MiB of the \
         memory budget in use",
        s.stored,
        s.failed,
        s.shed,
        s.busy,
        s.rejected,
        s.overflowed,
        s.memory_peak.div_ceil(1 << 20)
    )
}

/// The `--log` file: JSON lines, appended, each flushed to disk as it is written.
struct Log {
    path: PathBuf,
    file: std::fs::File,
    /// Writing failed once already (said on standard error then, not again).
    failed: bool,
}

impl Log {
    fn open(path: &std::path::Path) -> Result<Log, String> {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|e| format!("--log {}: {e}", path.display()))?;
        Ok(Log {
            path: path.to_path_buf(),
            file,
            failed: false,
        })
    }

    /// Appends `v` as one line. A failure is said once; serving goes on.
    fn append(&mut self, v: &serde_json::Value) {
        let line = serde_json::to_string(v).unwrap_or_default() + "\n";
        let r = self
            .file
            .write_all(line.as_bytes())
            .and_then(|()| self.file.sync_data());
        if let Err(e) = r {
            if !self.failed {
                eprintln!("--log {}: cannot write: {e}", self.path.display());
            }
            self.failed = true;
        }
    }
}
