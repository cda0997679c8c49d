//! Read chunks (RFC 8166 3.4.5, 3.5.3, 4.3.1): odd lengths, several segments, position-zero
//! long calls, and the position rules a responder must enforce.

use rpcrdma_codec::chunk::ReadSegment;
use rpcrdma_codec::rpc::AcceptStat;

use rpcrdma_peers::proto::nfs3::{self, NFSPROC3_LOOKUP, NFSPROC3_READ, NFSPROC3_WRITE};
use rpcrdma_peers::transport::{Access, Region, RemoteOp};

use super::steps::{lookup, start};
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

fn ddp_ineligible_argument(ctx: &mut Ctx) -> Judged {
    start(ctx)?;
    // LOOKUP of "five" in the root with the name's bytes reduced into a read chunk: a file
    // name is not DDP-eligible (RFC 8267 4: only WRITE data and the SYMLINK pathname are).
    let name = nfs3::FILE_FIVE.as_bytes();
    let full = nfs3::lookup_args(ctx.root_fh(), nfs3::FILE_FIVE);
    assert_eq!(name.len() % 4, 0, "a name without XDR pad");
    let mut call = ctx.nfs3(NFSPROC3_LOOKUP, full[..full.len() - name.len()].to_vec());
    let src = ctx.source(name);
    call.reads = vec![ReadSegment { position: call.end_position(), target: src.segment() }];
    let want = "the call not processed: RDMA_ERROR ERR_CHUNK or accept_stat GARBAGE_ARGS (RFC 8166 4.5.2)";
    let got = ctx.call(&call.msg());
    if expect::err_chunk(&got, call.xid).is_ok() {
        return Ok(Verdict::pass(want, "ERR_CHUNK"));
    }
    match expect::rpc_accepted(&got, call.xid, AcceptStat::GarbageArgs) {
        Ok(_) => Ok(Verdict::pass(want, "GARBAGE_ARGS")),
        Err(m) => Err(Verdict::fail(want, format!("{m}: the call with a reduced file name was processed or lost"))),
    }
}

fn read_chunk_length_mismatch(ctx: &mut Ctx) -> Judged {
    start(ctx)?;
    let fh = lookup(ctx, nfs3::FILE_SCRATCH)?;
    // WRITE arguments that encode a 16-byte data item, with a read chunk of only 5 bytes:
    // the reassembled arguments end 8 bytes into the item.
    let data = [0x5au8; 5];
    let mut call = ctx.nfs3(NFSPROC3_WRITE, nfs3::write_args_split(&fh, 0, &[0x5a; 16]));
    let src = ctx.source(&data);
    call.reads = vec![ReadSegment { position: call.end_position(), target: src.segment() }];
    let want = "an RDMA_MSG reply with accept_stat GARBAGE_ARGS (SHOULD; ERR_CHUNK is pass-lax)";
    let got = ctx.call(&call.msg());
    if expect::rpc_accepted(&got, call.xid, AcceptStat::GarbageArgs)
        .is_ok_and(|(_, h)| matches!(h.body, Body::Msg { .. }))
    {
        return Ok(Verdict::pass(want, "GARBAGE_ARGS"));
    }
    if expect::err_chunk(&got, call.xid).is_ok() {
        return Ok(Verdict::lax(want, "ERR_CHUNK: a transport error for arguments the upper layer cannot parse"));
    }
    Err(Verdict::fail(want, got.describe()))
}

fn reply_read_list_empty(ctx: &mut Ctx) -> Judged {
    let want = "the reply to a WRITE whose data came in a read chunk has an empty read list";
    let (xid, got) = write_via_read_chunk(ctx, &[&[0x31, 0x32, 0x33, 0x34, 0x35, 0x36, 0x37, 0x38]])?;
    let (_, h) = expect::rpc_accepted(&got, xid, AcceptStat::Success).or_fail(want)?;
    match h.body.chunks() {
        Some(c) if c.reads.is_empty() => Ok(Verdict::pass(want, "empty read list")),
        Some(c) => Err(Verdict::fail(want, format!("a read list of {} segments in the reply", c.reads.len()))),
        None => Err(Verdict::fail(want, h.body.describe())),
    }
}

