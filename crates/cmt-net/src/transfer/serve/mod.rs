//! A receiver that serves (`cmtlab recv --dir DIR`): any number of associations, several
//! at once, on the same listening sockets, each storing one file in DIR under the name
//! its sender gives ([`names`]), durably and only when its digest matches — exactly as a
//! one-shot receiver does — until the server is told to stop.
//!
//! One task reads the sockets. A datagram whose verification tag (the four bytes after
//! the ports in the SCTP common header) is an association's own tag — or, for an ABORT
//! or SHUTDOWN COMPLETE with the T bit, its peer's tag — is routed to that association's
//! task ([`crate::io::routed`]); anything else goes to one stateless listener (INIT →
//! INIT ACK with a signed cookie, a valid COOKIE ECHO → a new association task, the
//! rest answered as RFC 9260 §8.4 says for packets of no association) through the same
//! gate as a one-shot receiver's, with its reply budget ([`crate::limit::ReplyLimit`]).
//! Each association task sends through the shared sockets and runs the one-shot
//! receiver's established phase.
//!
//! Bounds: at most [`Serve::max_associations`] at once, each slot kept only by moving
//! data ([`police`]: a header within 10 s, progress, and under pressure the slowest is
//! shed for a newcomer; an INIT beyond the limit with nobody to shed is answered with an
//! ABORT, "Out of Resource", so its sender fails at once instead of timing out); per
//! association the receive window (`--rbuf`) bounds data held for
//! reordering, and at most [`INBOX_BYTES`] of datagrams wait for its task (more are
//! dropped: lost packets to the protocol). A COOKIE ECHO for an association that has
//! just ended (a late retransmission, a replay) starts nothing: tags of ended
//! associations are remembered for twice the cookie's lifetime.

pub mod memory;
pub mod names;
pub mod police;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use cmt_core::Time;
use tokio::sync::Notify;
use tokio::task::JoinSet;

use super::{
    error::TransferError::{self, Invalid},
    gate::{Accepted, Gate, Passed},
    handshake::receiver_config,
    meter::Meter,
    options::{overhead_of, Options},
    recv::{bind_listening, receive_accepted, Dest},
    report::Report,
};
use crate::io::routed::{Outbox, Routed};
use crate::io::Sockets;

/// Bytes of datagrams that may wait for one association's task before more are
/// dropped.
pub const INBOX_BYTES: usize = 4 << 20;

/// How long the tag of an ended association is remembered: twice the cookie's
/// lifetime, so no COOKIE ECHO for it can start a new one.
const ENDED_MEMORY: Time = Time::from_nanos(120_000_000_000);

/// What a serving receiver does.
#[derive(Clone, Debug)]
pub struct Serve {
    /// Where files are stored.
    pub dir: PathBuf,
    /// A file of the name a sender gives may be replaced.
    pub overwrite: bool,
    /// Associations at once (more are refused).
    pub max_associations: usize,
    /// Bytes all associations may hold together; their receive windows share it
    /// ([`memory`]).
    pub max_memory: u64,
    /// When notified (e.g. on SIGTERM), stop serving: running transfers are aborted,
    /// their senders told. Each association's own abort is the server's to give.
    pub stop: Option<Arc<Notify>>,
}

/// One transfer the server finished (stored, refused or failed).
#[derive(Debug)]
pub struct Finished {
    /// Where its association was set up from.
    pub peer: SocketAddr,
    /// The report of a stored file, or why it was not stored.
    pub result: Result<Report, TransferError>,
}

/// What a server did, over its life.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ServeStats {
    /// Files stored and confirmed.
    pub stored: u64,
    /// Transfers that ended without a stored file (refused names, failures, aborts).
    pub failed: u64,
    /// Associations refused because as many as allowed were running.
    pub busy: u64,
    /// Datagrams that did not parse or came from sources not allowed (`--peer`).
    pub rejected: u64,
    /// Datagrams dropped because an association's task had [`INBOX_BYTES`] waiting.
    pub overflowed: u64,
    /// Associations shed to keep slots for senders that move data ([`police`]).
    pub shed: u64,
    /// The most the running associations were charged at once ([`memory`]), bytes.
    pub memory_peak: u64,
}

/// Serves `s.dir` on `listen` until `s.stop` is notified; `done` hears of every
/// finished transfer. Running transfers are then aborted (their senders told).
pub async fn serve(
    listen: &[SocketAddr],
    s: &Serve,
    o: &Options,
    done: impl FnMut(Finished),
) -> Result<ServeStats, TransferError> {
    serve_on(bind_listening(listen).await?, s, o, done).await
}

