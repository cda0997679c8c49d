//! Summaries of Version One headers, with the RPC header of an RDMA_MSG payload.

use super::format::Vector;
use super::Decoded;
use rpcrdma_codec::check::{Role, Violations};
use rpcrdma_codec::v1::{Body, ErrorBody, Message};
use rpcrdma_codec::{DecodeError, Profile};

pub fn summarize_header(v: &Vector, profile: &Profile) -> Result<Decoded, DecodeError> {
    let m = Message::decode(&v.bytes, profile)?;
    let h = &m.header;
    let mut d = Decoded::default();
    d.fact("rdma_xid", format!("{:#010x}", h.xid));
    d.fact("rdma_vers", h.vers);
    d.fact("rdma_credit", h.credit);
    d.fact("rdma_proc", h.body.proc_().name());
    if let Body::MsgP { align, thresh, .. } = h.body {
        d.fact("rdma_align", align);
        d.fact("rdma_thresh", thresh);
    }
    if let Body::Error(e) = h.body {
        d.fact("rdma_err", e.name().map(str::to_string).unwrap_or_else(|| e.code().to_string()));
        match e {
            ErrorBody::Vers { low, high } => {
                d.fact("rdma_vers_low", low);
                d.fact("rdma_vers_high", high);
            }
            ErrorBody::Other { extra, .. } => d.fact("rdma_extra", super::format::hex(extra)),
            ErrorBody::Chunk => {}
        }
    }
    if let Some(c) = h.body.chunks() {
        d.fact("read_segments", c.reads.len());
        d.fact("read_chunks", c.reads.chunks().count());
        d.fact("position_zero", c.reads.position_zero().is_some());
        for (i, s) in c.reads.segments().enumerate() {
            let t = s.target;
            d.fact(format!("read[{i}]"), format!("{} {:#x} {} {:#x}", s.position, t.handle, t.length, t.offset));
        }
        d.fact("write_chunks", c.writes.len());
        for (i, w) in c.writes.chunks().enumerate() {
            d.fact(format!("write[{i}].segments"), w.segment_count());
            for (j, s) in w.segments().enumerate() {
                d.fact(format!("write[{i}][{j}]"), format!("{:#x} {} {:#x}", s.handle, s.length, s.offset));
            }
        }
        match c.reply {
            None => d.fact("reply", "absent"),
            Some(r) => {
                d.fact("reply", "present");
                d.fact("reply.segments", r.segment_count());
                for (j, s) in r.segments().enumerate() {
                    d.fact(format!("reply[{j}]"), format!("{:#x} {} {:#x}", s.handle, s.length, s.offset));
                }
            }
        }
    }
    d.fact("payload_offset", m.payload_offset);
    d.fact("payload_length", m.payload.len());
    if matches!(h.body, Body::Msg(_)) && !m.payload.is_empty() {
        match super::rpc::summarize(m.payload) {
            Ok(facts) => d.facts.extend(facts),
            Err(e) => d.fact("rpc.error", e),
        }
    }
    if let Some(role) = &v.role {
        let role = match role.as_str() {
            "call" => Role::Call,
            "reply" => Role::Reply,
            other => panic!("{}: role {other}", v.name),
        };
        let found = Violations::of(&m, role);
        d.violations = Some(found.iter().map(|x| x.rule.id.to_string()).collect());
    }
    let mut out = vec![0u8; v.bytes.len()];
    let n = h.encode_into(&mut out).expect("a decoded header re-encodes into a buffer of its size");
    out.truncate(n);
    out.extend_from_slice(m.payload);
    d.reencoded = Some(out);
    Ok(d)
}