fn read_chunk_with_roundup(ctx: &mut Ctx) -> Judged {
    let want = "WRITE3 count 5 for each of two WRITEs whose 5-byte data chunk includes the 3-byte XDR pad (in the final segment, then as a segment of its own), the file reading back as the 5 bytes";
    let data = [0x61u8, 0x62, 0x63, 0x64, 0x65];
    // The pad in the final segment: one 8-byte segment, then a 5-byte segment and a 3-byte one.
    let padded = [&data[..], &[0, 0, 0]].concat();
    for parts in [vec![&padded[..]], vec![&data[..], &[0u8, 0, 0][..]]] {
        let (xid, got) = write_via_read_chunk_encoded(ctx, &parts, data.len())?;
        let (f, _) = expect::rpc_accepted(&got, xid, AcceptStat::Success).or_fail(want)?;
        match expect::results(f).ok().and_then(nfs3::write_result) {
            Some((0, 5)) => {}
            other => {
                return Err(Verdict::fail(
                    want,
                    format!(
                        "WRITE3 result {other:?} for chunk segments {:?}",
                        parts.iter().map(|p| p.len()).collect::<Vec<_>>()
                    ),
                ))
            }
        }
        read_back(ctx, want, &data)?;
    }
    Ok(Verdict::pass(want, "count 5 both ways, the file reads back as the 5 bytes"))
}

/// A WRITE to `scratch` of `encoded` bytes whose data (and whatever else is in `parts`)
/// travels in one read chunk made of `parts`; the reply.
fn write_via_read_chunk_encoded(ctx: &mut Ctx, parts: &[&[u8]], encoded: usize) -> Result<(u32, Received), Verdict> {
    ctx.ensure_connected().or_fail("a connection")?;
    let fh = lookup(ctx, nfs3::FILE_SCRATCH)?;
    let data: Vec<u8> = parts.concat();
    let mut call = ctx.nfs3(NFSPROC3_WRITE, nfs3::write_args_split(&fh, 0, &data[..encoded]));
    let position = call.end_position();
    for p in parts {
        let r = ctx.source(p);
        call.reads.push(ReadSegment { position, target: r.segment() });
    }
    Ok((call.xid, ctx.call(&call.msg())))
}

