//! The reverse direction on the responder's connection (RFC 8167): the upper layer's
//! reverse-direction calls (NFSv4.1 callbacks) framed and sent to the requester within the
//! reverse-direction credits it grants, and the requester's reverse-direction replies routed
//! back to the upper layer. The fault switches `reverse-*` bend each rule.

use std::collections::{HashMap, VecDeque};

use rpcrdma_codec::chunk::ReadSegment;
use rpcrdma_codec::rpc::{MsgType, RpcHeader, RpcMessage};
use rpcrdma_codec::v1::{Body, FixedFields, HeaderBuilder, Message};
use rpcrdma_codec::xdr::Encode;

use super::{Session, Stop};
use crate::observe::Observed;
use crate::transport::{Access, Region};

/// The reverse-direction credits assumed before the requester granted any: one, as in the
/// forward direction (RFC 8167 4.1: credits work the same way; RFC 8166 3.3.1).
pub const INITIAL_REVERSE_CREDITS: u32 = 1;

/// The reverse-direction credits our calls request (RFC 8167 5.1: "the number of requested
/// reverse-direction credits is placed in the rdma_credit field").
pub const REQUESTED_REVERSE_CREDITS: u32 = 8;

/// One connection's reverse-direction state.
#[derive(Debug)]
pub(crate) struct State {
    /// The reverse-direction credits the requester granted in its latest reverse reply,
    /// accounted apart from the forward ones (RFC 8167 4.1).
    granted: u32,
    /// Calls taken from the upper layer and not yet sent (waiting for a credit).
    queue: VecDeque<Vec<u8>>,
    /// The calls sent and not yet answered, by XID.
    outstanding: HashMap<u32, Outstanding>,
    /// Whether the connection's reverse-direction scenario (`reverse-burst`, ...) was played.
    scenario_played: bool,
    /// The upper layer's calls sent so far (`replay` names the n-th, from 1).
    sent: usize,
    /// Receives posted beyond the forward window for the replies to our calls (RFC 8167
    /// 4.3.2): as many as calls were ever outstanding at once.
    extra_receives: usize,
}

impl Default for State {
    fn default() -> Self {
        State {
            granted: INITIAL_REVERSE_CREDITS,
            queue: VecDeque::new(),
            outstanding: HashMap::new(),
            extra_receives: 0,
            scenario_played: false,
            sent: 0,
        }
    }
}

/// A reverse-direction call awaiting its reply.
#[derive(Debug)]
struct Outstanding {
    /// The whole message as sent (a reverse-direction scenario builds on the first).
    sent: Vec<u8>,
    /// The memory a Long call's read chunk exposes, until the reply.
    region: Option<Region>,
}

/// The RPC msg_type of an inline payload, when it has one (RFC 8167 4.1: the accompanying
/// RPC message's direction field tells a call from a reply).
pub fn payload_direction(payload: &[u8]) -> Option<MsgType> {
    payload.get(4..8).map(|b| MsgType(u32::from_be_bytes([b[0], b[1], b[2], b[3]])))
}

/// Whether a received Version One message is a reverse-direction reply: an RDMA_MSG whose
/// RPC message says REPLY. A responder receives forward calls and reverse replies on the
/// same receives and tells them apart by msg_type (RFC 8167 4.1, 5.2).
pub(super) fn is_reply(msg: &Message<'_>) -> bool {
    matches!(msg.header.body, Body::Msg(_)) && payload_direction(msg.payload) == Some(MsgType::REPLY)
}

/// Takes the upper layer's new reverse-direction calls and sends those the credits allow.
/// Called after each forward call is answered and while the connection is idle.
pub(super) fn pump(s: &mut Session<'_>) -> Result<(), Stop> {
    let taken = s.ulp.take_reverse_calls();
    s.reverse.queue.extend(taken);
    let over_credits = s.config.faults.reverse_call_over_credits;
    while !s.reverse.queue.is_empty() {
        // RFC 8167 4.1 (RFC 8166 3.3.1): no more calls outstanding than the reverse grant.
        if s.reverse.outstanding.len() >= s.reverse.granted as usize && !over_credits {
            break;
        }
        let call = s.reverse.queue.pop_front().expect("not empty");
        send_call(s, &call)?;
    }
    Ok(())
}

