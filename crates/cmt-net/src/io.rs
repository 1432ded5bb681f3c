//! The IO edge: one UDP socket per local address, read by polling them all from the
//! association's own task (no reader tasks: dropping [`Sockets`] closes every socket at
//! once, so its ports are free again), and the clock. Everything else is the sans-IO
//! core. Once an association authenticates (RFC 4895), packets are signed after
//! encoding and checked before they are handed on, so the core never sees an AUTH
//! chunk.

use std::net::SocketAddr;
use std::task::Poll;
use std::time::Instant;

use cmt_core::auth::Session;
use cmt_core::pcap::Pcap;
use cmt_core::wire::{decode, encode, WireError};
use cmt_core::{Packet, Time};
use tokio::io::ReadBuf;
use tokio::net::UdpSocket;

/// Socket buffers asked for (the kernel caps them at `net.core.[rw]mem_max`): a full
/// window of a fast path must fit, or bursts are lost in the socket, not the network.
pub const SOCKET_BUFFER: usize = 4 << 20;

/// A non-blocking UDP socket with large buffers, bound to `a`.
fn bind_udp(a: SocketAddr) -> std::io::Result<UdpSocket> {
    use socket2::{Domain, Protocol, Socket, Type};
    let s = Socket::new(Domain::for_address(a), Type::DGRAM, Some(Protocol::UDP))?;
    // Best effort: an unprivileged process may get less.
    let _ = s.set_recv_buffer_size(SOCKET_BUFFER);
    let _ = s.set_send_buffer_size(SOCKET_BUFFER);
    s.set_nonblocking(true)?;
    s.bind(&a.into())?;
    UdpSocket::from_std(s.into())
}

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
}

/// The sockets of one endpoint.
pub struct Sockets {
    /// Bound sockets, in the order of the local addresses.
    pub sockets: Vec<UdpSocket>,
    /// Their addresses as bound (read once: sending and capturing need them per packet).
    locals: Vec<SocketAddr>,
    start: Instant,
    buf: Vec<u8>,
    rbuf: Vec<u8>,
    /// The socket polled first next time (rotates, so no socket starves the others).
    first: usize,
    capture: Option<Pcap<Vec<u8>>>,
    auth: Option<Session>,
}

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
            let s = bind_udp(a)
                .map_err(|e| std::io::Error::new(e.kind(), format!("cannot bind {a}: {e}")))?;
            port.get_or_insert(s.local_addr()?.port());
            sockets.push(s);
        }
        let locals = sockets
            .iter()
            .map(|s| s.local_addr())
            .collect::<std::io::Result<_>>()?;
        Ok(Sockets {
            sockets,
            locals,
            start: Instant::now(),
            buf: Vec::with_capacity(2048),
            rbuf: vec![0u8; 65_536],
            first: 0,
            capture: None,
            auth: None,
        })
    }

    /// The next datagram on any socket, parsed (and recorded when capturing). Errors of
    /// a socket (e.g. ICMP port unreachable reported on the next read) are skipped: to
    /// the protocol they are lost packets.
    pub async fn recv(&mut self) -> Arrival {
        let n = self.sockets.len();
        let (local, from, len) = std::future::poll_fn(|cx| {
            for k in 0..n {
                let i = (self.first + k) % n;
                let mut rb = ReadBuf::new(&mut self.rbuf);
                match self.sockets[i].poll_recv_from(cx, &mut rb) {
                    Poll::Ready(Ok(from)) => {
                        self.first = (i + 1) % n;
                        return Poll::Ready((i, from, rb.filled().len()));
                    }
                    // Ready again at once: an error is consumed by reporting it.
                    Poll::Ready(Err(_)) => cx.waker().wake_by_ref(),
                    Poll::Pending => {}
                }
            }
            Poll::Pending
        })
        .await;
        if self.capture.is_some() {
            let t = self.now().as_nanos();
            if let Some(c) = self.capture.as_mut() {
                // One socket never mixes address families, the one error `record` has.
                let _ = c.record(t, from, self.locals[local], &self.rbuf[..len]);
            }
        }
        let raw = &self.rbuf[..len];
        let d = decode(raw);
        let src_port = d.as_ref().map_or(0, |d| d.src_port);
        let packet = d.and_then(|d| {
            let mut p = d.packet;
            match self.auth.as_ref().and_then(|a| a.check(raw, &mut p)) {
                // A legitimate peer never sends what we discard: refuse the packet.
                Some(_) => Err(WireError {
                    offset: 0,
                    what: "chunks that must be authenticated (RFC 4895) are not",
                }),
                None => Ok(p),
            }
        });
        Arrival {
            local,
            from,
            src_port,
            packet,
        }
    }

    /// From now on, signs what is sent and checks what arrives with `auth` (RFC 4895).
    /// Returns the bytes an AUTH chunk adds to a packet, for the MTU budget.
    pub fn authenticate(&mut self, auth: Option<Session>) -> u32 {
        self.auth = auth;
        self.auth.as_ref().map_or(0, |a| a.overhead() as u32)
    }

    /// Starts recording every datagram sent and received (IPv4 and IPv6) as pcap.
    pub fn start_capture(&mut self) {
        self.capture = Pcap::new(Vec::new()).ok();
    }

    /// Ends the capture: the pcap file's bytes, if capturing.
    pub fn take_capture(&mut self) -> Option<Vec<u8>> {
        self.capture.take().map(Pcap::into_inner)
    }

    /// The local addresses actually bound.
    pub fn local_addrs(&self) -> Vec<SocketAddr> {
        self.locals.clone()
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

    /// Encodes and sends `packet` from local socket `local` to UDP address `to`, for the
    /// peer's SCTP port `dst_port`.
    pub async fn send(
        &mut self,
        local: usize,
        to: SocketAddr,
        dst_port: u16,
        packet: &Packet,
    ) -> std::io::Result<()> {
        encode(packet, self.sctp_port(), dst_port, &mut self.buf);
        if let Some(a) = &self.auth {
            a.sign(&mut self.buf);
        }
        self.sockets[local].send_to(&self.buf, to).await?;
        if self.capture.is_some() {
            let t = self.now().as_nanos();
            if let Some(c) = self.capture.as_mut() {
                let _ = c.record(t, self.locals[local], to, &self.buf);
            }
        }
        Ok(())
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
