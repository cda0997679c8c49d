//! Read chunks (RFC 8166 3.4.5, 3.5.3, 4.3.1): odd lengths, several segments, position-zero
//! long calls, and the position rules a responder must enforce.

use rpcrdma_codec::check::KeyWord;
use rpcrdma_codec::chunk::ReadSegment;
use rpcrdma_codec::rpc::AcceptStat;

use rpcrdma_peers::proto::nfs3::{self, NFSPROC3_READ, NFSPROC3_WRITE};
use rpcrdma_peers::transport::{Access, Region, RemoteOp};

use super::{lookup, start};
use crate::engine::{expect, Check, CheckInfo, Ctx, Judged, OrFail, Outcome, Received, Verdict};
use crate::frame::v1::Body;

fn read_chunk_odd_length(ctx: &mut Ctx) -> Judged {
    start(ctx)?;
    let fh = lookup(ctx, nfs3::FILE_SCRATCH)?;
    let data = [0x11u8, 0x22, 0x33, 0x44, 0x55];
    let src = ctx.source(&data);
    let mut call = ctx.nfs3(NFSPROC3_WRITE, nfs3::write_args_split(&fh, 0, &data));
    // The data item starts right after the RPC call header and the arguments before it.
    let position = call.end_position();
    call.reads = vec![ReadSegment { position, target: src.segment() }];
    let want = "WRITE3 answered NFS3_OK with count 5, after one RDMA Read of exactly the 5 chunk bytes";
    let got = ctx.call(&call.msg());
    let (f, _) = expect::rpc_accepted(&got, call.xid, AcceptStat::Success).or_fail(want)?;
    match nfs3::write_result(expect::results(f).or_fail(want)?) {
        Some((0, 5)) => {}
        other => return Err(Verdict::fail(want, format!("WRITE3 result {other:?}"))),
    }
    // The region is exactly 5 bytes: on real verbs a read past it fails the connection; the
    // emulated fabric also shows the reads themselves.
    if let Ok(reads) = ctx.conn().accesses(&src) {
        let read_bytes: u32 = reads.iter().filter(|a| a.op == RemoteOp::Read).map(|a| a.length).sum();
        if read_bytes != 5 {
            let got = format!("NFS3_OK count 5, but the peer read {read_bytes} bytes of the chunk");
            return Err(Verdict::fail(want, got));
        }
    }
    read_back(ctx, want, &data)?;
    Ok(Verdict::pass(want, "NFS3_OK count 5; the file reads back as the 5 bytes"))
}

fn position_zero_long_call(ctx: &mut Ctx) -> Judged {
    start(ctx)?;
    let mut call = ctx.null();
    let payload = call.rpc_bytes();
    let src = ctx.source(&payload);
    call.reads = vec![ReadSegment { position: 0, target: src.segment() }];
    let want = "the call pulled from the position-zero read chunk and answered with accept_stat SUCCESS";
    let got = ctx.call(&call.nomsg());
    expect::rpc_accepted(&got, call.xid, AcceptStat::Success).or_fail(want)?;
    match ctx.conn().accesses(&src) {
        Ok(a) => {
            let pulled: u32 = a.iter().map(|a| a.length).sum();
            if pulled as usize != payload.len() {
                let got = format!("answered, but {pulled} of {} bytes were pulled", payload.len());
                return Err(Verdict::fail(want, got));
            }
            Ok(Verdict::pass(want, format!("answered after pulling {pulled} bytes")))
        }
        // Real verbs show no completion at the target of an RDMA Read: the answer to a
        // call that was only in the chunk shows it was pulled.
        Err(_) => Ok(Verdict::pass(want, "answered (the call was only in the chunk)")),
    }
}

fn position_zero_gathered(ctx: &mut Ctx) -> Judged {
    start(ctx)?;
    let mut call = ctx.null();
    let payload = call.rpc_bytes();
    // Three segments of 12, 12 and the rest, from three regions.
    for p in [&payload[..12], &payload[12..24], &payload[24..]] {
        let r = ctx.source(p);
        call.reads.push(ReadSegment { position: 0, target: r.segment() });
    }
    let want = "the call gathered from three position-zero segments in list order and answered";
    let got = ctx.call(&call.nomsg());
    expect::rpc_accepted(&got, call.xid, AcceptStat::Success).or_fail(want)?;
    Ok(Verdict::pass(want, "answered"))
}

