//! Read chunks (RFC 8166 3.4.5, 3.5.3, 4.3.1): odd lengths, several segments, position-zero
//! long calls, and the position rules a responder must enforce.

use rpcrdma_codec::check::KeyWord;
use rpcrdma_codec::chunk::ReadSegment;
use rpcrdma_codec::rpc::AcceptStat;
use rpcrdma_codec::v1::Body;

use super::nfs;
use super::{lookup, start, CallMsg};
use crate::engine::{expect, Check, Ctx, Verdict};
use crate::transport::{Access, RemoteOp};

fn read_chunk_odd_length(ctx: &mut Ctx) -> Verdict {
    if let Err(v) = start(ctx) {
        return v;
    }
    let fh = match lookup(ctx, nfs::FILE_SCRATCH) {
        Ok(fh) => fh,
        Err(v) => return v,
    };
    let data = [0x11u8, 0x22, 0x33, 0x44, 0x55];
    let src = ctx.register(data.len() as u32, Access::READ);
    ctx.conn().write_local(&src, 0, &data).expect("own region");
    let mut call = CallMsg::nfs3(ctx, nfs::PROC_WRITE, nfs::write_args_split(&fh, 0, &data));
    // The data item starts right after the RPC call header and the arguments before it.
    let position = call.end_position();
    call.reads = vec![ReadSegment { position, target: src.segment() }];
    let want = "WRITE3 answered NFS3_OK with count 5, after one RDMA Read of exactly the 5 chunk bytes";
    let ex = ctx.call(call.xid, &call.msg());
    let r = match expect::rpc_accepted(&ex.received, call.xid, AcceptStat::Success) {
        Ok(r) => r,
        Err(got) => return Verdict::fail(want, got),
    };
    let rpc = match r.rpc() {
        Ok(x) => x,
        Err(got) => return Verdict::fail(want, got),
    };
    match nfs::write_result(rpc.body) {
        Some((0, 5)) => {}
        other => return Verdict::fail(want, format!("WRITE3 result {other:?}")),
    }
    // The region is exactly 5 bytes: on real verbs a read past it fails the connection; the
    // emulated fabric also shows the reads themselves.
    if let Ok(reads) = ctx.conn().accesses(&src) {
        let read_bytes: u32 = reads.iter().filter(|a| a.op == RemoteOp::Read).map(|a| a.length).sum();
        if read_bytes != 5 {
            return Verdict::fail(want, format!("NFS3_OK count 5, but the peer read {read_bytes} bytes of the chunk"));
        }
    }
    match read_back(ctx, &data) {
        Ok(()) => Verdict::pass(want, "NFS3_OK count 5; the file reads back as the 5 bytes"),
        Err(got) => Verdict::fail(want, got),
    }
}

fn position_zero_long_call(ctx: &mut Ctx) -> Verdict {
    if let Err(v) = start(ctx) {
        return v;
    }
    let mut call = CallMsg::nfs3(ctx, nfs::PROC_NULL, Vec::new());
    let payload = call.rpc_bytes();
    let src = ctx.register(payload.len() as u32, Access::READ);
    ctx.conn().write_local(&src, 0, &payload).expect("own region");
    call.reads = vec![ReadSegment { position: 0, target: src.segment() }];
    let want = "the call pulled from the position-zero read chunk and answered with accept_stat SUCCESS";
    let ex = ctx.call(call.xid, &call.nomsg());
    match expect::rpc_accepted(&ex.received, call.xid, AcceptStat::Success) {
        Ok(_) => match ctx.conn().accesses(&src) {
            Ok(a) => {
                let pulled: u32 = a.iter().map(|a| a.length).sum();
                if pulled as usize == payload.len() {
                    Verdict::pass(want, format!("answered after pulling {pulled} bytes"))
                } else {
                    Verdict::fail(want, format!("answered, but {pulled} of {} bytes were pulled", payload.len()))
                }
            }
            // Real verbs show no completion at the target of an RDMA Read: the answer to a
            // call that was only in the chunk shows it was pulled.
            Err(_) => Verdict::pass(want, "answered (the call was only in the chunk)"),
        },
        Err(got) => Verdict::fail(want, got),
    }
}

