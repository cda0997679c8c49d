//! Send With Invalidate (RFC 8797 4.1): used only when both peers set R, and only for an
//! R_key of the request the reply answers.

use rpcrdma_codec::private_data::{self, Lookup};
use rpcrdma_codec::rpc::AcceptStat;

use rpcrdma_peers::proto::nfs3::{self, NFSPROC3_READ};
use rpcrdma_peers::transport::Access;

use crate::catalogue::steps::lookup;
use crate::engine::{expect, Ctx, Judged, OrFail, Verdict};
use crate::frame::Frame;

/// READ of `five` into a write chunk, connected with the given R bit; the reply and the
/// chunk's R_key.
fn read_with_r(ctx: &mut Ctx, r_bit: bool) -> Result<(Frame, u32), Verdict> {
    let pd = ctx.private_data(r_bit);
    ctx.connect_with(&pd).or_fail("a connection")?;
    read_into_fresh_chunk(ctx)
}

/// READ of `five` into a write chunk of a newly registered region; the reply and its R_key.
pub(super) fn read_into_fresh_chunk(ctx: &mut Ctx) -> Result<(Frame, u32), Verdict> {
    let fh = lookup(ctx, nfs3::FILE_FIVE)?;
    let region = ctx.register(64, Access::WRITE);
    let mut call = ctx.nfs3(NFSPROC3_READ, nfs3::read_args(&fh, 0, 64));
    call.writes = vec![vec![region.segment()]];
    let got = ctx.call(&call.msg());
    let (f, _) = expect::rpc_accepted(&got, call.xid, AcceptStat::Success).or_fail("a READ3 reply")?;
    Ok((f.clone(), region.handle))
}

/// Send With Invalidate cannot be told from a plain Send on this connection: unsupported.
pub(crate) fn unobservable(ctx: &mut Ctx, want: &str) -> Result<(), Verdict> {
    if ctx.conn().observes_invalidation() {
        return Ok(());
    }
    let got = "this transport does not report Send With Invalidate (rdma-core's siw provider reports every receive as a plain Send)";
    Err(Verdict::unsupported(want, got))
}

pub(super) fn no_invalidate_without_r(ctx: &mut Ctx) -> Judged {
    let want = "a plain Send (we did not set R, so Send With Invalidate is not allowed)";
    let reply = read_with_r(ctx, false)?.0;
    unobservable(ctx, want)?;
    match reply.invalidated {
        None => Ok(Verdict::pass(want, "plain Send")),
        Some(h) => Err(Verdict::fail(want, format!("Send With Invalidate of {h:#x}"))),
    }
}

/// The R bit the peer advertised in its own private data, and how it was found.
fn peer_r_bit(ctx: &Ctx) -> (bool, String) {
    match private_data::find(ctx.peer_private_data(), ctx.profile()) {
        Ok(Lookup::Found { at, data }) => {
            (data.remote_invalidation, format!("R = {} at offset {at}", data.remote_invalidation as u8))
        }
        Ok(Lookup::Absent) => (false, "no RFC 8797 private data (R = 0, RFC 8797 5.1)".into()),
        Ok(Lookup::UnrecognisedVersion { version, .. }) => {
            (false, format!("private data of unrecognised version {version} (treated as absent: R = 0)"))
        }
        Err(e) => (false, format!("private data that does not decode ({e}): R = 0")),
    }
}

pub(super) fn invalidate_request_rkey(ctx: &mut Ctx) -> Judged {
    // Two READs in turn, each with a write chunk of its own region: each reply may only
    // invalidate its own request's R_key.
    let first = read_with_r(ctx, true)?;
    let (peer_r, said) = peer_r_bit(ctx);
    let want = if peer_r {
        "plain Sends, or Send With Invalidate of the R_key each request advertised (both peers set R)"
    } else {
        "plain Sends only: the responder's own private data clears R"
    };
    let second = read_into_fresh_chunk(ctx)?;
    unobservable(ctx, want)?;
    let mut seen = Vec::new();
    for (i, (reply, key)) in [first, second].into_iter().enumerate() {
        let nth = ["first", "second"][i];
        match reply.invalidated {
            None => seen.push(format!("{nth}: plain Send")),
            Some(h) if !peer_r => {
                let got = format!(
                    "{nth} reply: Send With Invalidate of {h:#x} although the peer advertised {said} (MUST use only RDMA Send)"
                );
                return Err(Verdict::fail(want, got));
            }
            Some(h) if h == key => seen.push(format!("{nth}: Send With Invalidate of its R_key {h:#x}")),
            Some(h) => {
                return Err(Verdict::fail(want, format!("{nth} reply: invalidated {h:#x}, not its request's {key:#x}")))
            }
        }
    }
    Ok(Verdict::pass(want, format!("{}; the peer advertised {said}", seen.join(", "))))
}
