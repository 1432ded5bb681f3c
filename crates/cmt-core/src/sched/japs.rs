//! JAPS, the jitter-aware packet scheduler of Chan et al. 2016, JAPS (§III–V; docs/algorithms.md §8).
//!
//! * **Queue pointers** (eq. 11–16). Paths are sorted by one-way delay `D_i = SRTT_i/2`
//!   (the paper's assumption). One shared send queue; path k takes the chunk at position
//!   `p_k` whenever it can send (the core gives TSNs to the chunks it skips; they are
//!   sent later, head first): `p_1 = 0`, `p_{k+1} = p_k + (D_{k+1} − D_k)·R_k`, with the
//!   block drain rate `R_k = Σ_{i≤k} B_i` (eq. 11). Decision D12: the paper's eq. 16
//!   prints `R_1` in the sum, which agrees with eq. 15 only for two paths; we use `R_k`
//!   and keep the literal reading as `eq16_literal = true`. Bytes become positions as
//!   `⌈p/L⌉`, L the chunk size. Pointers are recomputed at every decision from the
//!   latest SRTTs and bandwidths.
//! * **Bandwidth** `B_i`. Decision D13: the path's capacity when the embedder knows it
//!   (the simulator's link rate, as the JAPS paper's DelaySocket testbed knew its paths:
//!   `bandwidth = "oracle"`, the default), else `cwnd/SRTT` (`bandwidth = "cwnd"`).
//! * **Delay-burst repair** (eq. 1–9, 17). When an RTT sample of a path k that is not
//!   the fastest shows an extra one-way delay `ΔD = rtt/2 − D_k` above
//!   `max(2·RTTVAR_k, L/B_k)` (decision D13 for "significantly large"), the chunks sent
//!   on k since `T_E = now + D_1 − (D_k + ΔD)` are copied, in sequence order and up to
//!   `S_rtx = B_k·ΔD·F/(B_k + F)` bytes with `F = Σ_{i<k} B_i`, onto the fastest path;
//!   at least one chunk, and never a chunk that already has a copy. The copies go out
//!   before new data, which puts them at the head of the queue (the paper inserts them
//!   by sequence number near the head).
//!
//! Until every ACTIVE path has an RTT sample, chunks are taken from the head by the
//! fastest path with room (minRTT).

use std::collections::{BTreeSet, VecDeque};

use super::{MinRtt, SchedContext, Scheduler, SchedulerFactory};
use crate::params::{ParamError, Params};
use crate::time::{Duration, Time};
use crate::view::{PathId, PathState};

/// Factory for [`Japs`]; parameters `bandwidth` ("oracle" or "cwnd") and `eq16_literal`.
#[derive(Clone, Debug)]
pub struct JapsFactory {
    oracle: bool,
    eq16_literal: bool,
}

impl JapsFactory {
    /// Reads and validates parameters.
    pub fn from_params(params: &Params) -> Result<Self, ParamError> {
        params.expect_only("japs", &["bandwidth", "eq16_literal"])?;
        let oracle = match params.text("bandwidth", "oracle")? {
            "oracle" => true,
            "cwnd" => false,
            o => {
                return Err(ParamError(format!(
                    "parameter `bandwidth`: `{o}` (oracle or cwnd)"
                )))
            }
        };
        Ok(JapsFactory {
            oracle,
            eq16_literal: params.flag("eq16_literal", false)?,
        })
    }
}

impl SchedulerFactory for JapsFactory {
    fn name(&self) -> &'static str {
        "japs"
    }
    fn build(&self, num_paths: usize) -> Box<dyn Scheduler> {
        Box::new(Japs {
            oracle: self.oracle,
            eq16_literal: self.eq16_literal,
            now: Time::ZERO,
            order: Vec::new(),
            sent: vec![VecDeque::new(); num_paths],
            copied: BTreeSet::new(),
            pending: Vec::new(),
        })
    }
}

/// What JAPS knows of one path at the latest decision.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PathPlan {
    /// Path.
    pub id: PathId,
    /// One-way delay, s.
    pub delay: f64,
    /// Bandwidth, bytes/s.
    pub bw: f64,
    /// RTT variation, s.
    pub rttvar: f64,
}

/// Chunks remembered per path for the delay-burst repair.
const SENT_MEMORY: usize = 4096;

/// JAPS state.
#[derive(Clone, Debug)]
pub struct Japs {
    oracle: bool,
    eq16_literal: bool,
    now: Time,
    /// ACTIVE paths with an RTT sample, fastest first (latest decision).
    order: Vec<PathPlan>,
    /// Per path: (tsn, send time, bytes) of recent first transmissions.
    sent: Vec<VecDeque<(u64, Time, u32)>>,
    /// TSNs that already have a copy.
    copied: BTreeSet<u64>,
    /// Copies decided, not yet handed to the core.
    pending: Vec<(u64, PathId)>,
}

