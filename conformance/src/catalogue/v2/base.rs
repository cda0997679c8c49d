//! The base draft (v2-01): negotiation, rdma_direction, the same version in replies as in
//! calls, and error handling as in Version One with the Version Two codes.

use rpcrdma_codec::chunk::ReadSegment;
use rpcrdma_codec::profile::V2Envelope;
use rpcrdma_codec::v2::{ErrorBody, ErrorInfo, HeaderBuilder, MsgType, OptInfo};
use rpcrdma_codec::xcharext::{self, ReqXch, UpdXch, XcharSpec, XcharVal};

use super::messages::{
    alive_v2, build, ending, error_named, expect_no_answer, negotiate_v2, null_rpc, optional_v2, rpc_reply_ok,
    start_v2, v2, v2_answer, v2_call, v2_error, v2_lookup, xchar_msg, xcharext_numbered,
};
use crate::catalogue::steps::{null_round_trip, start};
use rpcrdma_peers::proto::nfs3::{self, NFSPROC3_READ, NFSPROC3_WRITE};

use crate::engine::{expect, Check, CheckInfo, Ctx, Judged, NoMessage, OrFail, Outcome, Received, Verdict};
use crate::frame::v2::{Body, Op};

fn optional_first_message(ctx: &mut Ctx) -> Judged {
    xcharext_numbered(ctx, "ROPT_REQXCH")?;
    start(ctx)?;
    let xid = ctx.xid();
    let spec = [XcharVal::new(xcharext::XCHAR_RBSIZ, &[0, 0, 0x10, 0])];
    let op = xcharext::Op::ReqXch(ReqXch { want: XcharSpec::new(&spec, ctx.profile().property_ids) });
    let got = ctx.call(&xchar_msg(ctx, xid, op));
    let want = "ERR_VERS with a range holding 1 and not 2 (Version One peer), or a Version Two answer echoing the \
        rdma_xid: ROPT_RESPXCH or RDMA2_ERR_INVAL_OPTION";
    if let Some(e) = got.frame().and_then(|f| f.err_vers) {
        expect::err_vers(&got, xid, 2).or_fail(want)?;
        let range = format!("ERR_VERS {}..{}", e.low, e.high);
        if (e.low..=e.high).contains(&2) {
            return Err(Verdict::fail(want, format!("{range} although the range holds 2")));
        }
        return Ok(Verdict::pass(want, format!("{range}: Version One peer")));
    }
    let (_, h) = v2_answer(&got, xid).or_fail(want)?;
    match h.body {
        Body::Error(ErrorInfo { body: ErrorBody::InvalOption, .. }) => {
            Ok(Verdict::pass(want, "RDMA2_ERR_INVAL_OPTION"))
        }
        Body::Optional { op: Op::RespXch { .. }, .. } => Ok(Verdict::pass(want, "ROPT_RESPXCH")),
        _ => Err(Verdict::fail(want, h.to_string())),
    }
}

fn reply_direction(ctx: &mut Ctx) -> Judged {
    let want = "RDMA2_MSG with rdma_vers 2, rdma_direction REPLY, a non-zero grant and accept_stat SUCCESS";
    if ctx.profile().v2_envelope == V2Envelope::Draft00 {
        return Err(Verdict::unsupported(want, "the -00 envelope (v2-00) has no rdma_direction"));
    }
    let f = start_v2(ctx)?;
    let h = v2(&f);
    let form = rpc_reply_ok(&f, h, h.xid).or_fail(want)?;
    Ok(Verdict::pass(want, format!("{form} REPLY granting {} credits", h.credit)))
}

fn nomsg_same_version(ctx: &mut Ctx) -> Judged {
    start_v2(ctx)?;
    let call = ctx.null();
    let src = ctx.source(&call.rpc_bytes());
    let reads = [ReadSegment { position: 0, target: src.segment() }];
    let msg =
        build(ctx, HeaderBuilder::nomsg(call.xid, ctx.options.credits_requested, MsgType::CALL).read_list(&reads));
    let want = "the call pulled from the position-zero read chunk and answered with a Version Two reply (rdma_vers 2)";
    let got = ctx.call(&msg);
    let (f, h) = v2_answer(&got, call.xid).or_fail(want)?;
    let form = rpc_reply_ok(f, h, call.xid).or_fail(want)?;
    Ok(Verdict::pass(want, format!("{form} REPLY, rdma_vers 2")))
}

