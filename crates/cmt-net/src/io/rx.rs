//! Datagrams received in batches: one `recvmmsg` fills up to [`BATCH`] buffers, and
//! with GRO (generic receive offload) a buffer holds several datagrams of one sender,
//! `stride` bytes apart. They are handed out one at a time, in arrival order.

use std::io::IoSliceMut;
use std::net::SocketAddr;
use std::ops::Range;

use quinn_udp::RecvMeta;

/// Messages one receive call may return.
pub(crate) const BATCH: usize = quinn_udp::BATCH_SIZE;

/// Bytes per message buffer: the largest UDP payload, which also bounds what GRO
/// coalesces into one buffer.
const SLOT: usize = 65_536;

/// The received messages not handed out yet.
pub(crate) struct RxBatch {
    mem: Vec<u8>,
    meta: [RecvMeta; BATCH],
    /// The socket they came from.
    socket: usize,
    /// Messages filled by the last receive call.
    filled: usize,
    /// The message being handed out, and the offset of its next datagram.
    msg: usize,
    offset: usize,
}

impl Default for RxBatch {
    fn default() -> Self {
        RxBatch {
            mem: vec![0; SLOT * BATCH],
            ..Self::unused()
        }
    }
}

impl RxBatch {
    /// A batch never filled (an association whose datagrams are routed to it): no
    /// buffers.
    pub(crate) fn unused() -> Self {
        RxBatch {
            mem: Vec::new(),
            meta: [RecvMeta::default(); BATCH],
            socket: 0,
            filled: 0,
            msg: 0,
            offset: 0,
        }
    }
}

/// One received datagram: its socket, its sender and where its bytes are.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Datagram {
    pub(crate) socket: usize,
    pub(crate) from: SocketAddr,
    pub(crate) bytes: Range<usize>,
    /// Its IP header said Congestion Experienced (RFC 3168): a queue marked it.
    pub(crate) ce: bool,
}

impl RxBatch {
    /// Refills from `recv`, which receives into the buffers given and returns how many
    /// messages it filled (their metadata in the slice). Whatever was not handed out is
    /// dropped: call only when [`next`](Self::next) returned `None`.
    pub(crate) fn fill(
        &mut self,
        socket: usize,
        recv: impl FnOnce(&mut [IoSliceMut<'_>], &mut [RecvMeta]) -> std::io::Result<usize>,
    ) -> std::io::Result<usize> {
        let mut slots = self.mem.chunks_mut(SLOT);
        let mut iovs: [IoSliceMut<'_>; BATCH] =
            std::array::from_fn(|_| IoSliceMut::new(slots.next().expect("BATCH slots")));
        let n = recv(&mut iovs, &mut self.meta)?;
        self.socket = socket;
        self.filled = n.min(BATCH);
        self.msg = 0;
        self.offset = 0;
        Ok(self.filled)
    }

    /// The next datagram, if any is left.
    pub(crate) fn next(&mut self) -> Option<Datagram> {
        while self.msg < self.filled {
            let m = &self.meta[self.msg];
            if self.offset < m.len {
                let stride = if m.stride == 0 { m.len } else { m.stride };
                let start = self.msg * SLOT + self.offset;
                let len = stride.min(m.len - self.offset);
                self.offset += len;
                return Some(Datagram {
                    socket: self.socket,
                    from: m.addr,
                    bytes: start..start + len,
                    ce: m.ecn == Some(quinn_udp::EcnCodepoint::Ce),
                });
            }
            self.msg += 1;
            self.offset = 0;
        }
        None
    }

    /// Whether [`next`](Self::next) has a datagram left to hand out.
    pub(crate) fn has_more(&self) -> bool {
        (self.msg..self.filled).any(|m| {
            let done = if m == self.msg { self.offset } else { 0 };
            self.meta[m].len > done
        })
    }

    /// The bytes of a datagram [`next`](Self::next) returned.
    pub(crate) fn bytes(&self, d: &Datagram) -> &[u8] {
        &self.mem[d.bytes.clone()]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coalesced_buffers_split_at_their_stride_in_arrival_order() {
        let mut rx = RxBatch::default();
        let a = SocketAddr::from(([127, 0, 0, 1], 5));
        let b = SocketAddr::from(([127, 0, 0, 2], 6));
        let n = rx
            .fill(3, |bufs, meta| {
                // Message 0: three datagrams of 4, 4 and 2 bytes coalesced by GRO.
                bufs[0][..10].copy_from_slice(b"aaaabbbbcc");
                meta[0].addr = a;
                meta[0].len = 10;
                meta[0].stride = 4;
                // Message 1: one datagram.
                bufs[1][..3].copy_from_slice(b"xyz");
                meta[1].addr = b;
                meta[1].len = 3;
                meta[1].stride = 3;
                Ok(2)
            })
            .unwrap();
        assert_eq!(n, 2);
        let mut got = Vec::new();
        assert!(rx.has_more());
        while let Some(d) = rx.next() {
            assert_eq!(d.socket, 3);
            got.push((d.from, rx.bytes(&d).to_vec()));
            assert_eq!(
                rx.has_more(),
                got.len() < 4,
                "after {} datagrams",
                got.len()
            );
        }
        let want: Vec<(SocketAddr, Vec<u8>)> = vec![
            (a, b"aaaa".to_vec()),
            (a, b"bbbb".to_vec()),
            (a, b"cc".to_vec()),
            (b, b"xyz".to_vec()),
        ];
        assert_eq!(got, want);
        assert_eq!(rx.next(), None);
    }

    #[test]
    fn a_failed_receive_leaves_nothing_to_hand_out() {
        let mut rx = RxBatch::default();
        let e = rx.fill(0, |_, _| Err(std::io::ErrorKind::WouldBlock.into()));
        assert!(e.is_err());
        assert_eq!(rx.next(), None);
    }
}
