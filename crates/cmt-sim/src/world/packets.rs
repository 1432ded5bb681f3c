//! Packets in the simulated network, each in a slot from when an endpoint or source
//! emits it until it reaches its destination or is lost. Links, their queues and the
//! propagation pipes hold only a [`Pkt`] handle (12 bytes): a packet with its chunk list
//! and routing is about 100 bytes, and moving it through every stage of every hop was a
//! large part of the cost of a hop. Which slot a packet gets does not affect any
//! outcome (nothing iterates the slots).

use crate::link::{Carried, Ecn, InFlight};

/// A handle to a packet in [`Packets`], with its size on the wire, its ECN field and
/// its flow (what a link reads and a queue may mark).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Pkt {
    slot: u32,
    /// The size on the wire in the low 30 bits (a packet is at most 64 KiB), the ECN
    /// field in the top two ([`ECT`], [`CE`]): the handle stays 12 bytes.
    size_ecn: u32,
    flow: u32,
}

/// [`Pkt::size_ecn`]'s bit for an ECN-capable packet.
const ECT: u32 = 1 << 30;
/// [`Pkt::size_ecn`]'s bit for a packet marked Congestion Experienced.
const CE: u32 = 1 << 31;

impl Pkt {
    /// A queue marked it Congestion Experienced on the way.
    pub(crate) fn is_ce(&self) -> bool {
        self.size_ecn & CE != 0
    }
}

impl Carried for Pkt {
    fn wire_size(&self) -> u32 {
        self.size_ecn & (ECT - 1)
    }
    fn flow(&self) -> u32 {
        self.flow
    }
    fn ecn_capable(&self) -> bool {
        self.size_ecn & (ECT | CE) != 0
    }
    fn mark_ce(&mut self) {
        self.size_ecn = (self.size_ecn & (ECT - 1)) | CE;
    }
}

/// The packets in flight, by slot; freed slots are reused.
#[derive(Default)]
pub(super) struct Packets {
    slots: Vec<Option<InFlight>>,
    free: Vec<u32>,
}

impl Packets {
    /// Keeps `pkt` until [`free`](Self::free); returns its handle.
    pub(super) fn insert(&mut self, pkt: InFlight) -> Pkt {
        let flow = pkt.cargo.flow_key();
        debug_assert!(pkt.size < ECT, "a packet is at most 64 KiB");
        let size_ecn = pkt.size
            | match pkt.ecn {
                Ecn::NotEct => 0,
                Ecn::Ect => ECT,
                Ecn::Ce => CE,
            };
        let slot = match self.free.pop() {
            Some(s) => {
                self.slots[s as usize] = Some(pkt);
                s
            }
            None => {
                self.slots.push(Some(pkt));
                u32::try_from(self.slots.len() - 1).expect("fewer than 2^32 packets in flight")
            }
        };
        Pkt {
            slot,
            size_ecn,
            flow,
        }
    }

    /// The packet of `h`, in place.
    pub(super) fn get_mut(&mut self, h: Pkt) -> &mut InFlight {
        self.slots[h.slot as usize]
            .as_mut()
            .expect("a handle in the network names a packet kept here")
    }

    /// The packet of `h` leaves the network (it arrived or was lost): its slot is free
    /// again. The caller has taken out of it what it needs.
    pub(super) fn free(&mut self, h: Pkt) {
        let slot = &mut self.slots[h.slot as usize];
        debug_assert!(
            slot.is_some(),
            "a handle in the network names a packet kept here"
        );
        *slot = None;
        self.free.push(h.slot);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::{FlowId, RouteId};
    use crate::link::Cargo;
    use cmt_core::Time;

    fn pkt(flow: usize, size: u32) -> InFlight {
        InFlight {
            cargo: Cargo::Background { flow: FlowId(flow) },
            route: RouteId(0),
            hop: 0,
            size,
            sent_at: Time::ZERO,
            ecn: Ecn::NotEct,
        }
    }

    fn flow(p: &InFlight) -> usize {
        match p.cargo {
            Cargo::Background { flow } => flow.0,
            _ => unreachable!("test packets are background packets"),
        }
    }

    /// Each handle gives back its own packet, whatever the order of insertions and
    /// removals, and a freed slot is reused rather than the store growing.
    #[test]
    fn handles_give_back_their_packets_and_slots_are_reused() {
        let mut ps = Packets::default();
        let a = ps.insert(pkt(1, 100));
        let b = ps.insert(pkt(2, 200));
        assert_eq!(b.wire_size(), 200);
        ps.get_mut(a).hop = 3;
        assert_eq!((flow(ps.get_mut(a)), ps.get_mut(a).hop), (1, 3));
        ps.free(a);
        let c = ps.insert(pkt(3, 300));
        assert_eq!(ps.slots.len(), 2, "the freed slot was reused");
        assert_eq!((flow(ps.get_mut(c)), ps.get_mut(c).hop), (3, 0));
        assert_eq!((flow(ps.get_mut(b)), ps.get_mut(b).size), (2, 200));
    }

    /// The handle stays 12 bytes with the ECN field in its size word, and a mark
    /// changes the field only: the size, slot and flow read as before.
    #[test]
    fn the_ecn_field_rides_in_the_size_word() {
        assert_eq!(std::mem::size_of::<Pkt>(), 12);
        let mut ps = Packets::default();
        let mut p = pkt(4, 1500);
        p.ecn = Ecn::Ect;
        let mut h = ps.insert(p);
        assert!(h.ecn_capable() && !h.is_ce());
        h.mark_ce();
        assert!(h.is_ce() && h.ecn_capable());
        assert_eq!((h.wire_size(), flow(ps.get_mut(h))), (1500, 4));
        let plain = ps.insert(pkt(5, 60));
        assert!(!plain.ecn_capable() && !plain.is_ce());
    }
}
