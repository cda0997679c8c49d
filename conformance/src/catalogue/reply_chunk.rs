//! The reply chunk (RFC 8166 3.5.3, 4.3.3): long replies through it, short replies inline,
//! and a chunk too small for the reply.

use rpcrdma_codec::chunk::Segment;
use rpcrdma_codec::rpc::AcceptStat;

use rpcrdma_peers::proto::nfs3::{self, NFSPROC3_READ, NFSPROC3_READDIR};
use rpcrdma_peers::proto::Call;
use rpcrdma_peers::transport::{Access, Region};

use super::steps::{lookup, start};
use crate::engine::{expect, Check, CheckInfo, Ctx, Judged, NoMessage, OrFail, Outcome, Received, Verdict};
use crate::frame::rpc::RpcKind;
use crate::frame::v1::Body;
use crate::frame::Rpc;

/// Connects with a 1024-byte receive size and sends a READDIR of `dir` (a reply of about
/// 1.1 KiB) offering a reply chunk of `chunk_len` bytes; the call, the region and the answer.
fn long_readdir(ctx: &mut Ctx, chunk_len: u32) -> Result<(Call, Region, Received), Verdict> {
    ctx.options.receive_size = 1024;
    start(ctx)?;
    let dir = lookup(ctx, nfs3::DIR_MANY)?;
    let region = ctx.register(chunk_len, Access::WRITE);
    let mut call = ctx.nfs3(NFSPROC3_READDIR, nfs3::readdir_args(&dir, 0, [0; 8], 8192));
    call.reply = Some(vec![region.segment()]);
    let got = ctx.call(&call.msg());
    Ok((call, region, got))
}

fn long_reply_via_reply_chunk(ctx: &mut Ctx) -> Judged {
    let (call, region, got) = long_readdir(ctx, 16384)?;
    let want = "RDMA_NOMSG with the reply chunk provided (handle and offset unchanged) holding the whole RPC reply (our receive size is 1024)";
    let (f, h) = expect::reply_to(&got, call.xid).or_fail(want)?;
    match &h.body {
        Body::NoMsg { chunks } => {
            let rc = chunks.reply.as_ref().ok_or("RDMA_NOMSG without a reply chunk").or_fail(want)?;
            // The chunk we provided: one segment, its handle and offset as offered.
            let offered = region.segment();
            if !matches!(rc.as_slice(), [s] if s.handle == offered.handle && s.offset == offered.offset) {
                let got = format!("reply chunk returned as {rc:?}, not the one provided ({offered:?})");
                return Err(Verdict::fail(want, got));
            }
            let len = rc.iter().map(|s| s.length as usize).sum::<usize>();
            let written = ctx.conn().read_local(&region).expect("own region");
            if len == 0 || len > written.len() {
                return Err(Verdict::fail(want, format!("reply chunk returned with length {len}")));
            }
            // The RPC reply arrived by RDMA Write into our region: decoded here, once.
            let reply = Rpc::decode(&written[..len], 0..len)
                .map_err(|e| format!("the reply chunk does not hold an RPC reply: {e}"))
                .or_fail(want)?;
            expect::check_accepted(&reply, call.xid, AcceptStat::Success).or_fail(want)?;
            if nfs3::readdir_result(&written[reply.body.clone()]).is_none() {
                return Err(Verdict::fail(
                    want,
                    format!("the {len} bytes in the reply chunk are not a whole READDIR3res"),
                ));
            }
            Ok(Verdict::pass(want, format!("RDMA_NOMSG, {len} bytes through the reply chunk")))
        }
        // A reply that fits inline never needed the reply chunk (RFC 8166 3.5.3): the peer
        // had no chance to overrun our receive, so nothing is judged.
        Body::Msg { .. } if f.len() <= 1024 => Err(Verdict::inconclusive(
            want,
            format!("the {}-byte reply fit inline in 1024 bytes: the reply chunk was never needed", f.len()),
        )),
        other => Err(Verdict::fail(want, other.describe())),
    }
}

