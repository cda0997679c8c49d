//! The owned representation of the ONC RPC message (RFC 5531) a frame carries inline.

use std::ops::Range;

use rpcrdma_codec::rpc::{AcceptStat, ReplyBody, RpcHeader, RpcMessage};
use rpcrdma_codec::DecodeError;

/// What the RPC header said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RpcKind {
    /// MSG_ACCEPTED with this accept_stat.
    Accepted(AcceptStat),
    /// MSG_DENIED; the reject reason's name.
    Denied(&'static str),
    /// An RPC call of this program, version and procedure.
    Call { prog: u32, vers: u32, proc_: u32 },
}

/// An RPC message, owned: its XID, what it said, and where its body (the procedure's
/// arguments or results) lies in the frame's bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rpc {
    pub xid: u32,
    pub kind: RpcKind,
    pub body: Range<usize>,
    /// The header's one-line decoding.
    pub summary: String,
}

impl Rpc {
    /// Decodes the RPC message in `bytes[payload]`.
    pub fn decode(bytes: &[u8], payload: Range<usize>) -> Result<Rpc, DecodeError> {
        let m = RpcMessage::decode(&bytes[payload.clone()])?;
        let body_start = payload.end - m.body.len();
        let kind = match m.header {
            RpcHeader::Reply(r) => match r.body {
                ReplyBody::Accepted { stat, .. } => RpcKind::Accepted(stat),
                ReplyBody::Denied(why) => RpcKind::Denied(why.name()),
            },
            RpcHeader::Call(c) => RpcKind::Call { prog: c.prog, vers: c.vers, proc_: c.proc_ },
        };
        Ok(Rpc { xid: m.header.xid(), kind, body: body_start..payload.end, summary: m.header.to_string() })
    }
}