fn position_zero_gathered(ctx: &mut Ctx) -> Verdict {
    if let Err(v) = start(ctx) {
        return v;
    }
    let mut call = CallMsg::nfs3(ctx, nfs::PROC_NULL, Vec::new());
    let payload = call.rpc_bytes();
    // Three segments of 12, 12 and the rest, from three regions.
    let parts = [&payload[..12], &payload[12..24], &payload[24..]];
    let mut segs = Vec::new();
    for p in parts {
        let r = ctx.register(p.len() as u32, Access::READ);
        ctx.conn().write_local(&r, 0, p).expect("own region");
        segs.push(ReadSegment { position: 0, target: r.segment() });
    }
    call.reads = segs;
    let want = "the call gathered from three position-zero segments in list order and answered";
    let ex = ctx.call(call.xid, &call.nomsg());
    match expect::rpc_accepted(&ex.received, call.xid, AcceptStat::Success) {
        Ok(_) => Verdict::pass(want, "answered"),
        Err(got) => Verdict::fail(want, got),
    }
}

/// A WRITE to `scratch` whose data travels in one read chunk made of `parts`; the reply.
fn write_via_read_chunk(ctx: &mut Ctx, parts: &[&[u8]]) -> Result<(u32, crate::engine::Received), Verdict> {
    start(ctx)?;
    let fh = lookup(ctx, nfs::FILE_SCRATCH)?;
    let data: Vec<u8> = parts.concat();
    let mut call = CallMsg::nfs3(ctx, nfs::PROC_WRITE, nfs::write_args_split(&fh, 0, &data));
    let position = call.end_position();
    for p in parts {
        let r = ctx.register(p.len() as u32, Access::READ);
        ctx.conn().write_local(&r, 0, p).expect("own region");
        call.reads.push(ReadSegment { position, target: r.segment() });
    }
    let ex = ctx.call(call.xid, &call.msg());
    Ok((call.xid, ex.received))
}

/// Reads `scratch` back inline and compares it with `want`.
fn read_back(ctx: &mut Ctx, want: &[u8]) -> Result<(), String> {
    let fh = lookup(ctx, nfs::FILE_SCRATCH).map_err(|v| v.actual)?;
    let call = CallMsg::nfs3(ctx, nfs::PROC_READ, nfs::read_args(&fh, 0, want.len() as u32));
    let ex = ctx.call(call.xid, &call.msg());
    let r = expect::rpc_accepted(&ex.received, call.xid, AcceptStat::Success)?;
    let rpc = r.rpc()?;
    let rr = nfs::read_result(rpc.body).ok_or("READ3 results do not decode")?;
    let got = rpc.body.get(rr.data_at..rr.data_at + rr.data_len as usize).ok_or("READ3 data cut short")?;
    if got == want {
        Ok(())
    } else {
        Err(format!("read back {got:02x?}, wrote {want:02x?}"))
    }
}

fn multi_segment_read_chunk(ctx: &mut Ctx) -> Verdict {
    let want = "WRITE3 NFS3_OK count 10 from a read chunk of two segments (6 + 4 bytes), read back equal";
    let parts: [&[u8]; 2] = [&[1, 2, 3, 4, 5, 6], &[7, 8, 9, 10]];
    let (xid, received) = match write_via_read_chunk(ctx, &parts) {
        Ok(x) => x,
        Err(v) => return v,
    };
    let r = match expect::rpc_accepted(&received, xid, AcceptStat::Success) {
        Ok(r) => r,
        Err(got) => return Verdict::fail(want, got),
    };
    match r.rpc().ok().and_then(|rpc| nfs::write_result(rpc.body)) {
        Some((0, 10)) => match read_back(ctx, &parts.concat()) {
            Ok(()) => Verdict::pass(want, "count 10, contents equal"),
            Err(got) => Verdict::fail(want, got),
        },
        other => Verdict::fail(want, format!("WRITE3 result {other:?}")),
    }
}

