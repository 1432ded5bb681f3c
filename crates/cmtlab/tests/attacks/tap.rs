//! An on-path party: a UDP forwarder between the sender and the receiver that reads
//! everything (tags, initial TSNs, DATA, SACKs) and, once a first stretch of the file
//! has crossed, attacks as told. The receiver sees the tap's back socket as the
//! sender's address, so what the tap injects from there comes from a source the
//! receiver trusts: the strongest position short of holding the key.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use cmt_core::addr_conf::{AddrOp, AsconfChunk, AsconfParam};
use cmt_core::packet::{DataChunk, DataFlags};
use cmt_core::wire::{checksum, chunk_type, decode, encode};
use cmt_core::{Chunk, Packet, Payload};
use sha2::{Digest, Sha256};
use tokio::net::UdpSocket;

/// What the tap does once [`TRIGGER`] bytes of DATA have crossed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Attack {
    /// Nothing: a plain relay.
    None,
    /// A SHUTDOWN to the receiver (cumulative ack: its initial TSN − 1), then a
    /// SHUTDOWN COMPLETE.
    Shutdown,
    /// As `Shutdown`, announcing the length and SHA-256 of exactly what the receiver
    /// has acknowledged so far (the tap saw every byte): a truncated file that matches
    /// its announcement.
    ShutdownWithDigest,
    /// An ABORT to each end.
    Abort,
    /// One byte of user data changed in every tenth DATA packet, 30 in all, CRC fixed.
    Tamper,
    /// DATA ahead of the sender from an address of the tap's own, with the receiver's
    /// address probes answered.
    Inject,
    /// An ASCONF (RFC 5061) without an AUTH chunk to the receiver: ADD-IP for an
    /// address of the tap's own, then DEL-IP for the sender's — a hijack of the path,
    /// twice (the second with the next serial, in case the first was skipped).
    Reconfigure,
}

/// DATA bytes forwarded before the attack.
pub(crate) const TRIGGER: u64 = 1 << 20;

/// What the tap has seen.
#[derive(Default)]
pub(crate) struct Seen {
    /// SCTP ports (sender's, receiver's) and the tags each end expects.
    pub(crate) ports: (u16, u16),
    pub(crate) rx_tag: u32,
    pub(crate) tx_tag: u32,
    /// The receiver's first TSN (from its INIT ACK) and the sender's (from its INIT).
    pub(crate) rx_initial_tsn: Option<u32>,
    pub(crate) tx_initial_tsn: Option<u32>,
    pub(crate) data_bytes: u64,
    pub(crate) max_tsn: Option<u32>,
    /// The receiver's cumulative ack, from its SACKs.
    pub(crate) rx_cum: Option<u32>,
    /// Payloads by TSN (for the digest of the acknowledged prefix).
    pub(crate) payloads: BTreeMap<u32, Bytes>,
    /// Packets forged or changed.
    pub(crate) forged: u64,
    /// Address probes the injector answered.
    pub(crate) probes_answered: u64,
}

impl Seen {
    fn learn(&mut self, p: &Packet, towards_rx: bool) {
        for c in &p.chunks {
            match c {
                Chunk::Init(i) => self.tx_initial_tsn = Some(i.initial_tsn),
                Chunk::InitAck(i) => self.rx_initial_tsn = Some(i.initial_tsn),
                Chunk::Data(d) if towards_rx => {
                    self.data_bytes += d.payload.len() as u64;
                    self.max_tsn = Some(self.max_tsn.map_or(d.tsn, |t| t.max(d.tsn)));
                    if let Payload::Bytes(b) = &d.payload {
                        self.payloads.insert(d.tsn, b.clone());
                    }
                }
                Chunk::Sack(s) if !towards_rx => self.rx_cum = Some(s.cum_tsn),
                _ => {}
            }
        }
        if p.vtag != 0 {
            if towards_rx {
                self.rx_tag = p.vtag;
            } else {
                self.tx_tag = p.vtag;
            }
        }
    }

    /// Length and SHA-256 of the DATA the receiver has acknowledged cumulatively.
    fn acked_prefix(&self) -> (u64, [u8; 32]) {
        let (Some(first), Some(cum)) = (self.tx_initial_tsn, self.rx_cum) else {
            return (0, Sha256::digest(b"").into());
        };
        let mut h = Sha256::new();
        let mut len = 0u64;
        for tsn in (0..=cum.wrapping_sub(first)).map(|k| first.wrapping_add(k)) {
            if let Some(b) = self.payloads.get(&tsn) {
                h.update(b);
                len += b.len() as u64;
            }
        }
        (len, h.finalize().into())
    }
}