/// A WRITE to `scratch` whose data travels in one read chunk made of `parts`; the reply.
fn write_via_read_chunk(ctx: &mut Ctx, parts: &[&[u8]]) -> Result<(u32, Received), Verdict> {
    start(ctx)?;
    let fh = lookup(ctx, nfs3::FILE_SCRATCH)?;
    let data: Vec<u8> = parts.concat();
    let mut call = ctx.nfs3(NFSPROC3_WRITE, nfs3::write_args_split(&fh, 0, &data));
    let position = call.end_position();
    for p in parts {
        let r = ctx.source(p);
        call.reads.push(ReadSegment { position, target: r.segment() });
    }
    Ok((call.xid, ctx.call(&call.msg())))
}

/// Reads `scratch` back inline and compares it with `data`; a failure is judged against `want`.
fn read_back(ctx: &mut Ctx, want: &str, data: &[u8]) -> Result<(), Verdict> {
    let fh = lookup(ctx, nfs3::FILE_SCRATCH).map_err(|v| Verdict::fail(want, v.actual))?;
    let call = ctx.nfs3(NFSPROC3_READ, nfs3::read_args(&fh, 0, data.len() as u32));
    let got = ctx.call(&call.msg());
    let (f, _) = expect::rpc_accepted(&got, call.xid, AcceptStat::Success).or_fail(want)?;
    let results = expect::results(f).or_fail(want)?;
    let rr = nfs3::read_result(results).ok_or("READ3 results do not decode").or_fail(want)?;
    let read =
        results.get(rr.data_at..rr.data_at + rr.data_len as usize).ok_or("READ3 data cut short").or_fail(want)?;
    if read != data {
        return Err(Verdict::fail(want, format!("read back {read:02x?}, wrote {data:02x?}")));
    }
    Ok(())
}

fn multi_segment_read_chunk(ctx: &mut Ctx) -> Judged {
    let want = "WRITE3 NFS3_OK count 10 from a read chunk of two segments (6 + 4 bytes), read back equal";
    let parts: [&[u8]; 2] = [&[1, 2, 3, 4, 5, 6], &[7, 8, 9, 10]];
    let (xid, got) = write_via_read_chunk(ctx, &parts)?;
    let (f, _) = expect::rpc_accepted(&got, xid, AcceptStat::Success).or_fail(want)?;
    match expect::results(f).ok().and_then(nfs3::write_result) {
        Some((0, 10)) => {}
        other => return Err(Verdict::fail(want, format!("WRITE3 result {other:?}"))),
    }
    read_back(ctx, want, &parts.concat())?;
    Ok(Verdict::pass(want, "count 10, contents equal"))
}

fn position_zero_with_data_chunk(ctx: &mut Ctx) -> Judged {
    start(ctx)?;
    let fh = lookup(ctx, nfs3::FILE_SCRATCH)?;
    let data = [0xd0u8, 0xd1, 0xd2, 0xd3, 0xd4, 0xd5, 0xd6];
    let mut call = ctx.nfs3(NFSPROC3_WRITE, nfs3::write_args_split(&fh, 0, &data));
    // The reduced call (RPC header and WRITE arguments up to the data length) in a
    // position-zero chunk; the data in a second read chunk at its position.
    let reduced = call.rpc_bytes();
    let position = reduced.len() as u32;
    let head = ctx.source(&reduced);
    let body = ctx.source(&data);
    call.reads =
        vec![ReadSegment { position: 0, target: head.segment() }, ReadSegment { position, target: body.segment() }];
    let want = "WRITE3 NFS3_OK count 7 from a position-zero chunk plus a data chunk, read back equal";
    let got = ctx.call(&call.nomsg());
    let (f, h) = expect::rpc_accepted(&got, call.xid, AcceptStat::Success).or_fail(want)?;
    let results = match h.body {
        Body::Msg { .. } => expect::results(f).unwrap_or_default(),
        _ => &[],
    };
    match nfs3::write_result(results) {
        Some((0, 7)) => {}
        other => return Err(Verdict::fail(want, format!("WRITE3 result {other:?}"))),
    }
    read_back(ctx, want, &data)?;
    Ok(Verdict::pass(want, "count 7, contents equal"))
}

