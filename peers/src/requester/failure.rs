//! What went wrong in a step of the reference requester's workload.

use std::fmt;

use rpcrdma_codec::DecodeError;

use crate::transport::{TransportError, WcStatus};

/// What went wrong in a step of the workload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// The transport failed: connecting, registering, posting.
    Transport(TransportError),
    /// A Send or receive completed with an error.
    SendFailed(WcStatus),
    ReceiveFailed(WcStatus),
    /// No reply before the deadline.
    NoReply,
    Disconnected,
    /// An RDMA_ERROR answered the call with this rdma_err (RFC 8166 4.5: a permanent error
    /// that completes the RPC transaction).
    RdmaError(u32),
    /// An RPC reply MSG_ACCEPTED with GARBAGE_ARGS (RFC 8166 4.5.2, RFC 8267 6.4.2): the
    /// server could not decode the call's arguments.
    GarbageArgs,
    /// A reply (or its RPC or NFS part) that does not decode.
    Undecodable(DecodeError),
    /// LOOKUP answered with this nfsstat3 (none: the results did not decode).
    Status(Option<u32>),
    /// Our own settings cannot be advertised (RFC 8797 sizes start at 1024).
    Settings,
    /// Not sent: the responder's CCP limits forbid it (RFC 5666 6.2).
    Refused(&'static str),
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Transport(e) => write!(f, "{e}"),
            Failure::SendFailed(s) => write!(f, "our Send failed: {}", s.name()),
            Failure::ReceiveFailed(s) => write!(f, "our receive failed: {}", s.name()),
            Failure::NoReply => f.write_str("no reply before the deadline"),
            Failure::Disconnected => f.write_str("disconnected"),
            Failure::RdmaError(e) => write!(f, "RDMA_ERROR with rdma_err {e}"),
            Failure::GarbageArgs => f.write_str("GARBAGE_ARGS"),
            Failure::Undecodable(e) => write!(f, "a reply that does not decode: {e}"),
            Failure::Status(s) => write!(f, "status {s:?}"),
            Failure::Settings => f.write_str("our sizes are not RFC 8797 sizes"),
            Failure::Refused(why) => write!(f, "not sent: {why}"),
        }
    }
}

/// The step of the workload that failed, and how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkloadError {
    pub step: &'static str,
    pub failure: Failure,
}

impl fmt::Display for WorkloadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.step, self.failure)
    }
}

impl std::error::Error for WorkloadError {}

/// A step's result.
pub(super) type Step<T> = Result<T, WorkloadError>;

pub(super) fn at<T>(step: &'static str, r: Result<T, impl Into<Failure>>) -> Step<T> {
    r.map_err(|e| WorkloadError { step, failure: e.into() })
}

impl From<TransportError> for Failure {
    fn from(e: TransportError) -> Self {
        Failure::Transport(e)
    }
}

impl From<DecodeError> for Failure {
    fn from(e: DecodeError) -> Self {
        Failure::Undecodable(e)
    }
}
