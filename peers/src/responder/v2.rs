//! Version Two (draft-cel-nfsv4-rpcrdma-version-two-01) in the reference responder:
//! RDMA2_MSG / RDMA2_NOMSG served like Version One with a Version Two header, RDMA2_ERROR,
//! and the RDMA2_OPTIONAL operations of xcharext-02 and rtrext-03. The envelope, error
//! numbering, rtrext opttypes, xcharext ids and subset bits follow the configured profile
//! (defaults: the -01 envelope and codes, rtrext opttypes 5..8, xcharext-02 ids, LSB-first).
//!
//! A reply too long for the requester's receive buffers, to a call sent with ROPT_XMTREQ, goes
//! in a transmission group (ROPT_XMTRESP, then ROPT_XMTCONTs) when the requester reserved
//! receives for all of its transmissions (rtrext-03 5.2: optxrq_rsbuf).
//!
//! Not implemented: sending ROPT_INITXCH / ROPT_REQXCH / ROPT_UPDXCH ourselves, pending
//! (asynchronous) characteristic changes, and data placement in rtrext (a non-empty
//! optxrq_dp gets RDMA2_ERR_BAD_HEADER; optxrq_rsd is ignored).

use rpcrdma_codec::check::{Role, Violations};
use rpcrdma_codec::chunk::{ChunkLists, Segment};
use rpcrdma_codec::rtrext::{self, OpKind, OptrDetail, OptrErr, OptrInfo, XmsId, XmtCont, XmtResp};
use rpcrdma_codec::v1;
use rpcrdma_codec::v2::{Body, Chunks, ErrorBody, ErrorInfo, HeaderBuilder, Message, MsgType, OptInfo, Proc};
use rpcrdma_codec::xcharext::{self, BkReqSup, Characteristic, RespXch, XcharSubset};
use rpcrdma_codec::xdr::Array;

use rpcrdma_codec::xdr::Encode;

use std::sync::atomic::Ordering;

use super::{Framing, Scenario, Session, Stop};
use crate::observe::Observed;

/// Per-connection Version Two state.
#[derive(Debug, Default)]
pub(crate) struct State {
    /// The requester's characteristics as last reported (xcharext-02 4.1, 4.4).
    pub(crate) peer_rbsiz: Option<u32>,
    pub(crate) peer_reqreminv: Option<bool>,
    pub(crate) peer_brs: Option<BkReqSup>,
    /// Our Receive Buffer Size as last agreed through ROPT_REQXCH.
    pub(crate) own_rbsiz: Option<u32>,
    /// A request transmission group being received (rtrext-03 4.2).
    group: Option<Group>,
    /// Set by the first Version Two message: the version is agreed (v2-01 5.1).
    negotiated: bool,
    /// optxrq_rsbuf of the call being served: receives reserved for its reply's group.
    rsbuf: u32,
    /// Continuations held back by `v2-group-interleaved`, sent after the next message.
    deferred: Vec<Vec<u8>>,
    /// The XID of the backward-direction call `v2-backward-call` made, until its reply.
    backward: Option<u32>,
}

#[derive(Debug)]
struct Group {
    xid: u32,
    count: u32,
    /// The optxc_xnum expected next (the ROPT_XMTREQ is 0, wire notes R16).
    next: u32,
    /// The ROPT_XMTREQ's optxrq_rsbuf.
    rsbuf: u32,
    payload: Vec<u8>,
}

/// The Version Two default inline threshold (v2-01 2.3).
const V2_INLINE: usize = 4096;

/// How `v2-negotiation-closes` and `v2-rbsiz-change-closes` end a session.
const THRESHOLD_CHANGE: Stop = Stop::Unsupported("an inline threshold change (a fault closes the connection)");