/// A malformed read list the responder must refuse with ERR_CHUNK.
fn bad_read_list(ctx: &mut Ctx, shift: u32, extra: impl FnOnce(&Region, u32) -> Vec<ReadSegment>) -> Judged {
    let want = "RDMA_ERROR ERR_CHUNK echoing the rdma_xid";
    start(ctx)?;
    // One spare region for the extra segment, registered after connecting.
    let spare = ctx.register(8, Access::READ);
    let fh = lookup(ctx, nfs3::FILE_SCRATCH)?;
    let data = [9u8; 8];
    let src = ctx.source(&data);
    let mut call = ctx.nfs3(NFSPROC3_WRITE, nfs3::write_args_split(&fh, 0, &data));
    let position = call.end_position();
    call.reads.push(ReadSegment { position: position + shift, target: src.segment() });
    call.reads.extend(extra(&spare, position));
    let got = ctx.call(&call.msg());
    expect::err_chunk(&got, call.xid).or_fail(want)?;
    let alive = ctx.liveness();
    Ok(Verdict::pass(want, format!("ERR_CHUNK; connection {}", if alive { "survived" } else { "closed" })))
}

fn position_unaligned(ctx: &mut Ctx) -> Judged {
    bad_read_list(ctx, 2, |_, _| Vec::new())
}

fn position_beyond_payload(ctx: &mut Ctx) -> Judged {
    bad_read_list(ctx, 4096, |_, _| Vec::new())
}

fn read_chunks_overlap(ctx: &mut Ctx) -> Judged {
    // A second chunk 4 bytes into the first one's 8-byte item.
    bad_read_list(ctx, 0, |spare, pos| vec![ReadSegment { position: pos + 4, target: spare.segment() }])
}

fn read_chunk_split(ctx: &mut Ctx) -> Judged {
    // Chunk at P, then one at P + 8, then another segment at P: not adjacent.
    bad_read_list(ctx, 0, |spare, pos| {
        vec![
            ReadSegment { position: pos + 8, target: spare.sub_segment(0, 4) },
            ReadSegment { position: pos, target: spare.sub_segment(4, 4) },
        ]
    })
}