/// As [`serve`], on sockets already bound.
pub async fn serve_on(
    mut socks: Sockets,
    s: &Serve,
    o: &Options,
    mut done: impl FnMut(Finished),
) -> Result<ServeStats, TransferError> {
    s.check(o, &socks.local_addrs())?;
    socks.set_gso(o.gso);
    let mut d = Dispatcher::new(&socks, s, o);
    let mut police = tokio::time::interval(std::time::Duration::from_secs(1));
    police.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    // Association tasks are not `Send` (the core's algorithms are boxed without it):
    // they run on this thread.
    let local = tokio::task::LocalSet::new();
    local
        .run_until(async {
            loop {
                tokio::select! {
                    dg = socks.recv_datagram() => d.on_datagram(&mut socks, dg).await,
                    _ = police.tick() => d.police(socks.now()),
                    Some(j) = d.tasks.join_next(), if !d.tasks.is_empty() => {
                        if let Ok(f) = j {
                            done(d.ended(&socks, f));
                        }
                    }
                    _ = stopped(s) => break,
                }
            }
            d.stop(&socks, &mut done).await;
        })
        .await;
    Ok(d.stats)
}

/// Resolves when the server is told to stop.
async fn stopped(s: &Serve) {
    match &s.stop {
        Some(n) => n.notified().await,
        None => std::future::pending().await,
    }
}

impl Serve {
    /// Checks the directory and the options (for sockets bound to `locals`) before
    /// anything is accepted; [`serve_on`] does too.
    pub fn check(&self, o: &Options, locals: &[SocketAddr]) -> Result<(), TransferError> {
        o.validate_for(overhead_of(locals)).map_err(Invalid)?;
        let at = |why: &str| Invalid(format!("--dir {}: {why}", self.dir.display()));
        match std::fs::metadata(&self.dir) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => return Err(at("not a directory")),
            Err(e) => return Err(at(&e.to_string())),
        }
        if self.max_associations == 0 {
            return Err(Invalid(
                "at least one association at once must be allowed".into(),
            ));
        }
        let least = memory::charge(memory::MIN_WINDOW.min(u64::from(o.rbuf)));
        if self.max_memory < least {
            return Err(Invalid(format!(
                "--max-memory {}: too little for one association (at least {least} bytes)",
                self.max_memory
            )));
        }
        if o.resume || o.allow_unconfirmed || o.outputs.pcap.is_some() || o.outputs.trace.is_some()
        {
            return Err(Invalid(
                "a serving receiver stores whole, confirmed transfers: --resume, \
                 --allow-unconfirmed, --pcap and --trace apply to one transfer (recv --out)"
                    .into(),
            ));
        }
        Ok(())
    }
}

/// A running association, as the dispatcher knows it.
struct Running {
    outbox: Outbox,
    peer_tag: u32,
    abort: Arc<Notify>,
    slot: police::Slot,
    /// What it is charged of the memory budget, and what of it its inbox may fill.
    charge: u64,
    inbox: usize,
}

/// What a task returns: its tag, and how its transfer ended.
type TaskEnd = (u32, Finished);

/// The task that reads the sockets and routes what arrives.
struct Dispatcher {
    serve: Serve,
    o: Options,
    gate: Gate,
    /// By our verification tag.
    running: BTreeMap<u32, Running>,
    /// Our tag, by the peer's (for packets with the T bit).
    by_peer_tag: BTreeMap<u32, u32>,
    /// Tags of ended associations, with when they ended.
    ended: BTreeMap<u32, Time>,
    tasks: JoinSet<TaskEnd>,
    stats: ServeStats,
    /// What the running associations are charged of the memory budget.
    committed: u64,
}

impl Dispatcher {
    fn new(socks: &Sockets, s: &Serve, o: &Options) -> Self {
        let cfg = receiver_config(o, &socks.local_addrs());
        Dispatcher {
            serve: s.clone(),
            o: o.clone(),
            gate: Gate::new(cfg),
            running: BTreeMap::new(),
            by_peer_tag: BTreeMap::new(),
            ended: BTreeMap::new(),
            tasks: JoinSet::new(),
            stats: ServeStats::default(),
            committed: 0,
        }
    }

    /// Routes a datagram to its association, or hands it to the listener.
    async fn on_datagram(&mut self, socks: &mut Sockets, dg: crate::io::RxDatagram) {
        let raw = socks.datagram_bytes(&dg);
        let tag = raw
            .get(4..8)
            .map(|b| u32::from_be_bytes(b.try_into().expect("4 bytes")));
        let to = tag.and_then(|t| match self.running.contains_key(&t) {
            true => Some(t),
            false => self.by_peer_tag.get(&t).copied(),
        });
        if let Some(r) = to.and_then(|t| self.running.get(&t)) {
            let routed = Routed {
                socket: dg.socket,
                from: dg.from,
                bytes: raw.to_vec(),
                ce: dg.ce,
            };
            if !r.outbox.offer(routed, r.inbox) {
                self.stats.overflowed += 1;
            }
            return;
        }
        let now = socks.now();
        if tag.is_some_and(|t| self.recently_ended(t, now)) {
            // A late or replayed packet of an association that ended.
            self.stats.rejected += 1;
            return;
        }
        self.listen(socks, dg).await;
    }

    /// Whether `tag` belonged to an association that ended lately (forgetting the
    /// ones that ended long ago).
    fn recently_ended(&mut self, tag: u32, now: Time) -> bool {
        let horizon = Time::from_nanos(now.as_nanos().saturating_sub(ENDED_MEMORY.as_nanos()));
        self.ended.retain(|_, at| *at >= horizon);
        self.ended.contains_key(&tag)
    }

