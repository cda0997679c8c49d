//! Which write chunk each result uses: unused and empty chunks (RFC 8166 4.3.2.2, 4.3.2.3),
//! a write list of several chunks for one item, the write list used even when a reply chunk
//! is offered (4.3.2), and results that are not DDP-eligible left inline (6.1).

use rpcrdma_codec::chunk::Segment;
use rpcrdma_codec::rpc::AcceptStat;

use rpcrdma_peers::proto::nfs3::{self, file_contents, NFSPROC3_GETATTR, NFSPROC3_READ, NFSPROC3_READDIR};
use rpcrdma_peers::transport::Access;

use crate::catalogue::steps::{first_write_chunk, lookup, start, CANARY};
use crate::engine::{expect, Check, CheckInfo, Ctx, Judged, OrFail, Outcome, Verdict};

fn unused_write_chunk(ctx: &mut Ctx) -> Judged {
    start(ctx)?;
    let region = ctx.register(64, Access::WRITE);
    let mut call = ctx.nfs3(NFSPROC3_GETATTR, nfs3::getattr_args(ctx.root_fh()));
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

fn ineligible_not_reduced(ctx: &mut Ctx) -> Judged {
    // READDIR3resok (entry names, cookies) holds nothing DDP-eligible (RFC 8267 4): with a
    // write chunk offered, all of it stays inline and the chunk comes back unused.
    start(ctx)?;
    let region = ctx.register(4096, Access::WRITE);
    ctx.conn().write_local(&region, 0, &[CANARY; 4096]).expect("own region");
    let mut call = ctx.nfs3(NFSPROC3_READDIR, nfs3::readdir_args(ctx.root_fh(), 0, [0; 8], 1024));
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

pub(super) const UNUSED_WRITE_CHUNK: Check = Check {
    info: CheckInfo {
        id: "rfc8166/4.3.2.2/unused-write-chunk",
        judges: &["rfc8166/3.4.6#2", "rfc8166/4.3.2.2#3"],
        acceptable: "the write chunk echoed with its segment count and every length 0",
        rationale: "The requester matches returned chunks to results by position in the list.",
        groups: &["chunks", "write-chunks"],
        broken_by: &[("drop-unused-write-chunks", Outcome::Fail)],
        precondition: None,
    },
    run: unused_write_chunk,
};

pub(super) const EMPTY_WRITE_CHUNK: Check = Check {
    info: CheckInfo {
        id: "rfc8166/4.3.2.3/empty-write-chunk",
        judges: &["rfc8166/4.3.2.3#1"],
        acceptable: "the data inline and an empty write chunk in the returned write list",
        rationale: "Requesters use empty write chunks to force small results inline.",
        groups: &["chunks", "write-chunks"],
        broken_by: &[("drop-unused-write-chunks", Outcome::Fail)],
        precondition: None,
    },
    run: empty_write_chunk,
};

pub(super) const SEVERAL_WRITE_CHUNKS: Check = Check {
    info: CheckInfo {
        id: "rfc8166/4.3.2.2/several-write-chunks",
        judges: &["rfc8166/3.4.6#2", "rfc8166/4.3.2.2#3"],
        acceptable: "the READ data in the first of two write chunks (RFC 8166 4.3.2.1: each chunk in turn takes one item), the second returned unused with its 2 segments",
        rationale: "A requester matches returned chunks to results by their place in the list; data in the wrong chunk, or a chunk left out, misplaces results.",
        groups: &["chunks", "write-chunks"],
        broken_by: &[
            ("ddp-into-last-write-chunk", Outcome::Fail),
            ("drop-unused-write-chunks", Outcome::Fail),
            ("write-chunk-offset-advanced", Outcome::Fail),
        ],
        precondition: None,
    },
    run: several_write_chunks,
};

pub(super) const EMPTY_THEN_WRITE_CHUNK: Check = Check {
    info: CheckInfo {
        id: "rfc8166/4.3.2.3/empty-then-write-chunk",
        judges: &["rfc8166/4.3.2.2#3", "rfc8166/4.3.2.3#1"],
        acceptable: "the READ data inline, the empty first chunk returned empty, the second returned unused and untouched",
        rationale: "An empty chunk holds its item's place in the list; a responder that skips it pushes the item into a chunk meant for another result.",
        groups: &["chunks", "write-chunks"],
        broken_by: &[("ddp-into-last-write-chunk", Outcome::Fail), ("drop-unused-write-chunks", Outcome::Fail)],
        precondition: None,
    },
    run: empty_then_write_chunk,
};

pub(super) const WRITE_CHUNK_WITH_REPLY_CHUNK: Check = Check {
    info: CheckInfo {
        id: "rfc8166/4.3.2/write-chunk-with-reply-chunk",
        judges: &["rfc8166/4.3.2#1"],
        acceptable: "with both a write chunk and a reply chunk offered, the READ data in the write chunk and the reduced reply (without the data) inline or through the reply chunk",
        rationale: "RFC 8166 3.5.3: a responder first reduces the reply, then uses the reply chunk for what is left; data in the reply chunk instead lands in the wrong memory.",
        groups: &["chunks", "write-chunks", "reply-chunk"],
        broken_by: &[("write-list-ignored-with-reply-chunk", Outcome::Fail)],
        precondition: None,
    },
    run: write_chunk_with_reply_chunk,
};

pub(super) const INELIGIBLE_NOT_REDUCED: Check = Check {
    info: CheckInfo {
        id: "rfc8166/6.1/ineligible-not-reduced",
        judges: &["rfc8166/3.4.2#2", "rfc8166/6.1#1"],
        acceptable: "for a READDIR offering a write chunk: the whole READDIR3res inline, the chunk returned unused and untouched",
        rationale: "The NFSv3 binding (RFC 8267 4) makes only READ, WRITE, READLINK and SYMLINK data DDP-eligible; a requester does not look for other results in its write chunks.",
        groups: &["chunks", "write-chunks", "reduction"],
        broken_by: &[("reduce-ineligible-results", Outcome::Fail)],
        precondition: None,
    },
    run: ineligible_not_reduced,
};
