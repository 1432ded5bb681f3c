//! Chunk buffers reused from packet to packet on one thread.
//!
//! Every packet the core builds needs a list of chunks, and every packet it reads is
//! done with one. A simulation builds and reads packets on one thread, one per event,
//! so the buffer of a packet just read serves the next packet built instead of an
//! allocation and a free each time. Buffers only change where memory comes from, never
//! what a packet holds.

use std::cell::RefCell;

use crate::packet::Chunk;

/// Buffers kept per thread at most (a simulation needs a handful).
const KEEP: usize = 64;
/// Larger buffers (a packet with many chunks) are not kept.
const MAX_CAPACITY: usize = 8;

thread_local! {
    static SPARE: RefCell<Vec<Vec<Chunk>>> = const { RefCell::new(Vec::new()) };
}

/// An empty chunk list, reused when one is spare.
pub(crate) fn take() -> Vec<Chunk> {
    SPARE
        .with_borrow_mut(|s| s.pop())
        .unwrap_or_else(|| Vec::with_capacity(2))
}

/// Gives back the chunk list of a packet that was read (emptied here).
pub(crate) fn give(mut chunks: Vec<Chunk>) {
    chunks.clear();
    if chunks.capacity() == 0 || chunks.capacity() > MAX_CAPACITY {
        return;
    }
    SPARE.with_borrow_mut(|s| {
        if s.len() < KEEP {
            s.push(chunks)
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_given_buffer_comes_back_empty_and_large_ones_are_not_kept() {
        let mut v = take();
        v.push(Chunk::CookieAck);
        let ptr = v.as_ptr();
        give(v);
        let again = take();
        assert!(again.is_empty());
        assert_eq!(again.as_ptr(), ptr, "the same buffer");
        let big: Vec<Chunk> = Vec::with_capacity(MAX_CAPACITY + 1);
        give(big);
        assert!(take().capacity() <= MAX_CAPACITY);
    }
}
