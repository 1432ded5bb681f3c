//! The sending side: connect, stream the source in, close when all is acknowledged and
//! the receiver's digest matches.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;

use bytes::Bytes;
use cmt_core::setup::{
    Connector, Established as SetupDone, SetupError, CAUSE_OUT_OF_RESOURCE,
    CAUSE_USER_INITIATED_ABORT,
};
use cmt_core::wire::chunk_type;
use cmt_core::{Association, Closing, Packet, PathId, Payload, Time};
use tokio::sync::Notify;

use super::{
    arrivals::Collector,
    connection::{Connection, End, Halt, Opening},
    digest::{check_digest, digest_chunk, parse_digest, parse_refusal, refused},
    error::TransferError::{self, Invalid, Refused, Setup, Unconfirmed},
    handshake::{confirms, open_outputs, refuse, setup_config},
    options::{overhead_of, Options},
    report::{Counters, Report},
    routes::Routes,
    wait::{next, until, Wake},
};
use crate::io::{Arrival, Sockets};
use crate::resume::{Header, Offer, UNKNOWN_LENGTH};
use crate::source::Source;
use crate::trust::Trust;

/// Sends `data` from `locals` to `remotes`; returns when the association has closed.
pub async fn send(
    locals: &[SocketAddr],
    remotes: &[SocketAddr],
    data: Bytes,
    o: &Options,
) -> Result<Report, TransferError> {
    send_source(locals, remotes, Source::memory(data), o).await
}

/// Sends the file at `path`, read as the transfer goes: memory stays bounded whatever
/// the file's size.
pub async fn send_file(
    locals: &[SocketAddr],
    remotes: &[SocketAddr],
    path: &Path,
    o: &Options,
) -> Result<Report, TransferError> {
    let src = Source::file(path).map_err(Invalid)?;
    if o.send.name.is_none() {
        let mut o = o.clone();
        o.send.name = path
            .file_name()
            .and_then(|n| n.to_str())
            .map(str::to_string);
        return send_source(locals, remotes, src, &o).await;
    }
    send_source(locals, remotes, src, o).await
}

/// Sends everything `src` yields — a file, bytes, or a stream such as standard input
/// ([`Source::stream`]) — writing it into the association in pieces while less than a
/// window's worth is unacknowledged. A stream cannot be resumed (`o.resume`): its
/// start is gone once sent.
pub async fn send_source(
    locals: &[SocketAddr],
    remotes: &[SocketAddr],
    src: Source,
    o: &Options,
) -> Result<Report, TransferError> {
    let overhead = check(locals, remotes, &src, o)?;
    let asked = locals.len();
    let (locals, remotes) = &with_adopt_slots(locals, remotes, o);
    let absent = absent_interfaces(locals, asked, o)?;
    let mut socks = Sockets::bind(&placeholders(locals, &absent))
        .await
        .map_err(|e| Invalid(e.to_string()))?;
    socks.set_gso(o.gso);
    let trace = open_outputs(&mut socks, o).map_err(Invalid)?;
    let present: Vec<SocketAddr> = (socks.local_addrs().into_iter().zip(&absent))
        .filter_map(|(a, &gone)| (!gone).then_some(a))
        .collect();
    let (est, rejected) = connect_when_free(&mut socks, &present, remotes[0], o).await?;
    let n = locals.len().min(remotes.len());
    // The peer's SCTP port is the one we addressed the INIT to.
    let routes = Routes::new(
        locals.len(),
        (0..n).map(|i| (i, remotes[i])).collect(),
        remotes[0].port(),
    );
    let confirm = confirms(&mut socks, &routes, &est, o).await?;
    let mut src = src;
    let first = if confirm {
        resume_at(&mut socks, &routes, &est, &mut src, o).await?
    } else {
        0
    };
    let overhead = overhead + socks.authenticate(est.auth.clone());
    let returns_arrivals =
        o.send.return_arrivals && est.peer_extensions.contains(&chunk_type::ARRIVALS);
    let opening = Opening {
        est,
        routes,
        // Only the addresses we send to speak for the receiver until another answers
        // a probe.
        trust: Trust::new(remotes.iter().copied(), socks.is_authenticating()),
        rejected,
        overhead,
        absent: absent.clone(),
        bound: (
            (socks.local_addrs().iter().zip(&absent))
                .map(|(a, &gone)| (!gone).then_some(a.ip()))
                .collect(),
            asked,
        ),
        announced: present.iter().map(|a| a.ip()).collect(),
        sender: true,
    };
    let mut s = Connection::open(&socks, o, opening, trace)?;
    let assoc = &mut s.assoc;
    for (i, c) in o.send.capacities.iter().enumerate().take(n) {
        assoc.set_destination_capacity(PathId(i), *c);
    }
    for (i, &b) in o.send.backups.iter().enumerate().take(n) {
        assoc.set_backup(PathId(i), b);
    }
    let piece = assoc.max_payload() as usize * 64;
    if confirm {
        // Between cmtlab ends the stream says where in the file it starts.
        let header = Header {
            start: first,
            total: src.len().unwrap_or(UNKNOWN_LENGTH),
            name: o.send.name.clone(),
        };
        assoc.write(Payload::Bytes(header.bytes()));
    }
    let mut end = Sending {
        src,
        // Unacknowledged bytes the sender keeps in memory: twice the receive buffer,
        // within 1–32 MiB; pieces are whole chunks, so no write leaves a short one.
        window: (2 * o.rbuf as u64).clamp(1 << 20, 32 << 20),
        piece,
        confirm,
        digest: None,
        refusal: None,
        returned: returns_arrivals.then(Collector::default),
    };
    let ran = s.run(&mut socks, &mut end, o).await;
    end.verdict(ran)?;
    let (total, sha256) = (end.src.read(), end.src.sha256());
    let mut report = s.finish(&mut socks, o, (total, sha256, confirm))?;
    report.resumed_from = first;
    report.arrivals = end.returned.take().map(Collector::finish);
    if confirm {
        check_digest((total, &report.sha256), end.digest).map_err(Unconfirmed)?;
    }
    Ok(report)
}

