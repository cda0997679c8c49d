//! Version Two messages as the checks send them, and the answers as the checks read them:
//! the NULL call that negotiates the version (v2-01 5), RDMA2_OPTIONAL carrying xcharext and
//! rtrext operations, and the matchers for RPC replies and RDMA2_ERROR.

use rpcrdma_codec::profile::{PropertyIds, V2Envelope};
use rpcrdma_codec::rpc::AcceptStat;
use rpcrdma_codec::v2::{ErrorBody, ErrorInfo, HeaderBuilder, MsgType, OptInfo};
use rpcrdma_codec::xcharext::{self, Known};
use rpcrdma_codec::xdr::Encode;

use rpcrdma_peers::proto::nfs3::{self, NFSPROC3_LOOKUP};
use rpcrdma_peers::proto::Call;

use crate::catalogue::steps::start;
use crate::engine::{expect, Ctx, Judged, Mismatch, OrFail, Received, Verdict};
use crate::frame::v2::{Body, Header, Op};
use crate::frame::{Frame, Malformed};

// ---------------------------------------------------------------------------------------------
// Building Version Two messages

/// The RPC NULL call (NFSv3, AUTH_NONE): the payload stream. (The credit a [`Call`] holds
/// belongs to the transport header, which this leaves out.)
pub(super) fn null_rpc(xid: u32) -> Vec<u8> {
    Call::null(xid, 0).rpc_bytes()
}

/// Encodes a Version Two message in the envelope of the run's profile (-00 has no
/// rdma_direction or rdma_optdir).
pub(super) fn build(ctx: &Ctx, b: HeaderBuilder<'_>) -> Vec<u8> {
    match ctx.profile().v2_envelope {
        V2Envelope::Draft01 => b.encode_to_vec(),
        V2Envelope::Draft00 => b.draft00().encode_to_vec(),
    }
}

/// A Version Two NULL call: RDMA2_MSG, rdma_direction CALL, no chunks.
pub(super) fn null_v2(ctx: &Ctx, xid: u32) -> Vec<u8> {
    build(ctx, HeaderBuilder::msg(xid, ctx.options.credits_requested, MsgType::CALL).payload(&null_rpc(xid)))
}

/// RDMA2_OPTIONAL from a requester: rdma_optdir CALL (v2-01 4.2.2, wire notes X13).
pub(super) fn optional_v2(ctx: &Ctx, xid: u32, opttype: u32, info: OptInfo<'_>, payload: &[u8]) -> Vec<u8> {
    build(
        ctx,
        HeaderBuilder::optional(xid, ctx.options.credits_requested, MsgType::CALL, opttype, info).payload(payload),
    )
}

pub(super) fn xchar_msg(ctx: &Ctx, xid: u32, op: xcharext::Op<'_>) -> Vec<u8> {
    optional_v2(ctx, xid, op.opttype(), OptInfo::Xchar(op), &[])
}

pub(super) fn rtr_msg(ctx: &Ctx, xid: u32, op: rpcrdma_codec::rtrext::Op<'_>, payload: &[u8]) -> Vec<u8> {
    optional_v2(ctx, xid, op.kind().opttype(ctx.profile().rtrext_opttypes), OptInfo::Rtr(op), payload)
}

// ---------------------------------------------------------------------------------------------
// Reading answers

/// The Version Two header of a frame a matcher accepted.
pub(super) fn v2(f: &Frame) -> &Header {
    f.v2().expect("matched a Version Two answer")
}

/// A message that decoded as Version Two and answers `xid`.
pub(super) fn v2_answer(received: &Received, xid: u32) -> Result<(&Frame, &Header), Mismatch> {
    let f = expect::message(received)?;
    let h = match &f.header {
        Ok(crate::frame::Header::V2(h)) => h,
        Ok(crate::frame::Header::V1(h)) => return Err(format!("a Version {} message: {f}", h.vers).into()),
        Err(Malformed { fixed: Some(x), .. }) if x.vers != rpcrdma_codec::v2::VERSION => {
            return Err(format!("a Version {} message: {f}", x.vers).into())
        }
        Err(m) => return Err(format!("a reply that does not decode as Version Two: {}", m.error).into()),
    };
    if h.xid != xid {
        return Err(Mismatch::WrongXid { form: h.to_string(), got: h.xid, want: xid });
    }
    Ok((f, h))
}

/// Ends the check unsupported when the run's profile leaves xcharext-02 no opttypes: under
/// `rtrext-literal` (rtrext-03's XDR alone, wire notes R10) ROPT_XMTREQ..ROPT_REPTERR are
/// 1..4, the opttypes of xcharext-02's Table 2.
pub(super) fn xcharext_numbered(ctx: &Ctx, op: &str) -> Result<(), Verdict> {
    if xcharext::is_opttype(xcharext::ROPT_INITXCH, ctx.profile()) {
        return Ok(());
    }
    Err(Verdict::unsupported(
        format!("{op} sent as an xcharext-02 operation"),
        "under rtrext-literal (the rtrext-03 XDR's opttypes 1..4) xcharext-02 has no opttypes",
    ))
}

