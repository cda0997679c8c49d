//! What a scenario needs from an RDMA connection, modelled on verbs and RDMA-CM rather than
//! sockets: receives posted at a chosen size, Sends that can fail the way hardware fails them,
//! registered regions the peer reads and writes one-sidedly, completions with their status
//! class, and a deadline on every wait. Implementations: [`emulated`] (in-process) and the
//! verbs transport in the harness.

pub mod emulated;
#[doc(hidden)]
pub mod forward;

use std::fmt;
use std::time::Instant;

/// Remote access rights of a registered region (IBV_ACCESS_REMOTE_READ / _WRITE).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Access {
    pub remote_read: bool,
    pub remote_write: bool,
}

impl Access {
    pub const READ: Access = Access { remote_read: true, remote_write: false };
    pub const WRITE: Access = Access { remote_read: false, remote_write: true };
    pub const READ_WRITE: Access = Access { remote_read: true, remote_write: true };
    pub const NONE: Access = Access { remote_read: false, remote_write: false };
}

/// A registered region as the peer sees it: the coordinates to advertise in a segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Region {
    /// The steering tag (R_key) the peer uses.
    pub handle: u32,
    /// The address of the first byte (the segment's offset field).
    pub offset: u64,
    pub length: u32,
}

impl Region {
    /// The region as a plain RDMA segment, or a part of it.
    pub fn segment(&self) -> rpcrdma_codec::chunk::Segment {
        rpcrdma_codec::chunk::Segment::new(self.handle, self.length, self.offset)
    }

    /// A segment over `len` bytes starting `at` bytes into the region.
    pub fn sub_segment(&self, at: u32, len: u32) -> rpcrdma_codec::chunk::Segment {
        rpcrdma_codec::chunk::Segment::new(self.handle, len, self.offset + at as u64)
    }
}

/// One-sided operations the peer performed on one of our regions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RemoteOp {
    Read,
    Write,
}

/// A peer access to our memory, as recorded by the transport.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RemoteAccess {
    pub op: RemoteOp,
    /// Byte offset into the region.
    pub at: u64,
    pub length: u32,
}

/// Work-completion status classes (ibv_wc_status) that matter to conformance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WcStatus {
    Success,
    /// IBV_WC_LOC_LEN_ERR: a Send larger than the posted receive buffer.
    LocalLengthError,
    /// IBV_WC_REM_INV_REQ_ERR: seen by a sender whose Send overran the peer's receive.
    RemoteInvalidRequest,
    /// IBV_WC_RNR_RETRY_EXC_ERR: no receive was posted at the peer.
    ReceiverNotReady,
    /// IBV_WC_WR_FLUSH_ERR: the queue pair went to the error state.
    Flushed,
    /// IBV_WC_REM_ACCESS_ERR: R_key, rights or bounds check failed at the target.
    RemoteAccessError,
    /// IBV_WC_LOC_PROT_ERR and similar: e.g. a Send With Invalidate naming an unknown R_key.
    LocalProtectionError,
}

impl WcStatus {
    pub fn name(self) -> &'static str {
        match self {
            WcStatus::Success => "success",
            WcStatus::LocalLengthError => "local length error",
            WcStatus::RemoteInvalidRequest => "remote invalid request",
            WcStatus::ReceiverNotReady => "receiver not ready",
            WcStatus::Flushed => "flushed",
            WcStatus::RemoteAccessError => "remote access error",
            WcStatus::LocalProtectionError => "local protection error",
        }
    }
}

/// Something that happened on a connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// A receive completed: a message from the peer, or an error status with no data.
    Recv {
        status: WcStatus,
        data: Vec<u8>,
        /// The R_key the peer invalidated with Send With Invalidate.
        invalidated: Option<u32>,
    },
    /// A Send we posted completed.
    SendDone { status: WcStatus },
    /// The connection is gone (peer disconnect, or our queue pair entered the error state).
    Disconnected,
}

/// Why a transport call failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TransportError {
    /// The deadline passed first.
    Timeout,
    /// The connection is closed.
    Disconnected,
    /// Connecting failed: nobody listens, the peer rejected us, no route.
    Unreachable(String),
    /// A one-sided operation failed with this status.
    Completion(WcStatus),
    /// The local environment cannot do it (no device, resource limits).
    Environment(String),
    /// A caller error: unknown region, out-of-range access.
    Invalid(String),
}

impl fmt::Display for TransportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TransportError::Timeout => write!(f, "timed out"),
            TransportError::Disconnected => write!(f, "disconnected"),
            TransportError::Unreachable(why) => write!(f, "peer unreachable: {why}"),
            TransportError::Completion(s) => write!(f, "completion error: {}", s.name()),
            TransportError::Environment(why) => write!(f, "environment: {why}"),
            TransportError::Invalid(why) => write!(f, "invalid request: {why}"),
        }
    }
}

impl std::error::Error for TransportError {}

pub type Result<T> = std::result::Result<T, TransportError>;

/// One reliable-connected RDMA connection (an RC queue pair with its CM identity).
pub trait Connection: Send {
    /// The private data the peer's CM message carried, as delivered (possibly zero-padded).
    fn peer_private_data(&self) -> &[u8];

    /// Posts `count` receives of `size` bytes each.
    fn post_recv(&mut self, size: usize, count: usize) -> Result<()>;

