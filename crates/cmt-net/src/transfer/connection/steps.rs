//! The steps of the established phase that both ends take, as methods of
//! [`Connection`]: send what the core has, check how the association stands, pass an
//! arrival through the source check and hand it to the core, abort, and write the
//! outputs when it is over.

use std::net::SocketAddr;
use std::time::Duration;

use cmt_core::setup::CAUSE_USER_INITIATED_ABORT;
use cmt_core::{Chunk, Packet, Time};

use super::Connection;
use crate::io::Sockets;
use crate::transfer::error::{Ended, TransferError};
use crate::transfer::options::Options;
use crate::transfer::report::{note_rtts, Report};

impl Connection {
    /// Sends every transmit the association has now, in as few system calls as the
    /// kernel allows (consecutive packets for one path leave in one GSO batch).
    pub(in crate::transfer) async fn flush(&mut self, socks: &mut Sockets) {
        self.queue_transmits(socks);
        // A failing interface is a lost packet to the protocol, not the end of the
        // transfer: the other paths carry on.
        let _ = socks.send_queued().await;
    }

    /// Queues every transmit the association has now.
    fn queue_transmits(&mut self, socks: &mut Sockets) {
        let now = socks.now();
        let routes = &self.routes;
        while let Some(t) = self.assoc.poll_transmit(now) {
            let (local, remote) = routes.paths[t.path.0.min(routes.paths.len() - 1)];
            socks.queue_ecn(local, remote, routes.peer_port, &t.packet, t.ect);
        }
    }

    /// Sends what the core has, then checks how the association stands: `Ok(true)` once
    /// it has closed, how it ended when it failed or the transfer's time limit has
    /// passed — then an ABORT tells the peer.
    ///
    /// While datagrams of the last receive call remain to be handled, what is queued may
    /// wait for them ([`Sockets::can_defer_sends`]): the next call sends it with theirs.
    /// Nothing is left queued when the loop may block (no datagram is buffered then) or
    /// when this returns anything but `Ok(false)`.
    pub(super) async fn flush_and_check(
        &mut self,
        socks: &mut Sockets,
        o: &Options,
    ) -> Result<bool, Ended> {
        self.queue_transmits(socks);
        let late = socks.now() >= o.deadline(self.start);
        let ends = self.assoc.is_closed() || self.assoc.is_failed() || late;
        if ends || !socks.can_defer_sends() {
            // A failing interface is a lost packet to the protocol (see `flush`).
            let _ = socks.send_queued().await;
        }
        if self.assoc.is_closed() {
            return Ok(true);
        }
        if self.assoc.is_failed() {
            return Err(self.failure());
        }
        if late {
            // A local reason: the ABORT tells the peer at once.
            self.abort(socks, CAUSE_USER_INITIATED_ABORT).await;
            return Err(Ended::TimedOut(Duration::from_secs_f64(o.timeout_s)));
        }
        Ok(false)
    }

    /// Aborts the association with error cause `cause` and sends the ABORT.
    pub(super) async fn abort(&mut self, socks: &mut Sockets, cause: u16) {
        self.assoc.abort(socks.now(), Some(cause));
        self.flush(socks).await;
    }

    /// Aborts at the user's request (a signal): the ABORT goes out with cause
    /// "User-Initiated Abort" and the capture is closed (its error, if writing it
    /// failed).
    pub(super) async fn abort_by_user(&mut self, socks: &mut Sockets) -> Result<(), String> {
        self.abort(socks, CAUSE_USER_INITIATED_ABORT).await;
        socks.finish_capture()
    }

