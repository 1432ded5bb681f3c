//! The IO edge: one UDP socket per local address, read by polling them all from the
//! association's own task (no reader tasks: dropping [`Sockets`] closes every socket at
//! once, so its ports are free again) — or, for one of many associations a server
//! runs on the same sockets, fed by the server's dispatcher ([`routed`]) — and the
//! clock. Everything else is the sans-IO core. Once an association authenticates (RFC
//! 4895), packets are signed after encoding and checked before they are handed on, so
//! the core never sees an AUTH chunk.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;

use cmt_core::auth::Session;
use cmt_core::wire::{chunk_type, decode, encode, WireError};
use cmt_core::{Packet, Time};

mod capture;
pub mod routed;
mod rx;
mod tx;
mod udp;

use routed::{Inbox, Outbox};

use capture::Capture;

pub(crate) use rx::{Datagram as RxDatagram, RxBatch};
pub use tx::Gso;
pub(crate) use tx::TxQueue;
pub use udp::SOCKET_BUFFER;
pub(crate) use udp::{poll_recv_any, Udp};

/// A datagram that arrived: which local socket, from where, and the parsed packet (or
/// why it did not parse).
pub struct Arrival {
    /// Index of the local socket.
    pub local: usize,
    /// Sender.
    pub from: SocketAddr,
    /// The SCTP source port (0 when the datagram did not parse). RFC 6951: it need
    /// not equal the UDP source port; replies go to it.
    pub src_port: u16,
    /// Parsed packet.
    pub packet: Result<Packet, cmt_core::wire::WireError>,
    /// A valid AUTH chunk covered the packet (RFC 4895): it comes from a holder of the
    /// key (or replays one's packet). Always false before authentication starts.
    pub authenticated: bool,
    /// Its IP header said Congestion Experienced (RFC 3168): a queue on the way marked
    /// it. Read where the sockets report it (Linux); else always false.
    pub ce: bool,
}

/// What crossed the sockets, and in how many system calls.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IoCounts {
    /// Datagrams sent.
    pub datagrams_sent: u64,
    /// The send calls that carried them (fewer with GSO).
    pub sends: u64,
    /// Datagrams received.
    pub datagrams_received: u64,
    /// The receive calls that brought them (fewer with `recvmmsg` and GRO).
    pub receives: u64,
    /// Datagrams refused because chunks that must be authenticated (RFC 4895) were not.
    pub unauthenticated: u64,
}

/// The sockets of one endpoint. Datagrams are received in batches (`recvmmsg`, GRO) and
/// handed out one at a time; what [`queue`](Self::queue) gathers leaves in GSO batches
/// at [`send_queued`](Self::send_queued).
pub struct Sockets {
    /// Bound sockets, in the order of the local addresses (shared with the other
    /// associations of a server, see [`routed`]).
    sockets: Arc<Vec<Udp>>,
    /// Datagrams a dispatcher routed here; `None`: the sockets are read here.
    inbox: Option<Inbox>,
    /// Their addresses as bound (read once: sending and capturing need them per packet).
    locals: Vec<SocketAddr>,
    start: Instant,
    buf: Vec<u8>,
    rx: RxBatch,
    tx: TxQueue,
    /// The socket polled first next time (rotates, so no socket starves the others).
    first: usize,
    capture: Option<Capture>,
    /// Where the bytes of the datagram [`recv`](Self::recv) returned last are.
    last: Option<rx::Datagram>,
    auth: Option<Session>,
    counts: IoCounts,
    gso: Gso,
    /// Everything queued since the last send may leave in GSO batches.
    batched: bool,
}

/// Datagrams past which queued sends no longer wait for the rest of a receive batch
/// (the most one GSO send carries).
pub const DEFER_MAX: usize = 64;

