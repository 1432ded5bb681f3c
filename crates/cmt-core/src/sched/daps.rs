//! DAPS, delay-aware packet scheduling (Kuhn, Lochin, Mifdaoui, Sarwar, Mehani, Boreli,
//! ICC 2014; the MPTCP module `mptcp_daps.c`; docs/algorithms.md §7). Chunks are laid out in the order
//! they are expected to arrive: with forward delays `D_i = SRTT_i/2` (rounded to
//! multiples of `round_ms`, default 4 ms, to keep the horizon small) and smoothed windows
//! `C_i`, the schedule over the horizon `E = lcm(D_i)` gives path i a batch of `C_i`
//! chunks at every `t` with `t mod D_i = 0`, faster paths first. Each new chunk takes the
//! next slot; when that slot's path has no room the chunk waits for it (keeping the
//! planned order), a path that failed is skipped; an exhausted schedule is rebuilt.
//! `C_i` is the EWMA (gain 1/8) of cwnd in chunks, sampled at each rebuild (about once
//! per round trip). The paper text is not in the corpus; this follows the kernel module
//! as docs/algorithms.md §7 restates it. Without RTT samples it falls back to minRTT.

use super::{MinRtt, SchedContext, Scheduler, SchedulerFactory};
use crate::params::{ParamError, Params};
use crate::view::{PathId, PathState};

/// Factory for [`Daps`]; parameter `round_ms` (default 4; ≤ 1 disables rounding).
#[derive(Clone, Debug)]
pub struct DapsFactory {
    round_ms: u64,
}

impl DapsFactory {
    /// Reads and validates parameters.
    pub fn from_params(params: &Params) -> Result<Self, ParamError> {
        params.expect_only("daps", &["round_ms"])?;
        let r = params.number("round_ms", 4.0)?;
        if !(0.0..=1000.0).contains(&r) {
            return Err(ParamError(format!(
                "parameter `round_ms` must be in 0..1000, got {r}"
            )));
        }
        Ok(DapsFactory {
            round_ms: r.round().max(1.0) as u64,
        })
    }
}

impl SchedulerFactory for DapsFactory {
    fn name(&self) -> &'static str {
        "daps"
    }
    fn build(&self, num_paths: usize) -> Box<dyn Scheduler> {
        Box::new(Daps {
            round_ms: self.round_ms,
            smoothed: vec![None; num_paths],
            slots: Vec::new(),
            next: 0,
        })
    }
}

/// Longest schedule kept (slots); beyond it the horizon is cut.
const MAX_SLOTS: usize = 4096;

/// DAPS state: the current schedule and the cursor in it.
#[derive(Clone, Debug)]
pub struct Daps {
    round_ms: u64,
    smoothed: Vec<Option<f64>>,
    slots: Vec<PathId>,
    next: usize,
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

impl Daps {
    fn rebuild(&mut self, ctx: &SchedContext<'_>) {
        self.slots.clear();
        self.next = 0;
        let mut flows: Vec<(u64, PathId, u64)> = Vec::new();
        for p in ctx.paths.iter().filter(|p| p.state == PathState::Active) {
            let Some(srtt) = p.srtt else { continue };
            let half_ms = (srtt.as_millis_f64() / 2.0).max(1.0);
            let d = ((half_ms / self.round_ms as f64).round() as u64 * self.round_ms).max(1);
            let w = p.cwnd as f64 / ctx.chunk_len.max(1) as f64;
            let s = self.smoothed[p.id.0].map_or(w, |c| c + (w - c) / 8.0);
            self.smoothed[p.id.0] = Some(s);
            flows.push((d, p.id, s.round().max(1.0) as u64));
        }
        flows.sort();
        let horizon = flows
            .iter()
            .fold(1u64, |l, f| (l / gcd(l, f.0)).saturating_mul(f.0))
            .min(1 << 20);
        'outer: for t in 1..=horizon {
            for &(d, id, c) in &flows {
                if t % d == 0 {
                    for _ in 0..c {
                        self.slots.push(id);
                        if self.slots.len() >= MAX_SLOTS {
                            break 'outer;
                        }
                    }
                }
            }
        }
    }

    /// The planned path order (for tests and inspection).
    pub fn schedule(&self) -> &[PathId] {
        &self.slots
    }
}

impl Scheduler for Daps {
    fn select(&mut self, ctx: &SchedContext<'_>) -> Option<PathId> {
        for _ in 0..2 {
            while let Some(&id) = self.slots.get(self.next) {
                let p = &ctx.paths[id.0];
                if p.state != PathState::Active {
                    self.next += 1; // failed path: skip its slot
                    continue;
                }
                return p.can_send.then_some(id);
            }
            self.rebuild(ctx);
            if self.slots.is_empty() {
                return MinRtt.select(ctx);
            }
        }
        MinRtt.select(ctx)
    }

    fn on_sent(&mut self, path: PathId, _tsn: u64, _bytes: u32) {
        if self.slots.get(self.next) == Some(&path) {
            self.next += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::tests::{ctx, view};

    #[test]
    fn schedule_interleaves_batches_by_forward_delay() {
        // 20 ms and 60 ms RTT → D = 12 and 32 ms after rounding to 4 ms multiples
        // (10 → 12, 30 → 32), horizon lcm = 96: the fast path gets 8 batches, the slow 3.
        // cwnds of 2 and 1 chunks.
        let paths = [view(0, 2 * 1452, 0, 20, true), view(1, 1452, 0, 60, true)];
        let mut d = Daps {
            round_ms: 4,
            smoothed: vec![None; 2],
            slots: Vec::new(),
            next: 0,
        };
        d.rebuild(&ctx(&paths));
        let s: Vec<usize> = d.schedule().iter().map(|p| p.0).collect();
        assert_eq!(s.iter().filter(|&&p| p == 0).count(), 16);
        assert_eq!(s.iter().filter(|&&p| p == 1).count(), 3);
        // t = 12, 24: fast; t = 32: slow; t = 36: fast …
        assert_eq!(&s[..6], &[0, 0, 0, 0, 1, 0]);
    }

    #[test]
    fn waits_for_a_full_path_in_its_slot_and_skips_a_failed_one() {
        let mut d = DapsFactory::from_params(&Params::default())
            .unwrap()
            .build(2);
        let paths = [view(0, 2 * 1452, 0, 20, true), view(1, 1452, 0, 60, true)];
        assert_eq!(d.select(&ctx(&paths)), Some(PathId(0)));
        d.on_sent(PathId(0), 1, 1452);
        let full = [
            view(0, 2 * 1452, 2 * 1452, 20, false),
            view(1, 1452, 0, 60, true),
        ];
        assert_eq!(
            d.select(&ctx(&full)),
            None,
            "the slot belongs to the full fast path"
        );
        let mut failed = full.clone();
        failed[0].state = PathState::Inactive;
        assert_eq!(d.select(&ctx(&failed)), Some(PathId(1)));
    }
}
