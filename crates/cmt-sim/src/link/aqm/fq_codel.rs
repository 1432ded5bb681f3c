//! FQ-CoDel, flow queueing with controlled delay (RFC 8290): one queue per flow, each
//! with its own CoDel state, served by deficit round robin with a byte `quantum`. A flow
//! that becomes active joins the list of new flows and is served before the old ones
//! for its first quantum, so a sparse flow (a few packets now and then) sees almost no
//! queueing beside a bulk one; an emptied new flow moves to the end of the old list
//! before it may leave, so it cannot starve the others by coming back at once (§4.2).
//! When the whole queue is full, packets are dropped from the head of the flow with the
//! most bytes (§4.1) — as Linux does, a batch of up to 64 or until that flow holds half
//! its bytes; a tournament tree over the flows' bytes (`fattest.rs`) names that flow
//! without a scan.
//!
//! Flows are told apart exactly (a path of an association, a background flow), not
//! hashed into 1,024 buckets as Linux does: no two flows share a queue.

use std::collections::{BTreeMap, VecDeque};

use cmt_core::Time;

use super::codel::{Codel, CodelParams};
use super::fattest::Fattest;
use super::Queued;
use crate::link::Carried;

/// FQ-CoDel's parameters (RFC 8290 §5; Linux's defaults).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FqCodelParams {
    /// Each flow queue's CoDel.
    pub codel: CodelParams,
    /// Bytes a flow may send per round.
    pub quantum: u32,
}

impl Default for FqCodelParams {
    fn default() -> Self {
        FqCodelParams {
            codel: CodelParams::default(),
            quantum: 1514,
        }
    }
}

/// Most packets one overflow drops (Linux's `drop_batch_size`).
const DROP_BATCH: usize = 64;

/// One flow's queue.
#[derive(Debug)]
struct FlowQueue<P> {
    packets: VecDeque<Queued<P>>,
    bytes: u64,
    deficit: i64,
    codel: Codel,
    /// On the new or the old list.
    listed: bool,
}

/// The flow queues and their round robin.
#[derive(Debug)]
pub struct FqCodel<P> {
    params: FqCodelParams,
    /// Queue index by flow (a map, for a deterministic order in any walk).
    by_flow: BTreeMap<u32, usize>,
    queues: Vec<FlowQueue<P>>,
    new_flows: VecDeque<usize>,
    old_flows: VecDeque<usize>,
    /// Packets queued in all flows.
    len: usize,
    /// Which flow holds the most bytes.
    fattest: Fattest,
}

impl<P: Carried> FqCodel<P> {
    /// Empty queues.
    pub fn new(params: FqCodelParams) -> Self {
        FqCodel {
            params,
            by_flow: BTreeMap::new(),
            queues: Vec::new(),
            new_flows: VecDeque::new(),
            old_flows: VecDeque::new(),
            len: 0,
            fattest: Fattest::default(),
        }
    }

    /// Packets queued.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Queues `pkt`; with more than `limit` packets queued, drops a batch from the head
    /// of the fattest flow into `dropped`.
    pub fn enqueue(&mut self, now: Time, pkt: P, limit: Option<usize>, dropped: &mut Vec<P>) {
        let next = self.queues.len();
        let i = *self.by_flow.entry(pkt.flow()).or_insert(next);
        if i == next {
            self.queues.push(FlowQueue {
                packets: VecDeque::new(),
                bytes: 0,
                deficit: 0,
                codel: Codel::default(),
                listed: false,
            });
        }
        let q = &mut self.queues[i];
        q.bytes += u64::from(pkt.wire_size());
        q.packets.push_back(Queued { pkt, at: now });
        self.fattest.set(i, q.bytes);
        if !q.listed {
            q.listed = true;
            q.deficit = i64::from(self.params.quantum);
            self.new_flows.push_back(i);
        }
        self.len += 1;
        if limit.is_some_and(|l| self.len > l) {
            self.drop_from_fattest(dropped);
        }
    }

    /// Drops from the head of the flow holding the most bytes: up to [`DROP_BATCH`]
    /// packets, stopping once it holds half of what it held.
    fn drop_from_fattest(&mut self, dropped: &mut Vec<P>) {
        let Some(i) = self.fattest.get() else {
            return;
        };
        let q = &mut self.queues[i];
        let half = q.bytes / 2;
        for _ in 0..DROP_BATCH {
            let Some(head) = q.packets.pop_front() else {
                break;
            };
            q.bytes -= u64::from(head.pkt.wire_size());
            self.len -= 1;
            dropped.push(head.pkt);
            if q.bytes <= half {
                break;
            }
        }
        self.fattest.set(i, q.bytes);
    }

    /// Packets the flows' CoDels marked instead of dropping them.
    pub fn marks(&self) -> u64 {
        self.queues.iter().map(|q| q.codel.marks).sum()
    }