fn err_vers_range(ctx: &mut Ctx) -> Judged {
    start_v2(ctx)?;
    let xid = ctx.xid();
    let rpc = null_rpc(xid);
    let msg =
        build(ctx, HeaderBuilder::msg(xid, ctx.options.credits_requested, MsgType::CALL).raw_vers(3).payload(&rpc));
    let want = "ERR_VERS echoing the rdma_xid and rdma_vers 3, with an ordered range holding 1 and 2";
    let got = ctx.call(&msg);
    let e = expect::err_vers(&got, xid, 3).or_fail(want)?;
    let actual = format!("ERR_VERS {}..{}", e.low, e.high);
    if !(e.low..=e.high).contains(&2) {
        return Err(Verdict::fail(want, format!("{actual} although the peer answers Version Two")));
    }
    if e.lax {
        return Ok(Verdict::lax(want, format!("{actual}; rdma_vers {} instead of the request's 3", e.vers)));
    }
    Ok(Verdict::pass(want, actual))
}

/// Sends `msg` and judges an answer of RDMA2_ERROR `error` (RDMA2_ERR_BAD_HEADER under
/// -01), then liveness.
fn expect_error(ctx: &mut Ctx, xid: u32, msg: &[u8], error: ErrorBody) -> Judged {
    let want = format!("RDMA2_ERROR {} echoing the rdma_xid, rdma_vers 2", error_named(ctx, error));
    let got = ctx.call(msg);
    v2_error(&got, xid, error).or_fail(&want)?;
    let alive = alive_v2(ctx);
    Ok(Verdict::pass(&want, format!("{}; connection {}", error.name(), if alive { "survived" } else { "closed" })))
}

fn bad_header_truncated(ctx: &mut Ctx) -> Judged {
    start_v2(ctx)?;
    let xid = ctx.xid();
    // RDMA2_MSG CALL whose read list entry stops after its position word and one more
    // word (32 bytes; the -00 envelope has no rdma_direction, the first word).
    let words: &[u32] = match ctx.profile().v2_envelope {
        V2Envelope::Draft01 => &[MsgType::CALL.0, 1, 0, 0x1234],
        V2Envelope::Draft00 => &[1, 0, 0x1234],
    };
    let body: Vec<u8> = words.iter().flat_map(|w| w.to_be_bytes()).collect();
    let msg = build(ctx, HeaderBuilder::msg(xid, ctx.options.credits_requested, MsgType::CALL).raw_body(&body));
    expect_error(ctx, xid, &msg, ErrorBody::unparsable(ctx.profile().v2_error_numbering))
}

fn bad_header_proc(ctx: &mut Ctx) -> Judged {
    start_v2(ctx)?;
    let xid = ctx.xid();
    let rpc = null_rpc(xid);
    // rdma_proc 2 has no arm in the -01 union (wire notes C4); from -02 on an unrecognized
    // rdma_proc gets RDMA2_ERR_INVAL_PROC (wire notes 1.6).
    let b = HeaderBuilder::msg(xid, ctx.options.credits_requested, MsgType::CALL).raw_proc(2).payload(&rpc);
    let msg = build(ctx, b);
    expect_error(ctx, xid, &msg, ErrorBody::unknown_proc(ctx.profile().v2_error_numbering))
}

fn inval_option(ctx: &mut Ctx) -> Judged {
    start_v2(ctx)?;
    let xid = ctx.xid();
    let msg = optional_v2(ctx, xid, 0x7fff_0001, OptInfo::Raw(&[0, 0, 0, 1]), &[]);
    let want = format!("RDMA2_ERROR {} echoing the rdma_xid, rdma_vers 2", error_named(ctx, ErrorBody::InvalOption));
    let got = ctx.call(&msg);
    v2_error(&got, xid, ErrorBody::InvalOption).or_fail(&want)?;
    Ok(Verdict::pass(&want, format!("RDMA2_ERR_INVAL_OPTION; {}", ending(alive_v2(ctx)))))
}