/// Frames and sends one reverse-direction call (RFC 8167 5.1).
fn send_call(s: &mut Session<'_>, call: &[u8]) -> Result<(), Stop> {
    let faults = s.config.faults.clone();
    // The upper layer hands whole RPC calls; anything else is its defect: the session stops.
    let Ok(RpcMessage { header: RpcHeader::Call(c), .. }) = RpcMessage::decode(call) else {
        return Err(Stop::Unsupported("a reverse-direction call that is not an RPC call"));
    };
    let mut rpc = call.to_vec();
    if faults.reverse_call_reply_type {
        rpc[4..8].copy_from_slice(&MsgType::REPLY.0.to_be_bytes());
    }
    // 5.1: the same XID in both headers, the connection's rdma_vers, our credit request.
    let xid = if faults.reverse_call_xid_mismatch { c.xid ^ 1 } else { c.xid };
    let vers = if faults.reverse_call_vers_2 { 2 } else { 1 };
    // RFC 8167 4.2: the reverse call inline threshold is the forward reply inline threshold.
    let short_len = HeaderBuilder::msg(xid, REQUESTED_REVERSE_CREDITS).encoded_len() + rpc.len();
    let long = faults.reverse_call_long || short_len > s.reply_inline;
    // The requester's reply arrives in a receive of ours: post it first (RFC 8167 4.3.2).
    reserve_receive(s)?;
    let mut region = None;
    let msg = if long {
        // RFC 8267 6.5.2 allows a Long call only when the back channel's ca_maxrequestsize
        // exceeds the inline threshold; the upper layer keeps its calls within it, so only
        // `reverse-call-long` (or a call too long for any Short message) gets here: an
        // RDMA_NOMSG with the whole call in a position-zero read chunk (RFC 8166 3.5.3).
        let r = s.conn.register(rpc.len() as u32, Access::READ).map_err(Stop::from)?;
        s.conn.write_local(&r, 0, &rpc).map_err(Stop::from)?;
        let seg = r.segment();
        let reads = [ReadSegment::new(0, seg.handle, seg.length, seg.offset)];
        region = Some(r);
        HeaderBuilder::nomsg(xid, REQUESTED_REVERSE_CREDITS).raw_vers(vers).read_list(&reads).encode_to_vec()
    } else {
        let mut out = HeaderBuilder::msg(xid, REQUESTED_REVERSE_CREDITS).raw_vers(vers).encode_to_vec();
        out.extend_from_slice(&rpc);
        out
    };
    s.reverse.outstanding.insert(c.xid, Outstanding { sent: msg.clone(), region });
    s.observe(Observed::ReverseCall { xid: c.xid });
    s.reverse.sent += 1;
    // `serve --fuzz` / `replay`: a mutated or recorded call in its place. A requester may
    // rightly drop it (RFC 8166 4.5) and never answer: it holds no reverse credit, so the
    // calls after it still go out (a late reply to it matches nothing and is discarded).
    let Some(replaced) = s.replace_reverse_call(s.reverse.sent, c.xid, &msg) else {
        return s.transmit(&msg, None);
    };
    let _ = end(s, c.xid);
    s.transmit(&replaced, None)
}

/// A reverse-direction reply arrived (RFC 8167 5.2): matched to its call by XID and handed
/// to the upper layer, its rdma_credit taken as the requester's new reverse grant (4.1).
/// One that matches no outstanding call, whose two XIDs differ, or that carries chunks we
/// never offered is discarded: nothing awaits it (RFC 8167 5.2 binds the requester's
/// framing; RFC 8166 4.5's rule for untrustworthy headers, discard).
pub(super) fn on_reply(s: &mut Session<'_>, fixed: &FixedFields, msg: &Message<'_>) -> Result<(), Stop> {
    let rpc_xid = msg.payload.get(..4).map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]));
    let decodes = matches!(RpcMessage::decode(msg.payload), Ok(RpcMessage { header: RpcHeader::Reply(_), .. }));
    let no_chunks = msg.header.body.chunks().is_some_and(|c| c.is_empty());
    let matched = rpc_xid == Some(fixed.xid) && decodes && no_chunks && s.reverse.outstanding.contains_key(&fixed.xid);
    s.observe(Observed::ReverseReply { xid: fixed.xid, matched });
    if s.config.faults.crash_on_unknown_reverse_xid && !s.reverse.outstanding.contains_key(&fixed.xid) {
        s.down.store(true, std::sync::atomic::Ordering::SeqCst);
        return Err(Stop::Unsupported("a reverse-direction reply of an unknown XID (crash-like fault)"));
    }
    if !matched {
        return Ok(());
    }
    let call = end(s, fixed.xid).expect("matched");
    s.reverse.granted = fixed.credit;
    s.ulp.reverse_reply(msg.payload);
    play_scenario(s, &call.sent, fixed.credit)?;
    pump(s)
}