/// Checks the addresses and options before any packet is sent; returns the paths'
/// IP + UDP header bytes.
fn check(
    locals: &[SocketAddr],
    remotes: &[SocketAddr],
    src: &Source,
    o: &Options,
) -> Result<u32, TransferError> {
    if locals.is_empty() || remotes.is_empty() {
        return Err(Invalid(
            "give at least one local and one remote address".into(),
        ));
    }
    if locals.len() != remotes.len() {
        return Err(Invalid(format!(
            "{} local and {} remote addresses: path i pairs local address i with remote \
             address i, so give as many of each",
            locals.len(),
            remotes.len()
        )));
    }
    let overhead = overhead_of(locals);
    o.validate_for(overhead).map_err(Invalid)?;
    if o.resume && src.len().is_none() {
        return Err(Invalid(
            "--resume: a stream cannot be resumed (what was sent of it is gone); send a file"
                .into(),
        ));
    }
    Ok(overhead)
}

/// Where the stream starts: with `--resume`, where the receiver's offer (in its INIT
/// ACK) ends, once the file is found to start with what the receiver holds (the source
/// is then read up to there and hashed); else at the first byte. A file that changed
/// since (another length, other first bytes) is refused.
async fn resume_at(
    socks: &mut Sockets,
    routes: &Routes,
    est: &SetupDone,
    src: &mut Source,
    o: &Options,
) -> Result<u64, TransferError> {
    let offer = Offer::from_params(&est.peer_unknown_params);
    let (true, Some(offer)) = (o.resume, offer) else {
        return Ok(0);
    };
    let len = src.len().unwrap_or(0);
    let why = if offer.total != len {
        format!(
            "cannot resume: the receiver holds {} bytes of a file of {} bytes, this one has \
             {len}; the source changed (send it without --resume to start over)",
            offer.offset, offer.total
        )
    } else {
        match src.skip_verified(offer.offset, &offer.prefix_sha256) {
            Ok(true) => return Ok(offer.offset),
            Ok(false) => format!(
                "cannot resume: the first {} bytes the receiver holds differ from this \
                 file's; the source changed (send it without --resume to start over)",
                offer.offset
            ),
            Err(e) => e,
        }
    };
    Err(refuse(socks, routes, est, &why).await)
}

/// [`connect`], tried again every half second for a while when a one-shot receiver is
/// busy with another transfer: a sender started again after its predecessor was killed
/// gets in once that one is found silent and replaced ([`super::door`]).
async fn connect_when_free(
    socks: &mut Sockets,
    announce: &[SocketAddr],
    remote: SocketAddr,
    o: &Options,
) -> Result<(SetupDone, u64), TransferError> {
    let first = std::time::Instant::now();
    loop {
        match connect(socks, announce, remote, o).await {
            Err(Refused(why))
                if why.contains(super::door::BUSY_MARK)
                    && first.elapsed() < super::door::BUSY_RETRY_FOR =>
            {
                tokio::time::sleep(std::time::Duration::from_millis(500)).await;
            }
            r => return r,
        }
    }
}

