//! RPC-over-RDMA Version Two (draft-cel-nfsv4-rpcrdma-version-two-01) and its extensions
//! xcharext-02 (transport characteristics) and rtrext-03 (message continuation), under the
//! profile defaults (-01 envelope and error codes, rtrext opttypes 5..8, xcharext-02 ids,
//! LSB-first subsets). Every check first sends a Version Two NULL call: a peer that answers
//! ERR_VERS without 2 (or not at all, v2-01 5.2) speaks Version One only, and the check is
//! unsupported.

use rpcrdma_codec::check::KeyWord;
use rpcrdma_codec::chunk::ReadSegment;
use rpcrdma_codec::rpc::{AcceptStat, RpcMessage};
use rpcrdma_codec::rtrext::{self, OpKind, OptrDetail, OptrErr, ReptErr, XmtCont, XmtReq};
use rpcrdma_codec::v1::{ErrVers, FixedFields};
use rpcrdma_codec::v2::{Body, ErrorBody, ErrorInfo, HeaderBuilder, Message, MsgType, OptInfo};
use rpcrdma_codec::xcharext::{self, InitXch, ReqXch, UpdXch, XcharSpec, XcharSubset, XcharVal};
use rpcrdma_codec::Profile;

use super::{start, CallMsg};
use crate::engine::ctx::{summarize, NFS_PROGRAM, NFS_V3};
use crate::engine::{expect, Check, Ctx, Received, Verdict};
use crate::transport::Access;

fn profile() -> Profile {
    Profile::default()
}

// ---------------------------------------------------------------------------------------------
// Building Version Two messages

/// The RPC NULL call (NFSv3, AUTH_NONE): the payload stream.
pub(crate) fn null_rpc(xid: u32) -> Vec<u8> {
    CallMsg { xid, prog: NFS_PROGRAM, vers: NFS_V3, proc_: 0, ..Default::default() }.rpc_bytes()
}

/// Encodes a Version Two message.
pub(crate) fn build(b: HeaderBuilder<'_>) -> Vec<u8> {
    let mut buf = vec![0u8; 65536];
    let n = b.encode(&mut buf).expect("fits in 64 KiB");
    buf.truncate(n);
    buf
}

/// RDMA2_MSG, rdma_direction CALL, no chunks, then `payload`.
pub(crate) fn msg_v2(ctx: &Ctx, xid: u32, payload: &[u8]) -> Vec<u8> {
    build(HeaderBuilder::msg(xid, ctx.options.credits_requested, MsgType::CALL).payload(payload))
}

/// A Version Two NULL call.
pub(crate) fn null_v2(ctx: &Ctx, xid: u32) -> Vec<u8> {
    msg_v2(ctx, xid, &null_rpc(xid))
}

/// RDMA2_OPTIONAL from a requester: rdma_optdir CALL (v2-01 4.2.2, wire notes X13).
pub(crate) fn optional_v2(ctx: &Ctx, xid: u32, opttype: u32, info: OptInfo<'_>, payload: &[u8]) -> Vec<u8> {
    build(HeaderBuilder::optional(xid, ctx.options.credits_requested, MsgType::CALL, opttype, info).payload(payload))
}

pub(crate) fn xchar_msg(ctx: &Ctx, xid: u32, op: xcharext::Op<'_>) -> Vec<u8> {
    optional_v2(ctx, xid, op.opttype(), OptInfo::Xchar(op), &[])
}

pub(crate) fn rtr_msg(ctx: &Ctx, xid: u32, op: rtrext::Op<'_>, payload: &[u8]) -> Vec<u8> {
    optional_v2(ctx, xid, op.kind().opttype(profile().rtrext_opttypes), OptInfo::Rtr(op), payload)
}

fn xmtreq(count: u32, pslen: u32) -> rtrext::Op<'static> {
    rtrext::Op::XmtReq(XmtReq { count, pslen, ..Default::default() })
}

fn xmtcont(xnum: u32, pslen: u32) -> rtrext::Op<'static> {
    let itype = OpKind::XmtReq.opttype(profile().rtrext_opttypes);
    rtrext::Op::XmtCont(XmtCont { xnum, itype, pslen })
}

fn u32_data(v: u32) -> [u8; 4] {
    v.to_be_bytes()
}

// ---------------------------------------------------------------------------------------------
// Reading answers

/// A message that decodes as Version Two and answers `xid`; its bytes.
pub(crate) fn v2_answer(received: &Received, xid: u32) -> Result<Vec<u8>, String> {
    let Received::Message { bytes, .. } = received else { return Err(received.describe()) };
    let m = match Message::decode(bytes, &profile()) {
        Ok(m) => m,
        Err(e) => {
            return Err(match FixedFields::decode(bytes) {
                Ok(f) if f.vers != 2 => format!("a Version {} message: {}", f.vers, summarize(bytes)),
                _ => format!("a reply that does not decode as Version Two: {e}"),
            })
        }
    };
    if m.header.xid != xid {
        return Err(format!("{} with rdma_xid {:#010x}, not {xid:#010x}", m.header, m.header.xid));
    }
    Ok(bytes.clone())
}

fn decode(bytes: &[u8]) -> Message<'_> {
    Message::decode(bytes, &profile()).expect("checked by v2_answer")
}

/// Connects and sends a Version Two NULL call (v2-01 5): its reply, or the verdict that ends
/// the check (unsupported for a Version One peer).
pub(crate) fn start_v2(ctx: &mut Ctx) -> Result<Vec<u8>, Verdict> {
    start(ctx)?;
    let xid = ctx.xid();
    let msg = null_v2(ctx, xid);
    let ex = ctx.call(xid, &msg);
    let want = "a Version Two reply to a Version Two NULL call, or ERR_VERS leaving out 2 (Version One only)";
    if ex.received == Received::Silence {
        // v2-01 5.2: "if the initial negotiation message is lost or dropped".
        return Err(Verdict::unsupported(want, "no answer to the Version Two NULL call: Version One only"));
    }
    if let Received::Message { bytes, .. } = &ex.received {
        if let Ok(Some(e)) = ErrVers::decode(bytes) {
            if e.fixed.xid == xid {
                let range = format!("ERR_VERS {}..{}", e.low, e.high);
                return Err(if (e.low..=e.high).contains(&2) {
                    Verdict::fail(want, format!("{range} to a Version Two call, although the range holds 2"))
                } else {
                    Verdict::unsupported(want, format!("{range}: the peer speaks Version One only"))
                });
            }
        }
    }
    let bytes = v2_answer(&ex.received, xid).map_err(|g| Verdict::fail(want, g))?;
    match decode(&bytes).header.body {
        Body::Msg(_) | Body::NoMsg(_) => Ok(bytes),
        _ => Err(Verdict::fail(want, format!("{} to the NULL call", decode(&bytes).header))),
    }
}

