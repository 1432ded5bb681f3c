//! Datagrams handed to an association by a dispatcher instead of read from its own
//! sockets: a receiver serving many associations reads the listening sockets in one
//! task and routes each datagram, by its verification tag, to the association it
//! belongs to (`transfer::serve`). The association sends through the same sockets.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use tokio::sync::mpsc;

/// Datagrams queued for one association before the dispatcher drops the next ones (a
/// loss to the protocol), whatever their size; [`Outbox::offer`] bounds their bytes.
pub const INBOX_DATAGRAMS: usize = 4096;

/// One datagram for an association.
pub struct Routed {
    /// Index of the local socket it arrived on.
    pub socket: usize,
    /// Its sender.
    pub from: SocketAddr,
    /// The UDP payload.
    pub bytes: Vec<u8>,
    /// It arrived marked Congestion Experienced.
    pub ce: bool,
}

/// Where a dispatcher puts an association's datagrams.
pub struct Outbox {
    tx: mpsc::Sender<Routed>,
    /// Bytes sent and not yet taken by the association.
    queued: Arc<AtomicUsize>,
}

impl Outbox {
    /// Queues `r` unless [`INBOX_DATAGRAMS`] datagrams or `max_bytes` bytes wait
    /// already (or the association is gone); whether it was queued.
    pub fn offer(&self, r: Routed, max_bytes: usize) -> bool {
        let n = r.bytes.len();
        if self.queued.load(Ordering::Relaxed) + n > max_bytes {
            return false;
        }
        let ok = self.tx.try_send(r).is_ok();
        if ok {
            self.queued.fetch_add(n, Ordering::Relaxed);
        }
        ok
    }
}

/// An association's end of its [`Outbox`], and the datagram taken last.
pub(crate) struct Inbox {
    rx: mpsc::Receiver<Routed>,
    queued: Arc<AtomicUsize>,
    /// The bytes of the datagram handed out last.
    pub(crate) last: Vec<u8>,
}

impl Inbox {
    /// A channel: the dispatcher's side and the association's.
    pub(crate) fn channel() -> (Outbox, Inbox) {
        let (tx, rx) = mpsc::channel(INBOX_DATAGRAMS);
        let queued = Arc::new(AtomicUsize::new(0));
        let inbox = Inbox {
            rx,
            queued: queued.clone(),
            last: Vec::new(),
        };
        (Outbox { tx, queued }, inbox)
    }

    /// The next datagram's socket, sender and CE mark (its bytes in [`last`](Self::last)). When
    /// the dispatcher is gone nothing comes any more: this waits forever, and the
    /// association's own timers end it.
    pub(crate) async fn next(&mut self) -> (usize, SocketAddr, bool) {
        match self.rx.recv().await {
            Some(r) => {
                self.queued.fetch_sub(r.bytes.len(), Ordering::Relaxed);
                self.last = r.bytes;
                (r.socket, r.from, r.ce)
            }
            None => std::future::pending().await,
        }
    }

    /// Whether datagrams wait to be handed out.
    pub(crate) fn has_more(&self) -> bool {
        !self.rx.is_empty()
    }
}
