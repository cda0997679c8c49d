//! What a write chunk holds, and what stays inline: the data item alone, without its XDR pad
//! (RFC 8166 3.4.6.2, 3.4.4.4), in the segments as offered (3.4.6), its count left in the
//! Payload stream (3.4.4.1), and a chunk too small for it (4.5.4).

use rpcrdma_codec::chunk::Segment;
use rpcrdma_codec::rpc::AcceptStat;

use rpcrdma_peers::proto::nfs3::{self, file_contents, NFSPROC3_READ};
use rpcrdma_peers::transport::Access;

use crate::catalogue::steps::{first_write_chunk, lookup, start, CANARY};
use crate::engine::{expect, Check, CheckInfo, Ctx, Judged, NoMessage, OrFail, Outcome, Received, Verdict};

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
    let want = "5 bytes in the first segment, the pad segment untouched, the two segments returned with their handles and offsets as offered and lengths 5 and 0";
    let got = ctx.call(&call.msg());
    let (_, h) = expect::rpc_accepted(&got, call.xid, AcceptStat::Success).or_fail(want)?;
    let returned = first_write_chunk(h);
    let coordinates = |s: &[Segment]| s.iter().map(|x| (x.handle, x.offset)).collect::<Vec<_>>();
    if coordinates(&returned) != coordinates(&[data.segment(), pad.segment()]) {
        return Err(Verdict::fail(want, format!("returned write chunk {returned:?}")));
    }
    let lengths: Vec<u32> = returned.iter().map(|s| s.length).collect();
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

fn write_segments_copied(ctx: &mut Ctx) -> Judged {
    start(ctx)?;
    let fh = lookup(ctx, nfs3::FILE_BIG)?;
    // One write chunk of three segments at non-zero offsets of two regions: 16 + 16 + 32
    // bytes for a 40-byte READ, so they fill 16, 16 and 8.
    let a = ctx.register(64, Access::WRITE);
    let b = ctx.register(64, Access::WRITE);
    ctx.conn().write_local(&a, 0, &[CANARY; 64]).expect("own region");
    ctx.conn().write_local(&b, 0, &[CANARY; 64]).expect("own region");
    let offered = vec![a.sub_segment(8, 16), b.sub_segment(4, 16), a.sub_segment(28, 32)];
    let mut call = ctx.nfs3(NFSPROC3_READ, nfs3::read_args(&fh, 0, 40));
    call.writes = vec![offered.clone()];
    let want = "the write chunk copied with its 3 segments (handles and offsets unchanged, in order), lengths 16, 16 and 8, and the data in them contiguously";
    let got = ctx.call(&call.msg());
    let (_, h) = expect::rpc_accepted(&got, call.xid, AcceptStat::Success).or_fail(want)?;
    let returned = first_write_chunk(h);
    let coordinates = |s: &[Segment]| s.iter().map(|x| (x.handle, x.offset)).collect::<Vec<_>>();
    if coordinates(&returned) != coordinates(&offered) {
        return Err(Verdict::fail(want, format!("returned {returned:?}, offered {offered:?}")));
    }
    let lengths: Vec<u32> = returned.iter().map(|s| s.length).collect();
    if lengths != [16, 16, 8] {
        return Err(Verdict::fail(want, format!("returned lengths {lengths:?}")));
    }
    let (ra, rb) = (ctx.conn().read_local(&a).expect("own region"), ctx.conn().read_local(&b).expect("own region"));
    let data = nfs3::file_contents(70000);
    let placed = [&ra[8..24], &rb[4..20], &ra[28..36]].concat();
    if placed != data[..40] {
        return Err(Verdict::fail(want, format!("the segments hold {placed:02x?}, not the file's first 40 bytes")));
    }
    Ok(Verdict::pass(want, "3 segments copied unchanged, lengths [16, 16, 8], data in place"))
}

