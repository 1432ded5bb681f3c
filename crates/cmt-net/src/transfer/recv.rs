//! The receiving side: accept one association, store what arrives durably, commit it
//! only when it is what the sender announced, confirm it.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;

use cmt_core::setup::{
    CAUSE_OUT_OF_RESOURCE, CAUSE_PROTOCOL_VIOLATION, CAUSE_USER_INITIATED_ABORT,
};
use cmt_core::wire::chunk_type;
use cmt_core::{Association, Chunk, Closing, Packet, PathId, Payload};
use tokio::sync::Notify;

use super::{
    connection::{Connection, End, Halt, Opening},
    digest::{compare_announced, digest_chunk, parse_digest, refusal_chunk},
    door::Door,
    error::{
        Ended as Why,
        TransferError::{self, Ended, Invalid, Io, Setup},
    },
    gate::{Accepted, Gate, Passed},
    handshake::{confirms, open_outputs, receiver_config, refuse},
    options::{overhead_of, Options},
    report::{Counters, Report},
    routes::{pair_remotes, Routes},
    serve::names,
    wait::{next, Wake},
};
use crate::io::{Arrival, Sockets};
use crate::resume::{HeaderReader, Offer};
use crate::sink::Sink;
use crate::trust::Trust;

/// Accepts one association on `listen`, writes what arrives to `out`, returns when the
/// peer has closed.
pub async fn receive(
    listen: &[SocketAddr],
    out: &Path,
    o: &Options,
) -> Result<Report, TransferError> {
    receive_on(bind_listening(listen).await?, out, o).await
}

/// The sockets of a receiver listening on `listen` (at least one address).
pub(super) async fn bind_listening(listen: &[SocketAddr]) -> Result<Sockets, TransferError> {
    if listen.is_empty() {
        return Err(Invalid("give at least one address to listen on".into()));
    }
    Sockets::bind(listen)
        .await
        .map_err(|e| Invalid(e.to_string()))
}

/// As [`receive`], on sockets already bound (tests bind port 0 and read the ports).
pub async fn receive_on(
    mut socks: Sockets,
    out: &Path,
    o: &Options,
) -> Result<Report, TransferError> {
    socks.set_gso(o.gso);
    let overhead = overhead_of(&socks.local_addrs());
    o.validate_for(overhead).map_err(Invalid)?;
    // Where the data goes is checked before anyone connects; until the commit below the
    // destination keeps whatever it held.
    let (sink, offer) = if o.resume {
        Sink::resumable(out, u64::from(o.rbuf)).map_err(Invalid)?
    } else {
        (Sink::create(out).map_err(Invalid)?, None)
    };
    let trace = open_outputs(&mut socks, o).map_err(Invalid)?;
    let (a, rejected, gate) = accept(&mut socks, o, offer).await?;
    let dest = Dest::File(Box::new(sink));
    receive_accepted(socks, (a, rejected), dest, trace, Some(Door::new(gate)), o).await
}

/// Where a receiver stores what arrives.
pub(super) enum Dest {
    /// This file (its sink opened before the peer came).
    File(Box<Sink>),
    /// Under the name the sender gives, in this directory; a file of that name is
    /// replaced only when allowed (the `bool`).
    Dir(std::path::PathBuf, bool),
}

/// Runs an association the listener accepted (`rejected`: datagrams refused meanwhile)
/// to its end, storing what arrives in `dest`. With a `door` (a one-shot receiver), a
/// new sender that comes once the running one has gone silent replaces it and
/// continues the file ([`Door`]); the trace then follows the first association only.
pub(super) async fn receive_accepted(
    mut socks: Sockets,
    (mut a, mut rejected): (Accepted, u64),
    mut dest: Dest,
    mut trace: Option<cmt_sim::packet_trace::PacketTrace>,
    mut door: Option<Door>,
    o: &Options,
) -> Result<Report, TransferError> {
    loop {
        match one_association(&mut socks, (a, rejected), dest, trace.take(), door, o).await? {
            Step::Done(report) => return Ok(*report),
            Step::Replaced(new, sink, d) => {
                (a, rejected, dest, door) = (new, 0, Dest::File(sink), Some(*d));
            }
        }
    }
}

