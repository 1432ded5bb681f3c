//! A transfer's connection once the handshake is done, the same for every role
//! (sender, receiver, served receiver, measurement, resumed transfer): one opening
//! ([`open`]), one loop ([`Connection::run`]) whose steps are its methods ([`steps`]),
//! reconfiguration as another `impl` block ([`reconfig`]), and an [`End`] — what
//! differs between the roles — that moves application data and turns the finished run
//! into the transfer's verdict.
//!
//! The loop: move application data (the sender writes its source in, the receiver
//! stores what was delivered), send what the core has, wait for a packet, a timer or an
//! abort, hand packets through the source check to the core, until the association
//! closes, fails or runs out of time.

use std::net::SocketAddr;
use std::sync::Arc;

use cmt_core::setup::CAUSE_USER_INITIATED_ABORT;
use cmt_core::wire::chunk_type;
use cmt_core::{Association, Packet, PathId, Time};
use tokio::sync::Notify;

use crate::ifwatch::AddrWatch;
use crate::io::{Arrival, Sockets};
use crate::transfer::arrivals::Recorder;
use crate::transfer::digest::refusal_chunk;
use crate::transfer::error::TransferError;
use crate::transfer::options::Options;
use crate::transfer::report::Counters;
use crate::transfer::routes::Routes;
use crate::transfer::wait::{next, until, Ticker, Wake};
use crate::trust::Trust;
use addresses::Addresses;

mod addresses;
pub(super) mod open;
pub(super) mod reconfig;
mod steps;

pub(super) use open::Opening;

/// What stopped an [`End`]'s exchange of application data: why, and the error cause
/// the ABORT that ends the association carries (RFC 9260 §3.3.10).
#[derive(Debug)]
pub(super) struct Halt {
    /// The error, for the user (reading the source or storing the data failed).
    pub(super) why: String,
    /// The ABORT's error cause.
    pub(super) cause: u16,
}

impl Halt {
    /// A halt with error cause `cause`, for `map_err`.
    pub(super) fn with(cause: u16) -> impl Fn(String) -> Halt {
        move |why| Halt { why, cause }
    }
}

/// What differs between the sender and the receiver once the association is up.
pub(super) trait End {
    /// Moves application data in or out before each flush. An error ends the transfer
    /// with an ABORT carrying the returned error cause.
    fn exchange(&mut self, assoc: &mut Association<Counters>) -> Result<(), Halt>;
    /// The verdict on the finished run: how it ended, read with what the peer said on
    /// the way (a refusal with its reason, the receiver's digest of what it got).
    fn verdict(&mut self, ran: Result<(), TransferError>) -> Result<(), TransferError>;
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
pub(super) struct Connection {
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
    addrs: Addresses,
    /// Whether both ends agreed on receiver-driven rates.
    pub(super) receiver_rates: bool,
    /// The datagram being handled arrived marked Congestion Experienced.
    ce: bool,
    /// A receiver whose sender asked for ARRIVALS: what it records and returns.
    pub(super) arrivals: Option<Recorder>,
}

impl Connection {
    /// Runs the established phase until the association has closed gracefully.
    pub(super) async fn run<E: End>(
        &mut self,
        socks: &mut Sockets,
        end: &mut E,
        o: &Options,
    ) -> Result<(), TransferError> {
        let mut ticker = Ticker::new();
        let input = end.input();
        loop {
            if let Err(halt) = end.exchange(&mut self.assoc) {
                self.abort(socks, halt.cause).await;
                return Err(TransferError::Io(halt.why));
            }
            if let Some(r) = &mut self.arrivals {
                r.attach(&mut self.assoc);
            }
            let done = end.done(&self.assoc);
            ticker.tick(socks.now(), done, &mut self.assoc, o);
            if self
                .flush_and_check(socks, o)
                .await
                .map_err(TransferError::Ended)?
            {
                return Ok(());
            }
            let timer = ticker.wake(self.assoc.poll_timeout(), o);
            let wake = until(timer, o.deadline(self.start));
            match next(socks, wake, o, Some(&mut self.watch), input.as_deref()).await {
                Wake::Packet(a) if end.knocks(&a, self.local_vtag) => {
                    let silent = socks.now().saturating_since(self.assoc.last_heard());
                    let stale = silent >= crate::transfer::door::STALE;
                    if end.answer_knock(socks, o, &a, stale).await {
                        // Replaced: the stale peer is told, in case it is only slow.
                        self.abort(socks, CAUSE_USER_INITIATED_ABORT).await;
                        return Err(TransferError::Aborted);
                    }
                }
                Wake::Packet(Arrival {
                    local,
                    from,
                    packet: Ok(p),
                    authenticated,
                    ce,
                    ..
                }) => {
                    self.ce = ce;
                    self.on_packet(socks, end, (local, from, authenticated), p)
                        .await?
                }
                Wake::Packet(Arrival { packet: Err(_), .. }) => self.rejected += 1,
                Wake::Timer => self.assoc.handle_timeout(socks.now()),
                Wake::Interfaces => self.follow_interfaces(socks),
                Wake::Input => {}
                Wake::Abort => return Err(self.stop(socks, o).await),
            }
        }
    }

