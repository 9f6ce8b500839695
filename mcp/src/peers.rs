//! Client addresses, and caps counted in total and per address (connections, sessions).

use std::collections::HashMap;
use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tokio::sync::Notify;

/// A client as the caps count it: an IPv4 address, or the /64 network of an IPv6 address
/// (one host is commonly given a whole /64, so counting single addresses would not bound it).
/// Behind a reverse proxy every client is the proxy's address.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Peer(IpAddr);

impl Peer {
    /// A request that reached the endpoint without a client address (none does in practice).
    pub(crate) const UNKNOWN: Self = Self(IpAddr::V4(Ipv4Addr::UNSPECIFIED));

    pub(crate) fn of(address: IpAddr) -> Self {
        match address.to_canonical() {
            IpAddr::V4(v4) => Self(IpAddr::V4(v4)),
            IpAddr::V6(v6) => {
                let mut segments = v6.segments();
                segments[4..].fill(0);
                Self(IpAddr::V6(Ipv6Addr::from(segments)))
            }
        }
    }
}

impl fmt::Display for Peer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            IpAddr::V4(v4) => v4.fmt(f),
            IpAddr::V6(v6) => write!(f, "{v6}/64"),
        }
    }
}

/// Why a [`Counts::take`] was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Full {
    /// Every place is taken; the limit.
    Total(usize),
    /// This client holds its share; the limit per client.
    Peer(usize),
}

/// Places counted in total and per client: [`Counts::take`] hands out a [`Place`], which
/// gives its place back when dropped.
#[derive(Debug)]
pub(crate) struct Counts {
    max_total: usize,
    max_per_peer: usize,
    taken: Mutex<Taken>,
    emptied: Notify,
}

#[derive(Debug, Default)]
struct Taken {
    total: usize,
    per_peer: HashMap<Peer, usize>,
}

impl Counts {
    pub(crate) fn new(max_total: usize, max_per_peer: usize) -> Arc<Self> {
        Arc::new(Self { max_total, max_per_peer, taken: Mutex::default(), emptied: Notify::new() })
    }

    /// Takes a place for `peer`, unless every place or the peer's share is taken.
    pub(crate) fn take(self: &Arc<Self>, peer: Peer) -> Result<Place, Full> {
        let mut taken = self.lock();
        if taken.total >= self.max_total {
            return Err(Full::Total(self.max_total));
        }
        let held = taken.per_peer.entry(peer).or_default();
        if *held >= self.max_per_peer {
            return Err(Full::Peer(self.max_per_peer));
        }
        *held += 1;
        taken.total += 1;
        Ok(Place { counts: self.clone(), peer })
    }

    /// How many places are taken now.
    pub(crate) fn taken(&self) -> usize {
        self.lock().total
    }

    /// How many places there are.
    pub(crate) fn limit(&self) -> usize {
        self.max_total
    }

    /// Completes once no place is taken.
    pub(crate) async fn emptied(&self) {
        loop {
            let emptied = self.emptied.notified();
            let mut emptied = std::pin::pin!(emptied);
            emptied.as_mut().enable();
            if self.lock().total == 0 {
                return;
            }
            emptied.await;
        }
    }

    fn lock(&self) -> MutexGuard<'_, Taken> {
        self.taken.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// One place taken in [`Counts`], given back when dropped.
#[derive(Debug)]
pub(crate) struct Place {
    counts: Arc<Counts>,
    peer: Peer,
}

impl Drop for Place {
    fn drop(&mut self) {
        let mut taken = self.counts.lock();
        taken.total = taken.total.saturating_sub(1);
        if let Some(held) = taken.per_peer.get_mut(&self.peer) {
            *held = held.saturating_sub(1);
            if *held == 0 {
                taken.per_peer.remove(&self.peer);
            }
        }
        if taken.total == 0 {
            self.counts.emptied.notify_waiters();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ipv6_clients_are_counted_by_their_64_network_and_mapped_ipv4_as_ipv4() {
        let a: IpAddr = "2001:db8:1:2:aaaa::1".parse().unwrap_or(IpAddr::from([0, 0, 0, 0]));
        let b: IpAddr = "2001:db8:1:2:bbbb::2".parse().unwrap_or(IpAddr::from([0, 0, 0, 0]));
        assert_eq!(Peer::of(a), Peer::of(b));
        assert_eq!(Peer::of(a).to_string(), "2001:db8:1:2::/64");
        let mapped: IpAddr = "::ffff:127.0.0.2".parse().unwrap_or(IpAddr::from([0, 0, 0, 0]));
        assert_eq!(Peer::of(mapped), Peer::of(IpAddr::from([127, 0, 0, 2])));
    }

    #[test]
    fn places_are_capped_in_total_and_per_client_and_given_back_when_dropped() {
        let counts = Counts::new(3, 2);
        let one = Peer::of(IpAddr::from([10, 0, 0, 1]));
        let two = Peer::of(IpAddr::from([10, 0, 0, 2]));
        let first = counts.take(one);
        let _second = counts.take(one);
        assert_eq!(counts.take(one).err(), Some(Full::Peer(2)));
        let _third = counts.take(two);
        assert_eq!(counts.take(two).err(), Some(Full::Total(3)));
        drop(first);
        assert!(counts.take(one).is_ok());
    }
}
