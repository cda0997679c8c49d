//! Write chunks (RFC 8166 3.4.6, 4.3.2): no XDR pad written, the lengths returned, unused
//! and empty chunks.

use rpcrdma_codec::check::KeyWord;
use rpcrdma_codec::chunk::Segment;
use rpcrdma_codec::rpc::AcceptStat;

use rpcrdma_peers::proto::nfs3::{self, file_contents, NFSPROC3_GETATTR, NFSPROC3_READ, NFSPROC3_READDIR, ROOT_FH};
use rpcrdma_peers::transport::Access;

use super::{lookup, start};
use crate::engine::{expect, Check, CheckInfo, Ctx, Judged, NoMessage, OrFail, Outcome, Received, Verdict};
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
    let offered = vec![region.sub_segment(0, 32), region.sub_segment(32, 32)];
    call.writes = vec![offered.clone()];
    let want = "the write chunk returned with its 2 segments (handles and offsets as offered), each of length 0 (an unused write chunk)";
    let got = ctx.call(&call.msg());
    let (_, h) = expect::rpc_accepted(&got, call.xid, AcceptStat::Success).or_fail(want)?;
    let c = h.body.chunks().ok_or("no chunk lists").or_fail(want)?;
    let copied = |segs: &[Segment]| {
        segs.len() == offered.len()
            && segs.iter().zip(&offered).all(|(s, o)| s.length == 0 && s.handle == o.handle && s.offset == o.offset)
    };
    match c.writes.as_slice() {
        [segs] if copied(segs) => Ok(Verdict::pass(want, "returned as an unused write chunk")),
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

/// What a READ with a write list of several chunks produced.
struct WriteListRead {
    /// The write list as offered.
    offered: Vec<Vec<Segment>>,
    /// The write list as returned.
    returned: Vec<Vec<Segment>>,
    /// Each segment's region afterwards, in list order.
    bytes: Vec<Vec<u8>>,
    /// The READ3 results sent inline.
    results: Vec<u8>,
}

/// READ of `five` with a write list of chunks whose segments have the given lengths.
fn read_with_write_list(ctx: &mut Ctx, chunks: &[&[u32]]) -> Result<WriteListRead, Verdict> {
    start(ctx)?;
    let fh = lookup(ctx, nfs3::FILE_FIVE)?;
    let mut offered = Vec::new();
    let mut regions = Vec::new();
    for lens in chunks {
        let mut chunk = Vec::new();
        for len in lens.iter() {
            let r = ctx.register(*len, Access::WRITE);
            ctx.conn().write_local(&r, 0, &vec![CANARY; *len as usize]).expect("own region");
            chunk.push(r.segment());
            regions.push(r);
        }
        offered.push(chunk);
    }
    let mut call = ctx.nfs3(NFSPROC3_READ, nfs3::read_args(&fh, 0, 8));
    call.writes = offered.clone();
    let got = ctx.call(&call.msg());
    let (f, h) = expect::rpc_accepted(&got, call.xid, AcceptStat::Success).or_fail("a READ3 reply")?;
    let returned = h.body.chunks().map(|c| c.writes.clone()).unwrap_or_default();
    let results = expect::results(f).unwrap_or_default().to_vec();
    let bytes = regions.iter().map(|r| ctx.conn().read_local(r).expect("own region")).collect();
    Ok(WriteListRead { offered, returned, bytes, results })
}

fn several_write_chunks(ctx: &mut Ctx) -> Judged {
    // Two write chunks for a reply with one DDP-eligible item: it goes into the first; the
    // second, the last one available, comes back unused with its two segments.
    let want = "the READ data in the first write chunk (length 5), the second returned unused: 2 segments of length 0, untouched";
    let WriteListRead { offered, returned, bytes, .. } = read_with_write_list(ctx, &[&[16], &[16, 16]])?;
    let shape: Vec<Vec<(u32, u64, u32)>> =
        returned.iter().map(|c| c.iter().map(|s| (s.handle, s.offset, s.length)).collect()).collect();
    let expected: Vec<Vec<(u32, u64, u32)>> = offered
        .iter()
        .enumerate()
        .map(|(i, c)| c.iter().map(|s| (s.handle, s.offset, if i == 0 { 5 } else { 0 })).collect())
        .collect();
    if shape != expected {
        return Err(Verdict::fail(want, format!("returned write list {returned:?}")));
    }
    if bytes[0][..5] != file_contents(5)[..] {
        return Err(Verdict::fail(want, format!("the first chunk holds {:02x?}", &bytes[0][..5])));
    }
    if bytes[1..].iter().any(|b| b.iter().any(|&x| x != CANARY)) {
        return Err(Verdict::fail(want, "the unused second chunk was written"));
    }
    Ok(Verdict::pass(want, "data in the first chunk, the second returned unused and untouched"))
}

fn empty_then_write_chunk(ctx: &mut Ctx) -> Judged {
    // An empty first chunk forces the one DDP-eligible item inline; the second chunk is not
    // for it and must come back unused.
    let want = "the READ data inline, an empty write chunk first and the second returned unused (1 segment of length 0, untouched)";
    let WriteListRead { offered, returned, bytes, results } = read_with_write_list(ctx, &[&[], &[16]])?;
    match nfs3::read_result(&results) {
        Some(rr) if rr.status == 0 && results.get(rr.data_at..rr.data_at + 5) == Some(&file_contents(5)[..]) => {}
        other => return Err(Verdict::fail(want, format!("the data is not inline: READ3 result {other:?}"))),
    }
    let counts: Vec<usize> = returned.iter().map(Vec::len).collect();
    let second_unused = returned.get(1).is_some_and(|c| c.iter().all(|s| s.length == 0))
        && returned.get(1).map(|c| c.iter().map(|s| (s.handle, s.offset)).collect::<Vec<_>>())
            == Some(offered[1].iter().map(|s| (s.handle, s.offset)).collect());
    if counts != [0, 1] || !second_unused {
        return Err(Verdict::fail(want, format!("returned write list {returned:?}")));
    }
    if bytes[0].iter().any(|&x| x != CANARY) {
        return Err(Verdict::fail(want, "the data went into the second write chunk"));
    }
    Ok(Verdict::pass(want, "an empty chunk and an unused chunk returned, the second untouched"))
}

fn write_chunk_with_reply_chunk(ctx: &mut Ctx) -> Judged {
    // A 2000-byte READ offering a write chunk for the data and a reply chunk, with a
    // 1024-byte receive: the data goes into the write chunk whatever happens to the rest.
    ctx.options.receive_size = 1024;
    start(ctx)?;
    let fh = lookup(ctx, nfs3::FILE_BIG)?;
    let data_region = ctx.register(2048, Access::WRITE);
    let reply_region = ctx.register(4096, Access::WRITE);
    let mut call = ctx.nfs3(NFSPROC3_READ, nfs3::read_args(&fh, 0, 2000));
    call.writes = vec![vec![data_region.segment()]];
    call.reply = Some(vec![reply_region.segment()]);
    let want = "the 2000 bytes of READ data in the write chunk (returned with length 2000), the reduced reply inline or in the reply chunk, without the data";
    let got = ctx.call(&call.msg());
    let (f, h) = expect::reply_to(&got, call.xid).or_fail(want)?;
    let returned = first_write_chunk(h);
    let written: u64 = returned.iter().map(|s| s.length as u64).sum();
    if written != 2000 {
        return Err(Verdict::fail(
            want,
            format!("{} with the write chunk returned as {returned:?}", h.body.describe()),
        ));
    }
    let data = ctx.conn().read_local(&data_region).expect("own region");
    if data[..2000] != file_contents(70000)[..2000] {
        return Err(Verdict::fail(want, "the write chunk does not hold the file's first 2000 bytes"));
    }
    // The reduced results: in the inline RPC reply, or in the reply chunk.
    let results = match &h.body {
        crate::frame::v1::Body::Msg { .. } => expect::results(f).or_fail(want)?.to_vec(),
        crate::frame::v1::Body::NoMsg { chunks } => {
            let len = chunks.reply.as_ref().map_or(0, |rc| rc.iter().map(|s| s.length as usize).sum::<usize>());
            let bytes = ctx.conn().read_local(&reply_region).expect("own region");
            let rpc = crate::frame::Rpc::decode(&bytes[..len.min(bytes.len())], 0..len.min(bytes.len()))
                .map_err(|e| format!("the reply chunk does not hold an RPC reply: {e}"))
                .or_fail(want)?;
            expect::check_accepted(&rpc, call.xid, AcceptStat::Success).or_fail(want)?;
            bytes[rpc.body].to_vec()
        }
        other => return Err(Verdict::fail(want, other.describe())),
    };
    match nfs3::read_result(&results) {
        Some(rr) if rr.status == 0 && rr.data_len == 2000 && results.len() == rr.data_at => {
            Ok(Verdict::pass(want, format!("{}: data in the write chunk, the reply reduced", h.body.describe())))
        }
        other => Err(Verdict::fail(want, format!("reduced READ3 results {other:?} of {} bytes", results.len()))),
    }
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

fn ineligible_not_reduced(ctx: &mut Ctx) -> Judged {
    // READDIR3resok (entry names, cookies) holds nothing DDP-eligible (RFC 8267 4): with a
    // write chunk offered, all of it stays inline and the chunk comes back unused.
    start(ctx)?;
    let region = ctx.register(4096, Access::WRITE);
    ctx.conn().write_local(&region, 0, &[CANARY; 4096]).expect("own region");
    let mut call = ctx.nfs3(NFSPROC3_READDIR, nfs3::readdir_args(&ROOT_FH, 0, [0; 8], 1024));
    let offered = region.segment();
    call.writes = vec![vec![offered]];
    let want = "the whole READDIR3res inline, the write chunk returned unused (1 segment of length 0, handle and offset as offered) and untouched";
    let got = ctx.call(&call.msg());
    let (f, h) = expect::rpc_accepted(&got, call.xid, AcceptStat::Success).or_fail(want)?;
    let returned = first_write_chunk(h);
    let results = expect::results(f).or_fail(want)?;
    match nfs3::readdir_result(results) {
        Some((0, n)) if n > 0 => {}
        other => {
            let got =
                format!("{} bytes of inline results that are not a whole READDIR3resok ({other:?})", results.len());
            return Err(Verdict::fail(want, got));
        }
    }
    if returned.len() != 1 || returned[0] != (Segment { length: 0, ..offered }) {
        return Err(Verdict::fail(want, format!("the write chunk returned as {returned:?}")));
    }
    if ctx.conn().read_local(&region).expect("own region").iter().any(|&b| b != CANARY) {
        return Err(Verdict::fail(want, "the unused write chunk was written"));
    }
    Ok(Verdict::pass(want, "READDIR3res inline, the write chunk unused and untouched"))
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

pub static CHECKS: [Check; 13] = [
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
            requirement: "If this is the last or only Write chunk available and it remains unconsumed, the Responder MUST return this Write chunk as an unused Write chunk (see Section 3.4.6). The Responder sets the segment count to a value matching the Requester-provided Write chunk, but returns only empty segments in that Write chunk.",
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
            acceptable: "the data in the first segment, the 4-byte pad segment untouched, both segments returned as offered with lengths 5 and 0",
            rationale: "Linux clients before 4.9 add a pad segment to every write chunk; responders must leave it alone.",
            groups: &["chunks", "padding", "write-chunks"],
            broken_by: &[("pad-write-chunk", Outcome::Fail), ("write-chunk-offset-advanced", Outcome::Fail)],
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
    Check {
        info: CheckInfo {
            id: "rfc8166/3.4.6/write-segments-copied",
            requirement: "For each Write chunk provided by a Requester, the Responder pushes one data item to the Requester, filling the chunk contiguously and in segment array order until that data item has been completely written to the Requester. The Responder MUST copy the segment count and all segments from the Requester-provided Write chunk into the RPC Reply message's Transport header. As it does so, the Responder updates each segment length field to reflect the actual amount of data that is being returned in that segment.",
            key_word: KeyWord::Must,
            acceptable: "the 3 segments returned with their handles and offsets unchanged and in order, lengths 16, 16 and 8, the data placed contiguously",
            rationale: "The requester finds its data by the returned segments; a changed handle or offset points it at the wrong memory.",
            groups: &["chunks", "write-chunks"],
            broken_by: &[("write-chunk-offset-advanced", Outcome::Fail)],
        },
        run: write_segments_copied,
    },
    Check {
        info: CheckInfo {
            id: "rfc8166/4.3.2.2/several-write-chunks",
            requirement: "If there is a subsequent DDP-eligible result data item in the RPC Reply message, it MUST be placed in that unconsumed Write chunk. ... If this is the last or only Write chunk available and it remains unconsumed, the Responder MUST return this Write chunk as an unused Write chunk (see Section 3.4.6). The Responder sets the segment count to a value matching the Requester-provided Write chunk, but returns only empty segments in that Write chunk.",
            key_word: KeyWord::Must,
            acceptable: "the READ data in the first of two write chunks (RFC 8166 4.3.2.1: each chunk in turn takes one item), the second returned unused with its 2 segments",
            rationale: "A requester matches returned chunks to results by their place in the list; data in the wrong chunk, or a chunk left out, misplaces results.",
            groups: &["chunks", "write-chunks"],
            broken_by: &[
                ("ddp-into-last-write-chunk", Outcome::Fail),
                ("drop-unused-write-chunks", Outcome::Fail),
                ("write-chunk-offset-advanced", Outcome::Fail),
            ],
        },
        run: several_write_chunks,
    },
    Check {
        info: CheckInfo {
            id: "rfc8166/4.3.2.3/empty-then-write-chunk",
            requirement: "The Responder MUST return the corresponding result data item inline and MUST return an empty Write chunk in that Write list position in the RPC Reply message.",
            key_word: KeyWord::Must,
            acceptable: "the READ data inline, the empty first chunk returned empty, the second returned unused and untouched",
            rationale: "An empty chunk holds its item's place in the list; a responder that skips it pushes the item into a chunk meant for another result.",
            groups: &["chunks", "write-chunks"],
            broken_by: &[("ddp-into-last-write-chunk", Outcome::Fail), ("drop-unused-write-chunks", Outcome::Fail)],
        },
        run: empty_then_write_chunk,
    },
    Check {
        info: CheckInfo {
            id: "rfc8166/4.3.2/write-chunk-with-reply-chunk",
            requirement: "When a Requester provides a Write list, the Responder MUST push data corresponding to DDP-eligible result data items to Requester memory referenced in the Write list. The Responder removes these data items from the reply's Payload stream.",
            key_word: KeyWord::Must,
            acceptable: "with both a write chunk and a reply chunk offered, the READ data in the write chunk and the reduced reply (without the data) inline or through the reply chunk",
            rationale: "RFC 8166 3.5.3: a responder first reduces the reply, then uses the reply chunk for what is left; data in the reply chunk instead lands in the wrong memory.",
            groups: &["chunks", "write-chunks", "reply-chunk"],
            broken_by: &[("write-list-ignored-with-reply-chunk", Outcome::Fail)],
        },
        run: write_chunk_with_reply_chunk,
    },
    Check {
        info: CheckInfo {
            id: "rfc8166/4.5.4/write-chunk-too-small",
            requirement: "While a Responder is constructing an RPC Reply message or error message, an unrecoverable problem might occur that prevents the Responder from posting further RDMA Work Requests on behalf of that message. If a Responder is unable to construct and transmit an RPC Reply or RPC-over-RDMA error message, the Responder MUST close the connection to signal to the Requester that a reply was lost.",
            key_word: KeyWord::Must,
            acceptable: "for a 64-byte READ with a 16-byte write chunk: ERR_CHUNK (RFC 8166 4.5.3), a short READ whose count the chunk holds, or the connection closed; bytes past the chunk, a count the chunk does not hold, or no reply on a live connection fail",
            rationale: "A requester that under-provisions a write chunk (RFC 8166 4.3.2.2 says it must not) must still get a true answer or a closed connection, never a reply claiming data that was not written.",
            groups: &["chunks", "write-chunks", "errors"],
            broken_by: &[("write-chunk-truncated", Outcome::Fail), ("no-err-chunk", Outcome::Fail)],
        },
        run: write_chunk_too_small,
    },
    Check {
        info: CheckInfo {
            id: "rfc8166/3.4.4.1/count-stays-inline",
            requirement: "If a chunk contains a counted array data type, the count of array elements MUST remain in the Payload stream, while the array elements MUST be moved to the chunk.",
            key_word: KeyWord::Must,
            acceptable: "for a 5-byte READ into a write chunk: the data length word 5 inline, the 5 bytes in the chunk (returned length 5), not inline",
            rationale: "The requester learns the reduced item's length from the count in the Payload stream; without it the results after the item do not decode.",
            groups: &["chunks", "write-chunks", "reduction"],
            broken_by: &[("reduced-count-omitted", Outcome::Fail)],
        },
        run: count_stays_inline,
    },
    Check {
        info: CheckInfo {
            id: "rfc8166/3.4.4.4/reduced-item-no-roundup",
            requirement: "When a variable-length XDR data item is reduced, the sender MUST remove XDR roundup padding for that data item from the Payload stream so that data items remaining in the Payload stream begin on four-byte alignment.",
            key_word: KeyWord::Must,
            acceptable: "for a 5-byte READ into a write chunk: nothing inline after the data length word (its 3 bytes of roundup removed)",
            rationale: "Roundup left behind misaligns every item after the reduced one, or leaves trailing bytes the requester reads as more results.",
            groups: &["chunks", "padding", "write-chunks", "reduction"],
            broken_by: &[("reduced-pad-left-inline", Outcome::Fail)],
        },
        run: reduced_item_no_roundup,
    },
    Check {
        info: CheckInfo {
            id: "rfc8166/6.1/ineligible-not-reduced",
            requirement: "Senders MUST NOT reduce data items that are not DDP-eligible.",
            key_word: KeyWord::MustNot,
            acceptable: "for a READDIR offering a write chunk: the whole READDIR3res inline, the chunk returned unused and untouched",
            rationale: "The NFSv3 binding (RFC 8267 4) makes only READ, WRITE, READLINK and SYMLINK data DDP-eligible; a requester does not look for other results in its write chunks.",
            groups: &["chunks", "write-chunks", "reduction"],
            broken_by: &[("reduce-ineligible-results", Outcome::Fail)],
        },
        run: ineligible_not_reduced,
    },
    Check {
        info: CheckInfo {
            id: "rfc8166/3.4.4.4/one-item-per-chunk",
            requirement: "Except in special cases (covered in Section 3.5.3), a chunk MUST contain exactly one XDR data item.",
            key_word: KeyWord::Must,
            acceptable: "for a 40-byte READ into a 64-byte write chunk: the chunk returned with length 40 and holding the READ data alone",
            rationale: "The requester places each chunk's content as one data item of its results; anything else in the chunk corrupts that item.",
            groups: &["chunks", "write-chunks", "reduction"],
            broken_by: &[("write-chunk-preceding-item", Outcome::Fail)],
        },
        run: one_item_per_chunk,
    },
];