    /// Passes a packet under the association's tag through the source check: the
    /// packets to deliver now (a confirmed source's, or those held for a source that
    /// just answered its probe); a probe goes to a new source. Rejections are counted in
    /// `trust.dropped`.
    pub(super) async fn admit(
        &mut self,
        socks: &mut Sockets,
        (local, from, authenticated): (usize, SocketAddr, bool),
        p: Packet,
    ) -> Vec<(usize, Packet)> {
        let out = self
            .trust
            .on_packet(local, from, p, socks.now(), authenticated);
        if let Some(probe) = out.probe {
            let probe = Packet {
                vtag: self.peer_vtag,
                chunks: vec![probe],
            };
            // A failing send is a lost probe; the next packet from there probes again.
            let _ = socks.send(local, from, self.routes.peer_port, &probe).await;
        }
        out.deliver
    }

    /// Hands a packet that came on `local` from `from` to the association, counting
    /// DATA arrivals per path (and tracing a SACK's arrival at the sender).
    pub(super) fn deliver(&mut self, now: Time, (local, from): (usize, SocketAddr), p: Packet) {
        let path = self.routes.path_of(local, from);
        let bytes: Option<u64> = p
            .chunks
            .iter()
            .filter_map(|c| match c {
                Chunk::Data(d) => Some(d.payload.len() as u64),
                _ => None,
            })
            .reduce(|a, b| a + b);
        if let Some(bytes) = bytes {
            let counts = self.assoc.observer_mut().path(path);
            counts.received_data_packets += 1;
            counts.received_bytes += bytes;
        }
        if let Some((t, true)) = &mut self.assoc.observer_mut().trace {
            t.sender_received(now, path, &p);
        }
        if let Some(r) = &mut self.arrivals {
            let at_us = now.saturating_since(self.start).as_nanos() / 1000;
            r.record(at_us, (local, from), &p);
        }
        // The CE mark belongs to the datagram being handled, not to a packet held
        // earlier and released with it.
        let ce = std::mem::take(&mut self.ce);
        if ce {
            self.assoc.observer_mut().path(path).ce_received += 1;
        }
        self.assoc.handle_packet_ecn(now, path, p, ce)
    }

    /// How a failed association ended.
    fn failure(&self) -> Ended {
        let a = &self.assoc;
        if a.peer_aborted() {
            Ended::PeerAborted(a.peer_abort_cause())
        } else if a.peer_silent() {
            let tolerance = a
                .config()
                .outage
                .map_or(0, |o| o.tolerance.as_secs_f64() as u64);
            Ended::PeerSilent(Duration::from_secs(tolerance))
        } else if a.peer_violated() {
            Ended::PeerViolated
        } else {
            Ended::PeerStopped
        }
    }

    /// After a graceful close: writes the trace and the capture, and reports the
    /// transfer (`bytes` moved, with this SHA-256; whether the digest was `confirmed`).
    pub(in crate::transfer) fn finish(
        &mut self,
        socks: &mut Sockets,
        o: &Options,
        (bytes, sha256, confirmed): (u64, String, bool),
    ) -> Result<Report, TransferError> {
        let seconds = (socks.now().as_nanos() - self.start.as_nanos()) as f64 / 1e9;
        self.finish_trace(o).map_err(TransferError::Io)?;
        note_rtts(&mut self.assoc);
        socks.finish_capture().map_err(TransferError::Io)?;
        Ok(Report {
            bytes,
            seconds,
            sha256,
            confirmed,
            paths: self.assoc.observer().paths.clone(),
            rejected: self.rejected + self.assoc.stats().bad_vtag + self.trust.dropped,
            receiver_rates: self.receiver_rates,
            ecn: self.assoc.ecn_in_use(),
            routes: self.routes.addresses(socks),
            io: socks.counts(),
            resumed_from: 0,
            stored_as: None,
            reordering: self.assoc.observer().reorder.summary(),
            arrivals: None,
        })
    }

    /// Closes the per-packet trace, if any.
    fn finish_trace(&mut self, o: &Options) -> Result<(), String> {
        match (&mut self.assoc.observer_mut().trace, &o.outputs.trace) {
            (Some((t, _)), Some(file)) => t
                .finish()
                .map(|_| ())
                .map_err(|e| format!("--trace {}: cannot write: {e}", file.display())),
            _ => Ok(()),
        }
    }
}
