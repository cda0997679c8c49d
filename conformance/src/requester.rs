//! The reference requester: a conformant RPC-over-RDMA client workload (RFC 8166, RFC 8797)
//! that exercises every chunk type against a responder. It stands in for a real client when
//! the client catalogue is tested, and with [`RequesterFaults`] it misbehaves on purpose so
//! tests can prove each client check notices.

use std::time::Instant;

use rpcrdma_codec::chunk::ReadSegment;
use rpcrdma_codec::v1::{FixedFields, HeaderBuilder};

use crate::catalogue::nfs;
use crate::catalogue::CallMsg;
use crate::engine::{expect, Ctx, Received};
use crate::transport::Access;

/// Deliberate misbehaviours of the reference requester; all off by default.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RequesterFaults {
    /// Advertise private data with version 2.
    pub bad_private_data: bool,
    /// Send an RDMA_DONE (RFC 8166 4.6.2: MUST NOT).
    pub send_rdma_done: bool,
    /// A NULL call whose RPC xid differs from rdma_xid.
    pub xid_mismatch: bool,
    /// WRITE data in a read chunk at a position 2 bytes past the item.
    pub unaligned_position: bool,
    /// Keep one call more outstanding than the grant.
    pub exceed_grant: bool,
    /// Add a 4-byte segment for the XDR pad to write chunks (as Linux clients before 4.9).
    pub write_chunk_pad_segment: bool,
    /// READDIR with a large count and no reply chunk.
    pub no_reply_chunk: bool,
    /// An RDMA_NOMSG call with no position-zero read chunk (only a reply chunk).
    pub nomsg_without_payload: bool,
    /// A WRITE larger than the responder's receive size sent inline.
    pub oversized_inline: bool,
}

impl RequesterFaults {
    pub const NAMES: &'static [&'static str] = &[
        "bad-private-data",
        "send-rdma-done",
        "xid-mismatch",
        "unaligned-position",
        "exceed-grant",
        "write-chunk-pad-segment",
        "no-reply-chunk",
        "nomsg-without-payload",
        "oversized-inline",
    ];

    /// A value with exactly the named switch on.
    pub fn only(name: &str) -> RequesterFaults {
        let mut f = RequesterFaults::default();
        let s = match name {
            "bad-private-data" => &mut f.bad_private_data,
            "send-rdma-done" => &mut f.send_rdma_done,
            "xid-mismatch" => &mut f.xid_mismatch,
            "unaligned-position" => &mut f.unaligned_position,
            "exceed-grant" => &mut f.exceed_grant,
            "write-chunk-pad-segment" => &mut f.write_chunk_pad_segment,
            "no-reply-chunk" => &mut f.no_reply_chunk,
            "nomsg-without-payload" => &mut f.nomsg_without_payload,
            "oversized-inline" => &mut f.oversized_inline,
            other => panic!("unknown requester fault {other}"),
        };
        *s = true;
        f
    }
}

fn step(ctx: &mut Ctx, what: &str, msg: &[u8], xid: u32) -> Result<Received, String> {
    let ex = ctx.call(xid, msg);
    match &ex.received {
        Received::Message { .. } => Ok(ex.received),
        other => Err(format!("{what}: {}", other.describe())),
    }
}

