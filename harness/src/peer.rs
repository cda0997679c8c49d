//! Connecting to a real peer (`--peer HOST[:PORT]`) over RDMA verbs.

use std::net::ToSocketAddrs;
use std::time::{Duration, Instant};

use rpcrdma_peers::observe::{Log, ObservedConnection};
use rpcrdma_peers::responder::{Config, Responder, Scenario};
use rpcrdma_peers::transport::{Connector, TransportError};

use crate::verbs::VerbsListener;

/// The port NFS over RDMA listens on (RFC 5666 / RFC 8267).
pub const DEFAULT_PORT: u16 = 20049;

#[derive(Debug)]
pub enum PeerError {
    /// The address does not parse.
    Usage(String),
    /// This machine or build cannot use verbs.
    Environment(String),
}

impl From<PeerError> for crate::exit::HarnessError {
    fn from(e: PeerError) -> Self {
        match e {
            PeerError::Usage(m) => crate::exit::HarnessError::Usage(m),
            PeerError::Environment(m) => crate::exit::HarnessError::Environment(m),
        }
    }
}

/// Splits `HOST[:PORT]` (IPv6 as `[addr]:port`).
pub fn parse_addr(addr: &str) -> Result<(String, u16), PeerError> {
    let (host, port) = if let Some(rest) = addr.strip_prefix('[') {
        let (h, tail) = rest.split_once(']').ok_or_else(|| PeerError::Usage(format!("bad address {addr:?}")))?;
        (h.to_string(), tail.strip_prefix(':'))
    } else {
        match addr.rsplit_once(':') {
            Some((h, p)) if !h.contains(':') => (h.to_string(), Some(p)),
            _ => (addr.to_string(), None),
        }
    };
    if host.is_empty() {
        return Err(PeerError::Usage(format!("bad address {addr:?}: no host")));
    }
    let port = match port {
        None => DEFAULT_PORT,
        Some(p) => p.parse().map_err(|_| PeerError::Usage(format!("bad port in {addr:?}")))?,
    };
    Ok((host, port))
}

/// A verbs connector for `addr`: rdma-core is loaded and an RDMA device must exist
/// (otherwise an Environment error, one line, saying which is missing).
pub fn connector(addr: &str) -> Result<Box<dyn Connector>, PeerError> {
    Ok(Box::new(verbs_connector(addr)?))
}

/// As [`connector`], the verbs connector itself (its `connect_verbs` gives the requester's
/// lean path: `bench-null`).
pub fn verbs_connector(addr: &str) -> Result<crate::verbs::VerbsConnector, PeerError> {
    let (host, port) = parse_addr(addr)?;
    // A name that does not resolve is that, whatever this machine's verbs support.
    resolve(&host, port)?;
    crate::verbs::VerbsConnector::new(&host, port).map_err(PeerError::Environment)
}

/// RFC 8797 private data advertising `receive_size` bytes both ways, as the bench commands
/// connect with.
pub fn bench_private_data(receive_size: u32) -> Result<[u8; 8], crate::exit::HarnessError> {
    let usage =
        |e: &dyn std::fmt::Display| crate::exit::HarnessError::Usage(format!("receive size {receive_size}: {e}"));
    let mut pd = [0u8; 8];
    rpcrdma_codec::private_data::PrivateData::new(receive_size, receive_size, false)
        .map_err(|e| usage(&e))?
        .encode_into(&mut pd)
        .map_err(|e| usage(&e))?;
    Ok(pd)
}

/// The error of a bench command's connect to `whom` that failed.
pub fn unreachable(whom: &str, e: impl std::fmt::Display) -> crate::exit::HarnessError {
    crate::exit::HarnessError::Unreachable(format!("cannot reach {whom}: {e}"))
}

/// A connector and the connection it made.
pub type Connected = (Box<dyn Connector>, Box<dyn rpcrdma_peers::transport::Connection>);

