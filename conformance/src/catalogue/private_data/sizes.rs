//! The sizes in private data (RFC 8797 3.1, 4.2, 5.1, 5.2): our receive size honoured, and
//! 1024-byte thresholds when our private data is absent or not recognised, on every new
//! connection afresh.

use rpcrdma_codec::private_data::{self, Lookup};
use rpcrdma_codec::rpc::AcceptStat;

use rpcrdma_peers::proto::nfs3::{self, NFSPROC3_READ};

use super::invalidation::read_into_fresh_chunk;
use crate::catalogue::steps::{lookup, start};
use crate::engine::{expect, Ctx, Judged, NoMessage, OrFail, Received, Verdict};

/// The receive size receive-size-honoured advertises: above the 1024-byte default, so a peer
/// that honours it can be told from one that falls back to the default.
pub(super) const HONOURED_RECEIVE: u32 = 2048;

pub(super) fn receive_size_honoured(ctx: &mut Ctx) -> Judged {
    let size = HONOURED_RECEIVE;
    ctx.options.receive_size = size;
    start(ctx)?;
    // The peer's own send size bounds its inline threshold (RFC 8797 4.2): it must exceed ours.
    let peer_send = match private_data::find(ctx.peer_private_data(), ctx.profile()) {
        Ok(Lookup::Found { data, .. }) => data.send_size(),
        _ => 1024,
    };
    let want = format!(
        "no Send over our advertised {size}-byte receive size while a longer reply is needed; a reply that fits {size} bytes sent inline"
    );
    if peer_send <= size {
        let got = format!("the peer's send size is {peer_send}: it cannot send more than {size} bytes inline anyway");
        return Err(Verdict::unsupported(want, got));
    }
    let fh = lookup(ctx, nfs3::FILE_BIG)?;
    // About 3100 bytes of reply: more than our receive size, less than the peer's send size.
    let call = ctx.nfs3(NFSPROC3_READ, nfs3::read_args(&fh, 0, 3000));
    let got = ctx.call(&call.msg());
    let long = match &got {
        Received::Message(f) if f.len() <= size as usize => format!("a {}-byte reply to a 3000-byte READ", f.len()),
        Received::Nothing(NoMessage::RecvFailed(s)) => {
            let got = format!("our {size}-byte receive failed ({}): the peer sent more", s.name());
            return Err(Verdict::fail(want, got));
        }
        other => return Err(Verdict::fail(want, other.describe())),
    };
    // About 1600 bytes of reply, no chunks: within the threshold RFC 8797 4.2 gives
    // (min(its send size, our receive size)), so a requester need not offer a reply chunk
    // (RFC 8166 4.3.3). A peer that keeps the 1024-byte default cannot send it.
    ctx.ensure_connected().or_fail("a connection")?;
    let call = ctx.nfs3(NFSPROC3_READ, nfs3::read_args(&fh, 0, 1500));
    let got = ctx.call(&call.msg());
    match expect::rpc_accepted(&got, call.xid, AcceptStat::Success) {
        Ok((f, _)) if f.len() > 1024 => {
            Ok(Verdict::pass(want, format!("{long}; a {}-byte inline reply to a 1500-byte READ", f.len())))
        }
        Ok((f, _)) => Ok(Verdict::pass(want, format!("{long}; a {}-byte reply to a 1500-byte READ", f.len()))),
        Err(m) => Ok(Verdict::lax(
            want,
            format!("{long}; but a 1500-byte READ that fits {size} bytes was not answered inline ({m}): the peer keeps the 1024-byte default instead of our receive size (RFC 8797 4.2)"),
        )),
    }
}

/// Connects with `private_data` and checks the peer falls back to 1024-byte thresholds:
/// a 2000-byte READ without chunks must not come back in one Send over 1024 bytes.
fn falls_back_to_1024(ctx: &mut Ctx, private_data: &[u8]) -> Judged {
    ctx.options.receive_size = 1024;
    ctx.connect_with(private_data).or_fail("a connection")?;
    no_send_over_1024(ctx, "the peer assumes 1024-byte inline thresholds: no Send over 1024 bytes")
}

/// On a connection with a 1024-byte receive size: a 2000-byte READ without chunks must not
/// come back in one Send over 1024 bytes.
fn no_send_over_1024(ctx: &mut Ctx, want: &str) -> Judged {
    let fh = lookup(ctx, nfs3::FILE_BIG)?;
    let call = ctx.nfs3(NFSPROC3_READ, nfs3::read_args(&fh, 0, 2000));
    match ctx.call(&call.msg()) {
        Received::Message(f) if f.len() <= 1024 => Ok(Verdict::pass(want, format!("a {}-byte reply", f.len()))),
        Received::Nothing(NoMessage::RecvFailed(s)) => {
            let got = format!("our 1024-byte receive failed ({}): the peer assumed a larger size", s.name());
            Err(Verdict::fail(want, got))
        }
        other => Err(Verdict::fail(want, other.describe())),
    }
}