impl Sockets {
    /// Binds every address (a port 0 after the first becomes the first socket's port, so
    /// all addresses share one UDP encapsulation port).
    pub async fn bind(addrs: &[SocketAddr]) -> std::io::Result<Sockets> {
        let mut sockets = Vec::with_capacity(addrs.len());
        let mut port = None;
        for a in addrs {
            let mut a = *a;
            if a.port() == 0 {
                if let Some(p) = port {
                    a.set_port(p);
                }
            }
            let s = Udp::bind(a)
                .map_err(|e| std::io::Error::new(e.kind(), format!("cannot bind {a}: {e}")))?;
            port.get_or_insert(s.local_addr()?.port());
            sockets.push(s);
        }
        let locals = sockets
            .iter()
            .map(|s| s.local_addr())
            .collect::<std::io::Result<_>>()?;
        Ok(Self::with(
            Arc::new(sockets),
            None,
            locals,
            RxBatch::default(),
        ))
    }

    /// Sockets over `sockets`, fed by `inbox` or by reading them into `rx`.
    fn with(
        sockets: Arc<Vec<Udp>>,
        inbox: Option<Inbox>,
        locals: Vec<SocketAddr>,
        rx: RxBatch,
    ) -> Sockets {
        Sockets {
            sockets,
            inbox,
            locals,
            start: Instant::now(),
            buf: Vec::with_capacity(2048),
            rx,
            tx: TxQueue::default(),
            first: 0,
            capture: None,
            last: None,
            auth: None,
            counts: IoCounts::default(),
            gso: Gso::default(),
            batched: true,
        }
    }

    /// Sockets for one more association on the same sockets, whose datagrams come
    /// through the returned [`Outbox`] (a dispatcher reads the sockets, see [`routed`]);
    /// same clock, same GSO setting, no capture, not authenticating yet.
    pub fn routed(&self) -> (Sockets, Outbox) {
        let (outbox, inbox) = Inbox::channel();
        let mut s = Self::with(
            self.sockets.clone(),
            Some(inbox),
            self.locals.clone(),
            RxBatch::unused(),
        );
        s.start = self.start;
        s.gso = self.gso;
        (s, outbox)
    }

    /// The next datagram on any socket (or routed here), parsed (and recorded when
    /// capturing). Errors of a socket (e.g. ICMP port unreachable reported on the next
    /// read) are skipped: to the protocol they are lost packets.
    pub async fn recv(&mut self) -> Arrival {
        if let Some(inbox) = self.inbox.as_mut() {
            let (socket, from, ce) = inbox.next().await;
            self.counts.receives += 1;
            return self.parse(socket, from, None, ce);
        }
        let d = self.recv_datagram().await;
        let (socket, from, ce) = (d.socket, d.from, d.ce);
        self.parse(socket, from, Some(d), ce)
    }

    /// The next datagram on any socket, unparsed (for a dispatcher: its bytes are
    /// [`datagram_bytes`](Self::datagram_bytes), [`arrival`](Self::arrival) parses it).
    pub(crate) async fn recv_datagram(&mut self) -> rx::Datagram {
        match self.rx.next() {
            Some(d) => d,
            None => {
                let d = std::future::poll_fn(|cx| {
                    udp::poll_recv_any(cx, &self.sockets, &mut self.first, &mut self.rx)
                })
                .await;
                self.counts.receives += 1;
                d
            }
        }
    }

    /// The bytes of a datagram [`recv_datagram`](Self::recv_datagram) returned.
    pub(crate) fn datagram_bytes(&self, d: &rx::Datagram) -> &[u8] {
        self.rx.bytes(d)
    }

    /// Parses a datagram [`recv_datagram`](Self::recv_datagram) returned.
    pub(crate) fn arrival(&mut self, d: rx::Datagram) -> Arrival {
        let (socket, from, ce) = (d.socket, d.from, d.ce);
        self.parse(socket, from, Some(d), ce)
    }

