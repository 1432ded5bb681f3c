//! Outgoing datagrams gathered into GSO batches (generic segmentation offload): one
//! `sendmsg` carries up to `max_segments` datagrams for one destination, all of one
//! size except a shorter last one — the shape the kernel's UDP GSO accepts. Datagrams
//! for another destination, or longer than the batch's segment size, start the next
//! batch; batches keep the order datagrams were queued in.

use std::net::SocketAddr;

/// When datagrams for one destination leave together in one GSO send.
///
/// Measured (BENCHMARKS.md, "Real runtime"): over loopback GSO raises one association
/// from 2.2–2.3 to 2.8 Gbit/s at MTU 1500; over two veth paths shaped with `tbf` (50 and
/// 20 Mbit/s) it lowered goodput from 63.5 to 57–60 Mbit/s in every one of eight paired
/// runs. The per-packet trace shows why at the protocol level: in slow start's overshoot
/// the fast retransmissions of chunks lost on one path were lost again on the other, and
/// only a T3-rtx timeout (RTO 1 s) recovered them; without GSO that happened in none of
/// those runs. (Why the kernel's queueing of GSO batches makes that loss likelier is not
/// established.) Hence `Auto`: batch towards loopback addresses only.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Gso {
    /// Towards loopback addresses only.
    #[default]
    Auto,
    /// Always, where the kernel offers it.
    On,
    /// Never: one datagram per send.
    Off,
}

impl Gso {
    /// How many datagrams one send to `to` may carry, given the socket's limit.
    pub(crate) fn segments(self, to: SocketAddr, max: usize) -> usize {
        match self {
            Gso::On => max,
            Gso::Auto if to.ip().is_loopback() => max,
            Gso::Auto | Gso::Off => 1,
        }
    }
}

impl std::str::FromStr for Gso {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "auto" => Ok(Gso::Auto),
            "on" => Ok(Gso::On),
            "off" => Ok(Gso::Off),
            _ => Err(format!("`{s}` is not one of auto, on, off")),
        }
    }
}

/// The most payload one GSO send may carry (a UDP datagram's length field, less
/// headroom for IPv6 headers).
const MAX_BATCH_BYTES: usize = 65_000;

/// One batch: datagrams of `segment` bytes (the last may be shorter), back to back.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Batch {
    /// Index of the local socket.
    pub(crate) local: usize,
    /// Destination.
    pub(crate) to: SocketAddr,
    /// Where its bytes are in [`TxQueue::bytes`].
    pub(crate) start: usize,
    pub(crate) end: usize,
    /// The size of every datagram but the last.
    pub(crate) segment: usize,
    /// Sent ECN-capable (ECT(0)).
    pub(crate) ect: bool,
}

impl Batch {
    /// How many datagrams it holds.
    pub(crate) fn datagrams(&self) -> usize {
        (self.end - self.start).div_ceil(self.segment)
    }
}

/// Datagrams waiting to be sent, as batches.
#[derive(Debug, Default)]
pub(crate) struct TxQueue {
    bytes: Vec<u8>,
    batches: Vec<Batch>,
    /// Whether the last batch ended with a short datagram (nothing may follow it).
    closed: bool,
}

impl TxQueue {
    /// Queues `datagram` from socket `local` to `to`, ECN-capable when `ect` (a batch
    /// carries one ECN field); `max_segments` is how many datagrams one send may carry
    /// (1 without GSO).
    pub(crate) fn push(
        &mut self,
        (local, to, ect): (usize, SocketAddr, bool),
        datagram: &[u8],
        max_segments: usize,
    ) {
        let len = datagram.len();
        let start = self.bytes.len();
        self.bytes.extend_from_slice(datagram);
        let joins = match self.batches.last() {
            Some(b) => {
                !self.closed
                    && (b.local, b.to, b.ect) == (local, to, ect)
                    && len <= b.segment
                    && b.datagrams() < max_segments
                    && b.end - b.start + len <= MAX_BATCH_BYTES
            }
            None => false,
        };
        if joins {
            let b = self
                .batches
                .last_mut()
                .expect("joins only an existing batch");
            b.end += len;
            self.closed = len < b.segment;
        } else {
            self.batches.push(Batch {
                local,
                to,
                start,
                end: start + len,
                segment: len.max(1),
                ect,
            });
            self.closed = false;
        }
    }

    /// How many datagrams are queued.
    pub(crate) fn datagrams(&self) -> usize {
        self.batches.iter().map(Batch::datagrams).sum()
    }

