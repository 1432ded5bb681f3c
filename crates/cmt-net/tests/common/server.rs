//! A serving receiver on a fresh loopback socket, run alongside a test's peers.

use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use cmt_net::io::Sockets;
use cmt_net::transfer::serve::{serve_on, Finished, Serve, ServeStats};
use cmt_net::transfer::Options;
use tokio::sync::Notify;

/// What [`start`] gives: the server's address, the notify that stops it, its directory
/// and the server itself (it returns what it did).
pub struct Running<F> {
    pub to: SocketAddr,
    pub stop: Arc<Notify>,
    pub dir: PathBuf,
    pub run: F,
}

/// A server of `max` slots sharing `memory` bytes, with options `o` (its stop added),
/// storing into a fresh directory named after `test` and `name`.
pub async fn start(
    (test, name): (&str, &str),
    (max, memory): (usize, u64),
    o: Options,
) -> Running<impl Future<Output = (ServeStats, Vec<Finished>)>> {
    let dir = super::fresh_dir(test, name);
    let socks = Sockets::bind(&[super::addr("127.0.0.1:0")]).await.unwrap();
    let to = socks.local_addrs()[0];
    let stop = Arc::new(Notify::new());
    let s = Serve {
        dir: dir.clone(),
        overwrite: false,
        max_associations: max,
        max_memory: memory,
        stop: Some(stop.clone()),
    };
    let run = async move {
        let mut finished = Vec::new();
        let stats = serve_on(socks, &s, &o, |f| finished.push(f)).await.unwrap();
        (stats, finished)
    };
    Running { to, stop, dir, run }
}
