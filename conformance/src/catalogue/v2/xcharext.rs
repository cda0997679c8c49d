//! xcharext-02: transport characteristics exchanged with ROPT_INITXCH, ROPT_REQXCH /
//! ROPT_RESPXCH and ROPT_UPDXCH, and the XDR rules for their values.

use rpcrdma_codec::v2::{ErrorBody, HeaderBuilder, MsgType};
use rpcrdma_codec::xcharext::{self, InitXch, Known, ReqXch, UpdXch, XcharSpec, XcharSubset, XcharVal};

use rpcrdma_peers::transport::Access;

use super::messages::{
    alive_v2, build, ending, error_named, expect_no_answer, null_rpc, property_id, rpc_reply_ok, start_v2, supported,
    v2_answer, v2_error, xchar_msg, xcharext_numbered,
};
use crate::engine::{Check, CheckInfo, Ctx, Judged, Mismatch, OrFail, Outcome, Received, Verdict};
use crate::frame::v2::{Body, Op};
use crate::frame::Frame;

/// RBSIZ 4096, REQREMINV `reqreminv` and BRS NONE, with the ids of the run's table.
fn our_characteristics(ctx: &Ctx, reqreminv: bool) -> Result<[XcharVal<'static>; 3], Verdict> {
    Ok([
        XcharVal::new(property_id(ctx, Known::RbSiz)?, &[0, 0, 0x10, 0]),
        XcharVal::new(property_id(ctx, Known::ReqRemInv)?, if reqreminv { &[0, 0, 0, 1] } else { &[0, 0, 0, 0] }),
        XcharVal::new(property_id(ctx, Known::Brs)?, &[0, 0, 0, 0]),
    ])
}

/// [`start_v2`] for a check of xcharext-02 sending `op`: unsupported first when the run's
/// profile numbers no xcharext operation.
fn start_xchar(ctx: &mut Ctx, op: &str) -> Result<(), Verdict> {
    xcharext_numbered(ctx, op)?;
    start_v2(ctx).map(drop)
}