/// A running tap: the address the sender sends to, and what it saw.
pub(crate) struct Tap {
    pub(crate) front: SocketAddr,
    pub(crate) seen: Arc<Mutex<Seen>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Tap {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn bytes_of(p: &Packet, ports: (u16, u16)) -> Vec<u8> {
    let mut out = Vec::new();
    encode(p, ports.0, ports.1, &mut out);
    out
}

/// Starts a tap: the sender sends to `front` (loopback), the tap forwards from `back_ip`
/// to `target`.
pub async fn start(back_ip: std::net::IpAddr, target: SocketAddr, attack: Attack) -> Tap {
    let front = UdpSocket::bind("127.0.0.1:0").await.expect("front socket");
    let back = UdpSocket::bind((back_ip, 0)).await.expect("back socket");
    let front_addr = front.local_addr().expect("bound");
    let seen = Arc::new(Mutex::new(Seen::default()));
    let task = tokio::spawn(relay(front, back, target, attack, seen.clone()));
    Tap {
        front: front_addr,
        seen,
        task,
    }
}

/// Forwards both ways, learning as it goes; attacks once.
async fn relay(
    front: UdpSocket,
    back: UdpSocket,
    target: SocketAddr,
    attack: Attack,
    seen: Arc<Mutex<Seen>>,
) {
    let back = Arc::new(back);
    let front = Arc::new(front);
    let (mut f, mut b) = (vec![0u8; 65536], vec![0u8; 65536]);
    let (mut sender, mut attacked, mut data_packets) = (None, false, 0u64);
    loop {
        tokio::select! {
            Ok((n, from)) = front.recv_from(&mut f) => {
                sender = Some(from);
                let is_data = if let Ok(d) = decode(&f[..n]) {
                    let mut s = seen.lock().unwrap();
                    s.ports = (d.src_port, d.dst_port);
                    s.learn(&d.packet, true);
                    d.packet.has_data()
                } else {
                    false
                };
                data_packets += u64::from(is_data);
                if attack == Attack::Tamper && is_data && data_packets % 10 == 0 {
                    tamper(&mut f[..n], &seen);
                }
                let _ = back.send_to(&f[..n], target).await;
            }
            Ok((n, _)) = back.recv_from(&mut b) => {
                if let Ok(d) = decode(&b[..n]) {
                    seen.lock().unwrap().learn(&d.packet, false);
                }
                if let Some(s) = sender {
                    let _ = front.send_to(&b[..n], s).await;
                }
            }
        }
        let ready = seen.lock().unwrap().data_bytes >= TRIGGER;
        if ready && !attacked {
            attacked = true;
            let (front, back, seen) = (front.clone(), back.clone(), seen.clone());
            tokio::spawn(async move { strike(attack, &front, sender, &back, target, &seen).await });
        }
    }
}

/// Changes one byte of the last chunk's user data and fixes the CRC (30 times at most).
fn tamper(pkt: &mut [u8], seen: &Mutex<Seen>) {
    let mut s = seen.lock().unwrap();
    if s.forged >= 30 {
        return;
    }
    let n = pkt.len();
    pkt[n - 5] ^= 0x5A;
    let crc = checksum(pkt);
    pkt[8..12].copy_from_slice(&crc.to_le_bytes());
    s.forged += 1;
}

/// The one-time forgeries.
async fn strike(
    attack: Attack,
    front: &UdpSocket,
    sender: Option<SocketAddr>,
    back: &UdpSocket,
    target: SocketAddr,
    seen: &Mutex<Seen>,
) {
    let (ports, rx_tag, tx_tag, rx_first) = {
        let s = seen.lock().unwrap();
        (s.ports, s.rx_tag, s.tx_tag, s.rx_initial_tsn.unwrap_or(0))
    };
    let to_rx = |chunks| {
        bytes_of(
            &Packet {
                vtag: rx_tag,
                chunks,
            },
            ports,
        )
    };
    let shutdown = Chunk::Shutdown {
        cum_tsn: rx_first.wrapping_sub(1),
    };
    match attack {
        Attack::None | Attack::Tamper => {}
        Attack::Shutdown | Attack::ShutdownWithDigest => {
            let mut chunks = vec![shutdown];
            if attack == Attack::ShutdownWithDigest {
                let (len, sha) = seen.lock().unwrap().acked_prefix();
                let mut v = len.to_be_bytes().to_vec();
                v.extend_from_slice(&sha);
                chunks.insert(
                    0,
                    Chunk::Unknown {
                        chunk_type: chunk_type::FILE_DIGEST,
                        flags: 0,
                        value: v.into(),
                    },
                );
            }
            let _ = back.send_to(&to_rx(chunks), target).await;
            seen.lock().unwrap().forged += 1;
            tokio::time::sleep(Duration::from_millis(100)).await;
            let complete = vec![Chunk::ShutdownComplete { reflected: false }];
            let _ = back.send_to(&to_rx(complete), target).await;
            seen.lock().unwrap().forged += 1;
        }
        Attack::Abort => {
            let abort = || Chunk::Abort {
                cause: None,
                reflected: false,
            };
            let _ = back.send_to(&to_rx(vec![abort()]), target).await;
            if let Some(s) = sender {
                let p = Packet {
                    vtag: tx_tag,
                    chunks: vec![abort()],
                };
                let _ = front.send_to(&bytes_of(&p, (ports.1, ports.0)), s).await;
            }
            seen.lock().unwrap().forged += 2;
        }
        Attack::Inject => inject(back.local_addr().expect("bound").ip(), target, seen).await,
        Attack::Reconfigure => {
            let ours = back.local_addr().expect("bound").ip();
            let tx_first = seen.lock().unwrap().tx_initial_tsn.unwrap_or(0);
            for serial in [tx_first, tx_first.wrapping_add(1)] {
                let params = vec![
                    AsconfParam {
                        correlation: 1,
                        op: AddrOp::Add(std::net::IpAddr::from([10, 66, 0, 1])),
                    },
                    AsconfParam {
                        correlation: 2,
                        op: AddrOp::Delete(ours),
                    },
                ];
                let c = Chunk::Asconf(AsconfChunk {
                    serial,
                    address: ours,
                    params,
                });
                let _ = back.send_to(&to_rx(vec![c]), target).await;
            }
            seen.lock().unwrap().forged += 2;
        }
    }
}

/// Sprays DATA ahead of the sender from a socket of its own for a second, answering the
/// receiver's address probes (HEARTBEATs sent to it) as the peer would.
async fn inject(ip: std::net::IpAddr, target: SocketAddr, seen: &Mutex<Seen>) {
    let sock = UdpSocket::bind((ip, 0)).await.expect("injector socket");
    let mut buf = vec![0u8; 65536];
    for _ in 0..200 {
        let (ports, tag, top) = {
            let s = seen.lock().unwrap();
            (s.ports, s.rx_tag, s.max_tsn.unwrap_or(0))
        };
        for k in 1..=20u32 {
            let d = Chunk::Data(DataChunk {
                tsn: top.wrapping_add(20 + k),
                sid: 0,
                ssn: 0,
                ppid: 0,
                flags: DataFlags::WHOLE,
                payload: Payload::Bytes(Bytes::from(vec![0xEE; 1000])),
            });
            let p = bytes_of(
                &Packet {
                    vtag: tag,
                    chunks: vec![d],
                },
                ports,
            );
            let _ = sock.send_to(&p, target).await;
        }
        seen.lock().unwrap().forged += 20;
        // Answer any probe that came meanwhile.
        while let Ok((n, from)) = sock.try_recv_from(&mut buf) {
            let Ok(d) = decode(&buf[..n]) else { continue };
            for c in d.packet.chunks {
                if let Chunk::Unknown {
                    chunk_type: chunk_type::HEARTBEAT,
                    value,
                    ..
                } = c
                {
                    let ack = Packet {
                        vtag: tag,
                        chunks: vec![Chunk::Unknown {
                            chunk_type: chunk_type::HEARTBEAT_ACK,
                            flags: 0,
                            value,
                        }],
                    };
                    let _ = sock.send_to(&bytes_of(&ack, ports), from).await;
                    seen.lock().unwrap().probes_answered += 1;
                }
            }
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}
