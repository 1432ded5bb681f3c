//! `--local` entries: addresses, interface names, or `auto`.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};

/// Name prefixes `--local auto` leaves out: loopback, and the virtual interfaces of
/// containers, virtual machines and VPN tunnels (Docker, Linux bridges, libvirt,
/// veth pairs, VMware, VirtualBox, TUN/TAP, WireGuard, Tailscale, ZeroTier), which do
/// not lead anywhere a second path would. `--exclude` names more.
pub const AUTO_EXCLUDED: [&str; 12] = [
    "lo",
    "docker",
    "br-",
    "virbr",
    "veth",
    "vnet",
    "vmnet",
    "vboxnet",
    "tun",
    "tap",
    "wg",
    "tailscale",
];

/// `--local` entries: an address (`127.0.1.1:0`); an interface name with an optional
/// port (`wlan0`, `eth1:5000`), which stands for the interface's first IPv4 address
/// (its first IPv6 address when it has no IPv4 one), or for none yet when it exists
/// without an address (its path starts when it gets one); or `auto[:PORT]`, every
/// interface [`auto`] picks. Each comes with the interface it named, if it named one:
/// those paths follow their interface's address during the transfer. `exclude`:
/// interfaces `auto` must leave out besides [`AUTO_EXCLUDED`]; `flag`: the option the
/// entries came from (`--local`, `--listen`), for errors.
pub fn parse_locals(
    list: &[String],
    exclude: &[String],
    flag: &str,
) -> Result<Vec<(SocketAddr, Option<String>)>, String> {
    let ifaces = if_addrs::get_if_addrs().unwrap_or_default();
    let mut out = Vec::new();
    for e in list.iter().map(|e| e.trim()) {
        if let Ok(a) = e.parse::<SocketAddr>() {
            out.push((a, None));
            continue;
        }
        let (name, port) = match e.rsplit_once(':') {
            Some((n, p)) => (
                n,
                p.parse::<u16>()
                    .map_err(|_| format!("{flag}: `{e}`: `{p}` is not a port"))?,
            ),
            None => (e, 0),
        };
        if name == "auto" {
            let named: Vec<(String, IpAddr)> =
                ifaces.iter().map(|i| (i.name.clone(), i.ip())).collect();
            let picked = auto(&named, exclude);
            if picked.is_empty() {
                return Err(format!(
                    "{flag} auto: no interface with a usable IPv4 address (left out: \
                     loopback, link-local addresses, names starting with {}{})",
                    AUTO_EXCLUDED.join(", "),
                    exclude.iter().map(|x| format!(", {x}")).collect::<String>()
                ));
            }
            out.extend(
                picked
                    .into_iter()
                    .map(|(ip, n)| (SocketAddr::new(ip, port), Some(n))),
            );
            continue;
        }
        let ip = match cmt_net::ifwatch::address_of(&ifaces, name) {
            Some(ip) => ip,
            // An interface without an address yet: its path starts when it gets one.
            None if cmt_net::ifwatch::interface_exists(name) => Ipv4Addr::UNSPECIFIED.into(),
            None => {
                let mut names: Vec<&str> = ifaces.iter().map(|i| i.name.as_str()).collect();
                names.dedup();
                return Err(format!(
                    "{flag}: `{e}` is neither an address like 127.0.1.1:0, an interface nor \
                     auto (interfaces with an address: {})",
                    names.join(", ")
                ));
            }
        };
        out.push((SocketAddr::new(ip, port), Some(name.to_string())));
    }
    Ok(out)
}

/// The interfaces `--local auto` uses, in name order, each with its first usable IPv4
/// address: not loopback, not link-local (169.254/16, no route beyond its link), and
/// a name that starts with none of [`AUTO_EXCLUDED`] and is not in `exclude`.
pub fn auto(ifaces: &[(String, IpAddr)], exclude: &[String]) -> Vec<(IpAddr, String)> {
    let mut picked: Vec<(IpAddr, String)> = Vec::new();
    let mut names: Vec<&String> = ifaces.iter().map(|i| &i.0).collect();
    names.sort();
    names.dedup();
    for name in names {
        let left_out = AUTO_EXCLUDED.iter().any(|p| name.starts_with(p))
            || exclude.iter().any(|x| x.trim() == name);
        let usable = ifaces.iter().find_map(|(n, ip)| match ip {
            IpAddr::V4(v) if n == name && !v.is_loopback() && !v.is_link_local() => Some(*ip),
            _ => None,
        });
        if let (false, Some(ip)) = (left_out, usable) {
            picked.push((ip, name.clone()));
        }
    }
    picked
}

