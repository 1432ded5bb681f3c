//! The receiving side: accept one association, store what arrives durably, confirm it.

use std::net::SocketAddr;
use std::path::Path;

use cmt_core::setup::{ListenOutcome, Listener, CAUSE_OUT_OF_RESOURCE};
use cmt_core::wire::chunk_type;
use cmt_core::{Association, Chunk, Closing, Packet, Payload, Time};

use super::{
    digest::digest_chunk,
    error::TransferError::{self, Ended, Invalid, Io, Setup},
    established::{self, End, Established},
    options::{overhead_of, Options},
    report::{Counters, Report},
    routes::{pair_remotes, Routes},
    session::{association, negotiated_receiver_rates, next, setup_config, start_trace, Wake},
};
use crate::io::Sockets;
use crate::sink::Sink;
use crate::trust::Trust;

/// Accepts one association on `listen`, writes what arrives to `out`, returns when the
/// peer has closed.
pub async fn receive(
    listen: &[SocketAddr],
    out: &Path,
    o: &Options,
) -> Result<Report, TransferError> {
    if listen.is_empty() {
        return Err(Invalid("give at least one address to listen on".into()));
    }
    let socks = Sockets::bind(listen)
        .await
        .map_err(|e| Invalid(e.to_string()))?;
    receive_on(socks, out, o).await
}

/// As [`receive`], on sockets already bound (tests bind port 0 and read the ports).
pub async fn receive_on(
    mut socks: Sockets,
    out: &Path,
    o: &Options,
) -> Result<Report, TransferError> {
    socks.set_gso(o.gso);
    let overhead = overhead_of(&socks.local_addrs());
    o.validate_for(overhead).map_err(Invalid)?;
    // Where the data goes is checked before anyone connects; until the commit below the
    // destination keeps whatever it held.
    let sink = Sink::create(out).map_err(Invalid)?;
    if o.pcap.is_some() {
        socks.start_capture();
    }
    let listen = socks.local_addrs();
    let key: [u8; 32] = rand::random();
    let mut listener = Listener::new(setup_config(o, &listen), key, rand::random());
    let mut rejected = 0u64;
    let setup_deadline = o.deadline(socks.now());
    let (est, arrived_on, from, peer_port, cookie_ack) = loop {
        let a = match next(&mut socks, Some(setup_deadline), o).await {
            Wake::Packet(a) => a,
            Wake::Timer => {
                let why = format!("no sender associated within {} s", o.timeout_s);
                return Err(Setup(why));
            }
            Wake::Abort => return Err(Setup("aborted before a peer connected".into())),
        };
        let Ok(p) = a.packet else {
            rejected += 1;
            continue;
        };
        if !o.peers.is_empty() && !o.peers.contains(&a.from.ip()) {
            rejected += 1;
            continue;
        }
        match listener.handle(socks.now(), &p) {
            ListenOutcome::Reply(r) => socks
                .send(a.local, a.from, a.src_port, &r)
                .await
                .map_err(|e| Setup(e.to_string()))?,
            ListenOutcome::Established(est, ack) => break (est, a.local, a.from, a.src_port, ack),
            ListenOutcome::Drop(_) => rejected += 1,
        }
    };
    socks
        .send(arrived_on, from, peer_port, &cookie_ack)
        .await
        .map_err(|e| Setup(e.to_string()))?;
    let routes = Routes::new(
        listen.len(),
        pair_remotes(&listen, arrived_on, from, &est.peer_addresses),
        peer_port,
    );
    let n = routes.paths.len();
    let receiver_rates = negotiated_receiver_rates(o, &est);
    let confirm = est.peer_extensions.contains(&chunk_type::FILE_DIGEST);
    let (local_vtag, peer_vtag) = (est.init.local_vtag, est.init.peer_vtag);
    // The handshake's source and the addresses the peer's INIT listed (at the same
    // port) speak for it; any other source must first answer a probe.
    let trust = Trust::new(
        std::iter::once(from).chain(
            est.peer_addresses
                .iter()
                .map(|ip| SocketAddr::new(*ip, from.port())),
        ),
    );
    let overhead = overhead + socks.authenticate(est.auth.clone());
    let mut assoc = association(o, n, est.init, receiver_rates, overhead).map_err(Setup)?;
    start_trace(&mut assoc, o, &routes.addresses(&socks), false).map_err(Io)?;
    let start = socks.now();
    let mut s = Established {
        assoc,
        routes,
        trust,
        local_vtag,
        peer_vtag,
        rejected,
        start,
    };
    let mut end = Receiving {
        sink,
        sha: None,
        confirm,
        heard: start,
        cookie_ack,
    };
    established::run(&mut socks, &mut s, &mut end, o).await?;
    let done = (
        end.sink.bytes(),
        end.sha.clone().unwrap_or_default(),
        confirm,
    );
    let report = s.finish(&mut socks, o, done, receiver_rates)?;
    if end.sha.is_none() {
        return Err(Ended(
            "the association closed before the peer's SHUTDOWN".into(),
        ));
    }
    Ok(report)
}

/// The receiver's part of the established phase: delivered data stored (and committed
/// before the SHUTDOWN ACK), paths latched to where their packets come from, a silent
/// sender given up on, a repeated COOKIE ECHO answered again.
struct Receiving {
    sink: Sink,
    sha: Option<String>,
    confirm: bool,
    /// When the sender was last heard from.
    heard: Time,
    cookie_ack: Packet,
}

impl End for Receiving {
    fn exchange(&mut self, assoc: &mut Association<Counters>) -> Result<(), (String, u16)> {
        // The sender must not believe the file arrived: ABORT, "out of resource".
        store(assoc, &mut self.sink, &mut self.sha, self.confirm)
            .map_err(|e| (e, CAUSE_OUT_OF_RESOURCE))
    }

    fn done(&self, _assoc: &Association<Counters>) -> u64 {
        self.sink.bytes()
    }

    fn limit(&self, now: Time, o: &Options) -> Result<Option<Time>, String> {
        let silent_until = Time::from_nanos(
            self.heard
                .as_nanos()
                .saturating_add((o.peer_silence_s * 1e9) as u64),
        );
        if now >= silent_until {
            return Err(format!(
                "the sender went silent: nothing from it for {} s",
                o.peer_silence_s
            ));
        }
        Ok(Some(silent_until))
    }

    fn direct_reply(&self, p: &Packet, trusted: bool) -> Option<Packet> {
        // Our COOKIE ACK got lost: answer the repeated COOKIE ECHO again.
        let echo = matches!(p.chunks.first(), Some(Chunk::CookieEcho { .. }));
        (trusted && echo).then(|| self.cookie_ack.clone())
    }

    fn heard(&mut self, routes: &mut Routes, local: usize, from: SocketAddr, now: Time) {
        routes.latch(local, from);
        self.heard = now;
    }
}

/// Moves delivered data into the sink; once the peer has asked to shut down (so every
/// byte has arrived) and before our SHUTDOWN ACK goes out, commits the file durably.
pub(super) fn store(
    assoc: &mut Association<Counters>,
    sink: &mut Sink,
    sha: &mut Option<String>,
    confirm: bool,
) -> Result<(), String> {
    while let Some(p) = assoc.read() {
        if let Payload::Bytes(b) = p {
            sink.write(&b)?;
        }
    }
    if sha.is_none() && assoc.closing() == Closing::Received {
        let digest = sink.commit()?;
        if confirm {
            assoc.bundle_with_shutdown_ack(digest_chunk(sink.bytes(), &digest));
        }
        *sha = Some(digest);
    }
    Ok(())
}
