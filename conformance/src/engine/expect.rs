//! Golden templates for replies: the fields a requirement fixes, the ones it leaves free, and
//! the list of acceptable forms. Each matcher returns the frame it accepted, or the typed
//! [`Mismatch`] it found instead.

use rpcrdma_codec::rpc::AcceptStat;
use rpcrdma_codec::v1::ErrorCode;

use crate::engine::ctx::Received;
use crate::engine::mismatch::Mismatch;
use crate::frame::rpc::RpcKind;
use crate::frame::v1::{Body, Header};
use crate::frame::{Frame, Rpc};

/// The frame that came, or what came instead.
pub fn message(received: &Received) -> Result<&Frame, Mismatch> {
    match received {
        Received::Message(f) => Ok(f),
        Received::Nothing(n) => Err(Mismatch::NoMessage(*n)),
    }
}

/// Any decodable Version One message answering `xid`, with rdma_vers 1 (RFC 8166 4.2.2).
pub fn reply_to(received: &Received, xid: u32) -> Result<(&Frame, &Header), Mismatch> {
    let f = message(received)?;
    let h = match &f.header {
        Ok(crate::frame::Header::V1(h)) => h,
        Ok(crate::frame::Header::V2(h)) => return Err(Mismatch::WrongVersion { form: "a reply", got: h.vers }),
        Err(m) => return Err(Mismatch::Undecodable(m.error)),
    };
    if h.xid != xid {
        return Err(Mismatch::WrongXid { form: "a reply".into(), got: h.xid, want: xid });
    }
    if h.vers != 1 {
        return Err(Mismatch::WrongVersion { form: "a reply", got: h.vers });
    }
    Ok((f, h))
}

/// The non-zero credit grant every reply carries (RFC 8166 3.3.1).
pub fn credit_granted(h: &Header) -> Result<u32, Mismatch> {
    match h.credit {
        0 => Err(Mismatch::ZeroCredit),
        n => Ok(n),
    }
}

/// An ERR_VERS reply as RFC 8166 4.5 and 7 fix it for every version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ErrVersReply {
    pub vers: u32,
    pub credit: u32,
    pub low: u32,
    pub high: u32,
    /// rdma_vers is a version the responder supports rather than the request's echo (RFC
    /// 5666 4.2 behaviour): a SHOULD-level deviation.
    pub lax: bool,
}

/// An RDMA_ERROR with ERR_VERS echoing `xid`; rdma_vers echoes `sent_vers` (RFC 8166 4.5)
/// or, under RFC 5666 4.2, is a version the responder supports (`lax`). The range must
/// contain 1 and be ordered. RFC 8166 7 fixes this layout for every version, so it is read
/// from the fixed fields whatever rdma_vers says.
pub fn err_vers(received: &Received, xid: u32, sent_vers: u32) -> Result<ErrVersReply, Mismatch> {
    let f = message(received)?;
    let e = match f.err_vers {
        Some(e) => (
            e.fixed.xid,
            ErrVersReply { vers: e.fixed.vers, credit: e.fixed.credit, low: e.low, high: e.high, lax: false },
        ),
        None => {
            return Err(match &f.header {
                Ok(crate::frame::Header::V1(h)) => {
                    Mismatch::WrongBody { got: h.body.describe(), want: "RDMA_ERROR ERR_VERS" }
                }
                Ok(crate::frame::Header::V2(h)) => {
                    Mismatch::WrongBody { got: h.to_string(), want: "RDMA_ERROR ERR_VERS" }
                }
                Err(m) => Mismatch::Other(format!("a reply that is not ERR_VERS and does not decode: {}", m.error)),
            })
        }
    };
    if e.0 != xid {
        return Err(Mismatch::WrongXid { form: "ERR_VERS".into(), got: e.0, want: xid });
    }
    let lax = e.1.vers != sent_vers;
    if lax && e.1.vers != 1 {
        return Err(Mismatch::ErrVersVersion { got: e.1.vers, sent: sent_vers });
    }
    if e.1.low > e.1.high {
        return Err(Mismatch::ErrVersOrder { low: e.1.low, high: e.1.high });
    }
    if !(e.1.low..=e.1.high).contains(&1) {
        return Err(Mismatch::ErrVersWithoutOne { low: e.1.low, high: e.1.high });
    }
    if e.1.credit == 0 {
        return Err(Mismatch::ZeroCredit);
    }
    Ok(ErrVersReply { lax, ..e.1 })
}

/// An RDMA_ERROR with ERR_CHUNK echoing `xid` and version 1.
pub fn err_chunk(received: &Received, xid: u32) -> Result<(&Frame, &Header), Mismatch> {
    let (f, h) = reply_to(received, xid)?;
    match h.body {
        Body::Error { code: ErrorCode::ERR_CHUNK, .. } => {
            if h.vers != 1 {
                return Err(Mismatch::WrongVersion { form: "ERR_CHUNK", got: h.vers });
            }
            credit_granted(h)?;
            Ok((f, h))
        }
        ref other => Err(Mismatch::WrongBody { got: other.describe(), want: "RDMA_ERROR ERR_CHUNK" }),
    }
}

/// An RPC reply (RDMA_MSG, or RDMA_NOMSG through the reply chunk) answering `xid` with
/// MSG_ACCEPTED and the given accept_stat.
pub fn rpc_accepted(received: &Received, xid: u32, want: AcceptStat) -> Result<(&Frame, &Header), Mismatch> {
    let (f, h) = reply_to(received, xid)?;
    credit_granted(h)?;
    match h.body {
        Body::Msg { .. } => {
            check_accepted(rpc(f)?, xid, want)?;
        }
        Body::NoMsg { .. } => {} // the payload went through the reply chunk; the caller reads it
        ref other => return Err(Mismatch::WrongBody { got: other.describe(), want: "an RPC reply" }),
    }
    Ok((f, h))
}

/// The RPC reply an RDMA_MSG carried inline.
pub fn rpc(f: &Frame) -> Result<&Rpc, Mismatch> {
    match &f.rpc {
        Some(Ok(r)) => Ok(r),
        Some(Err(e)) => Err(Mismatch::RpcUndecodable(*e)),
        None => Err(Mismatch::NoRpc),
    }
}

/// The procedure's results: the body of the RPC reply an RDMA_MSG carried inline.
pub fn results(f: &Frame) -> Result<&[u8], Mismatch> {
    rpc(f).map(|r| f.slice(r.body.clone()))
}

/// Checks an RPC reply header.
pub fn check_accepted(r: &Rpc, xid: u32, want: AcceptStat) -> Result<(), Mismatch> {
    match &r.kind {
        RpcKind::Call { .. } => Err(Mismatch::RpcCall),
        _ if r.xid != xid => Err(Mismatch::RpcXid { got: r.xid }),
        RpcKind::Accepted(stat) if *stat == want => Ok(()),
        RpcKind::Accepted(stat) => Err(Mismatch::AcceptStat { got: *stat, want }),
        RpcKind::Denied(why) => Err(Mismatch::Denied { why, want }),
    }
}