    /// Parses (and captures) a received datagram: `d` in the receive batch, or (`None`)
    /// the one routed here last; `ce`: it arrived marked Congestion Experienced.
    fn parse(
        &mut self,
        local: usize,
        from: SocketAddr,
        d: Option<rx::Datagram>,
        ce: bool,
    ) -> Arrival {
        self.counts.datagrams_received += 1;
        // Only a session that covers every packet vouches for its source.
        let vouches = self.is_authenticating();
        let raw = match (&d, &self.inbox) {
            (Some(d), _) => self.rx.bytes(d),
            (None, Some(i)) => &i.last[..],
            (None, None) => &[],
        };
        if let Some(c) = self.capture.as_mut() {
            let t = self.start.elapsed().as_nanos() as u64;
            c.record(t, from, self.locals[local], raw);
        }
        let decoded = decode(raw);
        let src_port = decoded.as_ref().map_or(0, |d| d.src_port);
        let mut authenticated = false;
        let counts = &mut self.counts;
        let packet = decoded.and_then(|d| {
            let mut p = d.packet;
            match self.auth.as_ref().map(|a| a.check(raw, &mut p)) {
                // A legitimate peer never sends what we discard: refuse the packet.
                Some(Err(_)) => {
                    counts.unauthenticated += 1;
                    Err(WireError {
                        offset: 0,
                        what: "chunks that must be authenticated (RFC 4895) are not",
                    })
                }
                Some(Ok(signed)) => {
                    authenticated = signed && vouches;
                    Ok(p)
                }
                None => Ok(p),
            }
        });
        self.last = d;
        Arrival {
            local,
            from,
            src_port,
            packet,
            authenticated,
            ce,
        }
    }

    /// The bytes of the datagram [`recv`](Self::recv) returned last (valid until the
    /// next call): what an AUTH chunk's HMAC is checked over.
    pub fn last_datagram(&self) -> &[u8] {
        match (&self.last, &self.inbox) {
            (Some(d), _) => self.rx.bytes(d),
            (None, Some(i)) => &i.last,
            (None, None) => &[],
        }
    }

    /// From now on, signs what is sent and checks what arrives with `auth` (RFC 4895).
    /// Returns the bytes an AUTH chunk adds to a DATA packet, for the MTU budget (none
    /// when the peer requires only control chunks authenticated, such as ASCONF).
    pub fn authenticate(&mut self, auth: Option<Session>) -> u32 {
        self.auth = auth;
        self.auth
            .as_ref()
            .filter(|a| a.peer_requires(chunk_type::DATA))
            .map_or(0, |a| a.overhead() as u32)
    }

    /// Whether every packet of the association is signed and checked (RFC 4895 with a
    /// pre-shared key; an association that authenticates only ASCONF is not).
    pub fn is_authenticating(&self) -> bool {
        self.auth
            .as_ref()
            .is_some_and(|a| a.we_require(chunk_type::DATA))
    }

    /// Starts recording every datagram sent and received (IPv4 and IPv6) as pcap,
    /// streamed to `path` (created or truncated now).
    pub fn start_capture(&mut self, path: &std::path::Path) -> Result<(), String> {
        self.capture = Some(Capture::create(path)?);
        Ok(())
    }

    /// Ends the capture, if any: flushed, or the first error writing it.
    pub fn finish_capture(&mut self) -> Result<(), String> {
        self.capture.take().map_or(Ok(()), Capture::finish)
    }

    /// When datagrams for one destination may leave in one send (default: towards
    /// loopback only; see [`Gso`]).
    pub fn set_gso(&mut self, gso: Gso) {
        self.gso = gso;
    }

    /// What crossed the sockets so far.
    pub fn counts(&self) -> IoCounts {
        self.counts
    }

    /// The local addresses actually bound.
    pub fn local_addrs(&self) -> Vec<SocketAddr> {
        self.locals.clone()
    }

    /// Replaces socket `i` with one bound to `ip` on the endpoint's port (the address
    /// of an interface changed); returns the new local address. On an error socket `i`
    /// stays as it was.
    pub fn rebind(&mut self, i: usize, ip: std::net::IpAddr) -> std::io::Result<SocketAddr> {
        let a = SocketAddr::new(ip, self.sctp_port());
        let s = Udp::bind(a)
            .map_err(|e| std::io::Error::new(e.kind(), format!("cannot bind {a}: {e}")))?;
        let local = s.local_addr()?;
        let shared = || std::io::Error::other("the sockets are shared with other associations");
        Arc::get_mut(&mut self.sockets).ok_or_else(shared)?[i] = s;
        self.locals[i] = local;
        Ok(local)
    }

    /// Time since the sockets were bound, as the core's clock.
    pub fn now(&self) -> Time {
        Time::from_nanos(self.start.elapsed().as_nanos() as u64)
    }

