//! The Connection Configuration Protocol (RFC 5666 6): CONF_RDMA answered, or refused with
//! PROG_UNAVAIL (RFC 8166 A.1 deleted CCP as never implemented); and, from a peer that
//! answers it, no RDMA Read of our memory once we said maxrdmaread 0.

use rpcrdma_codec::ccp::{ConfigRdmaReply, ConfigRdmaReq, CONF_RDMA, PROGRAM, VERSION};
use rpcrdma_codec::chunk::ReadSegment;
use rpcrdma_codec::rpc::AcceptStat;
use rpcrdma_codec::xdr::{Encode, Reader};

use rpcrdma_peers::proto::nfs3::{self, NFSPROC3_WRITE};
use rpcrdma_peers::transport::RemoteOp;

use super::steps::{lookup, start};
use crate::engine::{expect, Check, CheckInfo, Ctx, Judged, OrFail, Outcome, Verdict};
use crate::frame::rpc::RpcKind;

fn conf_rdma(ctx: &mut Ctx) -> Judged {
    start(ctx)?;
    let req = ConfigRdmaReq { maxcall_sendsize: 8192, maxreply_sendsize: 8192, maxrdmaread: 4 };
    let call = ctx.call_of(PROGRAM, VERSION, CONF_RDMA, req.encode_to_vec());
    let want = "SUCCESS with a config_rdma_reply, or PROG_UNAVAIL";
    let got = ctx.call(&call.msg());
    let (f, _) = expect::reply_to(&got, call.xid).or_fail(want)?;
    let rpc = expect::rpc(f).or_fail(want)?;
    match rpc.kind {
        RpcKind::Accepted(AcceptStat::ProgUnavail) => {
            Ok(Verdict::pass(want, "PROG_UNAVAIL: the peer does not implement CCP"))
        }
        RpcKind::Accepted(AcceptStat::Success) => {
            let mut rd = Reader::new(f.slice(rpc.body.clone()));
            match ConfigRdmaReply::decode(&mut rd) {
                Ok(c) if rd.is_empty() => {
                    let (call, align, read) = (c.maxcall_sendsize, c.align, c.maxrdmaread);
                    Ok(Verdict::pass(want, format!("maxcall_sendsize {call} align {align} maxrdmaread {read}")))
                }
                Ok(_) => Err(Verdict::fail(want, format!("{} bytes after config_rdma_reply", rd.remaining()))),
                Err(e) => Err(Verdict::fail(want, format!("SUCCESS without a valid config_rdma_reply: {e}"))),
            }
        }
        RpcKind::Call { .. } => Err(Verdict::fail(want, "an RPC call instead of a reply")),
        ref other => Err(Verdict::fail(want, format!("{other:?}"))),
    }
}

/// RFC 5666 6.2 read as the text's "RDMA Read operations by the connected peer" (the
/// sender's IRD, the catalogue's reading: docs/architecture.md): the
/// maxrdmaread we send bounds the RDMA Reads the responder issues against our memory, so
/// after zero a call whose data is in a read chunk cannot be served. Judged by the RDMA
/// Reads the emulated fabric shows, and on any transport by the answer: a WRITE3 that took
/// the data can only have had it by RDMA Read.
fn maxrdmaread_zero(ctx: &mut Ctx) -> Judged {
    start(ctx)?;
    let want = "after our CONF_RDMA with maxrdmaread 0, no RDMA Read of a WRITE's read chunk: any answer but a \
        WRITE3 that took the data";
    let req = ConfigRdmaReq { maxcall_sendsize: 4096, maxreply_sendsize: 4096, maxrdmaread: 0 };
    let call = ctx.call_of(PROGRAM, VERSION, CONF_RDMA, req.encode_to_vec());
    let got = ctx.call(&call.msg());
    if let Err(m) = expect::rpc_accepted(&got, call.xid, AcceptStat::Success) {
        let why = format!("CONF_RDMA not answered SUCCESS ({m}): the peer takes no maxrdmaread from us");
        return Err(Verdict::unsupported(want, why));
    }
    let fh = lookup(ctx, nfs3::FILE_SCRATCH)?;
    // Data this run alone writes, so a file written before cannot pass for it.
    let data: Vec<u8> = [&ctx.xid().to_be_bytes()[..], b"maxrdmaread0"].concat();
    let src = ctx.source(&data);
    let mut write = ctx.nfs3(NFSPROC3_WRITE, nfs3::write_args_split(&fh, 0, &data));
    write.reads = vec![ReadSegment { position: write.end_position(), target: src.segment() }];
    let got = ctx.call(&write.msg());
    // The emulated fabric shows the RDMA Reads; verbs shows the target none.
    if let Ok(accesses) = ctx.conn().accesses(&src) {
        let read: u32 = accesses.iter().filter(|a| a.op == RemoteOp::Read).map(|a| a.length).sum();
        if read > 0 {
            return Err(Verdict::fail(want, format!("the peer RDMA-Read {read} bytes of our read chunk")));
        }
    }
    if let Ok((f, _)) = expect::rpc_accepted(&got, write.xid, AcceptStat::Success) {
        if let Some((nfs3::NFS3_OK, n)) = expect::results(f).ok().and_then(nfs3::write_result) {
            let got = format!("WRITE3 NFS3_OK count {n}: the data came by RDMA Read");
            return Err(Verdict::fail(want, got));
        }
    }
    Ok(Verdict::pass(want, format!("no RDMA Read; answered {}", got.describe())))
}

pub static CHECKS: [Check; 2] = [
    Check {
        info: CheckInfo {
            id: "rfc5666/6.2/conf-rdma",
            judges: &["rfc5666/6#3"],
            acceptable: "SUCCESS with exactly a config_rdma_reply, or PROG_UNAVAIL (RFC 5666 6: use of CCP is OPTIONAL; RFC 8166 A.1 deleted CCP as never implemented)",
            rationale: "A peer that half-implements CCP would misconfigure RFC 5666-era requesters.",
            groups: &["ccp"],
            broken_by: &[("ccp-empty-reply", Outcome::Fail)],
            precondition: None,
        },
        run: conf_rdma,
    },
    Check {
        info: CheckInfo {
            id: "rfc5666/6.2/maxrdmaread-zero",
            judges: &["rfc5666/6.2#5"],
            acceptable: "after CONF_RDMA with maxrdmaread 0 answered SUCCESS, a WRITE whose data is in a read chunk is not served by RDMA Read: ERR_CHUNK (RFC 8166 4.5.3), an RPC or NFS error, or no answer, but no RDMA Read of the chunk and no WRITE3 NFS3_OK; unsupported when CONF_RDMA is not answered SUCCESS",
            rationale: "A requester that says it takes no RDMA Reads (no IRD) would see its connection fail on the first one. RFC 5666 6.2's maxrdmaread read as the sender's IRD (\"the RDMA incoming RDMA Read count\", \"RDMA Read operations by the connected peer\"): the catalogue's one reading (docs/architecture.md, statements read two ways).",
            groups: &["ccp"],
            broken_by: &[("ccp-maxrdmaread-ignored", Outcome::Fail)],
            precondition: None,
        },
        run: maxrdmaread_zero,
    },
];
