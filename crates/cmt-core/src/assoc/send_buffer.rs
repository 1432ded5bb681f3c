//! Linux MPTCP's connection-level send buffer (`send_buffer = "linux"`;
//! docs/algorithms.md §1.16, decision D57): new data goes out only while the data
//! sent and not cumulatively acknowledged fits the buffer.
//!
//! Sources (Linux 6.x): `mptcp_sendmsg` and `mptcp_send_limit` (`net/mptcp/protocol.c`:
//! the writer waits while the connection's queued memory reaches `sk_sndbuf`, and a
//! data fragment leaves that memory only when the cumulative DATA_ACK passes it,
//! `__mptcp_clean_una`); `__mptcp_sync_sndbuf` (`protocol.h`: the connection's
//! buffer is `tcp_wmem[0]` plus the sum of its subflows' buffers); and
//! `tcp_sndbuf_expand` (`net/ipv4/tcp_input.c`: a subflow's buffer grows, never
//! shrinks, to twice its congestion window, at least 10 packets, in kernel memory per
//! packet — the payload rounded up with its headers to a power of two, plus the
//! packet's own bookkeeping — capped at `tcp_wmem[2]`).
//!
//! The consequence the model is for: when one path stops delivering, the cumulative
//! ack stops, the buffer fills with data the receiver holds out of order, and the
//! other paths go idle — which is when Linux's reinjection can use them.

use super::Association;
use crate::config::SendBuffer;
use crate::event::Observer;

/// `tcp_wmem[0]`, Linux's default (bytes).
const TCP_WMEM_MIN: u64 = 4096;
/// `tcp_wmem[2]`, Linux's default (bytes): one subflow's buffer at most.
const TCP_WMEM_MAX: u64 = 4 << 20;
/// Packets a subflow's buffer is sized for at least (`TCP_INIT_CWND`).
const MIN_SEGS: u64 = 10;
/// What a packet's head allocation holds besides its payload (bytes):
/// `MAX_TCP_HEADER` and the aligned `skb_shared_info`. Chosen so that a 1,448-byte
/// segment needs a 2 KiB head, which is what Linux 6.18 on x86-64 charged on this
/// project's machine (`ss -tm`: a subflow's `tb` was 2 × cwnd × 2,304 bytes).
const HEAD_OVERHEAD: u64 = 576;
/// The aligned `struct sk_buff` on x86-64 (bytes).
const SKB_OVERHEAD: u64 = 256;

/// Kernel memory Linux charges a subflow per packet of `payload` bytes
/// (`tcp_sndbuf_expand`'s `per_mss`): 2,304 bytes for a 1,448-byte segment.
fn per_packet_truesize(payload: u64) -> u64 {
    (payload + HEAD_OVERHEAD).next_power_of_two() + SKB_OVERHEAD
}

impl<O: Observer> Association<O> {
    /// Whether `len` more user bytes may be sent as new data: always with the buffer
    /// off or nothing outstanding; otherwise while the user bytes sent and not
    /// cumulatively acknowledged, with these, fit the buffer.
    pub(super) fn send_buffer_room(&self, len: u64) -> bool {
        match self.cfg.send_buffer {
            SendBuffer::Off => true,
            SendBuffer::Linux => {
                let held = self.snd.chunk_bytes();
                held == 0 || held + len <= self.linux_send_buffer()
            }
        }
    }

    /// The connection's buffer: `tcp_wmem[0]` and, for every path that carries data,
    /// twice its largest window so far (at least 10 packets) in kernel memory.
    fn linux_send_buffer(&self) -> u64 {
        let subflows: u64 = self
            .paths
            .iter()
            .filter(|p| p.carries_data())
            .map(|p| self.subflow_buffer(p))
            .sum();
        TCP_WMEM_MIN + subflows
    }

    /// A subflow's buffer (`tcp_sndbuf_expand`): twice its largest window so far, at
    /// least 10 packets, in kernel memory, at most `tcp_wmem[2]`.
    pub(super) fn subflow_buffer(&self, p: &crate::path::Path) -> u64 {
        let per_packet = per_packet_truesize(self.cfg.max_payload() as u64);
        let segs = (p.sending.largest_cwnd / self.cfg.mtu as u64).max(MIN_SEGS);
        (2 * segs * per_packet).min(TCP_WMEM_MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_sized_segment_costs_what_linux_charges() {
        // 1,448 + 576 rounds up to 2,048; with the sk_buff, 2,304: what `ss -tm` showed
        // Linux 6.18 charging (a subflow's sndbuf 2 × cwnd × 2,304).
        assert_eq!(per_packet_truesize(1448), 2304);
        assert_eq!(per_packet_truesize(1452), 2304);
        // A 9,000-byte MTU's segment needs a 16 KiB head.
        assert_eq!(per_packet_truesize(8948), 16384 + 256);
    }
}
