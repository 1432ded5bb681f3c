//! The choice of a retransmission's destination: the paths that may take it and the
//! association's retransmission policy among them (RFC 9260 §6.4.1; CMT's policies,
//! docs/algorithms.md §1.5), with the count of how the choice compares with RTX-CWND's
//! rule.

use super::Association;
use crate::event::Observer;
use crate::rtx::RtxContext;
use crate::time::Time;
use crate::view::{PathId, PathState};

impl<O: Observer> Association<O> {
    /// Candidate destinations for retransmissions: ACTIVE paths not held in reserve as
    /// backups — and under the ns-2.35 profile, for the policies ns-2 lets pick one
    /// (RTX_TO_SAME, RTX_LOSSRATE: they skip only INACTIVE destinations),
    /// potentially-failed ones too — or, when there is none, every path with a
    /// verified address (RFC 9260 §6.4.1: keep trying rather than stall).
    pub(super) fn rtx_candidates(&self) -> Vec<PathId> {
        let pf_too = self.ns2() && self.rtx_policy.ns2_allows_pf();
        let admitted: Vec<PathId> = (0..self.paths.len())
            .filter(|&i| match self.paths[i].state {
                PathState::Active => !self.standby(i),
                PathState::PotentiallyFailed => pf_too,
                PathState::Inactive
                | PathState::Standby
                | PathState::Unconfirmed
                | PathState::Removed => false,
            })
            .map(PathId)
            .collect();
        if !admitted.is_empty() {
            return admitted;
        }
        let present: Vec<PathId> = (0..self.paths.len())
            .filter(|&i| self.paths[i].carries_data())
            .map(PathId)
            .collect();
        if present.is_empty() {
            (0..self.paths.len()).map(PathId).collect()
        } else {
            present
        }
    }

    pub(super) fn choose_rtx_dest(&mut self, now: Time, original: PathId, tsn: u64) -> PathId {
        let candidates = self.rtx_candidates();
        if candidates.len() == 1 {
            return candidates[0];
        }
        self.refresh_views();
        let ctx = RtxContext {
            now,
            paths: &self.views,
            candidates: &candidates,
            original,
            tsn,
        };
        let choice = self.rtx_policy.select(&ctx, &mut self.rng);
        let choice = if candidates.contains(&choice) {
            choice
        } else {
            self.stats.refused_choices += 1;
            candidates[0]
        };
        self.count_rtx_decision(&candidates, choice);
        choice
    }

    /// How a retransmission destination compares with RTX-CWND's rule (largest cwnd):
    /// whether the rule had a tie to break, whether the choice broke it.
    fn count_rtx_decision(&mut self, candidates: &[PathId], choice: PathId) {
        let cwnd = |p: &PathId| self.views[p.0].cwnd;
        let largest = candidates.iter().map(cwnd).max().unwrap_or(0);
        let at_largest = candidates.iter().filter(|p| cwnd(p) == largest).count();
        self.stats.rtx_decisions += 1;
        self.stats.rtx_cwnd_ties += (at_largest > 1) as u64;
        self.stats.rtx_not_largest_cwnd += (cwnd(&choice) < largest) as u64;
    }
}
