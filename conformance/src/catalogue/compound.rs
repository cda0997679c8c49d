//! Replies with several DDP-eligible result data items: an NFSv4 COMPOUND of two READs
//! (RFC 8267 6.4.1), each READ's data an item of its own, and a write chunk for each. NFSv3
//! replies hold at most one such item, so only these checks see what a responder does with
//! the write chunks after the first (RFC 8166 4.3.2.1, 4.3.2.2).

use rpcrdma_codec::chunk::Segment;
use rpcrdma_codec::rpc::AcceptStat;

use rpcrdma_peers::proto::nfs3::{self, file_contents};
use rpcrdma_peers::proto::nfs4::{self, compound_args, Op, NFS4_OK, NFSPROC4_COMPOUND, NFS_PROGRAM, NFS_V4, OP_READ};
use rpcrdma_peers::transport::Access;

use super::steps::{lookup, start, CANARY};
use crate::engine::{expect, Check, CheckInfo, Ctx, Judged, OrFail, Outcome, Verdict};
use crate::frame::rpc::RpcKind;

/// The two READs: `five` whole (5 bytes, eof), then the first 40 bytes of `big`. Different
/// lengths, so an item in the wrong chunk shows.
const READS: [(&str, u32); 2] = [(nfs3::FILE_FIVE, 5), (nfs3::FILE_BIG, 40)];
/// Each write chunk is one 64-byte segment: room for either READ's data, as a requester
/// that cannot predict which item goes where provisions them (RFC 8166 4.3.2.1).
const CHUNK_LEN: u32 = 64;

/// The bytes each READ returns.
fn read_data(i: usize) -> Vec<u8> {
    match i {
        0 => file_contents(5),
        _ => file_contents(70000)[..40].to_vec(),
    }
}

fn subsequent_item_next_chunk(ctx: &mut Ctx) -> Judged {
    start(ctx)?;
    let mut ops = Vec::new();
    for (name, count) in READS {
        ops.push(Op::PutFh(lookup(ctx, name)?));
        ops.push(Op::Read { offset: 0, count });
    }
    let regions: Vec<_> = READS.iter().map(|_| ctx.register(CHUNK_LEN, Access::WRITE)).collect();
    for r in &regions {
        ctx.conn().write_local(r, 0, &[CANARY; CHUNK_LEN as usize]).expect("own region");
    }
    let offered: Vec<Segment> = regions.iter().map(|r| r.segment()).collect();
    let mut call = ctx.call_of(NFS_PROGRAM, NFS_V4, NFSPROC4_COMPOUND, compound_args("rpcrdma", &ops));
    call.writes = offered.iter().map(|s| vec![*s]).collect();
    let want = "the first READ's 5 bytes in the first write chunk and the second READ's 40 bytes in the second (returned with lengths 5 and 40, handles and offsets as offered), neither inline, nothing else written";
    let got = ctx.call(&call.msg());
    if expect::err_chunk(&got, call.xid).is_ok() {
        let why = "ERR_CHUNK: the write list of two chunks refused (RFC 8267 6.4.2 lets an NFSv4 server take only one)";
        return Err(Verdict::unsupported(want, why));
    }
    let (f, _) = expect::reply_to(&got, call.xid).or_fail(want)?;
    match expect::rpc(f).map(|r| &r.kind) {
        Ok(RpcKind::Accepted(AcceptStat::ProgMismatch { .. } | AcceptStat::ProgUnavail)) => {
            return Err(Verdict::unsupported(want, "no NFSv4 (PROG_MISMATCH or PROG_UNAVAIL)"));
        }
        Ok(RpcKind::Accepted(AcceptStat::GarbageArgs)) => {
            let why = "GARBAGE_ARGS: the write list of two chunks refused (RFC 8267 6.4.2)";
            return Err(Verdict::unsupported(want, why));
        }
        _ => {}
    }
    let (f, h) = expect::rpc_accepted(&got, call.xid, AcceptStat::Success).or_fail(want)?;
    let returned = h.body.chunks().map(|c| c.writes.clone()).unwrap_or_default();
    let results = expect::results(f).or_fail(want)?;
    // A requester takes an item from its write chunk when the chunk comes back with data.
    let written = |k: usize| returned.get(k).is_some_and(|c| c.iter().any(|s| s.length > 0));
    let res = nfs4::compound_res(results, written)
        .ok_or("COMPOUND4res does not decode with the items the returned write list holds")
        .or_fail(want)?;
    let reads: Vec<_> = res.results.iter().filter(|r| r.op == OP_READ).filter_map(|r| r.read.clone()).collect();
    if res.status != NFS4_OK || reads.len() != READS.len() {
        let got = format!("COMPOUND status {} with {} READ results: no two items to judge", res.status, reads.len());
        return Err(Verdict::unsupported(want, got));
    }
    let shape: Vec<Vec<(u32, u64, u32)>> =
        returned.iter().map(|c| c.iter().map(|s| (s.handle, s.offset, s.length)).collect()).collect();
    let expected: Vec<Vec<(u32, u64, u32)>> =
        offered.iter().zip(READS).map(|(s, (_, n))| vec![(s.handle, s.offset, n)]).collect();
    if shape != expected {
        let lens: Vec<u32> = reads.iter().map(|r| r.data_len).collect();
        let got = format!("the write list returned as {returned:?} for READ data lengths {lens:?}");
        return Err(Verdict::fail(want, got));
    }
    if let Some(k) = reads.iter().position(|r| r.data_at.is_some()) {
        return Err(Verdict::fail(want, format!("READ {} returned its data inline too", k + 1)));
    }
    if res.trailing != 0 {
        return Err(Verdict::fail(want, format!("{} bytes after the COMPOUND4res", res.trailing)));
    }
    for (k, region) in regions.iter().enumerate() {
        let bytes = ctx.conn().read_local(region).expect("own region");
        let data = read_data(k);
        if bytes[..data.len()] != data[..] || bytes[data.len()..].iter().any(|&b| b != CANARY) {
            let got = format!("write chunk {} holds {:02x?}", k + 1, &bytes[..data.len() + 4]);
            return Err(Verdict::fail(want, got));
        }
    }
    Ok(Verdict::pass(want, "each READ's data in its own write chunk, in turn"))
}

pub static CHECKS: [Check; 1] = [Check {
    info: CheckInfo {
        id: "rfc8166/4.3.2.2/subsequent-item-next-chunk",
        judges: &["rfc8166/4.3.2#1"],
        acceptable: "for an NFSv4 COMPOUND of two READs (5 and 40 bytes) with two 64-byte write chunks: the first READ's data in the first chunk, the second's in the second, lengths 5 and 40, neither inline; a responder that refuses two write chunks (ERR_CHUNK or GARBAGE_ARGS, RFC 8267 6.4.2) or serves no NFSv4 is unsupported",
        rationale: "RFC 8267 6.4.1 pairs the k-th write chunk with the k-th READ; a second item left inline, or written into the first READ's chunk, lands where the requester does not look for it.",
        groups: &["chunks", "write-chunks", "nfs4"],
        broken_by: &[("later-items-inline", Outcome::Fail), ("ddp-into-last-write-chunk", Outcome::Fail)],
        precondition: None,
    },
    run: subsequent_item_next_chunk,
}];