/// How one association of [`receive_accepted`] ended.
enum Step {
    /// The transfer is done.
    Done(Box<Report>),
    /// A new association replaces it, continuing the file in this sink.
    Replaced(Accepted, Box<Sink>, Box<Door>),
}

/// One association: set up, run, finished or replaced.
async fn one_association(
    socks: &mut Sockets,
    (a, rejected): (Accepted, u64),
    dest: Dest,
    trace: Option<cmt_sim::packet_trace::PacketTrace>,
    door: Option<Door>,
    o: &Options,
) -> Result<Step, TransferError> {
    let overhead = overhead_of(&socks.local_addrs());
    let listen = socks.local_addrs();
    let est = a.est;
    // Authentication first: the COOKIE ACK is signed when the peer requires it.
    let overhead = overhead + socks.authenticate(est.auth.clone());
    socks
        .send(a.arrived_on, a.from, a.peer_port, &a.cookie_ack)
        .await
        .map_err(|e| Setup(e.to_string()))?;
    let routes = Routes::new(
        listen.len(),
        pair_remotes(&listen, a.arrived_on, a.from, &est.peer_addresses),
        a.peer_port,
    );
    let confirm = confirms(socks, &routes, &est, o).await?;
    let (mut sink, dir) = match dest {
        Dest::File(sink) => (Some(*sink), None),
        Dest::Dir(dir, overwrite) => (None, Some((dir, overwrite))),
    };
    if !confirm {
        match sink.as_mut() {
            Some(s) => s.begin_unframed().map_err(Io)?,
            // No header, so no name to store it under (a serving receiver does not
            // allow unconfirmed peers: `confirms` refused it already).
            None => {
                let why = "a peer without a stream header names no file";
                return Err(refuse(socks, &routes, &est, why).await);
            }
        }
    }
    // The handshake's source and the addresses the peer's INIT listed (at the same
    // port) speak for it; any other source must first answer a probe.
    let known = std::iter::once(a.from).chain(
        est.peer_addresses
            .iter()
            .map(|ip| SocketAddr::new(*ip, a.from.port())),
    );
    let opening = Opening {
        trust: Trust::new(known, socks.is_authenticating()),
        est: *est,
        routes,
        rejected,
        overhead,
        absent: Vec::new(),
        bound: (listen.iter().map(|a| Some(a.ip())).collect(), listen.len()),
        announced: listen.iter().map(|a| a.ip()).collect(),
        sender: false,
    };
    let mut s = Connection::open(socks, o, opening, trace)?;
    // Data not yet taken by the sink (a pipe whose reader lags) narrows the window, and
    // the SHUTDOWN ACK waits for the commit (which bundles our digest with it).
    s.assoc.bound_by_reads();
    s.assoc.hold_shutdown_ack(true);
    let mut end = Receiving::new((sink, dir), confirm, a.cookie_ack, o);
    end.door = door;
    let ran = s.run(socks, &mut end, o).await;
    if let Some(new) = end.replacement.take() {
        let mut sink = end.sink.take().ok_or(Ended(Why::Replaced))?;
        sink.hand_over().map_err(Io)?;
        let door = end.door.take().expect("only a door replaces");
        return Ok(Step::Replaced(new, Box::new(sink), Box::new(door)));
    }
    end.verdict(ran)?;
    let done = (end.bytes(), end.sha.clone().unwrap_or_default(), confirm);
    let mut report = s.finish(socks, o, done)?;
    report.resumed_from = end.resumed_from;
    report.stored_as = end.stored_as;
    if end.sha.is_none() {
        return Err(Ended(Why::ClosedEarly));
    }
    Ok(Step::Done(Box::new(report)))
}

