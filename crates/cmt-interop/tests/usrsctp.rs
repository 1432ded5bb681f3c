//! cmtlab's runtime against usrsctp, over RFC 6951 UDP encapsulation: associations set
//! up in both directions, 10 MB each way with identical SHA-256, graceful shutdown,
//! ABORT both ways, Supported-Extensions fallback, and a multihomed association with CMT
//! on both sides.
//!
//! `harness = false`: the binary first moves into a private network namespace and
//! starts usrsctp in a second one, joined by two veth pairs (see `cmt_interop::netns`),
//! so that each end has two addresses of its own. Without namespaces (not root and no
//! user namespaces, or `CMTLAB_INTEROP_NO_NETNS` set) it says so and runs the
//! single-path tests on loopback.
//! Usage: `cargo test -p cmt-interop --features usrsctp [-- NAME_FILTER]`.

use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use cmt_core::auth::AuthConfig;
use cmt_core::packet::{Chunk, InitParam};
use cmt_interop::harness::{self, check, Test};
use cmt_interop::netns::{self, NsThread};
use cmt_interop::usrsctp;
use cmt_net::io::Sockets;
use cmt_net::transfer::{receive_on, send, Options, Outputs, Report};
use sha2::{Digest, Sha256};

#[path = "usrsctp/asconf.rs"]
mod asconf;
#[path = "usrsctp/auth.rs"]
mod auth;
#[path = "usrsctp/ecn.rs"]
mod ecn;
use auth::require_auth;

/// usrsctp's UDP encapsulation port, and its listener's SCTP port (our runtime
/// connects to the SCTP port of the number it sends to).
const THEIR_PORT: u16 = 9899;
/// The SCTP port of usrsctp's connecting sockets (another number than its UDP port, as
/// RFC 6951 allows).
const THEIR_CLIENT_PORT: u16 = 7700;
/// Our UDP (and SCTP) port.
const OUR_PORT: u16 = 5001;
/// Longest a test may take before the watchdog fails the run.
const TEST_LIMIT: Duration = Duration::from_secs(90);

/// Where the two ends are.
struct Env {
    /// Per path: (our address, usrsctp's address).
    paths: Vec<(Ipv4Addr, Ipv4Addr)>,
    rt: tokio::runtime::Runtime,
    dir: std::path::PathBuf,
    /// usrsctp's listener on all its addresses, shared by the tests (a closed usrsctp
    /// endpoint frees its port only later).
    listener: Arc<usrsctp::Socket>,
    /// The thread in usrsctp's namespace (kept for the run); none on loopback.
    peer: Option<NsThread>,
}

impl Env {
    /// Both ends have two addresses in namespaces of their own.
    fn multihomed(&self) -> bool {
        self.peer.is_some()
    }
    fn ours(&self, i: usize) -> SocketAddr {
        SocketAddr::from((self.paths[i].0, OUR_PORT))
    }
    fn theirs(&self, i: usize) -> SocketAddr {
        SocketAddr::from((self.paths[i].1, THEIR_PORT))
    }
    fn ours_v4(&self, i: usize) -> SocketAddrV4 {
        SocketAddrV4::new(self.paths[i].0, OUR_PORT)
    }
    /// usrsctp's addresses with `port`.
    fn their_addrs(&self, port: u16) -> Vec<SocketAddrV4> {
        self.paths
            .iter()
            .map(|p| SocketAddrV4::new(p.1, port))
            .collect()
    }
    /// usrsctp has no FILE-DIGEST exchange: our ends transfer without it.
    fn options(&self) -> Options {
        Options {
            timeout_s: 60.0,
            allow_unconfirmed: true,
            ..Options::default()
        }
    }
}

