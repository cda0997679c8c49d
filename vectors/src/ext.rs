//! Summaries of RDMA_MSGP padded payloads, CCP messages and RDMA-CM private data.
//!
//! - `private-data`: the vector's bytes are the whole private-data buffer a CM handed over
//!   (8, 56 or 196 octets, or any other length). Facts come from `private_data::find` (an
//!   overrun is the vector's error) and `private_data::effective`.
//! - `ccp-call` / `ccp-reply`: the bytes are a whole Send buffer: an RDMA_MSG transport
//!   header followed by the RPC message carrying CONF_RDMA.
//! - `msgp-payload`: the bytes are a whole RDMA_MSGP Send buffer. The payload is an RPC
//!   call or reply header (whose own opaques must stay below the padding threshold) followed
//!   by one variable-length opaque item, padded per the message's rdma_align/rdma_thresh and
//!   the profile, as the first item of the arguments or results; anything after the item is
//!   counted in `msgp.trailing`.

use rpcrdma_codec::hex::Hex;

use super::format::Vector;
use super::Decoded;
use rpcrdma_codec::ccp;
use rpcrdma_codec::msgp::Padding;
use rpcrdma_codec::private_data::{self, Lookup};
use rpcrdma_codec::rpc::{RpcHeader, RpcMessage};
use rpcrdma_codec::v1::{field, Message};
use rpcrdma_codec::xdr::{Reader, Writer};
use rpcrdma_codec::{DecodeError, ErrorKind, Profile};

pub fn summarize(v: &Vector, profile: &Profile) -> Result<Decoded, DecodeError> {
    match v.kind.as_str() {
        "private-data" => private_data(v, profile),
        "ccp-call" => ccp_call(v, profile),
        "ccp-reply" => ccp_reply(v, profile),
        "msgp-payload" => msgp_payload(v, profile),
        other => panic!("{}: kind {other} is not an extension kind", v.name),
    }
}

fn private_data(v: &Vector, profile: &Profile) -> Result<Decoded, DecodeError> {
    let b = &v.bytes;
    let mut d = Decoded::default();
    d.fact("pd.buffer_length", b.len());
    let lookup = private_data::find(b, profile)?;
    let eff = private_data::effective(b, profile);
    d.fact("pd.status", eff.status);
    match lookup {
        Lookup::Absent => assert_eq!(eff.found_at, None, "{}", v.name),
        Lookup::UnrecognisedVersion { at, version } => {
            d.fact("pd.found_at", at);
            d.fact("pd.version", version);
        }
        Lookup::Found { at, data } => {
            d.fact("pd.found_at", at);
            d.fact("pd.version", data.version);
            d.fact("pd.reserved", format!("{:#04x}", data.reserved));
            d.fact("pd.remote_invalidation", data.remote_invalidation);
            d.fact("pd.send_size_code", data.send_size_code);
            d.fact("pd.receive_size_code", data.receive_size_code);
            d.fact("pd.send_size", data.send_size());
            d.fact("pd.receive_size", data.receive_size());
            let again = data.to_bytes();
            d.fact("pd.reencode_matches", again[..] == b[at..at + 8]);
            if at == 0 && b.len() == 8 {
                d.reencoded = Some(again.to_vec());
            }
        }
    }
    d.fact("pd.effective.send_size", eff.params.send_size());
    d.fact("pd.effective.receive_size", eff.params.receive_size());
    d.fact("pd.effective.remote_invalidation", eff.params.remote_invalidation);
    Ok(d)
}

fn header_facts(d: &mut Decoded, m: &Message<'_>) {
    let h = &m.header;
    d.fact("rdma_xid", format!("{:#010x}", h.xid));
    d.fact("rdma_vers", h.vers);
    d.fact("rdma_credit", h.credit);
    d.fact("rdma_proc", h.body.proc_());
    if let rpcrdma_codec::v1::Body::MsgP { align, thresh, .. } = h.body {
        d.fact("rdma_align", align);
        d.fact("rdma_thresh", thresh);
    }
    d.fact("payload_offset", m.payload_offset);
    d.fact("payload_length", m.payload.len());
}

/// The header and what `rest` writes after it, in a buffer of exactly `len` bytes.
fn reencode(m: &Message<'_>, len: usize, rest: impl FnOnce(&mut Writer<'_>)) -> Vec<u8> {
    let mut out = vec![0u8; len];
    let n = m.header.encode_into(&mut out).expect("header re-encodes");
    let mut w = Writer::new(&mut out[n..]);
    rest(&mut w);
    assert_eq!(n + w.len(), len, "the re-encoding has the length computed for it");
    out
}