/// Runs the workload on one connection: NULL, LOOKUP, READ through a write chunk, WRITE
/// through a read chunk, READDIR through a reply chunk, a position-zero long call, and a
/// full credit window. Errors say which step the responder did not answer.
pub fn workload(ctx: &mut Ctx, faults: &RequesterFaults) -> Result<(), String> {
    let mut pd = ctx.default_private_data();
    if faults.bad_private_data {
        pd[4] = 2;
    }
    ctx.connect_with(&pd)?;

    // NULL, and learn the grant.
    let xid = ctx.xid();
    let null = ctx.null_call(xid);
    let r = step(ctx, "NULL", &null, xid)?;
    let grant = match &r {
        Received::Message { bytes, .. } => FixedFields::decode(bytes).map_err(|e| e.to_string())?.credit,
        _ => 1,
    };

    // READ of `five` through a write chunk sized to the count.
    let fh = crate::catalogue::lookup(ctx, nfs::FILE_FIVE).map_err(|v| v.actual)?;
    let data = ctx.register(5, Access::WRITE);
    let mut call = CallMsg::nfs3(ctx, nfs::PROC_READ, nfs::read_args(&fh, 0, 5));
    let mut chunk = vec![data.segment()];
    if faults.write_chunk_pad_segment {
        let pad = ctx.register(4, Access::WRITE);
        chunk.push(pad.segment());
    }
    call.writes = vec![chunk];
    step(ctx, "READ", &call.msg(), call.xid)?;

    // WRITE to `scratch` with its data in a read chunk.
    let fh = crate::catalogue::lookup(ctx, nfs::FILE_SCRATCH).map_err(|v| v.actual)?;
    let bytes = [1u8, 2, 3, 4, 5, 6, 7];
    let src = ctx.register(bytes.len() as u32, Access::READ);
    ctx.conn().write_local(&src, 0, &bytes).map_err(|e| e.to_string())?;
    let mut call = CallMsg::nfs3(ctx, nfs::PROC_WRITE, nfs::write_args_split(&fh, 0, &bytes));
    let position = call.end_position() + if faults.unaligned_position { 2 } else { 0 };
    call.reads = vec![ReadSegment { position, target: src.segment() }];
    let _ = step(ctx, "WRITE", &call.msg(), call.xid);
    ctx.ensure_connected()?;

    // READDIR of `dir` with room for a long reply.
    let dir = crate::catalogue::lookup(ctx, nfs::DIR_MANY).map_err(|v| v.actual)?;
    let mut call = CallMsg::nfs3(ctx, nfs::PROC_READDIR, nfs::readdir_args(&dir, 0, [0; 8], 8192));
    if !faults.no_reply_chunk {
        let rc = ctx.register(16384, Access::WRITE);
        call.reply = Some(vec![rc.segment()]);
    }
    let _ = step(ctx, "READDIR", &call.msg(), call.xid);
    ctx.ensure_connected()?;

    // A long call: the whole call in a position-zero read chunk.
    let mut call = CallMsg::nfs3(ctx, nfs::PROC_NULL, Vec::new());
    if faults.nomsg_without_payload {
        let rc = ctx.register(1024, Access::WRITE);
        call.reply = Some(vec![rc.segment()]);
    } else {
        let payload = call.rpc_bytes();
        let src = ctx.register(payload.len() as u32, Access::READ);
        ctx.conn().write_local(&src, 0, &payload).map_err(|e| e.to_string())?;
        call.reads = vec![ReadSegment { position: 0, target: src.segment() }];
    }
    let _ = step(ctx, "long NULL", &call.nomsg(), call.xid);
    ctx.ensure_connected()?;

    // The credit window: as many NULLs outstanding as granted (one more under the fault).
    let window = if faults.exceed_grant { grant + 1 } else { grant.min(ctx.options.credits_requested) };
    let xids: Vec<u32> = (0..window).map(|_| ctx.xid()).collect();
    for &x in &xids {
        let m = ctx.null_call(x);
        ctx.send(&m).map_err(|e| e.to_string())?;
    }
    let deadline = Instant::now() + ctx.options.timeout;
    for _ in &xids {
        if !matches!(ctx.recv_until(deadline), Received::Message { .. }) {
            break;
        }
    }
    ctx.ensure_connected()?;

    if faults.oversized_inline {
        let fh = crate::catalogue::lookup(ctx, nfs::FILE_SCRATCH).map_err(|v| v.actual)?;
        let big = vec![0x5au8; 5000];
        let mut call = CallMsg::nfs3(ctx, nfs::PROC_WRITE, nfs::write_args_split(&fh, 0, &big));
        call.args.extend_from_slice(&big);
        let _ = ctx.call(call.xid, &call.msg());
        ctx.ensure_connected()?;
    }
    if faults.xid_mismatch {
        let xid = ctx.xid();
        let mut m = ctx.null_call(xid);
        m[28..32].copy_from_slice(&xid.wrapping_add(7).to_be_bytes());
        let _ = ctx.call(xid, &m);
        ctx.ensure_connected()?;
    }
    if faults.send_rdma_done {
        let mut b = [0u8; 28];
        HeaderBuilder::done(ctx.xid(), 1).encode(&mut b).expect("16");
        let _ = ctx.send(&b);
        let _ = ctx.expect_silence();
    }
    // End with a NULL so every earlier reply has been seen.
    let xid = ctx.xid();
    let null = ctx.null_call(xid);
    let ex = ctx.call(xid, &null);
    expect::reply_to(&ex.received, xid).map(|_| ())
}
