//! Write chunks (RFC 8166 3.4.6, 4.3.2): no XDR pad written, the lengths returned, unused
//! and empty chunks.

use rpcrdma_codec::check::KeyWord;
use rpcrdma_codec::chunk::Segment;
use rpcrdma_codec::rpc::AcceptStat;

use rpcrdma_peers::proto::nfs3::{self, file_contents, NFSPROC3_GETATTR, NFSPROC3_READ, ROOT_FH};
use rpcrdma_peers::transport::Access;

use super::{lookup, start};
use crate::engine::{expect, Check, CheckInfo, Ctx, Judged, OrFail, Outcome, Verdict};
use crate::frame::v1::Header;

/// Canary byte around data a peer may write.
pub(crate) const CANARY: u8 = 0xa5;

/// The first write chunk a reply returned, or none.
fn first_write_chunk(h: &Header) -> Vec<Segment> {
    h.body.chunks().and_then(|c| c.writes.first()).cloned().unwrap_or_default()
}

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
    let fh = lookup(ctx, nfs3::FILE_FIVE)?;
    let region = ctx.register(seg_len, Access::WRITE);
    ctx.conn().write_local(&region, 0, &vec![CANARY; seg_len as usize]).expect("own region");
    let mut call = ctx.nfs3(NFSPROC3_READ, nfs3::read_args(&fh, 0, seg_len));
    call.writes = vec![vec![region.segment()]];
    let got = ctx.call(&call.msg());
    let want = "a READ3 reply with its data in the write chunk";
    let (f, h) = expect::rpc_accepted(&got, call.xid, AcceptStat::Success).or_fail(want)?;
    let returned = first_write_chunk(h);
    let results = expect::results(f).or_fail(want)?.to_vec();
    let region = ctx.conn().read_local(&region).expect("own region");
    Ok(ReadThroughChunk { results, returned, region })
}

fn write_chunk_no_pad(ctx: &mut Ctx) -> Judged {
    let want = "exactly the 5 data bytes written, the canary bytes after them untouched, the write chunk returned with length 5, and no data inline";
    let ReadThroughChunk { results, returned, region: written } = read_into_write_chunk(ctx, 16)?;
    let expected = file_contents(5);
    let rr = nfs3::read_result(&results).ok_or("READ3 results do not decode").or_fail(want)?;
    if rr.status != 0 || rr.count != 5 || rr.data_len != 5 {
        let got = format!("READ3 status {} count {} data length {}", rr.status, rr.count, rr.data_len);
        return Err(Verdict::fail(want, got));
    }
    if results.len() > rr.data_at {
        let got = format!("{} bytes of data inline after the length word", results.len() - rr.data_at);
        return Err(Verdict::fail(want, got));
    }
    if written[..5] != expected[..] {
        return Err(Verdict::fail(want, format!("written {:02x?}, expected {:02x?}", &written[..5], expected)));
    }
    if let Some(i) = written[5..].iter().position(|&b| b != CANARY) {
        let (at, byte) = (5 + i, written[5 + i]);
        let got = format!("byte {at} past the data was overwritten with {byte:#04x} (XDR pad written into the chunk)");
        return Err(Verdict::fail(want, got));
    }
    match returned.as_slice() {
        [s] if s.length == 5 => Ok(Verdict::pass(want, "5 bytes written, canaries intact, returned length 5")),
        other => Err(Verdict::fail(want, format!("returned write chunk {other:?}"))),
    }
}

fn unused_write_chunk(ctx: &mut Ctx) -> Judged {
    start(ctx)?;
    let region = ctx.register(64, Access::WRITE);
    let mut call = ctx.nfs3(NFSPROC3_GETATTR, nfs3::getattr_args(&ROOT_FH));
    call.writes = vec![vec![region.sub_segment(0, 32), region.sub_segment(32, 32)]];
    let want = "the write chunk returned with its 2 segments, each of length 0 (an unused write chunk)";
    let got = ctx.call(&call.msg());
    let (_, h) = expect::rpc_accepted(&got, call.xid, AcceptStat::Success).or_fail(want)?;
    let c = h.body.chunks().ok_or("no chunk lists").or_fail(want)?;
    match c.writes.as_slice() {
        [segs] if segs.len() == 2 && segs.iter().all(|s| s.length == 0) => {
            Ok(Verdict::pass(want, "returned as an unused write chunk"))
        }
        other => Err(Verdict::fail(want, format!("returned write list {other:?}"))),
    }
}

