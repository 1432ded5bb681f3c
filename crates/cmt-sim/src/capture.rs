//! pcap capture of the association under study: every packet either end hands to the
//! network, encoded with the wire codec and framed as SCTP over UDP over IPv4
//! (`cmt_core::pcap`), timestamped with simulated time. Path p's sender address is
//! 10.0.(p+1).1, its receiver 10.0.(p+1).2; both use UDP port 9899 (RFC 6951).

use std::io::Write;
use std::net::Ipv4Addr;

use cmt_core::{pcap, wire, Packet, Time};

/// An open capture.
pub struct Capture {
    out: Box<dyn Write>,
    scratch: Vec<u8>,
    record: Vec<u8>,
    error: Option<std::io::Error>,
    /// Packets written.
    pub packets: u64,
}

impl Capture {
    /// Starts a capture on `out` (writes the file header).
    pub fn new(mut out: Box<dyn Write>) -> std::io::Result<Self> {
        out.write_all(&pcap::file_header())?;
        Ok(Capture {
            out,
            scratch: Vec::new(),
            record: Vec::new(),
            error: None,
            packets: 0,
        })
    }

    /// Records a packet sent by `side` (0 = sender, 1 = receiver) on `path` at `now`.
    pub fn packet(&mut self, now: Time, side: usize, path: usize, packet: &Packet) {
        if self.error.is_some() {
            return;
        }
        let net = (path as u8).wrapping_add(1);
        let ends = [Ipv4Addr::new(10, 0, net, 1), Ipv4Addr::new(10, 0, net, 2)];
        let port = pcap::SCTP_UDP_PORT;
        wire::encode(packet, port, port, &mut self.scratch);
        self.record.clear();
        pcap::record(
            &mut self.record,
            now.as_nanos(),
            (ends[side], port),
            (ends[1 - side], port),
            &self.scratch,
        );
        match self.out.write_all(&self.record) {
            Ok(()) => self.packets += 1,
            Err(e) => self.error = Some(e),
        }
    }

    /// Flushes; the first write error, if any.
    pub fn finish(&mut self) -> std::io::Result<()> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        self.out.flush()
    }
}
