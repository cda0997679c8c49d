//! Summaries of ONC RPC headers (RFC 5531).

use rpcrdma_codec::rpc::{AcceptStat, Rejected, ReplyBody, RpcHeader, RpcMessage};
use rpcrdma_codec::DecodeError;
use rpcrdma_codec::Encode;

pub fn summarize(bytes: &[u8]) -> Result<Vec<(String, String)>, DecodeError> {
    let m = RpcMessage::decode(bytes)?;
    let mut f: Vec<(String, String)> = Vec::new();
    let mut fact = |n: &str, v: String| f.push((n.to_string(), v));
    fact("rpc.xid", format!("{:#010x}", m.header.xid()));
    match m.header {
        RpcHeader::Call(c) => {
            fact("rpc.mtype", "CALL".into());
            fact("rpc.rpcvers", c.rpcvers.to_string());
            fact("rpc.prog", c.prog.to_string());
            fact("rpc.vers", c.vers.to_string());
            fact("rpc.proc", c.proc_.to_string());
            fact("rpc.cred.flavor", c.cred.flavor.0.to_string());
            fact("rpc.cred.length", c.cred.body.len().to_string());
            if let Some(sys) = c.cred.auth_sys() {
                let sys = sys?;
                fact("rpc.auth_sys.stamp", sys.stamp.to_string());
                fact("rpc.auth_sys.machinename", String::from_utf8_lossy(sys.machinename).into());
                fact("rpc.auth_sys.uid", sys.uid.to_string());
                fact("rpc.auth_sys.gid", sys.gid.to_string());
                fact("rpc.auth_sys.gids", sys.gids().len().to_string());
            }
            fact("rpc.verf.flavor", c.verf.flavor.0.to_string());
            fact("rpc.verf.length", c.verf.body.len().to_string());
        }
        RpcHeader::Reply(r) => {
            fact("rpc.mtype", "REPLY".into());
            match r.body {
                ReplyBody::Accepted { verf, stat } => {
                    fact("rpc.reply_stat", "MSG_ACCEPTED".into());
                    fact("rpc.verf.flavor", verf.flavor.0.to_string());
                    fact("rpc.verf.length", verf.body.len().to_string());
                    fact("rpc.accept_stat", stat.name().into());
                    if let AcceptStat::ProgMismatch { low, high } = stat {
                        fact("rpc.low", low.to_string());
                        fact("rpc.high", high.to_string());
                    }
                }
                ReplyBody::Denied(why) => {
                    fact("rpc.reply_stat", "MSG_DENIED".into());
                    fact("rpc.reject_stat", why.name().into());
                    match why {
                        Rejected::RpcMismatch { low, high } => {
                            fact("rpc.low", low.to_string());
                            fact("rpc.high", high.to_string());
                        }
                        Rejected::AuthError { stat } => fact("rpc.auth_stat", stat.0.to_string()),
                    }
                }
            }
        }
    }
    fact("rpc.body_offset", m.body_offset.to_string());
    Ok(f)
}

/// A bare RPC message vector: its facts, and the bytes the encoder writes back.
pub fn summarize_message(bytes: &[u8]) -> Result<super::Decoded, DecodeError> {
    let facts = summarize(bytes)?;
    let m = RpcMessage::decode(bytes)?;
    let mut out = m.header.encode_to_vec();
    out.extend_from_slice(m.body);
    Ok(super::Decoded { facts, violations: None, reencoded: Some(out) })
}
