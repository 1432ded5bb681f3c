//! Chunk buffers reused from packet to packet on one thread.
//!
//! Every packet the core builds needs a list of chunks, and every packet it reads is
//! done with one; a SACK with gap blocks also carries a list of them. A simulation
//! builds and reads packets on one thread, one per event, so the buffers of a packet
//! just read serve the next packet built instead of an allocation and a free each
//! time. Buffers only change where memory comes from, never what a packet holds.

use std::cell::RefCell;
use std::thread::LocalKey;

use crate::packet::{Chunk, GapBlock};

/// Buffers kept per thread and kind at most (a simulation needs a handful).
const KEEP: usize = 64;
/// Larger chunk lists (a packet with many chunks) are not kept.
const MAX_CAPACITY: usize = 8;
/// Larger gap-block lists are not kept (a SACK carries a few blocks, up to a few
/// hundred with a large window and heavy loss).
const MAX_BLOCKS: usize = 256;

type Spare<T> = RefCell<Vec<Vec<T>>>;

thread_local! {
    static SPARE: Spare<Chunk> = const { RefCell::new(Vec::new()) };
    static SPARE_BLOCKS: Spare<GapBlock> = const { RefCell::new(Vec::new()) };
}

/// An empty chunk list, reused when one is spare.
pub(crate) fn take() -> Vec<Chunk> {
    SPARE
        .with_borrow_mut(|s| s.pop())
        .unwrap_or_else(|| Vec::with_capacity(2))
}

/// Gives back the chunk list of a packet that was read (emptied here).
pub(crate) fn give(chunks: Vec<Chunk>) {
    keep(&SPARE, chunks, MAX_CAPACITY);
}

/// An empty gap-block list, reused when one is spare.
pub(crate) fn take_blocks() -> Vec<GapBlock> {
    SPARE_BLOCKS
        .with_borrow_mut(|s| s.pop())
        .unwrap_or_default()
}

/// Gives back the gap-block list of a SACK that was read (emptied here).
pub(crate) fn give_blocks(blocks: Vec<GapBlock>) {
    keep(&SPARE_BLOCKS, blocks, MAX_BLOCKS);
}

/// Keeps `v`, emptied, among the thread's spares unless it has no room or is too large.
fn keep<T: 'static>(spare: &'static LocalKey<Spare<T>>, mut v: Vec<T>, max: usize) {
    v.clear();
    if v.capacity() == 0 || v.capacity() > max {
        return;
    }
    spare.with_borrow_mut(|s| {
        if s.len() < KEEP {
            s.push(v)
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

    #[test]
    fn a_given_gap_block_list_comes_back_empty() {
        let mut v = take_blocks();
        v.push(GapBlock { start: 2, end: 3 });
        let ptr = v.as_ptr();
        give_blocks(v);
        let again = take_blocks();
        assert!(again.is_empty());
        assert_eq!(again.as_ptr(), ptr, "the same buffer");
    }
}