fn extra_pad_segment(ctx: &mut Ctx) -> Judged {
    start(ctx)?;
    let fh = lookup(ctx, nfs3::FILE_FIVE)?;
    // As older Linux clients do: the data segment, then a 4-byte segment for the XDR pad.
    let data = ctx.register(8, Access::WRITE);
    let pad = ctx.register(4, Access::WRITE);
    ctx.conn().write_local(&data, 0, &[CANARY; 8]).expect("own region");
    ctx.conn().write_local(&pad, 0, &[CANARY; 4]).expect("own region");
    let mut call = ctx.nfs3(NFSPROC3_READ, nfs3::read_args(&fh, 0, 8));
    call.writes = vec![vec![data.segment(), pad.segment()]];
    let want = "5 bytes in the first segment, the pad segment untouched, returned lengths 5 and 0";
    let got = ctx.call(&call.msg());
    let (_, h) = expect::rpc_accepted(&got, call.xid, AcceptStat::Success).or_fail(want)?;
    let lengths: Vec<u32> = first_write_chunk(h).iter().map(|s| s.length).collect();
    let pad_bytes = ctx.conn().read_local(&pad).expect("own region");
    let data_bytes = ctx.conn().read_local(&data).expect("own region");
    if pad_bytes != [CANARY; 4] {
        return Err(Verdict::fail(want, format!("the pad segment was written: {pad_bytes:02x?}")));
    }
    if data_bytes[..5] != file_contents(5)[..] || data_bytes[5..] != [CANARY; 3] {
        return Err(Verdict::fail(want, format!("the data segment holds {data_bytes:02x?}")));
    }
    if lengths != [5, 0] {
        return Err(Verdict::fail(want, format!("returned lengths {lengths:?}")));
    }
    Ok(Verdict::pass(want, "5 bytes written, pad segment untouched, lengths [5, 0]"))
}

fn empty_write_chunk(ctx: &mut Ctx) -> Judged {
    start(ctx)?;
    let fh = lookup(ctx, nfs3::FILE_FIVE)?;
    let mut call = ctx.nfs3(NFSPROC3_READ, nfs3::read_args(&fh, 0, 8));
    call.writes = vec![Vec::new()];
    let want = "the 5 data bytes inline, and an empty write chunk (segment count 0) returned in its place";
    let got = ctx.call(&call.msg());
    let (f, h) = expect::rpc_accepted(&got, call.xid, AcceptStat::Success).or_fail(want)?;
    let counts: Vec<usize> = h.body.chunks().map(|c| c.writes.iter().map(Vec::len).collect()).unwrap_or_default();
    if counts != [0] {
        return Err(Verdict::fail(want, format!("returned write list with segment counts {counts:?}")));
    }
    let results = expect::results(f).or_fail(want)?;
    match nfs3::read_result(results) {
        Some(rr) if rr.status == 0 && results.get(rr.data_at..rr.data_at + 5) == Some(&file_contents(5)[..]) => {
            Ok(Verdict::pass(want, "data inline, empty write chunk returned"))
        }
        other => Err(Verdict::fail(want, format!("READ3 result {other:?}"))),
    }
}

pub static CHECKS: [Check; 4] = [
    Check {
        info: CheckInfo {
            id: "rfc8166/3.4.6.2/write-chunk-no-pad",
            requirement: "A Responder MUST NOT write XDR roundup padding into a Write chunk, even if the Requester made space available for it.",
            key_word: KeyWord::MustNot,
            acceptable: "exactly 5 bytes written, canaries untouched, the chunk returned with length 5, no inline data",
            rationale: "Padding written into a write chunk overwrites the requester's memory past the data item.",
            groups: &["chunks", "padding", "write-chunks"],
            broken_by: &[("pad-write-chunk", Outcome::Fail), ("write-chunk-length-padded", Outcome::Fail)],
        },
        run: write_chunk_no_pad,
    },
    Check {
        info: CheckInfo {
            id: "rfc8166/4.3.2.2/unused-write-chunk",
            requirement: "If this is the last or only Write chunk available and it remains unconsumed, the Responder MUST return this Write chunk as an unused Write chunk.",
            key_word: KeyWord::Must,
            acceptable: "the write chunk echoed with its segment count and every length 0",
            rationale: "The requester matches returned chunks to results by position in the list.",
            groups: &["chunks", "write-chunks"],
            broken_by: &[("drop-unused-write-chunks", Outcome::Fail)],
        },
        run: unused_write_chunk,
    },
    Check {
        info: CheckInfo {
            id: "rfc8166/3.4.6.2/write-chunk-extra-pad-segment",
            requirement: "A Responder MUST NOT write XDR roundup padding into a Write chunk, even if the Requester made space available for it.",
            key_word: KeyWord::MustNot,
            acceptable: "the data in the first segment, the 4-byte pad segment untouched, returned lengths 5 and 0",
            rationale: "Linux clients before 4.9 add a pad segment to every write chunk; responders must leave it alone.",
            groups: &["chunks", "padding", "write-chunks"],
            broken_by: &[("pad-write-chunk", Outcome::Fail)],
        },
        run: extra_pad_segment,
    },
    Check {
        info: CheckInfo {
            id: "rfc8166/4.3.2.3/empty-write-chunk",
            requirement: "The Responder MUST return the corresponding result data item inline and MUST return an empty Write chunk in that Write list position in the RPC Reply message.",
            key_word: KeyWord::Must,
            acceptable: "the data inline and an empty write chunk in the returned write list",
            rationale: "Requesters use empty write chunks to force small results inline.",
            groups: &["chunks", "write-chunks"],
            broken_by: &[("drop-unused-write-chunks", Outcome::Fail)],
        },
        run: empty_write_chunk,
    },
];
