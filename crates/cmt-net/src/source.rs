//! What a sender sends: bytes in memory, a file read as the transfer goes, or a stream
//! of unknown length (standard input, a pipe), handed out in pieces and hashed (SHA-256)
//! on the way, so a sender never holds more than its window of a file.

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use bytes::Bytes;
use sha2::{Digest, Sha256};
use tokio::sync::{mpsc, Notify};

use crate::sink::hex;

enum Origin {
    Memory(Bytes),
    File(File, PathBuf),
    Stream(Stream),
    Generated(Generated),
}

/// Pseudo-random bytes (xorshift64*), made as they are asked for, until a time after
/// the first piece: a measurement's data (`cmtlab send --measure`).
struct Generated {
    length: std::time::Duration,
    until: Option<std::time::Instant>,
    state: u64,
    ended: bool,
}

impl Generated {
    /// Up to `max` bytes, or none once the time is over.
    fn take(&mut self, max: usize) -> Bytes {
        let length = self.length;
        let until = *self
            .until
            .get_or_insert_with(|| std::time::Instant::now() + length);
        if self.ended || std::time::Instant::now() >= until {
            self.ended = true;
            return Bytes::new();
        }
        let mut buf = vec![0u8; max];
        for chunk in buf.chunks_mut(8) {
            self.state ^= self.state >> 12;
            self.state ^= self.state << 25;
            self.state ^= self.state >> 27;
            let v = self.state.wrapping_mul(0x2545_f491_4f6c_dd1d).to_le_bytes();
            chunk.copy_from_slice(&v[..chunk.len()]);
        }
        Bytes::from(buf)
    }
}

/// A source of data to send.
pub struct Source {
    from: Origin,
    /// Total bytes; `None` for a stream, whose end is known only when it comes.
    len: Option<u64>,
    read: u64,
    hasher: Sha256,
}

/// Bytes read from a stream by a thread of its own (reading may block for as long as
/// the producer takes; the association must not), handed over through a bounded
/// channel: at most [`STREAM_BUFFERED`] pieces of [`STREAM_PIECE`] bytes wait, and the
/// thread blocks while the association's window is full.
struct Stream {
    rx: mpsc::Receiver<std::io::Result<Bytes>>,
    /// What is left of the piece taken last.
    pending: Bytes,
    ended: bool,
    ready: Arc<Notify>,
    label: String,
}

/// Bytes the reading thread gathers into one piece (fewer when the stream pauses or
/// ends).
pub const STREAM_PIECE: usize = 256 << 10;

/// Pieces read ahead of the association at most.
pub const STREAM_BUFFERED: usize = 8;

/// Reads `r` into pieces until it ends or fails, sending each to `tx` and waking
/// `ready`; stops when the receiving side is gone. The end is told by dropping `tx`,
/// then waking `ready` once more.
fn read_stream(r: impl Read, tx: mpsc::Sender<std::io::Result<Bytes>>, ready: Arc<Notify>) {
    pump(r, &tx, &ready);
    drop(tx);
    ready.notify_one();
}

fn pump(mut r: impl Read, tx: &mpsc::Sender<std::io::Result<Bytes>>, ready: &Notify) {
    loop {
        let mut buf = vec![0u8; STREAM_PIECE];
        let mut n = 0;
        let got = loop {
            match r.read(&mut buf[n..]) {
                Ok(0) => break Ok(n),
                // A pause in the stream: hand over what there is.
                Ok(k) if n + k == buf.len() || k < 4096 => break Ok(n + k),
                Ok(k) => n += k,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => break Err(e),
            }
        };
        let item = match got {
            Ok(0) => return,
            Ok(n) => {
                buf.truncate(n);
                Ok(Bytes::from(buf))
            }
            Err(e) => Err(e),
        };
        let failed = item.is_err();
        if tx.blocking_send(item).is_err() || failed {
            return;
        }
        ready.notify_one();
    }
}

impl Source {
    /// Bytes already in memory.
    pub fn memory(data: Bytes) -> Source {
        Source {
            len: Some(data.len() as u64),
            from: Origin::Memory(data),
            read: 0,
            hasher: Sha256::new(),
        }
    }

    /// A file, opened now (so a missing file fails before the handshake). A regular
    /// file is read as the transfer goes; a pipe, FIFO, terminal or socket
    /// (`/dev/stdin` of a pipeline, say) is sent as a stream of unknown length. A
    /// directory is refused.
    pub fn file(path: &Path) -> Result<Source, String> {
        let at = |e: std::io::Error| format!("{}: cannot read: {e}", path.display());
        let f = File::open(path).map_err(at)?;
        let meta = f.metadata().map_err(at)?;
        if meta.is_dir() {
            return Err(format!(
                "{}: a directory (send a stream of it: tar c DIR | cmtlab send - …)",
                path.display()
            ));
        }
        if !meta.is_file() {
            return Ok(Self::stream(f, &path.display().to_string()));
        }
        Ok(Source {
            len: Some(meta.len()),
            from: Origin::File(f, path.to_path_buf()),
            read: 0,
            hasher: Sha256::new(),
        })
    }

