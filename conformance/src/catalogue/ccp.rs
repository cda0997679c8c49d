//! The Connection Configuration Protocol (RFC 5666 6): CONF_RDMA answered, or refused with
//! PROG_UNAVAIL (RFC 8166 A.1 deleted CCP as never implemented).

use rpcrdma_codec::ccp::{ConfigRdmaReply, ConfigRdmaReq, CONF_RDMA, PROGRAM, VERSION};
use rpcrdma_codec::check::KeyWord;
use rpcrdma_codec::rpc::AcceptStat;
use rpcrdma_codec::xdr::{Encode, Reader};

use super::start;
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

pub static CHECKS: [Check; 1] = [
    Check {
        info: CheckInfo {
            id: "rfc5666/6.2/conf-rdma",
            requirement: "Version 1 of the Connection Configuration Protocol consists of a single procedure that allows the client to inform the server of its connection requirements and the server to return connection information to the client. ... The server MAY return a maxcall_sendsize value that is smaller or larger than the client's request.",
            key_word: KeyWord::May,
            acceptable: "SUCCESS with exactly a config_rdma_reply, or PROG_UNAVAIL (RFC 5666 6: use of CCP is OPTIONAL; RFC 8166 A.1 deleted CCP as never implemented)",
            rationale: "A peer that half-implements CCP would misconfigure RFC 5666-era requesters.",
            groups: &["ccp"],
            broken_by: &[("ccp-empty-reply", Outcome::Fail)],
        },
        run: conf_rdma,
    },
];
