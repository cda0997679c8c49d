//! The steps the server checks' scenarios are built from: connecting, a NULL round trip, a
//! LOOKUP in the export, and the two ends of a malformed call (an ERR_CHUNK reply, or a
//! silent discard). Each ends the check with its verdict when the peer does not follow.

use rpcrdma_codec::chunk::Segment;
use rpcrdma_codec::rpc::AcceptStat;

use rpcrdma_peers::proto::nfs3::{self, NFSPROC3_LOOKUP};

use crate::engine::{expect, Ctx, Judged, OrFail, Received, Verdict};
use crate::frame::v1::Header;
use crate::frame::Frame;

/// Canary byte around data a peer may write.
pub(crate) const CANARY: u8 = 0xa5;

/// Connects, or ends the check.
pub(crate) fn start(ctx: &mut Ctx) -> Result<(), Verdict> {
    ctx.connect().or_fail("a connection to the peer")
}

/// Sends `msg` (answering xid `xid`) and judges an ERR_CHUNK reply; then checks liveness.
pub(crate) fn expect_err_chunk(ctx: &mut Ctx, xid: u32, msg: &[u8]) -> Judged {
    start(ctx)?;
    let got = ctx.call(msg);
    let want = "RDMA_ERROR ERR_CHUNK echoing the rdma_xid, rdma_vers 1, non-zero credit grant";
    expect::err_chunk(&got, xid).or_fail(want)?;
    let alive = ctx.liveness();
    Ok(Verdict::pass(want, format!("ERR_CHUNK; connection {}", if alive { "survived" } else { "closed" })))
}

/// Sends `msg`, which the peer MUST silently discard: no reply within the silence window,
/// and the connection still answers a NULL call.
pub(crate) fn expect_discard(ctx: &mut Ctx, msg: &[u8]) -> Judged {
    start(ctx)?;
    let _ = ctx.send(msg);
    let want = "no reply (silently discarded), then a NULL call still answered";
    match ctx.expect_silence() {
        Received::SILENCE if ctx.liveness() => Ok(Verdict::pass(want, "no reply; connection alive")),
        Received::SILENCE => Err(Verdict::fail(want, "no reply, but the connection no longer answers")),
        other => Err(Verdict::fail(want, other.describe())),
    }
}

/// A NULL call round trip; the reply's frame.
pub(crate) fn null_round_trip(ctx: &mut Ctx) -> Result<Frame, Verdict> {
    let call = ctx.null();
    let got = ctx.call(&call.msg());
    expect::rpc_accepted(&got, call.xid, AcceptStat::Success)
        .or_fail("RDMA_MSG reply to the NULL call with accept_stat SUCCESS")?;
    Ok(got.frame().cloned().expect("matched a message"))
}

/// The Version One header of a frame a matcher accepted.
pub(crate) fn v1(f: &Frame) -> &Header {
    f.v1().expect("matched a Version One reply")
}

/// Looks up `name` in the export root; the file handle.
pub(crate) fn lookup(ctx: &mut Ctx, name: &str) -> Result<Vec<u8>, Verdict> {
    let call = ctx.nfs3(NFSPROC3_LOOKUP, nfs3::lookup_args(ctx.root_fh(), name));
    let got = ctx.call(&call.msg());
    let want = format!("LOOKUP of {name:?} answered NFS3_OK");
    let (f, _) = expect::rpc_accepted(&got, call.xid, AcceptStat::Success).or_fail(&want)?;
    let rpc = expect::rpc(f).or_fail(&want)?;
    let results = f.slice(rpc.body.clone());
    nfs3::lookup_fh(results).ok_or_else(|| Verdict::fail(&want, format!("status {:?}", nfs3::status(results))))
}

/// The first write chunk a reply returned, or none.
pub(crate) fn first_write_chunk(h: &Header) -> Vec<Segment> {
    h.body.chunks().and_then(|c| c.writes.first()).cloned().unwrap_or_default()
}