/// A bench command's connection: to `peer`, or to `embedded` when none is given, with RFC 8797
/// private data advertising `receive_size` bytes both ways; the connect is bounded by `wait`
/// and a failure is the Unreachable error naming whom.
pub fn bench_connection(
    peer: Option<&str>,
    embedded: impl FnOnce() -> Responder,
    receive_size: u32,
    wait: Duration,
) -> Result<Connected, crate::exit::HarnessError> {
    let mut connector: Box<dyn Connector> = match peer {
        None => Box::new(rpcrdma_peers::transport::emulated::EmulatedConnector::new(embedded())),
        Some(addr) => connector(addr)?,
    };
    let pd = bench_private_data(receive_size)?;
    let conn = connector
        .connect(&pd, Instant::now() + wait)
        .map_err(|e| unreachable(peer.unwrap_or("the embedded responder"), e))?;
    Ok((connector, conn))
}

/// The first address `host` resolves to; an error names the host.
pub fn resolve(host: &str, port: u16) -> Result<std::net::SocketAddr, PeerError> {
    (host, port)
        .to_socket_addrs()
        .map_err(|e| PeerError::Usage(format!("cannot resolve {host}: {e}")))?
        .next()
        .ok_or_else(|| PeerError::Usage(format!("cannot resolve {host}: no address")))
}

/// What the plain responder (not a scenario's) sends in place of some of its replies.
#[derive(Debug, Clone, Default)]
pub enum Replacing {
    /// Nothing: every reply is the reference responder's.
    #[default]
    Nothing,
    /// `serve --fuzz`: mutated copies of some replies.
    Mutated(std::sync::Arc<rpcrdma_peers::responder::ReplyFuzz>),
    /// `replay --listen`: a recorded reply, once.
    Recorded(std::sync::Arc<rpcrdma_peers::responder::RecordedReply>),
}

/// How [`serve`] serves: the responders' settings and when it stops.
#[derive(Debug, Clone)]
pub struct ServeOptions<'a> {
    /// The credits every reply grants.
    pub grant: u32,
    /// Each played on a responder of its own, on the ports after the address's.
    pub scenarios: &'a [Scenario],
    /// What the plain responder sends in place of some replies.
    pub replacing: Replacing,
    /// Stop when no requester has been connected this long since the last connection ended.
    pub idle: Duration,
    /// Stop after this long in any case.
    pub max_time: Duration,
    /// The spec choices every responder reads and writes the wire under (the run's one).
    pub profile: rpcrdma_codec::Profile,
    /// Set by a signal: stop after the current accept.
    pub interrupt: &'a std::sync::atomic::AtomicBool,
    /// Told of every event observed, as it is recorded.
    pub listener: Option<std::sync::Arc<dyn rpcrdma_peers::observe::Listener>>,
}

