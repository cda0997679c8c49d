//! RPC-over-RDMA Version Two (draft-cel-nfsv4-rpcrdma-version-two-01) and its extensions
//! xcharext-02 (transport characteristics) and rtrext-03 (message continuation), under the
//! profile defaults (-01 envelope and error codes, rtrext opttypes 5..8, xcharext-02 ids,
//! LSB-first subsets). Every check first sends a Version Two NULL call: a peer that answers
//! ERR_VERS without 2 (or not at all, v2-01 5.2) speaks Version One only, and the check is
//! unsupported.
//!
//! This module builds the Version Two messages and reads the answers (as frames, decoded
//! once at receipt); the checks live beside their table in [`base`], [`xcharext`] and
//! [`rtrext`].

mod base;
mod rtrext;
mod xcharext;

use rpcrdma_codec::rpc::AcceptStat;
use rpcrdma_codec::v2::{ErrorBody, ErrorInfo, HeaderBuilder, MsgType, OptInfo};
use rpcrdma_codec::xdr::Encode;
use rpcrdma_codec::Profile;

use rpcrdma_peers::proto::nfs3::{self, NFSPROC3_LOOKUP};
use rpcrdma_peers::proto::Call;

use super::start;
use crate::engine::{expect, Check, Ctx, Judged, Mismatch, OrFail, Received, Verdict};
use crate::frame::v2::{Body, Header, Op};
use crate::frame::{Frame, Malformed};

/// Every Version Two check, in run order: the base draft's, then xcharext's, then rtrext's.
pub static CHECKS: [Check; 26] = join(&base::CHECKS, &xcharext::CHECKS, &rtrext::CHECKS);

/// The three tables end to end.
const fn join<const A: usize, const B: usize, const C: usize, const N: usize>(
    a: &[Check; A],
    b: &[Check; B],
    c: &[Check; C],
) -> [Check; N] {
    assert!(A + B + C == N, "the table length is the sum of its parts");
    let mut all = [a[0]; N];
    let mut i = 0;
    while i < N {
        all[i] = if i < A {
            a[i]
        } else if i < A + B {
            b[i - A]
        } else {
            c[i - A - B]
        };
        i += 1;
    }
    all
}

fn profile() -> Profile {
    Profile::default()
}

// ---------------------------------------------------------------------------------------------
// Building Version Two messages

/// The RPC NULL call (NFSv3, AUTH_NONE): the payload stream. (The credit a [`Call`] holds
/// belongs to the transport header, which this leaves out.)
fn null_rpc(xid: u32) -> Vec<u8> {
    Call::null(xid, 0).rpc_bytes()
}

/// Encodes a Version Two message.
fn build(b: HeaderBuilder<'_>) -> Vec<u8> {
    b.encode_to_vec()
}

/// A Version Two NULL call: RDMA2_MSG, rdma_direction CALL, no chunks.
fn null_v2(ctx: &Ctx, xid: u32) -> Vec<u8> {
    build(HeaderBuilder::msg(xid, ctx.options.credits_requested, MsgType::CALL).payload(&null_rpc(xid)))
}

/// RDMA2_OPTIONAL from a requester: rdma_optdir CALL (v2-01 4.2.2, wire notes X13).
fn optional_v2(ctx: &Ctx, xid: u32, opttype: u32, info: OptInfo<'_>, payload: &[u8]) -> Vec<u8> {
    build(HeaderBuilder::optional(xid, ctx.options.credits_requested, MsgType::CALL, opttype, info).payload(payload))
}

fn xchar_msg(ctx: &Ctx, xid: u32, op: rpcrdma_codec::xcharext::Op<'_>) -> Vec<u8> {
    optional_v2(ctx, xid, op.opttype(), OptInfo::Xchar(op), &[])
}

fn rtr_msg(ctx: &Ctx, xid: u32, op: rpcrdma_codec::rtrext::Op<'_>, payload: &[u8]) -> Vec<u8> {
    optional_v2(ctx, xid, op.kind().opttype(profile().rtrext_opttypes), OptInfo::Rtr(op), payload)
}

// ---------------------------------------------------------------------------------------------
// Reading answers

/// The Version Two header of a frame a matcher accepted.
fn v2(f: &Frame) -> &Header {
    f.v2().expect("matched a Version Two answer")
}

