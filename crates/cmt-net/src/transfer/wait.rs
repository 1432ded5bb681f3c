//! What a transfer's loop waits for — a datagram, a timer, the user's abort, a change
//! of the watched interfaces, more application data — and the progress reports it
//! makes on the way. The handshake and the established connection wait alike.

use cmt_core::{Association, Time};

use super::{options::Options, report::Counters};
use crate::ifwatch::AddrWatch;
use crate::io::{Arrival, Sockets};

/// The earlier of an optional timer and a deadline.
pub(super) fn until(timer: Option<Time>, deadline: Time) -> Option<Time> {
    Some(timer.map_or(deadline, |t| t.min(deadline)))
}

/// Progress reports at most every 250 ms.
pub(super) struct Ticker {
    every: Time,
    next: Time,
}

impl Ticker {
    pub(super) fn new() -> Self {
        Ticker {
            every: Time::from_nanos(250_000_000),
            next: Time::ZERO,
        }
    }
    /// The sooner of `timer` and the next report (when reporting).
    pub(super) fn wake(&self, timer: Option<Time>, o: &Options) -> Option<Time> {
        match (timer, o.outputs.progress.is_some()) {
            (Some(t), true) => Some(t.min(self.next)),
            (None, true) => Some(self.next),
            (t, false) => t,
        }
    }
    /// Reports progress when a report is due: `done` bytes, and each path's counters
    /// with its round-trip times.
    pub(super) fn tick(
        &mut self,
        now: Time,
        done: u64,
        assoc: &mut Association<Counters>,
        o: &Options,
    ) {
        if let Some(f) = o.outputs.progress {
            if now >= self.next {
                super::report::note_rtts(assoc);
                f(done, &assoc.observer().paths);
                self.next = Time::from_nanos(now.as_nanos() + self.every.as_nanos());
            }
        }
    }
}

/// What ended a wait.
pub(super) enum Wake {
    /// A datagram arrived.
    Packet(Arrival),
    /// The timer asked for expired.
    Timer,
    /// The user asked to abort.
    Abort,
    /// The watched interfaces' addresses may have changed.
    Interfaces,
    /// The application has more data to move.
    Input,
}

/// Waits for the next arrival, the association's next timer, the user's abort, — with
/// a `watch` — a change of the watched interfaces, or — with an `input` — more data
/// from the application.
pub(super) async fn next(
    socks: &mut Sockets,
    timer: Option<Time>,
    o: &Options,
    watch: Option<&mut AddrWatch>,
    input: Option<&tokio::sync::Notify>,
) -> Wake {
    let deadline = timer.map(|t| socks.instant(t));
    tokio::select! {
        _ = async {
            match watch {
                Some(w) => w.changed().await,
                None => std::future::pending().await,
            }
        } => Wake::Interfaces,
        a = socks.recv() => Wake::Packet(a),
        _ = async {
            match input {
                Some(n) => n.notified().await,
                None => std::future::pending().await,
            }
        } => Wake::Input,
        _ = async {
            match deadline {
                Some(d) => crate::io::sleep_precisely_until(d).await,
                None => std::future::pending().await,
            }
        } => Wake::Timer,
        _ = async {
            match &o.abort {
                Some(n) => n.notified().await,
                None => std::future::pending().await,
            }
        } => Wake::Abort,
    }
}