fn write_chunk_too_small(ctx: &mut Ctx) -> Judged {
    start(ctx)?;
    let fh = lookup(ctx, nfs3::FILE_BIG)?;
    // A 64-byte READ with a write chunk of only 16 bytes, canaries after it in the region.
    let region = ctx.register(32, Access::WRITE);
    ctx.conn().write_local(&region, 0, &[CANARY; 32]).expect("own region");
    let mut call = ctx.nfs3(NFSPROC3_READ, nfs3::read_args(&fh, 0, 64));
    call.writes = vec![vec![region.sub_segment(0, 16)]];
    let want = "ERR_CHUNK, a short READ whose count is what the 16-byte write chunk holds, or the connection closed; never bytes past the chunk, or a count the chunk does not hold";
    let got = ctx.call(&call.msg());
    let bytes = ctx.conn().read_local(&region).expect("own region");
    if bytes[16..].iter().any(|&b| b != CANARY) {
        return Err(Verdict::fail(want, "bytes past the 16-byte write chunk were written"));
    }
    match &got {
        Received::Message(_) if expect::err_chunk(&got, call.xid).is_ok() => Ok(Verdict::pass(want, "ERR_CHUNK")),
        Received::Message(_) => {
            let (f, h) = expect::rpc_accepted(&got, call.xid, AcceptStat::Success).or_fail(want)?;
            let returned: u64 = first_write_chunk(h).iter().map(|s| s.length as u64).sum();
            let results = expect::results(f).or_fail(want)?;
            let rr = nfs3::read_result(results).ok_or("READ3 results do not decode").or_fail(want)?;
            let inline = results.len() > rr.data_at;
            let holds = rr.status != 0
                || !inline && u64::from(rr.count) == returned && u64::from(rr.data_len) == returned && returned <= 16;
            if !holds {
                let got = format!(
                    "READ3 count {} data length {} with the write chunk returned holding {returned} bytes",
                    rr.count, rr.data_len
                );
                return Err(Verdict::fail(want, got));
            }
            let n = returned as usize;
            if bytes[..n] != file_contents(70000)[..n] {
                return Err(Verdict::fail(want, "the write chunk does not hold the file's first bytes"));
            }
            Ok(Verdict::pass(want, format!("a short READ of {n} bytes, all in the write chunk")))
        }
        Received::Nothing(NoMessage::Disconnected) => Ok(Verdict::pass(want, "the peer closed the connection")),
        Received::Nothing(NoMessage::Silence) if !ctx.liveness() => {
            Ok(Verdict::pass(want, "no reply, then the connection was closed"))
        }
        other => Err(Verdict::fail(want, other.describe())),
    }
}

fn count_stays_inline(ctx: &mut Ctx) -> Judged {
    // READ3resok's data is a counted array of bytes: reduced into the write chunk, its
    // elements go to the chunk and its count (the data length word) stays inline.
    let want = "the READ3 data length word (5) inline, the 5 data bytes in the write chunk (returned with length 5) and not inline";
    let ReadThroughChunk { results, returned, region: written } = read_into_write_chunk(ctx, 16)?;
    let rr = nfs3::read_result(&results)
        .ok_or_else(|| format!("the {} bytes of READ3 results end before the data length word", results.len()))
        .or_fail(want)?;
    if rr.status != 0 || rr.data_len != 5 {
        let got = format!("READ3 status {} with data length word {}", rr.status, rr.data_len);
        return Err(Verdict::fail(want, got));
    }
    let in_chunk: u64 = returned.iter().map(|s| s.length as u64).sum();
    if in_chunk != 5 || written[..5] != file_contents(5)[..] {
        return Err(Verdict::fail(
            want,
            format!("the write chunk returned as {returned:?}, holding {:02x?}", &written[..5]),
        ));
    }
    if results.len() >= rr.data_at + 5 {
        let got = format!(
            "{} bytes inline after the data length word: the elements were not moved",
            results.len() - rr.data_at
        );
        return Err(Verdict::fail(want, got));
    }
    Ok(Verdict::pass(want, "the count inline, the 5 elements in the write chunk"))
}