fn ccp_call(v: &Vector, profile: &Profile) -> Result<Decoded, DecodeError> {
    let (m, call) = ccp::decode_call_message(&v.bytes, profile)?;
    let mut d = Decoded::default();
    header_facts(&mut d, &m);
    d.facts.extend(super::rpc::summarize(m.payload)?);
    let a = call.args;
    d.fact("config_rdma_req.maxcall_sendsize", a.maxcall_sendsize);
    d.fact("config_rdma_req.maxreply_sendsize", a.maxreply_sendsize);
    d.fact("config_rdma_req.maxrdmaread", a.maxrdmaread);
    assert_eq!(ccp::dispatch(&call.header), ccp::Dispatch::ConfRdma);
    let out = reencode(&m, m.header.encoded_len() + call.encoded_len(), |w| call.encode(w).expect("call re-encodes"));
    d.reencoded = Some(out);
    Ok(d)
}

fn ccp_reply(v: &Vector, profile: &Profile) -> Result<Decoded, DecodeError> {
    let (m, reply) = ccp::decode_reply_message(&v.bytes, profile)?;
    let mut d = Decoded::default();
    header_facts(&mut d, &m);
    d.facts.extend(super::rpc::summarize(m.payload)?);
    match reply.result {
        Some(r) => {
            d.fact("config_rdma_reply", "present");
            d.fact("config_rdma_reply.maxcall_sendsize", r.maxcall_sendsize);
            d.fact("config_rdma_reply.align", r.align);
            d.fact("config_rdma_reply.maxrdmaread", r.maxrdmaread);
        }
        None => d.fact("config_rdma_reply", "absent"),
    }
    let out =
        reencode(&m, m.header.encoded_len() + reply.encoded_len(), |w| reply.encode(w).expect("reply re-encodes"));
    d.reencoded = Some(out);
    Ok(d)
}

fn msgp_payload(v: &Vector, profile: &Profile) -> Result<Decoded, DecodeError> {
    let m = Message::decode(&v.bytes, profile)?;
    let Some(padding) = Padding::of_message(&m, profile) else {
        return Err(DecodeError::new(
            "rdma_proc",
            field::PROC,
            ErrorKind::Invalid { reason: "a msgp-payload vector is an RDMA_MSGP message" },
        ));
    };
    let mut d = Decoded::default();
    header_facts(&mut d, &m);
    let rpc = RpcMessage::decode_at(m.payload, m.payload_offset)?;
    let header_opaques: &[&[u8]] = match &rpc.header {
        RpcHeader::Call(c) => &[c.cred.body, c.verf.body],
        RpcHeader::Reply(r) => match &r.body {
            rpcrdma_codec::rpc::ReplyBody::Accepted { verf, .. } => &[verf.body],
            rpcrdma_codec::rpc::ReplyBody::Denied(_) => &[],
        },
    };
    if header_opaques.iter().any(|o| padding.applies(o.len() as u32)) {
        return Err(DecodeError::new(
            "cred.body",
            m.payload_offset,
            ErrorKind::Invalid { reason: "msgp-payload vectors keep RPC header opaques below rdma_thresh" },
        ));
    }
    d.facts.extend(super::rpc::summarize(m.payload)?);
    let base = m.payload_offset + rpc.body_offset;
    let mut r = Reader::with_base(rpc.body, base);
    let item = padding.read_opaque(&mut r, "msgp.item")?;
    d.fact("msgp.item_offset", item.item_offset);
    d.fact("msgp.length", item.length);
    d.fact("msgp.padded", padding.applies(item.length));
    d.fact("msgp.pad_length", item.pad.len());
    d.fact("msgp.pad_zero", item.pad_is_zero());
    d.fact("msgp.data_offset", item.data_offset);
    d.fact("msgp.data_offset_in_payload", item.data_offset - m.payload_offset);
    d.fact("msgp.data", if item.data.is_empty() { "empty".to_string() } else { Hex(item.data).to_string() });
    d.fact("msgp.trailing", r.remaining());
    if item.pad_is_zero() && r.is_empty() {
        // Zero pad and nothing after the item: the re-encoding is the input, byte for byte.
        d.reencoded = Some(reencode(&m, v.bytes.len(), |w| {
            rpc.header.encode(w).expect("RPC header re-encodes");
            padding.write_opaque(w, m.payload_offset, item.data).expect("item re-encodes");
        }));
    }
    Ok(d)
}