    /// A stream of unknown length (`label` names it in errors, e.g. "standard input"),
    /// read by a thread of its own; call inside a tokio runtime or not, but hand the
    /// source to a transfer running in one.
    pub fn stream(r: impl Read + Send + 'static, label: &str) -> Source {
        let (tx, rx) = mpsc::channel(STREAM_BUFFERED);
        let ready = Arc::new(Notify::new());
        let wake = ready.clone();
        std::thread::spawn(move || read_stream(r, tx, wake));
        Source {
            len: None,
            from: Origin::Stream(Stream {
                rx,
                pending: Bytes::new(),
                ended: false,
                ready,
                label: label.to_string(),
            }),
            read: 0,
            hasher: Sha256::new(),
        }
    }

    /// Generated data for `seconds` from the first piece taken (so the handshake does
    /// not count), made as the association takes it: a stream of unknown length.
    pub fn generated(seconds: f64) -> Source {
        Source {
            len: None,
            from: Origin::Generated(Generated {
                length: std::time::Duration::from_secs_f64(seconds),
                until: None,
                state: 0x9e37_79b9_7f4a_7c15,
                ended: false,
            }),
            read: 0,
            hasher: Sha256::new(),
        }
    }

    /// Total bytes, when known before the end (not for a stream).
    pub fn len(&self) -> Option<u64> {
        self.len
    }

    /// Whether the source is known to have no bytes at all.
    pub fn is_empty(&self) -> bool {
        self.len == Some(0)
    }

    /// Woken when a stream has more to hand out (`None` for memory and files, which
    /// always have).
    pub fn ready(&self) -> Option<Arc<Notify>> {
        match &self.from {
            Origin::Stream(s) => Some(s.ready.clone()),
            _ => None,
        }
    }

    /// Bytes handed out so far.
    pub fn read(&self) -> u64 {
        self.read
    }

    /// Everything was handed out (a stream: it ended, and all it gave was handed out).
    pub fn is_done(&self) -> bool {
        match (&self.from, self.len) {
            (Origin::Stream(s), _) => s.ended && s.pending.is_empty(),
            (Origin::Generated(g), _) => g.ended,
            (_, Some(len)) => self.read >= len,
            (_, None) => true,
        }
    }

    /// The next piece of at most `max` bytes (fewer at the end, and from a stream
    /// whatever it has given so far); `None` when there is nothing to hand out now (done,
    /// or a stream waiting for its producer: [`ready`](Self::ready) wakes). A file that
    /// shrank while being sent, or a stream that failed, is an error, not a short
    /// transfer.
    pub fn next_piece(&mut self, max: usize) -> Result<Option<Bytes>, String> {
        let piece = match &mut self.from {
            Origin::Memory(b) => {
                let n = (b.len() - self.read as usize).min(max);
                b.slice(self.read as usize..self.read as usize + n)
            }
            Origin::File(f, path) => {
                let n = (self.len.unwrap_or(0) - self.read).min(max as u64) as usize;
                let mut buf = vec![0u8; n];
                f.read_exact(&mut buf)
                    .map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
                Bytes::from(buf)
            }
            Origin::Stream(s) => s.take(max)?,
            Origin::Generated(g) => g.take(max),
        };
        if piece.is_empty() {
            return Ok(None);
        }
        self.hasher.update(&piece);
        self.read += piece.len() as u64;
        Ok(Some(piece))
    }

    /// Passes over the first `n` bytes (the part a resuming receiver holds), hashing
    /// them: the next piece starts at `n`, and [`sha256`](Self::sha256) still covers the
    /// whole file. Returns whether those bytes have the SHA-256 `expect`. Only at the
    /// start.
    pub fn skip_verified(&mut self, n: u64, expect: &[u8; 32]) -> Result<bool, String> {
        let len = self
            .len
            .ok_or("cannot resume a stream: its start is gone")?;
        if self.read != 0 || n > len {
            return Err(format!("cannot resume at byte {n} of {len}"));
        }
        let h = match &mut self.from {
            Origin::Memory(b) => Sha256::new_with_prefix(&b[..n as usize]),
            Origin::File(f, path) => crate::resume::hash_prefix(f, n)
                .map_err(|e| format!("{}: cannot read: {e}", path.display()))?,
            Origin::Stream(_) | Origin::Generated(_) => return Err("cannot resume a stream".into()),
        };
        let same = h.clone().finalize().as_slice() == expect;
        self.hasher = h;
        self.read = n;
        Ok(same)
    }

    /// SHA-256 (hex) of everything handed out.
    pub fn sha256(&self) -> String {
        hex(&self.hasher.clone().finalize())
    }
}

