//! The established phase of a transfer, one loop for both ends: move application data
//! (the [`End`] does: the sender writes its source in, the receiver stores what was
//! delivered), send what the core has, wait for a packet, a timer or an abort, hand
//! packets through the source check to the core, until the association closes, fails or
//! runs out of time.

use std::net::SocketAddr;
use std::sync::Arc;

use cmt_core::setup::CAUSE_USER_INITIATED_ABORT;
use cmt_core::wire::chunk_type;
use cmt_core::{Association, Packet, PathId, Time};
use tokio::sync::Notify;

use super::addresses::Addresses;
use super::digest::refusal_chunk;
use super::error::TransferError;
use super::options::Options;
use super::report::{Counters, Report};
use super::routes::Routes;
use super::session::{
    abort, admit, deliver, finish_trace, flush, flush_and_check, next, until, Ticker, Wake,
};
use crate::ifwatch::AddrWatch;
use crate::io::{Arrival, Sockets};
use crate::trust::Trust;

/// What differs between the sender and the receiver once the association is up.
pub(super) trait End {
    /// Moves application data in or out before each flush. An error ends the transfer
    /// with an ABORT carrying the returned error cause.
    fn exchange(&mut self, assoc: &mut Association<Counters>) -> Result<(), (String, u16)>;
    /// Bytes done so far, for progress reports.
    fn done(&self, assoc: &Association<Counters>) -> u64;
    /// A packet to answer directly instead of handing it to the core (the receiver's
    /// COOKIE ACK for a repeated COOKIE ECHO); `trusted`: under our tag from a
    /// confirmed source.
    fn direct_reply(&self, _p: &Packet, _trusted: bool) -> Option<Packet> {
        None
    }
    /// A packet from a trusted source under our tag arrived on `local` from `from`;
    /// returns the path whose remote address this changed, if any.
    fn heard(&mut self, _routes: &mut Routes, _local: usize, _from: SocketAddr) -> Option<PathId> {
        None
    }
    /// After packets were handed to the core (the sender takes the receiver's digest).
    fn after_packets(&mut self, _assoc: &mut Association<Counters>) {}
    /// Woken when there is new application data to move (a stream being sent).
    fn input(&self) -> Option<Arc<Notify>> {
        None
    }
    /// Whether arrival `a` is another association knocking (an INIT, or a COOKIE ECHO
    /// not under `local_vtag`) that this end answers: a one-shot receiver's door.
    fn knocks(&self, _a: &Arrival, _local_vtag: u32) -> bool {
        false
    }
    /// Answers a knock; `stale`: this association's peer has been silent for
    /// [`STALE`](super::door::STALE). True when the new association replaces this one.
    async fn answer_knock(
        &mut self,
        _socks: &mut Sockets,
        _o: &Options,
        _a: &Arrival,
        _stale: bool,
    ) -> bool {
        false
    }
}

/// The association and what the loop keeps around it.
pub(super) struct Established {
    pub(super) assoc: Association<Counters>,
    pub(super) routes: Routes,
    pub(super) trust: Trust,
    pub(super) local_vtag: u32,
    pub(super) peer_vtag: u32,
    /// Datagrams that did not parse.
    pub(super) rejected: u64,
    /// When the established phase began.
    pub(super) start: Time,
    /// The interfaces paths follow (none on the receiver).
    pub(super) watch: AddrWatch,
    /// Our addresses as the peer knows them (RFC 5061 reconfiguration).
    pub(super) addrs: Addresses,
}

impl Established {
    /// After a graceful close: writes the trace and the capture, and reports the
    /// transfer (`bytes` moved, with this SHA-256; whether the digest was `confirmed`).
    pub(super) fn finish(
        &mut self,
        socks: &mut Sockets,
        o: &Options,
        (bytes, sha256, confirmed): (u64, String, bool),
        receiver_rates: bool,
    ) -> Result<Report, TransferError> {
        let seconds = (socks.now().as_nanos() - self.start.as_nanos()) as f64 / 1e9;
        finish_trace(&mut self.assoc, o).map_err(TransferError::Io)?;
        super::report::note_rtts(&mut self.assoc);
        socks.finish_capture().map_err(TransferError::Io)?;
        Ok(Report {
            bytes,
            seconds,
            sha256,
            confirmed,
            paths: self.assoc.observer().paths.clone(),
            rejected: self.rejected + self.assoc.stats().bad_vtag + self.trust.dropped,
            receiver_rates,
            routes: self.routes.addresses(socks),
            io: socks.counts(),
            resumed_from: 0,
            stored_as: None,
            reordering: self.assoc.observer().reorder.summary(),
        })
    }
}

