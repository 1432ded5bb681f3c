//! Following the machine's interfaces: which address each path named by an interface
//! has now. On Linux a netlink socket subscribed to address and link changes wakes the
//! watcher the moment the kernel reports one (an interface losing or gaining an
//! address, going down or up); elsewhere, or when netlink cannot be opened, the
//! addresses are polled every [`POLL`]. Either way the addresses themselves are read
//! with `if-addrs` and compared with the last reading, so a notification about an
//! unrelated interface changes nothing.

use std::net::IpAddr;
use std::time::Duration;

/// How often addresses are read without netlink.
pub const POLL: Duration = Duration::from_millis(250);

/// A path's address changed: `path`'s interface now has `addr` (`None`: none usable).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AddrChange {
    /// Path index.
    pub path: usize,
    /// The interface's address now.
    pub addr: Option<IpAddr>,
}

/// The usable address of interface `name` in `ifaces`: its first IPv4 address, else
/// its first IPv6 one (as `--local` resolves an interface name).
pub fn address_of(ifaces: &[if_addrs::Interface], name: &str) -> Option<IpAddr> {
    let mine: Vec<IpAddr> = ifaces
        .iter()
        .filter(|i| i.name == name)
        .map(|i| i.ip())
        .collect();
    mine.iter()
        .find(|a| a.is_ipv4())
        .or_else(|| mine.first())
        .copied()
}

/// Whether this network namespace has an interface called `name`, with an address or
/// not (Linux: `/proc/net/dev` lists the namespace's interfaces; elsewhere `false`).
pub fn interface_exists(name: &str) -> bool {
    std::fs::read_to_string("/proc/net/dev").is_ok_and(|t| {
        t.lines()
            .filter_map(|l| l.split_once(':'))
            .any(|(n, _)| n.trim() == name)
    })
}

/// Watches the interfaces some paths were named by.
pub struct AddrWatch {
    /// `(path, interface, its address at the last reading)`.
    watched: Vec<(usize, String, Option<IpAddr>)>,
    #[cfg(target_os = "linux")]
    netlink: Option<netlink_sys::TokioSocket>,
}

impl AddrWatch {
    /// Watches `watched`: `(path, interface name, its address now)`. Opens the netlink
    /// subscription where there is one (call inside the Tokio runtime).
    pub fn new(watched: Vec<(usize, String, Option<IpAddr>)>) -> AddrWatch {
        AddrWatch {
            #[cfg(target_os = "linux")]
            netlink: if watched.is_empty() {
                None
            } else {
                subscribe().ok()
            },
            watched,
        }
    }

    /// Whether there is anything to watch.
    pub fn is_empty(&self) -> bool {
        self.watched.is_empty()
    }

    /// Whether changes arrive as netlink notifications (otherwise by polling).
    pub fn notified(&self) -> bool {
        #[cfg(target_os = "linux")]
        return self.netlink.is_some();
        #[cfg(not(target_os = "linux"))]
        false
    }

    /// Completes when addresses may have changed: a netlink notification, or the next
    /// poll; never when nothing is watched.
    pub async fn changed(&mut self) {
        if self.watched.is_empty() {
            return std::future::pending().await;
        }
        #[cfg(target_os = "linux")]
        if let Some(s) = &mut self.netlink {
            use netlink_sys::AsyncSocketExt;
            if s.recv_from_full().await.is_ok() {
                return;
            }
            self.netlink = None; // the subscription broke: poll from now on
        }
        tokio::time::sleep(POLL).await;
    }

    /// Reads the addresses and returns those that differ from the last reading.
    pub fn changes(&mut self) -> Vec<AddrChange> {
        let Ok(ifaces) = if_addrs::get_if_addrs() else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for (path, name, last) in &mut self.watched {
            let now = address_of(&ifaces, name);
            if now != *last {
                *last = now;
                out.push(AddrChange {
                    path: *path,
                    addr: now,
                });
            }
        }
        out
    }
}

/// A netlink route socket subscribed to link and IPv4 / IPv6 address changes.
#[cfg(target_os = "linux")]
fn subscribe() -> std::io::Result<netlink_sys::TokioSocket> {
    use netlink_sys::{protocols::NETLINK_ROUTE, AsyncSocket, SocketAddr};
    /// RTMGRP_LINK | RTMGRP_IPV4_IFADDR | RTMGRP_IPV6_IFADDR (linux/rtnetlink.h).
    const GROUPS: u32 = 0x1 | 0x10 | 0x100;
    let mut s = netlink_sys::TokioSocket::new(NETLINK_ROUTE)?;
    s.socket_mut().bind(&SocketAddr::new(0, GROUPS))?;
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn loopback_is_watched_and_an_unchanged_reading_reports_nothing() {
        let ifaces = if_addrs::get_if_addrs().unwrap();
        let lo = address_of(&ifaces, "lo");
        assert_eq!(lo, Some("127.0.0.1".parse().unwrap()));
        assert_eq!(address_of(&ifaces, "no-such-interface"), None);
        let mut w = AddrWatch::new(vec![(0, "lo".into(), lo), (1, "gone0".into(), lo)]);
        // Linux: changes come from the kernel, not from polling.
        assert_eq!(w.notified(), cfg!(target_os = "linux"));
        // The interface that has no address is reported once, as having none.
        assert_eq!(
            w.changes(),
            [AddrChange {
                path: 1,
                addr: None
            }]
        );
        assert!(w.changes().is_empty());
        assert!(AddrWatch::new(Vec::new()).is_empty());
    }
}
