//! `--pcap`: every datagram sent and received, streamed to the file as it goes (memory
//! does not grow with the capture, whatever arrives), opened before the handshake so a
//! bad path fails before any peer is involved.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use cmt_sim::pcap::Pcap;

/// A capture being written.
pub(crate) struct Capture {
    pcap: Pcap<BufWriter<File>>,
    path: PathBuf,
    /// The first write error: later records are skipped, [`finish`](Self::finish)
    /// reports it.
    error: Option<String>,
}

impl Capture {
    /// Creates (or truncates) `path` and writes the pcap file header.
    pub(crate) fn create(path: &Path) -> Result<Capture, String> {
        let at = |e: std::io::Error| format!("--pcap {}: cannot write: {e}", path.display());
        let file = File::create(path).map_err(at)?;
        let pcap = Pcap::new(BufWriter::with_capacity(1 << 16, file)).map_err(at)?;
        Ok(Capture {
            pcap,
            path: path.to_path_buf(),
            error: None,
        })
    }

    /// Records one SCTP packet from `src` to `dst` at `ts_ns`.
    pub(crate) fn record(&mut self, ts_ns: u64, src: SocketAddr, dst: SocketAddr, sctp: &[u8]) {
        if self.error.is_none() {
            if let Err(e) = self.pcap.record(ts_ns, src, dst, sctp) {
                self.error = Some(format!("--pcap {}: cannot write: {e}", self.path.display()));
            }
        }
    }

    /// Flushes the file; the first error of the capture, if any.
    pub(crate) fn finish(self) -> Result<(), String> {
        if let Some(e) = self.error {
            return Err(e);
        }
        let path = self.path;
        self.pcap
            .into_inner()
            .flush()
            .map_err(|e| format!("--pcap {}: cannot write: {e}", path.display()))
    }
}
