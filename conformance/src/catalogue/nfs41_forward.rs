//! NFSv4.1's forward direction where RFC 8267 6.4.1 speaks: how a server pairs the write chunks
//! of a COMPOUND with its READ operations. The harness is an NFSv4.1 client (EXCHANGE_ID,
//! CREATE_SESSION without a back channel, then SEQUENCE-led COMPOUNDs, RFC 8881 18.35, 18.36,
//! 18.46) reading two files with the READ-bypass stateid: the k-th write chunk belongs to the
//! k-th READ (6.4.1#1), a matching non-empty chunk carries its data (#2), an empty one keeps
//! it inline (#3), a READ that fails gets its chunk back with no data (#4), READs beyond the
//! write list come back inline (#5); and a write chunk of sixteen segments, within 6.4.2's
//! prescriptions, is accepted (6.4.2#2, its write-list part). A server that serves no NFSv4.1
//! over RDMA is `unsupported`.

use rpcrdma_codec::chunk::{ReadSegment, Segment};
use rpcrdma_codec::rpc::AcceptStat;

use rpcrdma_peers::proto::nfs3::{self, file_contents};
use rpcrdma_peers::proto::nfs4::READ_BYPASS_STATEID;
use rpcrdma_peers::proto::nfs41::{
    self, compound_res, CbSec, ChannelAttrs, CompoundRes, Op, Res, SessionId, Stateid, EXCHGID4_FLAG_USE_NON_PNFS,
    MINOR_V1, NFS4_OK, NFSPROC4_COMPOUND, NFSPROC4_NULL, NFS_PROGRAM, NFS_V4, OP_CREATE_SESSION, OP_EXCHANGE_ID,
    OP_READ, OP_WRITE, SP4_NONE,
};
use rpcrdma_peers::transport::{Access, Region, NFS_RDMA_PORT};

use super::steps::{start, CANARY};
use crate::engine::{expect, Check, CheckInfo, Ctx, Judged, OrFail, Outcome, Received, Verdict};
use crate::frame::rpc::RpcKind;

/// Each write chunk offered: one 64-byte segment, room for either READ's data (RFC 8166
/// 4.3.2.2: a requester provisions each chunk for the largest item it may take).
const CHUNK_LEN: u32 = 64;
/// A stateid no server issued (RFC 8881 8.2): a READ with it fails (NFS4ERR_BAD_STATEID), a
/// READ4res arm without a DDP-eligible result.
const BOGUS_STATEID: Stateid = *b"\0\0\0\x01rpcrdma-bad!";

/// One READ of a COMPOUND: the file (in the export's root), the stateid, the byte count.
#[derive(Clone, Copy)]
struct ReadOp {
    name: &'static str,
    stateid: Stateid,
    count: u32,
}

/// `five` whole (5 bytes), then the first 40 bytes of `big`: different lengths, so an item in
/// the wrong place shows.
const FIVE: ReadOp = ReadOp { name: nfs3::FILE_FIVE, stateid: READ_BYPASS_STATEID, count: 5 };
const BIG: ReadOp = ReadOp { name: nfs3::FILE_BIG, stateid: READ_BYPASS_STATEID, count: 40 };

/// The bytes a READ of the test export returns.
fn contents(r: &ReadOp) -> Vec<u8> {
    match r.name {
        nfs3::FILE_FIVE => file_contents(5),
        _ => file_contents(70000)[..r.count as usize].to_vec(),
    }
}

/// The harness's NFSv4.1 session: its ID and slot 0's next sequenceid.
struct Session {
    sid: SessionId,
    seq: u32,
}

/// A COMPOUND without chunks, its COMPOUND4res (no READ in it).
fn plain_compound(ctx: &mut Ctx, ops: &[Op], want: &str) -> Result<CompoundRes, Verdict> {
    let call = ctx.call_of(NFS_PROGRAM, NFS_V4, NFSPROC4_COMPOUND, nfs41::compound_args("rpcrdma", MINOR_V1, ops));
    let got = ctx.call(&call.msg());
    let (f, _) = expect::reply_to(&got, call.xid).or_fail(want)?;
    if let Ok(RpcKind::Accepted(AcceptStat::ProgMismatch { .. } | AcceptStat::ProgUnavail)) =
        expect::rpc(f).map(|r| &r.kind)
    {
        return Err(Verdict::unsupported(want, "the server serves no NFSv4 over RDMA (PROG_MISMATCH or PROG_UNAVAIL)"));
    }
    let (f, _) = expect::rpc_accepted(&got, call.xid, AcceptStat::Success).or_fail(want)?;
    let results = expect::results(f).or_fail(want)?;
    compound_res(results, |_| false).ok_or_else(|| Verdict::fail(want, "COMPOUND4res that does not decode"))
}

/// Connects and creates a session with no back channel (RFC 8881 18.35, 18.36): what the
/// checks' COMPOUNDs run in. Unsupported when the server serves no NFSv4.1.
fn session(ctx: &mut Ctx) -> Result<Session, Verdict> {
    start(ctx)?;
    let want = "an NFSv4.1 session: EXCHANGE_ID and CREATE_SESSION answered NFS4_OK";
    let owner = format!("rpcrdma-harness-fwd-{:08x}", ctx.xid());
    let exchange = Op::ExchangeId {
        verifier: *b"rpcrdma4",
        owner: owner.into_bytes(),
        flags: EXCHGID4_FLAG_USE_NON_PNFS,
        state_protect: SP4_NONE,
        impl_id: None,
    };
    let res = plain_compound(ctx, &[exchange], want)?;
    let Some(&Res::ExchangeId { clientid, sequenceid, .. }) = res.find(OP_EXCHANGE_ID) else {
        let why =
            format!("COMPOUND status {}, no EXCHANGE_ID result: the server serves no NFSv4.1 over RDMA", res.status);
        return Err(Verdict::unsupported(want, why));
    };
    let attrs = |size: u32, requests: u32| ChannelAttrs {
        headerpadsize: 0,
        maxrequestsize: size,
        maxresponsesize: size,
        maxresponsesize_cached: 0,
        maxoperations: 16,
        maxrequests: requests,
        rdma_ird: None,
    };
    let create = Op::CreateSession {
        clientid,
        sequence: sequenceid,
        flags: 0,
        fore: attrs(1 << 20, 8),
        back: attrs(1024, 2),
        cb_program: 0x4000_0000,
        sec: vec![CbSec::None],
    };
    let res = plain_compound(ctx, &[create], want)?;
    let Some(&Res::CreateSession { sessionid, .. }) = res.find(OP_CREATE_SESSION) else {
        return Err(Verdict::unsupported(want, format!("CREATE_SESSION: COMPOUND status {}", res.status)));
    };
    Ok(Session { sid: sessionid, seq: 1 })
}

/// A READ's status and, when it succeeded, its data length and its data if inline.
type ReadOut = (u32, Option<(u32, Option<Vec<u8>>)>);

/// What a server returned for a COMPOUND of READs: the write list and the decoded COMPOUND4res
/// (an item taken from its write chunk where the chunk came back with data).
struct Returned {
    writes: Vec<Vec<Segment>>,
    res: CompoundRes,
}

impl Returned {
    /// The READ results in order.
    fn reads(&self) -> Vec<ReadOut> {
        let read = |r: &nfs41::OpResult| match &r.res {
            Some(Res::Read { data, read: Some(rd), .. }) => Some((rd.data_len, rd.data_at.map(|_| data.clone()))),
            _ => None,
        };
        self.res.results.iter().filter(|r| r.op == OP_READ).map(|r| (r.status, read(r))).collect()
    }
}

