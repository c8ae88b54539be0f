//! Where webhook events may go: only to addresses on the public internet, unless the operator
//! allows some networks (`--webhook-allow-networks`). An experiment's webhook URL is chosen by
//! whoever holds an admin key, and joust posts from inside the network it runs in: without this
//! check a URL could make joust post to its own metadata service, its database or any service
//! on the loopback interface (server-side request forgery).
//!
//! The address checked is the address connected to. A name is resolved once per connection by
//! [`Egress::resolve`], every address it resolves to is checked, and the delivery client connects
//! only to those addresses (it is the client's DNS resolver, see `client.rs`): a name that
//! answers a public address to one lookup and a private one to the next (DNS rebinding) gains
//! nothing, because there is no second lookup. TLS still verifies the certificate against the
//! name in the URL.

use std::fmt;
use std::future::Future;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use ipnet::IpNet;

/// How long resolving a webhook's host may take when its setting is checked.
pub const SETTING_LOOKUP_TIMEOUT: Duration = Duration::from_secs(2);

/// Resolves a host name to addresses. The system's resolver by default; tests give their own
/// (a name that answers differently to successive lookups, as a rebinding attacker's would).
pub trait NameLookup: Send + Sync {
    fn lookup<'a>(
        &'a self,
        host: &'a str,
    ) -> Pin<Box<dyn Future<Output = std::io::Result<Vec<IpAddr>>> + Send + 'a>>;
}

/// The operating system's resolver (getaddrinfo, through tokio).
struct SystemLookup;

impl NameLookup for SystemLookup {
    fn lookup<'a>(
        &'a self,
        host: &'a str,
    ) -> Pin<Box<dyn Future<Output = std::io::Result<Vec<IpAddr>>> + Send + 'a>> {
        Box::pin(async move {
            Ok(tokio::net::lookup_host((host, 0))
                .await?
                .map(|a| a.ip())
                .collect())
        })
    }
}

/// Why an address or a host is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    #[error(
        "{address} is {kind}, not a public address (the operator may allow it with --webhook-allow-networks)"
    )]
    Address { address: IpAddr, kind: &'static str },
    #[error(
        "{host} resolves to {address}, which is {kind}, not a public address (the operator may allow it with --webhook-allow-networks)"
    )]
    Name {
        host: String,
        address: IpAddr,
        kind: &'static str,
    },
    #[error("{host} could not be resolved: {error}")]
    Unresolved { host: String, error: String },
    #[error("{host} resolves to no address")]
    NoAddress { host: String },
}

/// The egress rule: public addresses, plus the networks the operator allows.
#[derive(Clone)]
pub struct Egress {
    allowed: Arc<[IpNet]>,
    lookup: Arc<dyn NameLookup>,
}

impl Default for Egress {
    /// Public addresses only, names resolved by the system.
    fn default() -> Self {
        Egress {
            allowed: Arc::from(Vec::new()),
            lookup: Arc::new(SystemLookup),
        }
    }
}

impl fmt::Debug for Egress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Egress")
            .field("allowed", &self.allowed)
            .finish_non_exhaustive()
    }
}

impl Egress {
    /// Public addresses and those in `networks`.
    pub fn allowing(networks: Vec<IpNet>) -> Egress {
        Egress {
            allowed: Arc::from(networks),
            ..Egress::default()
        }
    }

    /// The same rule with names resolved by `lookup`.
    pub fn with_lookup(self, lookup: Arc<dyn NameLookup>) -> Egress {
        Egress { lookup, ..self }
    }

    /// The networks allowed besides the public internet.
    pub fn allowed(&self) -> &[IpNet] {
        &self.allowed
    }

    /// Parses `--webhook-allow-networks`: comma-separated networks in CIDR notation
    /// (`10.0.0.0/8,fd00::/8`); a bare address is a network of that one address.
    pub fn parse_networks(list: &str) -> Result<Vec<IpNet>, String> {
        list.split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(Egress::parse_network)
            .collect()
    }

    /// One network of `--webhook-allow-networks` (host bits dropped: `10.1.2.3/8` is
    /// `10.0.0.0/8`).
    pub fn parse_network(s: &str) -> Result<IpNet, String> {
        let s = s.trim();
        s.parse::<IpNet>()
            .or_else(|_| s.parse::<IpAddr>().map(IpNet::from))
            .map(|n| n.trunc())
            .map_err(|_| format!("{s:?} is not a network (CIDR such as 10.0.0.0/8) nor an address"))
    }