/// A message that decoded as Version Two and answers `xid`.
fn v2_answer(received: &Received, xid: u32) -> Result<(&Frame, &Header), Mismatch> {
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

/// Connects and sends a Version Two NULL call (v2-01 5): its reply, or the verdict that ends
/// the check (unsupported for a Version One peer).
fn start_v2(ctx: &mut Ctx) -> Result<Frame, Verdict> {
    start(ctx)?;
    negotiate_v2(ctx)
}

/// On a fresh connection, sends a Version Two NULL call (v2-01 5): its reply, or the verdict
/// that ends the check (unsupported for a Version One peer).
fn negotiate_v2(ctx: &mut Ctx) -> Result<Frame, Verdict> {
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
fn v2_call(ctx: &Ctx, call: &Call) -> Vec<u8> {
    build(HeaderBuilder::msg(call.xid, ctx.options.credits_requested, MsgType::CALL).payload(&call.rpc_bytes()))
}

/// Looks up `name` in the export root with a Version Two call; the file handle.
fn v2_lookup(ctx: &mut Ctx, name: &str) -> Result<Vec<u8>, Verdict> {
    let want = format!("a Version Two LOOKUP of {name:?} answered NFS3_OK");
    let call = ctx.nfs3(NFSPROC3_LOOKUP, nfs3::lookup_args(ctx.root_fh(), name));
    let got = ctx.call(&v2_call(ctx, &call));
    let (f, h) = v2_answer(&got, call.xid).or_fail(&want)?;
    rpc_reply_ok(f, h, call.xid).or_fail(&want)?;
    let results = expect::results(f).or_fail(&want)?;
    nfs3::lookup_fh(results).ok_or_else(|| Verdict::fail(&want, format!("status {:?}", nfs3::status(results))))
}

/// A Version Two NULL round trip after a scenario: the connection still serves.
fn alive_v2(ctx: &mut Ctx) -> bool {
    let xid = ctx.xid();
    let got = ctx.call(&null_v2(ctx, xid));
    v2_answer(&got, xid).is_ok_and(|(f, h)| rpc_reply_ok(f, h, xid).is_ok())
}

/// An RPC reply answering `xid` with SUCCESS: RDMA2_MSG with rdma_direction REPLY, or a
/// single ROPT_XMTRESP with rdma_optdir REPLY (v2-01 4.2.2); names the form.
fn rpc_reply_ok(f: &Frame, h: &Header, xid: u32) -> Result<&'static str, Mismatch> {
    if h.credit == 0 {
        return Err(Mismatch::ZeroCredit);
    }
    let form = match &h.body {
        Body::Msg { direction: Some(MsgType::REPLY), .. } => "RDMA2_MSG",
        Body::Msg { direction, .. } => {
            let dir = direction.map_or("absent".to_string(), |d| d.to_string());
            return Err(format!("RDMA2_MSG reply with rdma_direction {dir}").into());
        }
        Body::Optional { dir, op: Op::XmtResp { count, pslen }, .. } => {
            if *dir != Some(MsgType::REPLY) {
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
fn v2_error(received: &Received, xid: u32, want: ErrorBody) -> Result<(), Mismatch> {
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

/// Ends the check unsupported when `received` is RDMA2_ERR_INVAL_OPTION (whatever its
/// rdma_xid): the peer does not support `op`.
fn supported(received: &Received, op: &str) -> Result<(), Verdict> {
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

fn ending(alive: bool) -> &'static str {
    if alive {
        "connection alive"
    } else {
        "but the connection no longer answers"
    }
}

/// Sends `msg`, which must get no answer, then a NULL call; INVAL_OPTION means `op` (when
/// named) is not supported.
fn expect_no_answer(ctx: &mut Ctx, msg: &[u8], op: &str) -> Judged {
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

    #[test]
    fn every_check_is_in_the_v2_group() {
        for c in CHECKS.iter().map(|c| &c.info) {
            assert!(c.groups.contains(&"v2"), "{}", c.id);
            let ext = c.id.starts_with("xcharext") || c.id.starts_with("rtrext");
            assert!(!ext || c.groups.iter().any(|g| *g == "xcharext" || *g == "rtrext"), "{}", c.id);
        }
    }

    #[test]
    fn the_table_keeps_its_order() {
        let ids: Vec<&str> = CHECKS.iter().map(|c| c.info.id).collect();
        assert_eq!(ids.first(), Some(&"v2-01/5.2/optional-first-message"));
        assert_eq!(ids[11], "xcharext-02/4.1/initxch-silent");
        assert_eq!(ids[19], "rtrext-03/9.3/xmtreq-answered");
        assert_eq!(ids.last(), Some(&"rtrext-03/9.4/reply-cont-xid"));
    }

    // Against a Version One responder the catalogue still makes sense: the probe check
    // passes on ERR_VERS and every other check is unsupported.
    #[test]
    fn a_version_one_peer_makes_the_checks_unsupported() {
        use crate::engine::{run_check, Outcome, RunOptions};
        use rpcrdma_peers::responder::{Config, Responder};
        use rpcrdma_peers::transport::emulated::EmulatedConnector;
        use std::time::Duration;
        let config = Config { version_two: false, ..Config::default() };
        let mut conn = EmulatedConnector::new(Responder::reference(config));
        let opts = RunOptions {
            timeout: Duration::from_secs(2),
            silence: Duration::from_millis(100),
            ..RunOptions::default()
        };
        for c in CHECKS.iter() {
            let r = run_check(c, &mut conn, &opts);
            let want =
                if c.info.id == "v2-01/5.2/optional-first-message" { Outcome::Pass } else { Outcome::Unsupported };
            assert_eq!(r.outcome, want, "{}: {}", c.info.id, r.actual);
        }
    }

    #[test]
    fn messages_decode() {
        let xid = 9;
        let rpc = null_rpc(xid);
        let b = build(HeaderBuilder::msg(xid, 1, MsgType::CALL).payload(&rpc));
        let f = Frame::decode(b, None, Role::Call);
        assert!(matches!(v2(&f).body, Body::Msg { direction: Some(MsgType::CALL), .. }));
        assert_eq!(f.len(), 32 + rpc.len());
    }
}
