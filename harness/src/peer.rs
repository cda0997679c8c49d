//! Connecting to a real peer (`--peer HOST[:PORT]`) over RDMA verbs.

use rpcrdma_conformance::transport::Connector;

/// The port NFS over RDMA listens on (RFC 5666 / RFC 8267).
pub const DEFAULT_PORT: u16 = 20049;

#[derive(Debug)]
pub enum PeerError {
    /// The address does not parse.
    Usage(String),
    /// This machine or build cannot use verbs.
    Environment(String),
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
    let (host, port) = parse_addr(addr)?;
    let c = crate::verbs::VerbsConnector::new(&host, port).map_err(PeerError::Environment)?;
    Ok(Box::new(c))
}

/// Serves requesters over verbs on `addr` until idle for `idle` or `max_time` passes; the
/// observed connections and a description of the transport.
pub fn serve(
    addr: &str,
    _grant: u32,
    _idle: std::time::Duration,
    _max_time: std::time::Duration,
) -> Result<(Vec<rpcrdma_conformance::responder::observe::ObservedConnection>, String), PeerError> {
    let (_host, _port) = parse_addr(addr)?;
    Err(PeerError::Environment(
        "this build has no RDMA verbs transport yet; use --self-test to judge the embedded reference requester".into(),
    ))
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
}