    /// The next packet to send, after the drops the flows' CoDels decide (to `dropped`).
    pub fn dequeue(&mut self, now: Time, dropped: &mut Vec<P>) -> Option<P> {
        loop {
            let (from_new, i) = match (self.new_flows.front(), self.old_flows.front()) {
                (Some(&i), _) => (true, i),
                (None, Some(&i)) => (false, i),
                (None, None) => return None,
            };
            let quantum = i64::from(self.params.quantum);
            let q = &mut self.queues[i];
            if q.deficit <= 0 {
                q.deficit += quantum;
                self.rotate(from_new, i);
                continue;
            }
            let before = dropped.len();
            let pkt = q.codel.dequeue(
                &self.params.codel,
                now,
                &mut q.packets,
                &mut q.bytes,
                dropped,
            );
            self.fattest.set(i, q.bytes);
            self.len -= dropped.len() - before;
            let Some(pkt) = pkt else {
                // Empty: a new flow goes to the end of the old list, an old one leaves.
                self.pop(from_new);
                if from_new {
                    self.old_flows.push_back(i);
                } else {
                    self.queues[i].listed = false;
                }
                continue;
            };
            self.queues[i].deficit -= i64::from(pkt.wire_size());
            self.len -= 1;
            return Some(pkt);
        }
    }

    /// Moves flow `i` from the head of its list to the end of the old list.
    fn rotate(&mut self, from_new: bool, i: usize) {
        self.pop(from_new);
        self.old_flows.push_back(i);
    }

    fn pop(&mut self, from_new: bool) {
        if from_new {
            self.new_flows.pop_front();
        } else {
            self.old_flows.pop_front();
        }
    }

    /// Removes every queued packet (the link went down).
    pub fn drain(&mut self) -> Vec<P> {
        self.new_flows.clear();
        self.old_flows.clear();
        self.len = 0;
        let mut out = Vec::new();
        for (i, q) in self.queues.iter_mut().enumerate() {
            out.extend(q.packets.drain(..).map(|x| x.pkt));
            q.bytes = 0;
            q.listed = false;
            self.fattest.set(i, 0);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq)]
    struct P {
        flow: u32,
        seq: u32,
    }
    impl Carried for P {
        fn wire_size(&self) -> u32 {
            1500
        }
        fn flow(&self) -> u32 {
            self.flow
        }
    }

    fn ms(x: u64) -> Time {
        Time::from_nanos(x * 1_000_000)
    }

    /// A bulk flow with 100 packets queued; a sparse flow's packet arrives: it leaves
    /// as soon as the bulk flow's current quantum is spent (1,514 bytes: the packet in
    /// hand and one more), ahead of the other 97 — a new flow is served before the old.
    #[test]
    fn a_sparse_flows_packet_overtakes_a_bulk_backlog() {
        let mut fq = FqCodel::new(FqCodelParams::default());
        for seq in 0..100 {
            fq.enqueue(ms(0), P { flow: 1, seq }, None, &mut Vec::new());
        }
        let mut dropped = Vec::new();
        assert_eq!(fq.dequeue(ms(1), &mut dropped).unwrap().flow, 1);
        fq.enqueue(ms(1), P { flow: 2, seq: 0 }, None, &mut Vec::new());
        let order: Vec<u32> = (0..3)
            .map(|_| fq.dequeue(ms(1), &mut dropped).unwrap().flow)
            .collect();
        assert_eq!(order, [1, 2, 1]);
        assert_eq!(fq.len(), 97);
    }

    /// Two backlogged flows of equal packets share the link packet for packet.
    #[test]
    fn two_backlogged_flows_alternate() {
        let mut fq = FqCodel::new(FqCodelParams::default());
        for seq in 0..10 {
            fq.enqueue(ms(0), P { flow: 7, seq }, None, &mut Vec::new());
            fq.enqueue(ms(0), P { flow: 9, seq }, None, &mut Vec::new());
        }
        let mut dropped = Vec::new();
        let order: Vec<u32> = (0..20)
            .map(|_| fq.dequeue(ms(0), &mut dropped).unwrap().flow)
            .collect();
        let sevens = order.iter().filter(|&&f| f == 7).count();
        assert_eq!(sevens, 10);
        // Never more than one quantum (one packet) of a flow in a row once both run.
        assert!(order[1..]
            .windows(3)
            .all(|w| !(w[0] == w[1] && w[1] == w[2])));
        assert!(dropped.is_empty());
    }

    /// Over the limit the fattest flow loses packets from its head until it holds half
    /// its bytes (here 4 of 8 packets); the flow that overflowed keeps its packet.
    #[test]
    fn over_the_limit_the_fattest_flow_loses_half_from_its_head() {
        let mut fq = FqCodel::new(FqCodelParams::default());
        let mut dropped = Vec::new();
        for seq in 0..8 {
            fq.enqueue(ms(0), P { flow: 1, seq }, Some(9), &mut dropped);
        }
        fq.enqueue(ms(0), P { flow: 2, seq: 0 }, Some(9), &mut dropped);
        assert!(dropped.is_empty());
        fq.enqueue(ms(0), P { flow: 2, seq: 1 }, Some(9), &mut dropped);
        let lost: Vec<u32> = dropped.iter().map(|p| p.seq).collect();
        assert!(dropped.iter().all(|p| p.flow == 1));
        assert_eq!(lost, [0, 1, 2, 3]);
        assert_eq!(fq.len(), 6);
        assert_eq!(fq.drain().len(), 6);
        assert!(fq.is_empty());
    }
}