fn initxch_msg(ctx: &Ctx, xid: u32, vals: &[XcharVal<'_>]) -> Vec<u8> {
    let ids = ctx.profile().property_ids;
    let op = xcharext::Op::InitXch(InitXch {
        start: XcharSpec::new(vals, ids),
        nochg: XcharSubset::new(&[0b1], ctx.profile().subset_bit_order),
    });
    xchar_msg(ctx, xid, op)
}

fn initxch_silent(ctx: &mut Ctx) -> Judged {
    start_xchar(ctx, "ROPT_INITXCH")?;
    let xid = ctx.xid();
    // REQREMINV left out where the run's table has none: the notice stays a notice.
    let vals: Vec<XcharVal<'_>> =
        [(Known::RbSiz, [0, 0, 0x10, 0]), (Known::ReqRemInv, [0, 0, 0, 1]), (Known::Brs, [0; 4])]
            .iter()
            .filter_map(|(k, v)| Some(XcharVal::new(k.id(ctx.profile().property_ids)?, v)))
            .collect();
    let msg = initxch_msg(ctx, xid, &vals);
    expect_no_answer(ctx, &msg, "ROPT_INITXCH")
}

/// Sends `notice` (characteristics saying REQREMINV false), then a NULL call offering a
/// reply chunk: the reply must come by plain Send (xcharext-02 3.2).
fn no_invalidate_after(ctx: &mut Ctx, notice: &[u8], op: &str) -> Judged {
    let _ = ctx.send(notice);
    let region = ctx.register(4096, Access::WRITE);
    let xid = ctx.xid();
    let rpc = null_rpc(xid);
    let rc = [region.segment()];
    let b = HeaderBuilder::msg(xid, ctx.options.credits_requested, MsgType::CALL).reply_chunk(&rc).payload(&rpc);
    let want = "the NULL reply (which offered a reply chunk) sent with plain Send, not Send With Invalidate";
    let mut got = ctx.call(&build(ctx, b));
    supported(&got, op)?;
    // Anything answering the notice itself is someone else's check; skip it once.
    if got.frame().and_then(Frame::v2).is_some_and(|h| h.xid != xid) {
        got = ctx.recv();
    }
    let (f, h) = v2_answer(&got, xid).or_fail(want)?;
    rpc_reply_ok(f, h, xid).or_fail(want)?;
    let invalidated = f.invalidated;
    crate::catalogue::private_data::unobservable(ctx, want)?;
    match invalidated {
        Some(h) => Err(Verdict::fail(want, format!("Send With Invalidate of {h:#x} after REQREMINV false"))),
        None => Ok(Verdict::pass(want, "plain Send")),
    }
}

fn initxch_reqreminv_false(ctx: &mut Ctx) -> Judged {
    let vals = our_characteristics(ctx, false)?;
    start_xchar(ctx, "ROPT_INITXCH")?;
    let xid = ctx.xid();
    let msg = initxch_msg(ctx, xid, &vals);
    no_invalidate_after(ctx, &msg, "ROPT_INITXCH")
}

fn updxch_reqreminv_false(ctx: &mut Ctx) -> Judged {
    let now = XcharVal::new(property_id(ctx, Known::ReqRemInv)?, &[0, 0, 0, 0]);
    start_xchar(ctx, "ROPT_UPDXCH")?;
    let xid = ctx.xid();
    let msg = xchar_msg(ctx, xid, xcharext::Op::UpdXch(UpdXch { now, pendclr: false }));
    no_invalidate_after(ctx, &msg, "ROPT_UPDXCH")
}

/// The subsets of a ROPT_RESPXCH answering `xid` with rdma_optdir REPLY: done, rej, pend.
fn respxch(received: &Received, xid: u32) -> Result<[Vec<usize>; 3], Mismatch> {
    let (_, h) = v2_answer(received, xid)?;
    match &h.body {
        Body::Optional { dir, op: Op::RespXch { done, rej, pend }, .. } => {
            // (The -00 envelope has no rdma_optdir: None.)
            if dir.is_some_and(|d| d != MsgType::REPLY) {
                return Err("ROPT_RESPXCH with rdma_optdir CALL from the responder (wire notes X13)".into());
            }
            if h.credit == 0 {
                return Err("rdma_credit 0 in a ROPT_RESPXCH".into());
            }
            Ok([done.clone(), rej.clone(), pend.clone()])
        }
        _ => Err(Mismatch::WrongBody { got: h.to_string(), want: "ROPT_RESPXCH" }),
    }
}

/// Sends ROPT_REQXCH with `vals`; its rdma_xid and what came back, or unsupported.
fn reqxch(ctx: &mut Ctx, vals: &[XcharVal<'_>]) -> Result<(u32, Received), Verdict> {
    let xid = ctx.xid();
    let op = xcharext::Op::ReqXch(ReqXch { want: XcharSpec::new(vals, ctx.profile().property_ids) });
    let got = ctx.call(&xchar_msg(ctx, xid, op));
    supported(&got, "ROPT_REQXCH")?;
    Ok((xid, got))
}

fn respxch_xid(ctx: &mut Ctx) -> Judged {
    start_xchar(ctx, "ROPT_REQXCH")?;
    let (xid, got) = reqxch(ctx, &[XcharVal::new(xcharext::XCHAR_RBSIZ, &[0, 0, 0x08, 0])])?;
    let want = "ROPT_RESPXCH with the ROPT_REQXCH's rdma_xid, rdma_optdir REPLY";
    let [d, r, p] = respxch(&got, xid).or_fail(want)?;
    Ok(Verdict::pass(want, format!("ROPT_RESPXCH done={d:?} rej={r:?} pend={p:?}")))
}

fn respxch_cover(ctx: &mut Ctx) -> Judged {
    start_xchar(ctx, "ROPT_REQXCH")?;
    let genl = (xcharext::BkReqSup::BKREQSUP_GENL.0).to_be_bytes();
    // The ids of the run's table (REQREMINV left out where it has none), then an unknown one.
    let ids = ctx.profile().property_ids;
    let known = [(Known::RbSiz, [0, 0, 0x08, 0]), (Known::ReqRemInv, [0, 0, 0, 0]), (Known::Brs, genl)];
    let mut vals: Vec<XcharVal<'_>> = known.iter().filter_map(|(k, v)| Some(XcharVal::new(k.id(ids)?, v))).collect();
    vals.push(XcharVal::new(77, &[1, 2, 3]));
    let (xid, got) = reqxch(ctx, &vals)?;
    let want =
        format!("done, rej and pend disjoint and together exactly positions 0..{} of the request", vals.len() - 1);
    let want = want.as_str();
    let [d, r, p] = respxch(&got, xid).or_fail(want)?;
    let actual = format!("done={d:?} rej={r:?} pend={p:?}");
    let mut all: Vec<usize> = d.iter().chain(&r).chain(&p).copied().collect();
    let total = all.len();
    all.sort_unstable();
    all.dedup();
    if all != (0..vals.len()).collect::<Vec<_>>() {
        return Ok(Verdict::lax(want, format!("{actual}: the union is not the {} requested positions", vals.len())));
    }
    if all.len() != total {
        return Ok(Verdict::lax(want, format!("{actual}: the subsets overlap")));
    }
    Ok(Verdict::pass(want, actual))
}

fn unknown_ids_skipped(ctx: &mut Ctx) -> Judged {
    start_xchar(ctx, "ROPT_REQXCH")?;
    let vals = [
        XcharVal::new(77, &[0xaa, 0xbb, 0xcc]),
        XcharVal::new(0xFFFF_FF10, &[]),
        XcharVal::new(xcharext::XCHAR_RBSIZ, &[0, 0, 0x08, 0]),
    ];
    let (xid, got) = reqxch(ctx, &vals)?;
    let want = "ROPT_RESPXCH (no error for the unknown id 77 and the experimental id 0xffffff10)";
    let [d, r, p] = respxch(&got, xid).or_fail(want)?;
    Ok(Verdict::pass(want, format!("ROPT_RESPXCH done={d:?} rej={r:?} pend={p:?}")))
}

fn invalid_known_value(ctx: &mut Ctx) -> Judged {
    start_xchar(ctx, "ROPT_REQXCH")?;
    let xid = ctx.xid();
    // A value "not valid when interpreted using the typedef": XCHAR_REQREMINV is a bool, so 2;
    // a table without it (props-v2-03) gets BRS 3, no enum bkreqsup value.
    let ids = ctx.profile().property_ids;
    let (id, value) = match Known::ReqRemInv.id(ids) {
        Some(id) => (id, [0, 0, 0, 2]),
        None => (property_id(ctx, Known::Brs)?, [0, 0, 0, 3]),
    };
    let spec = [XcharVal::new(id, &value)];
    let op = xcharext::Op::ReqXch(ReqXch { want: XcharSpec::new(&spec, ids) });
    let error = ErrorBody::unparsable(ctx.profile().v2_error_numbering);
    let want = format!("RDMA2_ERROR {} echoing the rdma_xid, rdma_vers 2", error_named(ctx, error));
    let got = ctx.call(&xchar_msg(ctx, xid, op));
    supported(&got, "ROPT_REQXCH")?;
    v2_error(&got, xid, error).or_fail(&want)?;
    Ok(Verdict::pass(&want, format!("{}; {}", error.name(), ending(alive_v2(ctx)))))
}

fn xchv_data_overrun(ctx: &mut Ctx) -> Judged {
    start_xchar(ctx, "ROPT_REQXCH")?;
    let xid = ctx.xid();
    // One XCHAR_RBSIZ of 4096 (the message's last xcharval), then its xchv_data length word
    // raised so the data runs 4 bytes past the end of the message.
    let spec = [XcharVal::new(xcharext::XCHAR_RBSIZ, &[0, 0, 0x10, 0])];
    let op = xcharext::Op::ReqXch(ReqXch { want: XcharSpec::new(&spec, ctx.profile().property_ids) });
    let mut msg = xchar_msg(ctx, xid, op);
    let value = [0, 0, 0, 4, 0, 0, 0x10, 0];
    let at = msg.windows(8).rposition(|w| w == value).expect("the xcharval we encoded");
    let claimed = (msg.len() - (at + 4) + 4) as u32;
    msg[at..at + 4].copy_from_slice(&claimed.to_be_bytes());
    let error = ErrorBody::unparsable(ctx.profile().v2_error_numbering);
    let want = format!(
        "RDMA2_ERROR {} echoing the rdma_xid, for xchv_data claiming {claimed} bytes where {} remain",
        error_named(ctx, error),
        claimed - 4
    );
    let got = ctx.call(&msg);
    supported(&got, "ROPT_REQXCH")?;
    v2_error(&got, xid, error).or_fail(&want)?;
    Ok(Verdict::pass(&want, format!("{}; {}", error.name(), ending(alive_v2(ctx)))))
}

// ---------------------------------------------------------------------------------------------

pub(super) const CHECKS: [Check; 8] = [
    Check {
        info: CheckInfo {
            id: "xcharext-02/4.1/initxch-silent",
            judges: &["~xcharext-02/4#2"],
            acceptable: "no answer to ROPT_INITXCH and the connection still serving (RDMA2_ERR_INVAL_OPTION: \
                unsupported)",
            rationale: "ROPT_INITXCH is a one-way notice; answering it puts messages on the wire the requester never \
                asked for.",
            groups: &["v2", "xcharext"],
            broken_by: &[("v2-initxch-answered", Outcome::Fail)],
            precondition: None,
        },
        run: initxch_silent,
    },
    Check {
        info: CheckInfo {
            id: "xcharext-02/3.2/initxch-reqreminv-false",
            judges: &["xcharext-02/3.2#1"],
            acceptable: "after ROPT_INITXCH with XCHAR_REQREMINV false, the reply to a call offering a reply chunk \
                arrives by plain Send (RDMA2_ERR_INVAL_OPTION: unsupported)",
            rationale: "Send With Invalidate to a requester that cannot take it tears down a registration it still \
                uses.",
            groups: &["v2", "xcharext", "invalidation"],
            broken_by: &[("v2-ignore-xchars", Outcome::Fail)],
            precondition: None,
        },
        run: initxch_reqreminv_false,
    },
    Check {
        info: CheckInfo {
            id: "xcharext-02/4.4/updxch-reqreminv-false",
            judges: &["xcharext-02/3.2#1"],
            acceptable:
                "no answer to ROPT_UPDXCH, and after it (XCHAR_REQREMINV false) the reply to a call offering a \
                reply chunk arrives by plain Send (RDMA2_ERR_INVAL_OPTION: unsupported)",
            rationale: "An update must take effect for the messages that follow it.",
            groups: &["v2", "xcharext", "invalidation"],
            broken_by: &[("v2-ignore-xchars", Outcome::Fail)],
            precondition: None,
        },
        run: updxch_reqreminv_false,
    },
    Check {
        info: CheckInfo {
            id: "xcharext-02/4.3/respxch-xid",
            judges: &["~v2-01/4.2.2#4", "~xcharext-02/4#2", "xcharext-02/4.3#1"],
            acceptable: "ROPT_RESPXCH with the ROPT_REQXCH's rdma_xid and rdma_optdir REPLY (RDMA2_ERR_INVAL_OPTION: \
                unsupported)",
            rationale: "The XID is the only thing that ties a response to its request.",
            groups: &["v2", "xcharext"],
            broken_by: &[("v2-respxch-wrong-xid", Outcome::Fail)],
            precondition: None,
        },
        run: respxch_xid,
    },
    Check {
        info: CheckInfo {
            id: "xcharext-02/4.3/respxch-cover",
            judges: &["xcharext-02/4.3#2"],
            acceptable: "done, rej and pend disjoint, their union exactly the four requested positions (LSB-first \
                bits); overlap or gaps are pass-lax",
            rationale: "A requester must be able to tell, for each requested change, whether it happened.",
            groups: &["v2", "xcharext"],
            broken_by: &[("v2-respxch-overlap", Outcome::PassLax)],
            precondition: None,
        },
        run: respxch_cover,
    },
    Check {
        info: CheckInfo {
            id: "xcharext-02/2.1/unknown-ids-skipped",
            judges: &["~xcharext-02/2.1#2"],
            acceptable: "ROPT_RESPXCH echoing the rdma_xid for a request holding an unknown id and an experimental id \
                (6.2); no RDMA2_ERROR",
            rationale: "Characteristics are extensible by design; a peer that errors on new ids breaks every future \
                extension.",
            groups: &["v2", "xcharext"],
            broken_by: &[("v2-reject-unknown-xchar", Outcome::Fail)],
            precondition: None,
        },
        run: unknown_ids_skipped,
    },
    Check {
        info: CheckInfo {
            id: "xcharext-02/2.1/invalid-known-value",
            judges: &["xcharext-02/2.1#2"],
            acceptable: "RDMA2_ERROR RDMA2_ERR_BAD_HEADER (2) echoing the rdma_xid for XCHAR_REQREMINV with the bool \
                value 2",
            rationale: "A bool of 2 is not TRUE (RFC 4506 4.4); reading it as one misconfigures the connection.",
            groups: &["v2", "xcharext", "errors"],
            broken_by: &[("v2-no-bad-header", Outcome::Fail)],
            precondition: None,
        },
        run: invalid_known_value,
    },
    Check {
        info: CheckInfo {
            id: "xcharext-02/2.1/xchv-data-overrun",
            judges: &["xcharext-02/2.1#1"],
            acceptable: "RDMA2_ERROR RDMA2_ERR_BAD_HEADER (2) echoing the rdma_xid for a ROPT_REQXCH whose last \
                xchv_data claims 4 bytes more than the message holds",
            rationale: "A receiver that reads past the message takes stale buffer bytes as a characteristic value.",
            groups: &["v2", "xcharext", "errors"],
            broken_by: &[("v2-undecodable-optional-answered", Outcome::Fail)],
            precondition: None,
        },
        run: xchv_data_overrun,
    },
];