    /// The wall-clock instant of a core time.
    pub fn instant(&self, t: Time) -> tokio::time::Instant {
        tokio::time::Instant::from_std(self.start + std::time::Duration::from_nanos(t.as_nanos()))
    }

    /// Our SCTP port: the first socket's UDP port, on every path (one association has
    /// one port pair).
    pub fn sctp_port(&self) -> u16 {
        self.locals.first().map_or(0, |a| a.port())
    }

    /// Encodes `packet` for sending from local socket `local` to UDP address `to`, for
    /// the peer's SCTP port `dst_port`; it leaves with the next
    /// [`send_queued`](Self::send_queued), batched with its neighbours.
    pub fn queue(&mut self, local: usize, to: SocketAddr, dst_port: u16, packet: &Packet) {
        self.queue_ecn(local, to, dst_port, packet, false);
    }

    /// [`queue`](Self::queue), ECN-capable (ECT(0) in the IP header, RFC 3168) when
    /// `ect`: the core's DATA when the association uses ECN.
    pub fn queue_ecn(
        &mut self,
        local: usize,
        to: SocketAddr,
        dst_port: u16,
        packet: &Packet,
        ect: bool,
    ) {
        encode(packet, self.sctp_port(), dst_port, &mut self.buf);
        if let Some(a) = &self.auth {
            a.sign(&mut self.buf);
        }
        if let Some(c) = self.capture.as_mut() {
            let t = self.start.elapsed().as_nanos() as u64;
            c.record(t, self.locals[local], to, &self.buf);
        }
        let max = self.gso.segments(to, self.sockets[local].max_segments());
        self.batched &= max > 1;
        self.tx.push((local, to, ect), &self.buf, max);
    }

    /// Whether what is queued can wait for the datagrams still buffered from the last
    /// receive call to be handled: there are some, everything queued so far can leave
    /// in GSO batches, and fewer than a batch's worth ([`DEFER_MAX`]) are waiting. The
    /// replies to one receive batch then leave in a few sends instead of one each;
    /// each reply is still made when its datagram is handled.
    pub fn can_defer_sends(&self) -> bool {
        let more = match &self.inbox {
            Some(i) => i.has_more(),
            None => self.rx.has_more(),
        };
        self.batched && more && self.tx.datagrams() < DEFER_MAX
    }

    /// Sends everything queued, one system call per batch. A batch the kernel refuses
    /// is lost to the protocol like a packet dropped on the way; the first such error is
    /// returned once all batches were tried.
    pub async fn send_queued(&mut self) -> std::io::Result<()> {
        let mut first_err = None;
        for b in self.tx.batches() {
            self.counts.sends += 1;
            self.counts.datagrams_sent += b.datagrams() as u64;
            if let Err(e) = self.sockets[b.local].send(b, self.tx.bytes(b)).await {
                first_err.get_or_insert(e);
            }
        }
        self.tx.clear();
        self.batched = true;
        first_err.map_or(Ok(()), Err)
    }

    /// Encodes and sends `packet` from local socket `local` to UDP address `to`, for the
    /// peer's SCTP port `dst_port` (with anything queued before it).
    pub async fn send(
        &mut self,
        local: usize,
        to: SocketAddr,
        dst_port: u16,
        packet: &Packet,
    ) -> std::io::Result<()> {
        self.queue(local, to, dst_port, packet);
        self.send_queued().await
    }
}

/// Sleeps until `deadline` with sub-millisecond precision: the timer wheel (1 ms
/// granularity) until about a millisecond before, then yielding to the other tasks
/// until the instant passes. Pacing and retransmission timers need better than the
/// wheel's millisecond; the cost is at most a millisecond of yielding per wake-up.
pub async fn sleep_precisely_until(deadline: tokio::time::Instant) {
    let coarse = std::time::Duration::from_micros(1_500);
    let now = tokio::time::Instant::now();
    if deadline > now + coarse {
        tokio::time::sleep_until(deadline - std::time::Duration::from_millis(1)).await;
    }
    while tokio::time::Instant::now() < deadline {
        tokio::task::yield_now().await;
    }
}
