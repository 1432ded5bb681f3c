//! Writing received data into a pipe (standard output) without letting the pipe's
//! reader stall the association: a thread of its own does the writing, so a reader that
//! pauses blocks that thread, never the association's loop; at most a fixed number of
//! bytes wait for it ([`Pipe::has_room`]), and while they do the receiver stops reading
//! from the association, whose window then closes (flow control reaches the sender).

use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use tokio::sync::Notify;

/// Bytes gathered into one write call at most.
const WRITE_MAX: usize = 1 << 20;

/// A writer thread fed through a channel, with the bytes waiting counted. Dropped
/// without [`finish`](Pipe::finish), the thread is not waited for: it ends once what
/// is queued is written or writing fails (a reader that never reads must not hold up
/// the process's end).
pub struct Pipe {
    tx: Option<mpsc::Sender<Bytes>>,
    shared: Arc<Shared>,
    limit: u64,
    thread: Option<std::thread::JoinHandle<()>>,
    label: String,
}

/// What the writer thread and the association's side both see.
struct Shared {
    /// Bytes handed over and not written yet.
    queued: AtomicU64,
    /// The first write error, as a message.
    failed: Mutex<Option<String>>,
    /// Woken whenever bytes were written or writing failed.
    ready: Arc<Notify>,
}

impl Pipe {
    /// Starts the thread writing to `w`; at most about `limit` bytes wait for it.
    /// `label` names the destination in errors ("standard output").
    pub fn spawn(w: impl Write + Send + 'static, label: &str, limit: u64) -> Pipe {
        let (tx, rx) = mpsc::channel();
        let shared = Arc::new(Shared {
            queued: AtomicU64::new(0),
            failed: Mutex::new(None),
            ready: Arc::new(Notify::new()),
        });
        let theirs = shared.clone();
        let label_t = label.to_string();
        let thread = std::thread::spawn(move || write_all(w, &rx, &theirs, &label_t));
        Pipe {
            tx: Some(tx),
            shared,
            limit,
            thread: Some(thread),
            label: label.to_string(),
        }
    }

    /// Whether more may be handed over now (fewer than the limit's bytes wait).
    pub fn has_room(&self) -> bool {
        self.pending() < self.limit
    }

    /// Bytes handed over and not written yet.
    pub fn pending(&self) -> u64 {
        self.shared.queued.load(Ordering::Acquire)
    }

    /// Woken when bytes were written (room again, or everything written) or writing
    /// failed.
    pub fn ready(&self) -> Arc<Notify> {
        self.shared.ready.clone()
    }

    /// The first write error, if writing failed.
    pub fn error(&self) -> Option<String> {
        self.shared.failed.lock().ok().and_then(|f| f.clone())
    }

    /// Hands `b` to the writer (it never blocks); an error once writing has failed.
    pub fn send(&mut self, b: Bytes) -> Result<(), String> {
        if let Some(e) = self.error() {
            return Err(e);
        }
        let n = b.len() as u64;
        self.shared.queued.fetch_add(n, Ordering::AcqRel);
        let sent = self.tx.as_ref().is_some_and(|tx| tx.send(b).is_ok());
        if !sent {
            return Err(self
                .error()
                .unwrap_or_else(|| format!("{}: cannot write: closed", self.label)));
        }
        Ok(())
    }

    /// Ends the writing once everything handed over is written: the writer's error if
    /// any. Call when [`pending`](Self::pending) is 0 (then it returns at once).
    pub fn finish(&mut self) -> Result<(), String> {
        self.tx = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        match self.error() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

/// The writer thread: gathers what is queued (up to [`WRITE_MAX`]) into one write,
/// until the channel closes or a write fails.
fn write_all(mut w: impl Write, rx: &mpsc::Receiver<Bytes>, s: &Shared, label: &str) {
    let mut buf = Vec::with_capacity(WRITE_MAX);
    while let Ok(first) = rx.recv() {
        buf.clear();
        buf.extend_from_slice(&first);
        while buf.len() < WRITE_MAX {
            match rx.try_recv() {
                Ok(b) => buf.extend_from_slice(&b),
                Err(_) => break,
            }
        }
        let done = w.write_all(&buf).and_then(|()| w.flush());
        if let Err(e) = done {
            if let Ok(mut f) = s.failed.lock() {
                *f = Some(format!("{label}: cannot write: {e}"));
            }
            s.ready.notify_one();
            return;
        }
        s.queued.fetch_sub(buf.len() as u64, Ordering::AcqRel);
        s.ready.notify_one();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    /// A writer that takes nothing until released, then records everything.
    struct Gate {
        open: Arc<std::sync::atomic::AtomicBool>,
        got: Arc<Mutex<Vec<u8>>>,
    }

    impl Write for Gate {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            while !self.open.load(Ordering::Acquire) {
                std::thread::sleep(Duration::from_millis(1));
            }
            self.got.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    fn wait(what: &str, ok: impl Fn() -> bool) {
        let t = Instant::now();
        while !ok() {
            assert!(t.elapsed() < Duration::from_secs(10), "{what}");
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    #[test]
    fn a_stalled_reader_fills_the_pipe_to_its_limit_and_nothing_is_lost() {
        let open = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let got = Arc::new(Mutex::new(Vec::new()));
        let gate = Gate {
            open: open.clone(),
            got: got.clone(),
        };
        let mut p = Pipe::spawn(gate, "standard output", 10_000);
        let mut sent = Vec::new();
        let mut i = 0u8;
        // Handing over never blocks; it stops when the limit is reached.
        while p.has_room() {
            let b = Bytes::from(vec![i; 1000]);
            sent.extend_from_slice(&b);
            p.send(b).unwrap();
            i = i.wrapping_add(1);
        }
        assert_eq!(p.pending(), 10_000);
        open.store(true, Ordering::Release);
        wait("the writer drains", || p.pending() == 0);
        p.finish().unwrap();
        assert_eq!(*got.lock().unwrap(), sent);
    }

    struct Broken;

    impl Write for Broken {
        fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
            Err(std::io::Error::from(std::io::ErrorKind::BrokenPipe))
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_reader_that_went_away_is_an_error_on_the_next_hand_over() {
        let mut p = Pipe::spawn(Broken, "standard output", 1 << 20);
        p.send(Bytes::from_static(b"abc")).unwrap();
        wait("the failure is seen", || p.error().is_some());
        let e = p.send(Bytes::from_static(b"def")).unwrap_err();
        assert!(e.starts_with("standard output: cannot write:"), "{e}");
        assert!(p.finish().is_err());
    }
}