/// The handshake from socket 0 to `remote`, announcing the addresses `announce`:
/// INIT … COOKIE ACK, within the time limit.
/// Authentication, when configured, starts with the INIT ACK (so the COOKIE ECHO is
/// signed and the COOKIE ACK checked, RFC 4895 §6.2). Also returns the datagrams that
/// did not parse.
async fn connect(
    socks: &mut Sockets,
    announce: &[SocketAddr],
    remote: SocketAddr,
    o: &Options,
) -> Result<(SetupDone, u64), TransferError> {
    let mut conn = Connector::new(setup_config(o, announce), rand::random());
    let mut rejected = 0u64;
    let setup_deadline = o.deadline(Time::ZERO);
    loop {
        let now = socks.now();
        if now >= setup_deadline {
            return Err(Setup(if conn.cookie_sent() {
                let key = if o.auth.is_some() {
                    " (with a key: the peer may hold another one)"
                } else {
                    ""
                };
                format!("no answer to COOKIE ECHO within {} s{key}", o.timeout_s)
            } else {
                format!("no answer to INIT within {} s", o.timeout_s)
            }));
        }
        if let Some(p) = conn.poll_transmit(now) {
            socks
                .send(0, remote, remote.port(), &p)
                .await
                .map_err(|e| Setup(e.to_string()))?;
        }
        match next(
            socks,
            until(conn.poll_timeout(), setup_deadline),
            o,
            None,
            None,
        )
        .await
        {
            Wake::Packet(Arrival { packet: Ok(p), .. }) => match conn.handle_packet(&p) {
                Ok(Some(est)) => return Ok((est, rejected)),
                Ok(None) if !socks.is_authenticating() => {
                    socks.authenticate(conn.session().cloned());
                }
                Ok(None) => {}
                Err(e) => return Err(setup_failed(&p, e)),
            },
            Wake::Packet(Arrival { packet: Err(_), .. }) => rejected += 1,
            Wake::Abort => return Err(Setup("aborted before the association was set up".into())),
            Wake::Interfaces | Wake::Input => {}
            Wake::Timer => conn
                .handle_timeout(socks.now())
                .map_err(|e| Setup(format!("setup failed: {e}")))?,
        }
    }
}

/// Why the handshake failed, as the user reads it: the receiver's own reason when its
/// ABORT carried one (a one-shot receiver busy with another sender), a server at its
/// limit of transfers when it said "Out of Resource", else the error itself.
fn setup_failed(p: &Packet, e: SetupError) -> TransferError {
    match (e, p.chunks.iter().find_map(parse_refusal)) {
        (SetupError::Aborted(_), Some(why)) => {
            Refused(format!("out of resource at association setup: {why}"))
        }
        (SetupError::Aborted(Some(CAUSE_OUT_OF_RESOURCE)), None) => Refused(
            "out of resource at association setup (a server at its limit of transfers at \
             once: try again later)"
                .into(),
        ),
        (e, _) => Setup(format!("setup failed: {e}")),
    }
}

/// The sender's part of the established phase: the source written in while less than
/// a window is unacknowledged, a graceful close once it is all written (the SHUTDOWN,
/// which announces the file's length and SHA-256, leaves once all is acknowledged),
/// and the receiver's digest taken when it comes.
struct Sending {
    src: Source,
    window: u64,
    piece: usize,
    confirm: bool,
    digest: Option<(u64, String)>,
    /// Why the receiver refused the transfer, when it said.
    refusal: Option<String>,
    /// The arrivals the receiver returns, when asked for and announced.
    returned: Option<Collector>,
}

