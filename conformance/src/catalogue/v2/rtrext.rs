//! rtrext-03: message continuation. A call split over ROPT_XMTREQ and ROPT_XMTCONT, the
//! ROPT_REPTERR a responder sends for a continuation out of place, and the responder's own
//! transmission groups (in [`group`]).

use rpcrdma_codec::rtrext::{self, OpKind, OptrDetail, OptrErr, ReptErr, XmtCont, XmtReq};
use rpcrdma_codec::v2::MsgType;

mod group;

use super::messages::{alive_v2, ending, null_rpc, rpc_reply_ok, rtr_msg, start_v2, supported, v2_answer};
use crate::engine::{Check, CheckInfo, Ctx, Judged, Mismatch, OrFail, Outcome, Received, Verdict};
use crate::frame::v2::{Body, Op};

fn xmtreq(count: u32, pslen: u32) -> rtrext::Op<'static> {
    rtrext::Op::XmtReq(XmtReq { count, pslen, ..Default::default() })
}

fn xmtcont(ctx: &Ctx, xnum: u32, pslen: u32) -> rtrext::Op<'static> {
    let itype = OpKind::XmtReq.opttype(ctx.profile().rtrext_opttypes);
    rtrext::Op::XmtCont(XmtCont { xnum, itype, pslen })
}

fn xmtreq_single(ctx: &mut Ctx) -> Judged {
    start_v2(ctx)?;
    let xid = ctx.xid();
    let rpc = null_rpc(xid);
    let msg = rtr_msg(ctx, xid, xmtreq(1, rpc.len() as u32), &rpc);
    let want = "the NULL call answered with accept_stat SUCCESS (ROPT_XMTRESP or RDMA2_MSG, direction REPLY)";
    let got = ctx.call(&msg);
    supported(&got, "ROPT_XMTREQ")?;
    let (f, h) = v2_answer(&got, xid).or_fail(want)?;
    let form = rpc_reply_ok(f, h, xid).or_fail(want)?;
    Ok(Verdict::pass(want, format!("{form} REPLY")))
}

fn xmtcont_group(ctx: &mut Ctx) -> Judged {
    start_v2(ctx)?;
    let xid = ctx.xid();
    let rpc = null_rpc(xid);
    let (a, b) = rpc.split_at(20);
    let first = rtr_msg(ctx, xid, xmtreq(2, a.len() as u32), a);
    let second = rtr_msg(ctx, xid, xmtcont(ctx, 1, b.len() as u32), b);
    let _ = ctx.send(&first);
    let want = "the NULL call, split over ROPT_XMTREQ (count 2) and ROPT_XMTCONT 1, answered with SUCCESS";
    let got = ctx.call(&second);
    supported(&got, "message continuation")?;
    let (f, h) = v2_answer(&got, xid).or_fail(want)?;
    let form = rpc_reply_ok(f, h, xid).or_fail(want)?;
    Ok(Verdict::pass(want, format!("{form} REPLY after reassembly")))
}

/// A ROPT_REPTERR answering `xid` with rdma_optdir REPLY that reports `which` (with `detail`
/// when given) about transmission `xid`/`seq` of a call.
fn repterr(
    received: &Received,
    xid: u32,
    seq: u32,
    which: OptrErr,
    detail: Option<OptrDetail>,
) -> Result<ReptErr, Mismatch> {
    let (_, h) = v2_answer(received, xid)?;
    let r = match h.body {
        // (The -00 envelope has no rdma_optdir: None.)
        Body::Optional { op: Op::ReptErr(r), dir: Some(MsgType::REPLY) | None, .. } => r,
        Body::Optional { op: Op::ReptErr(_), .. } => {
            return Err("ROPT_REPTERR with rdma_optdir CALL from the responder".into())
        }
        _ => return Err(Mismatch::WrongBody { got: h.to_string(), want: "ROPT_REPTERR" }),
    };
    if r.info.which != which {
        return Err(format!("{} instead", r.info.which).into());
    }
    if let Some(d) = detail.filter(|d| *d != r.info.detail) {
        return Err(format!("{} with {:?}, not {d:?}", which, r.info.detail).into());
    }
    if r.bad.xid != xid || r.bad.dir != MsgType::CALL || r.bad.seq != seq {
        return Err(format!("optre_bad {:?}", r.bad).into());
    }
    Ok(r)
}

/// Judges a ROPT_REPTERR about transmission `xid`/`seq` reporting `which` (and `detail`),
/// then liveness.
fn judge_repterr(
    ctx: &mut Ctx,
    received: &Received,
    xid: u32,
    seq: u32,
    which: OptrErr,
    detail: Option<OptrDetail>,
) -> Judged {
    let want = format!("ROPT_REPTERR {} about transmission {xid:#010x}/{seq}", which);
    supported(received, "message continuation")?;
    repterr(received, xid, seq, which, detail).or_fail(&want)?;
    Ok(Verdict::pass(want, format!("ROPT_REPTERR {}; {}", which, ending(alive_v2(ctx)))))
}

fn cont_without_req(ctx: &mut Ctx) -> Judged {
    start_v2(ctx)?;
    let xid = ctx.xid();
    let rpc = null_rpc(xid);
    let got = ctx.call(&rtr_msg(ctx, xid, xmtcont(ctx, 1, rpc.len() as u32), &rpc));
    judge_repterr(ctx, &got, xid, 1, OptrErr::OPTRERR_BADCONT, Some(OptrDetail::None))
}