    /// The queued batches, in order.
    pub(crate) fn batches(&self) -> &[Batch] {
        &self.batches
    }

    /// The bytes of `b`.
    pub(crate) fn bytes(&self, b: &Batch) -> &[u8] {
        &self.bytes[b.start..b.end]
    }

    /// Forgets everything queued (its memory stays for the next round).
    pub(crate) fn clear(&mut self) {
        self.bytes.clear();
        self.batches.clear();
        self.closed = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(port: u16) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], port))
    }

    fn shape(q: &TxQueue) -> Vec<(usize, u16, usize, usize)> {
        q.batches()
            .iter()
            .map(|b| (b.local, b.to.port(), b.segment, b.datagrams()))
            .collect()
    }

    #[test]
    fn equal_datagrams_to_one_destination_share_a_send_until_a_short_one_ends_it() {
        let mut q = TxQueue::default();
        for _ in 0..3 {
            q.push((0, addr(1), false), &[7; 1000], 64);
        }
        q.push((0, addr(1), false), &[8; 400], 64); // shorter: the batch's last
        q.push((0, addr(1), false), &[9; 400], 64); // cannot follow a short one
        assert_eq!(shape(&q), [(0, 1, 1000, 4), (0, 1, 400, 1)]);
        let first = q.batches()[0];
        assert_eq!(q.bytes(&first).len(), 3400);
        assert_eq!(q.bytes(&first)[3000], 8);
    }

    #[test]
    fn another_destination_socket_longer_datagram_or_full_batch_starts_a_new_batch() {
        let mut q = TxQueue::default();
        q.push((0, addr(1), false), &[0; 500], 2);
        q.push((0, addr(2), false), &[0; 500], 2); // destination
        q.push((1, addr(2), false), &[0; 500], 2); // socket
        q.push((1, addr(2), false), &[0; 600], 2); // longer
        q.push((1, addr(2), false), &[0; 600], 2);
        q.push((1, addr(2), false), &[0; 600], 2); // the batch holds max_segments = 2
        assert_eq!(
            shape(&q),
            [
                (0, 1, 500, 1),
                (0, 2, 500, 1),
                (1, 2, 500, 1),
                (1, 2, 600, 2),
                (1, 2, 600, 1)
            ]
        );
        q.clear();
        assert!(q.batches().is_empty());
    }

    /// One send carries one ECN field: an ECN-capable datagram does not join a batch
    /// of ones that are not, nor the other way round.
    #[test]
    fn a_change_of_ecn_field_starts_a_new_batch() {
        let mut q = TxQueue::default();
        q.push((0, addr(1), false), &[0; 500], 8);
        q.push((0, addr(1), true), &[0; 500], 8);
        q.push((0, addr(1), true), &[0; 500], 8);
        q.push((0, addr(1), false), &[0; 500], 8);
        let ect: Vec<(bool, usize)> = q.batches().iter().map(|b| (b.ect, b.datagrams())).collect();
        assert_eq!(ect, [(false, 1), (true, 2), (false, 1)]);
    }

    #[test]
    fn without_gso_every_datagram_is_its_own_send() {
        let mut q = TxQueue::default();
        for _ in 0..3 {
            q.push((0, addr(1), false), &[0; 100], 1);
        }
        assert_eq!(shape(&q), [(0, 1, 100, 1); 3]);
    }

    #[test]
    fn auto_batches_towards_loopback_only() {
        let lo = addr(1);
        let far = SocketAddr::from(([10, 1, 0, 2], 1));
        assert_eq!(Gso::Auto.segments(lo, 64), 64);
        assert_eq!(Gso::Auto.segments(far, 64), 1);
        assert_eq!(Gso::On.segments(far, 64), 64);
        assert_eq!(Gso::Off.segments(lo, 64), 1);
        assert_eq!("on".parse::<Gso>(), Ok(Gso::On));
        assert!("yes".parse::<Gso>().unwrap_err().contains("`yes`"));
    }

    #[test]
    fn a_batch_stays_under_the_largest_udp_payload() {
        let mut q = TxQueue::default();
        for _ in 0..100 {
            q.push((0, addr(1), false), &[0; 1452], 64);
        }
        let sizes: Vec<usize> = q.batches().iter().map(|b| b.end - b.start).collect();
        assert!(sizes.iter().all(|&s| s <= MAX_BATCH_BYTES), "{sizes:?}");
        assert_eq!(sizes.iter().sum::<usize>(), 145_200);
        assert_eq!(q.batches()[0].datagrams(), 44); // 44 × 1452 = 63,888
    }
}
