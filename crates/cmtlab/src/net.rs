//! `cmtlab send` / `cmtlab recv`: real transfers over UDP paths.

use std::net::SocketAddr;
use std::path::Path;

use cmt_net::relay::RelayStats;
use cmt_net::transfer::{self, Options};

use crate::transfer_args::{options, AlgArgs};
use crate::transfer_report::{finish, open_summary, Finish};

fn parse(list: &[String], flag: &str) -> Result<Vec<SocketAddr>, String> {
    list.iter()
        .map(|a| {
            a.trim()
                .parse()
                .map_err(|_| format!("--{flag}: `{a}` is not an address like 127.0.0.1:9899"))
        })
        .collect()
}

pub(crate) fn runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the runtime: {e}"))
}

/// Ctrl-C (SIGINT), SIGTERM and SIGHUP abort the association: the peer gets an ABORT
/// ("User-Initiated Abort") instead of a silent end, and a receiver removes its
/// temporary file. Call inside the runtime.
pub(crate) fn abort_on_signals(mut o: Options) -> Result<Options, String> {
    o.abort = Some(notify_on_signals()?);
    Ok(o)
}

/// A notification given when Ctrl-C (SIGINT), SIGTERM or SIGHUP arrives. Call inside
/// the runtime.
pub(crate) fn notify_on_signals() -> Result<std::sync::Arc<tokio::sync::Notify>, String> {
    let quit = quit_signal()?;
    let n = std::sync::Arc::new(tokio::sync::Notify::new());
    let n2 = n.clone();
    tokio::spawn(async move {
        quit.await;
        n2.notify_one();
    });
    Ok(n)
}

/// Which paths `--backup` names: each entry must be one of the `--local` entries as
/// written, the address one stands for (with or without its port), or a `--remote`
/// address (with or without its port).
fn parse_backups(
    list: &[String],
    local_entries: &[String],
    local: &[SocketAddr],
    remote: &[SocketAddr],
) -> Result<Vec<bool>, String> {
    let n = local.len().min(remote.len());
    let mut backups = vec![false; n];
    for e in list.iter().map(|e| e.trim()) {
        let names = |i: usize| {
            let (l, r) = (local[i], remote[i]);
            local_entries.get(i).is_some_and(|x| x.trim() == e)
                || [l, r]
                    .iter()
                    .any(|a| a.to_string() == e || a.ip().to_string() == e)
        };
        let i = (0..n).find(|&i| names(i)).ok_or_else(|| {
            format!("--backup: `{e}` is none of the paths' --local entries or --remote addresses")
        })?;
        backups[i] = true;
    }
    if !backups.is_empty() && backups.iter().all(|&b| b) {
        return Err("--backup: every path is a backup; leave at least one regular path".into());
    }
    Ok(backups)
}

/// What `cmtlab send` sends.
pub enum What {
    /// A file, or `-` for standard input, and the name to store it under (`--name`).
    File(std::path::PathBuf, Option<String>),
    /// Generated data for this many seconds (`--measure`), and what to calibrate from
    /// it (`--calibrate`).
    Measure(f64, Option<crate::calibrate::Calibrate>),
}