    /// Stops at the user's request, or sheds the association for a serving receiver,
    /// whose reason goes to the peer with the ABORT.
    async fn stop(&mut self, socks: &mut Sockets, o: &Options) -> TransferError {
        let shed = o.meter.as_ref().and_then(|m| m.shed_reason());
        if let Some(why) = &shed {
            self.assoc
                .bundle_with(chunk_type::ABORT, refusal_chunk(why));
        }
        match self.abort_by_user(socks).await {
            Err(e) => TransferError::Io(e),
            Ok(()) => shed.map_or(TransferError::Aborted, TransferError::Refused),
        }
    }

    /// One parsed datagram: answered directly, handed to the core as it is (another
    /// verification tag: the core counts and drops it), or passed through the source
    /// check.
    async fn on_packet<E: End>(
        &mut self,
        socks: &mut Sockets,
        end: &mut E,
        (local, from, authenticated): (usize, SocketAddr, bool),
        p: Packet,
    ) -> Result<(), TransferError> {
        let trusted = p.vtag == self.local_vtag && self.trust.is_confirmed(from);
        if let Some(reply) = end.direct_reply(&p, trusted) {
            return socks
                .send(local, from, self.routes.peer_port, &reply)
                .await
                .map_err(|e| TransferError::Io(e.to_string()));
        }
        let now = socks.now();
        if p.vtag != self.local_vtag {
            // Under the peer's tag (an ABORT or SHUTDOWN COMPLETE with the T bit) only
            // from a source that speaks for the peer and that a path still goes to: a
            // stack answers a packet sent to an address it does not use (a probe of an
            // unknown source, a SACK still under way to an address it has just deleted
            // with DEL-IP) with such an ABORT, which must not end the association.
            if self.trust.is_confirmed(from) && self.routes.is_live_remote(from, &self.assoc) {
                self.deliver(now, (local, from), p);
                end.after_packets(&mut self.assoc);
            } else {
                self.rejected += 1;
            }
            return Ok(());
        }
        for (l, p) in self.admit(socks, (local, from, authenticated), p).await {
            if let Some(moved) = end.heard(&mut self.routes, l, from) {
                // Round trips measured to the old address are not this route's.
                self.assoc.observer_mut().forget_rtt(moved);
            }
            self.deliver(now, (l, from), p);
        }
        end.after_packets(&mut self.assoc);
        if self.assoc.reconfiguration_enabled() {
            let released = self.apply_requests(socks, from);
            for (l, source, p) in released {
                self.deliver(now, (l, source), p);
            }
            self.take_results(socks);
        }
        Ok(())
    }
}
