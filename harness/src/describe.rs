//! Turns decoded messages into one JSON tree whose field names are the specs' XDR names.
//! Both the JSON output and the readable text are rendered from this tree.

use rpcrdma_codec::check::{Role, Violations};
use rpcrdma_codec::chunk::{Segment, WriteChunk};
use rpcrdma_codec::hex::Hex;
use rpcrdma_codec::rpc::{AcceptStat, AuthFlavor, OpaqueAuth, Rejected, ReplyBody, RpcHeader, RpcMessage};
use rpcrdma_codec::v1::{Body, ErrorBody, Message};
use rpcrdma_codec::DecodeError;
use serde_json::{json, Map, Value};

/// A decode error as JSON: kind, field, offset and the sentence.
pub fn error(e: &DecodeError) -> Value {
    json!({
        "kind": e.kind.name(),
        "field": e.field,
        "offset": e.offset,
        "message": e.to_string(),
    })
}

fn segment(s: &Segment) -> Value {
    json!({ "handle": s.handle, "length": s.length, "offset": s.offset })
}

fn write_chunk(c: &WriteChunk<'_>) -> Value {
    json!({ "target": c.segments().map(|s| segment(&s)).collect::<Vec<_>>() })
}

/// A Version One transport header, with the RPC header of an RDMA_MSG payload and, when a
/// role is given, the RFC 8166 semantic check.
pub fn v1_message(m: &Message<'_>, role: Option<Role>) -> Value {
    let h = &m.header;
    let mut o = Map::new();
    o.insert("rdma_xid".into(), json!(h.xid));
    o.insert("rdma_vers".into(), json!(h.vers));
    o.insert("rdma_credit".into(), json!(h.credit));
    o.insert("rdma_proc".into(), json!(h.body.proc_().name()));
    if let Body::MsgP { align, thresh, .. } = h.body {
        o.insert("rdma_align".into(), json!(align));
        o.insert("rdma_thresh".into(), json!(thresh));
    }
    if let Some(c) = h.body.chunks() {
        let reads: Vec<Value> =
            c.reads.segments().map(|s| json!({ "position": s.position, "target": segment(&s.target) })).collect();
        o.insert("rdma_reads".into(), Value::Array(reads));
        let chunks: Vec<Value> = c
            .reads
            .chunks()
            .map(|rc| json!({ "position": rc.position, "segments": rc.segment_count(), "length": rc.length() }))
            .collect();
        o.insert("read_chunks".into(), Value::Array(chunks));
        o.insert("rdma_writes".into(), c.writes.chunks().map(|w| write_chunk(&w)).collect());
        o.insert("rdma_reply".into(), c.reply.as_ref().map_or(Value::Null, write_chunk));
    }
    if let Body::Error(e) = h.body {
        let mut err = Map::new();
        // A name, or the code in decimal when it has none: a string either way.
        err.insert("rdma_err".into(), e.name().map_or_else(|| json!(e.code().0.to_string()), |n| json!(n)));
        match e {
            ErrorBody::Vers { low, high } => {
                err.insert("rdma_vers_low".into(), json!(low));
                err.insert("rdma_vers_high".into(), json!(high));
            }
            ErrorBody::Other { extra, .. } => {
                err.insert("rdma_extra".into(), json!(Hex(extra).to_string()));
            }
            ErrorBody::Chunk => {}
        }
        o.insert("rdma_error".into(), Value::Object(err));
    }
    o.insert("payload_offset".into(), json!(m.payload_offset));
    o.insert("payload_length".into(), json!(m.payload.len()));
    if matches!(h.body, Body::Msg(_)) && !m.payload.is_empty() {
        o.insert(
            "rpc".into(),
            match RpcMessage::decode_at(m.payload, m.payload_offset) {
                Ok(r) => rpc_message(&r),
                Err(e) => json!({ "error": error(&e) }),
            },
        );
    }
    if let Some(role) = role {
        let v = Violations::of(m, role);
        let list: Vec<Value> = v
            .iter()
            .map(|x| {
                json!({
                    "id": x.rule.id,
                    "key_word": x.rule.key_word.as_str(),
                    "requirement": x.rule.requirement,
                    "value": x.value,
                    "offset": x.offset,
                })
            })
            .collect();
        o.insert("violations".into(), Value::Array(list));
    }
    Value::Object(o)
}

fn flavor_name(f: AuthFlavor) -> Value {
    match f {
        AuthFlavor::AUTH_NONE => json!("AUTH_NONE"),
        AuthFlavor::AUTH_SYS => json!("AUTH_SYS"),
        AuthFlavor::AUTH_SHORT => json!("AUTH_SHORT"),
        AuthFlavor::AUTH_DH => json!("AUTH_DH"),
        AuthFlavor::RPCSEC_GSS => json!("RPCSEC_GSS"),
        // A string either way: the name, or the number in decimal when it has none.
        other => json!(other.0.to_string()),
    }
}

fn auth(a: &OpaqueAuth<'_>) -> Value {
    let mut o = Map::new();
    o.insert("flavor".into(), flavor_name(a.flavor));
    o.insert("length".into(), json!(a.body.len()));
    match a.auth_sys() {
        Some(Ok(s)) => {
            o.insert("stamp".into(), json!(s.stamp));
            o.insert("machinename".into(), json!(String::from_utf8_lossy(s.machinename)));
            o.insert("uid".into(), json!(s.uid));
            o.insert("gid".into(), json!(s.gid));
            o.insert("gids".into(), json!(s.gids().collect::<Vec<_>>()));
        }
        Some(Err(e)) => {
            o.insert("error".into(), error(&e));
        }
        None if !a.body.is_empty() => {
            o.insert("body".into(), json!(Hex(a.body).to_string()));
        }
        None => {}
    }
    Value::Object(o)
}

/// An ONC RPC header (RFC 5531 9) with RFC 5531's field names.
pub fn rpc_message(m: &RpcMessage<'_>) -> Value {
    let mut o = Map::new();
    o.insert("xid".into(), json!(m.header.xid()));
    match &m.header {
        RpcHeader::Call(c) => {
            o.insert("mtype".into(), json!("CALL"));
            o.insert("rpcvers".into(), json!(c.rpcvers));
            o.insert("prog".into(), json!(c.prog));
            o.insert("vers".into(), json!(c.vers));
            o.insert("proc".into(), json!(c.proc_));
            o.insert("cred".into(), auth(&c.cred));
            o.insert("verf".into(), auth(&c.verf));
        }
        RpcHeader::Reply(r) => {
            o.insert("mtype".into(), json!("REPLY"));
            match r.body {
                ReplyBody::Accepted { verf, stat } => {
                    o.insert("reply_stat".into(), json!("MSG_ACCEPTED"));
                    o.insert("verf".into(), auth(&verf));
                    o.insert("accept_stat".into(), json!(stat.name()));
                    if let AcceptStat::ProgMismatch { low, high } = stat {
                        o.insert("mismatch_info".into(), json!({ "low": low, "high": high }));
                    }
                }
                ReplyBody::Denied(why) => {
                    o.insert("reply_stat".into(), json!("MSG_DENIED"));
                    o.insert("reject_stat".into(), json!(why.name()));
                    match why {
                        Rejected::RpcMismatch { low, high } => {
                            o.insert("mismatch_info".into(), json!({ "low": low, "high": high }));
                        }
                        Rejected::AuthError { stat } => {
                            o.insert("auth_stat".into(), json!(stat.0));
                        }
                    }
                }
            }
        }
    }
    o.insert("body_offset".into(), json!(m.body_offset));
    o.insert("body_length".into(), json!(m.body.len()));
    Value::Object(o)
}
