//! Write chunks (RFC 8166 3.4.6, 4.3.2): no XDR pad written, the lengths returned, unused
//! and empty chunks.

use rpcrdma_codec::check::KeyWord;
use rpcrdma_codec::chunk::Segment;
use rpcrdma_codec::rpc::AcceptStat;

use super::nfs::{self, file_contents};
use super::{lookup, start, CallMsg};
use crate::engine::{expect, Check, Ctx, Verdict};
use crate::transport::Access;

/// Canary byte around data a peer may write.
pub(crate) const CANARY: u8 = 0xa5;

/// What a READ through a write chunk produced: the READ3 results as sent inline, the write
/// chunk as returned, and our region's bytes afterwards.
struct ReadThroughChunk {
    results: Vec<u8>,
    returned: Vec<Segment>,
    region: Vec<u8>,
}

/// READ of `five` (5 bytes) into one write chunk of `seg_len` bytes with canaries around.
fn read_into_write_chunk(ctx: &mut Ctx, seg_len: u32) -> Result<ReadThroughChunk, Verdict> {
    start(ctx)?;
    let fh = lookup(ctx, nfs::FILE_FIVE)?;
    let region = ctx.register(seg_len, Access::WRITE);
    ctx.conn().write_local(&region, 0, &vec![CANARY; seg_len as usize]).expect("own region");
    let mut call = CallMsg::nfs3(ctx, nfs::PROC_READ, nfs::read_args(&fh, 0, seg_len));
    call.writes = vec![vec![region.segment()]];
    let ex = ctx.call(call.xid, &call.msg());
    let want = "a READ3 reply with its data in the write chunk";
    let r = expect::rpc_accepted(&ex.received, call.xid, AcceptStat::Success).map_err(|g| Verdict::fail(want, g))?;
    let m = r.message();
    let echo: Vec<Segment> = m
        .header
        .body
        .chunks()
        .and_then(|c| c.writes.chunks().next())
        .map(|c| c.segments().collect())
        .unwrap_or_default();
    let results = r.rpc().map_err(|g| Verdict::fail(want, g))?.body.to_vec();
    let written = ctx.conn().read_local(&region).expect("own region");
    Ok(ReadThroughChunk { results, returned: echo, region: written })
}

fn write_chunk_no_pad(ctx: &mut Ctx) -> Verdict {
    let want = "exactly the 5 data bytes written, the canary bytes after them untouched, the write chunk returned with length 5, and no data inline";
    let ReadThroughChunk { results, returned: echo, region: written } = match read_into_write_chunk(ctx, 16) {
        Ok(x) => x,
        Err(v) => return v,
    };
    let expected = file_contents(5);
    let Some(rr) = nfs::read_result(&results) else { return Verdict::fail(want, "READ3 results do not decode") };
    if rr.status != 0 || rr.count != 5 || rr.data_len != 5 {
        return Verdict::fail(
            want,
            format!("READ3 status {} count {} data length {}", rr.status, rr.count, rr.data_len),
        );
    }
    if results.len() > rr.data_at {
        return Verdict::fail(
            want,
            format!("{} bytes of data inline after the length word", results.len() - rr.data_at),
        );
    }
    if written[..5] != expected[..] {
        return Verdict::fail(want, format!("written {:02x?}, expected {:02x?}", &written[..5], expected));
    }
    if let Some(i) = written[5..].iter().position(|&b| b != CANARY) {
        return Verdict::fail(
            want,
            format!(
                "byte {} past the data was overwritten with {:#04x} (XDR pad written into the chunk)",
                5 + i,
                written[5 + i]
            ),
        );
    }
    match echo.as_slice() {
        [s] if s.length == 5 => Verdict::pass(want, "5 bytes written, canaries intact, returned length 5"),
        other => Verdict::fail(want, format!("returned write chunk {other:?}")),
    }
}

fn unused_write_chunk(ctx: &mut Ctx) -> Verdict {
    if let Err(v) = start(ctx) {
        return v;
    }
    let region = ctx.register(64, Access::WRITE);
    let mut call = CallMsg::nfs3(ctx, nfs::PROC_GETATTR, nfs::getattr_args(&nfs::ROOT_FH));
    call.writes = vec![vec![region.sub_segment(0, 32), region.sub_segment(32, 32)]];
    let want = "the write chunk returned with its 2 segments, each of length 0 (an unused write chunk)";
    let ex = ctx.call(call.xid, &call.msg());
    let r = match expect::rpc_accepted(&ex.received, call.xid, AcceptStat::Success) {
        Ok(r) => r,
        Err(got) => return Verdict::fail(want, got),
    };
    let m = r.message();
    let Some(c) = m.header.body.chunks() else { return Verdict::fail(want, "no chunk lists") };
    let chunks: Vec<Vec<Segment>> = c.writes.chunks().map(|w| w.segments().collect()).collect();
    match chunks.as_slice() {
        [segs] if segs.len() == 2 && segs.iter().all(|s| s.length == 0) => {
            Verdict::pass(want, "returned as an unused write chunk")
        }
        other => Verdict::fail(want, format!("returned write list {other:?}")),
    }
}