/// Queue positions (in chunks of `chunk` bytes) of the paths in `order` (fastest
/// first): eq. 11–16 with `R_k` (or `R_1` when `literal`).
pub fn positions(order: &[PathPlan], chunk: f64, literal: bool) -> Vec<usize> {
    let mut out = Vec::with_capacity(order.len());
    let (mut p, mut r) = (0.0f64, 0.0f64);
    for (k, path) in order.iter().enumerate() {
        if k > 0 {
            let rate = if literal { order[0].bw } else { r };
            p += (path.delay - order[k - 1].delay).max(0.0) * rate;
        }
        r += path.bw;
        out.push((p / chunk).ceil() as usize);
    }
    out
}

/// Bytes to repair after a delay burst of `extra` s on a path of bandwidth `bw` whose
/// faster paths sum to `faster` (eq. 9 / 17).
pub fn repair_bytes(bw: f64, extra: f64, faster: f64) -> f64 {
    if bw + faster <= 0.0 {
        return 0.0;
    }
    bw * extra * faster / (bw + faster)
}

impl Japs {
    fn plan(&mut self, ctx: &SchedContext<'_>) -> bool {
        self.now = ctx.now;
        self.order.clear();
        let mut complete = true;
        for p in ctx.paths.iter().filter(|p| p.state == PathState::Active) {
            let Some(srtt) = p.srtt else {
                complete = false;
                continue;
            };
            let s = srtt.as_secs_f64().max(1e-6);
            let est = p.cwnd as f64 / s;
            let bw = if self.oracle {
                p.capacity.unwrap_or(est)
            } else {
                est
            };
            self.order.push(PathPlan {
                id: p.id,
                delay: s / 2.0,
                bw,
                rttvar: p.rttvar.as_secs_f64(),
            });
        }
        self.order
            .sort_by(|a, b| a.delay.total_cmp(&b.delay).then(a.id.cmp(&b.id)));
        complete && !self.order.is_empty()
    }
}

impl Scheduler for Japs {
    fn select(&mut self, ctx: &SchedContext<'_>) -> Option<PathId> {
        self.select_at(ctx).map(|(p, _)| p)
    }

    fn select_at(&mut self, ctx: &SchedContext<'_>) -> Option<(PathId, usize)> {
        if !self.plan(ctx) {
            return MinRtt.select(ctx).map(|p| (p, 0));
        }
        let pos = positions(&self.order, ctx.chunk_len.max(1) as f64, self.eq16_literal);
        // A pointer past the data left names an empty block (eq. 12, §IV-A): that path
        // sends nothing, so the last chunks of a transfer stay off the slow paths.
        self.order
            .iter()
            .zip(pos)
            .find(|&(p, k)| ctx.paths[p.id.0].can_send && k < ctx.chunks_available)
            .map(|(p, k)| (p.id, k))
    }

    fn on_sent(&mut self, path: PathId, tsn: u64, bytes: u32) {
        if let Some(q) = self.sent.get_mut(path.0) {
            if q.len() == SENT_MEMORY {
                q.pop_front();
            }
            q.push_back((tsn, self.now, bytes));
        }
    }

    fn makes_copies(&self) -> bool {
        true
    }

    fn copies(&mut self, _ctx: &SchedContext<'_>, out: &mut Vec<(u64, PathId)>) {
        out.append(&mut self.pending);
    }