fn reply_chunk_for_small_reply(ctx: &mut Ctx) -> Judged {
    start(ctx)?;
    let region = ctx.register(4096, Access::WRITE);
    let mut call = ctx.null();
    // Two segments, so a copy that keeps only one, or reorders them, shows.
    let offered = vec![region.sub_segment(0, 2048), region.sub_segment(2048, 2048)];
    call.reply = Some(offered.clone());
    let want = "the reply chunk copied into the reply's header, same segments (handles and offsets) in order: with zero lengths in an inline RDMA_MSG, or with the lengths written for RDMA_NOMSG";
    let got = ctx.call(&call.msg());
    let (_, h) = expect::rpc_accepted(&got, call.xid, AcceptStat::Success).or_fail(want)?;
    if let Some(x) = h.violations.first() {
        return Err(Verdict::fail(want, format!("the reply breaks {x}")));
    }
    let chunks = h.body.chunks().ok_or("a reply without chunk lists").or_fail(want)?;
    let Some(copy) = &chunks.reply else {
        return Err(Verdict::fail(want, format!("{} without the reply chunk (MUST copy it)", h.body.describe())));
    };
    let same = |a: &[rpcrdma_codec::chunk::Segment]| {
        a.len() == offered.len() && a.iter().zip(&offered).all(|(x, y)| x.handle == y.handle && x.offset == y.offset)
    };
    if !same(copy) {
        return Err(Verdict::fail(want, format!("reply chunk returned as {copy:?}, offered {offered:?}")));
    }
    match &h.body {
        Body::Msg { .. } if copy.iter().any(|s| s.length != 0) => {
            Err(Verdict::fail(want, format!("an inline reply whose reply chunk claims lengths {copy:?}")))
        }
        Body::Msg { .. } => Ok(Verdict::pass(want, "inline RDMA_MSG, reply chunk copied with zero lengths")),
        _ => Ok(Verdict::pass(want, format!("{}, reply chunk copied", h.body.describe()))),
    }
}

fn reply_chunk_too_small(ctx: &mut Ctx) -> Judged {
    let (call, region, got) = long_readdir(ctx, 64)?;
    let want = "ERR_CHUNK, a complete RPC reply for the XID that fits (inline within 1024 bytes, or whole in the 64-byte reply chunk), or the connection closed; never a truncated reply, a Send over 1024 bytes, or silence on a live connection";
    match &got {
        Received::Message(f) if f.len() <= 1024 => {
            if expect::err_chunk(&got, call.xid).is_ok() {
                return Ok(Verdict::pass(want, "ERR_CHUNK"));
            }
            let (_, h) = expect::reply_to(&got, call.xid).or_fail(want)?;
            match &h.body {
                // An inline reply (a shorter directory listing) is a reply: it must decode.
                Body::Msg { .. } => {
                    let rpc = expect::rpc(f).or_fail(want)?;
                    let whole = match rpc.kind {
                        RpcKind::Call { .. } => false,
                        _ if rpc.xid != call.xid => false,
                        RpcKind::Accepted(AcceptStat::Success) => {
                            nfs3::readdir_result(f.slice(rpc.body.clone())).is_some()
                        }
                        _ => true,
                    };
                    if !whole {
                        let got = format!("an inline message that is not a complete reply: {}", got.describe());
                        return Err(Verdict::fail(want, got));
                    }
                    Ok(Verdict::pass(want, format!("a complete {}-byte inline reply: {}", f.len(), got.describe())))
                }
                Body::NoMsg { chunks } => {
                    // Whatever was written into the 64-byte chunk must be the whole reply.
                    let len = chunks.reply.as_ref().map_or(0, |rc| rc.iter().map(|s| s.length as usize).sum());
                    let written = ctx.conn().read_local(&region).expect("own region");
                    let whole = len <= written.len()
                        && Rpc::decode(&written[..len], 0..len).is_ok_and(|r| {
                            expect::check_accepted(&r, call.xid, AcceptStat::Success).is_ok()
                                && nfs3::readdir_result(&written[r.body.clone()]).is_some()
                        });
                    if !whole {
                        let got = format!("RDMA_NOMSG with {len} bytes in the reply chunk: not a complete RPC reply (a truncated reply, connection kept)");
                        return Err(Verdict::fail(want, got));
                    }
                    Ok(Verdict::pass(want, format!("a complete {len}-byte reply in the reply chunk")))
                }
                other => Err(Verdict::fail(want, other.describe())),
            }
        }
        Received::Nothing(NoMessage::Disconnected) => {
            Ok(Verdict::pass(want, "the peer closed the connection (RFC 8166 4.5.4: no reply could be sent)"))
        }
        Received::Nothing(NoMessage::Silence) => {
            if ctx.liveness() {
                Err(Verdict::fail(want, "no reply and no error, and the connection still answers (MUST close it)"))
            } else {
                Ok(Verdict::pass(want, "no reply, then the connection was closed"))
            }
        }
        other => Err(Verdict::fail(want, other.describe())),
    }
}