/// Serves requesters over verbs on `addr` with the reference responder granting
/// `options.grant` credits, and plays each of `options.scenarios` on a responder of its own
/// listening on the ports after `addr`'s (the first scenario on port + 1, and so on), so a
/// requester mounted on a scenario's port meets that scenario and no other; every responder
/// reads and writes the wire under `options.profile`. It stops when no requester has been
/// connected for `idle` since the last connection ended (before the first, only `max_time`
/// counts: a requester slow to start is waited for), or `max_time` has passed; it returns the
/// observed connections and a description of the transport. `interrupt` (a signal) stops it
/// too, after the current accept.
pub fn serve(addr: &str, options: ServeOptions<'_>) -> Result<(Vec<ObservedConnection>, String), PeerError> {
    let ServeOptions { grant, scenarios, replacing, idle, max_time, profile, interrupt, listener } = options;
    let (host, port) = parse_addr(addr)?;
    let ip = resolve(&host, port)?;
    if usize::from(u16::MAX - port) < scenarios.len() {
        return Err(PeerError::Usage(format!("port {port}: no room for {} scenario ports after it", scenarios.len())));
    }
    crate::verbs::check_environment().map_err(PeerError::Environment)?;
    let log = Log::with_listener(listener);
    let plays = std::iter::once(None).chain(scenarios.iter().copied().map(Some));
    let mut listeners = Vec::new();
    for (i, scenario) in plays.enumerate() {
        let mut at = ip;
        at.set_port(port + i as u16);
        let listener = VerbsListener::bind(at).map_err(PeerError::Environment)?;
        // Only the plain responder replaces replies (`serve --fuzz` plays no scenario).
        let (reply_fuzz, recorded_reply) = match (&replacing, scenario) {
            (Replacing::Mutated(m), None) => (Some(m.clone()), None),
            (Replacing::Recorded(r), None) => (None, Some(r.clone())),
            _ => (None, None),
        };
        let config = Config {
            credits: grant,
            profile,
            observer: Some(log.clone()),
            scenario,
            reply_fuzz,
            recorded_reply,
            ..Config::default()
        };
        match scenario {
            None => crate::errln!(
                "rpcrdma-harness {} serving requesters on verbs {} (grant {grant}{})",
                crate::build_info::VERSION,
                listener.local_addr(),
                crate::wire_profile::clause(&profile)
            ),
            // The kernel client's workload for it (Scenario::client_workload), which the VM's
            // client-scenarios reads from this line.
            Some(s) => crate::errln!(
                "playing scenario {} on verbs {} (kernel client workload: {})",
                s.name(),
                listener.local_addr(),
                s.client_workload()
            ),
        }
        listeners.push((listener, Responder::reference(config)));
    }
    let started = Instant::now();
    // When the last connection was seen being served; none before the first.
    let mut last_activity: Option<Instant> = None;
    let mut serving: Vec<std::thread::JoinHandle<()>> = Vec::new();
    // Each listener is polled in turn, briefly, so none waits on another.
    let poll = Duration::from_millis(200 / listeners.len() as u64).max(Duration::from_millis(20));
    loop {
        let now = Instant::now();
        serving.retain(|t| !t.is_finished());
        if !serving.is_empty() {
            last_activity = Some(now);
        }
        // A signal stops accepting; the connections being served are judged as observed so far.
        if interrupt.load(std::sync::atomic::Ordering::SeqCst)
            || now - started >= max_time
            || (serving.is_empty() && last_activity.is_some_and(|t| now - t >= idle))
        {
            break;
        }
        for (listener, responder) in &mut listeners {
            match listener.next_request(Instant::now() + poll) {
                Ok(mut pending) => {
                    let (size, count) = responder.receive_window();
                    if pending.post_recv(size, count).is_err() {
                        continue;
                    }
                    let deadline = Instant::now() + Duration::from_secs(5);
                    if let Ok(mut conn) = pending.accept(&responder.private_data(), deadline) {
                        let r = responder.clone();
                        serving.push(std::thread::spawn(move || r.serve(&mut conn)));
                        // A connection over before the next look still counts.
                        last_activity = Some(Instant::now());
                    }
                }
                Err(TransportError::Timeout) => {}
                Err(e) => return Err(PeerError::Environment(format!("listening on {}: {e}", listener.local_addr()))),
            }
        }
    }
    Ok((log.snapshot(), format!("verbs {}", listeners[0].0.local_addr())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses() {
        assert_eq!(parse_addr("10.0.0.1").unwrap(), ("10.0.0.1".into(), 20049));
        assert_eq!(parse_addr("host:2050").unwrap(), ("host".into(), 2050));
        assert_eq!(parse_addr("[fe80::1]:7").unwrap(), ("fe80::1".into(), 7));
        assert_eq!(parse_addr("fe80::1").unwrap(), ("fe80::1".into(), 20049));
        assert!(parse_addr("h:x").is_err());
        assert!(parse_addr(":1").is_err());
    }

    #[test]
    fn a_peer_error_keeps_its_message_and_status() {
        let e = crate::exit::HarnessError::from(PeerError::Environment("no device".into()));
        assert_eq!((e.message().as_deref(), e.code()), (Some("no device"), 2));
    }
}