/// A Version Two NULL round trip after a scenario: the connection still serves.
pub(crate) fn alive_v2(ctx: &mut Ctx) -> bool {
    let xid = ctx.xid();
    let msg = null_v2(ctx, xid);
    let ex = ctx.call(xid, &msg);
    v2_answer(&ex.received, xid).is_ok_and(|b| rpc_reply_ok(&b, xid).is_ok())
}

/// An RPC reply answering `xid` with SUCCESS: RDMA2_MSG with rdma_direction REPLY, or a
/// single ROPT_XMTRESP with rdma_optdir REPLY (v2-01 4.2.2); names the form.
pub(crate) fn rpc_reply_ok(bytes: &[u8], xid: u32) -> Result<&'static str, String> {
    let m = decode(bytes);
    if m.header.credit == 0 {
        return Err("rdma_credit 0 in a reply (the granted value MUST NOT be zero)".into());
    }
    let (payload, form) = match m.header.body {
        Body::Msg(c) => {
            if c.direction != Some(MsgType::REPLY) {
                return Err(format!(
                    "RDMA2_MSG reply with rdma_direction {}",
                    c.direction.map_or("absent".into(), |d| d.to_string())
                ));
            }
            (m.payload, "RDMA2_MSG")
        }
        Body::Optional(o) => match o.info {
            OptInfo::Rtr(rtrext::Op::XmtResp(r)) => {
                if o.dir != Some(MsgType::REPLY) {
                    return Err("ROPT_XMTRESP carrying an RPC reply with rdma_optdir CALL".into());
                }
                if r.count != 1 {
                    return Err(format!("a {}-transmission response although optxrq_rsbuf was 0", r.count));
                }
                let n = r.pslen as usize;
                if n > m.payload.len() {
                    return Err(format!("optxrs_pslen {n} beyond the {} bytes sent", m.payload.len()));
                }
                (&m.payload[..n], "ROPT_XMTRESP")
            }
            _ => return Err(format!("{} instead of an RPC reply", m.header)),
        },
        _ => return Err(format!("{} instead of an RPC reply", m.header)),
    };
    let rpc = RpcMessage::decode(payload).map_err(|e| format!("the RPC reply does not decode: {e}"))?;
    expect::check_accepted(&rpc.header, xid, AcceptStat::Success)?;
    Ok(form)
}

/// RDMA2_ERROR `want` answering `xid` with rdma_vers 2 and a non-zero grant.
pub(crate) fn v2_error(received: &Received, xid: u32, want: ErrorBody) -> Result<(), String> {
    let bytes = v2_answer(received, xid)?;
    let m = decode(&bytes);
    match m.header.body {
        Body::Error(ErrorInfo { body, .. }) if body == want => {
            if m.header.credit == 0 {
                return Err("rdma_credit 0 in a reply (the granted value MUST NOT be zero)".into());
            }
            if !m.payload.is_empty() {
                // v2-01 4.2.1: no payload after RDMA2_ERROR.
                return Err(format!("{} with {} bytes after it", want.name(), m.payload.len()));
            }
            Ok(())
        }
        _ => Err(format!("{} instead of {}", m.header, want.name())),
    }
}

/// Whether `received` is RDMA2_ERR_INVAL_OPTION: the operation is not supported.
fn is_inval_option(received: &Received) -> bool {
    match received {
        Received::Message { bytes, .. } => Message::decode(bytes, &profile())
            .is_ok_and(|m| matches!(m.header.body, Body::Error(ErrorInfo { body: ErrorBody::InvalOption, .. }))),
        _ => false,
    }
}

fn unsupported_op(op: &str) -> Verdict {
    Verdict::unsupported(format!("{op} supported"), format!("RDMA2_ERR_INVAL_OPTION: {op} is not supported"))
}

fn ending(alive: bool) -> &'static str {
    if alive {
        "connection alive"
    } else {
        "but the connection no longer answers"
    }
}

// ---------------------------------------------------------------------------------------------
// v2-01 base

fn optional_first_message(ctx: &mut Ctx) -> Verdict {
    if let Err(v) = start(ctx) {
        return v;
    }
    let xid = ctx.xid();
    let spec = [XcharVal::new(xcharext::XCHAR_RBSIZ, &[0, 0, 0x10, 0])];
    let op = xcharext::Op::ReqXch(ReqXch { want: XcharSpec::new(&spec, profile().property_ids) });
    let msg = xchar_msg(ctx, xid, op);
    let ex = ctx.call(xid, &msg);
    let want = "ERR_VERS with a range holding 1 and not 2 (Version One peer), or a Version Two answer echoing the rdma_xid: ROPT_RESPXCH or RDMA2_ERR_INVAL_OPTION";
    if let Received::Message { bytes, .. } = &ex.received {
        if let Ok(Some(e)) = ErrVers::decode(bytes) {
            return match expect::err_vers(&ex.received, xid, 2) {
                Ok(_) if !(e.low..=e.high).contains(&2) => {
                    Verdict::pass(want, format!("ERR_VERS {}..{}: Version One peer", e.low, e.high))
                }
                Ok(_) => Verdict::fail(want, format!("ERR_VERS {}..{} although the range holds 2", e.low, e.high)),
                Err(got) => Verdict::fail(want, got),
            };
        }
    }
    let bytes = match v2_answer(&ex.received, xid) {
        Ok(b) => b,
        Err(got) => return Verdict::fail(want, got),
    };
    let m = decode(&bytes);
    match m.header.body {
        Body::Error(ErrorInfo { body: ErrorBody::InvalOption, .. }) => Verdict::pass(want, "RDMA2_ERR_INVAL_OPTION"),
        Body::Optional(o) if matches!(o.info, OptInfo::Xchar(xcharext::Op::RespXch(_))) => {
            Verdict::pass(want, "ROPT_RESPXCH")
        }
        _ => Verdict::fail(want, m.header.to_string()),
    }
}

fn reply_direction(ctx: &mut Ctx) -> Verdict {
    let want = "RDMA2_MSG with rdma_vers 2, rdma_direction REPLY, a non-zero grant and accept_stat SUCCESS";
    let bytes = match start_v2(ctx) {
        Ok(b) => b,
        Err(v) => return v,
    };
    let m = decode(&bytes);
    match rpc_reply_ok(&bytes, m.header.xid) {
        Ok(form) => Verdict::pass(want, format!("{form} REPLY granting {} credits", m.header.credit)),
        Err(got) => Verdict::fail(want, got),
    }
}