/// Whether `data` is an RDMA_ERROR answering an outstanding reverse-direction call of ours
/// (ERR_CHUNK for chunks the requester does not take, RFC 8167 5.3); it ends that call
/// (RFC 8166 4.5: receipt completes the transaction). An ERR_CHUNK is 20 bytes, shorter
/// than 4.5's 28-byte "minimal size" header, yet the whole rpcrdma_error (RFC 8166 5.1's
/// XDR): the floor cannot apply to it, and the XID must match a call of ours.
pub(super) fn on_error(s: &mut Session<'_>, data: &[u8]) -> bool {
    const RDMA_ERROR: u32 = 4;
    let Ok(f) = FixedFields::decode(data) else { return false };
    if data.len() < 20 || f.vers != 1 || f.proc_ != RDMA_ERROR || !s.reverse.outstanding.contains_key(&f.xid) {
        return false;
    }
    s.observe(Observed::ReverseReply { xid: f.xid, matched: true });
    end(s, f.xid).is_some()
}

/// Ends an outstanding call, done with the memory its chunks exposed (RFC 8166 3.4.5: the
/// reply ends their use); None when no such call is outstanding.
fn end(s: &mut Session<'_>, xid: u32) -> Option<Outstanding> {
    let call = s.reverse.outstanding.remove(&xid)?;
    if let Some(r) = &call.region {
        let _ = s.conn.deregister(r);
    }
    Some(call)
}

/// Posts a receive for the reply to one more call, when more are outstanding than ever before
/// (RFC 8167 4.3.2: receives for the replies to each reverse-direction call we send).
fn reserve_receive(s: &mut Session<'_>) -> Result<(), Stop> {
    if s.reverse.outstanding.len() >= s.reverse.extra_receives {
        s.conn.post_recv(super::receive_buffer(s.config), 1).map_err(Stop::from)?;
        s.reverse.extra_receives += 1;
    }
    Ok(())
}

/// A reverse-direction scenario (`serve --scenario reverse-burst`, `reverse-chunks`,
/// `reverse-burst-reconnect`) plays once per connection, after the requester's first
/// reverse-direction reply, which answered `first` and granted `granted` credits: its
/// messages go out back to back, outstanding like the upper layer's calls (their replies
/// reach the upper layer, which ignores XIDs it never used).
fn play_scenario(s: &mut Session<'_>, first: &[u8], granted: u32) -> Result<(), Stop> {
    let Some(scenario) = s.config.scenario.filter(|sc| sc.reverse_direction()) else { return Ok(()) };
    if std::mem::replace(&mut s.reverse.scenario_played, true) {
        return Ok(());
    }
    let xid = first.get(..4).map_or(0, |b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]));
    s.observe(Observed::Injected { scenario: scenario.name(), xid });
    // `reverse-burst-reconnect`: the first such connection is closed, its receives flushed
    // (RFC 8167 4.3.1); the burst plays on a later one.
    if scenario.reconnects_first() && !s.played.swap(true, std::sync::atomic::Ordering::SeqCst) {
        return Err(Stop::Scenario(scenario.name()));
    }
    for m in scenario.reverse_calls(first, granted, &s.config.profile) {
        let xid = u32::from_be_bytes([m[0], m[1], m[2], m[3]]);
        reserve_receive(s)?;
        s.reverse.outstanding.insert(xid, Outstanding { sent: m.clone(), region: None });
        s.transmit(&m, None)?;
    }
    Ok(())
}

/// Whether a reverse-direction reply is turned into a forward call (`reverse-reply-answered`).
pub(super) fn routes_to_forward(s: &Session<'_>) -> bool {
    s.config.faults.reverse_reply_answered
}
