//! Summaries of Version One headers, with the RPC header of an RDMA_MSG payload.

use super::format::Vector;
use super::Decoded;
use rpcrdma_codec::check::{Role, Violations};
use rpcrdma_codec::chunk::{ChunkLists, Segment};
use rpcrdma_codec::v1::{Body, ErrorBody, Message};
use rpcrdma_codec::{DecodeError, Encode, Profile};

pub fn summarize_header(v: &Vector, profile: &Profile) -> Result<Decoded, DecodeError> {
    let m = Message::decode(&v.bytes, profile)?;
    let h = &m.header;
    let mut d = Decoded::default();
    d.fact("rdma_xid", format!("{:#010x}", h.xid));
    d.fact("rdma_vers", h.vers);
    d.fact("rdma_credit", h.credit);
    d.fact("rdma_proc", h.body.proc_());
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
            ErrorBody::Other { extra, .. } => d.fact("rdma_extra", rpcrdma_codec::hex::Hex(extra).to_string()),
            ErrorBody::Chunk => {}
        }
    }
    if let Some(c) = h.body.chunks() {
        chunk_facts(&mut d, c);
    }
    let role = v.role.as_deref().map(|r| role(&v.name, r));
    let violations = role.map(|r| Violations::of(&m, r).iter().map(|x| x.rule.id.to_string()).collect());
    finish(&mut d, h, m.payload_offset, m.payload, matches!(h.body, Body::Msg(_)), violations);
    Ok(d)
}

/// The role a vector names.
pub(crate) fn role(vector: &str, name: &str) -> Role {
    match name {
        "call" => Role::Call,
        "reply" => Role::Reply,
        other => panic!("{vector}: role {other}"),
    }
}

/// The read list, write list and reply chunk, one fact per segment.
pub(crate) fn chunk_facts(d: &mut Decoded, c: &ChunkLists<'_>) {
    let seg = |s: &Segment| format!("{:#x} {} {:#x}", s.handle, s.length, s.offset);
    d.fact("read_segments", c.reads.len());
    d.fact("read_chunks", c.reads.chunks().count());
    d.fact("position_zero", c.reads.position_zero().is_some());
    for (i, s) in c.reads.segments().enumerate() {
        d.fact(format!("read[{i}]"), format!("{} {}", s.position, seg(&s.target)));
    }
    d.fact("write_chunks", c.writes.len());
    for (i, w) in c.writes.chunks().enumerate() {
        d.fact(format!("write[{i}].segments"), w.segment_count());
        for (j, s) in w.segments().enumerate() {
            d.fact(format!("write[{i}][{j}]"), seg(&s));
        }
    }
    match c.reply {
        None => d.fact("reply", "absent"),
        Some(r) => {
            d.fact("reply", "present");
            d.fact("reply.segments", r.segment_count());
            for (j, s) in r.segments().enumerate() {
                d.fact(format!("reply[{j}]"), seg(&s));
            }
        }
    }
}

/// What every header family ends with: where the payload is, the RPC header of a message
/// payload, the semantic-check violations, and the bytes the encoder writes back.
pub(crate) fn finish(
    d: &mut Decoded,
    header: &impl Encode,
    payload_offset: usize,
    payload: &[u8],
    carries_rpc: bool,
    violations: Option<Vec<String>>,
) {
    d.fact("payload_offset", payload_offset);
    d.fact("payload_length", payload.len());
    if carries_rpc && !payload.is_empty() {
        match super::rpc::summarize(payload) {
            Ok(facts) => d.facts.extend(facts),
            Err(e) => d.fact("rpc.error", e),
        }
    }
    d.violations = violations;
    let mut out = header.encode_to_vec();
    out.extend_from_slice(payload);
    d.reencoded = Some(out);
}