    /// Whether events may be posted to `address`.
    pub fn check(&self, address: IpAddr) -> Result<(), Refused> {
        match self.refusal(address) {
            None => Ok(()),
            Some(kind) => Err(Refused::Address { address, kind }),
        }
    }

    /// What kind of non-public address `address` is, unless it is public or allowed.
    fn refusal(&self, address: IpAddr) -> Option<&'static str> {
        let canonical = address.to_canonical();
        if self
            .allowed
            .iter()
            .any(|n| n.contains(&address) || n.contains(&canonical))
        {
            return None;
        }
        not_public(address)
    }

    /// The addresses `host` resolves to, if every one of them may be posted to. One address
    /// that may not refuses the host: which one a connection would use is not in our hands.
    pub async fn resolve(&self, host: &str) -> Result<Vec<IpAddr>, Refused> {
        // An IPv6 literal in a URL keeps its brackets.
        let bare = host.trim_start_matches('[').trim_end_matches(']');
        if let Ok(address) = bare.parse::<IpAddr>() {
            self.check(address)?;
            return Ok(vec![address]);
        }
        let addresses = self
            .lookup
            .lookup(host)
            .await
            .map_err(|e| Refused::Unresolved {
                host: host.to_string(),
                error: e.to_string(),
            })?;
        if addresses.is_empty() {
            return Err(Refused::NoAddress {
                host: host.to_string(),
            });
        }
        for &address in &addresses {
            if let Some(kind) = self.refusal(address) {
                return Err(Refused::Name {
                    host: host.to_string(),
                    address,
                    kind,
                });
            }
        }
        Ok(addresses)
    }

    /// Checks the host of a parsed URL: an address written in the URL (in any of the forms the
    /// URL standard reads as one: `2130706433`, `0177.0.0.1`, `0x7f.1`, `[::ffff:127.0.0.1]`)
    /// is checked as such; a name is resolved and each of its addresses checked.
    pub async fn check_host(&self, host: url::Host<&str>) -> Result<(), Refused> {
        match host {
            url::Host::Ipv4(a) => self.check(IpAddr::V4(a)),
            url::Host::Ipv6(a) => self.check(IpAddr::V6(a)),
            url::Host::Domain(name) => self.resolve(name).await.map(|_| ()),
        }
    }

    /// [`Egress::check_host`] for an address written in the URL; a name passes (it is checked
    /// when it is resolved).
    pub fn check_literal(&self, host: url::Host<&str>) -> Result<(), Refused> {
        match host {
            url::Host::Ipv4(a) => self.check(IpAddr::V4(a)),
            url::Host::Ipv6(a) => self.check(IpAddr::V6(a)),
            url::Host::Domain(_) => Ok(()),
        }
    }
}

/// The client's DNS resolver: resolves through the egress rule and hands the client only
/// addresses that passed it, so the client connects to exactly what was checked.
pub struct PinningResolver(pub Egress);

impl reqwest::dns::Resolve for PinningResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let egress = self.0.clone();
        Box::pin(async move {
            let addresses = egress.resolve(name.as_str()).await?;
            // Port 0: the client puts the URL's port in.
            let addrs: reqwest::dns::Addrs = Box::new(
                addresses
                    .into_iter()
                    .map(|ip| std::net::SocketAddr::new(ip, 0)),
            );
            Ok(addrs)
        })
    }
}

/// What kind of address `a` is when it is not on the public internet; `None` when it is.
/// Follows IANA's special-purpose address registries: an address is public only when it is
/// globally reachable unicast. IPv6 forms that embed an IPv4 address (mapped, NAT64, 6to4) are
/// judged by the IPv4 address.
pub fn not_public(a: IpAddr) -> Option<&'static str> {
    match a {
        IpAddr::V4(v4) => not_public_v4(v4),
        IpAddr::V6(v6) => not_public_v6(v6),
    }
}

