//! Credits (RFC 8166 3.3.1): a non-zero grant in every reply, errors included, and the
//! whole window up to the grant served.

use std::time::Instant;

use rpcrdma_codec::check::KeyWord;
use rpcrdma_codec::v1::{FixedFields, HeaderBuilder};

use super::{null_round_trip, start};
use crate::engine::{expect, Check, Ctx, Received, Verdict};

fn grant_in_errors(ctx: &mut Ctx) -> Verdict {
    if let Err(v) = start(ctx) {
        return v;
    }
    let want = "a non-zero rdma_credit in the ERR_CHUNK reply and in the RPC reply";
    let xid = ctx.xid();
    let mut buf = [0u8; 28];
    let n = HeaderBuilder::msg(xid, ctx.options.credits_requested).raw_proc(5).encode(&mut buf).expect("28");
    let ex = ctx.call(xid, &buf[..n]);
    let err = match expect::err_chunk(&ex.received, xid) {
        Ok(r) => r.message().header.credit,
        Err(got) => return Verdict::fail(want, got),
    };
    match null_round_trip(ctx) {
        Ok(r) => Verdict::pass(
            want,
            format!("ERR_CHUNK granted {err}, the NULL reply granted {}", r.message().header.credit),
        ),
        Err(v) => v,
    }
}

fn window_served(ctx: &mut Ctx) -> Verdict {
    if let Err(v) = start(ctx) {
        return v;
    }
    let grant = match null_round_trip(ctx) {
        Ok(r) => r.message().header.credit,
        Err(v) => return v,
    };
    // We can only keep as many calls outstanding as we posted receives for replies.
    let window = grant.min(ctx.options.credits_requested);
    let want = format!("all {window} NULL calls sent back to back (the grant was {grant}) answered");
    let xids: Vec<u32> = (0..window).map(|_| ctx.xid()).collect();
    for &x in &xids {
        let m = ctx.null_call(x);
        if let Err(e) = ctx.send(&m) {
            return Verdict::fail(&want, format!("send failed: {e}"));
        }
    }
    let deadline = Instant::now() + ctx.options.timeout * 2;
    let mut answered = std::collections::BTreeSet::new();
    while answered.len() < xids.len() {
        match ctx.recv_until(deadline) {
            Received::Message { bytes, .. } => match FixedFields::decode(&bytes) {
                Ok(f) if xids.contains(&f.xid) && f.proc_ == 0 => {
                    answered.insert(f.xid);
                }
                Ok(f) => return Verdict::fail(&want, format!("xid {:#x} rdma_proc {}", f.xid, f.proc_)),
                Err(e) => return Verdict::fail(&want, format!("a reply that does not decode: {e}")),
            },
            other => {
                return Verdict::fail(
                    &want,
                    format!("{} after {} of {window} replies", other.describe(), answered.len()),
                )
            }
        }
    }
    Verdict::pass(want, format!("{window} of {window} answered"))
}

fn credit_request_one(ctx: &mut Ctx) -> Verdict {
    if let Err(v) = start(ctx) {
        return v;
    }
    let want = "a non-zero grant in reply to a call requesting one credit";
    let xid = ctx.xid();
    let mut msg = ctx.null_call(xid);
    msg[8..12].copy_from_slice(&1u32.to_be_bytes());
    let ex = ctx.call(xid, &msg);
    match expect::reply_to(&ex.received, xid).and_then(|r| expect::credit_granted(&r)) {
        Ok(n) => Verdict::pass(want, format!("granted {n}")),
        Err(got) => Verdict::fail(want, got),
    }
}

pub static CHECKS: [Check; 3] = [
    Check {
        id: "rfc8166/3.3.1/grant-nonzero-in-errors",
        requirement: "The granted value MUST NOT be zero, since such a value would result in deadlock.",
        key_word: KeyWord::MustNot,
        acceptable: "every reply, RDMA_ERROR included, carries rdma_credit > 0",
        rationale: "A zero grant in an error reply stalls a requester that honours it.",
        groups: &["credits", "errors"],
        run: grant_in_errors,
    },
    Check {
        id: "rfc8166/3.3.1/window-served",
        requirement: "A Requester MUST NOT send unacknowledged requests in excess of the Responder's granted credit limit. ... The Responder MUST ensure that an increase in receive resources is effected before the next RPC Reply message is sent.",
        key_word: KeyWord::Must,
        acceptable: "as many concurrent calls as granted (up to our own receive window) are all answered",
        rationale: "A responder that grants more credits than it has posted receives makes a conformant requester hit receiver-not-ready.",
        groups: &["credits"],
        run: window_served,
    },
    Check {
        id: "rfc8166/3.3.1/credit-request-one",
        requirement: "The requested and granted credit values MAY be adjusted to match the needs or policies in effect on either peer. ... The granted value MUST NOT be zero, since such a value would result in deadlock.",
        key_word: KeyWord::MustNot,
        acceptable: "any non-zero grant",
        rationale: "A requester asking for one credit must still be granted at least one.",
        groups: &["credits"],
        run: credit_request_one,
    },
];
