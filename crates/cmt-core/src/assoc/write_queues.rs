//! The per-path write queues of Linux MPTCP's send-buffer model (`send_buffer =
//! "linux"`; docs/algorithms.md §1.16, decision D58): which chunks wait unsent on which
//! path, and their bytes. What fills and drains them is `subflow_queue.rs`.

use std::collections::VecDeque;

/// Each path's write queue: TSNs given to it (reserved in the send queue) and not sent.
#[derive(Debug, Default)]
pub(crate) struct SubflowQueues {
    /// Per path, the TSNs in the order they were given, with their DATA chunk bytes.
    pub(super) queues: Vec<VecDeque<(u64, u64)>>,
    /// Per path, their DATA chunk bytes.
    pub(super) bytes: Vec<u64>,
    /// Reserved chunks given back by a path (in no queue), as far as known: the next
    /// chunks to give (0 once a search finds none).
    pub(super) released: usize,
    /// The highest TSN sent from a queue so far.
    pub(super) highest_sent: u64,
}

impl SubflowQueues {
    /// Bytes waiting in path `i`'s queue.
    pub(crate) fn bytes(&self, i: usize) -> u64 {
        self.bytes.get(i).copied().unwrap_or(0)
    }

    /// Bytes waiting in all queues.
    pub(super) fn total(&self) -> u64 {
        self.bytes.iter().sum()
    }

    pub(super) fn head(&self, i: usize) -> Option<u64> {
        self.queues
            .get(i)
            .and_then(|q| q.front().map(|&(tsn, _)| tsn))
    }

    pub(super) fn push(&mut self, i: usize, tsn: u64, size: u64) {
        if self.queues.len() <= i {
            self.queues.resize_with(i + 1, VecDeque::new);
            self.bytes.resize(i + 1, 0);
        }
        self.queues[i].push_back((tsn, size));
        self.bytes[i] += size;
    }

    /// Empties path `i`'s queue, returning what it held.
    pub(super) fn take(&mut self, i: usize) -> VecDeque<(u64, u64)> {
        self.bytes[i] = 0;
        std::mem::take(&mut self.queues[i])
    }

    /// Takes `tsn` out of path `i`'s queue.
    pub(super) fn remove(&mut self, i: usize, tsn: u64) {
        if let Some(k) = self.queues[i].iter().position(|&(t, _)| t == tsn) {
            let (_, size) = self.queues[i].remove(k).expect("position found");
            self.bytes[i] -= size;
        }
    }

    /// Drops path `i`'s oldest entry.
    pub(super) fn pop(&mut self, i: usize) {
        if let Some((_, size)) = self.queues[i].pop_front() {
            self.bytes[i] -= size;
        }
    }
}