/// Listens until a valid COOKIE ECHO arrives (or the time limit passes), every datagram
/// through the [`Gate`]; its INIT ACKs carry the resume `offer`, if any. Also returns
/// the datagrams that did not parse or were refused, and the gate (the door of the
/// transfer that follows).
async fn accept(
    socks: &mut Sockets,
    o: &Options,
    offer: Option<Offer>,
) -> Result<(Accepted, u64, Gate), TransferError> {
    let mut cfg = receiver_config(o, &socks.local_addrs());
    cfg.extra_params.extend(offer.map(|o| o.param()));
    let mut gate = Gate::new(cfg);
    let mut rejected = 0u64;
    let setup_deadline = o.deadline(socks.now());
    loop {
        let a = match next(socks, Some(setup_deadline), o, None, None).await {
            Wake::Packet(a) => a,
            Wake::Interfaces | Wake::Input => continue,
            Wake::Timer => {
                let why = format!("no sender associated within {} s", o.timeout_s);
                return Err(Setup(why));
            }
            Wake::Abort => return Err(Setup("aborted before a peer connected".into())),
        };
        match gate.pass(socks, o, &a, false).await {
            Passed::Accepted(accepted) => return Ok((accepted, rejected, gate)),
            Passed::Answered | Passed::Busy => {}
            Passed::Rejected => rejected += 1,
        }
    }
}

/// The receiver's part of the established phase: delivered data stored (and committed
/// before the SHUTDOWN ACK, when it is what the sender announced), paths latched to
/// where their packets come from, a silent sender given up on, a repeated COOKIE ECHO
/// answered again.
struct Receiving {
    /// Where the data goes (opened when the header names it, serving a directory).
    sink: Option<Sink>,
    /// Serving a directory: it, and whether a file there may be replaced.
    dir: Option<(std::path::PathBuf, bool)>,
    /// Where the file goes, serving a directory.
    stored_as: Option<std::path::PathBuf>,
    /// Why this end refused the transfer (told to the peer with the ABORT).
    refusal: Option<String>,
    /// Serving a directory: where the server reads this association's progress.
    meter: Option<Arc<super::meter::Meter>>,
    /// The receive window (its file writer's buffer follows it).
    window: u64,
    /// A one-shot receiver's door: second senders answered, a stale one replaced.
    door: Option<Door>,
    /// The association that replaces this one, once the door let one in.
    replacement: Option<Accepted>,
    /// The stream's header, until it has been read (`None`: no header, a peer other
    /// than cmtlab).
    header: Option<HeaderReader>,
    /// Where the stream started in the file.
    resumed_from: u64,
    /// The length and SHA-256 the sender announced (with its SHUTDOWN).
    announced: Option<(u64, String)>,
    /// The digest of the committed file.
    sha: Option<String>,
    confirm: bool,
    cookie_ack: Packet,
}

impl End for Receiving {
    fn verdict(&mut self, ran: Result<(), TransferError>) -> Result<(), TransferError> {
        if let (Err(_), Some(why)) = (&ran, self.refusal.take()) {
            return Err(TransferError::Refused(why));
        }
        match ran {
            // Stopped (a serving receiver told to quit) after the file was committed and
            // confirmed, while waiting for the SHUTDOWN COMPLETE: stored all the same.
            Err(TransferError::Aborted) if self.sha.is_some() => Ok(()),
            r => r,
        }
    }

