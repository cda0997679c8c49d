//! xcharext-02: transport characteristics exchanged with ROPT_INITXCH, ROPT_REQXCH /
//! ROPT_RESPXCH and ROPT_UPDXCH, and the XDR rules for their values.

use rpcrdma_codec::v2::{ErrorBody, HeaderBuilder, MsgType};
use rpcrdma_codec::xcharext::{self, InitXch, ReqXch, UpdXch, XcharSpec, XcharSubset, XcharVal};

use rpcrdma_peers::transport::Access;

use super::{
    alive_v2, build, ending, expect_no_answer, null_rpc, profile, rpc_reply_ok, start_v2, supported, v2_answer,
    v2_error, xchar_msg,
};
use crate::engine::{Check, CheckInfo, Ctx, Judged, Mismatch, OrFail, Outcome, Received, Verdict};
use crate::frame::v2::{Body, Op};
use crate::frame::Frame;

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

fn initxch_silent(ctx: &mut Ctx) -> Judged {
    start_v2(ctx)?;
    let xid = ctx.xid();
    let msg = initxch_msg(ctx, xid, &our_characteristics(true));
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
    let mut got = ctx.call(&build(b));
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
    start_v2(ctx)?;
    let xid = ctx.xid();
    let msg = initxch_msg(ctx, xid, &our_characteristics(false));
    no_invalidate_after(ctx, &msg, "ROPT_INITXCH")
}

fn updxch_reqreminv_false(ctx: &mut Ctx) -> Judged {
    start_v2(ctx)?;
    let xid = ctx.xid();
    let now = XcharVal::new(xcharext::XCHAR_REQREMINV, &[0, 0, 0, 0]);
    let msg = xchar_msg(ctx, xid, xcharext::Op::UpdXch(UpdXch { now, pendclr: false }));
    no_invalidate_after(ctx, &msg, "ROPT_UPDXCH")
}

/// The subsets of a ROPT_RESPXCH answering `xid` with rdma_optdir REPLY: done, rej, pend.
fn respxch(received: &Received, xid: u32) -> Result<[Vec<usize>; 3], Mismatch> {
    let (_, h) = v2_answer(received, xid)?;
    match &h.body {
        Body::Optional { dir, op: Op::RespXch { done, rej, pend }, .. } => {
            if *dir != Some(MsgType::REPLY) {
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
    let op = xcharext::Op::ReqXch(ReqXch { want: XcharSpec::new(vals, profile().property_ids) });
    let got = ctx.call(&xchar_msg(ctx, xid, op));
    supported(&got, "ROPT_REQXCH")?;
    Ok((xid, got))
}

fn respxch_xid(ctx: &mut Ctx) -> Judged {
    start_v2(ctx)?;
    let (xid, got) = reqxch(ctx, &[XcharVal::new(xcharext::XCHAR_RBSIZ, &[0, 0, 0x08, 0])])?;
    let want = "ROPT_RESPXCH with the ROPT_REQXCH's rdma_xid, rdma_optdir REPLY";
    let [d, r, p] = respxch(&got, xid).or_fail(want)?;
    Ok(Verdict::pass(want, format!("ROPT_RESPXCH done={d:?} rej={r:?} pend={p:?}")))
}

fn respxch_cover(ctx: &mut Ctx) -> Judged {
    start_v2(ctx)?;
    let genl = (xcharext::BkReqSup::BKREQSUP_GENL.0).to_be_bytes();
    let vals = [
        XcharVal::new(xcharext::XCHAR_RBSIZ, &[0, 0, 0x08, 0]),
        XcharVal::new(xcharext::XCHAR_REQREMINV, &[0, 0, 0, 0]),
        XcharVal::new(xcharext::XCHAR_BRS, &genl),
        XcharVal::new(77, &[1, 2, 3]),
    ];
    let (xid, got) = reqxch(ctx, &vals)?;
    let want = "done, rej and pend disjoint and together exactly positions 0..3 of the request";
    let [d, r, p] = respxch(&got, xid).or_fail(want)?;
    let actual = format!("done={d:?} rej={r:?} pend={p:?}");
    let mut all: Vec<usize> = d.iter().chain(&r).chain(&p).copied().collect();
    let total = all.len();
    all.sort_unstable();
    all.dedup();
    if all != [0, 1, 2, 3] {
        return Ok(Verdict::lax(want, format!("{actual}: the union is not the four requested positions")));
    }
    if all.len() != total {
        return Ok(Verdict::lax(want, format!("{actual}: the subsets overlap")));
    }
    Ok(Verdict::pass(want, actual))
}

fn unknown_ids_skipped(ctx: &mut Ctx) -> Judged {
    start_v2(ctx)?;
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
    start_v2(ctx)?;
    let xid = ctx.xid();
    // XCHAR_REQREMINV is a bool: 2 is "not valid when interpreted using the typedef".
    let spec = [XcharVal::new(xcharext::XCHAR_REQREMINV, &[0, 0, 0, 2])];
    let op = xcharext::Op::ReqXch(ReqXch { want: XcharSpec::new(&spec, profile().property_ids) });
    let want = "RDMA2_ERROR RDMA2_ERR_BAD_HEADER (2) echoing the rdma_xid, rdma_vers 2";
    let got = ctx.call(&xchar_msg(ctx, xid, op));
    supported(&got, "ROPT_REQXCH")?;
    v2_error(&got, xid, ErrorBody::BadHeader).or_fail(want)?;
    Ok(Verdict::pass(want, format!("RDMA2_ERR_BAD_HEADER; {}", ending(alive_v2(ctx)))))
}

fn xchv_data_overrun(ctx: &mut Ctx) -> Judged {
    start_v2(ctx)?;
    let xid = ctx.xid();
    // One XCHAR_RBSIZ of 4096 (the message's last xcharval), then its xchv_data length word
    // raised so the data runs 4 bytes past the end of the message.
    let spec = [XcharVal::new(xcharext::XCHAR_RBSIZ, &[0, 0, 0x10, 0])];
    let op = xcharext::Op::ReqXch(ReqXch { want: XcharSpec::new(&spec, profile().property_ids) });
    let mut msg = xchar_msg(ctx, xid, op);
    let value = [0, 0, 0, 4, 0, 0, 0x10, 0];
    let at = msg.windows(8).rposition(|w| w == value).expect("the xcharval we encoded");
    let claimed = (msg.len() - (at + 4) + 4) as u32;
    msg[at..at + 4].copy_from_slice(&claimed.to_be_bytes());
    let want = format!(
        "RDMA2_ERROR RDMA2_ERR_BAD_HEADER (2) echoing the rdma_xid, for xchv_data claiming {claimed} bytes where {} remain",
        claimed - 4
    );
    let got = ctx.call(&msg);
    supported(&got, "ROPT_REQXCH")?;
    v2_error(&got, xid, ErrorBody::BadHeader).or_fail(&want)?;
    Ok(Verdict::pass(&want, format!("RDMA2_ERR_BAD_HEADER; {}", ending(alive_v2(ctx)))))
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
