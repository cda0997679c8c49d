//! The catalogue: every check, with its stable ID from the spec section it tests, the
//! requirement quoted with its key word, the acceptable outcomes and a one-line rationale.

pub mod ccp;
pub mod client;
pub mod compound;
pub mod credits;
pub mod header;
pub mod inline;
pub mod private_data;
pub mod read_chunks;
pub mod reply_chunk;
pub mod reverse;
pub mod v2;
pub mod write_chunks;

use rpcrdma_codec::rpc::AcceptStat;

use rpcrdma_peers::proto::nfs3::{self, NFSPROC3_LOOKUP};

use crate::engine::{expect, Check, Ctx, Judged, OrFail, Received, Verdict};
use crate::frame::v1::Header;
use crate::frame::Frame;

/// Every check, in run order (the sanity check first).
pub fn all() -> Vec<&'static Check> {
    let mut v: Vec<&'static Check> = Vec::new();
    v.extend(header::CHECKS.iter());
    v.extend(credits::CHECKS.iter());
    v.extend(read_chunks::CHECKS.iter());
    v.extend(write_chunks::CHECKS.iter());
    v.extend(compound::CHECKS.iter());
    v.extend(reply_chunk::CHECKS.iter());
    v.extend(inline::CHECKS.iter());
    v.extend(private_data::CHECKS.iter());
    v.extend(ccp::CHECKS.iter());
    v.extend(v2::CHECKS.iter());
    v.extend(reverse::CHECKS.iter());
    v
}

/// What every check declares, server checks in run order then the client checks: the one list
/// the requirements matrix, the proofs and selectors read.
pub fn infos() -> impl Iterator<Item = &'static crate::engine::CheckInfo> {
    all().into_iter().map(|c| &c.info).chain(client::all().map(|c| &c.info))
}

/// The check every other check depends on (tlsfuzzer's "sanity").
pub const SANITY: &str = "rfc8166/4.2.4/null-call";

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_well_formed() {
        let all: Vec<_> = infos().collect();
        assert!(all.len() >= 15);
        for (i, c) in all.iter().enumerate() {
            assert!(all[i + 1..].iter().all(|o| o.id != c.id), "duplicate {}", c.id);
            let parts: Vec<&str> = c.id.split('/').collect();
            assert_eq!(parts.len(), 3, "{}", c.id);
            assert!(parts[1].chars().all(|ch| ch.is_ascii_digit() || ch == '.'), "{}", c.id);
            assert!(!c.judges.is_empty() && !c.rationale.is_empty() && !c.acceptable.is_empty(), "{}", c.id);
            // The quote comes from the matrix: every statement the check judges, by its ID.
            let quote = c.requirement();
            assert!(c.judged().all(|(id, _)| quote.contains(&format!("({id}"))), "{}: {quote}", c.id);
        }
        assert_eq!(all[0].id, SANITY);
    }
}