    fn exchange(&mut self, assoc: &mut Association<Counters>) -> Result<(), Halt> {
        if let Some(e) = self.sink.as_ref().and_then(Sink::failed) {
            return Err(Halt {
                why: e,
                cause: CAUSE_OUT_OF_RESOURCE,
            });
        }
        // Only as much as the sink takes now: the rest waits in the association (whose
        // window then closes) until the sink's `ready` wakes the loop.
        let mut drained = false;
        while self.sink.as_ref().is_none_or(Sink::has_room) {
            match assoc.read() {
                Some(Payload::Bytes(b)) => self.store(&b, assoc)?,
                Some(Payload::Synthetic(_)) => {}
                None => {
                    drained = true;
                    break;
                }
            }
        }
        if let Some(d) = assoc
            .take_extension_chunks()
            .iter()
            .rev()
            .find_map(parse_digest)
        {
            self.announced = Some(d);
        }
        let written = drained && self.sink.as_ref().is_none_or(|s| s.pending() == 0);
        if self.sha.is_none() && assoc.closing() == Closing::Received && written {
            self.commit(assoc)?;
        }
        Ok(())
    }

    fn input(&self) -> Option<Arc<Notify>> {
        self.sink.as_ref().and_then(Sink::ready)
    }

    fn done(&self, _assoc: &Association<Counters>) -> u64 {
        self.bytes()
    }

    fn direct_reply(&self, p: &Packet, trusted: bool) -> Option<Packet> {
        // Our COOKIE ACK got lost: answer the repeated COOKIE ECHO again.
        let echo = matches!(p.chunks.first(), Some(Chunk::CookieEcho { .. }));
        (trusted && echo).then(|| self.cookie_ack.clone())
    }

    fn heard(&mut self, routes: &mut Routes, local: usize, from: SocketAddr) -> Option<PathId> {
        routes.latch(local, from)
    }

    fn knocks(&self, a: &Arrival, local_vtag: u32) -> bool {
        self.door.is_some() && Door::knocks(a, local_vtag)
    }

    async fn answer_knock(
        &mut self,
        socks: &mut Sockets,
        o: &Options,
        a: &Arrival,
        stale: bool,
    ) -> bool {
        let offer = stale
            .then(|| self.sink.as_ref().and_then(Sink::live_offer))
            .flatten();
        let Some(door) = self.door.as_mut() else {
            return false;
        };
        self.replacement = door.answer(socks, o, a, (stale, offer)).await;
        self.replacement.is_some()
    }
}

impl Receiving {
    /// Storing into a sink or a directory (`to`); `confirm`: the peer confirms files
    /// (FILE-DIGEST), so its stream starts with a header.
    fn new(
        (sink, dir): (Option<Sink>, Option<(std::path::PathBuf, bool)>),
        confirm: bool,
        cookie_ack: Packet,
        o: &Options,
    ) -> Self {
        Receiving {
            sink,
            dir,
            header: confirm.then(HeaderReader::default),
            resumed_from: 0,
            announced: None,
            sha: None,
            confirm,
            cookie_ack,
            stored_as: None,
            refusal: None,
            meter: o.meter.clone(),
            window: u64::from(o.rbuf),
            door: None,
            replacement: None,
        }
    }

    /// Bytes stored so far.
    fn bytes(&self) -> u64 {
        self.sink.as_ref().map_or(0, Sink::bytes)
    }

    /// Stores delivered bytes, the stream's header first.
    fn store(&mut self, b: &[u8], assoc: &mut Association<Counters>) -> Result<(), Halt> {
        if let Some(m) = &self.meter {
            m.moved(b.len() as u64);
        }
        let data = match self.header.as_mut() {
            Some(r) if !r.is_done() => {
                // A malformed header (a name that is not UTF-8 or too long, say) is
                // refused with the reason, which the sender's user reads.
                let (h, rest) = match r.feed(b) {
                    Ok(fed) => fed,
                    Err(e) => return Err(self.refuse(assoc, e)),
                };
                if let Some(h) = h {
                    self.resumed_from = h.start;
                    if self.sink.is_none() {
                        self.open(h.name.as_deref(), assoc)?;
                    }
                    if let Some(m) = &self.meter {
                        m.set_named();
                    }
                    self.sink
                        .as_mut()
                        .expect("opened")
                        .begin(h)
                        .map_err(Halt::with(CAUSE_PROTOCOL_VIOLATION))?;
                }
                rest
            }
            _ => b,
        };
        if data.is_empty() {
            return Ok(());
        }
        let sink = self.sink.as_mut().ok_or_else(|| {
            let why = "data before the stream's header named the file".to_string();
            Halt {
                why,
                cause: CAUSE_PROTOCOL_VIOLATION,
            }
        })?;
        // The sender must not believe the file arrived: ABORT, "out of resource".
        sink.write(data).map_err(Halt::with(CAUSE_OUT_OF_RESOURCE))
    }

