//! The transport header: the sanity NULL call, version mismatch, invalid procedures,
//! messages a responder must discard, and XDR errors that must get ERR_CHUNK (RFC 8166 4.2,
//! 4.5, 4.6).

use rpcrdma_codec::rpc::AcceptStat;
use rpcrdma_codec::v1::HeaderBuilder;
use rpcrdma_codec::xdr::Encode;

use rpcrdma_codec::check::{rules, Rule};
use rpcrdma_peers::proto::nfs3::{self, NFSPROC3_READ, NFSPROC3_READDIR};
use rpcrdma_peers::transport::Access;

use super::steps::{expect_discard, expect_err_chunk, lookup, null_round_trip, start, v1};
use crate::engine::{expect, Check, CheckInfo, Ctx, Judged, OrFail, Outcome, Received, Verdict};

fn null_call(ctx: &mut Ctx) -> Judged {
    start(ctx)?;
    let want = "RDMA_MSG reply echoing the XID, RPC accept_stat SUCCESS, non-zero credit grant";
    let f = null_round_trip(ctx)?;
    let h = v1(&f);
    if h.credit == 0 {
        return Err(Verdict::fail(want, "rdma_credit 0"));
    }
    Ok(Verdict::pass(want, format!("{} granting {} credits", h.body.describe(), h.credit)))
}

/// Sends a NULL call whose header says version `vers`.
fn version_mismatch(ctx: &mut Ctx, vers: u32) -> Judged {
    start(ctx)?;
    let call = ctx.null();
    let got = ctx.call(&call.msg_with(|b| b.raw_vers(vers)));
    let want = format!("RDMA_ERROR ERR_VERS with rdma_xid {:#010x}, rdma_vers {vers}, a range containing 1", call.xid);
    let e = expect::err_vers(&got, call.xid, vers).or_fail(&want)?;
    let alive = ctx.liveness();
    let actual = format!("ERR_VERS; connection {}", if alive { "survived" } else { "closed" });
    if e.lax {
        // RFC 5666 4.2 allowed a version valid at the receiver instead of the echo.
        return Ok(Verdict::lax(
            want,
            format!("{actual}; rdma_vers 1 instead of the request's {vers} (RFC 5666 behaviour)"),
        ));
    }
    Ok(Verdict::pass(want, actual))
}

fn vers_mismatch(ctx: &mut Ctx) -> Judged {
    version_mismatch(ctx, 7)
}

fn vers_zero(ctx: &mut Ctx) -> Judged {
    version_mismatch(ctx, 0)
}

fn invalid_proc(ctx: &mut Ctx, proc_: u32) -> Judged {
    let call = ctx.null();
    expect_err_chunk(ctx, call.xid, &call.msg_with(|b| b.raw_proc(proc_)))
}

fn proc_5(ctx: &mut Ctx) -> Judged {
    invalid_proc(ctx, 5)
}

fn proc_max(ctx: &mut Ctx) -> Judged {
    invalid_proc(ctx, u32::MAX)
}

fn msgp_refused(ctx: &mut Ctx) -> Judged {
    start(ctx)?;
    let call = ctx.null();
    let msg = [HeaderBuilder::msgp(call.xid, call.credit, 8, 1024).encode_to_vec(), call.rpc_bytes()].concat();
    let got = ctx.call(&msg);
    let want = "RDMA_ERROR ERR_CHUNK (SHOULD)";
    match expect::err_chunk(&got, call.xid) {
        Ok(_) => Ok(Verdict::pass(want, "ERR_CHUNK")),
        Err(m) if got == Received::SILENCE => {
            Ok(Verdict::lax(want, format!("{m}: the message was dropped without an error reply")))
        }
        Err(m) => Err(Verdict::fail(want, m)),
    }
}

fn done_discarded(ctx: &mut Ctx) -> Judged {
    let xid = ctx.xid();
    // Padded to the 28-byte minimum so only RDMA_DONE itself is under test.
    let mut msg = HeaderBuilder::done(xid, ctx.options.credits_requested).encode_to_vec();
    msg.resize(28, 0);
    expect_discard(ctx, &msg)
}

fn error_discarded(ctx: &mut Ctx) -> Judged {
    let xid = ctx.xid();
    let msg = HeaderBuilder::err_vers(xid, 1, ctx.options.credits_requested, 1, 1).encode_to_vec();
    expect_discard(ctx, &msg)
}

fn short_message_discarded(ctx: &mut Ctx) -> Judged {
    // An RDMA_MSG header cut to 20 bytes: shorter than the 28-byte minimum.
    let mut msg = ctx.null().msg();
    msg.truncate(20);
    expect_discard(ctx, &msg)
}