fn position_zero_with_data_chunk(ctx: &mut Ctx) -> Verdict {
    if let Err(v) = start(ctx) {
        return v;
    }
    let fh = match lookup(ctx, nfs::FILE_SCRATCH) {
        Ok(fh) => fh,
        Err(v) => return v,
    };
    let data = [0xd0u8, 0xd1, 0xd2, 0xd3, 0xd4, 0xd5, 0xd6];
    let mut call = CallMsg::nfs3(ctx, nfs::PROC_WRITE, nfs::write_args_split(&fh, 0, &data));
    // The reduced call (RPC header and WRITE arguments up to the data length) in a
    // position-zero chunk; the data in a second read chunk at its position.
    let reduced = call.rpc_bytes();
    let position = reduced.len() as u32;
    let head = ctx.register(reduced.len() as u32, Access::READ);
    ctx.conn().write_local(&head, 0, &reduced).expect("own region");
    let body = ctx.register(data.len() as u32, Access::READ);
    ctx.conn().write_local(&body, 0, &data).expect("own region");
    call.reads =
        vec![ReadSegment { position: 0, target: head.segment() }, ReadSegment { position, target: body.segment() }];
    let want = "WRITE3 NFS3_OK count 7 from a position-zero chunk plus a data chunk, read back equal";
    let ex = ctx.call(call.xid, &call.nomsg());
    let r = match expect::rpc_accepted(&ex.received, call.xid, AcceptStat::Success) {
        Ok(r) => r,
        Err(got) => return Verdict::fail(want, got),
    };
    let results = match r.message().header.body {
        Body::Msg(_) => r.rpc().map(|m| m.body.to_vec()).unwrap_or_default(),
        _ => Vec::new(),
    };
    match nfs::write_result(&results) {
        Some((0, 7)) => match read_back(ctx, &data) {
            Ok(()) => Verdict::pass(want, "count 7, contents equal"),
            Err(got) => Verdict::fail(want, got),
        },
        other => Verdict::fail(want, format!("WRITE3 result {other:?}")),
    }
}

/// A malformed read list the responder must refuse with ERR_CHUNK.
fn bad_read_list(
    ctx: &mut Ctx,
    shift: u32,
    extra: impl FnOnce(&crate::transport::Region, u32) -> Vec<ReadSegment>,
) -> Verdict {
    let want = "RDMA_ERROR ERR_CHUNK echoing the rdma_xid";
    // Register one spare region for the extra segment after connecting.
    if let Err(v) = start(ctx) {
        return v;
    }
    let spare = ctx.register(8, Access::READ);
    let fh = match lookup(ctx, nfs::FILE_SCRATCH) {
        Ok(fh) => fh,
        Err(v) => return v,
    };
    let data = [9u8; 8];
    let src = ctx.register(8, Access::READ);
    ctx.conn().write_local(&src, 0, &data).expect("own region");
    let mut call = CallMsg::nfs3(ctx, nfs::PROC_WRITE, nfs::write_args_split(&fh, 0, &data));
    let position = call.end_position();
    call.reads.push(ReadSegment { position: position + shift, target: src.segment() });
    call.reads.extend(extra(&spare, position));
    let ex = ctx.call(call.xid, &call.msg());
    match expect::err_chunk(&ex.received, call.xid) {
        Ok(_) => {
            let alive = ctx.liveness();
            Verdict::pass(want, format!("ERR_CHUNK; connection {}", if alive { "survived" } else { "closed" }))
        }
        Err(got) => Verdict::fail(want, got),
    }
}

fn position_unaligned(ctx: &mut Ctx) -> Verdict {
    bad_read_list(ctx, 2, |_, _| Vec::new())
}

fn position_beyond_payload(ctx: &mut Ctx) -> Verdict {
    bad_read_list(ctx, 4096, |_, _| Vec::new())
}

fn read_chunks_overlap(ctx: &mut Ctx) -> Verdict {
    // A second chunk 4 bytes into the first one's 8-byte item.
    bad_read_list(ctx, 0, |spare, pos| vec![ReadSegment { position: pos + 4, target: spare.segment() }])
}