/// SEQUENCE, then PUTFH of the export's root (the MOUNT handle: NFSv4 takes the same handles;
/// PUTROOTFH is the pseudo-root), LOOKUP and READ for each of `reads`, with `writes` as the
/// write list. A refusal of the write list (ERR_CHUNK, or GARBAGE_ARGS: RFC 8267 6.4.2's two
/// answers for a list too complex) is for the caller to judge, as [`Sent::Refused`];
/// unsupported when the server serves no NFSv4.
fn send_reads(
    ctx: &mut Ctx,
    s: &mut Session,
    reads: &[ReadOp],
    writes: Vec<Vec<Segment>>,
    want: &str,
) -> Result<Sent, Verdict> {
    let mut ops =
        vec![Op::Sequence { sessionid: s.sid, sequenceid: s.seq, slotid: 0, highest_slotid: 0, cachethis: false }];
    for r in reads {
        ops.push(Op::PutFh(ctx.root_fh().to_vec()));
        ops.push(Op::Lookup(r.name.as_bytes().to_vec()));
        ops.push(Op::Read { stateid: r.stateid, offset: 0, count: r.count });
    }
    let mut call = ctx.call_of(NFS_PROGRAM, NFS_V4, NFSPROC4_COMPOUND, nfs41::compound_args("rpcrdma", MINOR_V1, &ops));
    call.writes = writes;
    let got = ctx.call(&call.msg());
    compound_answer(&got, call.xid, s, want)
}

/// What a COMPOUND sent with a write list got back: refused unprocessed (ERR_CHUNK, or
/// GARBAGE_ARGS: RFC 8267 6.4.2's two answers for a list too complex), or its results decoded
/// with the items the returned write list holds, the session's sequence ID moved on when its
/// SEQUENCE succeeded; unsupported when the server serves no NFSv4.
fn compound_answer(got: &Received, xid: u32, s: &mut Session, want: &str) -> Result<Sent, Verdict> {
    if expect::err_chunk(got, xid).is_ok() {
        return Ok(Sent::Refused("ERR_CHUNK"));
    }
    let (f, _) = expect::reply_to(got, xid).or_fail(want)?;
    match expect::rpc(f).map(|r| &r.kind) {
        Ok(RpcKind::Accepted(AcceptStat::ProgMismatch { .. } | AcceptStat::ProgUnavail)) => {
            return Err(Verdict::unsupported(want, "no NFSv4 (PROG_MISMATCH or PROG_UNAVAIL)"));
        }
        Ok(RpcKind::Accepted(AcceptStat::GarbageArgs)) => return Ok(Sent::Refused("GARBAGE_ARGS")),
        _ => {}
    }
    let (f, h) = expect::rpc_accepted(got, xid, AcceptStat::Success).or_fail(want)?;
    let returned = h.body.chunks().map(|c| c.writes.clone()).unwrap_or_default();
    let results = expect::results(f).or_fail(want)?;
    // A requester takes an item from its write chunk when the chunk comes back with data.
    let written = |k: usize| returned.get(k).is_some_and(|c| c.iter().any(|seg| seg.length > 0));
    let res = compound_res(results, written)
        .ok_or("COMPOUND4res does not decode with the items the returned write list holds")
        .or_fail(want)?;
    if res.results.first().is_some_and(|r| r.status == NFS4_OK) {
        s.seq = s.seq.wrapping_add(1);
    }
    if res.trailing != 0 {
        return Err(Verdict::fail(want, format!("{} bytes after the COMPOUND4res", res.trailing)));
    }
    Ok(Sent::Returned(Returned { writes: returned, res }))
}