/// Connects advertising `receive` bytes and READs 2000 bytes of `big` without chunks: the
/// reply's size, or why there is none (a receive that failed: the peer sent more).
fn read_2000_with_receive(ctx: &mut Ctx, receive: u32) -> Result<Result<usize, String>, Verdict> {
    ctx.options.receive_size = receive;
    let pd = ctx.private_data(true);
    ctx.connect_with(&pd).or_fail("a connection")?;
    let fh = lookup(ctx, nfs3::FILE_BIG)?;
    let call = ctx.nfs3(NFSPROC3_READ, nfs3::read_args(&fh, 0, 2000));
    Ok(match ctx.call(&call.msg()) {
        Received::Message(f) => Ok(f.len()),
        Received::Nothing(NoMessage::RecvFailed(s)) => Err(format!("our {receive}-byte receive failed ({})", s.name())),
        other => Err(other.describe()),
    })
}

pub(super) fn settings_change_on_reconnect(ctx: &mut Ctx) -> Judged {
    let want = "on a new connection advertising 1024 bytes after one advertising 4096, no Send over 1024 bytes";
    // Baseline: a peer that does not keep to 1024 bytes even on a first connection is judged
    // by receive-size-honoured, not here.
    match read_2000_with_receive(ctx, 1024)? {
        Ok(n) if n <= 1024 => {}
        other => {
            let got = format!("the peer does not keep to our 1024-byte receive size on a first connection ({other:?})");
            return Err(Verdict::unsupported(want, got));
        }
    }
    let large = read_2000_with_receive(ctx, 4096)?;
    match read_2000_with_receive(ctx, 1024)? {
        Ok(n) if n <= 1024 => {
            Ok(Verdict::pass(want, format!("{n} bytes after reconnecting (the 4096-byte connection gave {large:?})")))
        }
        Ok(n) => Err(Verdict::fail(want, format!("a {n}-byte Send: the settings of the previous connection kept"))),
        Err(why) => Err(Verdict::fail(want, format!("{why}: the settings of the previous connection kept"))),
    }
}

/// Connects with `private_data` (not valid RFC 8797 data, though R would be set in it) and
/// checks the peer behaves as if it had none (RFC 8797 5.1): R taken as zero (a plain Send
/// for a READ offering a write chunk), sizes as 1024 (no Send over 1024 bytes).
fn as_if_no_private_data(ctx: &mut Ctx, private_data: &[u8], what: &str) -> Judged {
    ctx.options.receive_size = 1024;
    ctx.connect_with(private_data).or_fail("a connection")?;
    let want = format!(
        "with {what}: a plain Send for a READ offering a write chunk (R taken as zero), and no Send over 1024 bytes (sizes taken as 1024)"
    );
    let (reply, _) = read_into_fresh_chunk(ctx)?;
    if !ctx.conn().observes_invalidation() {
        // R cannot be seen here: the sizes can still fail the check, never pass it.
        let v = no_send_over_1024(ctx, &want)?;
        let got = format!("{}; whether R was taken as zero cannot be seen on this transport", v.actual);
        return Err(Verdict::unsupported(v.expected, got));
    }
    if let Some(h) = reply.invalidated {
        return Err(Verdict::fail(&want, format!("Send With Invalidate of {h:#x}: R taken as set")));
    }
    no_send_over_1024(ctx, &want)
}

pub(super) fn absent_as_zero_fields(ctx: &mut Ctx) -> Judged {
    as_if_no_private_data(ctx, &[], "no private data")
}

pub(super) fn bad_identifier_as_absent(ctx: &mut Ctx) -> Judged {
    // Our usual private data, R set, with the format identifier's last octet changed.
    let mut pd = ctx.private_data(true);
    pd[3] ^= 0xff;
    as_if_no_private_data(ctx, &pd, "our private data (R set) under a wrong format identifier")
}

pub(super) fn no_private_data(ctx: &mut Ctx) -> Judged {
    falls_back_to_1024(ctx, &[])
}

pub(super) fn bad_format_identifier(ctx: &mut Ctx) -> Judged {
    // Our usual private data with the format identifier's last octet changed (RFC 8797 4).
    let mut pd = ctx.private_data(true);
    pd[3] ^= 0xff;
    falls_back_to_1024(ctx, &pd)
}
