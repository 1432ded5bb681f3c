//! A stream source a test feeds by hand: it yields what the test sends and ends when
//! the test drops its end — a sender that pauses for as long as the test wants.

use cmt_net::source::Source;

/// The reading end.
struct Fed(std::sync::mpsc::Receiver<Vec<u8>>, Vec<u8>);

impl std::io::Read for Fed {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.1.is_empty() {
            match self.0.recv() {
                Ok(v) => self.1 = v,
                Err(_) => return Ok(0),
            }
        }
        let n = buf.len().min(self.1.len());
        buf[..n].copy_from_slice(&self.1[..n]);
        self.1.drain(..n);
        Ok(n)
    }
}

/// A stream source the test feeds: the source, and its feeding end.
pub fn fed() -> (Source, std::sync::mpsc::Sender<Vec<u8>>) {
    let (tx, rx) = std::sync::mpsc::channel();
    (Source::stream(Fed(rx, Vec::new()), "test stream"), tx)
}