/// Handles one Version Two message; Err means the connection is unusable.
pub(crate) fn handle(s: &mut Session<'_>, data: &[u8]) -> Result<(), Stop> {
    if !s.v2.negotiated {
        s.v2.negotiated = true;
        // v2-01 5.1: "both peers use the default inline threshold value for RPC-over-RDMA
        // Version Two connections (4096 bytes)", until xcharext reports another (record).
        if !s.config.faults.v2_v1_inline_threshold {
            let v2_inline = (s.config.send_size as usize).min(V2_INLINE);
            if v2_inline != s.reply_inline && s.config.faults.v2_negotiation_closes {
                return Err(THRESHOLD_CHANGE);
            }
            s.reply_inline = v2_inline;
        }
    }
    let deferred = std::mem::take(&mut s.v2.deferred);
    let r = handle_one(s, data);
    for msg in deferred {
        s.send(&msg, None)?;
    }
    r
}

fn handle_one(s: &mut Session<'_>, data: &[u8]) -> Result<(), Stop> {
    let xid = u32::from_be_bytes([data[0], data[1], data[2], data[3]]);
    let proc_ = data.get(12..16).map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]));
    // RFC 8166 4.2.4 via v2-01 4.2.3: a Responder MUST silently discard RDMA_ERROR.
    if proc_ == Some(Proc::RDMA2_ERROR.0) {
        return if s.config.faults.v2_answer_error { send_bad_header(s, xid) } else { Ok(()) };
    }
    if s.config.faults.v2_inline_1024 && data.len() > 1024 {
        return Ok(());
    }
    let p = s.config.profile;
    let msg = match Message::decode(data, &p) {
        Ok(m) => m,
        Err(_) if s.config.faults.v2_undecodable_optional_answered && proc_ == Some(Proc::RDMA2_OPTIONAL.0) => {
            let order = p.subset_bit_order;
            let empty = XcharSubset::new(&[], order);
            let resp = RespXch { done: empty, rej: empty, pend: empty };
            return send_optional(s, xid, OptInfo::Xchar(xcharext::Op::RespXch(resp)));
        }
        Err(_) => {
            s.v2.group = None;
            // -02 on: an rdma_proc not recognized is RDMA2_ERR_INVAL_PROC (wire notes 1.6).
            if proc_.is_some_and(|p| !Proc(p).is_known()) {
                return send_rejection(s, xid, ErrorBody::unknown_proc(p.v2_error_numbering));
            }
            return send_bad_header(s, xid);
        }
    };
    if s.v2.group.is_some() && !is_cont(&msg) {
        // rtrext-03 4.2: a group "must be received in order without any intervening message".
        let g = s.v2.group.take().expect("checked");
        let (which, expect, current) = match &msg.header.body {
            Body::Optional(o) => (OptrErr::OPTRERR_BADOMT, OpKind::XmtCont.opttype(p.rtrext_opttypes), o.opttype),
            b => (OptrErr::OPTRERR_BADHMT, Proc::RDMA2_OPTIONAL.0, b.proc_().0),
        };
        let bad = XmsId { xid, dir: MsgType::CALL, seq: 0 };
        report(s, bad, Some(lead(&g)), OptrInfo { which, detail: OptrDetail::ExpCur { expect, current } })?;
    }
    match msg.header.body {
        Body::Error(_) => Ok(()),
        Body::Msg(c) | Body::NoMsg(c) => serve(s, &msg, c),
        Body::Optional(o) => match o.info {
            // v2-01 3.1: an unknown opttype MUST get RDMA2_ERR_INVAL_OPTION.
            OptInfo::Raw(_) if s.config.faults.v2_no_inval_option => Ok(()),
            OptInfo::Raw(_) => send_error(s, xid, ErrorBody::InvalOption),
            OptInfo::Xchar(op) => xchar(s, xid, op),
            OptInfo::Rtr(op) => rtr(s, &msg, o.dir, op),
        },
    }
}

fn is_cont(msg: &Message<'_>) -> bool {
    matches!(&msg.header.body, Body::Optional(o) if matches!(o.info, OptInfo::Rtr(rtrext::Op::XmtCont(_))))
}

