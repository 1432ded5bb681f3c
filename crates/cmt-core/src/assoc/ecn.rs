//! Explicit congestion notification (RFC 3168; RFC 9260 Appendix A; docs/algorithms.md
//! §1.11, D49).
//!
//! When both ends offered ECN in the INIT exchange, every packet carrying DATA goes out
//! ECN-capable (ECT(0)). A receiver that gets such a packet marked Congestion
//! Experienced (CE) by a queue puts an ECNE chunk with the packet's lowest TSN in front
//! of every SACK it sends, until a CWR chunk answers that TSN or a later one. The
//! sender cuts the window of the path that carried the marked TSN as a fast retransmit
//! would — at most once per window of that path, sharing the loss rule's recover point,
//! so a mark and a loss of the same window cut once — and bundles a CWR with its next
//! DATA packet. Nothing is retransmitted: the packet arrived.

use super::{Association, Transmit};
use crate::event::{Event, Observer};
use crate::packet::{Chunk, Packet};
use crate::time::Time;
use crate::tsn::unwrap_tsn;
use crate::view::PathId;

/// An association's ECN state.
#[derive(Debug, Default)]
pub(super) struct EcnState {
    /// Both ends offered ECN: DATA goes out ECT(0), marks are echoed and answered.
    pub(super) on: bool,
    /// Receiver side: the lowest TSN of the marked packet being echoed, until a CWR
    /// answers it. A further mark while one is echoed adds nothing (the sender cuts at
    /// most once per window anyway).
    echo: Option<u32>,
    /// Sender side: the TSN of the latest echo, for the CWR the next DATA packet carries.
    cwr: Option<u32>,
}

impl EcnState {
    /// ECN in use (`on`: both ends offered it) or not.
    pub(super) fn new(on: bool) -> Self {
        EcnState {
            on,
            ..Default::default()
        }
    }
}

impl Transmit {
    /// A packet sent as it is, not ECN-capable (control chunks).
    pub(super) fn plain(path: PathId, packet: Packet) -> Transmit {
        Transmit {
            path,
            packet,
            ect: false,
        }
    }
}

impl<O: Observer> Association<O> {
    /// Whether ECN is in use: this end's configuration offers it and so did the peer.
    pub fn ecn_in_use(&self) -> bool {
        self.ecn.on
    }

    /// Receiver side: a packet arrived marked CE; `lowest` is the wire TSN of its first
    /// DATA chunk (`None`: it carried none, and there is nothing to echo).
    pub(super) fn on_ce_mark(&mut self, lowest: Option<u32>) {
        let Some(tsn) = lowest.filter(|_| self.ecn.on) else {
            return;
        };
        self.stats.ce_marked += 1;
        if self.ecn.echo.is_none() {
            self.ecn.echo = Some(tsn);
            // The echo goes at once, not after the SACK delay (RFC 3168 §6.1.3: the
            // next ACK carries ECN-Echo).
            self.rcv.sack_now = true;
        }
    }

    /// Receiver side: the peer reduced for our echo of `tsn`. A CWR for an earlier TSN
    /// than the one echoed answers an older echo and leaves this one going.
    pub(super) fn on_cwr(&mut self, tsn: u32) {
        if !self.ecn.on {
            self.stats.bogus_chunks += 1;
            return;
        }
        if let Some(e) = self.ecn.echo {
            if tsn.wrapping_sub(e) as i32 >= 0 {
                self.ecn.echo = None;
            }
        }
    }

    /// Sender side: an ECN Echo for the packet whose lowest TSN is `tsn`. The path its
    /// latest transmission went on is cut once per window; an echo of a TSN already
    /// cumulatively acknowledged (the same echo repeated in later SACKs) is answered
    /// without a cut; one for a TSN never sent is ignored.
    pub(super) fn on_ecne(&mut self, now: Time, tsn: u32) {
        if !self.ecn.on {
            self.stats.bogus_chunks += 1;
            return;
        }
        let ext = unwrap_tsn(self.snd.cum_ack, tsn);
        if ext >= self.snd.next_tsn {
            self.stats.bogus_chunks += 1;
            return;
        }
        self.stats.ecn_echoes += 1;
        self.ecn.cwr = Some(tsn);
        let Some(k) = ext.checked_sub(self.snd.cum_ack + 1) else {
            return;
        };
        let path = self.snd.chunks[k as usize].path;
        let p = &mut self.paths[path];
        if p.recovery.recover.is_some_and(|r| ext <= r) {
            return; // this window was cut already, for a loss or a mark
        }
        p.recovery.recover = Some(self.snd.next_tsn - 1);
        self.stats.ecn_cuts += 1;
        self.obs
            .event(now, &Event::CongestionMarked { path, tsn: ext });
        self.fast_rtx_cut(now, path);
    }

    /// A SACK packet, with the ECN Echo in front while one is due (the sender reads it
    /// before the SACK acknowledges the marked TSN).
    pub(super) fn sack_transmit(&self, path: PathId, mut packet: Packet) -> Transmit {
        if let Some(lowest_tsn) = self.ecn.echo {
            packet.chunks.insert(0, Chunk::Ecne { lowest_tsn });
        }
        Transmit::plain(path, packet)
    }

    /// A DATA packet: ECN-capable when ECN is on, with the CWR that answers the latest
    /// echo in front.
    pub(super) fn data_packet(&mut self, path: PathId, mut packet: Packet) -> Transmit {
        if let Some(lowest_tsn) = self.ecn.cwr.take() {
            packet.chunks.insert(0, Chunk::Cwr { lowest_tsn });
        }
        Transmit {
            path,
            packet,
            ect: self.ecn.on,
        }
    }
}