/// The `--listen` entries (addresses, or interfaces with a port, each with the
/// interface that named it) and the `--peer` addresses of a receiver.
pub type Listening = (Vec<SocketAddr>, Vec<Option<String>>, Vec<std::net::IpAddr>);

/// Parses a receiver's `--listen` and `--peer` lists; an interface without an address
/// yet cannot be listened on.
pub fn listen_and_peers(listen: &[String], peers: &[String]) -> Result<Listening, String> {
    let (listen, interfaces): (Vec<SocketAddr>, Vec<Option<String>>) =
        parse_locals(listen, &[], "--listen")?.into_iter().unzip();
    if let Some(i) = listen.iter().position(|a| a.ip().is_unspecified()) {
        let name = interfaces[i].clone().unwrap_or_default();
        return Err(format!(
            "--listen: interface `{name}` has no address to listen on yet"
        ));
    }
    let peers = peers
        .iter()
        .map(|p| {
            p.trim()
                .parse::<std::net::IpAddr>()
                .map_err(|_| format!("--peer: `{p}` is not an IP address like 127.0.1.1"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok((listen, interfaces, peers))
}

#[cfg(test)]
mod tests {
    use super::{auto, parse_locals};
    use std::net::IpAddr;

    #[test]
    fn local_entries_may_name_an_interface_with_an_optional_port() {
        let v = |s: &[&str]| {
            parse_locals(
                &s.iter().map(|x| x.to_string()).collect::<Vec<_>>(),
                &[],
                "--local",
            )
        };
        assert_eq!(v(&["127.0.1.1:0"]).unwrap()[0].0.to_string(), "127.0.1.1:0");
        // Loopback is "lo" on Linux and carries 127.0.0.1.
        assert_eq!(v(&["lo"]).unwrap()[0].0.to_string(), "127.0.0.1:0");
        assert_eq!(v(&["lo:5000"]).unwrap()[0].0.to_string(), "127.0.0.1:5000");
        // The interface an entry named is kept (those paths follow it); an address names none.
        let names: Vec<_> = v(&["lo", "lo:5000", "127.0.0.1:0"])
            .unwrap()
            .into_iter()
            .map(|x| x.1)
            .collect();
        assert_eq!(names, [Some("lo".into()), Some("lo".into()), None]);
        let e = v(&["wlan9"]).unwrap_err();
        assert!(e.contains("`wlan9`") && e.contains("lo"), "{e}");
        let e = v(&["lo:port"]).unwrap_err();
        assert!(e.contains("`port` is not a port"), "{e}");
    }

    #[test]
    fn auto_takes_real_interfaces_in_name_order_and_leaves_out_virtual_ones() {
        let ip = |s: &str| s.parse::<IpAddr>().unwrap();
        let ifaces: Vec<(String, IpAddr)> = [
            ("wlan0", "192.168.1.20"),
            ("lo", "127.0.0.1"),
            ("eth0", "169.254.3.4"), // link-local only: no path beyond its link
            ("eth0", "fe80::1"),     // IPv6 link-local, and not IPv4 anyway
            ("docker0", "172.17.0.1"), // containers
            ("wwan0", "10.64.0.7"),
            ("veth12ab", "172.18.0.1"),
            ("enp3s0", "10.0.0.5"),
            ("wg0", "10.8.0.2"), // a VPN tunnel
        ]
        .iter()
        .map(|(n, a)| (n.to_string(), ip(a)))
        .collect();
        let got = |exclude: &[&str]| -> Vec<String> {
            let ex: Vec<String> = exclude.iter().map(|x| x.to_string()).collect();
            auto(&ifaces, &ex).into_iter().map(|(_, n)| n).collect()
        };
        assert_eq!(got(&[]), ["enp3s0", "wlan0", "wwan0"]);
        assert_eq!(got(&["wwan0"]), ["enp3s0", "wlan0"]);
        assert_eq!(auto(&ifaces, &[])[1].0, ip("192.168.1.20"));
        assert!(got(&["enp3s0", "wlan0", "wwan0"]).is_empty());
    }
}