/// RDMA2_MSG / RDMA2_NOMSG: the Version One rules for the lists, the Version Two ones for
/// the envelope, then the Version One serving path.
fn serve(s: &mut Session<'_>, msg: &Message<'_>, c: Chunks<'_>) -> Result<(), Stop> {
    let xid = msg.header.xid;
    let nomsg = matches!(msg.header.body, Body::NoMsg(_));
    // The reply to the backward call of `v2-backward-call`: taken (no upper layer awaits it).
    if c.direction.unwrap_or(MsgType::REPLY) == MsgType::REPLY && s.v2.backward == Some(xid) {
        s.v2.backward = None;
        return Ok(());
    }
    // Otherwise we make no backward-direction calls, so a REPLY answers nothing (v2-01 4.2.2).
    // The -00 envelope has no rdma_direction: every message but that reply is a call.
    if c.direction.unwrap_or(MsgType::CALL) != MsgType::CALL || !rpcrdma_codec::v2::check(msg, Role::Call).is_empty() {
        return send_bad_header(s, xid);
    }
    let as_v1 = v1::Message {
        header: v1::Header {
            xid,
            vers: 1,
            credit: msg.header.credit,
            body: if nomsg { v1::Body::NoMsg(c.lists) } else { v1::Body::Msg(c.lists) },
        },
        payload_offset: msg.payload_offset,
        payload: msg.payload,
    };
    if Violations::of(&as_v1, Role::Call).iter().any(|v| !s.config.faults.tolerates(v.rule)) {
        return send_bad_header(s, xid);
    }
    if let Some(scenario) = s.config.scenario {
        if !nomsg && scenario.targets_v2(msg.payload) && !s.played.swap(true, Ordering::SeqCst) {
            s.observe(Observed::Injected { scenario: scenario.name(), xid });
            s.v2.backward = Some(Scenario::BACKWARD_XID);
            s.send(&Scenario::backward_call(s.config.profile.v2_envelope), None)?;
        }
    }
    s.serve_call(xid, &c.lists, nomsg, msg.payload, Framing::V2)
}

/// A Version Two reply header (RDMA2_MSG / RDMA2_NOMSG, or ROPT_XMTRESP).
#[allow(clippy::too_many_arguments)]
pub(crate) fn reply_header(
    s: &Session<'_>,
    framing: Framing,
    nomsg: bool,
    xid: u32,
    credit: u32,
    writes: &[&[Segment]],
    reply: Option<&[Segment]>,
    payload_len: usize,
) -> Vec<u8> {
    let dir = if s.config.faults.v2_wrong_direction { MsgType::CALL } else { MsgType::REPLY };
    if framing == Framing::V2Xmt && reply.is_none() && writes.is_empty() {
        // rtrext-03 9.3: one transmission holding the whole payload stream.
        let op = rtrext::Op::XmtResp(XmtResp { dp: Array::empty(), count: 1, pslen: payload_len as u32 });
        let opttype = OpKind::XmtResp.opttype(s.config.profile.rtrext_opttypes);
        return HeaderBuilder::optional(xid, credit, dir, opttype, OptInfo::Rtr(op))
            .envelope(s.config.profile.v2_envelope)
            .encode_to_vec();
    }
    let mut b = if nomsg { HeaderBuilder::nomsg(xid, credit, dir) } else { HeaderBuilder::msg(xid, credit, dir) };
    b = b.write_list(writes);
    if let Some(r) = reply {
        b = b.reply_chunk(r);
    }
    b.envelope(s.config.profile.v2_envelope).encode_to_vec()
}

/// RDMA2_ERROR with `body` (numbered by the profile), echoing rdma_xid and rdma_vers 2.
pub(crate) fn send_error(s: &mut Session<'_>, xid: u32, body: ErrorBody) -> Result<(), Stop> {
    let e = ErrorInfo::new(body, s.config.profile.v2_error_numbering)
        .ok_or(Stop::Unsupported("an error code this numbering lacks"))?;
    s.send(&HeaderBuilder::error(xid, s.grant(), e).encode_to_vec(), None)
}

/// RDMA2_ERR_BAD_HEADER: the Version Two ERR_CHUNK (v2-01 4.2.3); RDMA2_ERR_BAD_XDR, its
/// successor, under the -02 and -04 numberings (wire notes 1.6).
pub(crate) fn send_bad_header(s: &mut Session<'_>, xid: u32) -> Result<(), Stop> {
    send_rejection(s, xid, ErrorBody::unparsable(s.config.profile.v2_error_numbering))
}