    fn on_rtt_sample(&mut self, now: Time, path: PathId, rtt: Duration) {
        let Some(k) = self.order.iter().position(|p| p.id == path) else {
            return;
        };
        if k == 0 {
            return;
        }
        let me = self.order[k];
        let extra = rtt.as_secs_f64() / 2.0 - me.delay;
        let chunk = self.sent[path.0].back().map_or(1452, |s| s.2) as f64;
        if me.bw <= 0.0 || extra <= (2.0 * me.rttvar).max(chunk / me.bw) {
            return;
        }
        let faster: f64 = self.order[..k].iter().map(|p| p.bw).sum();
        let budget = repair_bytes(me.bw, extra, faster).max(chunk);
        let since = now.as_secs_f64() + self.order[0].delay - (me.delay + extra);
        let fastest = self.order[0].id;
        let mut used = 0.0;
        for &(tsn, sent, bytes) in self.sent[path.0].iter() {
            if sent.as_secs_f64() < since || self.copied.contains(&tsn) {
                continue;
            }
            if used >= budget {
                break;
            }
            used += bytes as f64;
            self.copied.insert(tsn);
            self.pending.push((tsn, fastest));
        }
        // Forget copies of chunks older than anything still remembered.
        let oldest = self
            .sent
            .iter()
            .filter_map(|q| q.front())
            .map(|s| s.0)
            .min();
        if let Some(o) = oldest {
            self.copied = self.copied.split_off(&o);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::tests::{ctx, view};

    fn plan(id: usize, delay_ms: f64, kbps: f64) -> PathPlan {
        PathPlan {
            id: PathId(id),
            delay: delay_ms / 1000.0,
            bw: kbps * 1000.0 / 8.0,
            rttvar: 0.0,
        }
    }

    #[test]
    fn pointer_table() {
        // Chan et al. 2016, JAPS Table I means: fast 2100 kbit/s at 10 ms, slow 220 kbit/s at 50 ms
        // (jitter aside). p_S = ⌈0.04 s · 262500 B/s / 8192 B⌉ = ⌈1.28⌉ = 2 (eq. 15).
        let two = [plan(0, 10.0, 2100.0), plan(1, 50.0, 220.0)];
        assert_eq!(positions(&two, 8192.0, false), vec![0, 2]);
        assert_eq!(positions(&two, 1000.0, false), vec![0, 11]);
        // Three paths: p_3 = p_2 + (D_3 − D_2)·(B_1 + B_2) with R_2, or ·B_1 literally.
        // 1000 B chunks, B = 100, 50, 10 kB/s, D = 10, 30, 60 ms:
        // p_2 = 0.02·100000 = 2000 B; p_3 = 2000 + 0.03·150000 = 6500 (literal 5000).
        let three = [
            plan(0, 10.0, 800.0),
            plan(1, 30.0, 400.0),
            plan(2, 60.0, 80.0),
        ];
        assert_eq!(positions(&three, 1000.0, false), vec![0, 2, 7]);
        assert_eq!(positions(&three, 1000.0, true), vec![0, 2, 5]);
        // Equal delays share the head.
        let same = [plan(0, 20.0, 800.0), plan(1, 20.0, 400.0)];
        assert_eq!(positions(&same, 1000.0, false), vec![0, 0]);
    }

    #[test]
    fn repair_volume_by_hand() {
        // eq. 9: B_S·ΔD·B_F/(B_S + B_F): 27500 B/s · 0.2 s · 262500/290000 = 4978.4 B.
        let b = repair_bytes(27_500.0, 0.2, 262_500.0);
        assert!((b - 4978.448).abs() < 0.01, "{b}");
        assert_eq!(repair_bytes(0.0, 0.2, 0.0), 0.0);
    }

    #[test]
    fn each_path_takes_its_pointer_and_a_burst_on_the_slow_path_copies_its_recent_chunks() {
        let mut paths = vec![view(0, 60_000, 0, 20, true), view(1, 60_000, 0, 100, true)];
        paths[0].capacity = Some(262_500.0);
        paths[1].capacity = Some(27_500.0);
        let f = JapsFactory::from_params(&Params::default()).unwrap();
        let mut j = f.build(2);
        let c = ctx(&paths);
        // D = 10 and 50 ms: p_S = ⌈0.04·262500/1452⌉ = 8.
        assert_eq!(j.select_at(&c), Some((PathId(0), 0)));
        paths[0].can_send = false;
        assert_eq!(j.select_at(&ctx(&paths)), Some((PathId(1), 8)));
        j.on_sent(PathId(1), 100, 1452);
        j.on_sent(PathId(1), 101, 1452);
        // A normal sample: nothing.
        j.on_rtt_sample(Time::ZERO, PathId(1), Duration::from_millis(100));
        let mut out = Vec::new();
        j.copies(&ctx(&paths), &mut out);
        assert!(out.is_empty());
        // ΔD = 150 − 50 = 100 ms > max(0, 1452/27500 = 53 ms): both chunks go to path 0.
        j.on_rtt_sample(Time::ZERO, PathId(1), Duration::from_millis(300));
        j.copies(&ctx(&paths), &mut out);
        assert_eq!(out, vec![(100, PathId(0)), (101, PathId(0))]);
        // Never twice.
        out.clear();
        j.on_rtt_sample(Time::ZERO, PathId(1), Duration::from_millis(300));
        j.copies(&ctx(&paths), &mut out);
        assert!(out.is_empty());
    }

    #[test]
    fn without_rtt_samples_it_is_min_rtt_at_the_head() {
        let paths = vec![view(0, 60_000, 0, 0, true), view(1, 60_000, 0, 0, true)];
        let mut j = JapsFactory::from_params(&Params::default())
            .unwrap()
            .build(2);
        assert_eq!(j.select_at(&ctx(&paths)), Some((PathId(0), 0)));
    }
}