fn error_discarded(ctx: &mut Ctx) -> Judged {
    start_v2(ctx)?;
    let xid = ctx.xid();
    // ERR_VERS (28 bytes): a 20-byte error would meet the Version One 28-byte discard rule
    // (RFC 8166 4.5) instead of the rule under test.
    let e =
        ErrorInfo::new(ErrorBody::Vers { low: 2, high: 2 }, ctx.profile().v2_error_numbering).expect("every revision");
    let msg = build(ctx, HeaderBuilder::error(xid, ctx.options.credits_requested, e));
    expect_no_answer(ctx, &msg, "")
}

// ---------------------------------------------------------------------------------------------

fn inline_4096_call(ctx: &mut Ctx) -> Judged {
    start_v2(ctx)?;
    let want =
        "a Version Two WRITE call of exactly 4096 bytes, sent inline, answered NFS3_OK with the whole count written";
    let fh = v2_lookup(ctx, nfs3::FILE_SCRATCH)?;
    // The WRITE's data sized so that the whole message, transport header included, is 4096.
    let write = |ctx: &mut Ctx, data: &[u8]| {
        let args = [nfs3::write_args_split(&fh, 0, data), data.to_vec()].concat();
        let call = ctx.nfs3(NFSPROC3_WRITE, args);
        let msg = v2_call(ctx, &call);
        (call, msg)
    };
    let (_, empty) = write(ctx, &[]);
    let n = 4096 - empty.len();
    let data = nfs3::file_contents(n);
    let (call, msg) = write(ctx, &data);
    assert_eq!(msg.len(), 4096, "the WRITE call is sized to the threshold");
    let got = ctx.call(&msg);
    let (f, h) = v2_answer(&got, call.xid).or_fail(want)?;
    rpc_reply_ok(f, h, call.xid).or_fail(want)?;
    match nfs3::write_result(expect::results(f).or_fail(want)?) {
        Some((0, count)) if count as usize == n => {
            Ok(Verdict::pass(want, format!("a 4096-byte call ({n} bytes of data) written whole")))
        }
        other => Err(Verdict::fail(want, format!("WRITE3 result {other:?} for {n} bytes"))),
    }
}

/// Bytes of `big` (70000 bytes) inline-4096-reply READs: a reply of more than 1024 bytes and
/// less than 4096, and one of more than 4096.
const READ_3000: u32 = 3000;
const READ_5000: u32 = 5000;

