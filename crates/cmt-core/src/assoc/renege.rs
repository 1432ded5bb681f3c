//! Reneging (RFC 9260 §6.2.1, as ns-2.35's `ProcessGapAckBlocks` applies it): chunks
//! a SACK gap-acked that the latest SACK no longer reports are outstanding on their path
//! again. (Our own receiver never reneges; a peer may.)

use super::sack::uncovered;
use super::Association;
use crate::event::Observer;

impl<O: Observer> Association<O> {
    /// ns-2.35 (`ProcessGapAckBlocks`: "out of order SACK? setting eGapAcked=FALSE")
    /// trusts only the latest SACK's gap blocks: a chunk gap-acked before but not
    /// reported now is taken as reneged, outstanding on its path again until a later
    /// SACK acks it anew.
    ///
    /// Only chunks in the previous SACK's runs (`before`) can be gap-acked now and not
    /// reported: with this rule every gap-acked chunk lies in the runs of the SACK that
    /// last updated them (those it acked are in them; the others were reneged then), so
    /// the search covers `before` outside the current runs, not the whole queue.
    pub(super) fn renege_unreported(&mut self, before: &[(u64, u64)]) {
        let cum = self.snd.cum_ack;
        let now = std::mem::take(&mut self.snd.gap_acked_runs);
        let mut k = 0;
        for &(lo, hi) in before {
            let (lo, hi) = (lo.max(cum + 1), hi.min(cum + self.snd.chunks.len() as u64));
            if lo > hi {
                continue;
            }
            while k < now.len() && now[k].1 < lo {
                k += 1;
            }
            for (from, to) in uncovered(lo, hi, &now[k..]) {
                (from..=to).for_each(|tsn| self.renege(tsn));
            }
        }
        self.snd.gap_acked_runs = now;
        // What a walk of the whole queue would have reneged is now reneged: no chunk
        // outside the latest runs is still gap-acked (debug builds, short queues).
        #[cfg(debug_assertions)]
        if self.snd.chunks.len() <= 1024 {
            let cum = self.snd.cum_ack;
            let runs = &self.snd.gap_acked_runs;
            let missed = (cum + 1..)
                .zip(&self.snd.chunks)
                .find(|&(tsn, c)| c.acked && !runs.iter().any(|&(s, e)| s <= tsn && tsn <= e))
                .map(|(tsn, _)| tsn);
            assert_eq!(
                missed, None,
                "a gap-acked chunk left outside the latest runs"
            );
        }
    }

    /// Chunk `tsn`, if gap-acked, is outstanding on its path again.
    fn renege(&mut self, tsn: u64) {
        let idx = self.snd.index(tsn);
        let c = &mut self.snd.chunks[idx];
        if !c.acked {
            return;
        }
        self.snd.on_path.add(c.path, tsn, c.tx_count);
        c.acked = false;
        c.in_flight = true;
        self.paths[c.path].out.flight += c.size();
        self.snd.gap_acked_bytes -= c.size();
    }
}