impl Stream {
    /// Up to `max` bytes of what the reading thread has handed over (empty: nothing now,
    /// or the end).
    fn take(&mut self, max: usize) -> Result<Bytes, String> {
        if self.pending.is_empty() && !self.ended {
            match self.rx.try_recv() {
                Ok(Ok(b)) => self.pending = b,
                Ok(Err(e)) => return Err(format!("{}: cannot read: {e}", self.label)),
                Err(mpsc::error::TryRecvError::Empty) => {}
                Err(mpsc::error::TryRecvError::Disconnected) => self.ended = true,
            }
        }
        let n = self.pending.len().min(max);
        Ok(self.pending.split_to(n))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_comes_out_in_pieces_with_the_hash_of_the_whole() {
        let p = std::env::temp_dir().join(format!("cmtlab-source-{}", std::process::id()));
        let data: Vec<u8> = (0..10_000u32).map(|i| (i * 7) as u8).collect();
        std::fs::write(&p, &data).unwrap();
        let mut s = Source::file(&p).unwrap();
        let mut got = Vec::new();
        while !s.is_done() {
            let b = s.next_piece(4096).unwrap().unwrap();
            assert!(b.len() == 4096 || s.is_done());
            got.extend_from_slice(&b);
        }
        assert_eq!(got, data);
        assert_eq!(s.sha256(), hex(&Sha256::digest(&data)));
        let m = Source::memory(Bytes::from(data.clone()));
        assert_eq!(m.len(), Some(10_000));
        let e = Source::file(Path::new("/no/such/file")).err().unwrap();
        assert!(e.contains("/no/such/file: cannot read"), "{e}");
        let _ = std::fs::remove_file(&p);
    }

    /// A reader that gives its bytes a few at a time, pausing between them, then fails
    /// or ends.
    struct Trickle {
        data: Vec<u8>,
        at: usize,
        fail_at_end: bool,
    }

    impl Read for Trickle {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            if self.at == self.data.len() {
                return match self.fail_at_end {
                    true => Err(std::io::Error::other("producer died")),
                    false => Ok(0),
                };
            }
            std::thread::sleep(std::time::Duration::from_micros(200));
            let n = buf.len().min(1000).min(self.data.len() - self.at);
            buf[..n].copy_from_slice(&self.data[self.at..self.at + n]);
            self.at += n;
            Ok(n)
        }
    }

    /// Drains `s` the way the sender does (taking what is there, waiting when nothing
    /// is), for at most 20 s.
    fn drain(s: &mut Source, max: usize) -> Result<Vec<u8>, String> {
        let mut got = Vec::new();
        let until = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while !s.is_done() {
            assert!(std::time::Instant::now() < until, "the stream never ended");
            match s.next_piece(max)? {
                Some(b) => {
                    assert!(!b.is_empty() && b.len() <= max);
                    got.extend_from_slice(&b);
                }
                None => std::thread::sleep(std::time::Duration::from_millis(1)),
            }
        }
        Ok(got)
    }

    #[test]
    fn a_stream_that_pauses_comes_out_whole_in_order_with_its_hash() {
        let data: Vec<u8> = (0..300_000u32).map(|i| (i * 13 + i / 7) as u8).collect();
        let r = Trickle {
            data: data.clone(),
            at: 0,
            fail_at_end: false,
        };
        let mut s = Source::stream(r, "test stream");
        assert_eq!(s.len(), None);
        assert!(s.ready().is_some());
        assert_eq!(drain(&mut s, 5000).unwrap(), data);
        assert_eq!(s.read(), data.len() as u64);
        assert_eq!(s.sha256(), hex(&Sha256::digest(&data)));
        let e = s.skip_verified(0, &[0; 32]).unwrap_err();
        assert!(e.contains("cannot resume a stream"), "{e}");
    }

    #[test]
    fn a_stream_that_fails_is_an_error_not_a_short_transfer() {
        let r = Trickle {
            data: vec![7; 10_000],
            at: 0,
            fail_at_end: true,
        };
        let mut s = Source::stream(r, "standard input");
        let e = drain(&mut s, 4096).unwrap_err();
        assert_eq!(e, "standard input: cannot read: producer died");
    }

    #[test]
    fn a_fifo_is_read_as_a_stream_and_a_directory_is_refused() {
        let dir = std::env::temp_dir().join(format!("cmtlab-fifo-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let e = Source::file(&dir).err().unwrap();
        assert!(e.contains("a directory"), "{e}");
        let fifo = dir.join("fifo");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(made.unwrap().success(), "mkfifo");
        let writer = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::write(fifo, vec![5u8; 70_000]).unwrap())
        };
        let mut s = Source::file(&fifo).unwrap();
        assert_eq!(s.len(), None);
        assert_eq!(drain(&mut s, 8192).unwrap(), vec![5u8; 70_000]);
        writer.join().unwrap();
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn generated_data_ends_after_its_time_and_is_not_constant() {
        let mut s = Source::generated(0.2);
        assert_eq!(s.len(), None);
        let t = std::time::Instant::now();
        let first = s.next_piece(4096).unwrap().unwrap();
        assert!(first.len() == 4096 && first.iter().any(|&b| b != first[0]));
        while s.next_piece(4096).unwrap().is_some() {
            assert!(t.elapsed() < std::time::Duration::from_secs(5));
        }
        assert!(s.is_done() && t.elapsed() >= std::time::Duration::from_millis(200));
        assert!(s.next_piece(4096).unwrap().is_none());
    }
}