fn reply_chunk_segments(ctx: &mut Ctx) -> Judged {
    // A reply of about 1.1 KiB into a reply chunk of three segments of 400, 400 and 4096
    // bytes in two regions: filled 400, 400 and the rest, in order.
    ctx.options.receive_size = 1024;
    start(ctx)?;
    let dir = lookup(ctx, nfs3::DIR_MANY)?;
    let a = ctx.register(1024, Access::WRITE);
    let b = ctx.register(4096, Access::WRITE);
    let offered = vec![a.sub_segment(16, 400), a.sub_segment(512, 400), b.sub_segment(0, 4096)];
    let mut call = ctx.nfs3(NFSPROC3_READDIR, nfs3::readdir_args(&dir, 0, [0; 8], 8192));
    call.reply = Some(offered.clone());
    let want = "RDMA_NOMSG with the reply chunk copied (3 segments, handles and offsets unchanged), filled 400, 400 and the rest in order, the segments together holding the whole READDIR reply";
    let got = ctx.call(&call.msg());
    let (_, h) = expect::reply_to(&got, call.xid).or_fail(want)?;
    let Body::NoMsg { chunks } = &h.body else {
        return Err(Verdict::fail(want, format!("{} (the reply does not fit 1024 bytes inline)", h.body.describe())));
    };
    let rc = chunks.reply.as_ref().ok_or("RDMA_NOMSG without a reply chunk").or_fail(want)?;
    let coordinates = |s: &[Segment]| s.iter().map(|x| (x.handle, x.offset)).collect::<Vec<_>>();
    if coordinates(rc) != coordinates(&offered) {
        return Err(Verdict::fail(want, format!("reply chunk returned as {rc:?}, offered {offered:?}")));
    }
    let lengths: Vec<u32> = rc.iter().map(|s| s.length).collect();
    if lengths[0] != 400 || lengths[1] != 400 || lengths[2] == 0 || lengths[2] > 4096 {
        return Err(Verdict::fail(want, format!("returned lengths {lengths:?}")));
    }
    let (ra, rb) = (ctx.conn().read_local(&a).expect("own region"), ctx.conn().read_local(&b).expect("own region"));
    let whole = [&ra[16..416], &ra[512..912], &rb[..lengths[2] as usize]].concat();
    let reply = Rpc::decode(&whole, 0..whole.len())
        .map_err(|e| format!("the segments do not hold an RPC reply: {e}"))
        .or_fail(want)?;
    expect::check_accepted(&reply, call.xid, AcceptStat::Success).or_fail(want)?;
    if nfs3::readdir_result(&whole[reply.body.clone()]).is_none() {
        return Err(Verdict::fail(want, "the segments in order do not hold a whole READDIR3res"));
    }
    Ok(Verdict::pass(want, format!("lengths {lengths:?}, the whole reply across the segments in order")))
}

fn reply_chunk_roundup(ctx: &mut Ctx) -> Judged {
    // A 1001-byte READ with no write chunk: the data item stays in the reply's payload, which
    // is too long for our 1024-byte receive and goes through the reply chunk, pad and all.
    ctx.options.receive_size = 1024;
    start(ctx)?;
    let fh = lookup(ctx, nfs3::FILE_BIG)?;
    let region = ctx.register(4096, Access::WRITE);
    let mut call = ctx.nfs3(NFSPROC3_READ, nfs3::read_args(&fh, 0, 1001));
    call.reply = Some(vec![region.segment()]);
    let want = "RDMA_NOMSG whose reply chunk holds the READ reply with the 1001-byte data item padded to 1004 bytes (the chunk length a multiple of 4, the reply ending after the pad)";
    let got = ctx.call(&call.msg());
    let (_, h) = expect::reply_to(&got, call.xid).or_fail(want)?;
    let Body::NoMsg { chunks } = &h.body else {
        return Err(Verdict::fail(want, format!("{} (the reply does not fit 1024 bytes inline)", h.body.describe())));
    };
    let len = chunks.reply.as_ref().map_or(0, |rc| rc.iter().map(|s| s.length as usize).sum::<usize>());
    let written = ctx.conn().read_local(&region).expect("own region");
    if len > written.len() {
        return Err(Verdict::fail(want, format!("reply chunk returned with length {len}")));
    }
    let reply = Rpc::decode(&written[..len], 0..len)
        .map_err(|e| format!("the reply chunk does not hold an RPC reply: {e}"))
        .or_fail(want)?;
    expect::check_accepted(&reply, call.xid, AcceptStat::Success).or_fail(want)?;
    let results = &written[reply.body.clone()];
    let rr = nfs3::read_result(results).ok_or("READ3 results do not decode").or_fail(want)?;
    if rr.status != 0 || rr.data_len != 1001 {
        return Err(Verdict::fail(want, format!("READ3 status {} data length {}", rr.status, rr.data_len)));
    }
    if results.get(rr.data_at..rr.data_at + 1001) != Some(&nfs3::file_contents(70000)[..1001]) {
        return Err(Verdict::fail(want, "the READ data in the reply chunk is not the file's"));
    }
    let after = results.len() - rr.data_at;
    if after != 1004 || len % 4 != 0 {
        let got = format!("{after} bytes from the data item to the end of the {len}-byte reply (want 1001 + 3 pad)");
        return Err(Verdict::fail(want, got));
    }
    Ok(Verdict::pass(want, format!("{len} bytes through the reply chunk, the data item padded to 1004")))
}

