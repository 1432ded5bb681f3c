//! Following the machine's interfaces: which address each path named by an interface
//! has now. On Linux a netlink socket subscribed to address and link changes wakes the
//! watcher the moment the kernel reports one (an interface losing or gaining an
//! address, going down or up); elsewhere, or when netlink cannot be opened, the
//! addresses are polled every [`POLL`]. Either way the addresses themselves are read
//! with `if-addrs` and compared with the last reading, so a notification about an
//! unrelated interface changes nothing.
//!
//! A sender started with `--local auto` also *adopts* interfaces that appear during
//! the transfer ([`Adopt`]): one that [`auto`] would have picked, not in use yet, gets a
//! spare socket, which from then on follows it like a named one — so a phone's second
//! radio coming up, or a cable plugged in, becomes a path of the running transfer.

pub mod auto;
pub mod link;

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

/// Spare sockets for interfaces that appear: the sockets not yet given to an interface,
/// and the interfaces never to adopt besides those [`auto`] leaves out.
#[derive(Clone, Debug, Default)]
pub struct Adopt {
    /// Socket indices free for an interface that appears, first used first.
    pub free: Vec<usize>,
    /// Interface names not to adopt (`--exclude`).
    pub exclude: Vec<String>,
}

/// Watches the interfaces some paths were named by.
pub struct AddrWatch {
    /// `(path, interface, its address at the last reading)`.
    watched: Vec<(usize, String, Option<IpAddr>)>,
    /// Spare sockets for interfaces that appear.
    adopt: Adopt,
    /// The links under the sockets.
    links: link::LinkWatch,
    #[cfg(target_os = "linux")]
    netlink: Option<netlink_sys::TokioSocket>,
}

impl AddrWatch {
    /// Watches `watched`: `(path, interface name, its address now)`. Opens the netlink
    /// subscription where there is one (call inside the Tokio runtime).
    pub fn new(watched: Vec<(usize, String, Option<IpAddr>)>) -> AddrWatch {
        Self::adopting(watched, Adopt::default())
    }

    /// As [`new`](Self::new), and gives the sockets `adopt.free` to interfaces that
    /// appear (reported by [`changes`](Self::changes) like a watched interface that got
    /// an address).
    pub fn adopting(watched: Vec<(usize, String, Option<IpAddr>)>, adopt: Adopt) -> AddrWatch {
        let mut w = AddrWatch {
            #[cfg(target_os = "linux")]
            netlink: None,
            watched,
            adopt,
            links: link::LinkWatch::default(),
        };
        #[cfg(target_os = "linux")]
        if !w.is_empty() {
            w.netlink = subscribe().ok();
        }
        w
    }

    /// Also watches the links under `sockets` (`(socket, interface)`), reported by
    /// [`links_changed`](Self::links_changed).
    pub fn with_links(mut self, sockets: Vec<(usize, String)>) -> AddrWatch {
        self.links = link::LinkWatch::new(sockets);
        #[cfg(target_os = "linux")]
        if self.netlink.is_none() && !self.is_empty() {
            self.netlink = subscribe().ok();
        }
        self
    }

    /// Whether there is anything to watch.
    pub fn is_empty(&self) -> bool {
        self.watched.is_empty() && self.adopt.free.is_empty() && self.links.is_empty()
    }

    /// The sockets whose link went down or came up since the last reading, each with
    /// whether it is up now.
    pub fn links_changed(&mut self) -> Vec<(usize, bool)> {
        self.links.changed()
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
        if self.is_empty() {
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
        let named: Vec<(String, IpAddr)> =
            ifaces.iter().map(|i| (i.name.clone(), i.ip())).collect();
        self.adopt_new(&named);
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

impl AddrWatch {
    /// Gives free sockets to interfaces [`auto`] picks that no socket follows yet (in
    /// name order); their first reading then reports their address.
    fn adopt_new(&mut self, named: &[(String, IpAddr)]) {
        if self.adopt.free.is_empty() {
            return;
        }
        for (_, name) in auto::auto(named, &self.adopt.exclude) {
            if self.adopt.free.is_empty() {
                break;
            }
            if self.watched.iter().any(|(_, n, _)| *n == name) {
                continue;
            }
            let slot = self.adopt.free.remove(0);
            self.watched.push((slot, name, None));
        }
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

    #[tokio::test]
    async fn an_interface_that_appears_gets_a_free_socket_unless_excluded_or_followed() {
        let ip = |s: &str| s.parse::<IpAddr>().unwrap();
        let adopt = Adopt {
            free: vec![3, 4],
            exclude: vec!["eth9".into()],
        };
        let mut w = AddrWatch::adopting(vec![(0, "wlan0".into(), Some(ip("10.0.0.2")))], adopt);
        assert!(!w.is_empty());
        let now = |list: &[(&str, &str)]| -> Vec<(String, IpAddr)> {
            list.iter().map(|(n, a)| (n.to_string(), ip(a))).collect()
        };
        // Followed already, excluded, virtual, loopback: none adopted.
        let seen = [
            ("wlan0", "10.0.0.2"),
            ("eth9", "10.9.0.2"),
            ("docker0", "172.17.0.1"),
            ("lo", "127.0.0.1"),
        ];
        w.adopt_new(&now(&seen));
        assert_eq!(w.watched.len(), 1);
        // Two appear, then a third: the free sockets go in name order, then run out.
        w.adopt_new(&now(&[("wwan0", "10.64.0.7"), ("eth1", "192.168.1.5")]));
        w.adopt_new(&now(&[("wwan1", "10.65.0.7")]));
        let got: Vec<(usize, &str)> = w.watched.iter().map(|(i, n, _)| (*i, n.as_str())).collect();
        assert_eq!(got, [(0, "wlan0"), (3, "eth1"), (4, "wwan0")]);
        assert!(w.adopt.free.is_empty());
    }
}
