//! Frames: every message received from a peer, decoded once at the boundary into an owned,
//! typed representation kept beside its bytes (smoltcp's `Repr`, h2's `Frame`). Checks and
//! matchers look at frames, never at bytes they decode again.

pub mod rpc;
pub mod v1;
pub mod v2;

use std::cell::Cell;
use std::fmt;

use rpcrdma_codec::check::Role;
use rpcrdma_codec::v1::{ErrVers, FixedFields, Proc as V1Proc};
use rpcrdma_codec::v2::Proc as V2Proc;
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
    /// Decodes `bytes`, sent by a peer in `role`, once, under the run's `profile`: Version
    /// Two when rdma_vers says 2, else Version One.
    pub fn decode(bytes: Vec<u8>, invalidated: Option<u32>, role: Role, profile: &Profile) -> Frame {
        DECODES.with(|d| d.set(d.get() + 1));
        let fixed = FixedFields::decode(&bytes).ok();
        let decoded = match fixed {
            Some(f) if f.vers == rpcrdma_codec::v2::VERSION => {
                v2::Header::decode(&bytes, profile).map(|(h, payload)| (Header::V2(h), payload))
            }
            _ => v1::Header::decode(&bytes, profile, role).map(|(h, payload)| (Header::V1(h), payload)),
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

    /// Whether the RPC message this carries decoded and is a CALL. The direction is that of
    /// the frame's sender: a requester's forward-direction call, or a reverse-direction call
    /// of a responder's (RFC 8167 4.1), which may carry a forward XID (2.4.1).
    pub fn is_rpc_call(&self) -> bool {
        matches!(&self.rpc, Some(Ok(Rpc { kind: rpc::RpcKind::Call { .. }, .. })))
    }

    /// Whether rdma_proc (read even when the rest did not decode) names a procedure that
    /// conveys an RPC message and so expects an answer: RDMA_MSG or RDMA_NOMSG (RFC 8166
    /// 4.2.4), in Version Two RDMA2_MSG or RDMA2_NOMSG (v2-01 4.2.1), not RDMA_ERROR or the
    /// one-way RDMA2_OPTIONAL.
    pub fn carries_rpc_message(&self) -> bool {
        self.fixed().is_some_and(|x| match x.vers {
            rpcrdma_codec::v2::VERSION => matches!(V2Proc(x.proc_), V2Proc::RDMA2_MSG | V2Proc::RDMA2_NOMSG),
            _ => matches!(V1Proc(x.proc_), V1Proc::RDMA_MSG | V1Proc::RDMA_NOMSG),
        })
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

#[cfg(test)]
mod tests {
    use super::*;
    use rpcrdma_codec::profile::ErrorArm;
    use rpcrdma_codec::v1::RFC5666_EXTRA_LEN;

    fn words(w: &[u32]) -> Vec<u8> {
        w.iter().flat_map(|x| x.to_be_bytes()).collect()
    }

    // RDMA_ERROR with rdma_err 3, then RFC 5666 4.3's `rdma_extra[8]`: an XDR error under
    // RFC 8166 4.1.2 (no default arm), a whole message under the RFC 5666 arm. The frame
    // follows the profile it is given.
    #[test]
    fn the_frame_is_decoded_under_the_profile_given() {
        let mut w = vec![7, 1, 3, 4, 3];
        w.extend([0; RFC5666_EXTRA_LEN / 4]);
        let bytes = words(&w);
        let rfc8166 = Frame::decode(bytes.clone(), None, Role::Reply, &Profile::default());
        assert!(rfc8166.header.is_err(), "{rfc8166}");
        let rfc5666 = Profile { error_arm: ErrorArm::Rfc5666, ..Profile::default() };
        let f = Frame::decode(bytes, None, Role::Reply, &rfc5666);
        assert!(matches!(f.v1().map(|h| &h.body), Some(v1::Body::Error { .. })), "{f}");
    }

    // RDMA_MSG and RDMA_NOMSG carry an RPC message (RFC 8166 4.2.4), read from rdma_proc even
    // when the rest does not decode; the other procedures, and Version Two's RDMA2_OPTIONAL
    // (5), do not.
    #[test]
    fn only_msg_and_nomsg_carry_an_rpc_message() {
        let p = Profile::default();
        let carries = |vers: u32, proc_: u32| {
            Frame::decode(words(&[7, vers, 1, proc_, 0xffff_ffff]), None, Role::Call, &p).carries_rpc_message()
        };
        for vers in [1, 2] {
            assert!(carries(vers, 0) && carries(vers, 1), "version {vers}");
            assert!(!carries(vers, 4) && !carries(vers, 5), "version {vers}");
        }
        assert!(!carries(1, 2) && !carries(1, 3));
        let short = Frame::decode(words(&[7, 1, 1]), None, Role::Call, &p);
        assert!(!short.carries_rpc_message());
    }
}
