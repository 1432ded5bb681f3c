//! The receiving side: accept one association, store what arrives durably, confirm it.

use std::net::SocketAddr;
use std::path::Path;

use cmt_core::setup::{ListenOutcome, Listener, CAUSE_OUT_OF_RESOURCE};
use cmt_core::wire::chunk_type;
use cmt_core::{Association, Chunk, Closing, Payload, Time};

use super::{
    digest::digest_chunk,
    options::{overhead_of, Options},
    report::{Counters, Report},
    routes::{pair_remotes, Routes},
    session::{
        abort, admit, association, deliver, finish_trace, flush, flush_and_check,
        negotiated_receiver_rates, next, setup_config, start_trace, until, write_capture, Ticker,
        Wake,
    },
};
use crate::io::{Arrival, Sockets};
use crate::sink::Sink;
use crate::trust::Trust;

/// Accepts one association on `listen`, writes what arrives to `out`, returns when the
/// peer has closed.
pub async fn receive(listen: &[SocketAddr], out: &Path, o: &Options) -> Result<Report, String> {
    if listen.is_empty() {
        return Err("give at least one address to listen on".into());
    }
    let socks = Sockets::bind(listen).await.map_err(|e| e.to_string())?;
    receive_on(socks, out, o).await
}

/// As [`receive`], on sockets already bound (tests bind port 0 and read the ports).
pub async fn receive_on(mut socks: Sockets, out: &Path, o: &Options) -> Result<Report, String> {
    let overhead = overhead_of(&socks.local_addrs());
    o.validate_for(overhead)?;
    // Where the data goes is checked before anyone connects; until the commit below the
    // destination keeps whatever it held.
    let mut sink = Sink::create(out)?;
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
            Wake::Timer => return Err(format!("no sender associated within {} s", o.timeout_s)),
            Wake::Abort => return Err("aborted before a peer connected".into()),
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
                .map_err(|e| e.to_string())?,
            ListenOutcome::Established(est, ack) => break (est, a.local, a.from, a.src_port, ack),
            ListenOutcome::Drop(_) => rejected += 1,
        }
    };
    socks
        .send(arrived_on, from, peer_port, &cookie_ack)
        .await
        .map_err(|e| e.to_string())?;
    let mut routes = Routes::new(
        listen.len(),
        pair_remotes(&listen, arrived_on, from, &est.peer_addresses),
        peer_port,
    );
    let n = routes.paths.len();
    let local_vtag = est.init.local_vtag;
    let receiver_rates = negotiated_receiver_rates(o, &est);
    let confirm = est.peer_extensions.contains(&chunk_type::FILE_DIGEST);
    let peer_vtag = est.init.peer_vtag;
    // The handshake's source and the addresses the peer's INIT listed (at the same
    // port) speak for it; any other source must first answer a probe.
    let mut trust = Trust::new(
        std::iter::once(from).chain(
            est.peer_addresses
                .iter()
                .map(|ip| SocketAddr::new(*ip, from.port())),
        ),
    );
    let overhead = overhead + socks.authenticate(est.auth.clone());
    let mut assoc = association(o, n, est.init, receiver_rates, overhead)?;
    start_trace(&mut assoc, o, &routes.addresses(&socks), false)?;
    let start = socks.now();
    let mut heard = start;
    let mut ticker = Ticker::new();
    let mut sha = None;
    loop {
        ticker.tick(socks.now(), sink.bytes(), &assoc.observer().paths, o);
        if let Err(e) = store(&mut assoc, &mut sink, &mut sha, confirm) {
            // The sender must not believe the file arrived: ABORT, "out of resource".
            assoc.abort(socks.now(), Some(CAUSE_OUT_OF_RESOURCE));
            let _ = flush(&mut socks, &mut assoc, &routes).await;
            return Err(e);
        }
        if flush_and_check(&mut socks, &mut assoc, &routes, o, start).await? {
            break;
        }
        let silent_until = Time::from_nanos(
            heard
                .as_nanos()
                .saturating_add((o.peer_silence_s * 1e9) as u64),
        );
        if socks.now() >= silent_until {
            return Err(format!(
                "the sender went silent: nothing from it for {} s",
                o.peer_silence_s
            ));
        }
        let wake = until(
            ticker.wake(assoc.poll_timeout(), o),
            o.deadline(start).min(silent_until),
        );
        match next(&mut socks, wake, o).await {
            Wake::Packet(Arrival {
                local,
                from,
                packet: Ok(p),
                ..
            }) => {
                // Our COOKIE ACK got lost: answer the repeated COOKIE ECHO again.
                if p.vtag == local_vtag
                    && trust.is_confirmed(from)
                    && matches!(p.chunks.first(), Some(Chunk::CookieEcho { .. }))
                {
                    socks
                        .send(local, from, routes.peer_port, &cookie_ack)
                        .await
                        .map_err(|e| e.to_string())?;
                    continue;
                }
                if p.vtag != local_vtag {
                    // The core counts and drops a packet under another tag.
                    deliver(&mut assoc, socks.now(), routes.path_of(local), p);
                    continue;
                }
                let now = socks.now();
                for (l, p) in admit(
                    &mut socks,
                    &mut trust,
                    (local, from),
                    p,
                    peer_vtag,
                    routes.peer_port,
                )
                .await
                {
                    routes.latch(l, from);
                    heard = now;
                    deliver(&mut assoc, now, routes.path_of(l), p);
                }
            }
            Wake::Packet(Arrival { packet: Err(_), .. }) => rejected += 1,
            Wake::Timer => assoc.handle_timeout(socks.now()),
            Wake::Abort => return Err(abort(&mut socks, &mut assoc, &routes, o).await),
        }
    }
    let seconds = (socks.now().as_nanos() - start.as_nanos()) as f64 / 1e9;
    finish_trace(&mut assoc, o)?;
    write_capture(&mut socks, o)?;
    let sha256 = sha.ok_or("the association closed before the peer's SHUTDOWN")?;
    Ok(Report {
        bytes: sink.bytes(),
        seconds,
        sha256,
        confirmed: confirm,
        paths: assoc.observer().paths.clone(),
        rejected: rejected + assoc.stats().bad_vtag + trust.dropped,
        receiver_rates,
        routes: routes.addresses(&socks),
    })
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
