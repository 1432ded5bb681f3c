//! The sending side: connect, stream the source in, close when all is acknowledged and
//! the receiver's digest matches.

use std::net::SocketAddr;
use std::path::Path;

use bytes::Bytes;
use cmt_core::setup::{Connector, CAUSE_USER_INITIATED_ABORT};
use cmt_core::wire::chunk_type;
use cmt_core::{PathId, Payload, Time};

use super::{
    digest::{check_digest, parse_digest},
    options::{overhead_of, Options},
    report::Report,
    routes::Routes,
    session::{
        abort, admit, association, deliver, finish_trace, flush, flush_and_check,
        negotiated_receiver_rates, next, setup_config, start_trace, until, write_capture, Ticker,
        Wake,
    },
};
use crate::io::{Arrival, Sockets};
use crate::source::Source;
use crate::trust::Trust;

/// Sends `data` from `locals` to `remotes`; returns when the association has closed.
pub async fn send(
    locals: &[SocketAddr],
    remotes: &[SocketAddr],
    data: Bytes,
    o: &Options,
) -> Result<Report, String> {
    send_from(locals, remotes, Source::memory(data), o).await
}

/// Sends the file at `path`, read as the transfer goes: memory stays bounded whatever
/// the file's size.
pub async fn send_file(
    locals: &[SocketAddr],
    remotes: &[SocketAddr],
    path: &Path,
    o: &Options,
) -> Result<Report, String> {
    send_from(locals, remotes, Source::file(path)?, o).await
}

/// Sends everything `src` yields, writing it into the association in pieces while less
/// than a window's worth is unacknowledged.
pub(super) async fn send_from(
    locals: &[SocketAddr],
    remotes: &[SocketAddr],
    mut src: Source,
    o: &Options,
) -> Result<Report, String> {
    if locals.is_empty() || remotes.is_empty() {
        return Err("give at least one local and one remote address".into());
    }
    if locals.len() != remotes.len() {
        return Err(format!(
            "{} local and {} remote addresses: path i pairs local address i with remote \
             address i, so give as many of each",
            locals.len(),
            remotes.len()
        ));
    }
    let overhead = overhead_of(locals);
    o.validate_for(overhead)?;
    let mut socks = Sockets::bind(locals).await.map_err(|e| e.to_string())?;
    if o.pcap.is_some() {
        socks.start_capture();
    }
    let seed = rand::random();
    let mut conn = Connector::new(setup_config(o, &socks.local_addrs()), seed);
    let mut rejected = 0u64;
    let setup_deadline = o.deadline(Time::ZERO);
    let est = loop {
        let now = socks.now();
        if now >= setup_deadline {
            return Err(format!("no answer to INIT within {} s", o.timeout_s));
        }
        if let Some(p) = conn.poll_transmit(now) {
            socks
                .send(0, remotes[0], remotes[0].port(), &p)
                .await
                .map_err(|e| e.to_string())?;
        }
        match next(&mut socks, until(conn.poll_timeout(), setup_deadline), o).await {
            Wake::Packet(Arrival { packet: Ok(p), .. }) => match conn.handle_packet(&p) {
                Ok(Some(est)) => break est,
                Ok(None) => {}
                Err(e) => return Err(format!("setup failed: {e}")),
            },
            Wake::Packet(Arrival { packet: Err(_), .. }) => rejected += 1,
            Wake::Abort => return Err("aborted before the association was set up".into()),
            Wake::Timer => conn
                .handle_timeout(socks.now())
                .map_err(|e| format!("setup failed: {e}"))?,
        }
    };
    let n = locals.len().min(remotes.len());
    // The peer's SCTP port is the one we addressed the INIT to.
    let routes = Routes::new(
        locals.len(),
        (0..n).map(|i| (i, remotes[i])).collect(),
        remotes[0].port(),
    );
    let receiver_rates = negotiated_receiver_rates(o, &est);
    let confirm = est.peer_extensions.contains(&chunk_type::FILE_DIGEST);
    let mut digest = None;
    let (local_vtag, peer_vtag) = (est.init.local_vtag, est.init.peer_vtag);
    // Only the addresses we send to speak for the receiver until another answers a probe.
    let mut trust = Trust::new(remotes.iter().copied());
    let overhead = overhead + socks.authenticate(est.auth.clone());
    let mut assoc = association(o, n, est.init, receiver_rates, overhead)?;
    start_trace(&mut assoc, o, &routes.addresses(&socks), true)?;
    for (i, c) in o.capacities.iter().enumerate().take(n) {
        assoc.set_destination_capacity(PathId(i), *c);
    }
    let start = socks.now();
    let total = src.len();
    // Unacknowledged bytes the sender keeps in memory: twice the receive buffer,
    // within 1–32 MiB; pieces are whole chunks, so no write leaves a short one.
    let window = (2 * o.rbuf as u64).clamp(1 << 20, 32 << 20);
    let piece = assoc.max_payload() as usize * 64;
    let mut ticker = Ticker::new();
    loop {
        while !src.is_done() && assoc.unacked_bytes() < window {
            match src.next_piece(piece) {
                Ok(b) => assoc.write(Payload::Bytes(b)),
                Err(e) => {
                    assoc.abort(socks.now(), Some(CAUSE_USER_INITIATED_ABORT));
                    let _ = flush(&mut socks, &mut assoc, &routes).await;
                    return Err(e);
                }
            }
        }
        if src.is_done() && assoc.unacked_bytes() == 0 {
            assoc.close();
        }
        let done = src.read() - assoc.unacked_bytes().min(src.read());
        ticker.tick(socks.now(), done, &assoc.observer().paths, o);
        if flush_and_check(&mut socks, &mut assoc, &routes, o, start).await? {
            break;
        }
        let wake = until(ticker.wake(assoc.poll_timeout(), o), o.deadline(start));
        match next(&mut socks, wake, o).await {
            Wake::Packet(Arrival {
                local,
                from,
                packet: Ok(p),
                ..
            }) => {
                let now = socks.now();
                let admitted = if p.vtag == local_vtag {
                    admit(
                        &mut socks,
                        &mut trust,
                        (local, from),
                        p,
                        peer_vtag,
                        routes.peer_port,
                    )
                    .await
                } else {
                    vec![(local, p)] // the core counts and drops it
                };
                for (l, p) in admitted {
                    deliver(&mut assoc, now, routes.path_of(l), p);
                }
                if let Some(d) = assoc.take_extension_chunks().iter().find_map(parse_digest) {
                    digest = Some(d);
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
    let sha256 = src.sha256();
    if confirm {
        check_digest((total, &sha256), digest)?;
    }
    Ok(Report {
        bytes: total,
        seconds,
        sha256,
        confirmed: confirm,
        paths: assoc.observer().paths.clone(),
        rejected: rejected + assoc.stats().bad_vtag + trust.dropped,
        receiver_rates,
        routes: routes.addresses(&socks),
    })
}
