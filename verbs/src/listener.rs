//! The passive side: listening, one connection request at a time, accepted or rejected.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;

use rpcrdma_peers::transport::{Result, TransportError};

use crate::{check_environment, env_err, expect_event, ffi, params, VerbsConnection};

/// The passive side: listens on an address and hands out one connection request at a time.
pub struct VerbsListener {
    pub(crate) lib: &'static ffi::Lib,
    pub(crate) ch: Arc<ffi::EventChannel>,
    pub(crate) _id: ffi::CmId,
    pub(crate) addr: SocketAddr,
}

/// A connection request, not yet accepted: post receives, then accept or reject.
pub struct PendingConnection {
    pub(crate) conn: VerbsConnection,
    pub(crate) lib: &'static ffi::Lib,
    pub(crate) private_data: Vec<u8>,
    pub(crate) responder_resources: u8,
    pub(crate) initiator_depth: u8,
}

impl VerbsListener {
    /// Listens on `addr` (an address of an RDMA device's netdev, or 0.0.0.0).
    pub fn bind(addr: SocketAddr) -> std::result::Result<VerbsListener, String> {
        check_environment()?;
        let lib = ffi::lib()?;
        let ch = ffi::EventChannel::new(lib).map_err(|e| format!("rdma_create_event_channel: {e}"))?;
        let id = ffi::CmId::new(&ch).map_err(|e| format!("rdma_create_id: {e}"))?;
        id.bind_addr(&addr).map_err(|e| format!("rdma_bind_addr {addr}: {e}"))?;
        id.listen(16).map_err(|e| format!("rdma_listen {addr}: {e}"))?;
        Ok(VerbsListener { lib, ch, _id: id, addr })
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// The next connection request, or [`TransportError::Timeout`] at the deadline.
    pub fn next_request(&mut self, deadline: Instant) -> Result<PendingConnection> {
        loop {
            let ev = self
                .ch
                .next_event(deadline)
                .map_err(|e| env_err("rdma_get_cm_event", e))?
                .ok_or(TransportError::Timeout)?;
            let Some(mut id) = ev.new_id else { continue };
            let own = ffi::EventChannel::new(self.lib).map_err(|e| env_err("rdma_create_event_channel", e))?;
            id.migrate(&own).map_err(|e| env_err("rdma_migrate_id", e))?;
            let conn = VerbsConnection::setup(id)?;
            return Ok(PendingConnection {
                conn,
                lib: self.lib,
                private_data: ev.private_data,
                responder_resources: ev.responder_resources,
                initiator_depth: ev.initiator_depth,
            });
        }
    }
}

impl PendingConnection {
    /// The requester's private data as delivered (the zero-padded CM area).
    pub fn private_data(&self) -> &[u8] {
        &self.private_data
    }

    /// Posts receives before accepting, so the requester's first Send finds one.
    pub fn post_recv(&mut self, size: usize, count: usize) -> Result<()> {
        self.conn.post_recv_inner(size, count)
    }

    /// Accepts with our private data and waits for the connection to be established.
    pub fn accept(mut self, private_data: &[u8], deadline: Instant) -> Result<VerbsConnection> {
        let p = ffi::ConnParams {
            responder_resources: self.responder_resources,
            initiator_depth: self.initiator_depth,
            ..params()
        };
        self.conn.id.accept(private_data, p).map_err(|e| env_err("rdma_accept", e))?;
        let ch = self.conn.id.channel().clone();
        expect_event(self.lib, &ch, ffi::cm_event::ESTABLISHED, "accept", deadline)?;
        self.conn.peer_private_data = std::mem::take(&mut self.private_data);
        self.conn.up = true;
        Ok(self.conn)
    }

    /// Rejects with `private_data` (an RDMA-CM consumer reject).
    pub fn reject(self, private_data: &[u8]) -> Result<()> {
        self.conn.id.reject(private_data).map_err(|e| env_err("rdma_reject", e))
    }
}