/// The id of the characteristic `known` in the run's id table, or the verdict that ends the
/// check unsupported: V2 -03's property table (`props-v2-03`) has no REQREMINV.
pub(super) fn property_id(ctx: &Ctx, known: Known) -> Result<u32, Verdict> {
    let ids = ctx.profile().property_ids;
    known.id(ids).ok_or_else(|| {
        let table = match ids {
            PropertyIds::Xcharext02 => "xcharext-02's characteristic table",
            PropertyIds::V2Draft03 => "the property table of Version Two -03 (props-v2-03)",
        };
        Verdict::unsupported(
            format!("a characteristic {} to send", known.name()),
            format!("{table} has no {}", known.name()),
        )
    })
}

/// Connects and sends a Version Two NULL call (v2-01 5): its reply, or the verdict that ends
/// the check (unsupported for a Version One peer).
pub(super) fn start_v2(ctx: &mut Ctx) -> Result<Frame, Verdict> {
    start(ctx)?;
    negotiate_v2(ctx)
}

/// On a fresh connection, sends a Version Two NULL call (v2-01 5): its reply, or the verdict
/// that ends the check (unsupported for a Version One peer).
pub(super) fn negotiate_v2(ctx: &mut Ctx) -> Result<Frame, Verdict> {
    let xid = ctx.xid();
    let got = ctx.call(&null_v2(ctx, xid));
    let want = "a Version Two reply to a Version Two NULL call, or ERR_VERS leaving out 2 (Version One only)";
    if got == Received::SILENCE {
        // v2-01 5.2: "if the initial negotiation message is lost or dropped".
        return Err(Verdict::unsupported(want, "no answer to the Version Two NULL call: Version One only"));
    }
    if let Some(e) = got.frame().and_then(|f| f.err_vers).filter(|e| e.fixed.xid == xid) {
        let range = format!("ERR_VERS {}..{}", e.low, e.high);
        return Err(if (e.low..=e.high).contains(&2) {
            Verdict::fail(want, format!("{range} to a Version Two call, although the range holds 2"))
        } else {
            Verdict::unsupported(want, format!("{range}: the peer speaks Version One only"))
        });
    }
    let (f, h) = v2_answer(&got, xid).or_fail(want)?;
    match h.body {
        Body::Msg { .. } | Body::NoMsg { .. } => Ok(f.clone()),
        _ => Err(Verdict::fail(want, format!("{h} to the NULL call"))),
    }
}

/// A Version Two RDMA2_MSG call carrying `call` inline.
pub(super) fn v2_call(ctx: &Ctx, call: &Call) -> Vec<u8> {
    build(ctx, HeaderBuilder::msg(call.xid, ctx.options.credits_requested, MsgType::CALL).payload(&call.rpc_bytes()))
}

/// Looks up `name` in the export root with a Version Two call; the file handle.
pub(super) fn v2_lookup(ctx: &mut Ctx, name: &str) -> Result<Vec<u8>, Verdict> {
    let want = format!("a Version Two LOOKUP of {name:?} answered NFS3_OK");
    let call = ctx.nfs3(NFSPROC3_LOOKUP, nfs3::lookup_args(ctx.root_fh(), name));
    let got = ctx.call(&v2_call(ctx, &call));
    let (f, h) = v2_answer(&got, call.xid).or_fail(&want)?;
    rpc_reply_ok(f, h, call.xid).or_fail(&want)?;
    let results = expect::results(f).or_fail(&want)?;
    nfs3::lookup_fh(results).ok_or_else(|| Verdict::fail(&want, format!("status {:?}", nfs3::status(results))))
}

/// A Version Two NULL round trip after a scenario: the connection still serves.
pub(super) fn alive_v2(ctx: &mut Ctx) -> bool {
    let xid = ctx.xid();
    let got = ctx.call(&null_v2(ctx, xid));
    v2_answer(&got, xid).is_ok_and(|(f, h)| rpc_reply_ok(f, h, xid).is_ok())
}

