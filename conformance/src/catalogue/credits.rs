//! Credits (RFC 8166 3.3.1): a non-zero grant in every reply, errors included, and the
//! whole window up to the grant served.

use std::time::Instant;

use rpcrdma_codec::rpc::AcceptStat;
use rpcrdma_codec::v1::{HeaderBuilder, Proc};
use rpcrdma_codec::xdr::Encode;

use super::steps::{null_round_trip, start, v1};
use crate::engine::{expect, Check, CheckInfo, Ctx, Judged, OrFail, Outcome, Received, Verdict};

fn grant_in_errors(ctx: &mut Ctx) -> Judged {
    start(ctx)?;
    let want = "a non-zero rdma_credit in the ERR_CHUNK reply and in the RPC reply";
    let call = ctx.null();
    let got = ctx.call(&HeaderBuilder::msg(call.xid, call.credit).raw_proc(5).encode_to_vec());
    let (_, h) = expect::err_chunk(&got, call.xid).or_fail(want)?;
    let err = h.credit;
    let f = null_round_trip(ctx)?;
    Ok(Verdict::pass(want, format!("ERR_CHUNK granted {err}, the NULL reply granted {}", v1(&f).credit)))
}

/// The most credits window-served asks for, and the most calls it keeps outstanding: well
/// within the send queue of the verbs transport (512 work requests).
const WINDOW_LIMIT: u32 = 256;

fn window_served(ctx: &mut Ctx) -> Judged {
    start(ctx)?;
    // Ask for more than any peer grants, so the grant is the peer's own limit.
    let mut probe = ctx.null();
    probe.credit = WINDOW_LIMIT;
    let got = ctx.call(&probe.msg());
    let (_, h) = expect::rpc_accepted(&got, probe.xid, AcceptStat::Success)
        .or_fail("RDMA_MSG reply to the NULL call with accept_stat SUCCESS")?;
    let grant = h.credit;
    let window = grant.min(WINDOW_LIMIT);
    // Post receives for every reply the grant lets us have outstanding.
    let posted = ctx.options.credits_requested;
    if window > posted {
        let size = ctx.options.receive_size as usize;
        ctx.conn()
            .post_recv(size, (window - posted) as usize)
            .map_err(|e| Verdict::fail("receives posted for the whole grant", format!("post_recv: {e}")))?;
    }
    let capped = if window < grant { format!(" (capped at {WINDOW_LIMIT})") } else { String::new() };
    let want = format!("all {window} NULL calls sent back to back (the grant was {grant}{capped}) answered");
    let calls: Vec<_> = (0..window)
        .map(|_| {
            let mut c = ctx.null();
            c.credit = window;
            c
        })
        .collect();
    for c in &calls {
        ctx.send(&c.msg()).map_err(|e| Verdict::fail(&want, format!("send failed: {e}")))?;
    }
    let deadline = Instant::now() + ctx.options.timeout * 2;
    let mut answered = std::collections::BTreeSet::new();
    while answered.len() < calls.len() {
        match ctx.recv_until(deadline) {
            Received::Message(f) => match f.fixed() {
                Some(x) if calls.iter().any(|c| c.xid == x.xid) && Proc(x.proc_) == Proc::RDMA_MSG => {
                    answered.insert(x.xid);
                }
                Some(x) => return Err(Verdict::fail(&want, format!("xid {:#x} rdma_proc {}", x.xid, x.proc_))),
                None => return Err(Verdict::fail(&want, format!("a reply that does not decode: {f}"))),
            },
            other => {
                let got = format!("{} after {} of {window} replies", other.describe(), answered.len());
                return Err(Verdict::fail(&want, got));
            }
        }
    }
    Ok(Verdict::pass(want, format!("{window} of {window} answered")))
}

fn credit_request_one(ctx: &mut Ctx) -> Judged {
    start(ctx)?;
    let want = "a non-zero grant in reply to a call requesting one credit";
    let mut call = ctx.null();
    call.credit = 1;
    let got = ctx.call(&call.msg());
    let (_, h) = expect::reply_to(&got, call.xid).or_fail(want)?;
    let n = expect::credit_granted(h).or_fail(want)?;
    Ok(Verdict::pass(want, format!("granted {n}")))
}

pub static CHECKS: [Check; 3] = [
    Check {
        info: CheckInfo {
            id: "rfc8166/3.3.1/grant-nonzero-in-errors",
            judges: &["rfc8166/3.3.1#2"],
            acceptable: "every reply, RDMA_ERROR included, carries rdma_credit > 0",
            rationale: "A zero grant in an error reply stalls a requester that honours it.",
            groups: &["credits", "errors"],
            broken_by: &[("zero-credit", Outcome::Fail)],
            precondition: None,
        },
        run: grant_in_errors,
    },
    Check {
        info: CheckInfo {
            id: "rfc8166/3.3.1/window-served",
            judges: &["rfc5666/6#2", "rfc8166/3.3.1#4"],
            acceptable: "as many calls sent back to back as the peer granted (we request and post receives for up to 256) are all answered",
            rationale: "A responder that grants more credits than it has posted receives makes a conformant requester hit receiver-not-ready.",
            groups: &["credits"],
            broken_by: &[("short-receive-window", Outcome::Fail), ("overgrant", Outcome::Fail)],
            precondition: None,
        },
        run: window_served,
    },
    Check {
        info: CheckInfo {
            id: "rfc8166/3.3.1/credit-request-one",
            judges: &["rfc8166/3.3.1#2"],
            acceptable: "any non-zero grant",
            rationale: "A requester asking for one credit must still be granted at least one.",
            groups: &["credits"],
            broken_by: &[("zero-credit", Outcome::Fail)],
            precondition: None,
        },
        run: credit_request_one,
    },
];