fn wrong_xnum(ctx: &mut Ctx) -> Judged {
    start_v2(ctx)?;
    let xid = ctx.xid();
    let rpc = null_rpc(xid);
    let (a, b) = rpc.split_at(20);
    let first = rtr_msg(ctx, xid, xmtreq(3, a.len() as u32), a);
    // The first continuation is number 1 (wire notes R16); 2 skips it.
    let second = rtr_msg(ctx, xid, xmtcont(ctx, 2, b.len() as u32), b);
    let _ = ctx.send(&first);
    let got = ctx.call(&second);
    judge_repterr(ctx, &got, xid, 2, OptrErr::OPTRERR_BADSEQ, Some(OptrDetail::ExpCur { expect: 1, current: 2 }))
}

fn cont_wrong_xid(ctx: &mut Ctx) -> Judged {
    start_v2(ctx)?;
    let xid = ctx.xid();
    let other = ctx.xid();
    let rpc = null_rpc(xid);
    let (a, b) = rpc.split_at(20);
    let first = rtr_msg(ctx, xid, xmtreq(2, a.len() as u32), a);
    let second = rtr_msg(ctx, other, xmtcont(ctx, 1, b.len() as u32), b);
    let _ = ctx.send(&first);
    let got = ctx.call(&second);
    let detail = OptrDetail::ExpCur { expect: xid, current: other };
    judge_repterr(ctx, &got, other, 1, OptrErr::OPTRERR_BADXID, Some(detail))
}

// ---------------------------------------------------------------------------------------------

pub(super) const CHECKS: [Check; 7] = [
    Check {
        info: CheckInfo {
            id: "rtrext-03/9.3/xmtreq-answered",
            judges: &["v2-01/4.2.2#3"],
            acceptable: "a single-transmission ROPT_XMTREQ answered by ROPT_XMTRESP (count 1, optdir REPLY) or \
                RDMA2_MSG REPLY carrying accept_stat SUCCESS (RDMA2_ERR_INVAL_OPTION: unsupported)",
            rationale: "The simplest rtrext exchange: one transmission each way, with the direction field telling a \
                reply from a backward call.",
            groups: &["v2", "rtrext"],
            broken_by: &[("v2-wrong-direction", Outcome::Fail)],
            precondition: None,
        },
        run: xmtreq_single,
    },
    Check {
        info: CheckInfo {
            id: "rtrext-03/9.4/xmtcont-group",
            judges: &["~rtrext-03/4.2#1", "~rtrext-03/9.4#1"],
            acceptable: "the NULL call split over ROPT_XMTREQ (optxrq_count 2) and ROPT_XMTCONT (optxc_xnum 1) \
                reassembled and answered with SUCCESS (RDMA2_ERR_INVAL_OPTION: unsupported)",
            rationale: "Message continuation is rtrext's reason to exist; the pieces must be joined in order.",
            groups: &["v2", "rtrext"],
            broken_by: &[("v2-no-continuation", Outcome::Fail)],
            precondition: None,
        },
        run: xmtcont_group,
    },
    Check {
        info: CheckInfo {
            id: "rtrext-03/9.5/cont-without-req",
            judges: &["~rtrext-03/4.2#1", "~v2-01/4.2.2#4"],
            acceptable: "ROPT_REPTERR OPTRERR_BADCONT echoing the rdma_xid, optre_bad = {xid, CALL, 1}, rdma_optdir \
                REPLY (RDMA2_ERR_INVAL_OPTION: unsupported)",
            rationale: "A stray continuation must be reported, not appended to some other request.",
            groups: &["v2", "rtrext", "errors"],
            broken_by: &[("v2-no-repterr", Outcome::Fail)],
            precondition: None,
        },
        run: cont_without_req,
    },
    Check {
        info: CheckInfo {
            id: "rtrext-03/9.5/wrong-xnum",
            judges: &["~rtrext-03/4.2#1", "~v2-01/4.2.2#4"],
            acceptable: "ROPT_REPTERR OPTRERR_BADSEQ with optri_expect 1 and optri_current 2, optre_bad = {xid, CALL, \
                2} (RDMA2_ERR_INVAL_OPTION: unsupported)",
            rationale: "A skipped continuation means a hole in the payload stream; serving it would run a corrupt \
                call.",
            groups: &["v2", "rtrext", "errors"],
            broken_by: &[("v2-no-repterr", Outcome::Fail), ("v2-repterr-badcont-only", Outcome::Fail)],
            precondition: None,
        },
        run: wrong_xnum,
    },
    Check {
        info: CheckInfo {
            id: "rtrext-03/9.4/cont-wrong-xid",
            judges: &["~rtrext-03/9.4#1", "~v2-01/4.2.2#4"],
            acceptable: "ROPT_REPTERR OPTRERR_BADXID with optri_expect the group's xid and optri_current the \
                continuation's (RDMA2_ERR_INVAL_OPTION: unsupported)",
            rationale: "A continuation of another request must not be spliced into the pending one.",
            groups: &["v2", "rtrext", "errors"],
            broken_by: &[("v2-repterr-badcont-only", Outcome::Fail)],
            precondition: None,
        },
        run: cont_wrong_xid,
    },
    group::CHECKS[0],
    group::CHECKS[1],
];