fn nomsg_without_chunks(ctx: &mut Ctx) -> Judged {
    let call = ctx.null();
    expect_err_chunk(ctx, call.xid, &call.nomsg())
}

fn xid_mismatch(ctx: &mut Ctx) -> Judged {
    let rdma_xid = ctx.xid();
    let mut call = ctx.null();
    call.xid = rdma_xid.wrapping_add(0x100);
    expect_err_chunk(ctx, rdma_xid, &call.msg_with_rdma_xid(rdma_xid))
}

fn truncated_read_list(ctx: &mut Ctx) -> Judged {
    // One read-list entry cut after its handle (golden vector: 28 bytes, "1 P H").
    let xid = ctx.xid();
    let msg = ctx.golden("v1/trunc-28-after-handle", xid);
    expect_err_chunk(ctx, xid, &msg)
}

fn not_bool_discriminator(ctx: &mut Ctx) -> Judged {
    // RDMA_NOMSG whose write-list discriminator is 7 (golden vector).
    let xid = ctx.xid();
    let msg = ctx.golden("v1/notbool-writes-7", xid);
    expect_err_chunk(ctx, xid, &msg)
}

fn huge_segment_count(ctx: &mut Ctx) -> Judged {
    // A write chunk claiming 2^32 - 1 segments in a 40-byte message (golden vector).
    let xid = ctx.xid();
    let msg = ctx.golden("v1/count-write-ffffffff", xid);
    expect_err_chunk(ctx, xid, &msg)
}

fn msg_without_payload(ctx: &mut Ctx) -> Judged {
    let call = ctx.null();
    let msg = HeaderBuilder::msg(call.xid, call.credit).encode_to_vec();
    expect_err_chunk(ctx, call.xid, &msg)
}

fn error_reply_form(ctx: &mut Ctx) -> Judged {
    start(ctx)?;
    let want = "ERR_CHUNK exactly 20 bytes (xid, vers 1, credit, RDMA_ERROR, ERR_CHUNK) and ERR_VERS exactly 28 bytes echoing the request's rdma_vers";
    let call = ctx.null();
    let got = ctx.call(&HeaderBuilder::msg(call.xid, call.credit).raw_proc(5).encode_to_vec());
    if let Received::Message(f) = &got {
        if f.len() != 20 {
            return Err(Verdict::fail(want, format!("ERR_CHUNK reply of {} bytes: {}", f.len(), got.describe())));
        }
    }
    expect::err_chunk(&got, call.xid).or_fail(want)?;
    let call = ctx.null();
    let got = ctx.call(&call.msg_with(|b| b.raw_vers(9)));
    if let Received::Message(f) = &got {
        if f.len() != 28 {
            return Err(Verdict::fail(want, format!("ERR_VERS reply of {} bytes", f.len())));
        }
    }
    let e = expect::err_vers(&got, call.xid, 9).or_fail(want)?;
    if e.lax {
        // RFC 5666 4.2 let the responder put a version it supports in rdma_vers; RFC 8166 4.5
        // says the failing request's version.
        let got = format!("ERR_CHUNK 20 bytes, ERR_VERS 28 bytes, but rdma_vers {} instead of the request's 9", e.vers);
        return Ok(Verdict::lax(want, got));
    }
    Ok(Verdict::pass(want, "ERR_CHUNK 20 bytes, ERR_VERS 28 bytes echoing rdma_vers 9"))
}

fn reply_version_one(ctx: &mut Ctx) -> Judged {
    start(ctx)?;
    let want = "the reply to a NULL call with rdma_vers 1";
    let call = ctx.null();
    let got = ctx.call(&call.msg());
    let f = expect::message(&got).or_fail(want)?;
    match f.fixed() {
        Some(x) if x.xid == call.xid && x.vers == 1 => {}
        Some(x) if x.xid == call.xid => return Err(Verdict::fail(want, format!("rdma_vers {} in the reply", x.vers))),
        _ => return Err(Verdict::fail(want, got.describe())),
    }
    expect::rpc_accepted(&got, call.xid, AcceptStat::Success).or_fail(want)?;
    Ok(Verdict::pass(want, "rdma_vers 1"))
}

/// Fails when `got` is a Version One message that breaks `rule` (RDMA_MSGP or RDMA_DONE sent).
fn not_sent(got: &Received, rule: Rule, after: &str, want: &str) -> Result<(), Verdict> {
    let header = got.frame().and_then(|f| f.v1());
    match header.and_then(|h| h.violations.iter().find(|v| *v.rule == rule)) {
        Some(v) => Err(Verdict::fail(want, format!("{after}: {v}"))),
        None => Ok(()),
    }
}