pub static CHECKS: [Check; 13] = [
    Check {
        info: CheckInfo {
            id: "rfc8166/3.4.5.2/read-chunk-odd-length",
            judges: &["~rfc8166/3.5.2#1"],
            acceptable: "the WRITE succeeds with count 5 after an RDMA Read of exactly the 5 advertised bytes",
            rationale: "A responder that assumes padded chunks reads past the advertised segment.",
            groups: &["chunks", "padding", "read-chunks"],
            broken_by: &[("read-chunk-roundup", Outcome::Fail)],
            precondition: None,
        },
        run: read_chunk_odd_length,
    },
    Check {
        info: CheckInfo {
            id: "rfc8166/3.5.3/position-zero-long-call",
            judges: &["rfc8166/3.5.3#3", "rfc8166/4#2", "rfc8166/6.1#2"],
            acceptable: "the call pulled with RDMA Read and answered",
            rationale: "Long calls (large NFSv4 COMPOUNDs) travel this way.",
            groups: &["chunks", "read-chunks"],
            broken_by: &[("no-position-zero", Outcome::Fail)],
            precondition: None,
        },
        run: position_zero_long_call,
    },
    Check {
        info: CheckInfo {
            id: "rfc8166/3.4.5/position-zero-gathered",
            judges: &["rfc8166/3.4.4#1", "~rfc8166/3.5.3#3"],
            acceptable: "the call gathered from three segments and answered",
            rationale: "Requesters with fragmented memory send multi-segment chunks.",
            groups: &["chunks", "read-chunks"],
            broken_by: &[("first-segment-only", Outcome::Fail)],
            precondition: None,
        },
        run: position_zero_gathered,
    },
    Check {
        info: CheckInfo {
            id: "rfc8166/3.4.5/multi-segment-read-chunk",
            judges: &["rfc8166/3.4.4#1", "~rfc8166/3.5.2#1"],
            acceptable: "WRITE3 count 10 and the file reads back as the two segments concatenated",
            rationale: "A responder that pulls only the first segment silently truncates data.",
            groups: &["chunks", "read-chunks"],
            broken_by: &[("first-segment-only", Outcome::Fail)],
            precondition: None,
        },
        run: multi_segment_read_chunk,
    },
    Check {
        info: CheckInfo {
            id: "rfc8166/3.5.3/position-zero-with-data-chunk",
            judges: &["rfc8166/3.5.3#3"],
            acceptable: "WRITE3 count 7 and the file reads back as written",
            rationale: "Large NFS WRITEs with long headers use a position-zero chunk and a data chunk together.",
            groups: &["chunks", "read-chunks"],
            broken_by: &[("no-position-zero", Outcome::Fail)],
            precondition: None,
        },
        run: position_zero_with_data_chunk,
    },
    Check {
        info: CheckInfo {
            id: "rfc8166/3.4.5/position-unaligned",
            judges: &["rfc8166/4.5#2"],
            acceptable: "ERR_CHUNK echoing the rdma_xid",
            rationale: "An unaligned position cannot be an XDR item boundary; inserting there corrupts the call.",
            groups: &["chunks", "read-chunks", "errors"],
            broken_by: &[("lenient-read-list", Outcome::Fail)],
            precondition: None,
        },
        run: position_unaligned,
    },
    Check {
        info: CheckInfo {
            id: "rfc8166/3.4.5/position-beyond-payload",
            judges: &["rfc8166/4.5#2"],
            acceptable: "ERR_CHUNK echoing the rdma_xid",
            rationale: "A position past the end of the payload cannot be reinserted.",
            groups: &["chunks", "read-chunks", "errors"],
            broken_by: &[("lenient-read-list", Outcome::Fail)],
            precondition: None,
        },
        run: position_beyond_payload,
    },
    Check {
        info: CheckInfo {
            id: "rfc8166/3.4.5/read-chunks-overlap",
            judges: &["rfc8166/4.5#2"],
            acceptable: "ERR_CHUNK echoing the rdma_xid",
            rationale: "Overlapping chunks have no consistent reassembly.",
            groups: &["chunks", "read-chunks", "errors"],
            broken_by: &[("lenient-read-list", Outcome::Fail)],
            precondition: None,
        },
        run: read_chunks_overlap,
    },
    Check {
        info: CheckInfo {
            id: "rfc8166/3.4.5/read-chunk-split",
            judges: &["rfc8166/4.5#2"],
            acceptable: "ERR_CHUNK echoing the rdma_xid",
            rationale: "Segments of one chunk interleaved with another chunk have no defined reassembly.",
            groups: &["chunks", "read-chunks", "errors"],
            broken_by: &[("lenient-read-list", Outcome::Fail)],
            precondition: None,
        },
        run: read_chunk_split,
    },
    Check {
        info: CheckInfo {
            id: "rfc8166/6.1/ddp-ineligible-argument",
            judges: &["rfc8166/6.1#3"],
            acceptable: "ERR_CHUNK or GARBAGE_ARGS for a LOOKUP whose file name travels in a read chunk; a LOOKUP result fails",
            rationale: "A responder that reassembles any chunk anywhere accepts requesters that break the upper-layer binding (RFC 8267), and lets them steer its RDMA Reads into arbitrary arguments.",
            groups: &["chunks", "read-chunks", "errors", "ddp"],
            broken_by: &[("process-ineligible-chunks", Outcome::Fail)],
            precondition: None,
        },
        run: ddp_ineligible_argument,
    },
    Check {
        info: CheckInfo {
            id: "rfc8166/4.5.2/read-chunk-length-mismatch",
            judges: &["rfc8166/4.5.2#2"],
            acceptable: "GARBAGE_ARGS in an RDMA_MSG reply; ERR_CHUNK is pass-lax; processing the WRITE or no answer fails",
            rationale: "A WRITE whose encoded length exceeds its read chunk must not be completed with bytes that were never sent.",
            groups: &["chunks", "read-chunks", "errors"],
            broken_by: &[("drop-garbage-args", Outcome::Fail)],
            precondition: None,
        },
        run: read_chunk_length_mismatch,
    },
    Check {
        info: CheckInfo {
            id: "rfc8166/4.3.1/reply-read-list-empty",
            judges: &["rfc8166/4.3.1#1"],
            acceptable: "an empty read list in the reply to a call that had one",
            rationale: "A requester may take read segments in a reply as a protocol error, or release memory twice.",
            groups: &["chunks", "read-chunks"],
            broken_by: &[("echo-read-list", Outcome::Fail)],
            precondition: None,
        },
        run: reply_read_list_empty,
    },
    Check {
        info: CheckInfo {
            id: "rfc8166/3.4.5.2/read-chunk-with-roundup",
            judges: &["~rfc8166/3.4.5.2#2"],
            acceptable: "both WRITEs succeed with count 5 and the file holds the 5 data bytes, the pad not taken as data",
            rationale: "Requesters may send the pad in the chunk (older Linux clients add a pad segment); a responder must take the item's length from the Payload stream.",
            groups: &["chunks", "padding", "read-chunks"],
            broken_by: &[("reject-read-pad-segment", Outcome::Fail)],
            precondition: None,
        },
        run: read_chunk_with_roundup,
    },
];