/// `cmtlab send`; `locals`: the `--local` entries and the interfaces `auto` leaves out.
pub fn send(
    what: &What,
    (local_entries, exclude): (&[String], &[String]),
    remote: &[String],
    backup: &[String],
    a: &AlgArgs,
) -> Result<(), String> {
    let (local, interfaces): (Vec<SocketAddr>, Vec<Option<String>>) =
        crate::locals::parse_locals(local_entries, exclude, "--local")?
            .into_iter()
            .unzip();
    let mut remote = parse(remote, "remote")?;
    if remote.len() == 1 {
        // One receiver address: every path goes to it.
        remote = vec![remote[0]; local.len()];
    }
    // Each path by the interface that named it, or its address.
    let names: Vec<String> = (0..local.len())
        .map(|i| {
            interfaces[i]
                .clone()
                .unwrap_or_else(|| local[i].to_string())
        })
        .collect();
    let backups = parse_backups(backup, &names, &local, &remote)?;
    let summary = open_summary(a)?;
    let cpu = cpu_time::ProcessTime::now();
    let r = runtime()?.block_on(async {
        let mut o = abort_on_signals(options(a)?)?;
        o.send.backups = backups.clone();
        o.interfaces = interfaces.clone();
        o.send.name = name_of(what)?;
        // `auto` also takes interfaces that appear during the transfer.
        let auto = |e: &String| e.trim() == "auto" || e.trim().starts_with("auto:");
        o.send.adopt = local_entries.iter().any(auto).then(|| exclude.to_vec());
        if let What::Measure(_, Some(c)) = what {
            crate::calibrate::prepare(&mut o, c, a.json)?;
        }
        Ok::<_, String>(transfer::send_source(&local, &remote, source(what)?, &o).await?)
    })?;
    let how = match what {
        What::Measure(..) => Finish::Measured,
        What::File(..) => Finish::Plain,
    };
    finish(&r, ("sent", &backups), a, summary, cpu, how)?;
    match what {
        What::Measure(_, Some(c)) => {
            let tx = crate::calibrate::sender_trace(a.trace.as_deref(), &c.out);
            crate::calibrate::from_measurement(&r, c, &tx, a.rbuf)
        }
        _ => Ok(()),
    }
}

/// The source `what` names (checked before anything is bound).
fn source(what: &What) -> Result<cmt_net::source::Source, String> {
    use cmt_net::source::Source;
    Ok(match what {
        What::File(f, _) if f.as_os_str() == "-" => {
            Source::stream(std::io::stdin(), "standard input")
        }
        What::File(f, _) => Source::file(f)?,
        What::Measure(s, _) if !(0.1..=3600.0).contains(s) => {
            return Err(format!("--measure {s}: give 0.1 to 3600 seconds"))
        }
        What::Measure(s, _) => Source::generated(*s),
    })
}

/// The name the data goes under at a serving receiver: `--name` (checked as the
/// receiver will), or the file's own name; none for a stream or a measurement.
fn name_of(what: &What) -> Result<Option<String>, String> {
    match what {
        What::File(_, Some(n)) => {
            cmt_net::transfer::serve::names::check(n).map_err(|e| format!("--name: {e}"))?;
            Ok(Some(n.clone()))
        }
        What::File(f, None) if f.as_os_str() != "-" => {
            Ok(f.file_name().and_then(|n| n.to_str()).map(str::to_string))
        }
        _ => Ok(None),
    }
}

pub fn recv(listen: &[String], out: &Path, peers: &[String], a: &AlgArgs) -> Result<(), String> {
    let to_stdout = cmt_net::sink::is_stdout(out);
    if to_stdout && a.json {
        return Err(
            "--json prints the report on standard output, which --out - fills with the data; \
             write it with --summary FILE instead"
                .into(),
        );
    }
    let (listen, interfaces, peers) = crate::locals::listen_and_peers(listen, peers)?;
    let summary = open_summary(a)?;
    let cpu = cpu_time::ProcessTime::now();
    let r = runtime()?.block_on(async {
        let mut o = abort_on_signals(options(a)?)?;
        o.receive.peers = peers;
        o.interfaces = interfaces;
        Ok::<_, String>(transfer::receive(&listen, out, &o).await?)
    })?;
    let how = if to_stdout {
        Finish::ToStderr
    } else {
        Finish::Plain
    };
    finish(&r, ("received", &[]), a, summary, cpu, how)
}

