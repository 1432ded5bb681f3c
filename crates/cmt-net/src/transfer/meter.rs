//! What a serving receiver knows of one of its associations while it runs, and how it
//! tells one to go: the association's task counts the stream's bytes as they are
//! stored and notes when the stream's header has named the file; the server reads
//! both to police its slots ([`super::serve`]) and, when it sheds an association, leaves
//! the reason here for the task to send with its ABORT.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

/// One association's progress, shared between its task and its server.
#[derive(Debug, Default)]
pub struct Meter {
    bytes: AtomicU64,
    named: AtomicBool,
    shed: Mutex<Option<String>>,
}

impl Meter {
    /// `n` more bytes of the stream were stored (its header included).
    pub fn moved(&self, n: u64) {
        self.bytes.fetch_add(n, Ordering::Relaxed);
    }

    /// Bytes of the stream stored so far.
    pub fn bytes(&self) -> u64 {
        self.bytes.load(Ordering::Relaxed)
    }

    /// The stream's header arrived and named a file.
    pub fn set_named(&self) {
        self.named.store(true, Ordering::Relaxed);
    }

    /// Whether the stream's header has named a file.
    pub fn is_named(&self) -> bool {
        self.named.load(Ordering::Relaxed)
    }

    /// Asks the association to end for `why` (told to its sender with the ABORT); the
    /// first reason given stays.
    pub fn shed(&self, why: String) {
        let mut s = self.shed.lock().unwrap_or_else(|e| e.into_inner());
        s.get_or_insert(why);
    }

    /// Why the server shed the association, if it did.
    pub fn shed_reason(&self) -> Option<String> {
        self.shed.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}