    /// Serving a directory: opens the file the header names, or refuses the transfer
    /// (the reason goes to the sender with the ABORT).
    fn open(&mut self, name: Option<&str>, assoc: &mut Association<Counters>) -> Result<(), Halt> {
        let (dir, overwrite) = self.dir.as_ref().expect("a sink or a directory");
        let dest = match names::destination(dir, name, *overwrite) {
            Ok(dest) => dest,
            Err(why) => return Err(self.refuse(assoc, why)),
        };
        let sink = match overwrite {
            true => Sink::create(&dest),
            false => Sink::create_new(&dest),
        };
        // The server's own trouble: the detail stays here, the sender learns the cause.
        let mut sink = sink.map_err(Halt::with(CAUSE_OUT_OF_RESOURCE))?;
        sink.resize_buffer(crate::sink::buffer_for(self.window) as usize);
        self.sink = Some(sink);
        self.stored_as = Some(dest);
        Ok(())
    }

    /// Refuses the transfer for `why`, which goes to the sender with the ABORT; the
    /// error that ends the association.
    fn refuse(&mut self, assoc: &mut Association<Counters>, why: String) -> Halt {
        assoc.bundle_with(chunk_type::ABORT, refusal_chunk(&why));
        self.refusal = Some(why.clone());
        Halt {
            why,
            cause: CAUSE_USER_INITIATED_ABORT,
        }
    }

    /// The peer asked to shut down, so everything it sent has arrived: the file is
    /// committed durably when it is what the sender announced (and our digest goes out
    /// with the SHUTDOWN ACK); otherwise nothing is stored and the ABORT that ends the
    /// association carries what we received.
    fn commit(&mut self, assoc: &mut Association<Counters>) -> Result<(), Halt> {
        let Some(sink) = self.sink.as_mut() else {
            let e = "the sender shut down before its stream's header arrived".to_string();
            return Err(Halt {
                why: e,
                cause: CAUSE_PROTOCOL_VIOLATION,
            });
        };
        let ours = (sink.bytes(), sink.digest());
        if self.confirm {
            if let Err(e) = compare_announced(self.announced.as_ref(), (ours.0, &ours.1)) {
                sink.discard();
                assoc.bundle_with(chunk_type::ABORT, digest_chunk(ours.0, &ours.1));
                return Err(Halt {
                    why: e,
                    cause: CAUSE_USER_INITIATED_ABORT,
                });
            }
        }
        if let (Some((_, false)), Some(dest)) = (&self.dir, &self.stored_as) {
            // Another transfer stored a file of this name meanwhile (the commit could
            // not replace it anyway): the sender hears why.
            if std::fs::symlink_metadata(dest).is_ok() {
                let name = dest.file_name().unwrap_or_default().to_string_lossy();
                let why = format!("{name:?} was stored by another transfer meanwhile");
                return Err(self.refuse(assoc, why));
            }
        }
        let digest = sink.commit().map_err(Halt::with(CAUSE_OUT_OF_RESOURCE))?;
        if self.confirm {
            let stored = digest_chunk(sink.bytes(), &digest);
            assoc.bundle_with(chunk_type::SHUTDOWN_ACK, stored);
        }
        assoc.hold_shutdown_ack(false);
        self.sha = Some(digest);
        Ok(())
    }
}