fn reduced_item_no_roundup(ctx: &mut Ctx) -> Judged {
    // 5 bytes of READ data reduced into the write chunk: their 3 bytes of XDR roundup must
    // leave the Payload stream with them, which then ends at the data length word.
    let want = "the inline READ3 results ending at the data length word (no roundup of the reduced 5-byte item left), a multiple of four bytes long";
    let ReadThroughChunk { results, returned, .. } = read_into_write_chunk(ctx, 16)?;
    let rr = nfs3::read_result(&results).ok_or("READ3 results do not decode").or_fail(want)?;
    let in_chunk: u64 = returned.iter().map(|s| s.length as u64).sum();
    if rr.status != 0 || rr.data_len != 5 || in_chunk == 0 {
        let got =
            format!("READ3 status {} data length {} with {in_chunk} bytes in the write chunk", rr.status, rr.data_len);
        return Err(Verdict::fail(want, got));
    }
    match results.len() - rr.data_at {
        0 if results.len() % 4 == 0 => Ok(Verdict::pass(want, "nothing inline after the reduced item's length word")),
        0 => Err(Verdict::fail(want, format!("{} bytes of results, not four-byte aligned", results.len()))),
        n => Err(Verdict::fail(
            want,
            format!("{n} bytes {:02x?} left inline after the reduced item", &results[rr.data_at..]),
        )),
    }
}

fn one_item_per_chunk(ctx: &mut Ctx) -> Judged {
    // A 40-byte READ into a 64-byte write chunk: the chunk holds the READ data and nothing
    // else (not its length word, not the eof before it), and the canaries after it stay.
    start(ctx)?;
    let fh = lookup(ctx, nfs3::FILE_BIG)?;
    let region = ctx.register(64, Access::WRITE);
    ctx.conn().write_local(&region, 0, &[CANARY; 64]).expect("own region");
    let mut call = ctx.nfs3(NFSPROC3_READ, nfs3::read_args(&fh, 0, 40));
    call.writes = vec![vec![region.segment()]];
    let want = "the write chunk holding exactly the 40 bytes of READ data (returned length 40, the data length word 40), nothing before or after them";
    let got = ctx.call(&call.msg());
    let (f, h) = expect::rpc_accepted(&got, call.xid, AcceptStat::Success).or_fail(want)?;
    let returned = first_write_chunk(h);
    let results = expect::results(f).or_fail(want)?;
    let rr = nfs3::read_result(results).ok_or("READ3 results do not decode").or_fail(want)?;
    let in_chunk: u64 = returned.iter().map(|s| s.length as u64).sum();
    let bytes = ctx.conn().read_local(&region).expect("own region");
    if rr.status != 0 || rr.data_len != 40 || in_chunk != 40 {
        let got =
            format!("READ3 status {} data length {} with {in_chunk} bytes in the write chunk", rr.status, rr.data_len);
        return Err(Verdict::fail(want, got));
    }
    if bytes[..40] != file_contents(70000)[..40] || bytes[40..].iter().any(|&b| b != CANARY) {
        return Err(Verdict::fail(want, format!("the chunk's region holds {:02x?}", &bytes[..48])));
    }
    Ok(Verdict::pass(want, "the write chunk holds the 40 data bytes alone"))
}

pub(super) const WRITE_CHUNK_NO_PAD: Check = Check {
    info: CheckInfo {
        id: "rfc8166/3.4.6.2/write-chunk-no-pad",
        judges: &["rfc8166/3.4.6.2#2", "rfc8166/3.4.6.2#3", "~rfc8166/4.3.2#1"],
        acceptable: "exactly 5 bytes written, canaries untouched, the chunk returned with length 5, no inline data",
        rationale: "Padding written into a write chunk overwrites the requester's memory past the data item.",
        groups: &["chunks", "padding", "write-chunks"],
        broken_by: &[("pad-write-chunk", Outcome::Fail), ("write-chunk-length-padded", Outcome::Fail)],
        precondition: None,
    },
    run: write_chunk_no_pad,
};