/// A header rejected with `body`, unless `v2-no-bad-header` keeps quiet.
fn send_rejection(s: &mut Session<'_>, xid: u32, body: ErrorBody) -> Result<(), Stop> {
    if s.config.faults.v2_no_bad_header {
        return Ok(());
    }
    send_error(s, xid, body)
}

/// Sends an RDMA2_OPTIONAL with no payload; a responder sets rdma_optdir REPLY (v2-01 4.2.2).
fn send_optional(s: &mut Session<'_>, xid: u32, info: OptInfo<'_>) -> Result<(), Stop> {
    let opttype = match &info {
        OptInfo::Xchar(op) => op.opttype(),
        OptInfo::Rtr(op) => op.kind().opttype(s.config.profile.rtrext_opttypes),
        OptInfo::Raw(_) => return Err(Stop::Unsupported("an optional operation of unknown opttype")),
    };
    let b = HeaderBuilder::optional(xid, s.grant(), MsgType::REPLY, opttype, info);
    s.send(&b.envelope(s.config.profile.v2_envelope).encode_to_vec(), None)
}

// ---------------------------------------------------------------------------------------------
// xcharext-02

fn xchar(s: &mut Session<'_>, xid: u32, op: xcharext::Op<'_>) -> Result<(), Stop> {
    let ids = s.config.profile.property_ids;
    let order = s.config.profile.subset_bit_order;
    let unknown = |c: &Result<Characteristic<'_>, _>| {
        matches!(c, Ok(Characteristic::Unknown { .. } | Characteristic::Experimental { .. }))
    };
    let faults = s.config.faults.clone();
    match op {
        xcharext::Op::InitXch(i) => {
            if faults.v2_reject_unknown_xchar && i.start.characteristics().any(|c| unknown(&c)) {
                return send_bad_header(s, xid);
            }
            // 4.1: unknown characteristics "are simply ignored without any error response".
            for c in i.start.characteristics().flatten() {
                record(s, c)?;
            }
            answer_one_way(s, xid)
        }
        xcharext::Op::UpdXch(u) => {
            let c = u.now.characteristic(ids)?;
            if faults.v2_reject_unknown_xchar && unknown(&Ok(c)) {
                return send_bad_header(s, xid);
            }
            record(s, c)?;
            answer_one_way(s, xid)
        }
        xcharext::Op::ReqXch(r) => {
            if faults.v2_reject_unknown_xchar && r.want.characteristics().any(|c| unknown(&c)) {
                return send_bad_header(s, xid);
            }
            let n = r.want.len();
            let mut done = vec![0u32; n.div_ceil(32)];
            let mut rej = done.clone();
            for (i, c) in r.want.characteristics().enumerate() {
                let honoured = match c {
                    // Our receives are receive_size bytes: any size from 1024 up to it holds.
                    Ok(Characteristic::RbSiz(v)) if (1024..=s.config.receive_size).contains(&v) => {
                        s.v2.own_rbsiz = Some(v);
                        true
                    }
                    Ok(Characteristic::ReqRemInv(b)) => b == s.config.remote_invalidation,
                    // We are a server: we accept no backward-direction requests.
                    Ok(Characteristic::Brs(b)) => b == BkReqSup::BKREQSUP_NONE,
                    _ => false,
                };
                let set = if honoured { &mut done } else { &mut rej };
                xcharext::set_bit(set, i, order);
            }
            if faults.v2_respxch_overlap {
                for (r, d) in rej.iter_mut().zip(&done) {
                    *r |= *d;
                }
            }
            // 4.3: "The rdma_xid field of this message must match that used in the ROPT_REQXCH".
            let xid = if faults.v2_respxch_wrong_xid { xid ^ 1 } else { xid };
            let resp = RespXch {
                done: XcharSubset::new(&done, order),
                rej: XcharSubset::new(&rej, order),
                pend: XcharSubset::new(&[], order),
            };
            send_optional(s, xid, OptInfo::Xchar(xcharext::Op::RespXch(resp)))
        }
        // We send no ROPT_REQXCH, so there is nothing to match a response to.
        xcharext::Op::RespXch(_) => Ok(()),
    }
}

