//! The reply chunk (RFC 8166 3.5.3, 4.3.3): long replies through it, short replies inline,
//! and a chunk too small for the reply.

use rpcrdma_codec::check::KeyWord;
use rpcrdma_codec::rpc::AcceptStat;

use rpcrdma_peers::proto::nfs3::{self, NFSPROC3_READDIR};
use rpcrdma_peers::proto::Call;
use rpcrdma_peers::transport::{Access, Region};

use super::{lookup, start};
use crate::engine::{expect, Check, CheckInfo, Ctx, Judged, NoMessage, OrFail, Outcome, Received, Verdict};
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
    let want = "RDMA_NOMSG with the reply chunk holding the whole RPC reply (our receive size is 1024)";
    let (f, h) = expect::reply_to(&got, call.xid).or_fail(want)?;
    match &h.body {
        Body::NoMsg { chunks } => {
            let rc = chunks.reply.as_ref().ok_or("RDMA_NOMSG without a reply chunk").or_fail(want)?;
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
            Ok(Verdict::pass(want, format!("RDMA_NOMSG, {len} bytes through the reply chunk")))
        }
        Body::Msg { .. } if f.len() <= 1024 => Ok(Verdict::pass(want, "the reply fit inline in 1024 bytes")),
        other => Err(Verdict::fail(want, other.describe())),
    }
}

fn reply_chunk_for_small_reply(ctx: &mut Ctx) -> Judged {
    start(ctx)?;
    let region = ctx.register(4096, Access::WRITE);
    let mut call = ctx.null();
    call.reply = Some(vec![region.segment()]);
    let want = "an inline RDMA_MSG reply (reply chunk absent or returned with zero length), or RDMA_NOMSG through the reply chunk";
    let got = ctx.call(&call.msg());
    let (_, h) = expect::rpc_accepted(&got, call.xid, AcceptStat::Success).or_fail(want)?;
    if let Some(x) = h.violations.first() {
        return Err(Verdict::fail(want, format!("the reply breaks {x}")));
    }
    Ok(Verdict::pass(want, h.to_string()))
}

fn reply_chunk_too_small(ctx: &mut Ctx) -> Judged {
    let (call, _region, got) = long_readdir(ctx, 64)?;
    let want = "ERR_CHUNK, or an RPC reply that fits our 1024-byte receive; never a Send larger than 1024 bytes";
    match &got {
        Received::Message(f) if f.len() <= 1024 => match expect::err_chunk(&got, call.xid) {
            Ok(_) => Ok(Verdict::pass(want, "ERR_CHUNK")),
            Err(_) => Ok(Verdict::pass(want, format!("a {}-byte reply: {}", f.len(), got.describe()))),
        },
        Received::Nothing(NoMessage::Disconnected) => {
            Ok(Verdict::lax(want, "the peer closed the connection (RFC 8166 4.5.3 allows this for RDMA errors)"))
        }
        other => Err(Verdict::fail(want, other.describe())),
    }
}

pub static CHECKS: [Check; 3] = [
    Check {
        info: CheckInfo {
            id: "rfc8166/3.5.3/long-reply-via-reply-chunk",
            requirement: "A Requester MUST provide a Reply chunk whenever the maximum possible size of the RPC Reply message's Transport and Payload streams is larger than the inline threshold for messages from Responder to Requester.",
            key_word: KeyWord::Must,
            acceptable: "RDMA_NOMSG whose reply chunk holds the RPC reply, or an inline reply that fits 1024 bytes",
            rationale: "A responder that ignores the reply chunk overruns the requester's receive buffer.",
            groups: &["chunks", "reply-chunk"],
            broken_by: &[("ignore-reply-chunk", Outcome::Fail)],
        },
        run: long_reply_via_reply_chunk,
    },
    Check {
        info: CheckInfo {
            id: "rfc8166/4.3.3/reply-chunk-for-small-reply",
            requirement: "If the Transport stream and Payload stream together are smaller than the reply inline threshold, the Responder MAY return the RPC Reply message as a Short message rather than using the Requester-provided Reply chunk.",
            key_word: KeyWord::May,
            acceptable: "an inline reply with the reply chunk absent or zero-length, or the reply through the chunk",
            rationale: "Requesters offer reply chunks whenever a reply might be long; most replies are short.",
            groups: &["chunks", "reply-chunk"],
            broken_by: &[("echo-reply-chunk-lengths", Outcome::Fail)],
        },
        run: reply_chunk_for_small_reply,
    },
    Check {
        info: CheckInfo {
            id: "rfc8166/4.5.3/reply-chunk-too-small",
            requirement: "If the Requester-provided Reply chunk is too small to accommodate a large RPC Reply message, a Remote Access Error occurs. A Responder might detect this problem before attempting to write past the end of the Reply chunk. ... the Responder MUST close the connection to signal to the Requester that a reply was lost.",
            key_word: KeyWord::Must,
            acceptable: "ERR_CHUNK or an RPC reply within 1024 bytes; closing the connection is pass-lax",
            rationale: "A responder that sends the long reply inline anyway overruns the receive buffer.",
            groups: &["chunks", "reply-chunk", "errors"],
            broken_by: &[("ignore-reply-chunk", Outcome::Fail)],
        },
        run: reply_chunk_too_small,
    },
];