pub fn relay(paths: &[String], seed: u64) -> Result<(), String> {
    let specs = paths
        .iter()
        .map(|p| cmt_net::relay::parse_spec(p).map_err(|e| format!("--path {p}: {e}")))
        .collect::<Result<Vec<_>, _>>()?;
    runtime()?.block_on(async move {
        let ended = quit_signal()?;
        let mut tasks = tokio::task::JoinSet::new();
        let mut counted = Vec::new();
        for (i, s) in specs.into_iter().enumerate() {
            sayln!("relaying {} → {}", s.listen, s.target);
            let stats = std::sync::Arc::new(std::sync::Mutex::new(RelayStats::default()));
            counted.push((format!("{} → {}", s.listen, s.target), stats.clone()));
            tasks.spawn(cmt_net::relay::run_path_counted(s, seed + i as u64, stats));
        }
        let failed = tokio::select! {
            r = tasks.join_next() => match r {
                Some(Ok(Err(e))) => Some(e.to_string()),
                Some(Err(e)) => Some(e.to_string()),
                _ => None,
            },
            _ = ended => None,
        };
        tasks.abort_all();
        for (name, stats) in &counted {
            let st = stats.lock().map(|s| s.clone()).unwrap_or_default();
            eprintln!("{}", relay_line(name, &st));
        }
        failed.map_or(Ok(()), Err)
    })
}

/// Resolves on SIGINT, SIGTERM or SIGHUP. Call inside the runtime.
fn quit_signal() -> Result<impl std::future::Future<Output = ()>, String> {
    use tokio::signal::unix::{signal, SignalKind};
    let watch = |k| signal(k).map_err(|e| format!("cannot watch signals: {e}"));
    let (mut int, mut term, mut hup) = (
        watch(SignalKind::interrupt())?,
        watch(SignalKind::terminate())?,
        watch(SignalKind::hangup())?,
    );
    Ok(async move {
        tokio::select! {
            _ = int.recv() => {}
            _ = term.recv() => {}
            _ = hup.recv() => {}
        }
    })
}

/// What one relayed path did, in one line.
fn relay_line(name: &str, s: &RelayStats) -> String {
    let dir = |i: usize| {
        let d = &s.dropped[i];
        format!(
            "{} forwarded, {} dropped (queue {}, loss {}, down {})",
            s.forwarded[i],
            d.total(),
            d.queue,
            d.loss,
            d.down
        )
    };
    format!(
        "relay {name}: to the target {}; back {}; {} senders ({} expired idle, {} still mapped, {} datagrams refused over the limit); {} orphaned, {} send errors",
        dir(0),
        dir(1),
        s.senders,
        s.expired,
        s.active,
        s.refused,
        s.orphaned,
        s.send_errors
    )
}

#[cfg(test)]
mod tests {
    use super::parse_backups;

    #[test]
    fn backup_entries_name_a_path_by_its_local_entry_or_either_address() {
        let entries = ["lo".to_string(), "127.0.1.2:0".to_string()];
        let local = [
            "127.0.0.1:0".parse().unwrap(),
            "127.0.1.2:0".parse().unwrap(),
        ];
        let remote = [
            "127.0.2.1:9899".parse().unwrap(),
            "127.0.2.2:9899".parse().unwrap(),
        ];
        let b = |list: &[&str]| {
            let list: Vec<String> = list.iter().map(|x| x.to_string()).collect();
            parse_backups(&list, &entries, &local, &remote)
        };
        assert_eq!(b(&[]).unwrap(), [false, false]);
        assert_eq!(b(&["lo"]).unwrap(), [true, false]);
        assert_eq!(b(&["127.0.2.2"]).unwrap(), [false, true]);
        assert_eq!(b(&["127.0.2.2:9899"]).unwrap(), [false, true]);
        let e = b(&["wlan0"]).unwrap_err();
        assert!(e.starts_with("--backup: `wlan0`"), "{e}");
        let e = b(&["lo", "127.0.1.2"]).unwrap_err();
        assert!(e.contains("every path is a backup"), "{e}");
    }
}