fn inline_4096_reply(ctx: &mut Ctx) -> Judged {
    // No private data: nothing tells the peer our receive size (for Version One, RFC 8797 5.1
    // would mean 1024 bytes); Version Two's default is 4096 (v2-01 2.3, 5.1).
    ctx.connect_with(&[]).or_fail("a connection without private data")?;
    negotiate_v2(ctx)?;
    let fh = v2_lookup(ctx, nfs3::FILE_BIG)?;
    let want = "to calls offering no reply chunk: a Version Two READ reply of more than 1024 and at most 4096 bytes \
        sent inline (RDMA2_MSG REPLY, NFS3_OK with the 3000 bytes of `big`), and none over 4096 bytes";
    let call = ctx.nfs3(NFSPROC3_READ, nfs3::read_args(&fh, 0, READ_3000));
    let got = ctx.call(&v2_call(ctx, &call));
    let (f, h) = v2_answer(&got, call.xid).or_fail(want)?;
    rpc_reply_ok(f, h, call.xid).or_fail(want)?;
    let results = expect::results(f).or_fail(want)?;
    let rr = nfs3::read_result(results).ok_or("READ3 results that do not decode").or_fail(want)?;
    let data = results.get(rr.data_at..rr.data_at + rr.data_len as usize).unwrap_or_default();
    let contents = nfs3::file_contents(70_000);
    if rr.status != nfs3::NFS3_OK || data != &contents[..READ_3000 as usize] {
        let got = format!("READ3 status {} with {} of the {READ_3000} bytes asked for", rr.status, data.len());
        return Err(Verdict::fail(want, got));
    }
    if !(1025..=4096).contains(&f.len()) {
        return Err(Verdict::fail(want, format!("a {}-byte reply", f.len())));
    }
    let inline = format!("a {}-byte RDMA2_MSG reply, inline, with the data", f.len());
    // The other side of the same assumption: a reply that does not fit 4096 bytes must not be
    // sent inline (our receives are 4096 bytes).
    let call = ctx.nfs3(NFSPROC3_READ, nfs3::read_args(&fh, 0, READ_5000));
    // Any answer within 4096 bytes, silence or a closed connection (RFC 8166 4.5.4) keeps it.
    match ctx.call(&v2_call(ctx, &call)) {
        Received::Nothing(NoMessage::RecvFailed(s)) => {
            let got = format!("{inline}; but our 4096-byte receive failed ({}) for a 5000-byte READ", s.name());
            Err(Verdict::fail(want, got))
        }
        Received::Message(f) if f.len() > 4096 => {
            Err(Verdict::fail(want, format!("{inline}; but a {}-byte message for a 5000-byte READ", f.len())))
        }
        other => Ok(Verdict::pass(want, format!("{inline}; {} for a 5000-byte READ", other.describe()))),
    }
}

/// The Receive Buffer Size threshold-change reports by ROPT_UPDXCH: the receives it posts.
const RAISED_RBSIZ: u32 = 8192;

fn threshold_change(ctx: &mut Ctx) -> Judged {
    let want = "the connection kept and every call answered while the inline thresholds change: Version One's 1024 \
        bytes (no private data), Version Two's 4096 once negotiated, our Receive Buffer Size raised to 8192 by \
        ROPT_UPDXCH";
    xcharext_numbered(ctx, "ROPT_UPDXCH")?;
    // Every receive we post is 8192 bytes from the start, so the raise tells the truth
    // (xcharext-02 3.1).
    ctx.options.receive_size = RAISED_RBSIZ;
    ctx.connect_with(&[]).or_fail("a connection without private data")?;
    null_round_trip(ctx)?;
    // A connection lost here fails in the negotiation (no Version Two answer).
    negotiate_v2(ctx)?;
    let fh = v2_lookup(ctx, nfs3::FILE_BIG)?;
    let read = |ctx: &mut Ctx, when: &str| -> Result<String, Verdict> {
        let call = ctx.nfs3(NFSPROC3_READ, nfs3::read_args(&fh, 0, READ_3000));
        let got = ctx.call(&v2_call(ctx, &call));
        let (f, h) = v2_answer(&got, call.xid).map_err(|m| Verdict::fail(want, format!("{when}: {m}")))?;
        let form = match &h.body {
            Body::Msg { .. } => "RDMA2_MSG",
            Body::NoMsg { .. } => "RDMA2_NOMSG",
            Body::Error(e) => e.body.name(),
            Body::Optional { .. } => "RDMA2_OPTIONAL",
        };
        Ok(format!("{when}: a {}-byte {form}", f.len()))
    };
    let first = read(ctx, "READ after the negotiation")?;
    let xid = ctx.xid();
    let size = RAISED_RBSIZ.to_be_bytes();
    let now = XcharVal::new(xcharext::XCHAR_RBSIZ, &size);
    let _ = ctx.send(&xchar_msg(ctx, xid, xcharext::Op::UpdXch(UpdXch { now, pendclr: false })));
    let updxch = match ctx.expect_silence() {
        Received::SILENCE => "ROPT_UPDXCH RBSIZ 8192 taken".to_string(),
        Received::Message(f) => format!("ROPT_UPDXCH RBSIZ 8192 answered {f}"),
        other => return Err(Verdict::fail(want, format!("after ROPT_UPDXCH RBSIZ 8192: {}", other.describe()))),
    };
    let second = read(ctx, "READ after the update")?;
    if !alive_v2(ctx) {
        return Err(Verdict::fail(want, format!("{first}; {updxch}; {second}; then no answer")));
    }
    Ok(Verdict::pass(want, format!("{first}; {updxch}; {second}; connection alive")))
}

