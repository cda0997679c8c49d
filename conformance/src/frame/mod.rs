//! Frames: every message received from a peer, decoded once at the boundary into an owned,
//! typed representation kept beside its bytes (smoltcp's `Repr`, h2's `Frame`). Checks and
//! matchers look at frames, never at bytes they decode again.

pub mod rpc;
pub mod v1;
pub mod v2;

use std::cell::Cell;
use std::fmt;

use rpcrdma_codec::check::Role;
use rpcrdma_codec::v1::{ErrVers, FixedFields};
use rpcrdma_codec::{DecodeError, Profile};

pub use rpc::Rpc;

thread_local! {
    static DECODES: Cell<u64> = const { Cell::new(0) };
}

/// How many frames this thread has decoded: a test proves each receipt is decoded once.
pub fn decodes() -> u64 {
    DECODES.with(Cell::get)
}

/// A decoded transport header of either version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Header {
    V1(v1::Header),
    V2(v2::Header),
}

/// A header that did not decode: the error, and the fixed fields when there were 16 bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Malformed {
    pub fixed: Option<FixedFields>,
    pub error: DecodeError,
}

/// One message from the peer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    bytes: Vec<u8>,
    /// The R_key the peer invalidated with Send With Invalidate.
    pub invalidated: Option<u32>,
    /// The transport header, decoded by the version rdma_vers names.
    pub header: Result<Header, Malformed>,
    /// The RPC message an RDMA_MSG (or RDMA2_MSG, or a single-transmission ROPT_XMTRESP)
    /// carries inline.
    pub rpc: Option<Result<Rpc, DecodeError>>,
    /// An RDMA_ERROR / ERR_VERS of any version: RFC 8166 7 fixes its layout for all of them,
    /// and a responder echoes the requester's unsupported rdma_vers (RFC 8166 4.5).
    pub err_vers: Option<ErrVers>,
}

impl Frame {
    /// Decodes `bytes`, sent by a peer in `role`, once: Version Two when rdma_vers says 2,
    /// else Version One.
    pub fn decode(bytes: Vec<u8>, invalidated: Option<u32>, role: Role) -> Frame {
        DECODES.with(|d| d.set(d.get() + 1));
        let profile = Profile::default();
        let fixed = FixedFields::decode(&bytes).ok();
        let decoded = match fixed {
            Some(f) if f.vers == rpcrdma_codec::v2::VERSION => {
                v2::Header::decode(&bytes, &profile).map(|(h, payload)| (Header::V2(h), payload))
            }
            _ => v1::Header::decode(&bytes, &profile, role).map(|(h, payload)| (Header::V1(h), payload)),
        };
        let (header, rpc) = match decoded {
            Ok((h, Some(payload))) => (Ok(h), Some(Rpc::decode(&bytes, payload))),
            Ok((h, None)) => (Ok(h), None),
            Err(error) => (Err(Malformed { fixed, error }), None),
        };
        let err_vers = ErrVers::decode(&bytes).ok().flatten();
        Frame { bytes, invalidated, header, rpc, err_vers }
    }

    /// The bytes as received.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// The four fixed fields, decoded or not.
    pub fn fixed(&self) -> Option<FixedFields> {
        match &self.header {
            Ok(Header::V1(h)) => Some(h.fixed()),
            Ok(Header::V2(h)) => Some(h.fixed()),
            Err(m) => m.fixed,
        }
    }

    /// rdma_xid, when the message was long enough to carry one.
    pub fn xid(&self) -> Option<u32> {
        self.fixed().map(|f| f.xid)
    }

    /// The Version One header, if that is what this is.
    pub fn v1(&self) -> Option<&v1::Header> {
        match &self.header {
            Ok(Header::V1(h)) => Some(h),
            _ => None,
        }
    }

    /// The Version Two header, if that is what this is.
    pub fn v2(&self) -> Option<&v2::Header> {
        match &self.header {
            Ok(Header::V2(h)) => Some(h),
            _ => None,
        }
    }

    /// Whether this is a Version One reverse-direction call of the peer's: an RDMA_MSG whose
    /// inline RPC message is a CALL (RFC 8167 5.1), where replies are expected.
    pub fn is_rpc_call(&self) -> bool {
        matches!(&self.rpc, Some(Ok(Rpc { kind: rpc::RpcKind::Call { .. }, .. })))
    }

    /// The payload bytes in `range` (a range a representation recorded).
    pub fn slice(&self, range: std::ops::Range<usize>) -> &[u8] {
        &self.bytes[range]
    }
}

impl fmt::Display for Frame {
    /// One line: the header, then the RPC header it carries (how it arrived, a Send With
    /// Invalidate, is for the caller to say).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.header {
            Ok(Header::V1(h)) => write!(f, "{h}")?,
            Ok(Header::V2(h)) => write!(f, "{h}")?,
            Err(Malformed { fixed: Some(x), error }) => {
                return write!(f, "xid={:#010x} vers={} credit={} proc={} ({error})", x.xid, x.vers, x.credit, x.proc_)
            }
            Err(Malformed { fixed: None, error }) => return write!(f, "{} bytes ({error})", self.bytes.len()),
        }
        match &self.rpc {
            Some(Ok(r)) => write!(f, " | {}", r.summary),
            Some(Err(e)) => write!(f, " | RPC: {e}"),
            None => Ok(()),
        }
    }
}