    /// A datagram of no running association: the listener's, through the gate. With
    /// every slot taken, a newcomer is answered only when a running association may be
    /// shed for it ([`police`]), and that one is shed once the newcomer's COOKIE ECHO
    /// proves its address.
    async fn listen(&mut self, socks: &mut Sockets, dg: crate::io::RxDatagram) {
        let a = socks.arrival(dg);
        let now = socks.now();
        let occupied = self.running.values().filter(|r| !r.slot.shedding).count();
        let others = self.serve.max_associations.saturating_sub(occupied + 1) as u64;
        let left = self.serve.max_memory.saturating_sub(self.committed);
        let window = memory::window(left, u64::from(self.o.rbuf), others);
        let full = occupied >= self.serve.max_associations || window.is_none();
        let victim = full
            .then(|| police::victim(self.running.iter().map(|(t, r)| (*t, &r.slot)), now))
            .flatten();
        match self
            .gate
            .pass(socks, &self.o, &a, full && victim.is_none())
            .await
        {
            Passed::Accepted(accepted) => {
                if let Some((tag, rate)) = victim {
                    let why = format!(
                        "shed for a new sender: the server was full and this transfer \
                         stored {rate:.0} bytes/s over the last {} s",
                        police::RATE_WINDOW.as_secs_f64()
                    );
                    self.shed(tag, why);
                }
                // Admitted for one shed: the floor until that one's memory is back.
                self.start(socks, accepted, window.unwrap_or(memory::MIN_WINDOW))
            }
            Passed::Answered => {}
            Passed::Busy => self.stats.busy += 1,
            Passed::Rejected => self.stats.rejected += 1,
        }
    }

    /// Starts the task of an association just accepted, with receive window `window`.
    fn start(&mut self, socks: &Sockets, a: Accepted, window: u64) {
        let (assoc_socks, outbox) = socks.routed();
        let (tag, peer_tag, peer) = (a.est.init.local_vtag, a.est.init.peer_vtag, a.from);
        let abort = Arc::new(Notify::new());
        let meter = Arc::new(Meter::default());
        let mut o = self.o.clone();
        o.abort = Some(abort.clone());
        o.meter = Some(meter.clone());
        let window = window.min(u64::from(o.rbuf));
        o.rbuf = window as u32;
        let charge = memory::charge(window);
        self.committed += charge;
        self.stats.memory_peak = self.stats.memory_peak.max(self.committed);
        o.outputs.progress = None;
        o.interfaces = Vec::new();
        let dest = Dest::Dir(self.serve.dir.clone(), self.serve.overwrite);
        self.tasks.spawn_local(async move {
            let result = receive_accepted(assoc_socks, (a, 0), dest, None, None, &o).await;
            (tag, Finished { peer, result })
        });
        self.running.insert(
            tag,
            Running {
                outbox,
                peer_tag,
                abort,
                slot: police::Slot::new(meter, socks.now()),
                charge,
                inbox: (memory::inbox(window) as usize).min(INBOX_BYTES),
            },
        );
        self.by_peer_tag.insert(peer_tag, tag);
    }

    /// Sheds every association whose deadline passed ([`police`]); about once a second.
    fn police(&mut self, now: Time) {
        let idle_limit = self.o.timers().0.tolerance;
        let due: Vec<(u32, String)> = self
            .running
            .iter_mut()
            .filter_map(|(tag, r)| r.slot.tick(now, idle_limit).map(|why| (*tag, why)))
            .collect();
        for (tag, why) in due {
            self.shed(tag, why);
        }
    }

    /// Tells association `tag` to go for `why` (its sender hears the reason).
    fn shed(&mut self, tag: u32, why: String) {
        if let Some(r) = self.running.get_mut(&tag) {
            r.slot.meter.shed(why);
            r.slot.shedding = true;
            r.abort.notify_one();
            self.stats.shed += 1;
        }
    }

    /// An association's task ended: its routes go, its tag is remembered.
    fn ended(&mut self, socks: &Sockets, (tag, f): TaskEnd) -> Finished {
        if let Some(r) = self.running.remove(&tag) {
            self.by_peer_tag.remove(&r.peer_tag);
            self.committed -= r.charge;
        }
        self.ended.insert(tag, socks.now());
        match f.result {
            Ok(_) => self.stats.stored += 1,
            Err(_) => self.stats.failed += 1,
        }
        f
    }

    /// Aborts every running association (their senders get an ABORT) and reports
    /// them, waiting at most two seconds for their tasks.
    async fn stop(&mut self, socks: &Sockets, done: &mut impl FnMut(Finished)) {
        for r in self.running.values() {
            r.abort.notify_one();
        }
        let wait = tokio::time::sleep(std::time::Duration::from_secs(2));
        tokio::pin!(wait);
        while !self.tasks.is_empty() {
            tokio::select! {
                Some(j) = self.tasks.join_next() => {
                    if let Ok(f) = j {
                        done(self.ended(socks, f));
                    }
                }
                _ = &mut wait => break,
            }
        }
        self.tasks.abort_all();
    }
}
