//! Proportional Rate Reduction of one path (Mathis, Cardwell, Cheng and Dukkipati,
//! "Proportional Rate Reduction (PRR)", RFC 9937, 2025, which obsoletes RFC 6937 of
//! 2013), as Linux runs it in each TCP connection and so in each MPTCP subflow
//! (`tcp_init_cwnd_reduction`, `tcp_cwnd_reduction` and `tcp_end_cwnd_reduction` in
//! `net/ipv4/tcp_input.c`).
//!
//! Without it a loss cuts the window at once, and the path sends nothing until half a
//! window has drained; with it the window comes down over one round trip: while more
//! than the controller's new window is in flight, each ack lets out the share
//! `target / recover_fs` of what it delivered (the proportional part), and below it
//! the flight grows back towards the target no faster than what is delivered, plus one
//! packet on an ack that moves the path's oldest outstanding data and finds no new
//! loss (the slow-start reduction bound of RFC 9937 §6). The association applies it
//! with `prr = true` (docs/algorithms.md §1.15, decision D55); the arithmetic here is
//! pure and tested on its own.

/// One path's reduction in progress (from the cut until every chunk the path had sent
/// by then is acknowledged).
#[derive(Clone, Debug)]
pub(crate) struct Prr {
    /// The window when the reduction began: Linux's `prior_cwnd`. (RFC 9937 takes the
    /// flight then, `RecoverFS`; Linux the window, which it always fills.)
    recover_fs: u64,
    /// The window the controller chose for the end of the reduction (`ssthresh`).
    pub(crate) target: u64,
    /// Bytes delivered on the path since the reduction began (`prr_delivered`).
    delivered: u64,
    /// Bytes sent on the path since (`prr_out`).
    out: u64,
    /// A loss was declared on the path since its last ack: that ack is not safe.
    pub(crate) lost_since_ack: bool,
}

impl Prr {
    /// A reduction from a window of `prior` bytes to `target`.
    pub(crate) fn new(prior: u64, target: u64) -> Self {
        Prr {
            recover_fs: prior.max(1),
            target,
            delivered: 0,
            out: 0,
            lost_since_ack: true,
        }
    }

    /// `bytes` of DATA left on the path.
    pub(crate) fn on_sent(&mut self, bytes: u64) {
        self.out += bytes;
    }

    /// An ack delivered `delivered` bytes of the path's data with `pipe` bytes still
    /// in flight on it; `una_advanced`: it acknowledged the path's oldest outstanding
    /// chunk. Returns the window to allow now (`pipe + sndcnt`), or `None` when the
    /// ack delivered nothing (the window stays as it is). `mss`: one packet's bytes.
    pub(crate) fn on_ack(
        &mut self,
        delivered: u64,
        pipe: u64,
        una_advanced: bool,
        mss: u64,
    ) -> Option<u64> {
        let safe = una_advanced && !self.lost_since_ack;
        self.lost_since_ack = false;
        if delivered == 0 {
            return None;
        }
        self.delivered += delivered;
        let sndcnt = if pipe > self.target {
            // Proportional: ceil(prr_delivered · ssthresh / RecoverFS) − prr_out, the
            // quota rounded up to whole packets as Linux counts it.
            let quota = (self.delivered * self.target).div_ceil(self.recover_fs);
            quota
                .div_ceil(mss)
                .saturating_mul(mss)
                .saturating_sub(self.out)
        } else {
            // Back towards the target: at most what was delivered (conservation),
            // one packet more on a safe ack.
            let limit = self.delivered.saturating_sub(self.out).max(delivered);
            let limit = if safe { limit + mss } else { limit };
            (self.target - pipe).min(limit)
        };
        // The first ack of a reduction always lets one packet out: the fast
        // retransmission itself.
        let sndcnt = if self.out == 0 {
            sndcnt.max(mss)
        } else {
            sndcnt
        };
        Some(pipe + sndcnt)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    /// Runs acks of one packet each over a window of `prior` packets reduced to
    /// `target`, sending whatever each allows above the flight (as a sender with data
    /// does); returns the packets sent after each ack.
    fn one_packet_acks(prior: u64, target: u64, acks: usize, mut pipe: u64) -> Vec<u64> {
        let mut prr = Prr::new(prior * MSS, target * MSS);
        let mut sent = Vec::new();
        for _ in 0..acks {
            pipe -= MSS;
            let cwnd = prr.on_ack(MSS, pipe, true, MSS).unwrap();
            let n = cwnd.saturating_sub(pipe) / MSS;
            prr.on_sent(n * MSS);
            pipe += n * MSS;
            sent.push(n);
        }
        sent
    }

    #[test]
    fn halving_sends_one_packet_for_every_two_delivered_and_ends_at_the_target() {
        // RFC 9937's single-loss example with Reno's halving: a window of 20, one
        // lost (19 in flight), ssthresh 10. The first ack lets the retransmission out,
        // then one packet every second ack.
        let sent = one_packet_acks(20, 10, 19, 19 * MSS);
        assert_eq!(&sent[..6], &[1, 0, 1, 0, 1, 0]);
        assert_eq!(sent.iter().sum::<u64>(), 10);
    }

    #[test]
    fn cubic_keeps_seven_tenths_in_proportion() {
        // β = 0.7: a window of 20 goes to 14; 20 acks let out ceil(k · 14 / 20).
        let sent = one_packet_acks(20, 14, 20, 20 * MSS);
        let total: u64 = sent.iter().sum();
        assert_eq!(total, 14);
        // While more than 14 are in flight (the first 17 acks), exactly the share;
        // then the flight is held at 14.
        let mut out = 0;
        for (k, n) in sent.iter().enumerate().take(17) {
            out += n;
            assert_eq!(
                out,
                ((k as u64 + 1) * 14).div_ceil(20),
                "after ack {}",
                k + 1
            );
        }
    }

    #[test]
    fn below_the_target_the_flight_grows_by_what_is_delivered_plus_one_on_safe_acks() {
        // Heavy loss: only 4 of a window of 20 are in flight, the target is 10.
        let mut prr = Prr::new(20 * MSS, 10 * MSS);
        prr.on_sent(MSS); // the retransmission went already
        prr.lost_since_ack = false;
        // A safe ack of one packet: one for it, one more.
        assert_eq!(prr.on_ack(MSS, 3 * MSS, true, MSS), Some(5 * MSS));
        prr.on_sent(2 * MSS);
        // An ack that does not move the oldest outstanding data: conservation only.
        assert_eq!(prr.on_ack(MSS, 4 * MSS, false, MSS), Some(5 * MSS));
        prr.on_sent(MSS);
        // An ack after a new loss is not safe either.
        prr.lost_since_ack = true;
        assert_eq!(prr.on_ack(MSS, 4 * MSS, true, MSS), Some(5 * MSS));
        prr.on_sent(MSS);
        // Never above the target.
        assert_eq!(prr.on_ack(8 * MSS, MSS, true, MSS), Some(10 * MSS));
    }

    #[test]
    fn an_ack_delivering_nothing_changes_nothing_but_the_first_lets_one_out() {
        let mut prr = Prr::new(20 * MSS, 10 * MSS);
        assert_eq!(prr.on_ack(0, 19 * MSS, false, MSS), None);
        // The share of a 100-byte delivery, 50 bytes, rounds up to one packet.
        assert_eq!(prr.on_ack(100, 19 * MSS, false, MSS), Some(20 * MSS));
    }
}
