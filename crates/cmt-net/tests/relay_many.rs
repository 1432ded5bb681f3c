//! One relayed path carrying several senders: each gets its own mapping (a socket
//! towards the target), answers go back to the sender they are for, idle mappings
//! expire, the number of them is bounded, and the counters say what happened.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use cmt_net::io::Sockets;
use cmt_net::relay::{parse_spec, run_path_counted, RelayStats};
use cmt_net::transfer::{receive_on, send, Options};
use tokio::net::UdpSocket;

fn a(s: &str) -> SocketAddr {
    s.parse().unwrap()
}

type Stats = Arc<Mutex<RelayStats>>;

/// A relay from `front` to `target` with extra `settings`; its live counters.
fn relay(front: &str, target: SocketAddr, settings: &str, seed: u64) -> Stats {
    let spec = parse_spec(&format!("{front}>{target}{settings}")).unwrap();
    let stats = Stats::default();
    tokio::spawn(run_path_counted(spec, seed, stats.clone()));
    stats
}

fn now(s: &Stats) -> RelayStats {
    s.lock().unwrap().clone()
}

async fn recv(s: &UdpSocket) -> (Vec<u8>, SocketAddr) {
    let mut buf = [0u8; 256];
    let (n, from) = tokio::time::timeout(Duration::from_secs(5), s.recv_from(&mut buf))
        .await
        .expect("a datagram within 5 s")
        .unwrap();
    (buf[..n].to_vec(), from)
}

#[tokio::test]
async fn answers_go_back_to_the_sender_they_are_for() {
    let target = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let stats = relay("127.0.2.1:19921", target.local_addr().unwrap(), "", 1);
    tokio::time::sleep(Duration::from_millis(50)).await;
    let x = UdpSocket::bind("127.0.1.1:0").await.unwrap();
    let y = UdpSocket::bind("127.0.1.2:0").await.unwrap();
    x.send_to(b"from x", "127.0.2.1:19921").await.unwrap();
    y.send_to(b"from y", "127.0.2.1:19921").await.unwrap();
    let (m1, s1) = recv(&target).await;
    let (m2, s2) = recv(&target).await;
    assert_ne!(s1, s2, "each sender reaches the target from its own port");
    // The target answers each source; each answer reaches the sender it is for.
    target
        .send_to(&[b"re ", &m1[..]].concat(), s1)
        .await
        .unwrap();
    target
        .send_to(&[b"re ", &m2[..]].concat(), s2)
        .await
        .unwrap();
    assert_eq!(recv(&x).await.0, b"re from x");
    assert_eq!(recv(&y).await.0, b"re from y");
    let st = now(&stats);
    assert_eq!((st.forwarded, st.senders, st.active), ([2, 2], 2, 2));
}

#[tokio::test]
async fn an_idle_mapping_expires_and_a_returning_sender_gets_a_new_one() {
    let target = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let stats = relay(
        "127.0.2.1:19922",
        target.local_addr().unwrap(),
        ",idle=200ms",
        2,
    );
    tokio::time::sleep(Duration::from_millis(50)).await;
    let x = UdpSocket::bind("127.0.1.1:0").await.unwrap();
    x.send_to(b"1", "127.0.2.1:19922").await.unwrap();
    let (_, first) = recv(&target).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let st = now(&stats);
    assert_eq!((st.expired, st.active), (1, 0), "{st:?}");
    x.send_to(b"2", "127.0.2.1:19922").await.unwrap();
    let (_, second) = recv(&target).await;
    assert_ne!(first, second, "a new mapping, a new port");
    let st = now(&stats);
    assert_eq!((st.senders, st.active), (2, 1));
}

#[tokio::test]
async fn senders_beyond_the_limit_are_refused_and_the_others_carry_on() {
    let target = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let stats = relay(
        "127.0.2.1:19923",
        target.local_addr().unwrap(),
        ",senders=2",
        3,
    );
    tokio::time::sleep(Duration::from_millis(50)).await;
    let mut socks = Vec::new();
    for i in 1..=4 {
        let s = UdpSocket::bind(format!("127.0.1.{i}:0")).await.unwrap();
        s.send_to(b"hello", "127.0.2.1:19923").await.unwrap();
        socks.push(s);
    }
    let (_, from) = recv(&target).await;
    let _ = recv(&target).await;
    target.send_to(b"answer", from).await.unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let st = now(&stats);
    assert_eq!((st.senders, st.active, st.refused), (2, 2, 2), "{st:?}");
    assert_eq!(st.forwarded, [2, 1]);
}