    /// Posts a Send; its completion arrives as [`Event::SendDone`].
    fn send(&mut self, msg: &[u8]) -> Result<()>;

    /// Posts a Send With Invalidate naming the peer's R_key `handle`.
    fn send_with_invalidate(&mut self, msg: &[u8], handle: u32) -> Result<()>;

    /// Posts Sends back to back, in order, each with the peer's R_key to invalidate if any. A
    /// transport that can post them as one batch, so the peer sees none of them before all
    /// are posted, does (the emulated one); by default they go one by one.
    fn send_batch(&mut self, msgs: &[(Vec<u8>, Option<u32>)]) -> Result<()> {
        for (msg, invalidate) in msgs {
            match invalidate {
                Some(h) => self.send_with_invalidate(msg, *h)?,
                None => self.send(msg)?,
            }
        }
        Ok(())
    }

    /// Registers `length` zeroed bytes with the given remote access.
    fn register(&mut self, length: u32, access: Access) -> Result<Region>;

    /// Writes into our own region (the data a peer will RDMA Read, or canary bytes).
    fn write_local(&mut self, region: &Region, at: u32, data: &[u8]) -> Result<()>;

    /// Reads our own region (to see what a peer RDMA Wrote).
    fn read_local(&self, region: &Region) -> Result<Vec<u8>>;

    /// What the peer did to our region, in order.
    fn accesses(&self, region: &Region) -> Result<Vec<RemoteAccess>>;

    /// Whether a Send With Invalidate from the peer is reported as one ([`Event::Recv`]'s
    /// `invalidated`). Not where the verbs provider drops it: rdma-core's siw provider
    /// reports every receive as a plain Send (verbs/src/fabric.rs).
    fn observes_invalidation(&self) -> bool {
        true
    }

    /// Whether the region's R_key is still valid (not invalidated, not deregistered).
    fn is_valid(&self, region: &Region) -> bool;

    /// Deregisters a region.
    fn deregister(&mut self, region: &Region) -> Result<()>;

    /// RDMA Read from the peer's memory, waiting for completion.
    fn rdma_read(&mut self, handle: u32, offset: u64, length: u32, deadline: Instant) -> Result<Vec<u8>>;

    /// RDMA Write into the peer's memory, waiting for completion.
    fn rdma_write(&mut self, handle: u32, offset: u64, data: &[u8], deadline: Instant) -> Result<()>;

    /// The next event, or [`TransportError::Timeout`] at the deadline.
    fn poll(&mut self, deadline: Instant) -> Result<Event>;

    /// Closes the connection; pending work is flushed.
    fn disconnect(&mut self);

    /// Whether the connection is still up.
    fn is_connected(&self) -> bool;
}

/// The RPC-over-RDMA well-known port of NFS (RFC 8267 6.3, 9: `nfsrdma`).
pub const NFS_RDMA_PORT: u16 = 20049;

/// The active side: connects to a peer with our private data.
///
/// [`Connector::port`] and [`Connector::connect_at`] have no default: a wrapper that did not
/// forward them would turn the checks that address another port (RFC 8267 6.3) unsupported
/// without a word, so each implementation says what it does with ports. A wrapper that
/// forgets does not compile:
///
/// ```compile_fail
/// use std::time::Instant;
/// use rpcrdma_peers::transport::{Connection, Connector, Result};
///
/// struct Wrapper<C>(C);
///
/// impl<C: Connector> Connector for Wrapper<C> {
///     fn connect(&mut self, private_data: &[u8], deadline: Instant) -> Result<Box<dyn Connection>> {
///         self.0.connect(private_data, deadline)
///     }
///     fn describe(&self) -> String {
///         self.0.describe()
///     }
/// }
/// ```
///
/// and compiles once it forwards them:
///
/// ```
/// use std::time::Instant;
/// use rpcrdma_peers::transport::{Connection, Connector, Result};
///
/// struct Wrapper<C>(C);
///
/// impl<C: Connector> Connector for Wrapper<C> {
///     fn connect(&mut self, private_data: &[u8], deadline: Instant) -> Result<Box<dyn Connection>> {
///         self.0.connect(private_data, deadline)
///     }
///     fn describe(&self) -> String {
///         self.0.describe()
///     }
///     fn port(&self) -> Option<u16> {
///         self.0.port()
///     }
///     fn connect_at(&mut self, port: u16, pd: &[u8], deadline: Instant) -> Option<Result<Box<dyn Connection>>> {
///         self.0.connect_at(port, pd, deadline)
///     }
/// }
/// ```
pub trait Connector: Send {
    fn connect(&mut self, private_data: &[u8], deadline: Instant) -> Result<Box<dyn Connection>>;

    /// A short name for reports: `emulated`, `verbs 10.55.0.1:20049`.
    fn describe(&self) -> String;

    /// The port the peer is addressed at (RDMA-CM's port space); None for a transport with
    /// no ports.
    fn port(&self) -> Option<u16>;

    /// Connects to the peer's host at `port` instead of its own (RFC 8267 6.3's well-known
    /// port); None for a transport with no ports.
    fn connect_at(&mut self, port: u16, private_data: &[u8], deadline: Instant) -> Option<Result<Box<dyn Connection>>>;
}