/// An RPC reply answering `xid` with SUCCESS: RDMA2_MSG with rdma_direction REPLY, or a
/// single ROPT_XMTRESP with rdma_optdir REPLY (v2-01 4.2.2; the -00 envelope has neither
/// field); names the form.
pub(super) fn rpc_reply_ok(f: &Frame, h: &Header, xid: u32) -> Result<&'static str, Mismatch> {
    if h.credit == 0 {
        return Err(Mismatch::ZeroCredit);
    }
    let form = match &h.body {
        // None: the -00 envelope, which has no rdma_direction (decoded under -01, it is there).
        Body::Msg { direction: Some(MsgType::REPLY) | None, .. } => "RDMA2_MSG",
        Body::Msg { direction, .. } => {
            let dir = direction.map_or("absent".to_string(), |d| d.to_string());
            return Err(format!("RDMA2_MSG reply with rdma_direction {dir}").into());
        }
        Body::Optional { dir, op: Op::XmtResp { count, pslen }, .. } => {
            if dir.is_some_and(|d| d != MsgType::REPLY) {
                return Err("ROPT_XMTRESP carrying an RPC reply with rdma_optdir CALL".into());
            }
            if *count != 1 {
                return Err(format!("a {count}-transmission response although optxrq_rsbuf was 0").into());
            }
            if *pslen as usize > h.payload.len() {
                return Err(format!("optxrs_pslen {pslen} beyond the {} bytes sent", h.payload.len()).into());
            }
            "ROPT_XMTRESP"
        }
        _ => return Err(format!("{h} instead of an RPC reply").into()),
    };
    // The frame holds the RPC message of RDMA2_MSG, and of a single ROPT_XMTRESP whose
    // optxrs_pslen bytes are there.
    expect::check_accepted(expect::rpc(f)?, xid, AcceptStat::Success)?;
    Ok(form)
}

/// RDMA2_ERROR `want` answering `xid` with rdma_vers 2 and a non-zero grant.
pub(super) fn v2_error(received: &Received, xid: u32, want: ErrorBody) -> Result<(), Mismatch> {
    let (_, h) = v2_answer(received, xid)?;
    match h.body {
        Body::Error(ErrorInfo { body, .. }) if body == want => {
            if h.credit == 0 {
                return Err(Mismatch::ZeroCredit);
            }
            if !h.payload.is_empty() {
                // v2-01 4.2.1: no payload after RDMA2_ERROR.
                return Err(format!("{} with {} bytes after it", want.name(), h.payload.len()).into());
            }
            Ok(())
        }
        _ => Err(Mismatch::WrongBody { got: h.to_string(), want: want.name() }),
    }
}

/// `error`'s name and its rdma_err value under the run's numbering: "RDMA2_ERR_BAD_HEADER (2)".
pub(super) fn error_named(ctx: &Ctx, error: ErrorBody) -> String {
    match error.code(ctx.profile().v2_error_numbering) {
        Some(code) => format!("{} ({code})", error.name()),
        None => error.name().to_string(),
    }
}

/// Ends the check unsupported when `received` is RDMA2_ERR_INVAL_OPTION (whatever its
/// rdma_xid): the peer does not support `op`.
pub(super) fn supported(received: &Received, op: &str) -> Result<(), Verdict> {
    let inval = received
        .frame()
        .and_then(Frame::v2)
        .is_some_and(|h| matches!(h.body, Body::Error(ErrorInfo { body: ErrorBody::InvalOption, .. })));
    if inval {
        let why = format!("RDMA2_ERR_INVAL_OPTION: {op} is not supported");
        return Err(Verdict::unsupported(format!("{op} supported"), why));
    }
    Ok(())
}

pub(super) fn ending(alive: bool) -> &'static str {
    if alive {
        "connection alive"
    } else {
        "but the connection no longer answers"
    }
}

/// Sends `msg`, which must get no answer, then a NULL call; INVAL_OPTION means `op` (when
/// named) is not supported.
pub(super) fn expect_no_answer(ctx: &mut Ctx, msg: &[u8], op: &str) -> Judged {
    let _ = ctx.send(msg);
    let want = "no answer, then a Version Two NULL call still answered";
    match ctx.expect_silence() {
        Received::SILENCE if alive_v2(ctx) => Ok(Verdict::pass(want, "no answer; connection alive")),
        Received::SILENCE => Err(Verdict::fail(want, "no answer, but the connection no longer answers")),
        other => {
            if !op.is_empty() {
                supported(&other, op)?;
            }
            Err(Verdict::fail(want, other.describe()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rpcrdma_codec::check::Role;

    use crate::engine::RunOptions;
    use rpcrdma_codec::Profile;
    use rpcrdma_peers::responder::{Config, Responder};
    use rpcrdma_peers::transport::emulated::EmulatedConnector;

    // Built in the run's envelope, a message decodes under the same profile: -01 with
    // rdma_direction (v2-01 4.2.1), -00 without it.
    #[test]
    fn messages_decode_in_the_envelope_of_the_profile() {
        let draft00 = Profile { v2_envelope: V2Envelope::Draft00, ..Profile::default() };
        for (profile, direction, len) in [(Profile::default(), Some(MsgType::CALL), 32), (draft00, None, 28)] {
            let mut peer = EmulatedConnector::new(Responder::reference(Config::default()));
            let ctx = Ctx::new(&mut peer, RunOptions { profile, ..RunOptions::default() });
            let xid = 9;
            let rpc = null_rpc(xid);
            let b = build(&ctx, HeaderBuilder::msg(xid, 1, MsgType::CALL).payload(&rpc));
            let f = Frame::decode(b, None, Role::Call, &profile);
            assert!(matches!(v2(&f).body, Body::Msg { direction: d, .. } if d == direction), "{profile:?}: {f}");
            assert_eq!(f.len(), len + rpc.len(), "{profile:?}");
        }
    }
}