pub(super) const CHECKS: [Check; 11] = [
    Check {
        info: CheckInfo {
            id: "v2-01/5.2/optional-first-message",
            judges: &["~v2-01/3.1#3"],
            acceptable:
                "ERR_VERS echoing the rdma_xid with a range holding 1 but not 2 (Version One peer); or, from a \
                Version Two peer, ROPT_RESPXCH or RDMA2_ERR_INVAL_OPTION echoing the rdma_xid",
            rationale:
                "An RDMA2_OPTIONAL as the very first message must be answered by every peer, whichever versions \
                it speaks.",
            groups: &["v2", "xcharext", "negotiation"],
            broken_by: &[("v2-respxch-wrong-xid", Outcome::Fail)],
            precondition: None,
        },
        run: optional_first_message,
    },
    Check {
        info: CheckInfo {
            id: "v2-01/4.2.2/reply-direction",
            judges: &["~v2-01/4.2.1#1", "v2-01/4.2.2#2", "~v2-01/5.3#1"],
            acceptable: "RDMA2_MSG (or RDMA2_NOMSG) with rdma_vers 2, rdma_direction REPLY, a non-zero grant and \
                accept_stat SUCCESS; unsupported for a Version One peer",
            rationale: "The Version Two sanity baseline: the direction field is how a receiver tells backward calls \
                from forward replies.",
            groups: &["v2", "sanity"],
            broken_by: &[("v2-wrong-direction", Outcome::Fail), ("zero-credit", Outcome::Fail)],
            precondition: None,
        },
        run: reply_direction,
    },
    Check {
        info: CheckInfo {
            id: "v2-01/5.3/nomsg-call-same-version",
            judges: &["~v2-01/4.2.2#2", "v2-01/5.3#1"],
            acceptable:
                "the RDMA2_NOMSG call pulled from its position-zero read chunk and answered with a Version Two \
                reply, accept_stat SUCCESS",
            rationale: "Version Two reuses the Version One chunk machinery; a responder must not fall back to Version \
                One headers for a long call.",
            groups: &["v2", "chunks"],
            broken_by: &[("v2-reply-v1", Outcome::Fail)],
            precondition: None,
        },
        run: nomsg_same_version,
    },
    Check {
        info: CheckInfo {
            id: "v2-01/4.2.3/err-vers-range",
            judges: &["rfc8166/4.5.1#1"],
            acceptable: "ERR_VERS echoing the rdma_xid and rdma_vers 3, with an ordered range holding both 1 and 2 \
                (rdma_vers 1 is pass-lax)",
            rationale: "A Version Two peer that reports only version 1 steers every requester away from Version Two.",
            groups: &["v2", "errors", "negotiation"],
            broken_by: &[("v2-err-vers-v1-only", Outcome::Fail)],
            precondition: None,
        },
        run: err_vers_range,
    },
    Check {
        info: CheckInfo {
            id: "v2-01/4.2.3/bad-header-truncated",
            judges: &["~rfc8166/4.5.2#1", "~v2-01/4.2.1#2"],
            acceptable: "RDMA2_ERROR RDMA2_ERR_BAD_HEADER (2, the -01 counterpart of ERR_CHUNK) echoing the rdma_xid \
                and rdma_vers 2",
            rationale:
                "A read segment cut short in a Version Two header must fail cleanly, with the Version Two error \
                code.",
            groups: &["v2", "errors"],
            broken_by: &[("v2-no-bad-header", Outcome::Fail)],
            precondition: None,
        },
        run: bad_header_truncated,
    },
    Check {
        info: CheckInfo {
            id: "v2-01/4.2.3/bad-header-proc",
            judges: &["~rfc8166/4.5.2#1", "~v2-01/4.2.1#2"],
            acceptable: "RDMA2_ERROR RDMA2_ERR_BAD_HEADER (2) echoing the rdma_xid and rdma_vers 2",
            rationale: "rdma_proc 2 (RDMA_MSGP in Version One) has no arm in the Version Two union (wire notes C4).",
            groups: &["v2", "errors"],
            broken_by: &[("v2-no-bad-header", Outcome::Fail)],
            precondition: None,
        },
        run: bad_header_proc,
    },
    Check {
        info: CheckInfo {
            id: "v2-01/3.1/inval-option",
            judges: &["v2-01/3.1#3", "~v2-01/4.2.1#2"],
            acceptable: "RDMA2_ERROR RDMA2_ERR_INVAL_OPTION (3 under -01) echoing the rdma_xid and rdma_vers 2",
            rationale:
                "INVAL_OPTION is how a requester learns that an optional feature is absent; silence would stall \
                it.",
            groups: &["v2", "errors", "optional"],
            broken_by: &[("v2-no-inval-option", Outcome::Fail)],
            precondition: None,
        },
        run: inval_option,
    },
    Check {
        info: CheckInfo {
            id: "v2-01/4.2.3/error-discarded",
            judges: &["~rfc8166/4.2.4#4"],
            acceptable: "no answer to RDMA2_ERROR, and a Version Two NULL call still answered",
            rationale: "Two peers answering each other's errors would loop forever.",
            groups: &["v2", "errors", "discard"],
            broken_by: &[("v2-answer-error", Outcome::Fail)],
            precondition: None,
        },
        run: error_discarded,
    },
    Check {
        info: CheckInfo {
            id: "v2-01/2.3/inline-4096-call",
            judges: &["v2-01/2.3#1"],
            acceptable: "a 4096-byte Version Two WRITE call, sent inline, answered NFS3_OK with every byte written; \
                unsupported for a Version One peer",
            rationale: "Version Two fixes 4096 bytes as the inline threshold without negotiation; a receiver with \
                smaller buffers loses every call between its size and 4096.",
            groups: &["v2", "inline"],
            broken_by: &[("v2-inline-1024", Outcome::Fail)],
            precondition: None,
        },
        run: inline_4096_call,
    },
    Check {
        info: CheckInfo {
            id: "v2-01/2.3/inline-4096-reply",
            judges: &["v2-01/2.3#2"],
            acceptable: "connected without private data, a Version Two READ of 3000 bytes offering no reply chunk \
                answered by an inline RDMA2_MSG reply of 1025 to 4096 bytes, NFS3_OK with the data; then a READ of \
                5000 bytes not answered inline: an RDMA2_ERROR (no reply chunk to carry it), or no answer, or the \
                connection closed; unsupported for a Version One peer",
            rationale: "A Version Two responder that keeps Version One's 1024-byte default cannot send replies a \
                Version Two requester need not offer a reply chunk for, and refuses them.",
            groups: &["v2", "inline"],
            broken_by: &[("v2-v1-inline-threshold", Outcome::Fail), ("ignore-reply-chunk", Outcome::Fail)],
            precondition: None,
        },
        run: inline_4096_reply,
    },
    Check {
        info: CheckInfo {
            id: "v2-01/5.2/threshold-change",
            judges: &["v2-01/5.2#1"],
            acceptable: "on a connection without private data: a Version One NULL call, then a Version Two one, a \
                3000-byte Version Two READ, ROPT_UPDXCH raising our Receive Buffer Size to 8192, another READ, and \
                a Version Two NULL call, each answered (any Version Two answer to the READs) without the connection \
                lost; unsupported for a Version One peer",
            rationale: "Thresholds change as the version is agreed and as characteristics are reported; a peer that \
                drops the connection then can never use them.",
            groups: &["v2", "xcharext", "inline", "negotiation"],
            broken_by: &[("v2-negotiation-closes", Outcome::Fail), ("v2-rbsiz-change-closes", Outcome::Fail)],
            precondition: None,
        },
        run: threshold_change,
    },
];
