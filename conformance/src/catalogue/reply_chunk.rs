//! The reply chunk (RFC 8166 3.5.3, 4.3.3): long replies through it, short replies inline,
//! and a chunk too small for the reply.

use rpcrdma_codec::check::KeyWord;
use rpcrdma_codec::rpc::{AcceptStat, RpcMessage};
use rpcrdma_codec::v1::Body;

use super::nfs;
use super::{lookup, start, CallMsg};
use crate::engine::{expect, Check, Ctx, Received, Verdict};
use crate::transport::{Access, Region};

/// Connects with a 1024-byte receive size and sends a READDIR of `dir` (a reply of about
/// 1.1 KiB) offering a reply chunk of `chunk_len` bytes; the call, the region and the answer.
fn long_readdir(ctx: &mut Ctx, chunk_len: u32) -> Result<(CallMsg, Region, Received), Verdict> {
    ctx.options.receive_size = 1024;
    start(ctx)?;
    let dir = lookup(ctx, nfs::DIR_MANY)?;
    let region = ctx.register(chunk_len, Access::WRITE);
    let mut call = CallMsg::nfs3(ctx, nfs::PROC_READDIR, nfs::readdir_args(&dir, 0, [0; 8], 8192));
    call.reply = Some(vec![region.segment()]);
    let ex = ctx.call(call.xid, &call.msg());
    Ok((call, region, ex.received))
}

fn long_reply_via_reply_chunk(ctx: &mut Ctx) -> Verdict {
    let (call, region, received) = match long_readdir(ctx, 16384) {
        Ok(x) => x,
        Err(v) => return v,
    };
    let want = "RDMA_NOMSG with the reply chunk holding the whole RPC reply (our receive size is 1024)";
    let r = match expect::reply_to(&received, call.xid) {
        Ok(r) => r,
        Err(got) => return Verdict::fail(want, got),
    };
    let m = r.message();
    match m.header.body {
        Body::NoMsg(c) => {
            let Some(rc) = c.reply else { return Verdict::fail(want, "RDMA_NOMSG without a reply chunk") };
            let len = rc.length() as usize;
            let written = ctx.conn().read_local(&region).expect("own region");
            if len == 0 || len > written.len() {
                return Verdict::fail(want, format!("reply chunk returned with length {len}"));
            }
            match RpcMessage::decode(&written[..len]) {
                Ok(rpc) => match expect::check_accepted(&rpc.header, call.xid, AcceptStat::Success) {
                    Ok(()) => Verdict::pass(want, format!("RDMA_NOMSG, {len} bytes through the reply chunk")),
                    Err(got) => Verdict::fail(want, got),
                },
                Err(e) => Verdict::fail(want, format!("the reply chunk does not hold an RPC reply: {e}")),
            }
        }
        Body::Msg(_) if r.bytes.len() <= 1024 => Verdict::pass(want, "the reply fit inline in 1024 bytes"),
        other => Verdict::fail(want, expect::describe_body(&other)),
    }
}

fn reply_chunk_for_small_reply(ctx: &mut Ctx) -> Verdict {
    if let Err(v) = start(ctx) {
        return v;
    }
    let region = ctx.register(4096, Access::WRITE);
    let mut call = CallMsg::nfs3(ctx, nfs::PROC_NULL, Vec::new());
    call.reply = Some(vec![region.segment()]);
    let want = "an inline RDMA_MSG reply (reply chunk absent or returned with zero length), or RDMA_NOMSG through the reply chunk";
    let ex = ctx.call(call.xid, &call.msg());
    let r = match expect::rpc_accepted(&ex.received, call.xid, AcceptStat::Success) {
        Ok(r) => r,
        Err(got) => return Verdict::fail(want, got),
    };
    let v = r.violations();
    if let Some(x) = v.iter().next() {
        return Verdict::fail(want, format!("the reply breaks {x}"));
    }
    let m = r.message();
    Verdict::pass(want, m.header.to_string())
}

fn reply_chunk_too_small(ctx: &mut Ctx) -> Verdict {
    let (call, _region, received) = match long_readdir(ctx, 64) {
        Ok(x) => x,
        Err(v) => return v,
    };
    let want = "ERR_CHUNK, or an RPC reply that fits our 1024-byte receive; never a Send larger than 1024 bytes";
    match &received {
        Received::Message { bytes, .. } if bytes.len() <= 1024 => match expect::err_chunk(&received, call.xid) {
            Ok(_) => Verdict::pass(want, "ERR_CHUNK"),
            Err(_) => Verdict::pass(want, format!("a {}-byte reply: {}", bytes.len(), received.describe())),
        },
        Received::Disconnected => {
            Verdict::lax(want, "the peer closed the connection (RFC 8166 4.5.3 allows this for RDMA errors)")
        }
        other => Verdict::fail(want, other.describe()),
    }
}

pub static CHECKS: [Check; 3] = [
    Check {
        id: "rfc8166/3.5.3/long-reply-via-reply-chunk",
        requirement: "A Requester MUST provide a Reply chunk whenever the maximum possible size of the RPC Reply message's Transport and Payload streams is larger than the inline threshold for messages from Responder to Requester.",
        key_word: KeyWord::Must,
        acceptable: "RDMA_NOMSG whose reply chunk holds the RPC reply, or an inline reply that fits 1024 bytes",
        rationale: "A responder that ignores the reply chunk overruns the requester's receive buffer.",
        groups: &["chunks", "reply-chunk"],
        run: long_reply_via_reply_chunk,
    },
    Check {
        id: "rfc8166/4.3.3/reply-chunk-for-small-reply",
        requirement: "If the Transport stream and Payload stream together are smaller than the reply inline threshold, the Responder MAY return the RPC Reply message as a Short message rather than using the Requester-provided Reply chunk.",
        key_word: KeyWord::May,
        acceptable: "an inline reply with the reply chunk absent or zero-length, or the reply through the chunk",
        rationale: "Requesters offer reply chunks whenever a reply might be long; most replies are short.",
        groups: &["chunks", "reply-chunk"],
        run: reply_chunk_for_small_reply,
    },
    Check {
        id: "rfc8166/4.5.3/reply-chunk-too-small",
        requirement: "If the Requester-provided Reply chunk is too small to accommodate a large RPC Reply message, a Remote Access Error occurs. A Responder might detect this problem before attempting to write past the end of the Reply chunk. ... the Responder MUST close the connection to signal to the Requester that a reply was lost.",
        key_word: KeyWord::Must,
        acceptable: "ERR_CHUNK or an RPC reply within 1024 bytes; closing the connection is pass-lax",
        rationale: "A responder that sends the long reply inline anyway overruns the receive buffer.",
        groups: &["chunks", "reply-chunk", "errors"],
        run: reply_chunk_too_small,
    },
];
