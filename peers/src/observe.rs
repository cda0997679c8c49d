//! What a requester did, as the responder saw it: each connection's private data and every
//! message in both directions, in order. The client catalogue judges requesters from this.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::transport::WcStatus;

/// One thing that happened on a served connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Observed {
    /// A message the requester sent.
    FromRequester(Vec<u8>),
    /// A message we sent back.
    ToRequester(Vec<u8>),
    /// A receive failed (the requester's Send overran our buffer, ...).
    ReceiveFailed(WcStatus),
    /// The connection ended.
    Closed,
    /// We stopped serving the connection, and why.
    Stopped(String),
    /// The scenario played on this connection replaced our reply to the call `xid`: the
    /// message recorded next is what we sent instead.
    Injected { scenario: &'static str, xid: u32 },
    /// `serve --fuzz` replaced our reply to the call `xid` (or, `how` being `reverse-*`, our
    /// reverse-direction call `xid`) with a copy mutated `how`: the message recorded next is
    /// what we sent.
    Mutated { how: &'static str, xid: u32 },
    /// A Send of ours completed in error (receiver not ready: no receive posted at the
    /// requester).
    SendFailed(WcStatus),
    /// The message recorded next (a `ToRequester`) is a reverse-direction call of ours
    /// (RFC 8167 5.1) with this RPC XID.
    ReverseCall { xid: u32 },
    /// A message recorded earlier (a `FromRequester`) was taken as a reverse-direction reply
    /// (RFC 8167 5.2: its RPC msg_type is REPLY) with this rdma_xid; `matched` when it answered
    /// an outstanding call of ours with matching XIDs and went to the upper layer (otherwise
    /// it was discarded).
    ReverseReply { xid: u32, matched: bool },
}

/// What the wire carried besides the messages, for packet captures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WireNote {
    /// We RDMA-Read these bytes from the requester's memory.
    Read { handle: u32, offset: u64, data: Vec<u8> },
    /// We RDMA-Wrote these bytes into the requester's memory.
    Write { handle: u32, offset: u64, data: Vec<u8> },
    /// The next message we send goes by Send With Invalidate of this R_key.
    Invalidate(u32),
}

/// One served connection.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ObservedConnection {
    /// The requester's private data, as the CM delivered it.
    pub private_data: Vec<u8>,
    /// Our private data (the CM REP's).
    pub responder_private_data: Vec<u8>,
    /// The credits we granted in every reply.
    pub grant: u32,
    /// Our receive buffer size (the requester's inline limit towards us).
    pub receive_size: u32,
    /// The `serve` scenario the responder played on this connection, if any.
    pub scenario: Option<&'static str>,
    pub events: Vec<(Duration, Observed)>,
    /// One-sided operations and invalidations, on the same clock as `events`.
    pub wire: Vec<(Duration, WireNote)>,
}

/// Told of each event as it is recorded, before the responder acts on it (a message we send
/// is recorded before it is posted): what must outlive the process, such as `serve --fuzz`'s
/// journal of mutated replies, is written from here.
pub trait Listener: Send + Sync + std::fmt::Debug {
    /// `conn` is the connection's index in the log.
    fn observed(&self, conn: usize, what: &Observed);
}

/// A shared log of connections, filled by the responder while it serves.
#[derive(Debug)]
pub struct Log {
    started: Instant,
    conns: Mutex<Vec<ObservedConnection>>,
    listener: Option<Arc<dyn Listener>>,
}

impl Default for Log {
    fn default() -> Self {
        Log { started: Instant::now(), conns: Mutex::new(Vec::new()), listener: None }
    }
}

impl Log {
    pub fn new() -> Arc<Log> {
        Arc::new(Log::default())
    }

    /// A log whose events `listener` is told of as they are recorded.
    pub fn with_listener(listener: Option<Arc<dyn Listener>>) -> Arc<Log> {
        Arc::new(Log { listener, ..Log::default() })
    }

    /// Records a new connection; returns its index.
    pub fn open(&self, private_data: &[u8], grant: u32, receive_size: u32) -> usize {
        let mut c = self.conns.lock().unwrap_or_else(|e| e.into_inner());
        c.push(ObservedConnection {
            private_data: private_data.to_vec(),
            grant,
            receive_size,
            ..ObservedConnection::default()
        });
        c.len() - 1
    }

    pub fn push(&self, conn: usize, what: Observed) {
        if let Some(l) = &self.listener {
            l.observed(conn, &what);
        }
        let at = self.started.elapsed();
        let mut c = self.conns.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(x) = c.get_mut(conn) {
            x.events.push((at, what));
        }
    }

    /// Records our private data on a connection.
    pub fn responder_private_data(&self, conn: usize, private_data: &[u8]) {
        let mut c = self.conns.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(x) = c.get_mut(conn) {
            x.responder_private_data = private_data.to_vec();
        }
    }

    /// Records the scenario the responder plays on a connection.
    pub fn scenario(&self, conn: usize, name: &'static str) {
        let mut c = self.conns.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(x) = c.get_mut(conn) {
            x.scenario = Some(name);
        }
    }

    /// Records what the wire carried besides a message.
    pub fn note(&self, conn: usize, what: WireNote) {
        let at = self.started.elapsed();
        let mut c = self.conns.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(x) = c.get_mut(conn) {
            x.wire.push((at, what));
        }
    }

    /// A copy of everything recorded so far.
    pub fn snapshot(&self) -> Vec<ObservedConnection> {
        self.conns.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}
