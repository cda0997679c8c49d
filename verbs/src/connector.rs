//! The active side: resolving the peer, connecting, and retrying a port that is taken.

use std::time::Instant;

use rpcrdma_peers::transport::{Connection, Connector, Result, TransportError};

use crate::{
    check_environment, connect_err, env_err, expect_event, ffi, ms_until, params, resolve, Fabric, VerbsConnection,
    IWARP_SETTLE,
};

/// The active side: `--peer HOST[:PORT]`.
pub struct VerbsConnector {
    pub(crate) lib: &'static ffi::Lib,
    pub(crate) host: String,
    pub(crate) port: u16,
}

impl VerbsConnector {
    /// A connector for `host:port`, after checking that this machine can do verbs.
    pub fn new(host: &str, port: u16) -> std::result::Result<VerbsConnector, String> {
        check_environment()?;
        let lib = ffi::lib()?;
        Ok(VerbsConnector { lib, host: host.to_string(), port })
    }

    /// [`Connector::connect`], with the connection as itself: its own methods (the
    /// requester's lean path, [`VerbsConnection::send_unsignaled`]) besides the trait's.
    pub fn connect_verbs(&mut self, private_data: &[u8], deadline: Instant) -> Result<VerbsConnection> {
        // iWARP connects a TCP stream from the port RDMA-CM picked; that 4-tuple may still be
        // in TIME_WAIT from an earlier connection (siw's rdma_connect then fails with
        // EADDRINUSE or EADDRNOTAVAIL): a new id, and so a new port, goes on.
        let mut tries = 0;
        loop {
            match self.connect_once(private_data, deadline) {
                Err(Attempt::PortBusy(e)) if tries < 4 && Instant::now() < deadline => {
                    tries += 1;
                    if std::env::var("RPCRDMA_VERBS_TRACE").is_ok_and(|v| v == "1") {
                        eprintln!("verbs: rdma_connect: {e}; again from another port");
                    }
                }
                Err(Attempt::PortBusy(e)) => return Err(env_err("rdma_connect", e)),
                Err(Attempt::Failed(e)) => return Err(e),
                Ok(c) => return Ok(c),
            }
        }
    }
}

impl Connector for VerbsConnector {
    fn connect(&mut self, private_data: &[u8], deadline: Instant) -> Result<Box<dyn Connection>> {
        Ok(Box::new(self.connect_verbs(private_data, deadline)?))
    }

    fn describe(&self) -> String {
        if self.host.contains(':') {
            format!("verbs [{}]:{}", self.host, self.port)
        } else {
            format!("verbs {}:{}", self.host, self.port)
        }
    }

    fn port(&self) -> Option<u16> {
        Some(self.port)
    }

    /// The same host at `port` (RFC 8267 6.3: the well-known port, whatever port we were given).
    fn connect_at(&mut self, port: u16, private_data: &[u8], deadline: Instant) -> Option<Result<Box<dyn Connection>>> {
        let mut other = VerbsConnector { lib: self.lib, host: self.host.clone(), port };
        Some(other.connect(private_data, deadline))
    }
}

/// How one connect attempt failed.
enum Attempt {
    /// rdma_connect: the local port is taken (EADDRINUSE, EADDRNOTAVAIL).
    PortBusy(std::io::Error),
    Failed(TransportError),
}

impl From<TransportError> for Attempt {
    fn from(e: TransportError) -> Attempt {
        Attempt::Failed(e)
    }
}

impl VerbsConnector {
    fn connect_once(
        &mut self,
        private_data: &[u8],
        deadline: Instant,
    ) -> std::result::Result<VerbsConnection, Attempt> {
        let addr = resolve(&self.host, self.port).map_err(TransportError::Unreachable)?;
        let ch = ffi::EventChannel::new(self.lib).map_err(|e| env_err("rdma_create_event_channel", e))?;
        let id = ffi::CmId::new(&ch).map_err(|e| env_err("rdma_create_id", e))?;
        id.resolve_addr(&addr, ms_until(deadline))
            .map_err(|e| TransportError::Unreachable(format!("rdma_resolve_addr {addr}: {e}")))?;
        expect_event(self.lib, &ch, ffi::cm_event::ADDR_RESOLVED, "address resolution", deadline)?;
        id.resolve_route(ms_until(deadline))
            .map_err(|e| TransportError::Unreachable(format!("rdma_resolve_route {addr}: {e}")))?;
        expect_event(self.lib, &ch, ffi::cm_event::ROUTE_RESOLVED, "route resolution", deadline)?;
        let mut conn = VerbsConnection::setup(id)?;
        conn.id.connect(private_data, params()).map_err(|e| match e.raw_os_error() {
            Some(98 | 99) => Attempt::PortBusy(e), // EADDRINUSE, EADDRNOTAVAIL
            _ => Attempt::Failed(connect_err(addr, e)),
        })?;
        let ev = expect_event(self.lib, &ch, ffi::cm_event::ESTABLISHED, "connect", deadline)?;
        conn.peer_private_data = ev.private_data;
        conn.up = true;
        if conn.fabric == Fabric::Iwarp {
            // Linux siw's siw_accept() (drivers/infiniband/sw/siw/siw_cm.c) sends the MPA
            // reply before it hands the socket to the QP (siw_qp_socket_assoc()); a first
            // FPDU arriving in between meets siw_cm_llp_data_ready(), which ignores data in
            // RDMA mode, and waits unread until the next one: the peer never sees our first
            // message. Give the accepting side that moment.
            std::thread::sleep(IWARP_SETTLE);
        }
        Ok(conn)
    }
}