pub static CHECKS: [Check; 5] = [
    Check {
        info: CheckInfo {
            id: "rfc8166/3.5.3/long-reply-via-reply-chunk",
            judges: &["rfc8166/3.5.3#1", "rfc8166/3.5.3#4", "~rfc8166/4.2.4#2", "~rfc8166/4.3.3#3"],
            acceptable: "RDMA_NOMSG whose reply chunk, returned with the handle and offset provided, holds the RPC reply (an inline reply that fits 1024 bytes is inconclusive)",
            rationale: "A responder that ignores the reply chunk overruns the requester's receive buffer.",
            groups: &["chunks", "reply-chunk"],
            broken_by: &[("ignore-reply-chunk", Outcome::Fail), ("reply-chunk-offset-advanced", Outcome::Fail)],
            precondition: Some("a reply too long for our 1024-byte receive: the READDIR of the 20-entry directory does not fit inline (a responder that returns fewer entries, so the reply fits, gives the check nothing to judge)"),
        },
        run: long_reply_via_reply_chunk,
    },
    Check {
        info: CheckInfo {
            id: "rfc8166/4.3.3/reply-chunk-for-small-reply",
            judges: &["~rfc8166/4.3.3#2", "rfc8166/4.3.3#3"],
            acceptable: "an inline RDMA_MSG whose reply chunk is the offered one (same handles and offsets, in order) with zero lengths, or the reply through the chunk; a reply chunk left out is a failure",
            rationale: "Requesters offer reply chunks whenever a reply might be long; most replies are short, and the copied chunk is how the requester learns none of it was used.",
            groups: &["chunks", "reply-chunk"],
            broken_by: &[("echo-reply-chunk-lengths", Outcome::Fail), ("omit-reply-chunk-echo", Outcome::Fail)],
            precondition: None,
        },
        run: reply_chunk_for_small_reply,
    },
    Check {
        info: CheckInfo {
            id: "rfc8166/4.5.4/reply-chunk-too-small",
            judges: &["rfc8166/3.5.3#1", "~rfc8166/4.5.3#1", "rfc8166/4.5.4#2", "rfc8797/3.1#1"],
            acceptable: "ERR_CHUNK (RFC 8166 4.5.3), a complete RPC reply that fits, or the connection closed; a truncated reply, a Send over 1024 bytes, or no reply on a connection kept open fail",
            rationale: "RFC 8166 4.5.3 names a reply chunk too small for the reply; a responder that neither reports it nor closes leaves the requester waiting, and a truncated reply corrupts it.",
            groups: &["chunks", "reply-chunk", "errors"],
            broken_by: &[
                ("ignore-reply-chunk", Outcome::Fail),
                ("reply-chunk-truncated", Outcome::Fail),
                ("drop-unsendable-reply", Outcome::Fail),
            ],
            precondition: None,
        },
        run: reply_chunk_too_small,
    },
    Check {
        info: CheckInfo {
            id: "rfc8166/3.5.3/reply-chunk-roundup",
            judges: &["~rfc8166/3.5.3#4", "rfc8166/3.5.3#5"],
            acceptable: "the reply in the reply chunk with the odd-length READ data followed by its 3-byte XDR pad, the returned length a multiple of 4",
            rationale: "A reply chunk holds a whole Payload stream: without the pad the requester's XDR decoder misreads or rejects it.",
            groups: &["chunks", "reply-chunk", "padding"],
            broken_by: &[("reply-chunk-unpadded", Outcome::Fail)],
            precondition: None,
        },
        run: reply_chunk_roundup,
    },
    Check {
        info: CheckInfo {
            id: "rfc8166/3.4.6/reply-chunk-segments",
            judges: &["~rfc8166/3.4.6#2", "~rfc8166/3.5.3#4", "~rfc8166/4.3.3#3"],
            acceptable: "a long reply through a reply chunk of 3 segments (RFC 8166 3.5.3: the Reply chunk is a special Write chunk) filled 400, 400 and the rest, copied with handles and offsets unchanged",
            rationale: "Requesters build reply chunks from scattered pages; writing past a segment's end is a remote access error that kills the connection.",
            groups: &["chunks", "reply-chunk"],
            broken_by: &[("reply-chunk-first-segment", Outcome::Fail)],
            precondition: None,
        },
        run: reply_chunk_segments,
    },
];