/// INITXCH and UPDXCH are one-way (2.3): no answer, unless a fault says otherwise.
fn answer_one_way(s: &mut Session<'_>, xid: u32) -> Result<(), Stop> {
    if !s.config.faults.v2_initxch_answered {
        return Ok(());
    }
    let order = s.config.profile.subset_bit_order;
    let empty = XcharSubset::new(&[], order);
    let resp = RespXch { done: empty, rej: empty, pend: empty };
    send_optional(s, xid, OptInfo::Xchar(xcharext::Op::RespXch(resp)))
}

/// Applies one of the requester's characteristics (3.1-3.3).
fn record(s: &mut Session<'_>, c: Characteristic<'_>) -> Result<(), Stop> {
    if s.config.faults.v2_ignore_xchars {
        return Ok(());
    }
    match c {
        Characteristic::RbSiz(v) => {
            let before = s.v2.peer_rbsiz.unwrap_or(V2_INLINE as u32);
            if v != before && s.config.faults.v2_rbsiz_change_closes {
                return Err(THRESHOLD_CHANGE);
            }
            s.v2.peer_rbsiz = Some(v);
            s.reply_inline = s.config.send_size.min(v) as usize;
        }
        // 3.2: false means "a responder MUST use Send".
        Characteristic::ReqRemInv(b) => {
            s.v2.peer_reqreminv = Some(b);
            s.may_invalidate = b && s.config.remote_invalidation;
        }
        Characteristic::Brs(b) => s.v2.peer_brs = Some(b),
        _ => {}
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// rtrext-03

fn lead(g: &Group) -> XmsId {
    XmsId { xid: g.xid, dir: MsgType::CALL, seq: 0 }
}

/// ROPT_REPTERR about transmission `bad` (9.5), with rdma_xid echoing it.
fn report(s: &mut Session<'_>, bad: XmsId, lead: Option<XmsId>, mut info: OptrInfo) -> Result<(), Stop> {
    if s.config.faults.v2_no_repterr {
        return Ok(());
    }
    if s.config.faults.v2_repterr_badcont_only {
        info = OptrInfo { which: OptrErr::OPTRERR_BADCONT, detail: OptrDetail::None };
    }
    let op = rtrext::Op::ReptErr(rtrext::ReptErr { bad, lead, info });
    send_optional(s, bad.xid, OptInfo::Rtr(op))
}

fn bad_pl(pslen: u32, available: usize) -> OptrInfo {
    OptrInfo {
        which: OptrErr::OPTRERR_BADPL,
        detail: OptrDetail::Range { value: pslen, min: 0, max: available as u32 },
    }
}

fn rtr(s: &mut Session<'_>, msg: &Message<'_>, dir: Option<MsgType>, op: rtrext::Op<'_>) -> Result<(), Stop> {
    let xid = msg.header.xid;
    let payload = msg.payload;
    match op {
        rtrext::Op::XmtReq(q) => {
            // Data placement is not implemented; a request must carry a payload (CALL).
            // (-00 has no rdma_optdir: a request is a call.)
            if !q.dp.is_empty() || q.count == 0 || dir.unwrap_or(MsgType::CALL) != MsgType::CALL {
                return send_bad_header(s, xid);
            }
            let bad = XmsId { xid, dir: MsgType::CALL, seq: 0 };
            if q.pslen as usize > payload.len() {
                return report(s, bad, None, bad_pl(q.pslen, payload.len()));
            }
            let part = &payload[..q.pslen as usize];
            if q.count == 1 || s.config.faults.v2_no_continuation {
                s.v2.rsbuf = q.rsbuf;
                return s.serve_call(xid, &ChunkLists::default(), false, part, Framing::V2Xmt);
            }
            s.v2.group = Some(Group { xid, count: q.count, next: 1, rsbuf: q.rsbuf, payload: part.to_vec() });
            Ok(())
        }
        rtrext::Op::XmtCont(c) => {
            let bad = XmsId { xid, dir: MsgType::CALL, seq: c.xnum };
            let Some(mut g) = s.v2.group.take() else {
                // 9.5: "a continuation messages was received when there was no reason to expect one".
                return report(s, bad, None, OptrInfo { which: OptrErr::OPTRERR_BADCONT, detail: OptrDetail::None });
            };
            let expcur = |which, expect, current| OptrInfo { which, detail: OptrDetail::ExpCur { expect, current } };
            if xid != g.xid {
                return report(s, bad, Some(lead(&g)), expcur(OptrErr::OPTRERR_BADXID, g.xid, xid));
            }
            if c.xnum != g.next {
                return report(s, bad, Some(lead(&g)), expcur(OptrErr::OPTRERR_BADSEQ, g.next, c.xnum));
            }
            if c.pslen as usize > payload.len() {
                return report(s, bad, Some(lead(&g)), bad_pl(c.pslen, payload.len()));
            }
            g.payload.extend_from_slice(&payload[..c.pslen as usize]);
            g.next += 1;
            if g.next < g.count {
                s.v2.group = Some(g);
                return Ok(());
            }
            s.v2.rsbuf = g.rsbuf;
            s.serve_call(g.xid, &ChunkLists::default(), false, &g.payload, Framing::V2Xmt)
        }
        // We send no backward-direction calls and no groups: nothing to match these to.
        rtrext::Op::XmtResp(_) | rtrext::Op::ReptErr(_) => Ok(()),
    }
}

/// One transmission of a reply group: its header (ROPT_XMTRESP for number 0, else
/// ROPT_XMTCONT) with rdma_optdir REPLY (v2-01 4.2.2), then `part`.
fn transmission(s: &Session<'_>, xid: u32, xnum: u32, count: u32, part: &[u8]) -> Vec<u8> {
    let types = s.config.profile.rtrext_opttypes;
    let pslen = part.len() as u32;
    let op = if xnum == 0 {
        rtrext::Op::XmtResp(XmtResp { dp: Array::empty(), count, pslen })
    } else {
        // optxc_itype is undocumented (wire notes R14): the initial transmission's opttype.
        rtrext::Op::XmtCont(XmtCont { xnum, itype: OpKind::XmtResp.opttype(types), pslen })
    };
    let dir = if s.config.faults.v2_wrong_direction { MsgType::CALL } else { MsgType::REPLY };
    let opttype = op.kind().opttype(types);
    let b = HeaderBuilder::optional(xid, s.grant(), dir, opttype, OptInfo::Rtr(op));
    let mut msg = b.envelope(s.config.profile.v2_envelope).encode_to_vec();
    msg.extend_from_slice(part);
    msg
}

/// Sends `payload`, an RPC reply too long for one Send, as a transmission group (rtrext-03
/// 4.2, 9.3, 9.4): each transmission fills the requester's receive buffer. False when the
/// group would need more transmissions than the receives the call reserved (5.2:
/// "responders will only send multi-transmission responses ... where the number of response
/// transmissions is less than or equal to buffer reservation count").
pub(crate) fn send_group(s: &mut Session<'_>, xid: u32, payload: &[u8]) -> Result<bool, Stop> {
    let limit = s.reply_inline;
    let first = limit.saturating_sub(transmission(s, xid, 0, 0, &[]).len());
    let more = limit.saturating_sub(transmission(s, xid, 1, 0, &[]).len());
    if first == 0 || more == 0 {
        return Ok(false);
    }
    let count = 1 + payload.len().saturating_sub(first).div_ceil(more);
    if count > s.v2.rsbuf as usize {
        return Ok(false);
    }
    let (head, rest) = payload.split_at(first.min(payload.len()));
    let head = transmission(s, xid, 0, count as u32, head);
    let faults = s.config.faults.clone();
    let cont_xid = if faults.v2_cont_wrong_xid { xid.wrapping_add(1) } else { xid };
    let mut conts: Vec<Vec<u8>> =
        rest.chunks(more).enumerate().map(|(i, p)| transmission(s, cont_xid, i as u32 + 1, count as u32, p)).collect();
    if faults.v2_group_out_of_order {
        conts.reverse();
    }
    s.send(&head, None)?;
    if faults.v2_group_interleaved {
        s.v2.deferred = conts;
        return Ok(true);
    }
    for c in conts {
        s.send(&c, None)?;
    }
    Ok(true)
}
