//! Inline thresholds (RFC 8166 3.3.2, 3.3.3): a message of exactly the threshold is
//! conveyed by RDMA Send in both directions; the threshold is the largest size allowed, not
//! the first one refused.

use rpcrdma_codec::rpc::AcceptStat;

use rpcrdma_peers::proto::nfs3::{self, NFSPROC3_READ, NFSPROC3_WRITE};

use super::steps::{lookup, start};
use crate::engine::{expect, Check, CheckInfo, Ctx, Judged, OrFail, Outcome, Verdict};
use crate::frame::v1::Body;

/// The threshold both checks use: RFC 8166 3.3.3's minimum, which every receiver supports.
const THRESHOLD: u32 = 1024;

/// Connects advertising 1024-byte send and receive sizes, so both inline thresholds are
/// 1024 bytes (RFC 8797 4.2: the smaller of one side's send and the other's receive size).
fn connect_at_threshold(ctx: &mut Ctx) -> Result<(), Verdict> {
    ctx.options.receive_size = THRESHOLD;
    ctx.options.send_size = THRESHOLD;
    start(ctx)
}

fn call_at_threshold(ctx: &mut Ctx) -> Judged {
    connect_at_threshold(ctx)?;
    let fh = lookup(ctx, nfs3::FILE_SCRATCH)?;
    // A WRITE with its data inline, sized so the whole RDMA_MSG is exactly 1024 bytes.
    let inline_write = |ctx: &mut Ctx, data: &[u8]| {
        let args = [nfs3::write_args_split(&fh, 0, data), data.to_vec()].concat();
        ctx.nfs3(NFSPROC3_WRITE, args)
    };
    let empty = inline_write(ctx, &[]).msg().len();
    let data = nfs3::file_contents(THRESHOLD as usize - empty);
    let call = inline_write(ctx, &data);
    let msg = call.msg();
    assert_eq!(msg.len(), THRESHOLD as usize, "the call is sized to the threshold");
    let want = format!("a {}-byte WRITE call (exactly the inline threshold) answered NFS3_OK", msg.len());
    let got = ctx.call(&msg);
    let (f, _) = expect::rpc_accepted(&got, call.xid, AcceptStat::Success).or_fail(&want)?;
    match expect::results(f).ok().and_then(nfs3::write_result) {
        Some((0, n)) if n as usize == data.len() => {
            Ok(Verdict::pass(want, format!("NFS3_OK count {n} for a {}-byte call", msg.len())))
        }
        other => Err(Verdict::fail(want, format!("WRITE3 result {other:?}"))),
    }
}

fn reply_at_threshold(ctx: &mut Ctx) -> Judged {
    connect_at_threshold(ctx)?;
    let fh = lookup(ctx, nfs3::FILE_BIG)?;
    // Measure the reply to a 4-byte READ, then ask for as many bytes as make it 1024.
    let probe = ctx.nfs3(NFSPROC3_READ, nfs3::read_args(&fh, 0, 4));
    let got = ctx.call(&probe.msg());
    let (f, _) =
        expect::rpc_accepted(&got, probe.xid, AcceptStat::Success).or_fail("an inline reply to a 4-byte READ")?;
    let overhead = f.len() - 4;
    let count = THRESHOLD as usize - overhead;
    let call = ctx.nfs3(NFSPROC3_READ, nfs3::read_args(&fh, 0, count as u32));
    let want = format!("the {count}-byte READ (a {THRESHOLD}-byte reply, exactly the inline threshold) answered inline in one RDMA_MSG");
    let got = ctx.call(&call.msg());
    let (f, h) = expect::rpc_accepted(&got, call.xid, AcceptStat::Success).or_fail(&want)?;
    if !matches!(h.body, Body::Msg { .. }) {
        return Err(Verdict::fail(want, h.body.describe()));
    }
    let results = expect::results(f).or_fail(&want)?;
    match nfs3::read_result(results) {
        Some(rr) if rr.status == 0 && rr.data_len as usize == count && f.len() == THRESHOLD as usize => {
            Ok(Verdict::pass(want, format!("a {}-byte inline reply with all {count} bytes", f.len())))
        }
        other => Err(Verdict::fail(want, format!("a {}-byte reply, READ3 result {other:?}", f.len()))),
    }
}

pub static CHECKS: [Check; 2] = [
    Check {
        info: CheckInfo {
            id: "rfc8166/3.3.3/call-at-threshold",
            judges: &["rfc8166/3.3.3#2"],
            acceptable: "an RDMA_MSG WRITE call of exactly 1024 bytes (both sides advertise 1024) answered NFS3_OK with the full count",
            rationale: "The threshold is the largest message conveyed, inclusive; a receiver whose buffers are a few bytes short loses the connection on a conformant call.",
            groups: &["inline"],
            broken_by: &[("receive-buffers-1020", Outcome::Fail)],
            precondition: None,
        },
        run: call_at_threshold,
    },
    Check {
        info: CheckInfo {
            id: "rfc8166/3.3.3/reply-at-threshold",
            judges: &["~rfc8166/3.3.3#3"],
            acceptable: "a READ whose reply is exactly 1024 bytes (our receive size and the threshold) answered inline, with all the data, in one RDMA_MSG",
            rationale: "A responder that treats the threshold as exclusive refuses replies that fit, and a requester that offered no reply chunk gets an error.",
            groups: &["inline"],
            broken_by: &[("exclusive-reply-threshold", Outcome::Fail)],
            precondition: None,
        },
        run: reply_at_threshold,
    },
];