fn nomsg_same_version(ctx: &mut Ctx) -> Verdict {
    if let Err(v) = start_v2(ctx) {
        return v;
    }
    let xid = ctx.xid();
    let rpc = null_rpc(xid);
    let src = ctx.register(rpc.len() as u32, Access::READ);
    ctx.conn().write_local(&src, 0, &rpc).expect("own region");
    let reads = [ReadSegment { position: 0, target: src.segment() }];
    let msg = build(HeaderBuilder::nomsg(xid, ctx.options.credits_requested, MsgType::CALL).read_list(&reads));
    let want = "the call pulled from the position-zero read chunk and answered with a Version Two reply (rdma_vers 2)";
    let ex = ctx.call(xid, &msg);
    match v2_answer(&ex.received, xid).and_then(|b| rpc_reply_ok(&b, xid)) {
        Ok(form) => Verdict::pass(want, format!("{form} REPLY, rdma_vers 2")),
        Err(got) => Verdict::fail(want, got),
    }
}

fn err_vers_range(ctx: &mut Ctx) -> Verdict {
    if let Err(v) = start_v2(ctx) {
        return v;
    }
    let xid = ctx.xid();
    let rpc = null_rpc(xid);
    let msg = build(HeaderBuilder::msg(xid, ctx.options.credits_requested, MsgType::CALL).raw_vers(3).payload(&rpc));
    let want = "ERR_VERS echoing the rdma_xid and rdma_vers 3, with an ordered range holding 1 and 2";
    let ex = ctx.call(xid, &msg);
    match expect::err_vers(&ex.received, xid, 3) {
        Ok((r, lax)) => {
            let Ok(Some(e)) = ErrVers::decode(&r.bytes) else { return Verdict::fail(want, "ERR_VERS vanished") };
            if !(e.low..=e.high).contains(&2) {
                return Verdict::fail(
                    want,
                    format!("ERR_VERS {}..{} although the peer answers Version Two", e.low, e.high),
                );
            }
            let actual = format!("ERR_VERS {}..{}", e.low, e.high);
            if lax {
                Verdict::lax(want, format!("{actual}; rdma_vers {} instead of the request's 3", e.fixed.vers))
            } else {
                Verdict::pass(want, actual)
            }
        }
        Err(got) => Verdict::fail(want, got),
    }
}

/// Sends `msg` and judges an RDMA2_ERR_BAD_HEADER answer, then liveness.
fn expect_bad_header(ctx: &mut Ctx, xid: u32, msg: &[u8]) -> Verdict {
    let want = "RDMA2_ERROR RDMA2_ERR_BAD_HEADER (2) echoing the rdma_xid, rdma_vers 2";
    let ex = ctx.call(xid, msg);
    match v2_error(&ex.received, xid, ErrorBody::BadHeader) {
        Ok(()) => {
            let alive = alive_v2(ctx);
            Verdict::pass(
                want,
                format!("RDMA2_ERR_BAD_HEADER; connection {}", if alive { "survived" } else { "closed" }),
            )
        }
        Err(got) => Verdict::fail(want, got),
    }
}

fn bad_header_truncated(ctx: &mut Ctx) -> Verdict {
    if let Err(v) = start_v2(ctx) {
        return v;
    }
    let xid = ctx.xid();
    // RDMA2_MSG CALL whose read list entry stops after its position word (32 bytes).
    let body: Vec<u8> = [0u32, 1, 0].iter().flat_map(|w| w.to_be_bytes()).collect();
    let msg = build(HeaderBuilder::msg(xid, ctx.options.credits_requested, MsgType::CALL).raw_body(&body));
    let mut msg = msg;
    msg.extend_from_slice(&0x1234u32.to_be_bytes());
    expect_bad_header(ctx, xid, &msg)
}

fn bad_header_proc(ctx: &mut Ctx) -> Verdict {
    if let Err(v) = start_v2(ctx) {
        return v;
    }
    let xid = ctx.xid();
    let rpc = null_rpc(xid);
    // rdma_proc 2 has no arm in the -01 union (wire notes C4).
    let b = HeaderBuilder::msg(xid, ctx.options.credits_requested, MsgType::CALL).raw_proc(2).payload(&rpc);
    let msg = build(b);
    expect_bad_header(ctx, xid, &msg)
}

fn invalid_known_value(ctx: &mut Ctx) -> Verdict {
    if let Err(v) = start_v2(ctx) {
        return v;
    }
    let xid = ctx.xid();
    // XCHAR_REQREMINV is a bool: 2 is "not valid when interpreted using the typedef".
    let spec = [XcharVal::new(xcharext::XCHAR_REQREMINV, &[0, 0, 0, 2])];
    let op = xcharext::Op::ReqXch(ReqXch { want: XcharSpec::new(&spec, profile().property_ids) });
    let msg = xchar_msg(ctx, xid, op);
    let want = "RDMA2_ERROR RDMA2_ERR_BAD_HEADER (2) echoing the rdma_xid, rdma_vers 2";
    let ex = ctx.call(xid, &msg);
    if is_inval_option(&ex.received) {
        return unsupported_op("ROPT_REQXCH");
    }
    match v2_error(&ex.received, xid, ErrorBody::BadHeader) {
        Ok(()) => Verdict::pass(want, format!("RDMA2_ERR_BAD_HEADER; {}", ending(alive_v2(ctx)))),
        Err(got) => Verdict::fail(want, got),
    }
}

fn inval_option(ctx: &mut Ctx) -> Verdict {
    if let Err(v) = start_v2(ctx) {
        return v;
    }
    let xid = ctx.xid();
    let msg = optional_v2(ctx, xid, 0x7fff_0001, OptInfo::Raw(&[0, 0, 0, 1]), &[]);
    let want = "RDMA2_ERROR RDMA2_ERR_INVAL_OPTION (3) echoing the rdma_xid, rdma_vers 2";
    let ex = ctx.call(xid, &msg);
    match v2_error(&ex.received, xid, ErrorBody::InvalOption) {
        Ok(()) => Verdict::pass(want, format!("RDMA2_ERR_INVAL_OPTION; {}", ending(alive_v2(ctx)))),
        Err(got) => Verdict::fail(want, got),
    }
}

