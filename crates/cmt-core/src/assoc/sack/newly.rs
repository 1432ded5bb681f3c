//! The book-keeping of one chunk acknowledged for the first time: its path's newly
//! acked bytes, SFR's and CUC's marks, RACK's delivery, QUIC's largest acknowledged and
//! the RTT sample (RFC 9260 §6.3.1 with Karn's rule; CMT's SFR and CUC, Iyengar et al.,
//! ToN 2006; RFC 9002 §5.1).

use super::super::send_queue::TxChunk;
use super::AckScratch;
use crate::path::Path;
use crate::time::Time;
use crate::view::PathId;

/// Accounting for a chunk acknowledged for the first time.
pub(super) fn newly_acked(
    paths: &mut [Path],
    s: &mut AckScratch,
    now: Time,
    tsn: u64,
    c: &TxChunk,
    outstanding: bool,
    rtt_events: &mut Vec<(PathId, u64)>,
) {
    let d = c.path.0;
    paths[d].losses.sample(false);
    if c.reinjected {
        // Delivered by the copy or by the original: no path may take it as its own
        // progress (a dead path would otherwise grow its window and look alive).
        let p = &mut paths[d];
        p.cuc.find_pseudo |= p.cuc.pseudo_cum == Some(tsn);
        p.cuc.find_rtx_pseudo |= p.cuc.rtx_pseudo_cum == Some(tsn);
        return;
    }
    let a = &mut s.path[d];
    a.newly_bytes += c.size();
    a.saw_new_ack = true;
    a.saw_outstanding_ack |= outstanding;
    a.highest = a.highest.max(tsn);
    a.lowest = a.lowest.min(tsn);
    if a.earliest == Some(Some(tsn)) {
        a.restart_t3 = true;
    }
    if c.tx_count == 1 && a.newest_sent.is_none_or(|t| c.sent_at > t) {
        a.newest_sent = Some(c.sent_at);
    }
    let p = &mut paths[d];
    if s.rack {
        p.rack.on_delivered(now, c.sent_at, tsn, c.tx_count > 1);
    }
    // CUC: acking the expected (rtx-)pseudo-cumack is progress; look for the next one.
    if p.cuc.pseudo_cum == Some(tsn) {
        a.new_pseudo = true;
        p.cuc.find_pseudo = true;
    }
    if p.cuc.rtx_pseudo_cum == Some(tsn) {
        a.new_pseudo = true;
        p.cuc.find_rtx_pseudo = true;
    }
    if s.quic {
        // The latest transmission counts as the one acknowledged (a QUIC probe is a new
        // packet); Karn's rule as ever for the round trip: an ack of a resent chunk may
        // be of either copy, so it gives no sample.
        if a.top.is_none_or(|(seq, _, _)| c.path_seq > seq) {
            a.top = Some((c.path_seq, c.sent_at, c.tx_count == 1));
        }
        return;
    }
    if let Some((probe, sent)) = p.sending.rtt_probe {
        if probe == tsn && c.tx_count == 1 {
            p.sending.rtt_probe = None;
            rtt_events.push((c.path, (now - sent).as_nanos()));
        }
    }
}