impl End for Sending {
    fn exchange(&mut self, assoc: &mut Association<Counters>) -> Result<(), Halt> {
        // A stream's data waits in the source, not here: little is written ahead of
        // what the paths take (a measurement ends on time, a pipe is read as needed).
        let ahead = match self.src.len() {
            Some(_) => u64::MAX,
            None => 4 * self.piece as u64,
        };
        while !self.src.is_done()
            && assoc.unacked_bytes() < self.window
            && assoc.unsent_bytes() < ahead
        {
            let piece = self
                .src
                .next_piece(self.piece)
                .map_err(Halt::with(CAUSE_USER_INITIATED_ABORT))?;
            // None: a stream waiting for its producer (its `ready` wakes the loop).
            let Some(b) = piece else { break };
            assoc.write(Payload::Bytes(b));
        }
        // Closed once the last byte is written, as an SCTP application closes after its
        // last send: the association then shuts down when all is acknowledged, and
        // marks the last chunk for an immediate SACK (RFC 7053), which the shutdown
        // waits for.
        if self.src.is_done() && assoc.closing() == Closing::Open {
            if self.confirm {
                let announce = digest_chunk(self.src.read(), &self.src.sha256());
                assoc.bundle_with(chunk_type::SHUTDOWN, announce);
            }
            assoc.close();
        }
        Ok(())
    }

    fn done(&self, assoc: &Association<Counters>) -> u64 {
        self.src.read() - assoc.unacked_bytes().min(self.src.read())
    }

    fn input(&self) -> Option<Arc<Notify>> {
        self.src.ready()
    }

    fn verdict(&mut self, ran: Result<(), TransferError>) -> Result<(), TransferError> {
        let Err(TransferError::Ended(_)) = ran else {
            return ran;
        };
        if let Some(why) = self.refusal.take() {
            return Err(Refused(why));
        }
        match &self.digest {
            // The receiver refused the file and said what it had received.
            Some(got) => {
                let sent = (self.src.read(), self.src.sha256());
                Err(Unconfirmed(refused((sent.0, &sent.1), Some(got))))
            }
            None => ran,
        }
    }

    fn after_packets(&mut self, assoc: &mut Association<Counters>) {
        for c in assoc.take_extension_chunks() {
            if let Some(d) = parse_digest(&c) {
                self.digest = Some(d);
            }
            if let Some(why) = parse_refusal(&c) {
                self.refusal = Some(why);
            }
            if let Some(r) = &mut self.returned {
                r.take(&c);
            }
        }
    }
}

/// Which local entries are interfaces without an address yet (an unspecified address
/// with an interface name): their paths start removed and are added when the interface
/// gets an address (told to the peer with ADD-IP). The first path starts the
/// association, so it needs an address now.
fn absent_interfaces(
    locals: &[SocketAddr],
    asked: usize,
    o: &Options,
) -> Result<Vec<bool>, TransferError> {
    let absent: Vec<bool> = (0..locals.len())
        .map(|i| {
            let named = o.interfaces.get(i).is_some_and(Option::is_some);
            i >= asked || (locals[i].ip().is_unspecified() && named)
        })
        .collect();
    if absent.first() == Some(&true) {
        return Err(Invalid(
            "the first local interface has no address: the association starts on it".into(),
        ));
    }
    Ok(absent)
}

/// Spare sockets a sender adopting interfaces (`--local auto`) keeps for interfaces
/// that appear during the transfer (Linux MPTCP's default limit of additional subflows
/// is two as well).
pub const ADOPT_SLOTS: usize = 2;

/// `locals` and `remotes` with [`ADOPT_SLOTS`] more paths when adopting: unbound until
/// an interface appears, each towards the remotes in turn.
fn with_adopt_slots(
    locals: &[SocketAddr],
    remotes: &[SocketAddr],
    o: &Options,
) -> (Vec<SocketAddr>, Vec<SocketAddr>) {
    let (mut l, mut r) = (locals.to_vec(), remotes.to_vec());
    if o.send.adopt.is_some() {
        for k in 0..ADOPT_SLOTS {
            l.push(SocketAddr::new(std::net::Ipv4Addr::UNSPECIFIED.into(), 0));
            r.push(remotes[k % remotes.len()]);
        }
    }
    (l, r)
}

/// The addresses to bind: an absent interface's socket waits on a loopback address of
/// its family (it sends nothing until rebound) — over IPv4 one of its own in
/// 127.255.255.0/24, so several absent sockets can share the endpoint's port.
fn placeholders(locals: &[SocketAddr], absent: &[bool]) -> Vec<SocketAddr> {
    let loopback = |i: usize, a: &SocketAddr| -> std::net::IpAddr {
        if a.is_ipv4() {
            std::net::Ipv4Addr::new(127, 255, 255, (1 + i % 254) as u8).into()
        } else {
            std::net::Ipv6Addr::LOCALHOST.into()
        }
    };
    (0..locals.len())
        .map(|i| match absent[i] {
            true => SocketAddr::new(loopback(i, &locals[i]), locals[i].port()),
            false => locals[i],
        })
        .collect()
}