/// Sends `msg`, which must get no answer, then a NULL call; INVAL_OPTION means `op` is
/// not supported.
fn expect_no_answer(ctx: &mut Ctx, msg: &[u8], op: &str) -> Verdict {
    let _ = ctx.send(msg);
    let want = "no answer, then a Version Two NULL call still answered";
    match ctx.expect_silence() {
        Received::Silence => {
            if alive_v2(ctx) {
                Verdict::pass(want, "no answer; connection alive")
            } else {
                Verdict::fail(want, "no answer, but the connection no longer answers")
            }
        }
        r if is_inval_option(&r) && !op.is_empty() => unsupported_op(op),
        other => Verdict::fail(want, other.describe()),
    }
}

fn error_discarded(ctx: &mut Ctx) -> Verdict {
    if let Err(v) = start_v2(ctx) {
        return v;
    }
    let xid = ctx.xid();
    // ERR_VERS (28 bytes): a 20-byte error would meet the Version One 28-byte discard rule
    // (RFC 8166 4.5) instead of the rule under test.
    let e = ErrorInfo::new(ErrorBody::Vers { low: 2, high: 2 }, profile().v2_error_numbering).expect("every revision");
    let msg = build(HeaderBuilder::error(xid, ctx.options.credits_requested, e));
    expect_no_answer(ctx, &msg, "")
}

// ---------------------------------------------------------------------------------------------
// xcharext-02

fn our_characteristics(reqreminv: bool) -> [XcharVal<'static>; 3] {
    [
        XcharVal::new(xcharext::XCHAR_RBSIZ, &[0, 0, 0x10, 0]),
        XcharVal::new(xcharext::XCHAR_REQREMINV, if reqreminv { &[0, 0, 0, 1] } else { &[0, 0, 0, 0] }),
        XcharVal::new(xcharext::XCHAR_BRS, &[0, 0, 0, 0]),
    ]
}