fn extra_pad_segment(ctx: &mut Ctx) -> Verdict {
    if let Err(v) = start(ctx) {
        return v;
    }
    let fh = match lookup(ctx, nfs::FILE_FIVE) {
        Ok(fh) => fh,
        Err(v) => return v,
    };
    // As older Linux clients do: the data segment, then a 4-byte segment for the XDR pad.
    let data = ctx.register(8, Access::WRITE);
    let pad = ctx.register(4, Access::WRITE);
    ctx.conn().write_local(&data, 0, &[CANARY; 8]).expect("own region");
    ctx.conn().write_local(&pad, 0, &[CANARY; 4]).expect("own region");
    let mut call = CallMsg::nfs3(ctx, nfs::PROC_READ, nfs::read_args(&fh, 0, 8));
    call.writes = vec![vec![data.segment(), pad.segment()]];
    let want = "5 bytes in the first segment, the pad segment untouched, returned lengths 5 and 0";
    let ex = ctx.call(call.xid, &call.msg());
    let r = match expect::rpc_accepted(&ex.received, call.xid, AcceptStat::Success) {
        Ok(r) => r,
        Err(got) => return Verdict::fail(want, got),
    };
    let m = r.message();
    let echo: Vec<u32> = m
        .header
        .body
        .chunks()
        .and_then(|c| c.writes.chunks().next())
        .map(|c| c.segments().map(|s| s.length).collect())
        .unwrap_or_default();
    let pad_bytes = ctx.conn().read_local(&pad).expect("own region");
    let data_bytes = ctx.conn().read_local(&data).expect("own region");
    if pad_bytes != [CANARY; 4] {
        return Verdict::fail(want, format!("the pad segment was written: {pad_bytes:02x?}"));
    }
    if data_bytes[..5] != file_contents(5)[..] || data_bytes[5..] != [CANARY; 3] {
        return Verdict::fail(want, format!("the data segment holds {data_bytes:02x?}"));
    }
    if echo != [5, 0] {
        return Verdict::fail(want, format!("returned lengths {echo:?}"));
    }
    Verdict::pass(want, "5 bytes written, pad segment untouched, lengths [5, 0]")
}

fn empty_write_chunk(ctx: &mut Ctx) -> Verdict {
    if let Err(v) = start(ctx) {
        return v;
    }
    let fh = match lookup(ctx, nfs::FILE_FIVE) {
        Ok(fh) => fh,
        Err(v) => return v,
    };
    let mut call = CallMsg::nfs3(ctx, nfs::PROC_READ, nfs::read_args(&fh, 0, 8));
    call.writes = vec![Vec::new()];
    let want = "the 5 data bytes inline, and an empty write chunk (segment count 0) returned in its place";
    let ex = ctx.call(call.xid, &call.msg());
    let r = match expect::rpc_accepted(&ex.received, call.xid, AcceptStat::Success) {
        Ok(r) => r,
        Err(got) => return Verdict::fail(want, got),
    };
    let m = r.message();
    let counts: Vec<usize> =
        m.header.body.chunks().map(|c| c.writes.chunks().map(|w| w.segment_count()).collect()).unwrap_or_default();
    if counts != [0] {
        return Verdict::fail(want, format!("returned write list with segment counts {counts:?}"));
    }
    let Ok(rpc) = r.rpc() else { return Verdict::fail(want, "the reply has no RPC payload inline") };
    match nfs::read_result(rpc.body) {
        Some(rr) if rr.status == 0 && rpc.body.get(rr.data_at..rr.data_at + 5) == Some(&file_contents(5)[..]) => {
            Verdict::pass(want, "data inline, empty write chunk returned")
        }
        other => Verdict::fail(want, format!("READ3 result {other:?}")),
    }
}

pub static CHECKS: [Check; 4] = [
    Check {
        id: "rfc8166/3.4.6.2/write-chunk-no-pad",
        requirement: "A Responder MUST NOT write XDR roundup padding into a Write chunk, even if the Requester made space available for it.",
        key_word: KeyWord::MustNot,
        acceptable: "exactly 5 bytes written, canaries untouched, the chunk returned with length 5, no inline data",
        rationale: "Padding written into a write chunk overwrites the requester's memory past the data item.",
        groups: &["chunks", "padding", "write-chunks"],
        run: write_chunk_no_pad,
    },
    Check {
        id: "rfc8166/4.3.2.2/unused-write-chunk",
        requirement: "If this is the last or only Write chunk available and it remains unconsumed, the Responder MUST return this Write chunk as an unused Write chunk.",
        key_word: KeyWord::Must,
        acceptable: "the write chunk echoed with its segment count and every length 0",
        rationale: "The requester matches returned chunks to results by position in the list.",
        groups: &["chunks", "write-chunks"],
        run: unused_write_chunk,
    },
    Check {
        id: "rfc8166/3.4.6.2/write-chunk-extra-pad-segment",
        requirement: "A Responder MUST NOT write XDR roundup padding into a Write chunk, even if the Requester made space available for it.",
        key_word: KeyWord::MustNot,
        acceptable: "the data in the first segment, the 4-byte pad segment untouched, returned lengths 5 and 0",
        rationale: "Linux clients before 4.9 add a pad segment to every write chunk; responders must leave it alone.",
        groups: &["chunks", "padding", "write-chunks"],
        run: extra_pad_segment,
    },
    Check {
        id: "rfc8166/4.3.2.3/empty-write-chunk",
        requirement: "The Responder MUST return the corresponding result data item inline and MUST return an empty Write chunk in that Write list position in the RPC Reply message.",
        key_word: KeyWord::Must,
        acceptable: "the data inline and an empty write chunk in the returned write list",
        rationale: "Requesters use empty write chunks to force small results inline.",
        groups: &["chunks", "write-chunks"],
        run: empty_write_chunk,
    },
];