fn setup() -> Env {
    let dir = std::env::temp_dir().join(format!("cmtlab-usrsctp-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    // Namespaces first: no thread may exist yet.
    let spaced = if std::env::var_os("CMTLAB_INTEROP_NO_NETNS").is_some() {
        Err("CMTLAB_INTEROP_NO_NETNS is set".to_string())
    } else {
        netns::isolate()
    };
    let spaced = spaced.and_then(|()| {
        let peer = NsThread::spawn()?;
        let paths = netns::veth_pairs(&peer, 2)?;
        // usrsctp's UDP socket and its list of local addresses come from that namespace.
        peer.run(|| usrsctp::init(THEIR_PORT));
        Ok((paths, peer))
    });
    let (paths, peer) = match spaced {
        Ok((p, peer)) => (p, Some(peer)),
        Err(e) => {
            eprintln!("note: {e}\nnote: no private namespaces: single-path tests on loopback only");
            usrsctp::init(THEIR_PORT);
            (vec![(Ipv4Addr::LOCALHOST, Ipv4Addr::LOCALHOST)], None)
        }
    };
    let theirs: Vec<_> = paths
        .iter()
        .map(|p| SocketAddrV4::new(p.1, THEIR_PORT))
        .collect();
    let listener = their_listener(&theirs).unwrap_or_else(|e| {
        eprintln!("cannot listen with usrsctp: {e}");
        std::process::exit(1)
    });
    Env {
        paths,
        rt: tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("runtime"),
        dir,
        listener: Arc::new(listener),
        peer,
    }
}

fn data(seed: u32, len: usize) -> Vec<u8> {
    (0..len as u32)
        .map(|i| (i.wrapping_mul(seed) >> 11) as u8)
        .collect()
}

fn sha(d: &[u8]) -> String {
    Sha256::digest(d)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A usrsctp listener on all of its addresses.
fn their_listener(addrs: &[SocketAddrV4]) -> Result<usrsctp::Socket, String> {
    let l = usrsctp::Socket::new().map_err(|e| e.to_string())?;
    l.bind_all(addrs).map_err(|e| e.to_string())?;
    l.listen().map_err(|e| e.to_string())?;
    Ok(l)
}

/// What usrsctp received on one accepted association.
struct Received {
    data: Vec<u8>,
    peers: Vec<SocketAddrV4>,
}

/// usrsctp accepts one association and reads it to its end (in a thread).
fn they_receive(
    env: &Env,
    on_bytes: impl FnMut(usize) + Send + 'static,
) -> std::thread::JoinHandle<std::io::Result<Received>> {
    let l = env.listener.clone();
    std::thread::spawn(move || {
        let s = l.accept()?;
        let peers = s.peer_addresses()?;
        let data = s.recv_to_end(on_bytes)?;
        Ok(Received { data, peers })
    })
}

/// How usrsctp sends to us in [`they_send`] / [`we_receive`].
#[derive(Clone, Default)]
struct TheirSend {
    /// Close with an ABORT instead of a graceful SHUTDOWN.
    abort: bool,
    /// usrsctp's CMT on.
    cmt: bool,
    /// RFC 4895 authentication of DATA and SACK under this key, both ways.
    key: Option<Vec<u8>>,
    /// Bound to its first address only at the start, usrsctp adds its second address
    /// after a third of the data and removes its first after two thirds (`usrsctp_bindx`:
    /// ASCONF ADD-IP, then DEL-IP, RFC 5061).
    handover: bool,
    /// Our receiver captures its packets here.
    capture: Option<std::path::PathBuf>,
}

/// usrsctp connects to `to` and sends `data` as `how` says, then shuts down (or
/// aborts). Reports the peer addresses it saw.
fn they_send(
    env: &Env,
    to: SocketAddrV4,
    data: Vec<u8>,
    how: TheirSend,
) -> tokio::sync::oneshot::Receiver<std::io::Result<Vec<SocketAddrV4>>> {
    let mine = env.their_addrs(THEIR_CLIENT_PORT);
    let second_of_ours = env.paths.get(1).map_or(*to.ip(), |p| p.0);
    let (tx, rx) = tokio::sync::oneshot::channel();
    std::thread::spawn(move || {
        let r = (|| {
            let s = usrsctp::Socket::new()?;
            // Options before bind: this usrsctp hangs setting the UDP port of a bound
            // socket.
            s.set_remote_udp_port(to.port())?;
            s.set_cmt(how.cmt)?;
            if let Some(k) = &how.key {
                require_auth(&s, k)?;
            }
            if how.handover {
                s.bind_all(&mine[..1])?;
                s.connect(to)?;
                let third = data.len() / 3;
                s.send_all(&data[..third])?;
                s.add_address(mine[1])?;
                s.send_all(&data[third..2 * third])?;
                // Its first network going away: our second address becomes its primary
                // destination, so the DEL-IP leaves from the address that stays (RFC
                // 5061 §5.3 F8: a request to delete its own source is refused).
                s.set_primary(SocketAddrV4::new(second_of_ours, to.port()))?;
                // usrsctp takes an address it unbinds out of its lookup at once, before
                // its DEL-IP reaches us: a SACK of ours still on its way there is out of
                // the blue to it and answered with an ABORT (T bit set), which RFC 9260
                // §8.5.1 makes us accept — the transfer's end in 1 of about 12 runs. So
                // the address goes once nothing sent from it awaits our SACK (at most
                // 10 s), as an application that moves off a network it still has would.
                let until = Instant::now() + Duration::from_secs(10);
                while s.outstanding()? != (0, 0) && Instant::now() < until {
                    std::thread::sleep(Duration::from_millis(2));
                }
                s.remove_address(mine[0])?;
                s.send_all(&data[2 * third..])?;
            } else {
                s.bind_all(&mine)?;
                s.connect(to)?;
                s.send_all(&data)?;
            }
            let peers = s.peer_addresses()?;
            if how.abort {
                s.set_abort_on_close()?;
            } else {
                // SHUTDOWN once all is acknowledged; usrsctp completes it after close.
                s.shutdown_write()?;
            }
            Ok(peers)
        })();
        let _ = tx.send(r);
    });
    rx
}

/// What one transfer from usrsctp to us gave.
struct FromThem {
    /// Our receiver's outcome.
    ours: Result<Report, String>,
    /// Our addresses as usrsctp saw them.
    peers: Vec<SocketAddrV4>,
    /// From usrsctp's connect to the end of our receiver.
    took: Duration,
}

/// We listen on our first `paths` addresses while usrsctp connects and sends `d` (see
/// [`they_send`]); a failure on usrsctp's side ends the wait at once.
/// How our end of a transfer ended, for a failure's message.
fn ended<T, E: std::fmt::Display>(r: &Result<Result<T, E>, tokio::task::JoinError>) -> String {
    match r {
        Ok(Ok(_)) => "ours completed".into(),
        Ok(Err(e)) => format!("ours failed: {e}"),
        Err(e) => format!("ours died: {e}"),
    }
}

fn we_receive(
    env: &Env,
    paths: usize,
    out: &std::path::Path,
    d: &[u8],
    how: TheirSend,
) -> Result<FromThem, String> {
    env.rt.block_on(async {
        let locals: Vec<SocketAddr> = (0..paths).map(|i| env.ours(i)).collect();
        let socks = Sockets::bind(&locals).await.map_err(|e| e.to_string())?;
        let mut us = tokio::spawn({
            let o = Options {
                auth: how.key.clone().map(AuthConfig::with_key),
                outputs: Outputs {
                    pcap: how.capture.clone(),
                    ..Outputs::default()
                },
                ..env.options()
            };
            let out = out.to_path_buf();
            async move { receive_on(socks, &out, &o).await }
        });
        let started = Instant::now();
        let mut them = they_send(env, env.ours_v4(0), d.to_vec(), how);
        let usrsctp_result = |t: Result<std::io::Result<_>, _>| match t {
            Ok(Ok(peers)) => Ok(peers),
            Ok(Err(e)) => Err(format!("usrsctp: {e}")),
            Err(_) => Err("usrsctp: thread died".to_string()),
        };
        let (ours, peers) = tokio::select! {
            t = &mut them => match usrsctp_result(t) {
                Ok(peers) => (us.await, peers),
                Err(e) => {
                    // Which side ended it: ours, if it finished, says why.
                    let ours = tokio::time::timeout(Duration::from_secs(2), &mut us).await;
                    us.abort(); // frees our sockets for the next test
                    let ours = ours.map_or("ours still running 2 s later".into(), |r| ended(&r));
                    return Err(format!("{e}; {ours}"));
                }
            },
            r = &mut us => match usrsctp_result(them.await) {
                Ok(peers) => (r, peers),
                Err(e) => return Err(format!("{e}; before it, {}", ended(&r))),
            },
        };
        let ours = ours.map_err(|e| e.to_string())?.map_err(String::from);
        Ok(FromThem {
            ours,
            peers,
            took: started.elapsed(),
        })
    })
}

fn join<T>(h: std::thread::JoinHandle<std::io::Result<T>>, who: &str) -> Result<T, String> {
    h.join()
        .map_err(|_| format!("{who}: thread panicked"))?
        .map_err(|e| format!("{who}: {e}"))
}

/// We send `d` over our first path with options `o` while usrsctp's listener accepts
/// and reads it to its end: our report and what usrsctp read.
fn we_send(env: &Env, d: &[u8], o: &Options) -> Result<(Report, Received), String> {
    let them = they_receive(env, |_| {});
    let r = env.rt.block_on(send(
        &[env.ours(0)],
        &[env.theirs(0)],
        Bytes::from(d.to_vec()),
        o,
    ))?;
    Ok((r, join(them, "usrsctp")?))
}

fn we_connect_and_send_10_mb_then_shut_down(env: &Env) -> Result<String, String> {
    let d = data(2_654_435_761, 10_000_000);
    // Our send returns after SHUTDOWN COMPLETE; usrsctp's read ends at our SHUTDOWN.
    let (r, got) = we_send(env, &d, &env.options())?;
    check(got.data.len() == d.len(), || {
        format!("usrsctp got {} of {} bytes", got.data.len(), d.len())
    })?;
    check(sha(&got.data) == r.sha256, || "SHA-256 differs".into())?;
    Ok(format!(
        "{:.0} Mbit/s, sha256 {}…",
        r.goodput_mbps(),
        &r.sha256[..12]
    ))
}

fn they_connect_and_send_10_mb_then_shut_down(env: &Env) -> Result<String, String> {
    let d = data(40_503, 10_000_000);
    let out = env.dir.join("from-usrsctp.bin");
    let r = we_receive(env, 1, &out, &d, TheirSend::default())?.ours?;
    check(r.sha256 == sha(&d), || "SHA-256 differs".into())?;
    check(std::fs::read(&out).map_err(|e| e.to_string())? == d, || {
        "file differs".into()
    })?;
    Ok(format!(
        "{:.0} Mbit/s, sha256 {}…",
        r.goodput_mbps(),
        &r.sha256[..12]
    ))
}

fn they_abort_mid_transfer(env: &Env) -> Result<String, String> {
    let out = env.dir.join("aborted.bin");
    let abort = TheirSend {
        abort: true,
        ..TheirSend::default()
    };
    let got = we_receive(env, 1, &out, &data(7, 2_000_000), abort)?;
    let (err, took) = (got.ours.err(), got.took);
    check(
        err.as_deref()
            .is_some_and(|e| e.starts_with("the peer aborted the association")),
        || format!("our receiver ended with {err:?}"),
    )?;
    check(took < Duration::from_secs(5), || {
        format!("took {took:?}: a timeout, not the ABORT")
    })?;
    check(!out.exists(), || "a partial file was written".into())?;
    Ok(format!(
        "our receiver: \"{}\" after {:.0} ms",
        err.unwrap_or_default(),
        took.as_secs_f64() * 1e3
    ))
}

fn we_abort_mid_transfer(env: &Env) -> Result<String, String> {
    let n = Arc::new(tokio::sync::Notify::new());
    let n2 = n.clone();
    let seen = Arc::new(AtomicU64::new(0));
    let seen2 = seen.clone();
    // usrsctp asks us to abort once a megabyte has arrived.
    let them = they_receive(env, move |total| {
        if total >= 1_000_000 && seen2.swap(total as u64, Ordering::Relaxed) == 0 {
            n2.notify_one();
        }
    });
    let o = Options {
        abort: Some(n),
        ..env.options()
    };
    let ours = env.rt.block_on(send(
        &[env.ours(0)],
        &[env.theirs(0)],
        Bytes::from(vec![9u8; 200_000_000]),
        &o,
    ));
    check(
        ours.as_ref().err() == Some(&cmt_net::transfer::TransferError::Aborted),
        || format!("our sender ended with {:?}", ours.as_ref().map(|r| r.bytes)),
    )?;
    match them
        .join()
        .map_err(|_| "usrsctp: thread panicked".to_string())?
    {
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => Ok(format!(
            "usrsctp's read failed with \"{e}\" after {} bytes",
            seen.load(Ordering::Relaxed)
        )),
        Err(e) => Err(format!("usrsctp's read failed otherwise: {e}")),
        Ok(r) => Err(format!(
            "usrsctp's read ended normally after {} bytes",
            r.data.len()
        )),
    }
}

/// We ask for receiver-driven mode; usrsctp does not announce our chunk types in its
/// INIT ACK, so the association runs standard CMT (no round-info or rate-advert chunk
/// on the wire) and `receiver` congestion control falls back to Reno.
fn extensions_are_negotiated_and_fall_back(env: &Env) -> Result<String, String> {
    let d = data(77, 2_000_000);
    let cap = env.dir.join("extensions.pcap");
    let o = Options {
        scheduler: "cmt-rev".into(),
        cc: "receiver".into(),
        receiver_rates: true,
        outputs: Outputs {
            pcap: Some(cap.clone()),
            ..Outputs::default()
        },
        ..env.options()
    };
    let (r, got) = we_send(env, &d, &o)?;
    check(got.data == d, || "data differs".into())?;
    check(!r.receiver_rates, || {
        "receiver-driven mode on with a peer that lacks it".into()
    })?;
    let records = cmt_sim::pcap::read(&std::fs::read(&cap).map_err(|e| e.to_string())?)?;
    let mut theirs_ext = None;
    let mut ours_ext = None;
    let mut extension_chunks = 0;
    for rec in &records {
        let p = cmt_core::wire::decode(&rec.sctp)
            .map_err(|e| format!("{e:?}"))?
            .packet;
        for c in &p.chunks {
            match c {
                Chunk::Init(i) | Chunk::InitAck(i) => {
                    let ext = i.params.iter().find_map(|p| match p {
                        InitParam::SupportedExtensions(t) => Some(t.clone()),
                        _ => None,
                    });
                    if matches!(c, Chunk::InitAck(_)) {
                        theirs_ext = ext;
                    } else {
                        ours_ext = ext;
                    }
                }
                Chunk::RoundInfo { .. } | Chunk::RateAdvert { .. } => extension_chunks += 1,
                _ => {}
            }
        }
    }
    let ours_ext = ours_ext.ok_or("our INIT has no Supported Extensions")?;
    let theirs_ext = theirs_ext.ok_or("usrsctp's INIT ACK has no Supported Extensions")?;
    check(ours_ext.contains(&0xB0) && ours_ext.contains(&0xB1), || {
        format!("we announced {ours_ext:02x?}")
    })?;
    check(!theirs_ext.contains(&0xB0), || {
        format!("usrsctp announced {theirs_ext:02x?}")
    })?;
    check(extension_chunks == 0, || {
        format!("{extension_chunks} extension chunks sent")
    })?;
    let wireshark = tshark_verdict(&cap, records.len())?;
    Ok(format!(
        "usrsctp announced {theirs_ext:02x?}; we announced {ours_ext:02x?}; {} packets, none with 0xB0/0xB1; {wireshark}",
        records.len()
    ))
}

/// tshark on a capture of both stacks' packets: every packet SCTP, checksum good, none
/// malformed. Says so when tshark is not installed.
fn tshark_verdict(cap: &std::path::Path, packets: usize) -> Result<String, String> {
    let out = std::process::Command::new("tshark")
        .args(["-o", "sctp.checksum:CRC-32C", "-r"])
        .arg(cap)
        .args([
            "-d",
            &format!("udp.port=={OUR_PORT},sctp"),
            "-d",
            &format!("udp.port=={THEIR_PORT},sctp"),
        ])
        .args([
            "-T",
            "fields",
            "-e",
            "sctp.checksum.status",
            "-e",
            "_ws.malformed",
        ])
        .output();
    let Ok(out) = out else {
        return Ok("tshark not installed: Wireshark check skipped".into());
    };
    let text = String::from_utf8_lossy(&out.stdout);
    let good = text.lines().filter(|l| l.trim_end() == "1").count();
    check(out.status.success() && good == packets, || {
        format!("tshark: {good} of {packets} packets SCTP with a good checksum and not malformed")
    })?;
    Ok(format!("tshark: all {packets} decode, checksums good"))
}

/// A UDP hop between us and usrsctp that puts a round-info chunk (type 0xB0, which
/// usrsctp does not know) in front of the DATA of every packet going to usrsctp, and
/// passes everything else through. Returns the hop's address and the count of chunks
/// put in.
async fn inserting_hop(
    at: SocketAddr,
    ours: SocketAddr,
    theirs: SocketAddr,
) -> std::io::Result<(SocketAddr, Arc<AtomicU64>, tokio::task::JoinHandle<()>)> {
    let s = tokio::net::UdpSocket::bind(at).await?;
    let addr = s.local_addr()?;
    let inserted = Arc::new(AtomicU64::new(0));
    let count = inserted.clone();
    let task = tokio::spawn(async move {
        let (mut buf, mut out) = (vec![0u8; 65_536], Vec::new());
        while let Ok((n, from)) = s.recv_from(&mut buf).await {
            if from == theirs {
                let _ = s.send_to(&buf[..n], ours).await;
                continue;
            }
            match cmt_core::wire::decode(&buf[..n]) {
                Ok(mut d) => {
                    if let Some(i) = d
                        .packet
                        .chunks
                        .iter()
                        .position(|c| matches!(c, Chunk::Data(_)))
                    {
                        let info = Chunk::RoundInfo {
                            round: 1,
                            path: 0,
                            hold: 0,
                            seq: i as u32,
                        };
                        d.packet.chunks.insert(i, info);
                        count.fetch_add(1, Ordering::Relaxed);
                    }
                    // Our SCTP destination port was the hop's number; usrsctp's is 9899.
                    cmt_core::wire::encode(&d.packet, d.src_port, THEIR_PORT, &mut out);
                    let _ = s.send_to(&out, theirs).await;
                }
                Err(_) => {
                    let _ = s.send_to(&buf[..n], theirs).await;
                }
            }
        }
    });
    Ok((addr, inserted, task))
}

/// Our extension chunk reaches usrsctp anyway (put in on the way): usrsctp skips it as
/// its type bits say (`10`: skip, do not report) and takes the DATA bundled after it.
fn an_unknown_extension_chunk_is_skipped_by_the_peer(env: &Env) -> Result<String, String> {
    let d = data(55, 3_000_000);
    let them = they_receive(env, |_| {});
    let cap = env.dir.join("inserted.pcap");
    let (r, inserted, hop_task) = env.rt.block_on(async {
        let hop_at = SocketAddr::from((env.paths[0].0, 0));
        let (hop, inserted, task) = inserting_hop(hop_at, env.ours(0), env.theirs(0))
            .await
            .map_err(|e| e.to_string())?;
        let o = Options {
            outputs: Outputs {
                pcap: Some(cap.clone()),
                ..Outputs::default()
            },
            ..env.options()
        };
        let r = send(&[env.ours(0)], &[hop], Bytes::from(d.clone()), &o).await;
        Ok::<_, String>((r, inserted, task))
    })?;
    let r = r.inspect_err(|_| hop_task.abort())?;
    // The hop stays until usrsctp has its SHUTDOWN COMPLETE (our last packet, which
    // the hop may not have passed on yet when our side returns).
    let got = join(them, "usrsctp");
    hop_task.abort();
    let got = got?;
    let inserted = inserted.load(Ordering::Relaxed);
    check(got.data == d, || "data differs".into())?;
    check(inserted > 1000, || {
        format!("only {inserted} round-info chunks put in")
    })?;
    // usrsctp reported nothing (no ERROR chunk) and did not abort.
    let records = cmt_sim::pcap::read(&std::fs::read(&cap).map_err(|e| e.to_string())?)?;
    let complaints = records
        .iter()
        .filter_map(|rec| cmt_core::wire::decode(&rec.sctp).ok())
        .flat_map(|d| d.packet.chunks)
        .filter(|c| {
            matches!(
                c,
                Chunk::Abort { .. } | Chunk::Unknown { chunk_type: 9, .. }
            )
        })
        .count();
    check(complaints == 0, || {
        format!("usrsctp sent {complaints} ERROR/ABORT chunks")
    })?;
    Ok(format!(
        "{inserted} DATA packets carried a 0xB0 chunk; {:.0} Mbit/s; no ERROR or ABORT",
        r.goodput_mbps()
    ))
}

/// Both ends have two addresses; usrsctp runs with CMT on. Each direction must use both
/// paths for a real share of the data.
fn multihomed_cmt_both_ways(env: &Env) -> Result<String, String> {
    if !env.multihomed() {
        return Err("skipped: needs network namespaces (root or user namespaces)".into());
    }
    env.listener.set_cmt(true).map_err(|e| e.to_string())?;
    let result = (|| {
        // Us → usrsctp: our round-robin CMT over both pairs.
        let d = data(31, 10_000_000);
        let them = they_receive(env, |_| {});
        let r = env.rt.block_on(send(
            &[env.ours(0), env.ours(1)],
            &[env.theirs(0), env.theirs(1)],
            Bytes::from(d.clone()),
            &env.options(),
        ))?;
        let got = join(them, "usrsctp")?;
        check(got.data == d, || "data differs (us → usrsctp)".into())?;
        check(got.peers.len() == 2, || {
            format!("usrsctp sees our addresses {:?}", got.peers)
        })?;
        let sent: Vec<u64> = r.paths.iter().map(|p| p.sent_packets).collect();
        balanced(&sent, "our DATA packets per path")?;
        // usrsctp → us: its CMT over both of our addresses.
        let d = data(97, 10_000_000);
        let cmt = TheirSend {
            cmt: true,
            ..TheirSend::default()
        };
        let got = we_receive(env, 2, &env.dir.join("multihomed.bin"), &d, cmt)?;
        let (rr, peers) = (got.ours?, got.peers);
        check(rr.sha256 == sha(&d), || {
            "data differs (usrsctp → us)".into()
        })?;
        check(peers.len() == 2, || {
            format!("usrsctp sees our addresses {peers:?}")
        })?;
        let received: Vec<u64> = rr.paths.iter().map(|p| p.received_data_packets).collect();
        balanced(&received, "usrsctp's DATA packets per path")?;
        // Control: the same transfer with usrsctp's CMT off keeps its data on the
        // primary path (so the split above is CMT's doing, not our pairing's).
        let d = data(98, 2_000_000);
        let off = we_receive(
            env,
            2,
            &env.dir.join("cmt-off.bin"),
            &d,
            TheirSend::default(),
        )?;
        let off = off.ours?;
        let single: Vec<u64> = off.paths.iter().map(|p| p.received_data_packets).collect();
        check(off.sha256 == sha(&d), || "data differs (CMT off)".into())?;
        check(
            single.iter().skip(1).sum::<u64>() * 100 <= single.iter().sum::<u64>(),
            || format!("with CMT off usrsctp still spread its DATA: {single:?}"),
        )?;
        Ok(format!(
            "us → usrsctp {:.0} Mbit/s, DATA packets per path {sent:?}; usrsctp → us {:.0} Mbit/s, {received:?} (CMT off: {single:?})",
            r.goodput_mbps(),
            rr.goodput_mbps()
        ))
    })();
    env.listener.set_cmt(false).map_err(|e| e.to_string())?;
    result
}

/// Two paths, each with at least a fifth of the packets.
fn balanced(per_path: &[u64], what: &str) -> Result<(), String> {
    let total: u64 = per_path.iter().sum();
    check(
        per_path.len() == 2 && per_path.iter().all(|&n| n * 5 >= total),
        || format!("{what}: {per_path:?}"),
    )
}

const TESTS: &[Test<Env>] = &[
    (
        "we_connect_and_send_10_mb_then_shut_down",
        we_connect_and_send_10_mb_then_shut_down,
    ),
    (
        "they_connect_and_send_10_mb_then_shut_down",
        they_connect_and_send_10_mb_then_shut_down,
    ),
    ("they_abort_mid_transfer", they_abort_mid_transfer),
    ("we_abort_mid_transfer", we_abort_mid_transfer),
    (
        "extensions_are_negotiated_and_fall_back",
        extensions_are_negotiated_and_fall_back,
    ),
    (
        "an_unknown_extension_chunk_is_skipped_by_the_peer",
        an_unknown_extension_chunk_is_skipped_by_the_peer,
    ),
    ("multihomed_cmt_both_ways", multihomed_cmt_both_ways),
    (
        "ecn_is_agreed_with_usrsctp",
        ecn::ecn_is_agreed_with_usrsctp,
    ),
    (
        "usrsctp_moves_to_another_address_and_we_follow",
        asconf::usrsctp_moves_to_another_address_and_we_follow,
    ),
    (
        "we_move_to_another_address_and_usrsctp_follows",
        asconf::we_move_to_another_address_and_usrsctp_follows,
    ),
    // Last: usrsctp's listener keeps the key and the required chunks it is given.
    (
        "authenticated_both_ways_with_a_shared_key",
        auth::authenticated_both_ways_with_a_shared_key,
    ),
    (
        "a_wrong_key_gets_no_byte_into_usrsctp",
        auth::a_wrong_key_gets_no_byte_into_usrsctp,
    ),
];

fn main() {
    let env = setup();
    let code = harness::run("usrsctp interop", &env, TESTS, TEST_LIMIT);
    if std::env::var_os("CMTLAB_INTEROP_KEEP").is_none() {
        let _ = std::fs::remove_dir_all(&env.dir);
    }
    std::process::exit(code);
}
