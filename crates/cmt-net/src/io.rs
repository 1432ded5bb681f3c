//! The IO edge: one UDP socket per local address, a reader task per socket feeding one
//! channel, and the clock. Everything else is the sans-IO core.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;

use cmt_core::wire::{decode, encode};
use cmt_core::{Packet, Time};
use tokio::net::UdpSocket;
use tokio::sync::mpsc;

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
    /// Parsed packet.
    pub packet: Result<Packet, cmt_core::wire::WireError>,
    /// The datagram as received, when capturing.
    pub raw: Option<Vec<u8>>,
}

/// The sockets of one endpoint and the channel their readers feed.
pub struct Sockets {
    /// Bound sockets, in the order of the local addresses.
    pub sockets: Vec<Arc<UdpSocket>>,
    /// Arrivals from every socket.
    pub rx: mpsc::Receiver<Arrival>,
    start: Instant,
    buf: Vec<u8>,
    capturing: Arc<std::sync::atomic::AtomicBool>,
    capture: Vec<u8>,
}

impl Sockets {
    /// Binds every address (a port 0 after the first becomes the first socket's port, so
    /// all addresses share one UDP encapsulation port) and starts the readers.
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
            sockets.push(Arc::new(s));
        }
        let (tx, rx) = mpsc::channel(4096);
        let capturing = Arc::new(std::sync::atomic::AtomicBool::new(false));
        for (i, s) in sockets.iter().enumerate() {
            let (s, tx, cap) = (s.clone(), tx.clone(), capturing.clone());
            tokio::spawn(async move {
                let mut buf = vec![0u8; 65_536];
                loop {
                    let Ok((n, from)) = s.recv_from(&mut buf).await else {
                        return;
                    };
                    let packet = decode(&buf[..n]).map(|d| d.packet);
                    let raw = cap
                        .load(std::sync::atomic::Ordering::Relaxed)
                        .then(|| buf[..n].to_vec());
                    if tx
                        .send(Arrival {
                            local: i,
                            from,
                            packet,
                            raw,
                        })
                        .await
                        .is_err()
                    {
                        return;
                    }
                }
            });
        }
        Ok(Sockets {
            sockets,
            rx,
            start: Instant::now(),
            buf: Vec::with_capacity(2048),
            capturing,
            capture: Vec::new(),
        })
    }

    /// Starts recording every datagram sent and received (IPv4 only) as pcap.
    pub fn start_capture(&mut self) {
        self.capture = cmt_core::pcap::file_header().to_vec();
        self.capturing
            .store(true, std::sync::atomic::Ordering::Relaxed);
    }

    /// Records a received datagram (its arrival as handled now).
    pub fn record_arrival(&mut self, a: &Arrival) {
        if let (Some(raw), Ok(to)) = (&a.raw, self.sockets[a.local].local_addr()) {
            let t = self.now();
            self.record(t, a.from, to, raw.clone());
        }
    }

    fn record(&mut self, t: Time, from: SocketAddr, to: SocketAddr, bytes: Vec<u8>) {
        if let (SocketAddr::V4(f), SocketAddr::V4(d)) = (from, to) {
            cmt_core::pcap::record(
                &mut self.capture,
                t.as_nanos(),
                (*f.ip(), f.port()),
                (*d.ip(), d.port()),
                &bytes,
            );
        }
    }

    /// The capture so far (a pcap file), if capturing.
    pub fn capture(&self) -> Option<&[u8]> {
        (!self.capture.is_empty()).then_some(&self.capture[..])
    }

    /// The local addresses actually bound.
    pub fn local_addrs(&self) -> Vec<SocketAddr> {
        self.sockets
            .iter()
            .filter_map(|s| s.local_addr().ok())
            .collect()
    }

    /// Time since the sockets were bound, as the core's clock.
    pub fn now(&self) -> Time {
        Time::from_nanos(self.start.elapsed().as_nanos() as u64)
    }

    /// The wall-clock instant of a core time.
    pub fn instant(&self, t: Time) -> tokio::time::Instant {
        tokio::time::Instant::from_std(self.start + std::time::Duration::from_nanos(t.as_nanos()))
    }

    /// Encodes and sends `packet` from local socket `local` to `to`.
    pub async fn send(
        &mut self,
        local: usize,
        to: SocketAddr,
        packet: &Packet,
    ) -> std::io::Result<()> {
        let port = self.sockets[local].local_addr()?.port();
        encode(packet, port, to.port(), &mut self.buf);
        self.sockets[local].send_to(&self.buf, to).await?;
        if !self.capture.is_empty() {
            let (t, from, bytes) = (
                self.now(),
                self.sockets[local].local_addr()?,
                self.buf.clone(),
            );
            self.record(t, from, to, bytes);
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
