//! What a matcher found instead of what it wanted, as a value; text only when a report
//! renders it (quinn's `InvalidFrame { ty, reason }` kept typed up to the edge).

use std::fmt;

use rpcrdma_codec::rpc::AcceptStat;
use rpcrdma_codec::DecodeError;

use rpcrdma_peers::transport::{TransportError, WcStatus};

/// A wait that ended without a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoMessage {
    Silence,
    Disconnected,
    SendFailed(WcStatus),
    RecvFailed(WcStatus),
}

impl fmt::Display for NoMessage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NoMessage::Silence => f.write_str("no reply before the deadline"),
            NoMessage::Disconnected => f.write_str("the peer disconnected"),
            NoMessage::SendFailed(s) => write!(f, "our Send failed: {}", s.name()),
            NoMessage::RecvFailed(s) => write!(f, "our receive failed: {}", s.name()),
        }
    }
}

/// Why a received message (or its absence) is not what a requirement asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mismatch {
    /// Connecting (or posting the receives of a new connection) failed.
    Connect(TransportError),
    /// No message came.
    NoMessage(NoMessage),
    /// The transport header did not decode.
    Undecodable(DecodeError),
    /// A message answering another XID; `form` names what it was.
    WrongXid { form: String, got: u32, want: u32 },
    /// Another kind of message than the one wanted (`RDMA_MSG instead of RDMA_ERROR ERR_CHUNK`).
    WrongBody { got: String, want: &'static str },
    /// rdma_credit 0 in a reply (RFC 8166 3.3.1).
    ZeroCredit,
    /// A reply with another rdma_vers than required.
    WrongVersion { form: &'static str, got: u32 },
    /// ERR_VERS whose rdma_vers is neither the request's nor a supported version.
    ErrVersVersion { got: u32, sent: u32 },
    /// ERR_VERS with rdma_vers_low > rdma_vers_high.
    ErrVersOrder { low: u32, high: u32 },
    /// ERR_VERS whose range leaves out version 1.
    ErrVersWithoutOne { low: u32, high: u32 },
    /// The RPC message did not decode.
    RpcUndecodable(DecodeError),
    /// No RPC message inline.
    NoRpc,
    /// MSG_ACCEPTED with another accept_stat.
    AcceptStat { got: AcceptStat, want: AcceptStat },
    /// MSG_DENIED.
    Denied { why: &'static str, want: AcceptStat },
    /// An RPC reply answering another XID.
    RpcXid { got: u32 },
    /// An RPC call where a reply belongs.
    RpcCall,
    /// Anything a check words itself.
    Other(String),
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Mismatch::Connect(e) => write!(f, "connect: {e}"),
            Mismatch::NoMessage(n) => write!(f, "{n}"),
            Mismatch::Undecodable(e) => write!(f, "a reply that does not decode: {e}"),
            Mismatch::WrongXid { form, got, want } => write!(f, "{form} with rdma_xid {got:#010x}, not {want:#010x}"),
            Mismatch::WrongBody { got, want } => write!(f, "{got} instead of {want}"),
            Mismatch::ZeroCredit => f.write_str("rdma_credit 0 in a reply (the granted value MUST NOT be zero)"),
            Mismatch::WrongVersion { form, got } => write!(f, "{form} with rdma_vers {got}"),
            Mismatch::ErrVersVersion { got, sent } => {
                write!(f, "rdma_vers {got} is neither the request's {sent} nor a supported version")
            }
            Mismatch::ErrVersOrder { low, high } => {
                write!(f, "ERR_VERS with rdma_vers_low {low} > rdma_vers_high {high}")
            }
            Mismatch::ErrVersWithoutOne { low, high } => write!(f, "ERR_VERS range {low}..{high} leaves out version 1"),
            Mismatch::RpcUndecodable(e) => write!(f, "the RPC reply does not decode: {e}"),
            Mismatch::NoRpc => f.write_str("the reply has no RPC payload inline"),
            Mismatch::AcceptStat { got, want } => write!(f, "accept_stat {} instead of {}", got.name(), want.name()),
            Mismatch::Denied { why, want } => write!(f, "MSG_DENIED {why} instead of {}", want.name()),
            Mismatch::RpcXid { got } => write!(f, "an RPC reply with xid {got:#010x}"),
            Mismatch::RpcCall => f.write_str("an RPC call instead of a reply"),
            Mismatch::Other(s) => f.write_str(s),
        }
    }
}

impl From<String> for Mismatch {
    fn from(s: String) -> Self {
        Mismatch::Other(s)
    }
}

impl From<&str> for Mismatch {
    fn from(s: &str) -> Self {
        Mismatch::Other(s.to_string())
    }
}