pub(super) const EXTRA_PAD_SEGMENT: Check = Check {
    info: CheckInfo {
        id: "rfc8166/3.4.6.2/write-chunk-extra-pad-segment",
        judges: &["~rfc8166/3.4.6#2", "rfc8166/3.4.6.2#2", "rfc8166/3.4.6.2#3", "~rfc8166/4.3.2#1"],
        acceptable: "the data in the first segment, the 4-byte pad segment untouched, both segments returned as offered with lengths 5 and 0",
        rationale: "Linux clients before 4.9 add a pad segment to every write chunk; responders must leave it alone.",
        groups: &["chunks", "padding", "write-chunks"],
        broken_by: &[("pad-write-chunk", Outcome::Fail), ("write-chunk-offset-advanced", Outcome::Fail)],
        precondition: None,
    },
    run: extra_pad_segment,
};

pub(super) const WRITE_SEGMENTS_COPIED: Check = Check {
    info: CheckInfo {
        id: "rfc8166/3.4.6/write-segments-copied",
        judges: &["rfc8166/3.4.6#2", "~rfc8166/4.3.2#1"],
        acceptable: "the 3 segments returned with their handles and offsets unchanged and in order, lengths 16, 16 and 8, the data placed contiguously",
        rationale: "The requester finds its data by the returned segments; a changed handle or offset points it at the wrong memory.",
        groups: &["chunks", "write-chunks"],
        broken_by: &[("write-chunk-offset-advanced", Outcome::Fail)],
        precondition: None,
    },
    run: write_segments_copied,
};

pub(super) const WRITE_CHUNK_TOO_SMALL: Check = Check {
    info: CheckInfo {
        id: "rfc8166/4.5.4/write-chunk-too-small",
        judges: &["rfc8166/4.5.4#2"],
        acceptable: "for a 64-byte READ with a 16-byte write chunk: ERR_CHUNK (RFC 8166 4.5.3), a short READ whose count the chunk holds, or the connection closed; bytes past the chunk, a count the chunk does not hold, or no reply on a live connection fail",
        rationale: "A requester that under-provisions a write chunk (RFC 8166 4.3.2.2 says it must not) must still get a true answer or a closed connection, never a reply claiming data that was not written.",
        groups: &["chunks", "write-chunks", "errors"],
        broken_by: &[("write-chunk-truncated", Outcome::Fail), ("no-err-chunk", Outcome::Fail)],
        precondition: None,
    },
    run: write_chunk_too_small,
};

pub(super) const COUNT_STAYS_INLINE: Check = Check {
    info: CheckInfo {
        id: "rfc8166/3.4.4.1/count-stays-inline",
        judges: &["rfc8166/3.4.4.1#1"],
        acceptable: "for a 5-byte READ into a write chunk: the data length word 5 inline, the 5 bytes in the chunk (returned length 5), not inline",
        rationale: "The requester learns the reduced item's length from the count in the Payload stream; without it the results after the item do not decode.",
        groups: &["chunks", "write-chunks", "reduction"],
        broken_by: &[("reduced-count-omitted", Outcome::Fail)],
        precondition: None,
    },
    run: count_stays_inline,
};

pub(super) const REDUCED_ITEM_NO_ROUNDUP: Check = Check {
    info: CheckInfo {
        id: "rfc8166/3.4.4.4/reduced-item-no-roundup",
        judges: &["rfc8166/3.4.4.4#2"],
        acceptable: "for a 5-byte READ into a write chunk: nothing inline after the data length word (its 3 bytes of roundup removed)",
        rationale: "Roundup left behind misaligns every item after the reduced one, or leaves trailing bytes the requester reads as more results.",
        groups: &["chunks", "padding", "write-chunks", "reduction"],
        broken_by: &[("reduced-pad-left-inline", Outcome::Fail)],
        precondition: None,
    },
    run: reduced_item_no_roundup,
};

pub(super) const ONE_ITEM_PER_CHUNK: Check = Check {
    info: CheckInfo {
        id: "rfc8166/3.4.4.4/one-item-per-chunk",
        judges: &["rfc8166/3.4.4.4#1"],
        acceptable: "for a 40-byte READ into a 64-byte write chunk: the chunk returned with length 40 and holding the READ data alone",
        rationale: "The requester places each chunk's content as one data item of its results; anything else in the chunk corrupts that item.",
        groups: &["chunks", "write-chunks", "reduction"],
        broken_by: &[("write-chunk-preceding-item", Outcome::Fail)],
        precondition: None,
    },
    run: one_item_per_chunk,
};