/// Runs the established phase until the association has closed gracefully.
pub(super) async fn run<E: End>(
    socks: &mut Sockets,
    s: &mut Established,
    end: &mut E,
    o: &Options,
) -> Result<(), TransferError> {
    let mut ticker = Ticker::new();
    let input = end.input();
    loop {
        if let Err((e, cause)) = end.exchange(&mut s.assoc) {
            s.assoc.abort(socks.now(), Some(cause));
            let _ = flush(socks, &mut s.assoc, &s.routes).await;
            return Err(TransferError::Io(e));
        }
        let done = end.done(&s.assoc);
        ticker.tick(socks.now(), done, &mut s.assoc, o);
        let closed = flush_and_check(socks, &mut s.assoc, &s.routes, o, s.start).await;
        if closed.map_err(TransferError::Ended)? {
            return Ok(());
        }
        let wake = until(ticker.wake(s.assoc.poll_timeout(), o), o.deadline(s.start));
        match next(socks, wake, o, Some(&mut s.watch), input.as_deref()).await {
            Wake::Packet(a) if end.knocks(&a, s.local_vtag) => {
                let silent = socks.now().saturating_since(s.assoc.last_heard());
                if end
                    .answer_knock(socks, o, &a, silent >= super::door::STALE)
                    .await
                {
                    // Replaced: the stale peer is told, in case it is only slow.
                    s.assoc.abort(socks.now(), Some(CAUSE_USER_INITIATED_ABORT));
                    let _ = flush(socks, &mut s.assoc, &s.routes).await;
                    return Err(TransferError::Aborted);
                }
            }
            Wake::Packet(Arrival {
                local,
                from,
                packet: Ok(p),
                authenticated,
                ..
            }) => on_packet(socks, s, end, (local, from, authenticated), p).await?,
            Wake::Packet(Arrival { packet: Err(_), .. }) => s.rejected += 1,
            Wake::Timer => s.assoc.handle_timeout(socks.now()),
            Wake::Interfaces => s.follow_interfaces(socks),
            Wake::Input => {}
            Wake::Abort => {
                // Shed by a serving receiver: the reason goes to the peer with the ABORT.
                let shed = o.meter.as_ref().and_then(|m| m.shed_reason());
                if let Some(why) = &shed {
                    s.assoc.bundle_with(chunk_type::ABORT, refusal_chunk(why));
                }
                return Err(match abort(socks, &mut s.assoc, &s.routes).await {
                    Err(e) => TransferError::Io(e),
                    Ok(()) => shed.map_or(TransferError::Aborted, TransferError::Refused),
                });
            }
        }
    }
}

/// One parsed datagram: answered directly, handed to the core as it is (another
/// verification tag: the core counts and drops it), or passed through the source check.
async fn on_packet<E: End>(
    socks: &mut Sockets,
    s: &mut Established,
    end: &mut E,
    (local, from, authenticated): (usize, SocketAddr, bool),
    p: Packet,
) -> Result<(), TransferError> {
    let trusted = p.vtag == s.local_vtag && s.trust.is_confirmed(from);
    if let Some(reply) = end.direct_reply(&p, trusted) {
        return socks
            .send(local, from, s.routes.peer_port, &reply)
            .await
            .map_err(|e| TransferError::Io(e.to_string()));
    }
    let now = socks.now();
    if p.vtag != s.local_vtag {
        // Under the peer's tag (an ABORT or SHUTDOWN COMPLETE with the T bit) only from
        // a source that speaks for the peer and that a path still goes to: a stack
        // answers a packet sent to an address it does not use (a probe of an unknown
        // source, a SACK still under way to an address it has just deleted with
        // DEL-IP) with such an ABORT, which must not end the association.
        if s.trust.is_confirmed(from) && s.routes.is_live_remote(from, &s.assoc) {
            deliver(&mut s.assoc, now, s.routes.path_of(local, from), p);
            end.after_packets(&mut s.assoc);
        } else {
            s.rejected += 1;
        }
        return Ok(());
    }
    let peer = (s.peer_vtag, s.routes.peer_port);
    let arrival = (local, from, authenticated);
    for (l, p) in admit(socks, &mut s.trust, arrival, p, peer.0, peer.1).await {
        if let Some(moved) = end.heard(&mut s.routes, l, from) {
            // Round trips measured to the old address are not this route's.
            s.assoc.observer_mut().forget_rtt(moved);
        }
        deliver(&mut s.assoc, now, s.routes.path_of(l, from), p);
    }
    end.after_packets(&mut s.assoc);
    if s.assoc.reconfiguration_enabled() {
        let released = s.apply_requests(socks, from);
        for (l, source, p) in released {
            deliver(&mut s.assoc, now, s.routes.path_of(l, source), p);
        }
        s.take_results(socks);
    }
    Ok(())
}