fn initxch_msg(ctx: &Ctx, xid: u32, vals: &[XcharVal<'_>]) -> Vec<u8> {
    let ids = profile().property_ids;
    let op = xcharext::Op::InitXch(InitXch {
        start: XcharSpec::new(vals, ids),
        nochg: XcharSubset::new(&[0b1], profile().subset_bit_order),
    });
    xchar_msg(ctx, xid, op)
}

fn initxch_silent(ctx: &mut Ctx) -> Verdict {
    if let Err(v) = start_v2(ctx) {
        return v;
    }
    let xid = ctx.xid();
    let vals = our_characteristics(true);
    let msg = initxch_msg(ctx, xid, &vals);
    expect_no_answer(ctx, &msg, "ROPT_INITXCH")
}

/// Sends `notice` (characteristics saying REQREMINV false), then a NULL call offering a
/// reply chunk: the reply must come by plain Send (xcharext-02 3.2).
fn no_invalidate_after(ctx: &mut Ctx, notice: &[u8], op: &str) -> Verdict {
    let _ = ctx.send(notice);
    let region = ctx.register(4096, Access::WRITE);
    let xid = ctx.xid();
    let rpc = null_rpc(xid);
    let rc = [region.segment()];
    let b = HeaderBuilder::msg(xid, ctx.options.credits_requested, MsgType::CALL).reply_chunk(&rc).payload(&rpc);
    let msg = build(b);
    let want = "the NULL reply (which offered a reply chunk) sent with plain Send, not Send With Invalidate";
    let mut ex = ctx.call(xid, &msg);
    if is_inval_option(&ex.received) {
        return unsupported_op(op);
    }
    if let Received::Message { bytes, .. } = &ex.received {
        // Anything answering the notice itself is someone else's check; skip it once.
        if Message::decode(bytes, &profile()).is_ok_and(|m| m.header.xid != xid) {
            ex.received = ctx.recv();
        }
    }
    let bytes = match v2_answer(&ex.received, xid) {
        Ok(b) => b,
        Err(got) => return Verdict::fail(want, got),
    };
    if let Err(got) = rpc_reply_ok(&bytes, xid) {
        return Verdict::fail(want, got);
    }
    match ex.received {
        Received::Message { invalidated: Some(h), .. } => {
            Verdict::fail(want, format!("Send With Invalidate of {h:#x} after REQREMINV false"))
        }
        _ => Verdict::pass(want, "plain Send"),
    }
}

fn initxch_reqreminv_false(ctx: &mut Ctx) -> Verdict {
    if let Err(v) = start_v2(ctx) {
        return v;
    }
    let xid = ctx.xid();
    let vals = our_characteristics(false);
    let msg = initxch_msg(ctx, xid, &vals);
    no_invalidate_after(ctx, &msg, "ROPT_INITXCH")
}

fn updxch_reqreminv_false(ctx: &mut Ctx) -> Verdict {
    if let Err(v) = start_v2(ctx) {
        return v;
    }
    let xid = ctx.xid();
    let now = XcharVal::new(xcharext::XCHAR_REQREMINV, &[0, 0, 0, 0]);
    let msg = xchar_msg(ctx, xid, xcharext::Op::UpdXch(UpdXch { now, pendclr: false }));
    no_invalidate_after(ctx, &msg, "ROPT_UPDXCH")
}

/// The subsets of a ROPT_RESPXCH answering `xid` with rdma_optdir REPLY: done, rej, pend.
fn respxch(received: &Received, xid: u32) -> Result<[Vec<usize>; 3], String> {
    let bytes = v2_answer(received, xid)?;
    let m = decode(&bytes);
    match m.header.body {
        Body::Optional(o) => match o.info {
            OptInfo::Xchar(xcharext::Op::RespXch(r)) => {
                if o.dir != Some(MsgType::REPLY) {
                    return Err("ROPT_RESPXCH with rdma_optdir CALL from the responder (wire notes X13)".into());
                }
                if m.header.credit == 0 {
                    return Err("rdma_credit 0 in a ROPT_RESPXCH".into());
                }
                Ok([r.done.bits().collect(), r.rej.bits().collect(), r.pend.bits().collect()])
            }
            _ => Err(format!("{} instead of ROPT_RESPXCH", m.header)),
        },
        _ => Err(format!("{} instead of ROPT_RESPXCH", m.header)),
    }
}

/// Sends ROPT_REQXCH with `vals`; what came back, or unsupported.
fn reqxch(ctx: &mut Ctx, vals: &[XcharVal<'_>]) -> Result<(u32, Received), Verdict> {
    let xid = ctx.xid();
    let op = xcharext::Op::ReqXch(ReqXch { want: XcharSpec::new(vals, profile().property_ids) });
    let msg = xchar_msg(ctx, xid, op);
    let ex = ctx.call(xid, &msg);
    if is_inval_option(&ex.received) {
        return Err(unsupported_op("ROPT_REQXCH"));
    }
    Ok((xid, ex.received))
}

fn respxch_xid(ctx: &mut Ctx) -> Verdict {
    if let Err(v) = start_v2(ctx) {
        return v;
    }
    let vals = [XcharVal::new(xcharext::XCHAR_RBSIZ, &[0, 0, 0x08, 0])];
    let (xid, received) = match reqxch(ctx, &vals) {
        Ok(r) => r,
        Err(v) => return v,
    };
    let want = "ROPT_RESPXCH with the ROPT_REQXCH's rdma_xid, rdma_optdir REPLY";
    match respxch(&received, xid) {
        Ok([d, r, p]) => Verdict::pass(want, format!("ROPT_RESPXCH done={d:?} rej={r:?} pend={p:?}")),
        Err(got) => Verdict::fail(want, got),
    }
}

fn respxch_cover(ctx: &mut Ctx) -> Verdict {
    if let Err(v) = start_v2(ctx) {
        return v;
    }
    let genl = u32_data(xcharext::BkReqSup::BKREQSUP_GENL.0);
    let vals = [
        XcharVal::new(xcharext::XCHAR_RBSIZ, &[0, 0, 0x08, 0]),
        XcharVal::new(xcharext::XCHAR_REQREMINV, &[0, 0, 0, 0]),
        XcharVal::new(xcharext::XCHAR_BRS, &genl),
        XcharVal::new(77, &[1, 2, 3]),
    ];
    let (xid, received) = match reqxch(ctx, &vals) {
        Ok(r) => r,
        Err(v) => return v,
    };
    let want = "done, rej and pend disjoint and together exactly positions 0..3 of the request";
    let [d, r, p] = match respxch(&received, xid) {
        Ok(s) => s,
        Err(got) => return Verdict::fail(want, got),
    };
    let actual = format!("done={d:?} rej={r:?} pend={p:?}");
    let mut all: Vec<usize> = d.iter().chain(&r).chain(&p).copied().collect();
    let total = all.len();
    all.sort_unstable();
    all.dedup();
    if all != [0, 1, 2, 3] {
        return Verdict::lax(want, format!("{actual}: the union is not the four requested positions"));
    }
    if all.len() != total {
        return Verdict::lax(want, format!("{actual}: the subsets overlap"));
    }
    Verdict::pass(want, actual)
}

fn unknown_ids_skipped(ctx: &mut Ctx) -> Verdict {
    if let Err(v) = start_v2(ctx) {
        return v;
    }
    let vals = [
        XcharVal::new(77, &[0xaa, 0xbb, 0xcc]),
        XcharVal::new(0xFFFF_FF10, &[]),
        XcharVal::new(xcharext::XCHAR_RBSIZ, &[0, 0, 0x08, 0]),
    ];
    let (xid, received) = match reqxch(ctx, &vals) {
        Ok(r) => r,
        Err(v) => return v,
    };
    let want = "ROPT_RESPXCH (no error for the unknown id 77 and the experimental id 0xffffff10)";
    match respxch(&received, xid) {
        Ok([d, r, p]) => Verdict::pass(want, format!("ROPT_RESPXCH done={d:?} rej={r:?} pend={p:?}")),
        Err(got) => Verdict::fail(want, got),
    }
}

// ---------------------------------------------------------------------------------------------
// rtrext-03

fn xmtreq_single(ctx: &mut Ctx) -> Verdict {
    if let Err(v) = start_v2(ctx) {
        return v;
    }
    let xid = ctx.xid();
    let rpc = null_rpc(xid);
    let msg = rtr_msg(ctx, xid, xmtreq(1, rpc.len() as u32), &rpc);
    let want = "the NULL call answered with accept_stat SUCCESS (ROPT_XMTRESP or RDMA2_MSG, direction REPLY)";
    let ex = ctx.call(xid, &msg);
    if is_inval_option(&ex.received) {
        return unsupported_op("ROPT_XMTREQ");
    }
    match v2_answer(&ex.received, xid).and_then(|b| rpc_reply_ok(&b, xid)) {
        Ok(form) => Verdict::pass(want, format!("{form} REPLY")),
        Err(got) => Verdict::fail(want, got),
    }
}

fn xmtcont_group(ctx: &mut Ctx) -> Verdict {
    if let Err(v) = start_v2(ctx) {
        return v;
    }
    let xid = ctx.xid();
    let rpc = null_rpc(xid);
    let (a, b) = rpc.split_at(20);
    let first = rtr_msg(ctx, xid, xmtreq(2, a.len() as u32), a);
    let second = rtr_msg(ctx, xid, xmtcont(1, b.len() as u32), b);
    let _ = ctx.send(&first);
    let want = "the NULL call, split over ROPT_XMTREQ (count 2) and ROPT_XMTCONT 1, answered with SUCCESS";
    let ex = ctx.call(xid, &second);
    if is_inval_option(&ex.received) {
        return unsupported_op("message continuation");
    }
    match v2_answer(&ex.received, xid).and_then(|b| rpc_reply_ok(&b, xid)) {
        Ok(form) => Verdict::pass(want, format!("{form} REPLY after reassembly")),
        Err(got) => Verdict::fail(want, got),
    }
}

/// A ROPT_REPTERR answering `xid` with rdma_optdir REPLY.
fn repterr(received: &Received, xid: u32) -> Result<ReptErr, String> {
    let bytes = v2_answer(received, xid)?;
    let m = decode(&bytes);
    match m.header.body {
        Body::Optional(o) => match o.info {
            OptInfo::Rtr(rtrext::Op::ReptErr(r)) if o.dir == Some(MsgType::REPLY) => Ok(r),
            OptInfo::Rtr(rtrext::Op::ReptErr(_)) => Err("ROPT_REPTERR with rdma_optdir CALL from the responder".into()),
            _ => Err(format!("{} instead of ROPT_REPTERR", m.header)),
        },
        _ => Err(format!("{} instead of ROPT_REPTERR", m.header)),
    }
}

/// Judges a ROPT_REPTERR about transmission `xid`/`seq` reporting `which` (and `detail`).
fn judge_repterr(
    ctx: &mut Ctx,
    received: &Received,
    xid: u32,
    seq: u32,
    which: OptrErr,
    detail: Option<OptrDetail>,
) -> Verdict {
    let want = format!("ROPT_REPTERR {} about transmission {xid:#010x}/{seq}", which);
    if is_inval_option(received) {
        return unsupported_op("message continuation");
    }
    let r = match repterr(received, xid) {
        Ok(r) => r,
        Err(got) => return Verdict::fail(want, got),
    };
    if r.info.which != which {
        return Verdict::fail(want, format!("{} instead", r.info.which));
    }
    if detail.is_some_and(|d| d != r.info.detail) {
        return Verdict::fail(want, format!("{} with {:?}, not {:?}", which, r.info.detail, detail.expect("some")));
    }
    if r.bad.xid != xid || r.bad.dir != MsgType::CALL || r.bad.seq != seq {
        return Verdict::fail(want, format!("optre_bad {:?}", r.bad));
    }
    Verdict::pass(want, format!("ROPT_REPTERR {}; {}", which, ending(alive_v2(ctx))))
}

fn cont_without_req(ctx: &mut Ctx) -> Verdict {
    if let Err(v) = start_v2(ctx) {
        return v;
    }
    let xid = ctx.xid();
    let rpc = null_rpc(xid);
    let msg = rtr_msg(ctx, xid, xmtcont(1, rpc.len() as u32), &rpc);
    let ex = ctx.call(xid, &msg);
    judge_repterr(ctx, &ex.received, xid, 1, OptrErr::OPTRERR_BADCONT, Some(OptrDetail::None))
}

fn wrong_xnum(ctx: &mut Ctx) -> Verdict {
    if let Err(v) = start_v2(ctx) {
        return v;
    }
    let xid = ctx.xid();
    let rpc = null_rpc(xid);
    let (a, b) = rpc.split_at(20);
    let first = rtr_msg(ctx, xid, xmtreq(3, a.len() as u32), a);
    // The first continuation is number 1 (wire notes R16); 2 skips it.
    let second = rtr_msg(ctx, xid, xmtcont(2, b.len() as u32), b);
    let _ = ctx.send(&first);
    let ex = ctx.call(xid, &second);
    judge_repterr(
        ctx,
        &ex.received,
        xid,
        2,
        OptrErr::OPTRERR_BADSEQ,
        Some(OptrDetail::ExpCur { expect: 1, current: 2 }),
    )
}

fn cont_wrong_xid(ctx: &mut Ctx) -> Verdict {
    if let Err(v) = start_v2(ctx) {
        return v;
    }
    let xid = ctx.xid();
    let other = ctx.xid();
    let rpc = null_rpc(xid);
    let (a, b) = rpc.split_at(20);
    let first = rtr_msg(ctx, xid, xmtreq(2, a.len() as u32), a);
    let second = rtr_msg(ctx, other, xmtcont(1, b.len() as u32), b);
    let _ = ctx.send(&first);
    let ex = ctx.call(other, &second);
    let detail = OptrDetail::ExpCur { expect: xid, current: other };
    judge_repterr(ctx, &ex.received, other, 1, OptrErr::OPTRERR_BADXID, Some(detail))
}

// ---------------------------------------------------------------------------------------------

const V2_3_1_INVAL: &str = "When an implementation does not recognize or support the value contained in the rdma_opttype field, it MUST send an RPC-over-RDMA message with the rdma_xid field set to the same value as the erroneous message, the rdma_proc field set to RDMA2_ERROR, and the rdma_err field set to RDMA2_ERR_INVAL_OPTION.";

pub static CHECKS: [Check; 20] = [
    Check {
        id: "v2-01/5.2/optional-first-message",
        requirement: "If the responder does not support RPC-over-RDMA Version Two, [I-D.ietf-nfsv4-rfc5666bis] REQUIRES that it send an RPC-over-RDMA message to the requester with the same XID, with RDMA2_ERROR in the rdma_proc field, and with the error code RDMA2_ERR_VERS. ... (3.1) When an implementation does not recognize or support the value contained in the rdma_opttype field, it MUST send an RPC-over-RDMA message with the rdma_xid field set to the same value as the erroneous message, the rdma_proc field set to RDMA2_ERROR, and the rdma_err field set to RDMA2_ERR_INVAL_OPTION.",
        key_word: KeyWord::Must,
        acceptable: "ERR_VERS echoing the rdma_xid with a range holding 1 but not 2 (Version One peer); or, from a Version Two peer, ROPT_RESPXCH or RDMA2_ERR_INVAL_OPTION echoing the rdma_xid",
        rationale: "An RDMA2_OPTIONAL as the very first message must be answered by every peer, whichever versions it speaks.",
        groups: &["v2", "xcharext", "negotiation"],
        run: optional_first_message,
    },
    Check {
        id: "v2-01/4.2.2/reply-direction",
        requirement: "When the rdma_proc field has the value RDMA2_MSG or RDMA2_NOMSG, the value of the rdma_direction field MUST be the same as the value of the associated RPC message's msg_type field.",
        key_word: KeyWord::Must,
        acceptable: "RDMA2_MSG (or RDMA2_NOMSG) with rdma_vers 2, rdma_direction REPLY, a non-zero grant and accept_stat SUCCESS; unsupported for a Version One peer",
        rationale: "The Version Two sanity baseline: the direction field is how a receiver tells backward calls from forward replies.",
        groups: &["v2", "sanity"],
        run: reply_direction,
    },
    Check {
        id: "v2-01/5.3/nomsg-call-same-version",
        requirement: "[I-D.ietf-nfsv4-rfc5666bis] REQUIRES that a responder MUST send Replies with the same RPC-over-RDMA protocol version that the requester uses to send its Calls.",
        key_word: KeyWord::Must,
        acceptable: "the RDMA2_NOMSG call pulled from its position-zero read chunk and answered with a Version Two reply, accept_stat SUCCESS",
        rationale: "Version Two reuses the Version One chunk machinery; a responder must not fall back to Version One headers for a long call.",
        groups: &["v2", "chunks"],
        run: nomsg_same_version,
    },
    Check {
        id: "v2-01/4.2.3/err-vers-range",
        requirement: "Error handling works the same way in RPC-over-RDMA Version Two as it does in RPC-over-RDMA Version One ... (RFC 8166 4.5.1) it MUST reply with an RDMA_ERROR procedure and set the rdma_err value to ERR_VERS, also providing the low and high inclusive version numbers it does, in fact, support.",
        key_word: KeyWord::Must,
        acceptable: "ERR_VERS echoing the rdma_xid and rdma_vers 3, with an ordered range holding both 1 and 2 (rdma_vers 1 is pass-lax)",
        rationale: "A Version Two peer that reports only version 1 steers every requester away from Version Two.",
        groups: &["v2", "errors", "negotiation"],
        run: err_vers_range,
    },
    Check {
        id: "v2-01/4.2.3/bad-header-truncated",
        requirement: "Error handling works the same way in RPC-over-RDMA Version Two as it does in RPC-over-RDMA Version One ... (RFC 8166 4.5.2) If the rdma_vers field contains a recognized value, but an XDR parsing error occurs, the Responder MUST reply with an RDMA_ERROR procedure and set the rdma_err value to ERR_CHUNK.",
        key_word: KeyWord::Must,
        acceptable: "RDMA2_ERROR RDMA2_ERR_BAD_HEADER (2, the -01 counterpart of ERR_CHUNK) echoing the rdma_xid and rdma_vers 2",
        rationale: "A read segment cut short in a Version Two header must fail cleanly, with the Version Two error code.",
        groups: &["v2", "errors"],
        run: bad_header_truncated,
    },
    Check {
        id: "v2-01/4.2.3/bad-header-proc",
        requirement: "Error handling works the same way in RPC-over-RDMA Version Two as it does in RPC-over-RDMA Version One ... (RFC 8166 4.5.2) Examples of such errors include an invalid value in the rdma_proc field ... the Responder MUST reply with an RDMA_ERROR procedure and set the rdma_err value to ERR_CHUNK.",
        key_word: KeyWord::Must,
        acceptable: "RDMA2_ERROR RDMA2_ERR_BAD_HEADER (2) echoing the rdma_xid and rdma_vers 2",
        rationale: "rdma_proc 2 (RDMA_MSGP in Version One) has no arm in the Version Two union (wire notes C4).",
        groups: &["v2", "errors"],
        run: bad_header_proc,
    },
    Check {
        id: "v2-01/3.1/inval-option",
        requirement: V2_3_1_INVAL,
        key_word: KeyWord::Must,
        acceptable: "RDMA2_ERROR RDMA2_ERR_INVAL_OPTION (3 under -01) echoing the rdma_xid and rdma_vers 2",
        rationale: "INVAL_OPTION is how a requester learns that an optional feature is absent; silence would stall it.",
        groups: &["v2", "errors", "optional"],
        run: inval_option,
    },
    Check {
        id: "v2-01/4.2.3/error-discarded",
        requirement: "Error handling works the same way in RPC-over-RDMA Version Two as it does in RPC-over-RDMA Version One ... (RFC 8166 4.2.4) A Responder MUST silently discard RDMA_ERROR procedures.",
        key_word: KeyWord::Must,
        acceptable: "no answer to RDMA2_ERROR, and a Version Two NULL call still answered",
        rationale: "Two peers answering each other's errors would loop forever.",
        groups: &["v2", "errors", "discard"],
        run: error_discarded,
    },
    Check {
        id: "xcharext-02/4.1/initxch-silent",
        requirement: "Support for all of the operations above is OPTIONAL.  RPC-over-RDMA Version Two implementations that receive an operation that is not supported MUST respond with RDMA_ERROR message with an error code of RDMA_ERR_INVAL_OPTION ... (4.1) Those receiving an ROPT_INITXCH may encounter characteristics that they do not support or are unaware of.  In such cases, these characteristics are simply ignored without any error response being generated.",
        key_word: KeyWord::Must,
        acceptable: "no answer to ROPT_INITXCH and the connection still serving (RDMA2_ERR_INVAL_OPTION: unsupported)",
        rationale: "ROPT_INITXCH is a one-way notice; answering it puts messages on the wire the requester never asked for.",
        groups: &["v2", "xcharext"],
        run: initxch_silent,
    },
    Check {
        id: "xcharext-02/3.2/initxch-reqreminv-false",
        requirement: "When the Requester Remote Invalidate characteristic is set to false, a responder MUST use Send to convey RPC reply messages to the requester.",
        key_word: KeyWord::Must,
        acceptable: "after ROPT_INITXCH with XCHAR_REQREMINV false, the reply to a call offering a reply chunk arrives by plain Send (RDMA2_ERR_INVAL_OPTION: unsupported)",
        rationale: "Send With Invalidate to a requester that cannot take it tears down a registration it still uses.",
        groups: &["v2", "xcharext", "invalidation"],
        run: initxch_reqreminv_false,
    },
    Check {
        id: "xcharext-02/4.4/updxch-reqreminv-false",
        requirement: "optupdxch_now defines the new characteristic value to be used. ... (3.2) When the Requester Remote Invalidate characteristic is set to false, a responder MUST use Send to convey RPC reply messages to the requester.",
        key_word: KeyWord::Must,
        acceptable: "no answer to ROPT_UPDXCH, and after it (XCHAR_REQREMINV false) the reply to a call offering a reply chunk arrives by plain Send (RDMA2_ERR_INVAL_OPTION: unsupported)",
        rationale: "An update must take effect for the messages that follow it.",
        groups: &["v2", "xcharext", "invalidation"],
        run: updxch_reqreminv_false,
    },
    Check {
        id: "xcharext-02/4.3/respxch-xid",
        requirement: "The rdma_xid field of this message must match that used in the ROPT_REQXCH message to which this message is responding.",
        key_word: KeyWord::Must,
        acceptable: "ROPT_RESPXCH with the ROPT_REQXCH's rdma_xid and rdma_optdir REPLY (RDMA2_ERR_INVAL_OPTION: unsupported)",
        rationale: "The XID is the only thing that ties a response to its request.",
        groups: &["v2", "xcharext"],
        run: respxch_xid,
    },
    Check {
        id: "xcharext-02/4.3/respxch-cover",
        requirement: "The subsets of characteristics specified by optrespxch_done, optrespxch_rej, optrespxch_pend should not overlap and, when ored together, should cover the entire set of characteristics specified by optreqxch_want in the corresponding request.",
        key_word: KeyWord::Should,
        acceptable: "done, rej and pend disjoint, their union exactly the four requested positions (LSB-first bits); overlap or gaps are pass-lax",
        rationale: "A requester must be able to tell, for each requested change, whether it happened.",
        groups: &["v2", "xcharext"],
        run: respxch_cover,
    },
    Check {
        id: "xcharext-02/2.1/unknown-ids-skipped",
        requirement: "In cases in which the xcharid specified by xchv_which is understood by the receiver, the receiver also MUST report an XDR error if either of the following occur: ... Note that no error is to be reported if xchv_which is unknown to the receiver.  In that case, that xcharval is not processed and processing continues using the next xcharval, if any.",
        key_word: KeyWord::Must,
        acceptable: "ROPT_RESPXCH echoing the rdma_xid for a request holding an unknown id and an experimental id (6.2); no RDMA2_ERROR",
        rationale: "Characteristics are extensible by design; a peer that errors on new ids breaks every future extension.",
        groups: &["v2", "xcharext"],
        run: unknown_ids_skipped,
    },
    Check {
        id: "xcharext-02/2.1/invalid-known-value",
        requirement: "In cases in which the xcharid specified by xchv_which is understood by the receiver, the receiver also MUST report an XDR error if either of the following occur: The nominally opaque data within xchv_data is not valid when interpreted using the characteristic-associated typedef.",
        key_word: KeyWord::Must,
        acceptable: "RDMA2_ERROR RDMA2_ERR_BAD_HEADER (2) echoing the rdma_xid for XCHAR_REQREMINV with the bool value 2",
        rationale: "A bool of 2 is not TRUE (RFC 4506 4.4); reading it as one misconfigures the connection.",
        groups: &["v2", "xcharext", "errors"],
        run: invalid_known_value,
    },
    Check {
        id: "rtrext-03/9.3/xmtreq-answered",
        requirement: "The field optrs_count specifies the count of transmissions in this group of transmissions used to send a reply. ... (v2-01 4.2.2) When the rdma_proc field has the value RDMA2_OPTIONAL and a whole or partial RPC message payload is present, the value of the rdma_optdir field MUST be the same as the value of the associated RPC message's msg_type field.",
        key_word: KeyWord::Must,
        acceptable: "a single-transmission ROPT_XMTREQ answered by ROPT_XMTRESP (count 1, optdir REPLY) or RDMA2_MSG REPLY carrying accept_stat SUCCESS (RDMA2_ERR_INVAL_OPTION: unsupported)",
        rationale: "The simplest rtrext exchange: one transmission each way, with the direction field telling a reply from a backward call.",
        groups: &["v2", "rtrext"],
        run: xmtreq_single,
    },
    Check {
        id: "rtrext-03/9.4/xmtcont-group",
        requirement: "The xid field of this message must match that in the initial transmission. ... In any case, the payload streams for all transmissions within the same group are considered concatenated.",
        key_word: KeyWord::Must,
        acceptable: "the NULL call split over ROPT_XMTREQ (optxrq_count 2) and ROPT_XMTCONT (optxc_xnum 1) reassembled and answered with SUCCESS (RDMA2_ERR_INVAL_OPTION: unsupported)",
        rationale: "Message continuation is rtrext's reason to exist; the pieces must be joined in order.",
        groups: &["v2", "rtrext"],
        run: xmtcont_group,
    },
    Check {
        id: "rtrext-03/9.5/cont-without-req",
        requirement: "In this case, all of the RPC-over-RDMA messages used together are referred to as a transmission group and must be received in order without any intervening message. ... (9.5) OPTRERR_BADCONT indicates that a continuation messages was received when there was no reason to expect one.",
        key_word: KeyWord::Must,
        acceptable: "ROPT_REPTERR OPTRERR_BADCONT echoing the rdma_xid, optre_bad = {xid, CALL, 1}, rdma_optdir REPLY (RDMA2_ERR_INVAL_OPTION: unsupported)",
        rationale: "A stray continuation must be reported, not appended to some other request.",
        groups: &["v2", "rtrext", "errors"],
        run: cont_without_req,
    },
    Check {
        id: "rtrext-03/9.5/wrong-xnum",
        requirement: "In this case, all of the RPC-over-RDMA messages used together are referred to as a transmission group and must be received in order without any intervening message. ... (9.5) OPTRERR_BADSEQ indicate that a transmission sequence number other than the one expected was received.",
        key_word: KeyWord::Must,
        acceptable: "ROPT_REPTERR OPTRERR_BADSEQ with optri_expect 1 and optri_current 2, optre_bad = {xid, CALL, 2} (RDMA2_ERR_INVAL_OPTION: unsupported)",
        rationale: "A skipped continuation means a hole in the payload stream; serving it would run a corrupt call.",
        groups: &["v2", "rtrext", "errors"],
        run: wrong_xnum,
    },
    Check {
        id: "rtrext-03/9.4/cont-wrong-xid",
        requirement: "The xid field of this message must match that in the initial transmission. ... (9.5) OPTRERR_BADXID indicate that an xid other than the one expected in a continuation context.",
        key_word: KeyWord::Must,
        acceptable: "ROPT_REPTERR OPTRERR_BADXID with optri_expect the group's xid and optri_current the continuation's (RDMA2_ERR_INVAL_OPTION: unsupported)",
        rationale: "A continuation of another request must not be spliced into the pending one.",
        groups: &["v2", "rtrext", "errors"],
        run: cont_wrong_xid,
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_check_is_in_the_v2_group() {
        for c in CHECKS.iter() {
            assert!(c.groups.contains(&"v2"), "{}", c.id);
            let ext = c.id.starts_with("xcharext") || c.id.starts_with("rtrext");
            assert!(!ext || c.groups.iter().any(|g| *g == "xcharext" || *g == "rtrext"), "{}", c.id);
        }
    }

    // Against a Version One responder the catalogue still makes sense: the probe check
    // passes on ERR_VERS and every other check is unsupported.
    #[test]
    fn a_version_one_peer_makes_the_checks_unsupported() {
        use crate::engine::{run_check, Outcome, RunOptions};
        use crate::responder::{Config, Responder};
        use crate::transport::emulated::EmulatedConnector;
        use crate::ulp::{Nfs3Server, UpperLayer};
        use std::time::Duration;
        let ulp = std::sync::Arc::new(|| Box::new(Nfs3Server::new()) as Box<dyn UpperLayer>);
        let config = Config { version_two: false, ..Config::default() };
        let mut conn = EmulatedConnector::new(Responder::new(config, ulp));
        let opts = RunOptions {
            timeout: Duration::from_secs(2),
            silence: Duration::from_millis(100),
            ..RunOptions::default()
        };
        for c in CHECKS.iter() {
            let r = run_check(c, &mut conn, &opts);
            let want = if c.id == "v2-01/5.2/optional-first-message" { Outcome::Pass } else { Outcome::Unsupported };
            assert_eq!(r.outcome, want, "{}: {}", c.id, r.actual);
        }
    }

    #[test]
    fn messages_decode() {
        let xid = 9;
        let rpc = null_rpc(xid);
        let b = build(HeaderBuilder::msg(xid, 1, MsgType::CALL).payload(&rpc));
        assert!(Message::decode(&b, &profile()).is_ok());
        assert_eq!(b.len(), 32 + rpc.len());
    }
}