/// Every reply form: inline (NULL), a READ's data through a write chunk, a long READDIR
/// through a reply chunk (after which RFC 5666 requesters sent RDMA_DONE), then a silence
/// window for anything sent after it; none of these messages may break `rule`.
fn retired_proc_not_sent(ctx: &mut Ctx, rule: Rule, want: &str) -> Judged {
    ctx.options.receive_size = 1024;
    start(ctx)?;
    let call = ctx.null();
    let got = ctx.call(&call.msg());
    not_sent(&got, rule, "the NULL reply", want)?;
    expect::rpc_accepted(&got, call.xid, AcceptStat::Success).or_fail(want)?;
    let fh = lookup(ctx, nfs3::FILE_FIVE)?;
    let region = ctx.register(16, Access::WRITE);
    let mut call = ctx.nfs3(NFSPROC3_READ, nfs3::read_args(&fh, 0, 16));
    call.writes = vec![vec![region.segment()]];
    let got = ctx.call(&call.msg());
    not_sent(&got, rule, "the READ reply", want)?;
    expect::rpc_accepted(&got, call.xid, AcceptStat::Success).or_fail(want)?;
    let dir = lookup(ctx, nfs3::DIR_MANY)?;
    let region = ctx.register(16384, Access::WRITE);
    let mut call = ctx.nfs3(NFSPROC3_READDIR, nfs3::readdir_args(&dir, 0, [0; 8], 8192));
    call.reply = Some(vec![region.segment()]);
    let got = ctx.call(&call.msg());
    not_sent(&got, rule, "the READDIR reply", want)?;
    expect::reply_to(&got, call.xid).or_fail(want)?;
    let after = ctx.expect_silence();
    not_sent(&after, rule, "after the READDIR reply", want)?;
    Ok(Verdict::pass(
        want,
        "replies to a NULL, a READ through a write chunk and a READDIR through a reply chunk, then nothing",
    ))
}

fn no_msgp_sent(ctx: &mut Ctx) -> Judged {
    let want = "no RDMA_MSGP among the replies to a NULL, a READ through a write chunk and a long READDIR through a reply chunk, nor after them";
    retired_proc_not_sent(ctx, rules::MSGP_SENT, want)
}

fn no_done_sent(ctx: &mut Ctx) -> Judged {
    let want = "no RDMA_DONE among the replies to a NULL, a READ through a write chunk and a long READDIR through a reply chunk, nor after them";
    retired_proc_not_sent(ctx, rules::DONE_SENT, want)
}

