//! Which addresses a name-based grant may reach: public ones only. Loopback, private,
//! link-local (where cloud metadata services live), unspecified and other special-purpose
//! addresses, in every spelling (IPv4-mapped, NAT64, 6to4), are reached only through an
//! `allow_hosts` entry naming the address itself, or `localhost`.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

pub(crate) use crate::policy::canonical_address as canonical;

/// Why an address is not public, in words for a denial message; `None` when it is public.
pub(crate) fn special_purpose(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(ip) => special_v4(ip),
        IpAddr::V6(ip) => match embedded_v4(ip) {
            Some(v4) => special_v4(v4),
            None => special_v6(ip),
        },
    }
}

fn special_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, ..] = ip.octets();
    Some(match () {
        () if ip.is_loopback() => "a loopback address (this machine)",
        () if ip.is_private() || (a == 100 && (64..128).contains(&b)) => "a private network address",
        () if ip.is_link_local() => "a link-local address (where cloud metadata services such as 169.254.169.254 live)",
        () if a == 0 => "an unspecified address (this machine)",
        () if ip.is_broadcast() || ip.is_multicast() => "a broadcast or multicast address",
        () if a >= 240 || (a == 198 && (b == 18 || b == 19)) || (a == 192 && b == 0) => "a reserved address",
        () => return None,
    })
}

fn special_v6(ip: Ipv6Addr) -> Option<&'static str> {
    let first = ip.segments()[0];
    Some(match () {
        () if ip.is_loopback() => "a loopback address (this machine)",
        () if ip.is_unspecified() => "an unspecified address (this machine)",
        () if first & 0xfe00 == 0xfc00 => "a private network address (unique local)",
        () if first & 0xffc0 == 0xfe80 || first & 0xffc0 == 0xfec0 => "a link-local address",
        () if ip.is_multicast() => "a multicast address",
        () => return None,
    })
}

/// The IPv4 address inside an IPv4-mapped (`::ffff:a.b.c.d`), IPv4-compatible (`::a.b.c.d`),
/// NAT64 (`64:ff9b::a.b.c.d`) or 6to4 (`2002:aabb:ccdd::`) address: a spelling that reaches
/// that IPv4 address.
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = ip.segments();
    let tail = || Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8);
    match s {
        [0, 0, 0, 0, 0, 0xffff, _, _] => Some(tail()),
        [0, 0, 0, 0, 0, 0, _, _] if !ip.is_loopback() && !ip.is_unspecified() => Some(tail()),
        [0x64, 0xff9b, 0, 0, 0, 0, _, _] => Some(tail()),
        [0x2002, high, low, ..] => Some(Ipv4Addr::new((high >> 8) as u8, high as u8, (low >> 8) as u8, low as u8)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn special(text: &str) -> Option<&'static str> {
        special_purpose(text.parse().expect("an address"))
    }

    #[test]
    fn every_spelling_of_a_special_address_is_special() {
        for address in [
            "127.0.0.1",
            "127.9.9.9",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "100.64.0.1",
            "169.254.169.254",
            "0.0.0.0",
            "255.255.255.255",
            "::1",
            "::",
            "fd00::1",
            "fe80::1",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
            "::127.0.0.1",
            "64:ff9b::a9fe:a9fe",
            "2002:7f00:1::",
        ] {
            assert!(special(address).is_some(), "{address}");
        }
        assert!(special("169.254.169.254").unwrap().contains("metadata"));
        assert!(special("::ffff:127.0.0.1").unwrap().contains("loopback"));
    }

    #[test]
    fn public_addresses_are_not_special() {
        for address in ["93.184.215.14", "1.1.1.1", "2606:4700:4700::1111", "::ffff:8.8.8.8"] {
            assert_eq!(special(address), None, "{address}");
        }
    }

    #[test]
    fn mapped_addresses_are_canonical_as_ipv4() {
        assert_eq!(canonical("::ffff:127.0.0.1".parse().unwrap()), "127.0.0.1".parse::<IpAddr>().unwrap());
        assert_eq!(canonical("::1".parse().unwrap()), "::1".parse::<IpAddr>().unwrap());
    }
}