fn not_public_v4(a: Ipv4Addr) -> Option<&'static str> {
    let [b0, b1, b2, _] = a.octets();
    Some(match () {
        _ if a.is_unspecified() => "unspecified",
        _ if b0 == 0 => "in 0.0.0.0/8 (this network)",
        _ if a.is_loopback() => "loopback",
        _ if a.is_private() => "private (RFC 1918)",
        _ if b0 == 100 && (b1 & 0xc0) == 64 => "shared address space (100.64.0.0/10)",
        _ if a.is_link_local() => "link-local",
        _ if b0 == 192 && b1 == 0 && b2 == 0 => "reserved for protocols (192.0.0.0/24)",
        _ if a.is_documentation() => "reserved for documentation",
        _ if b0 == 192 && b1 == 88 && b2 == 99 => "the deprecated 6to4 relay (192.88.99.0/24)",
        _ if b0 == 198 && (b1 & 0xfe) == 18 => "reserved for benchmarking (198.18.0.0/15)",
        _ if a.is_multicast() => "multicast",
        _ if a.is_broadcast() => "broadcast",
        _ if b0 >= 240 => "reserved (240.0.0.0/4)",
        _ => return None,
    })
}

fn not_public_v6(a: Ipv6Addr) -> Option<&'static str> {
    let s = a.segments();
    if let Some(v4) = a.to_ipv4_mapped() {
        return not_public_v4(v4).map(|_| "an IPv4-mapped address of a non-public IPv4 address");
    }
    // NAT64 (64:ff9b::/96) and 6to4 (2002::/16) reach the IPv4 address they embed.
    if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        let v4 = Ipv4Addr::from(((s[6] as u32) << 16) | s[7] as u32);
        return not_public_v4(v4).map(|_| "a NAT64 address of a non-public IPv4 address");
    }
    if s[0] == 0x2002 {
        let v4 = Ipv4Addr::from(((s[1] as u32) << 16) | s[2] as u32);
        return not_public_v4(v4).map(|_| "a 6to4 address of a non-public IPv4 address");
    }
    Some(match () {
        _ if a.is_unspecified() => "unspecified",
        _ if a.is_loopback() => "loopback",
        _ if s[..6] == [0; 6] => "an IPv4-compatible address (deprecated, ::/96)",
        _ if a.is_multicast() => "multicast",
        _ if (s[0] & 0xfe00) == 0xfc00 => "unique-local (fc00::/7)",
        _ if (s[0] & 0xffc0) == 0xfe80 => "link-local",
        _ if (s[0] & 0xffc0) == 0xfec0 => "site-local (deprecated, fec0::/10)",
        _ if s[0] == 0x2001 && s[1] == 0x0db8 => "reserved for documentation (2001:db8::/32)",
        _ if (s[0] & 0xfff0) == 0x3ff0 => "reserved for documentation (3fff::/20)",
        _ if s[0] == 0x2001 && s[1] < 0x0200 => {
            "reserved for protocols (2001::/23: Teredo, benchmarking, ORCHID)"
        }
        _ if s[0] == 0x0100 && s[1..4] == [0, 0, 0] => "discard-only (100::/64)",
        _ if (s[0] & 0xe000) != 0x2000 => "outside global unicast (2000::/3)",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn non_public_addresses_are_named() {
        for (a, kind) in [
            ("127.0.0.1", "loopback"),
            ("127.255.0.9", "loopback"),
            ("0.0.0.0", "unspecified"),
            ("0.1.2.3", "this network"),
            ("10.1.2.3", "private"),
            ("172.16.0.1", "private"),
            ("172.31.255.255", "private"),
            ("192.168.1.1", "private"),
            ("100.64.0.1", "shared"),
            ("100.127.255.255", "shared"),
            ("169.254.169.254", "link-local"),
            ("192.0.0.8", "protocols"),
            ("192.0.2.1", "documentation"),
            ("198.51.100.1", "documentation"),
            ("203.0.113.1", "documentation"),
            ("198.18.0.1", "benchmarking"),
            ("198.19.255.1", "benchmarking"),
            ("224.0.0.1", "multicast"),
            ("239.1.1.1", "multicast"),
            ("240.0.0.1", "reserved"),
            ("255.255.255.255", "broadcast"),
            ("::", "unspecified"),
            ("::1", "loopback"),
            ("::ffff:127.0.0.1", "IPv4-mapped"),
            ("::ffff:169.254.169.254", "IPv4-mapped"),
            ("::127.0.0.1", "IPv4-compatible"),
            ("::8.8.8.8", "IPv4-compatible"),
            ("64:ff9b::10.0.0.1", "NAT64"),
            ("2002:7f00:1::", "6to4"),
            ("fc00::1", "unique-local"),
            ("fd12:3456::1", "unique-local"),
            ("fe80::1", "link-local"),
            ("fec0::1", "site-local"),
            ("ff02::1", "multicast"),
            ("2001:db8::1", "documentation"),
            ("3fff::1", "documentation"),
            ("2001::1", "protocols"),
            ("2001:2::1", "protocols"),
            ("100::1", "discard"),
            ("4000::1", "outside global unicast"),
            ("5f00::1", "outside global unicast"),
        ] {
            let got = not_public(ip(a));
            assert!(
                got.is_some_and(|k| k.contains(kind)),
                "{a}: {got:?}, expected {kind}"
            );
        }
    }

    #[test]
    fn public_addresses_pass() {
        for a in [
            "8.8.8.8",
            "1.1.1.1",
            "93.184.215.14",
            "100.63.255.255",
            "100.128.0.1",
            "172.15.255.255",
            "172.32.0.1",
            "192.0.1.1",
            "198.17.255.255",
            "198.20.0.1",
            "223.255.255.254",
            "2606:4700:4700::1111",
            "2a00:1450:4001::200e",
            "::ffff:8.8.8.8",
            "64:ff9b::8.8.8.8",
            "2002:808:808::1",
            "2001:4860:4860::8888",
        ] {
            assert_eq!(not_public(ip(a)), None, "{a}");
        }
    }

    #[test]
    fn allowed_networks_pass_and_only_they() {
        let nets = Egress::parse_networks("10.0.0.0/8, 127.0.0.1,fd00::/8").unwrap();
        assert_eq!(nets.len(), 3);
        let e = Egress::allowing(nets);
        assert!(e.check(ip("10.9.8.7")).is_ok());
        assert!(e.check(ip("127.0.0.1")).is_ok());
        // The mapped form of an allowed address is that address.
        assert!(e.check(ip("::ffff:127.0.0.1")).is_ok());
        assert!(e.check(ip("fd00::5")).is_ok());
        assert!(e.check(ip("127.0.0.2")).is_err());
        assert!(e.check(ip("192.168.0.1")).is_err());
        assert!(e.check(ip("169.254.169.254")).is_err());
        assert!(e.check(ip("8.8.8.8")).is_ok());
        // Host bits are dropped: 10.1.2.3/8 is 10.0.0.0/8.
        assert_eq!(
            Egress::parse_networks("10.1.2.3/8").unwrap()[0].to_string(),
            "10.0.0.0/8"
        );
        assert!(Egress::parse_networks("10.0.0.0/33").is_err());
        assert!(Egress::parse_networks("intranet").is_err());
        assert!(Egress::parse_networks("").unwrap().is_empty());
    }

    /// A name whose lookups answer in turn from a list.
    struct Answers(std::sync::Mutex<Vec<Vec<IpAddr>>>);

    impl NameLookup for Answers {
        fn lookup<'a>(
            &'a self,
            _host: &'a str,
        ) -> Pin<Box<dyn Future<Output = std::io::Result<Vec<IpAddr>>> + Send + 'a>> {
            let next = self.0.lock().unwrap().remove(0);
            Box::pin(async move { Ok(next) })
        }
    }

    #[tokio::test]
    async fn a_name_is_refused_when_any_of_its_addresses_is_not_public() {
        let e = Egress::default().with_lookup(Arc::new(Answers(std::sync::Mutex::new(vec![
            vec![ip("8.8.8.8")],
            vec![ip("8.8.8.8"), ip("10.0.0.1")],
            vec![],
        ]))));
        assert_eq!(e.resolve("hooks.example").await.unwrap(), [ip("8.8.8.8")]);
        let err = e.resolve("hooks.example").await.unwrap_err();
        assert!(err.to_string().contains("10.0.0.1"), "{err}");
        assert!(err.to_string().contains("private"), "{err}");
        assert!(matches!(
            e.resolve("hooks.example").await,
            Err(Refused::NoAddress { .. })
        ));
        // Literals are judged without a lookup (the list is empty now).
        assert!(e.resolve("[::1]").await.is_err());
        assert!(e.resolve("8.8.4.4").await.is_ok());
    }

    #[tokio::test]
    async fn localhost_resolves_to_loopback_and_is_refused() {
        let err = Egress::default().resolve("localhost").await.unwrap_err();
        assert!(err.to_string().contains("loopback"), "{err}");
    }
}