fn read_chunk_split(ctx: &mut Ctx) -> Verdict {
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
        id: "rfc8166/3.4.5.2/read-chunk-odd-length",
        requirement: "When reducing a variable-length argument data item, the Requester SHOULD NOT include the data item's XDR roundup padding in the chunk.",
        key_word: KeyWord::ShouldNot,
        acceptable: "the WRITE succeeds with count 5 after an RDMA Read of exactly the 5 advertised bytes",
        rationale: "A responder that assumes padded chunks reads past the advertised segment.",
        groups: &["chunks", "padding", "read-chunks"],
        run: read_chunk_odd_length,
    },
    Check {
        id: "rfc8166/3.5.3/position-zero-long-call",
        requirement: "A Requester may transmit the Payload stream of an RPC Call message using a Position Zero Read chunk ... Though any of these MAY be marked as not present, one MUST be present.",
        key_word: KeyWord::Must,
        acceptable: "the call pulled with RDMA Read and answered",
        rationale: "Long calls (large NFSv4 COMPOUNDs) travel this way.",
        groups: &["chunks", "read-chunks"],
        run: position_zero_long_call,
    },
    Check {
        id: "rfc8166/3.4.5/position-zero-gathered",
        requirement: "The Responder reconstructs the transferred chunk data by concatenating the contents of each RDMA segment, in list order ... All RDMA read segments belonging to the same Read chunk have the same value in their Position field. The value in this field MUST be a multiple of four.",
        key_word: KeyWord::Must,
        acceptable: "the call gathered from three segments and answered",
        rationale: "Requesters with fragmented memory send multi-segment chunks.",
        groups: &["chunks", "read-chunks"],
        run: position_zero_gathered,
    },
    Check {
        id: "rfc8166/3.4.5/multi-segment-read-chunk",
        requirement: "The Responder reconstructs the transferred chunk data by concatenating the contents of each RDMA segment, in list order, into the received Payload stream at the Position value recorded in that RDMA segment. ... All RDMA read segments belonging to the same Read chunk have the same value in their Position field. The value in this field MUST be a multiple of four.",
        key_word: KeyWord::Must,
        acceptable: "WRITE3 count 10 and the file reads back as the two segments concatenated",
        rationale: "A responder that pulls only the first segment silently truncates data.",
        groups: &["chunks", "read-chunks"],
        run: multi_segment_read_chunk,
    },
    Check {
        id: "rfc8166/3.5.3/position-zero-with-data-chunk",
        requirement: "A Requester may transmit the Payload stream of an RPC Call message using a Position Zero Read chunk ... Though any of these MAY be marked as not present, one MUST be present and MUST hold the Payload stream.",
        key_word: KeyWord::Must,
        acceptable: "WRITE3 count 7 and the file reads back as written",
        rationale: "Large NFS WRITEs with long headers use a position-zero chunk and a data chunk together.",
        groups: &["chunks", "read-chunks"],
        run: position_zero_with_data_chunk,
    },
    Check {
        id: "rfc8166/3.4.5/position-unaligned",
        requirement: "The Position field in a read segment indicates where the containing Read chunk starts in the Payload stream. The value in this field MUST be a multiple of four.",
        key_word: KeyWord::Must,
        acceptable: "ERR_CHUNK echoing the rdma_xid",
        rationale: "An unaligned position cannot be an XDR item boundary; inserting there corrupts the call.",
        groups: &["chunks", "read-chunks", "errors"],
        run: position_unaligned,
    },
    Check {
        id: "rfc8166/3.4.5/position-beyond-payload",
        requirement: "The Position value MUST be computed from the beginning of the unreduced Payload stream, which begins at Position zero.",
        key_word: KeyWord::Must,
        acceptable: "ERR_CHUNK echoing the rdma_xid",
        rationale: "A position past the end of the payload cannot be reinserted.",
        groups: &["chunks", "read-chunks", "errors"],
        run: position_beyond_payload,
    },
    Check {
        id: "rfc8166/3.4.5/read-chunks-overlap",
        requirement: "The Responder reconstructs the transferred chunk data by concatenating the contents of each RDMA segment, in list order, into the received Payload stream at the Position value recorded in that RDMA segment. The value in this field MUST be a multiple of four.",
        key_word: KeyWord::Must,
        acceptable: "ERR_CHUNK echoing the rdma_xid",
        rationale: "Overlapping chunks have no consistent reassembly.",
        groups: &["chunks", "read-chunks", "errors"],
        run: read_chunks_overlap,
    },
    Check {
        id: "rfc8166/3.4.5/read-chunk-split",
        requirement: "The Responder inserts the first RDMA segment in a Read chunk into the Payload stream at the byte offset indicated by its Position field. RDMA segments whose Position field value match this offset are concatenated afterwards, until there are no more RDMA segments at that Position value. The value in this field MUST be a multiple of four.",
        key_word: KeyWord::Must,
        acceptable: "ERR_CHUNK echoing the rdma_xid",
        rationale: "Segments of one chunk interleaved with another chunk have no defined reassembly.",
        groups: &["chunks", "read-chunks", "errors"],
        run: read_chunk_split,
    },
];