/// Two associations, one after the other, through the same two relayed paths from
/// different senders: the second is answered on its own mappings (the relay no longer
/// answers only whoever came first), and both files arrive.
#[tokio::test]
async fn two_senders_in_turn_through_the_same_relays() {
    let listen = [a("127.0.0.1:0"), a("127.0.0.2:0")];
    let rx = Sockets::bind(&listen).await.unwrap();
    let targets = rx.local_addrs();
    drop(rx);
    let fronts = ["127.0.2.1:19924", "127.0.2.2:19924"];
    let stats: Vec<Stats> = (0..2)
        .map(|i| {
            relay(
                fronts[i],
                targets[i],
                ",rate=50Mbps,delay=5ms",
                10 + i as u64,
            )
        })
        .collect();
    let dir = std::env::temp_dir().join(format!("cmtlab-relay-many-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let o = Options::default();
    for (k, locals) in [
        ["127.0.1.1:0", "127.0.1.2:0"],
        ["127.0.1.3:0", "127.0.1.4:0"],
    ]
    .iter()
    .enumerate()
    {
        let rx = Sockets::bind(&targets).await.unwrap();
        let out = dir.join(format!("out{k}.bin"));
        let (out2, o2) = (out.clone(), o.clone());
        let server = tokio::spawn(async move { receive_on(rx, &out2, &o2).await });
        let payload: Vec<u8> = (0..2_000_000u32)
            .map(|i| (i * 7 + k as u32) as u8)
            .collect();
        let remotes = [a(fronts[0]), a(fronts[1])];
        let locals = [a(locals[0]), a(locals[1])];
        let sent = send(&locals, &remotes, Bytes::from(payload.clone()), &o)
            .await
            .unwrap();
        let got = server.await.unwrap().unwrap();
        assert_eq!(sent.sha256, got.sha256);
        assert!(std::fs::read(&out).unwrap() == payload, "file {k} intact");
    }
    for s in &stats {
        assert_eq!(now(s).senders, 2, "{:?}", now(s));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Everything `s` receives until it has been quiet for 300 ms.
async fn drain(s: &UdpSocket) -> Vec<(Vec<u8>, SocketAddr)> {
    let mut got = Vec::new();
    let mut buf = [0u8; 256];
    while let Ok(Ok((n, from))) =
        tokio::time::timeout(Duration::from_millis(300), s.recv_from(&mut buf)).await
    {
        got.push((buf[..n].to_vec(), from));
    }
    got
}

/// `loss_direction=forward` drops only on the way to the target, as a scenario's link
/// with forward loss: of 200 datagrams at 50 % loss, Binomial(200, ½) arrive (100 ± 7
/// standard deviation: 60–140 is a bound of almost six), and every answer to them comes
/// back — with loss both ways about half would not.
#[tokio::test]
async fn forward_loss_spares_the_answers() {
    let target = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let settings = ",loss=50%,loss_direction=forward,queue=unlimited";
    let stats = relay("127.0.2.1:19925", target.local_addr().unwrap(), settings, 7);
    tokio::time::sleep(Duration::from_millis(50)).await;
    let x = UdpSocket::bind("127.0.1.1:0").await.unwrap();
    for i in 0..200u32 {
        x.send_to(&i.to_be_bytes(), "127.0.2.1:19925")
            .await
            .unwrap();
    }
    let arrived = drain(&target).await;
    assert!((60..=140).contains(&arrived.len()), "{}", arrived.len());
    for (m, from) in &arrived {
        target.send_to(m, from).await.unwrap();
    }
    let answers = drain(&x).await;
    assert_eq!(answers.len(), arrived.len());
    let st = now(&stats);
    assert_eq!(st.dropped[0].loss, 200 - arrived.len() as u64);
    assert_eq!(st.dropped[1].total(), 0);
}
