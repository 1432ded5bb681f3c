//! Which interfaces `--local auto` takes: those with a usable IPv4 address that lead
//! somewhere a second path would — not loopback, not link-local, not the virtual
//! interfaces of containers, virtual machines and tunnels. The same rule picks the
//! interfaces a sender adopts when they appear during a transfer
//! ([`super::Adopt`]).

use std::net::IpAddr;

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

#[cfg(test)]
mod tests {
    use super::*;

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