pub static CHECKS: [Check; 9] = [
    Check {
        info: CheckInfo {
            id: "rfc8166/3.4.5.2/read-chunk-odd-length",
            requirement: "When reducing a variable-length argument data item, the Requester SHOULD NOT include the data item's XDR roundup padding in the chunk.",
            key_word: KeyWord::ShouldNot,
            acceptable: "the WRITE succeeds with count 5 after an RDMA Read of exactly the 5 advertised bytes",
            rationale: "A responder that assumes padded chunks reads past the advertised segment.",
            groups: &["chunks", "padding", "read-chunks"],
            broken_by: &[("read-chunk-roundup", Outcome::Fail)],
        },
        run: read_chunk_odd_length,
    },
    Check {
        info: CheckInfo {
            id: "rfc8166/3.5.3/position-zero-long-call",
            requirement: "A Requester may transmit the Payload stream of an RPC Call message using a Position Zero Read chunk ... Though any of these MAY be marked as not present, one MUST be present.",
            key_word: KeyWord::Must,
            acceptable: "the call pulled with RDMA Read and answered",
            rationale: "Long calls (large NFSv4 COMPOUNDs) travel this way.",
            groups: &["chunks", "read-chunks"],
            broken_by: &[("no-position-zero", Outcome::Fail)],
        },
        run: position_zero_long_call,
    },
    Check {
        info: CheckInfo {
            id: "rfc8166/3.4.5/position-zero-gathered",
            requirement: "The Responder reconstructs the transferred chunk data by concatenating the contents of each RDMA segment, in list order ... All RDMA read segments belonging to the same Read chunk have the same value in their Position field. The value in this field MUST be a multiple of four.",
            key_word: KeyWord::Must,
            acceptable: "the call gathered from three segments and answered",
            rationale: "Requesters with fragmented memory send multi-segment chunks.",
            groups: &["chunks", "read-chunks"],
            broken_by: &[("first-segment-only", Outcome::Fail)],
        },
        run: position_zero_gathered,
    },
    Check {
        info: CheckInfo {
            id: "rfc8166/3.4.5/multi-segment-read-chunk",
            requirement: "The Responder reconstructs the transferred chunk data by concatenating the contents of each RDMA segment, in list order, into the received Payload stream at the Position value recorded in that RDMA segment. ... All RDMA read segments belonging to the same Read chunk have the same value in their Position field. The value in this field MUST be a multiple of four.",
            key_word: KeyWord::Must,
            acceptable: "WRITE3 count 10 and the file reads back as the two segments concatenated",
            rationale: "A responder that pulls only the first segment silently truncates data.",
            groups: &["chunks", "read-chunks"],
            broken_by: &[("first-segment-only", Outcome::Fail)],
        },
        run: multi_segment_read_chunk,
    },
    Check {
        info: CheckInfo {
            id: "rfc8166/3.5.3/position-zero-with-data-chunk",
            requirement: "A Requester may transmit the Payload stream of an RPC Call message using a Position Zero Read chunk ... Though any of these MAY be marked as not present, one MUST be present and MUST hold the Payload stream.",
            key_word: KeyWord::Must,
            acceptable: "WRITE3 count 7 and the file reads back as written",
            rationale: "Large NFS WRITEs with long headers use a position-zero chunk and a data chunk together.",
            groups: &["chunks", "read-chunks"],
            broken_by: &[("no-position-zero", Outcome::Fail)],
        },
        run: position_zero_with_data_chunk,
    },
    Check {
        info: CheckInfo {
            id: "rfc8166/3.4.5/position-unaligned",
            requirement: "The Position field in a read segment indicates where the containing Read chunk starts in the Payload stream. The value in this field MUST be a multiple of four.",
            key_word: KeyWord::Must,
            acceptable: "ERR_CHUNK echoing the rdma_xid",
            rationale: "An unaligned position cannot be an XDR item boundary; inserting there corrupts the call.",
            groups: &["chunks", "read-chunks", "errors"],
            broken_by: &[("lenient-read-list", Outcome::Fail)],
        },
        run: position_unaligned,
    },
    Check {
        info: CheckInfo {
            id: "rfc8166/3.4.5/position-beyond-payload",
            requirement: "The Position value MUST be computed from the beginning of the unreduced Payload stream, which begins at Position zero.",
            key_word: KeyWord::Must,
            acceptable: "ERR_CHUNK echoing the rdma_xid",
            rationale: "A position past the end of the payload cannot be reinserted.",
            groups: &["chunks", "read-chunks", "errors"],
            broken_by: &[("lenient-read-list", Outcome::Fail)],
        },
        run: position_beyond_payload,
    },
    Check {
        info: CheckInfo {
            id: "rfc8166/3.4.5/read-chunks-overlap",
            requirement: "The Responder reconstructs the transferred chunk data by concatenating the contents of each RDMA segment, in list order, into the received Payload stream at the Position value recorded in that RDMA segment. The value in this field MUST be a multiple of four.",
            key_word: KeyWord::Must,
            acceptable: "ERR_CHUNK echoing the rdma_xid",
            rationale: "Overlapping chunks have no consistent reassembly.",
            groups: &["chunks", "read-chunks", "errors"],
            broken_by: &[("lenient-read-list", Outcome::Fail)],
        },
        run: read_chunks_overlap,
    },
    Check {
        info: CheckInfo {
            id: "rfc8166/3.4.5/read-chunk-split",
            requirement: "The Responder inserts the first RDMA segment in a Read chunk into the Payload stream at the byte offset indicated by its Position field. RDMA segments whose Position field value match this offset are concatenated afterwards, until there are no more RDMA segments at that Position value. The value in this field MUST be a multiple of four.",
            key_word: KeyWord::Must,
            acceptable: "ERR_CHUNK echoing the rdma_xid",
            rationale: "Segments of one chunk interleaved with another chunk have no defined reassembly.",
            groups: &["chunks", "read-chunks", "errors"],
            broken_by: &[("lenient-read-list", Outcome::Fail)],
        },
        run: read_chunk_split,
    },
];