pub static CHECKS: [Check; 19] = [
    Check {
        info: CheckInfo {
            id: "rfc8166/4.2.4/null-call",
            judges: &["~rfc8166/4.2.1#1", "~rfc8166/4.2.4#1"],
            acceptable: "an RDMA_MSG reply echoing the XID with accept_stat SUCCESS and a non-zero credit grant",
            rationale: "The sanity baseline: a NULL call with no chunks must round-trip before anything else means anything.",
            groups: &["header", "sanity"],
            broken_by: &[("zero-credit", Outcome::Fail), ("reply-wrong-version", Outcome::Fail)],
            precondition: None,
        },
        run: null_call,
    },
    Check {
        info: CheckInfo {
            id: "rfc8166/4.5.1/vers-mismatch",
            judges: &["rfc8166/4.5#4", "~rfc8166/4.5#5", "rfc8166/4.5.1#1"],
            acceptable: "ERR_VERS echoing the rdma_xid and rdma_vers, with low <= 1 <= high (rdma_vers 1 instead of the echo is RFC 5666 behaviour: pass-lax)",
            rationale: "Version negotiation is how Version Two requesters fall back to Version One.",
            groups: &["header", "errors"],
            broken_by: &[
                ("err-vers-wrong-xid", Outcome::Fail),
                ("err-vers-bad-range", Outcome::Fail),
                ("ignore-bad-version", Outcome::Fail),
                ("err-vers-no-echo", Outcome::PassLax),
            ],
            precondition: None,
        },
        run: vers_mismatch,
    },
    Check {
        info: CheckInfo {
            id: "rfc8166/4.5.1/vers-zero",
            judges: &["~rfc8166/4.5#4", "~rfc8166/4.5#5", "rfc8166/4.5.1#1"],
            acceptable: "ERR_VERS echoing the rdma_xid, with a range containing 1 (rdma_vers 1 instead of the echoed 0 is RFC 5666 behaviour: pass-lax)",
            rationale: "Version zero is the most likely corrupted value; it must not be mistaken for version one.",
            groups: &["header", "errors"],
            broken_by: &[("ignore-bad-version", Outcome::Fail), ("err-vers-no-echo", Outcome::PassLax)],
            precondition: None,
        },
        run: vers_zero,
    },
    Check {
        info: CheckInfo {
            id: "rfc8166/4.5.2/invalid-proc",
            judges: &["~rfc8166/4.2.2#1", "~rfc8166/4.5#4", "~rfc8166/4.5#5", "~rfc8166/4.5#6", "rfc8166/4.5.2#1"],
            acceptable: "ERR_CHUNK echoing the rdma_xid",
            rationale: "rdma_proc 5 is the first value past the union; a responder that guesses a body misparses.",
            groups: &["header", "errors"],
            broken_by: &[("no-err-chunk", Outcome::Fail)],
            precondition: None,
        },
        run: proc_5,
    },
    Check {
        info: CheckInfo {
            id: "rfc8166/4.5.2/invalid-proc-max",
            judges: &["~rfc8166/4.5#4", "rfc8166/4.5.2#1"],
            acceptable: "ERR_CHUNK echoing the rdma_xid",
            rationale: "0xffffffff catches decoders that read rdma_proc as a signed index.",
            groups: &["header", "errors"],
            broken_by: &[("no-err-chunk", Outcome::Fail)],
            precondition: None,
        },
        run: proc_max,
    },
    Check {
        info: CheckInfo {
            id: "rfc8166/4.6.1/msgp-refused",
            judges: &["~rfc8166/4.6.1#2"],
            acceptable: "ERR_CHUNK (silence is pass-lax)",
            rationale: "RDMA_MSGP was never interoperable; RFC 8166 retired it.",
            groups: &["header", "errors", "padding"],
            broken_by: &[("no-err-chunk", Outcome::PassLax)],
            precondition: None,
        },
        run: msgp_refused,
    },
    Check {
        info: CheckInfo {
            id: "rfc8166/4.6.2/done-discarded",
            judges: &["rfc8166/4.6.2#2"],
            acceptable: "no reply, and the connection keeps answering",
            rationale: "Answering a retired procedure invites reply storms.",
            groups: &["header", "discard"],
            broken_by: &[("answer-error-and-done", Outcome::Fail)],
            precondition: None,
        },
        run: done_discarded,
    },
    Check {
        info: CheckInfo {
            id: "rfc8166/4.2.4/error-discarded",
            judges: &["rfc8166/4.2.4#4"],
            acceptable: "no reply, and the connection keeps answering",
            rationale: "Two peers answering each other's errors would loop forever.",
            groups: &["header", "discard", "errors"],
            broken_by: &[("answer-error-and-done", Outcome::Fail)],
            precondition: None,
        },
        run: error_discarded,
    },
    Check {
        info: CheckInfo {
            id: "rfc8166/4.5/short-message-discarded",
            judges: &["rfc8166/4.5#1"],
            acceptable: "no reply, and the connection keeps answering",
            rationale: "An error reply to a message whose XID cannot be trusted would complete the wrong RPC.",
            groups: &["header", "discard"],
            broken_by: &[("answer-short-messages", Outcome::Fail)],
            precondition: None,
        },
        run: short_message_discarded,
    },
    Check {
        info: CheckInfo {
            id: "rfc8166/4.5.2/nomsg-without-chunks",
            judges: &["rfc8166/4.5.2#1"],
            acceptable: "ERR_CHUNK echoing the rdma_xid",
            rationale: "RFC 8166 4.5.2 names this exact case as an XDR error.",
            groups: &["header", "errors", "chunks"],
            broken_by: &[("no-err-chunk", Outcome::Fail)],
            precondition: None,
        },
        run: nomsg_without_chunks,
    },
    Check {
        info: CheckInfo {
            id: "rfc8166/4.5.2/xid-mismatch",
            judges: &["rfc8166/4.5.2#1"],
            acceptable: "ERR_CHUNK echoing the rdma_xid",
            rationale: "A responder that trusts either XID alone can complete the wrong transaction.",
            groups: &["header", "errors"],
            broken_by: &[("accept-xid-mismatch", Outcome::Fail)],
            precondition: None,
        },
        run: xid_mismatch,
    },
    Check {
        info: CheckInfo {
            id: "rfc8166/4.5.2/truncated-read-list",
            judges: &["rfc8166/4.5.2#1"],
            acceptable: "ERR_CHUNK echoing the rdma_xid",
            rationale: "A read segment cut short must not be read past the end of the receive buffer.",
            groups: &["chunks", "errors"],
            broken_by: &[("no-err-chunk", Outcome::Fail)],
            precondition: None,
        },
        run: truncated_read_list,
    },
    Check {
        info: CheckInfo {
            id: "rfc8166/4.5.2/not-bool-discriminator",
            judges: &["rfc8166/4.5.2#1"],
            acceptable: "ERR_CHUNK echoing the rdma_xid",
            rationale: "An optional-data discriminator of 7 is not TRUE (RFC 4506 4.19); treating it as TRUE misparses the list.",
            groups: &["chunks", "errors"],
            broken_by: &[("no-err-chunk", Outcome::Fail)],
            precondition: None,
        },
        run: not_bool_discriminator,
    },
    Check {
        info: CheckInfo {
            id: "rfc8166/4.5.2/huge-segment-count",
            judges: &["rfc8166/4.5.2#1"],
            acceptable: "ERR_CHUNK echoing the rdma_xid",
            rationale: "A segment count of 2^32-1 in a short message must fail fast, not allocate or loop.",
            groups: &["chunks", "errors"],
            broken_by: &[("no-err-chunk", Outcome::Fail)],
            precondition: None,
        },
        run: huge_segment_count,
    },
    Check {
        info: CheckInfo {
            id: "rfc8166/4.5.2/msg-without-payload",
            judges: &["rfc8166/4.5.2#1"],
            acceptable: "ERR_CHUNK echoing the rdma_xid",
            rationale: "An RDMA_MSG with nothing after the chunk lists has no RPC message to process (RFC 8166 4.2.4: the Payload stream follows, beginning with its XID field).",
            groups: &["header", "errors"],
            broken_by: &[("no-err-chunk", Outcome::Fail)],
            precondition: None,
        },
        run: msg_without_payload,
    },
    Check {
        info: CheckInfo {
            id: "rfc8166/4.5/error-reply-form",
            judges: &["~rfc8166/4.5#4", "~rfc8166/4.5#5", "~rfc8166/4.5#6"],
            acceptable: "ERR_CHUNK of exactly 20 bytes and ERR_VERS of exactly 28 bytes, each echoing xid and version (ERR_VERS with rdma_vers 1 instead of the echo is RFC 5666 behaviour: pass-lax)",
            rationale: "Trailing bytes after an error body are undecodable under RFC 8166's union (no default arm).",
            groups: &["header", "errors"],
            broken_by: &[("err-chunk-trailing", Outcome::Fail), ("err-vers-no-echo", Outcome::PassLax)],
            precondition: None,
        },
        run: error_reply_form,
    },
    Check {
        info: CheckInfo {
            id: "rfc8166/4.2.2/reply-version-one",
            judges: &["rfc8166/4.2.2#1"],
            acceptable: "an RDMA_MSG reply to a Version One NULL call with rdma_vers 1",
            rationale: "A requester that checks rdma_vers discards a reply with any other value, and the RPC never completes.",
            groups: &["header"],
            broken_by: &[("reply-wrong-version", Outcome::Fail)],
            precondition: None,
        },
        run: reply_version_one,
    },
    Check {
        info: CheckInfo {
            id: "rfc8166/4.6.1/no-msgp-sent",
            judges: &["rfc8166/4.6.1#1"],
            acceptable: "RDMA_MSG or RDMA_NOMSG replies to a NULL, a READ through a write chunk and a READDIR through a reply chunk; no RDMA_MSGP after them",
            rationale: "RFC 8166 retires RDMA_MSGP; a requester that follows it refuses or discards such a reply (4.6.1), so the RPC is lost.",
            groups: &["header"],
            broken_by: &[("reply-msgp", Outcome::Fail)],
            precondition: None,
        },
        run: no_msgp_sent,
    },
    Check {
        info: CheckInfo {
            id: "rfc8166/4.6.2/no-done-sent",
            judges: &["rfc8166/4.6.2#1"],
            acceptable: "no RDMA_DONE in answer to a NULL, a READ through a write chunk or a READDIR through a reply chunk, nor in the silence after them",
            rationale: "RFC 8166 retires RDMA_DONE; a message nobody expects consumes a receive and a credit of the requester.",
            groups: &["header", "reply-chunk"],
            broken_by: &[("done-after-reply-chunk", Outcome::Fail)],
            precondition: None,
        },
        run: no_done_sent,
    },
];
