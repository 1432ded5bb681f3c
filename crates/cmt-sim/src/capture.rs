//! pcap capture of the association under study: every packet either end hands to the
//! network, encoded with the wire codec and framed as SCTP over UDP over IPv4
//! (`cmt_sim::pcap`), timestamped with simulated time. Path p's sender address is
//! 10.0.(p+1).1, its receiver 10.0.(p+1).2; both use UDP port 9899 (RFC 6951).

use std::io::Write;
use std::net::{Ipv4Addr, SocketAddr};

use crate::pcap::{self, Pcap};
use cmt_core::{wire, Packet, Time};

/// An open capture.
pub struct Capture {
    /// The open file (taken when finished).
    out: Option<Pcap<Box<dyn Write>>>,
    scratch: Vec<u8>,
    error: Option<std::io::Error>,
    /// Packets written.
    pub packets: u64,
}

impl Capture {
    /// Starts a capture on `out` (writes the file header).
    pub fn new(out: Box<dyn Write>) -> std::io::Result<Self> {
        Ok(Capture {
            out: Some(Pcap::new(out)?),
            scratch: Vec::new(),
            error: None,
            packets: 0,
        })
    }

    /// Records a packet sent by `side` (0 = sender, 1 = receiver) on `path` at `now`.
    ///
    /// Kept out of line: its packet builder needs kilobytes of stack, which the
    /// simulator's send loop, where it is called, would otherwise reserve on every call.
    #[inline(never)]
    pub fn packet(&mut self, now: Time, side: usize, path: usize, packet: &Packet) {
        let Some(out) = self.out.as_mut().filter(|_| self.error.is_none()) else {
            return;
        };
        let net = (path as u8).wrapping_add(1);
        let ends = [Ipv4Addr::new(10, 0, net, 1), Ipv4Addr::new(10, 0, net, 2)];
        let port = pcap::SCTP_UDP_PORT;
        wire::encode(packet, port, port, &mut self.scratch);
        let (src, dst) = (
            SocketAddr::from((ends[side], port)),
            SocketAddr::from((ends[1 - side], port)),
        );
        match out.record(now.as_nanos(), src, dst, &self.scratch) {
            Ok(()) => self.packets += 1,
            Err(e) => self.error = Some(e),
        }
    }

    /// Flushes and closes; the first write error, if any. Later packets are ignored.
    pub fn finish(&mut self) -> std::io::Result<()> {
        let out = self.out.take();
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        out.map_or(Ok(()), |p| p.into_inner().flush())
    }
}