/// What a COMPOUND of READs got: the write list refused (how), or a reply.
enum Sent {
    Refused(&'static str),
    Returned(Returned),
}

/// [`send_reads`], a refusal judged by the write list's shape: a list of several chunks is
/// more than RFC 8267 6.4.2 lets a client assume a server takes (unsupported); a single
/// chunk of at most sixteen segments is within it, and a server MUST process it (a failure).
fn read_compound(
    ctx: &mut Ctx,
    s: &mut Session,
    reads: &[ReadOp],
    writes: Vec<Vec<Segment>>,
    want: &str,
) -> Result<Returned, Verdict> {
    let several = writes.len() > 1;
    match send_reads(ctx, s, reads, writes, want)? {
        Sent::Returned(r) => Ok(r),
        Sent::Refused(how) if several => {
            let why = format!(
                "{how}: a write list of several chunks refused (RFC 8267 6.4.2 lets an NFSv4 server take only one)"
            );
            Err(Verdict::unsupported(want, why))
        }
        Sent::Refused(how) => {
            let why = format!("{how}: a write list of one chunk refused, within RFC 8267 6.4.2's prescriptions");
            Err(Verdict::fail(want, why))
        }
    }
}

/// Registered write chunks of one `CHUNK_LEN` segment each, filled with the canary; None in
/// `shape` is an empty chunk (no segments).
fn offer(ctx: &mut Ctx, shape: &[bool]) -> (Vec<Option<Region>>, Vec<Vec<Segment>>) {
    let regions: Vec<Option<Region>> =
        shape.iter().map(|&used| used.then(|| ctx.register(CHUNK_LEN, Access::WRITE))).collect();
    for r in regions.iter().flatten() {
        ctx.conn().write_local(r, 0, &[CANARY; CHUNK_LEN as usize]).expect("own region");
    }
    let writes = regions.iter().map(|r| r.iter().map(|r| r.segment()).collect()).collect();
    (regions, writes)
}

/// None when `region` holds exactly `data` (and the canary after it); else what it holds,
/// for the verdict (the bytes where `data` should be, and four more).
fn mismatch(ctx: &mut Ctx, region: &Region, data: &[u8]) -> Option<String> {
    let bytes = ctx.conn().read_local(region).expect("own region");
    let ok = bytes[..data.len()] == data[..] && bytes[data.len()..].iter().all(|&b| b == CANARY);
    (!ok).then(|| format!("it holds {:02x?}", &bytes[..(data.len() + 4).min(bytes.len())]))
}

/// Unless both READs returned data: inconclusive, the precondition not met.
fn both_read(r: &Returned, want: &str) -> Result<(), Verdict> {
    let reads = r.reads();
    if r.res.status != NFS4_OK || reads.len() != 2 || reads.iter().any(|(st, rd)| *st != NFS4_OK || rd.is_none()) {
        let got = format!("COMPOUND status {} with READ results {reads:?}: no two READ results to judge", r.res.status);
        return Err(Verdict::inconclusive(want, got));
    }
    Ok(())
}

/// (handle, offset, length) of each returned chunk's segments.
fn shape(writes: &[Vec<Segment>]) -> Vec<Vec<(u32, u64, u32)>> {
    writes.iter().map(|c| c.iter().map(|s| (s.handle, s.offset, s.length)).collect()).collect()
}

/// 6.4.1#1 and #2: two READs, two non-empty write chunks.
fn first_read_first_chunk(ctx: &mut Ctx) -> Judged {
    let mut s = session(ctx)?;
    let want = "the first READ's 5 bytes in the first write chunk and the second READ's 40 bytes in the second (lengths 5 and 40, handles and offsets as offered), neither inline, nothing else written";
    let (regions, offered) = offer(ctx, &[true, true]);
    let r = read_compound(ctx, &mut s, &[FIVE, BIG], offered.clone(), want)?;
    both_read(&r, want)?;
    let expected: Vec<_> =
        offered.iter().zip([FIVE, BIG]).map(|(c, rd)| vec![(c[0].handle, c[0].offset, rd.count)]).collect();
    if shape(&r.writes) != expected {
        let got = format!("the write list returned as {:?} for READ results {:?}", r.writes, r.reads());
        return Err(Verdict::fail(want, got));
    }
    if let Some(k) = r.reads().iter().position(|(_, rd)| rd.as_ref().is_some_and(|(_, inline)| inline.is_some())) {
        return Err(Verdict::fail(want, format!("READ {} returned its data inline too", k + 1)));
    }
    for (k, (region, rd)) in regions.iter().zip([FIVE, BIG]).enumerate() {
        if let Some(got) = mismatch(ctx, region.as_ref().expect("offered"), &contents(&rd)) {
            return Err(Verdict::fail(
                want,
                format!("write chunk {} is not READ {}'s data alone: {got}", k + 1, k + 1),
            ));
        }
    }
    Ok(Verdict::pass(want, "each READ's data in its own write chunk, in the order of the READs"))
}

/// 6.4.1#3: two READs, the first chunk empty, the second non-empty.
fn empty_chunk_read_inline(ctx: &mut Ctx) -> Judged {
    let mut s = session(ctx)?;
    let want = "the first READ's 5 bytes inline and an empty write chunk (no segments) first in the write list; the second READ's 40 bytes in the second chunk";
    let (regions, offered) = offer(ctx, &[false, true]);
    let r = match send_reads(ctx, &mut s, &[FIVE, BIG], offered.clone(), want)? {
        Sent::Returned(r) => r,
        Sent::Refused(how) => {
            // Refused for the empty chunk, or for two chunks (RFC 8267 6.4.2 lets a server
            // take one): the same COMPOUND with two non-empty chunks tells which.
            let (_, two) = offer(ctx, &[true, true]);
            let control = send_reads(ctx, &mut s, &[FIVE, BIG], two, want)?;
            return Err(if let Sent::Refused(_) = control {
                let why = "a write list of two chunks refused, with or without an empty one (RFC 8267 6.4.2 lets an NFSv4 server take only one)";
                Verdict::unsupported(want, format!("{how}: {why}"))
            } else {
                let why = "for the write list with an empty chunk, while the same COMPOUND with two non-empty chunks is processed";
                Verdict::fail(want, format!("{how} {why}"))
            });
        }
    };
    both_read(&r, want)?;
    let second = &offered[1][0];
    if shape(&r.writes) != vec![vec![], vec![(second.handle, second.offset, BIG.count)]] {
        let got = format!("the write list returned as {:?} for READ results {:?}", r.writes, r.reads());
        return Err(Verdict::fail(want, got));
    }
    let reads = r.reads();
    match &reads[0].1 {
        Some((5, Some(data))) if *data == contents(&FIVE) => {}
        other => return Err(Verdict::fail(want, format!("the first READ returned {other:?}, not its 5 bytes inline"))),
    }
    if let Some(got) = mismatch(ctx, regions[1].as_ref().expect("offered"), &contents(&BIG)) {
        return Err(Verdict::fail(
            want,
            format!("the second write chunk does not hold the second READ's data alone: {got}"),
        ));
    }
    Ok(Verdict::pass(want, "the READ with the empty chunk inline, the next READ in the next chunk"))
}

/// 6.4.1#4: two READs with a chunk each, the second READ failing.
fn failed_read_empty_chunk(ctx: &mut Ctx) -> Judged {
    let mut s = session(ctx)?;
    let want = "the first READ's 5 bytes in the first write chunk; the second write chunk, whose READ failed, returned in its place with no data: empty (no segments), or unused (its segment with length 0, RFC 8166 4.3.2.2)";
    let (regions, offered) = offer(ctx, &[true, true]);
    let failing = ReadOp { stateid: BOGUS_STATEID, ..BIG };
    let r = read_compound(ctx, &mut s, &[FIVE, failing], offered.clone(), want)?;
    let reads = r.reads();
    let precondition = reads.len() == 2 && reads[0].0 == NFS4_OK && reads[0].1.is_some() && reads[1].0 != NFS4_OK;
    if !precondition {
        let got = format!(
            "READ results {reads:?} (COMPOUND status {}): not a first READ that succeeded and a second that failed",
            r.res.status
        );
        return Err(Verdict::inconclusive(want, got));
    }
    let first = &offered[0][0];
    let second = &offered[1][0];
    let unused = vec![(second.handle, second.offset, 0)];
    let got = shape(&r.writes);
    let ok = got.len() == 2
        && got[0] == vec![(first.handle, first.offset, FIVE.count)]
        && (got[1].is_empty() || got[1] == unused);
    if !ok {
        let got = format!("the write list returned as {:?} for READ results {reads:?}", r.writes);
        return Err(Verdict::fail(want, got));
    }
    if reads[0].1.as_ref().is_some_and(|(_, inline)| inline.is_some()) {
        return Err(Verdict::fail(want, "the first READ returned its data inline too"));
    }
    if let Some(got) = mismatch(ctx, regions[0].as_ref().expect("offered"), &contents(&FIVE)) {
        return Err(Verdict::fail(
            want,
            format!("the first write chunk does not hold the first READ's data alone: {got}"),
        ));
    }
    let form = if got[1].is_empty() { "empty" } else { "unused" };
    Ok(Verdict::pass(want, format!("the failed READ's chunk returned {form} in its position")))
}

/// 6.4.1#5: two READs, one write chunk.
fn surplus_reads_inline(ctx: &mut Ctx) -> Judged {
    let mut s = session(ctx)?;
    let want = "with one write chunk for two READs: the first READ's 5 bytes in it, the second READ's 40 bytes inline";
    let (regions, offered) = offer(ctx, &[true]);
    let r = read_compound(ctx, &mut s, &[FIVE, BIG], offered.clone(), want)?;
    both_read(&r, want)?;
    let first = &offered[0][0];
    if shape(&r.writes) != vec![vec![(first.handle, first.offset, FIVE.count)]] {
        let got = format!("the write list returned as {:?} for READ results {:?}", r.writes, r.reads());
        return Err(Verdict::fail(want, got));
    }
    let reads = r.reads();
    match &reads[1].1 {
        Some((40, Some(data))) if *data == contents(&BIG) => {}
        Some((40, Some(data))) => {
            let got = format!("the second READ's 40 bytes inline, but not the file's: {:02x?}", &data[..16]);
            return Err(Verdict::fail(want, got));
        }
        other => {
            return Err(Verdict::fail(want, format!("the second READ returned {other:?}, not its 40 bytes inline")))
        }
    }
    if let Some(got) = mismatch(ctx, regions[0].as_ref().expect("offered"), &contents(&FIVE)) {
        return Err(Verdict::fail(want, format!("the write chunk does not hold the first READ's data alone: {got}")));
    }
    Ok(Verdict::pass(want, "the READ without a write chunk returned its data inline"))
}

/// 6.4.2#2, the write list's limit: one READ of 64 bytes of `big` with one write chunk of
/// sixteen 4-byte segments, the most 6.4.2 lets a client send without knowing the server's
/// limits.
fn sixteen_segment_write_chunk(ctx: &mut Ctx) -> Judged {
    let mut s = session(ctx)?;
    let want = "a READ of 64 bytes with one write chunk of sixteen 4-byte segments: processed, the data across all sixteen (each returned with length 4, handles and offsets as offered), not inline";
    let region = ctx.register(CHUNK_LEN, Access::WRITE);
    ctx.conn().write_local(&region, 0, &[CANARY; CHUNK_LEN as usize]).expect("own region");
    let offered: Vec<Segment> = (0..SEGMENTS).map(|i| region.sub_segment(i * 4, 4)).collect();
    let read = ReadOp { count: CHUNK_LEN, ..BIG };
    let r = read_compound(ctx, &mut s, &[read], vec![offered.clone()], want)?;
    let reads = r.reads();
    if r.res.status != NFS4_OK || reads.len() != 1 || reads[0].1.is_none() {
        let got = format!("COMPOUND status {} with READ results {reads:?}: no READ data to place", r.res.status);
        return Err(Verdict::inconclusive(want, got));
    }
    let data = contents(&read);
    returned_in_segments(
        ctx,
        &r,
        &offered,
        &region,
        &data,
        want,
        "the sixteen segments do not hold the READ's 64 bytes in order",
    )?;
    Ok(Verdict::pass(want, "the 64 bytes across the sixteen segments"))
}

/// The segments a chunk may hold under RFC 8267 6.4.2's prescriptions.
const SEGMENTS: u32 = 16;

/// NFS4ERR_DELAY and NFS4ERR_GRACE (RFC 8881 15.1.1.3, 15.1.9.2): a WRITE with the anonymous
/// stateid is refused while the server is in its grace period (Linux nfsd:
/// `check_special_stateids`, fs/nfsd/nfs4state.c), and tried again.
const NFS4ERR_DELAY: u32 = 10008;
const NFS4ERR_GRACE: u32 = 10013;
/// NFS4ERR_BADXDR (RFC 8881 15.1.1.1): the arguments, as the server reassembled them from the
/// chunks, do not decode.
const NFS4ERR_BADXDR: u32 = 10036;
/// How long a WRITE refused for the grace period is tried again: Linux nfsd's grace lasts
/// its lease (90 s) after boot, less the time the run took to get here.
const GRACE_WAIT: std::time::Duration = std::time::Duration::from_secs(90);
/// stable_how4 FILE_SYNC4 (RFC 8881 18.32.1).
const FILE_SYNC4: u32 = 2;
/// The anonymous stateid (RFC 8881 8.2.3: all zeros), which WRITE may use.
const ANONYMOUS_STATEID: Stateid = [0; 16];

/// Splits `len` bytes (a multiple of four) into at most `n` runs of whole XDR words, none
/// empty (RFC 8267 6.4.2 counts segments; an empty read segment is no part of a chunk, and
/// Linux 6.1 and 6.12 oops on one: docs/findings/linux-svcrdma-read-special-rw-ctx-null.md).
fn word_runs(len: u32, n: u32) -> Vec<(u32, u32)> {
    let words = len / 4;
    let n = n.min(words).max(1);
    let (each, extra) = (words / n, words % n);
    let mut at = 0;
    (0..n)
        .map(|i| {
            let run = 4 * (each + u32::from(i < extra));
            let seg = (at, run);
            at += run;
            seg
        })
        .collect()
}

/// What a WRITE sent in a Long call got: refused (how), answered with the COMPOUND status and
/// the WRITE's result (status, count), or nothing (what instead).
enum Written {
    Refused(&'static str),
    Answered { status: u32, write: Option<(u32, Option<u32>)> },
    Nothing(String),
}

/// An NFSv4.1 WRITE of `data` to `scratch` (SEQUENCE, PUTFH of the export's root, LOOKUP,
/// WRITE with FILE_SYNC4 and the anonymous stateid), its data in a Read chunk of
/// `data_segments` segments at its position (no XDR pad: `data` is whole words), the rest of
/// the call in a Long call's Position-zero Read chunk of at most `head_segments` segments
/// (RFC 8166 3.5.3), or inline (RDMA_MSG) when `head_segments` is 0. Tried again through the
/// grace period.
fn long_write(
    ctx: &mut Ctx,
    s: &mut Session,
    data: &[u8],
    head_segments: u32,
    data_segments: u32,
    want: &str,
) -> Result<Written, Verdict> {
    let until = std::time::Instant::now() + GRACE_WAIT;
    loop {
        let ops = [
            Op::Sequence { sessionid: s.sid, sequenceid: s.seq, slotid: 0, highest_slotid: 0, cachethis: false },
            Op::PutFh(ctx.root_fh().to_vec()),
            Op::Lookup(nfs3::FILE_SCRATCH.as_bytes().to_vec()),
            Op::Write { stateid: ANONYMOUS_STATEID, offset: 0, stable: FILE_SYNC4, data: data.to_vec() },
        ];
        let mut call =
            ctx.call_of(NFS_PROGRAM, NFS_V4, NFSPROC4_COMPOUND, nfs41::compound_args("rpcrdma", MINOR_V1, &ops));
        // The WRITE is the last operation: its data (whole words, no pad) ends the call, and
        // the reduced call ends with the data's length.
        call.args.truncate(call.args.len() - data.len());
        let reduced = call.rpc_bytes();
        let position = reduced.len() as u32;
        let mut reads = Vec::new();
        if head_segments > 0 {
            let head = ctx.source(&reduced);
            reads.extend(
                word_runs(position, head_segments)
                    .into_iter()
                    .map(|(at, len)| ReadSegment { position: 0, target: head.sub_segment(at, len) }),
            );
        }
        let body = ctx.source(data);
        let step = data.len() as u32 / data_segments;
        reads.extend((0..data_segments).map(|i| ReadSegment { position, target: body.sub_segment(i * step, step) }));
        call.reads = reads;
        let got = ctx.call(&if head_segments > 0 { call.nomsg() } else { call.msg() });
        if expect::err_chunk(&got, call.xid).is_ok() {
            return Ok(Written::Refused("ERR_CHUNK"));
        }
        let f = match expect::reply_to(&got, call.xid) {
            Ok((f, _)) => f,
            Err(_) if got.frame().is_none() => return Ok(Written::Nothing(got.describe())),
            Err(m) => return Err(Verdict::fail(want, m)),
        };
        match expect::rpc(f).map(|r| &r.kind) {
            Ok(RpcKind::Accepted(AcceptStat::ProgMismatch { .. } | AcceptStat::ProgUnavail)) => {
                return Err(Verdict::unsupported(want, "no NFSv4 (PROG_MISMATCH or PROG_UNAVAIL)"));
            }
            Ok(RpcKind::Accepted(AcceptStat::GarbageArgs)) => return Ok(Written::Refused("GARBAGE_ARGS")),
            _ => {}
        }
        let (f, _) = expect::rpc_accepted(&got, call.xid, AcceptStat::Success).or_fail(want)?;
        let results = expect::results(f).or_fail(want)?;
        let res = compound_res(results, |_| false).ok_or("COMPOUND4res that does not decode").or_fail(want)?;
        if res.results.first().is_some_and(|r| r.status == NFS4_OK) {
            s.seq = s.seq.wrapping_add(1);
        }
        let write = res.results.iter().find(|r| r.op == OP_WRITE).map(|r| match &r.res {
            Some(Res::Write { count, .. }) => (r.status, Some(*count)),
            _ => (r.status, None),
        });
        let in_grace = matches!(write, Some((NFS4ERR_GRACE | NFS4ERR_DELAY, _)));
        if !in_grace || std::time::Instant::now() > until {
            return Ok(Written::Answered { status: res.status, write });
        }
        std::thread::sleep(std::time::Duration::from_secs(1));
    }
}

/// Reads `scratch` back inline (READ with the READ-bypass stateid, no write chunk): None when
/// it holds `data`, else what it holds.
fn read_back(ctx: &mut Ctx, s: &mut Session, data: &[u8], want: &str) -> Result<Option<String>, Verdict> {
    let read = ReadOp { name: nfs3::FILE_SCRATCH, stateid: READ_BYPASS_STATEID, count: data.len() as u32 };
    let r = read_compound(ctx, s, &[read], Vec::new(), want)?;
    Ok(match r.reads().first() {
        Some((NFS4_OK, Some((_, Some(got))))) if got[..] == data[..] => None,
        other => Some(format!("the file read back as {other:?}")),
    })
}

/// Bytes to write, different in each run (a WRITE that did nothing does not read back as them).
fn pattern(ctx: &mut Ctx, len: usize) -> Vec<u8> {
    let seed = ctx.xid().to_be_bytes();
    (0..len).map(|i| seed[i % 4] ^ (i as u8).wrapping_mul(37)).collect()
}

/// 6.4.2#2, the read list's limit: an NFSv4.1 WRITE of 64 bytes in a Long call, a
/// Position-zero Read chunk of sixteen segments carrying the call and a Read chunk of
/// sixteen 4-byte segments carrying the data, the most 6.4.2 lets a client send.
fn sixteen_segment_read_chunks(ctx: &mut Ctx) -> Judged {
    let mut s = session(ctx)?;
    let want = "an NFSv4.1 WRITE of 64 bytes in a Long call (a Position-zero Read chunk of sixteen segments, the data in a Read chunk of sixteen 4-byte segments at its position) processed: WRITE NFS4_OK with count 64, and the file reads back as the 64 bytes";
    let data = pattern(ctx, CHUNK_LEN as usize);
    // The same WRITE with one segment a chunk tells a refusal of sixteen segments from one of
    // the Long call's shape.
    let control = |ctx: &mut Ctx, s: &mut Session| -> Result<String, Verdict> {
        Ok(match long_write(ctx, s, &data, 1, 1, want)? {
            Written::Refused(how) => format!("refused too ({how})"),
            Written::Nothing(what) => format!("{what} too"),
            Written::Answered { write, .. } => format!("WRITE result {write:?}"),
        })
    };
    match long_write(ctx, &mut s, &data, SEGMENTS, SEGMENTS, want)? {
        Written::Refused(how) => {
            let with_one = control(ctx, &mut s)?;
            let why = format!(
                "{how}: a read list within RFC 8267 6.4.2's prescriptions refused; the same WRITE with one segment a chunk: {with_one}"
            );
            Err(Verdict::fail(want, why))
        }
        Written::Nothing(what) => Err(Verdict::fail(want, what)),
        Written::Answered { write: Some((NFS4ERR_BADXDR, _)), .. } => {
            let with_one = control(ctx, &mut s)?;
            let why = format!(
                "WRITE NFS4ERR_BADXDR: the call as reassembled from a read list within RFC 8267 6.4.2's prescriptions does not decode; the same WRITE with one segment a chunk: {with_one}"
            );
            Err(Verdict::fail(want, why))
        }
        Written::Answered { write: Some((NFS4_OK, Some(n))), .. } if n == CHUNK_LEN => {
            if let Some(got) = read_back(ctx, &mut s, &data, want)? {
                return Err(Verdict::fail(want, format!("WRITE NFS4_OK count 64, but {got}")));
            }
            Ok(Verdict::pass(want, "WRITE NFS4_OK count 64; the 64 bytes read back"))
        }
        Written::Answered { write: Some((NFS4_OK, n)), .. } => {
            Err(Verdict::fail(want, format!("WRITE NFS4_OK with count {n:?}, not 64")))
        }
        Written::Answered { status, write } => {
            let got = format!("COMPOUND status {status}, WRITE result {write:?}: no WRITE done to judge");
            Err(Verdict::inconclusive(want, got))
        }
    }
}

/// What an inline COMPOUND of a WRITE and a READ with both lists got: refused (how),
/// answered, or nothing (what instead).
enum Both {
    Refused(&'static str),
    Answered(Returned),
    Nothing(String),
}

/// An NFSv4.1 COMPOUND, inline (RDMA_MSG), of SEQUENCE, PUTFH of the export's root, LOOKUP
/// `scratch`, WRITE of `data` (FILE_SYNC4, the anonymous stateid) and READ of as many bytes
/// back (the READ-bypass stateid): the WRITE's data in a Read chunk of `segments` segments at
/// its position (RFC 8166 3.4.5: reduced out of the middle of the call, the READ's arguments
/// after it), the READ's result offered `writes`, one Write chunk. Tried again through the
/// grace period.
fn write_then_read(
    ctx: &mut Ctx,
    s: &mut Session,
    data: &[u8],
    segments: u32,
    writes: &[Segment],
    want: &str,
) -> Result<Both, Verdict> {
    let until = std::time::Instant::now() + GRACE_WAIT;
    let body = ctx.source(data);
    loop {
        let ops = [
            Op::Sequence { sessionid: s.sid, sequenceid: s.seq, slotid: 0, highest_slotid: 0, cachethis: false },
            Op::PutFh(ctx.root_fh().to_vec()),
            Op::Lookup(nfs3::FILE_SCRATCH.as_bytes().to_vec()),
            Op::Write { stateid: ANONYMOUS_STATEID, offset: 0, stable: FILE_SYNC4, data: data.to_vec() },
            Op::Read { stateid: READ_BYPASS_STATEID, offset: 0, count: data.len() as u32 },
        ];
        let args = nfs41::compound_args("rpcrdma", MINOR_V1, &ops);
        // The COMPOUND up to the WRITE is as long as the whole one's start (the op count
        // differs in value only): the WRITE's data (whole words, no pad) ends it.
        let data_end = nfs41::compound_args("rpcrdma", MINOR_V1, &ops[..4]).len();
        let data_at = data_end - data.len();
        let mut call = ctx.call_of(NFS_PROGRAM, NFS_V4, NFSPROC4_COMPOUND, args);
        call.args.drain(data_at..data_end);
        let position = call.rpc_bytes().len() as u32 - (call.args.len() - data_at) as u32;
        let step = data.len() as u32 / segments;
        call.reads =
            (0..segments).map(|i| ReadSegment { position, target: body.sub_segment(i * step, step) }).collect();
        call.writes = vec![writes.to_vec()];
        let got = ctx.call(&call.msg());
        if got.frame().is_none() {
            return Ok(Both::Nothing(got.describe()));
        }
        let res = match compound_answer(&got, call.xid, s, want)? {
            Sent::Refused(how) => return Ok(Both::Refused(how)),
            Sent::Returned(r) => r,
        };
        let in_grace =
            res.res.results.iter().any(|r| r.op == OP_WRITE && matches!(r.status, NFS4ERR_GRACE | NFS4ERR_DELAY));
        if !in_grace || std::time::Instant::now() > until {
            return Ok(Both::Answered(res));
        }
        std::thread::sleep(std::time::Duration::from_secs(1));
    }
}

/// A READ's result placed as RFC 8267 6.4.1 and 6.4.2 want it: the write list returned with
/// the one chunk offered, each of its 4-byte segments with length 4 (handles and offsets as
/// offered), no data inline, and `data` in the segments in order (`what` says a mismatch).
fn returned_in_segments(
    ctx: &mut Ctx,
    r: &Returned,
    offered: &[Segment],
    region: &Region,
    data: &[u8],
    want: &str,
    what: &str,
) -> Result<(), Verdict> {
    let reads = r.reads();
    let expected: Vec<(u32, u64, u32)> = offered.iter().map(|o| (o.handle, o.offset, 4)).collect();
    if shape(&r.writes) != vec![expected] {
        return Err(Verdict::fail(want, format!("the write list returned as {:?} for READ {reads:?}", r.writes)));
    }
    if reads[0].1.as_ref().is_some_and(|(_, inline)| inline.is_some()) {
        return Err(Verdict::fail(want, "the READ returned its data inline too"));
    }
    match mismatch(ctx, region, data) {
        Some(got) => Err(Verdict::fail(want, format!("{what}: {got}"))),
        None => Ok(()),
    }
}

/// The WRITE's result (status, count) of a COMPOUND4res.
fn write_result(res: &CompoundRes) -> Option<(u32, Option<u32>)> {
    res.results.iter().find(|r| r.op == OP_WRITE).map(|r| match &r.res {
        Some(Res::Write { count, .. }) => (r.status, Some(*count)),
        _ => (r.status, None),
    })
}

/// 6.4.2#2, both lists at once: an inline NFSv4.1 COMPOUND whose WRITE of 64 bytes has its
/// data in a Read chunk of sixteen 4-byte segments and whose READ of the 64 bytes back is
/// offered one Write chunk of sixteen 4-byte segments: a read list and a write list each
/// within 6.4.2's prescriptions, in one call. (The Position-zero Read chunk is left out: the
/// call is not a Long call, which sixteen-segment-read-chunks judges.)
fn sixteen_segment_read_and_write_chunks(ctx: &mut Ctx) -> Judged {
    let mut s = session(ctx)?;
    let want = "an inline NFSv4.1 COMPOUND of a WRITE of 64 bytes to `scratch`, its data in a Read chunk of sixteen 4-byte segments, and a READ of the 64 bytes back with one Write chunk of sixteen 4-byte segments: processed, WRITE NFS4_OK count 64, READ NFS4_OK with the 64 bytes written across the sixteen segments (each returned with length 4), not inline";
    let data = pattern(ctx, CHUNK_LEN as usize);
    let offer_chunk = |ctx: &mut Ctx, n: u32| {
        let region = ctx.register(CHUNK_LEN, Access::WRITE);
        ctx.conn().write_local(&region, 0, &[CANARY; CHUNK_LEN as usize]).expect("own region");
        let segs: Vec<Segment> = (0..n).map(|i| region.sub_segment(i * (CHUNK_LEN / n), CHUNK_LEN / n)).collect();
        (region, segs)
    };
    // The same COMPOUND with one segment a chunk tells a refusal of sixteen segments from one
    // of the two lists together.
    let control = |ctx: &mut Ctx, s: &mut Session| -> Result<String, Verdict> {
        let (_, one) = offer_chunk(ctx, 1);
        Ok(match write_then_read(ctx, s, &data, 1, &one, want)? {
            Both::Refused(how) => format!("refused too ({how})"),
            Both::Nothing(what) => format!("{what} too"),
            Both::Answered(r) => format!("COMPOUND status {}, WRITE {:?}", r.res.status, write_result(&r.res)),
        })
    };
    let (region, offered) = offer_chunk(ctx, SEGMENTS);
    let r = match write_then_read(ctx, &mut s, &data, SEGMENTS, &offered, want)? {
        Both::Answered(r) => r,
        Both::Refused(how) => {
            let with_one = control(ctx, &mut s)?;
            let why = format!(
                "{how}: a read list and a write list, each within RFC 8267 6.4.2's prescriptions, refused in one call; the same COMPOUND with one segment a chunk: {with_one}"
            );
            return Err(Verdict::fail(want, why));
        }
        Both::Nothing(what) => return Err(Verdict::fail(want, what)),
    };
    let reads = r.reads();
    match write_result(&r.res) {
        Some((NFS4_OK, Some(n))) if n == CHUNK_LEN => {}
        Some((NFS4_OK, n)) => return Err(Verdict::fail(want, format!("WRITE NFS4_OK with count {n:?}, not 64"))),
        Some((NFS4ERR_BADXDR, _)) => {
            let with_one = control(ctx, &mut s)?;
            let why = format!(
                "WRITE NFS4ERR_BADXDR: the call as reassembled from a read list within RFC 8267 6.4.2's prescriptions does not decode; the same COMPOUND with one segment a chunk: {with_one}"
            );
            return Err(Verdict::fail(want, why));
        }
        write => {
            let got = format!("COMPOUND status {}, WRITE result {write:?}: no WRITE done to judge", r.res.status);
            return Err(Verdict::inconclusive(want, got));
        }
    }
    // The WRITE put the 64 bytes there: a READ of them that fails where the same COMPOUND
    // with one segment a chunk reads them is the server not returning, through the sixteen
    // segments, what it accepted.
    match reads.first() {
        Some((NFS4_OK, Some(_))) => {}
        Some((NFS4ERR_GRACE | NFS4ERR_DELAY, _)) => {
            let got = format!(
                "COMPOUND status {}, READ result {:?}: refused for the grace period or for now",
                r.res.status, reads[0]
            );
            return Err(Verdict::inconclusive(want, got));
        }
        Some((NFS4ERR_BADXDR, _)) => {
            let got =
                "READ NFS4ERR_BADXDR after the WRITE: the READ's arguments, after the reduced data, do not decode";
            return Err(Verdict::fail(want, got));
        }
        other => {
            let (_, one) = offer_chunk(ctx, 1);
            let with_one = match write_then_read(ctx, &mut s, &data, 1, &one, want)? {
                Both::Answered(c) => c.reads().first().cloned(),
                _ => None,
            };
            let got = format!(
                "COMPOUND status {}, READ result {other:?} after WRITE NFS4_OK count 64; the same COMPOUND with one segment a chunk: READ {with_one:?}",
                r.res.status
            );
            // A READ that fails with one segment a chunk too fails for a cause of the
            // export's (access, a lock), not of the chunk lists.
            return Err(match with_one {
                Some((NFS4_OK, Some(_))) => Verdict::fail(want, got),
                _ => Verdict::inconclusive(want, got),
            });
        }
    }
    let what = "the sixteen write-chunk segments do not hold the 64 bytes written, in order";
    returned_in_segments(ctx, &r, &offered, &region, &data, want, what)?;
    Ok(Verdict::pass(want, "WRITE NFS4_OK count 64; the READ's 64 bytes, those written, across the sixteen segments"))
}

/// What an NFSv4 NULL (RFC 7530 16.1) on the connection got: SUCCESS (true), no NFSv4 there
/// (false: PROG_MISMATCH or PROG_UNAVAIL), or the mismatch as a failure.
fn nfs4_null(ctx: &mut Ctx, want: &str) -> Result<bool, Verdict> {
    let call = ctx.call_of(NFS_PROGRAM, NFS_V4, NFSPROC4_NULL, Vec::new());
    let got = ctx.call(&call.msg());
    let (f, _) = expect::reply_to(&got, call.xid).or_fail(want)?;
    if let Ok(RpcKind::Accepted(AcceptStat::ProgMismatch { .. } | AcceptStat::ProgUnavail)) =
        expect::rpc(f).map(|r| &r.kind)
    {
        return Ok(false);
    }
    expect::rpc_accepted(&got, call.xid, AcceptStat::Success).or_fail(want)?;
    Ok(true)
}

/// 6.3#1: an NFSv4 server's RPC-over-RDMA service at NFS's well-known port, 20049 (RFC 8267
/// 9), whatever port the harness was given: a connection to the server's host there, and an
/// NFSv4 NULL answered on it.
fn well_known_port(ctx: &mut Ctx) -> Judged {
    let want = "a connection to the server's host at port 20049, RPC-over-RDMA's well-known port for NFS (RFC 8267 6.3, 9), and an NFSv4 NULL (program 100003, version 4) answered there with SUCCESS";
    let Some(given) = ctx.peer_port() else {
        return Err(Verdict::unsupported(want, "the transport has no ports to address"));
    };
    let given_at = if given == NFS_RDMA_PORT {
        "the server was given at port 20049 already".to_string()
    } else {
        format!("the server was given at port {given}")
    };
    match ctx.connect_at(NFS_RDMA_PORT) {
        None => return Err(Verdict::unsupported(want, "the transport has no ports to address")),
        Some(Err(e)) => return Err(Verdict::fail(want, format!("{given_at}; at port 20049: {e}"))),
        Some(Ok(())) => {}
    }
    if nfs4_null(ctx, want)? {
        return Ok(Verdict::pass(want, format!("NFSv4 NULL answered SUCCESS at port 20049 ({given_at})")));
    }
    // No NFSv4 at 20049: a failure if the server serves it over RDMA at the port given.
    if given != NFS_RDMA_PORT {
        start(ctx)?;
        if nfs4_null(ctx, want)? {
            let why =
                format!("PROG_MISMATCH or PROG_UNAVAIL for NFSv4 at port 20049, while {given_at} answers NFSv4 NULL");
            return Err(Verdict::fail(want, why));
        }
    }
    Err(Verdict::unsupported(
        want,
        format!("the server serves no NFSv4 over RDMA (PROG_MISMATCH or PROG_UNAVAIL; {given_at})"),
    ))
}

/// Data segments of the WRITE whose read list exceeds RFC 8267 6.4.2's prescriptions.
const EXCESS_SEGMENTS: u32 = 32;

/// 6.4.2#3: an NFSv4.1 WRITE of 128 bytes, the call inline (RDMA_MSG: not a Long call, so the
/// one excess is the segment count) and its data in a Read chunk of thirty-two segments, twice
/// what 6.4.2 lets a client send without knowing the server's limits. Processing it (and writing the data) is as good as refusing it with ERR_CHUNK or
/// GARBAGE_ARGS; silence or a lost connection is not.
fn excess_chunk_lists_answered(ctx: &mut Ctx) -> Judged {
    let mut s = session(ctx)?;
    let want = "an NFSv4.1 WRITE of 128 bytes, the call inline (RDMA_MSG) and its data in a Read chunk of thirty-two 4-byte segments (over RFC 8267 6.4.2's sixteen): refused with RDMA_ERROR ERR_CHUNK or GARBAGE_ARGS, or processed (WRITE NFS4_OK count 128, the data read back); not silence or a lost connection";
    let data = pattern(ctx, 4 * EXCESS_SEGMENTS as usize);
    match long_write(ctx, &mut s, &data, 0, EXCESS_SEGMENTS, want)? {
        Written::Refused(how) => Ok(Verdict::pass(want, format!("refused with {how}"))),
        Written::Nothing(what) => {
            Ok(Verdict::lax(want, format!("{what}: neither ERR_CHUNK nor GARBAGE_ARGS for a call it did not process")))
        }
        Written::Answered { write: Some((NFS4_OK, Some(n))), .. } if n as usize == data.len() => {
            if let Some(got) = read_back(ctx, &mut s, &data, want)? {
                return Err(Verdict::fail(want, format!("WRITE NFS4_OK count 128, but {got}")));
            }
            Ok(Verdict::pass(want, "processed: WRITE NFS4_OK count 128, the data read back"))
        }
        Written::Answered { write: Some((NFS4_OK, n)), .. } => {
            Err(Verdict::fail(want, format!("WRITE NFS4_OK with count {n:?}, not 128")))
        }
        Written::Answered { status: NFS4ERR_GRACE | NFS4ERR_DELAY, write } => {
            let got = format!("WRITE result {write:?}: still in the grace period");
            Err(Verdict::inconclusive(want, got))
        }
        Written::Answered { status, write } => Ok(Verdict::lax(
            want,
            format!(
                "COMPOUND status {status}, WRITE result {write:?}: an NFS error rather than ERR_CHUNK or GARBAGE_ARGS"
            ),
        )),
    }
}

pub static CHECKS: [Check; 9] = [
    Check {
        info: CheckInfo {
            id: "rfc8267/6.3/well-known-port",
            judges: &["rfc8267/6.3#1"],
            acceptable: "a connection to the server's host at port 20049 (RPC-over-RDMA's well-known port for NFS, RFC 8267 9), whatever port the run was given, and an NFSv4 NULL answered there with SUCCESS; no listener there, a rejected connection or an unanswered NULL fails, and so does PROG_MISMATCH or PROG_UNAVAIL at 20049 while the port given answers NFSv4 NULL; a server that serves no NFSv4 over RDMA, or a transport with no ports, is unsupported; the verdict says when the server was given at 20049 already",
            rationale: "An NFSv4 client finds the server's RPC-over-RDMA service at 20049 without asking (NFSv4 uses no portmapper, RFC 8267 6.3); a server listening elsewhere is not found.",
            groups: &["nfs41", "cm"],
            broken_by: &[("not-well-known-port", Outcome::Fail)],
            precondition: None,
        },
        run: well_known_port,
    },
    Check {
        info: CheckInfo {
            id: "rfc8267/6.4.1/first-read-first-chunk",
            judges: &["rfc8267/6.4.1#1", "rfc8267/6.4.1#2"],
            acceptable: "for an NFSv4.1 COMPOUND reading 5 bytes of `five` then 40 of `big`, with two 64-byte write chunks: the first READ's data in the first chunk, the second's in the second, lengths 5 and 40, neither inline; inconclusive unless both READs succeed; a server that serves no NFSv4.1 over RDMA, or refuses a write list of two chunks (ERR_CHUNK or GARBAGE_ARGS, RFC 8267 6.4.2), is unsupported",
            rationale: "The client and server agree in advance that the k-th write chunk belongs to the k-th READ (RFC 8267 6.4.1); an item in another chunk, or inline, is not where the client looks for it.",
            groups: &["chunks", "write-chunks", "nfs41"],
            broken_by: &[("ddp-into-last-write-chunk", Outcome::Fail), ("later-items-inline", Outcome::Fail)],
            precondition: Some("both READs of the COMPOUND return data (NFS4_OK)"),
        },
        run: first_read_first_chunk,
    },
    Check {
        info: CheckInfo {
            id: "rfc8267/6.4.1/empty-chunk-read-inline",
            judges: &["rfc8267/6.4.1#3"],
            acceptable: "for an NFSv4.1 COMPOUND reading 5 bytes of `five` then 40 of `big`, with an empty write chunk then a 64-byte one: the first READ's data inline and the empty chunk returned empty, the second READ's 40 bytes in the second chunk; ERR_CHUNK or GARBAGE_ARGS fails when the same COMPOUND with two non-empty chunks is processed (the empty chunk refused), and is unsupported when that is refused too (RFC 8267 6.4.2); inconclusive unless both READs succeed; a server that serves no NFSv4.1 over RDMA is unsupported",
            rationale: "An empty write chunk is how a client asks for one READ's data inline while the next READ uses the next chunk; a server that skips it puts the data where the client does not look.",
            groups: &["chunks", "write-chunks", "nfs41"],
            broken_by: &[
                ("ddp-into-last-write-chunk", Outcome::Fail),
                ("drop-unused-write-chunks", Outcome::Fail),
                ("empty-write-chunk-refused", Outcome::Fail),
            ],
            precondition: Some("both READs of the COMPOUND return data (NFS4_OK)"),
        },
        run: empty_chunk_read_inline,
    },
    Check {
        info: CheckInfo {
            id: "rfc8267/6.4.1/failed-read-empty-chunk",
            judges: &["rfc8267/6.4.1#4"],
            acceptable: "for an NFSv4.1 COMPOUND reading `five` (5 bytes) then `big` with a stateid no server issued, a 64-byte write chunk for each: the first READ's data in the first chunk, and the second chunk returned in its position with no data, either empty (no segments, RFC 8267's word) or unused (its segment with length 0, RFC 8166 4.3.2.2's form for an unconsumed chunk); inconclusive unless the first READ succeeds and the second fails; unsupported as for first-read-first-chunk",
            rationale: "A READ that fails returns an arm of READ4res without data; the client matches returned chunks to READs by position, so the failed READ's chunk must stay in the list and say nothing was written.",
            groups: &["chunks", "write-chunks", "nfs41"],
            broken_by: &[("drop-unused-write-chunks", Outcome::Fail)],
            precondition: Some("the first READ of the COMPOUND succeeds and the second, with a stateid no server issued, fails"),
        },
        run: failed_read_empty_chunk,
    },
    Check {
        info: CheckInfo {
            id: "rfc8267/6.4.1/surplus-reads-inline",
            judges: &["rfc8267/6.4.1#5"],
            acceptable: "for an NFSv4.1 COMPOUND reading 5 bytes of `five` then 40 of `big` with one 64-byte write chunk: the first READ's data in the chunk, the second READ's 40 bytes inline; ERR_CHUNK or GARBAGE_ARGS for that one chunk fails (RFC 8267 6.4.2); inconclusive unless both READs succeed; a server that serves no NFSv4.1 over RDMA is unsupported",
            rationale: "A READ beyond the write list has nowhere to put its data but inline; a server that reduces it anyway loses the data.",
            groups: &["chunks", "write-chunks", "nfs41"],
            broken_by: &[("surplus-items-reduced", Outcome::Fail)],
            precondition: Some("both READs of the COMPOUND return data (NFS4_OK)"),
        },
        run: surplus_reads_inline,
    },
    Check {
        info: CheckInfo {
            id: "rfc8267/6.4.2/sixteen-segment-write-chunk",
            judges: &["~rfc8267/6.4.2#2"],
            acceptable: "for an NFSv4.1 COMPOUND reading 64 bytes of `big` with one write chunk of sixteen 4-byte segments (a list within RFC 8267 6.4.2's prescriptions): the READ processed, its data across the sixteen segments, each returned with length 4; ERR_CHUNK or GARBAGE_ARGS fails; inconclusive unless the READ succeeds; a server that serves no NFSv4.1 over RDMA is unsupported",
            rationale: "A client that knows nothing of the server's limits may send a write chunk of sixteen segments (RFC 8267 6.4.2); a server that refuses it breaks every such client's large READs.",
            groups: &["chunks", "write-chunks", "nfs41"],
            broken_by: &[("write-chunk-over-eight-segments", Outcome::Fail)],
            precondition: Some("the READ of the COMPOUND returns data (NFS4_OK)"),
        },
        run: sixteen_segment_write_chunk,
    },
    Check {
        info: CheckInfo {
            id: "rfc8267/6.4.2/sixteen-segment-read-chunks",
            judges: &["~rfc8267/6.4.2#2"],
            acceptable: "for an NFSv4.1 WRITE of 64 bytes to `scratch` (anonymous stateid, FILE_SYNC4) sent as a Long call, the call in a Position-zero Read chunk of sixteen segments and the data in a Read chunk of sixteen 4-byte segments at its position (a read list within RFC 8267 6.4.2's prescriptions): WRITE NFS4_OK with count 64 and the file reading back as the 64 bytes; ERR_CHUNK, GARBAGE_ARGS, NFS4ERR_BADXDR for the WRITE, silence or a lost connection fails (the same WRITE with one segment a chunk then shows whether the segment count or the Long call's shape was refused); inconclusive unless the WRITE is done (NFS4ERR_GRACE is tried again for 90 s); a server that serves no NFSv4.1 over RDMA is unsupported",
            rationale: "A client that knows nothing of the server's limits may send a Position-zero Read chunk and one other, sixteen segments each (RFC 8267 6.4.2); a server that refuses them breaks every such client's large WRITEs.",
            groups: &["chunks", "read-chunks", "nfs41"],
            broken_by: &[("read-chunk-over-eight-segments", Outcome::Fail)],
            precondition: Some("the WRITE of the COMPOUND is done (NFS4_OK) or fails to decode (NFS4ERR_BADXDR), not refused for the grace period or another cause of the export's"),
        },
        run: sixteen_segment_read_chunks,
    },
    Check {
        info: CheckInfo {
            id: "rfc8267/6.4.2/sixteen-segment-read-and-write-chunks",
            judges: &["~rfc8267/6.4.2#2"],
            acceptable: "for an NFSv4.1 COMPOUND sent inline (RDMA_MSG) writing 64 bytes to `scratch` (anonymous stateid, FILE_SYNC4), the data in a Read chunk of sixteen 4-byte segments at its position, then reading them back with one Write chunk of sixteen 4-byte segments (a read list and a write list within RFC 8267 6.4.2's prescriptions, in one call): WRITE NFS4_OK with count 64, READ NFS4_OK with the 64 bytes written across the sixteen segments, each returned with length 4, none inline; ERR_CHUNK, GARBAGE_ARGS, NFS4ERR_BADXDR, silence or a lost connection fails (the same COMPOUND with one segment a chunk then shows whether the segment count or the two lists together were refused), and so does a READ that fails (or is missing) after WRITE NFS4_OK where the same COMPOUND with one segment a chunk reads the bytes (NFS4ERR_GRACE and NFS4ERR_DELAY, or the READ failing with one segment too, are inconclusive); inconclusive unless the WRITE is done (NFS4ERR_GRACE is tried again for 90 s) and the READ is not refused for the grace period; a server that serves no NFSv4.1 over RDMA is unsupported",
            rationale: "A client that knows nothing of the server's limits may send a Read chunk and a Write chunk, sixteen segments each, in one call (RFC 8267 6.4.2); a server that takes each list alone but not both breaks every COMPOUND that writes and reads.",
            groups: &["chunks", "read-chunks", "write-chunks", "nfs41"],
            broken_by: &[
                ("read-and-write-lists-refused", Outcome::Fail),
                ("read-chunk-over-eight-segments", Outcome::Fail),
                ("write-chunk-over-eight-segments", Outcome::Fail),
                ("read-fails-in-sixteen-segment-chunk", Outcome::Fail),
            ],
            precondition: Some("the WRITE of the COMPOUND is done (NFS4_OK), or fails to decode (NFS4ERR_BADXDR), not refused for the grace period or another cause of the export's; the READ after it is not refused for the grace period, nor fails with one segment a chunk too"),
        },
        run: sixteen_segment_read_and_write_chunks,
    },
    Check {
        info: CheckInfo {
            id: "rfc8267/6.4.2/excess-chunk-lists-answered",
            judges: &["rfc8267/6.4.2#3"],
            acceptable: "for an NFSv4.1 WRITE of 128 bytes to `scratch`, the call inline (RDMA_MSG) and its data in a Read chunk of thirty-two 4-byte segments (over RFC 8267 6.4.2's sixteen): RDMA_ERROR ERR_CHUNK or an RPC reply with GARBAGE_ARGS, or the call processed (WRITE NFS4_OK count 128 and the data read back); silence, a lost connection, or an NFS error instead is pass-lax (a SHOULD); a WRITE that says it wrote what does not read back fails; inconclusive while the grace period refuses WRITE; unsupported as above",
            rationale: "A client that sends more than 6.4.2 prescribes learns from ERR_CHUNK or GARBAGE_ARGS that the server cannot take it and stops (6.4.2#4); from silence or a disconnect it learns nothing and sends the call again.",
            groups: &["chunks", "read-chunks", "nfs41", "errors"],
            broken_by: &[("drop-excess-chunk-lists", Outcome::PassLax)],
            precondition: Some("the WRITE is not refused for the grace period"),
        },
        run: excess_chunk_lists_answered,
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn word_runs_cover_the_call_in_whole_words_none_empty() {
        for (len, n, runs) in [(200u32, 16u32, 16usize), (68, 16, 16), (8, 16, 2), (4, 1, 1)] {
            let got = word_runs(len, n);
            assert_eq!(got.len(), runs, "{len} bytes in {n}");
            let mut at = 0;
            for (start, run) in got {
                assert_eq!(start, at, "{len} bytes in {n}: contiguous");
                assert!(run > 0 && run % 4 == 0, "{len} bytes in {n}: run {run}");
                at += run;
            }
            assert_eq!(at, len, "{len} bytes in {n}: all of it");
        }
    }

    #[test]
    fn the_bogus_stateid_is_no_special_stateid() {
        // RFC 8881 8.2.3: all-zero and all-one stateids are special; ours must be neither.
        assert_ne!(BOGUS_STATEID, READ_BYPASS_STATEID);
        assert_ne!(BOGUS_STATEID, [0; 16]);
        assert_ne!(BOGUS_STATEID[4..], [0; 12]);
    }
}
