//! A UDP socket that sends and receives in batches through `quinn-udp`: GSO and
//! `recvmmsg` + GRO where the kernel has them (Linux), one datagram per system call
//! where not — `quinn-udp` reports one segment per send and one per buffer then, and
//! the same code runs.

use std::io;
use std::net::SocketAddr;
use std::task::{Context, Poll};

use quinn_udp::{Transmit, UdpSockRef, UdpSocketState};
use tokio::io::Interest;
use tokio::net::UdpSocket;

use super::rx::{Datagram, RxBatch};
use super::tx::Batch;

/// Socket buffers asked for (the kernel caps them at `net.core.[rw]mem_max`): a full
/// window of a fast path must fit, or bursts are lost in the socket, not the network.
pub const SOCKET_BUFFER: usize = 4 << 20;

/// A bound, non-blocking UDP socket with its batching state.
pub(crate) struct Udp {
    sock: UdpSocket,
    state: UdpSocketState,
}

impl Udp {
    /// Binds `a` with large buffers (best effort: an unprivileged process may get less).
    pub(crate) fn bind(a: SocketAddr) -> io::Result<Udp> {
        use socket2::{Domain, Protocol, Socket, Type};
        let s = Socket::new(Domain::for_address(a), Type::DGRAM, Some(Protocol::UDP))?;
        let _ = s.set_recv_buffer_size(SOCKET_BUFFER);
        let _ = s.set_send_buffer_size(SOCKET_BUFFER);
        s.set_nonblocking(true)?;
        s.bind(&a.into())?;
        let state = UdpSocketState::new(UdpSockRef::from(&s))?;
        allow_fragments(&s, a.is_ipv4());
        let sock = UdpSocket::from_std(s.into())?;
        Ok(Udp { sock, state })
    }

    /// The address bound.
    pub(crate) fn local_addr(&self) -> io::Result<SocketAddr> {
        self.sock.local_addr()
    }

    /// How many datagrams one send may carry (1 without GSO).
    pub(crate) fn max_segments(&self) -> usize {
        self.state.max_gso_segments()
    }

    /// Receives a batch into `rx` (tagged with socket index `index`) when datagrams are
    /// waiting; `Ready(Ok(n))` with the number of messages filled.
    pub(crate) fn poll_recv(
        &self,
        cx: &mut Context<'_>,
        rx: &mut RxBatch,
        index: usize,
    ) -> Poll<io::Result<usize>> {
        loop {
            std::task::ready!(self.sock.poll_recv_ready(cx))?;
            let got = self.sock.try_io(Interest::READABLE, || {
                rx.fill(index, |bufs, meta| {
                    self.state.recv(UdpSockRef::from(&self.sock), bufs, meta)
                })
            });
            match got {
                // Readiness was stale: poll again, which registers the waker.
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                r => return Poll::Ready(r),
            }
        }
    }

    /// Sends batch `b` (its bytes are `bytes`), waiting while the socket's buffer is
    /// full. Should the kernel refuse segmentation offload (some drivers do, with EIO or
    /// EINVAL; `quinn-udp` then stops offering it), the datagrams go one by one.
    pub(crate) async fn send(&self, b: &Batch, bytes: &[u8]) -> io::Result<()> {
        let ecn = b.ect.then_some(quinn_udp::EcnCodepoint::Ect0);
        match self.send_one(b.to, bytes, Some(b.segment), ecn).await {
            Err(_) if b.datagrams() > 1 && self.max_segments() == 1 => {
                for d in bytes.chunks(b.segment) {
                    self.send_one(b.to, d, None, ecn).await?;
                }
                Ok(())
            }
            r => r,
        }
    }

    async fn send_one(
        &self,
        to: SocketAddr,
        bytes: &[u8],
        segment: Option<usize>,
        ecn: Option<quinn_udp::EcnCodepoint>,
    ) -> io::Result<()> {
        let t = Transmit {
            destination: to,
            ecn,
            contents: bytes,
            segment_size: segment.filter(|&s| s < bytes.len()),
            src_ip: None,
        };
        loop {
            self.sock.writable().await?;
            match self.sock.try_io(Interest::WRITABLE, || {
                self.state.try_send(UdpSockRef::from(&self.sock), &t)
            }) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                r => return r,
            }
        }
    }
}

/// Receives a batch into `rx` from the first of `socks`, in rotation from `*first`, that
/// has datagrams, and hands out its first datagram (the rest stay in `rx`). A socket's
/// error (an ICMP error reported on the next read, say) is skipped: to the protocol it
/// is a lost packet.
pub(crate) fn poll_recv_any(
    cx: &mut Context<'_>,
    socks: &[Udp],
    first: &mut usize,
    rx: &mut RxBatch,
) -> Poll<Datagram> {
    let n = socks.len();
    for k in 0..n {
        let i = (*first + k) % n;
        match socks[i].poll_recv(cx, rx, i) {
            Poll::Ready(Ok(_)) => {
                if let Some(d) = rx.next() {
                    *first = (i + 1) % n;
                    return Poll::Ready(d);
                }
                // An empty batch: ask again at once.
                cx.waker().wake_by_ref();
            }
            // Ready again at once: an error is consumed by reporting it.
            Poll::Ready(Err(_)) => cx.waker().wake_by_ref(),
            Poll::Pending => {}
        }
    }
    Poll::Pending
}

/// `quinn-udp` forbids fragmentation (QUIC probes the path MTU itself); SCTP over UDP
/// here trusts the configured MTU, so over IPv4 an MTU above the interface's is
/// fragmented by the kernel as before, not dropped: restore Linux's default
/// (`IP_PMTUDISC_WANT`). GSO then refuses segments above the interface MTU and
/// `quinn-udp` falls back to single sends. (IPv6 keeps `IPV6_DONTFRAG`: it is not
/// fragmented on the way either.)
#[cfg(target_os = "linux")]
fn allow_fragments(s: &socket2::Socket, ipv4: bool) {
    use rustix::net::sockopt::{set_ip_mtu_discover, Ipv4PathMtuDiscovery};
    if ipv4 {
        // Best effort: without it oversized datagrams are refused, as by quinn-udp.
        let _ = set_ip_mtu_discover(s, Ipv4PathMtuDiscovery::WANT);
    }
}

#[cfg(not(target_os = "linux"))]
fn allow_fragments(_: &socket2::Socket, _: bool) {}
