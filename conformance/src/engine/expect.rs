//! Golden templates for replies: the fields a requirement fixes, the ones it leaves free, and
//! the list of acceptable forms. Each matcher returns the decoded reply or says what differs.

use rpcrdma_codec::check::{Role, Violations};
use rpcrdma_codec::rpc::{AcceptStat, ReplyBody, RpcHeader, RpcMessage};
use rpcrdma_codec::v1::{Body, ErrVers, ErrorBody, Message};
use rpcrdma_codec::Profile;

use super::Received;

/// A reply that decoded as a Version One header answering our XID.
#[derive(Debug, Clone)]
pub struct Reply {
    pub bytes: Vec<u8>,
    pub invalidated: Option<u32>,
}

impl Reply {
    /// The decoded message (it decoded when the Reply was made).
    pub fn message(&self) -> Message<'_> {
        Message::decode(&self.bytes, &Profile::default()).expect("checked when matched")
    }

    /// The RPC reply in an RDMA_MSG payload.
    pub fn rpc(&self) -> Result<RpcMessage<'_>, String> {
        let m = self.message();
        RpcMessage::decode(m.payload).map_err(|e| format!("the RPC reply does not decode: {e}"))
    }

    /// RFC 8166 violations of this reply as sent by a responder.
    pub fn violations(&self) -> Violations {
        Violations::of(&self.message(), Role::Reply)
    }
}

/// Any decodable Version One message answering `xid`.
pub fn reply_to(received: &Received, xid: u32) -> Result<Reply, String> {
    let Received::Message { bytes, invalidated } = received else {
        return Err(received.describe());
    };
    let m = Message::decode(bytes, &Profile::default()).map_err(|e| format!("a reply that does not decode: {e}"))?;
    if m.header.xid != xid {
        return Err(format!("a reply with rdma_xid {:#010x}, not {xid:#010x}", m.header.xid));
    }
    Ok(Reply { bytes: bytes.clone(), invalidated: *invalidated })
}

/// The non-zero credit grant every reply carries (RFC 8166 3.3.1).
pub fn credit_granted(r: &Reply) -> Result<u32, String> {
    match r.message().header.credit {
        0 => Err("rdma_credit 0 in a reply (the granted value MUST NOT be zero)".into()),
        n => Ok(n),
    }
}

/// An RDMA_ERROR with ERR_VERS echoing `xid`; rdma_vers echoes `sent_vers` (RFC 8166 4.5)
/// or, under RFC 5666 4.2, is a version the responder supports (returned as lax: true).
/// The range must contain 1 and be ordered.
pub fn err_vers(received: &Received, xid: u32, sent_vers: u32) -> Result<(Reply, bool), String> {
    let Received::Message { bytes, invalidated } = received else {
        return Err(received.describe());
    };
    let e = match ErrVers::decode(bytes) {
        Ok(Some(e)) => e,
        Ok(None) => {
            return Err(match Message::decode(bytes, &Profile::default()) {
                Ok(m) => format!("{} instead of RDMA_ERROR ERR_VERS", describe_body(&m.header.body)),
                Err(e) => format!("a reply that is not ERR_VERS and does not decode: {e}"),
            })
        }
        Err(e) => return Err(format!("an ERR_VERS reply that does not decode: {e}")),
    };
    if e.fixed.xid != xid {
        return Err(format!("ERR_VERS with rdma_xid {:#010x}, not {xid:#010x}", e.fixed.xid));
    }
    let lax = e.fixed.vers != sent_vers;
    if lax && e.fixed.vers != 1 {
        return Err(format!("rdma_vers {} is neither the request's {sent_vers} nor a supported version", e.fixed.vers));
    }
    if e.low > e.high {
        return Err(format!("ERR_VERS with rdma_vers_low {} > rdma_vers_high {}", e.low, e.high));
    }
    if !(e.low..=e.high).contains(&1) {
        return Err(format!("ERR_VERS range {}..{} leaves out version 1", e.low, e.high));
    }
    if e.fixed.credit == 0 {
        return Err("rdma_credit 0 in a reply (the granted value MUST NOT be zero)".into());
    }
    Ok((Reply { bytes: bytes.clone(), invalidated: *invalidated }, lax))
}

/// An RDMA_ERROR with ERR_CHUNK echoing `xid` and version 1.
pub fn err_chunk(received: &Received, xid: u32) -> Result<Reply, String> {
    let r = reply_to(received, xid)?;
    let m = r.message();
    match m.header.body {
        Body::Error(ErrorBody::Chunk) => {
            if m.header.vers != 1 {
                return Err(format!("ERR_CHUNK with rdma_vers {}", m.header.vers));
            }
            credit_granted(&r)?;
            Ok(r.clone())
        }
        other => Err(format!("{} instead of RDMA_ERROR ERR_CHUNK", describe_body(&other))),
    }
}

/// An RPC reply (RDMA_MSG, or RDMA_NOMSG through the reply chunk) answering `xid` with
/// MSG_ACCEPTED and the given accept_stat; returns the reply.
pub fn rpc_accepted(received: &Received, xid: u32, want: AcceptStat) -> Result<Reply, String> {
    let r = reply_to(received, xid)?;
    credit_granted(&r)?;
    let m = r.message();
    match m.header.body {
        Body::Msg(_) => {
            let rpc = r.rpc()?;
            check_accepted(&rpc.header, xid, want)?;
        }
        Body::NoMsg(_) => {} // the payload went through the reply chunk; the caller reads it
        other => return Err(format!("{} instead of an RPC reply", describe_body(&other))),
    }
    Ok(r)
}

/// Checks an RPC reply header.
pub fn check_accepted(h: &RpcHeader<'_>, xid: u32, want: AcceptStat) -> Result<(), String> {
    match h {
        RpcHeader::Reply(rep) if rep.xid == xid => match rep.body {
            ReplyBody::Accepted { stat, .. } if stat == want => Ok(()),
            ReplyBody::Accepted { stat, .. } => Err(format!("accept_stat {} instead of {}", stat.name(), want.name())),
            ReplyBody::Denied(why) => Err(format!("MSG_DENIED {} instead of {}", why.name(), want.name())),
        },
        RpcHeader::Reply(rep) => Err(format!("an RPC reply with xid {:#010x}", rep.xid)),
        RpcHeader::Call(_) => Err("an RPC call instead of a reply".into()),
    }
}

pub fn describe_body(b: &Body<'_>) -> String {
    match b {
        Body::Error(e) => format!("RDMA_ERROR {}", e.name().map_or_else(|| e.code().to_string(), str::to_string)),
        other => other.proc_().to_string(),
    }
}
