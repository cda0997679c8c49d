//! The Connection Configuration Protocol (RFC 5666 6): CONF_RDMA answered, or refused with
//! PROG_UNAVAIL (RFC 8166 A.1 deleted CCP as never implemented).

use rpcrdma_codec::ccp::{ConfigRdmaReply, ConfigRdmaReq, CONF_RDMA, PROGRAM, VERSION};
use rpcrdma_codec::check::KeyWord;
use rpcrdma_codec::rpc::{AcceptStat, ReplyBody, RpcHeader};
use rpcrdma_codec::xdr::{Reader, Writer};

use super::{start, CallMsg};
use crate::engine::{expect, Check, Ctx, Verdict};

fn conf_rdma(ctx: &mut Ctx) -> Verdict {
    if let Err(v) = start(ctx) {
        return v;
    }
    let req = ConfigRdmaReq { maxcall_sendsize: 8192, maxreply_sendsize: 8192, maxrdmaread: 4 };
    let mut args = [0u8; 12];
    req.encode(&mut Writer::new(&mut args)).expect("12 bytes");
    let call = CallMsg {
        xid: ctx.xid(),
        credit: ctx.options.credits_requested,
        prog: PROGRAM,
        vers: VERSION,
        proc_: CONF_RDMA,
        args: args.to_vec(),
        ..Default::default()
    };
    let want = "SUCCESS with a config_rdma_reply, or PROG_UNAVAIL";
    let ex = ctx.call(call.xid, &call.msg());
    let r = match expect::reply_to(&ex.received, call.xid) {
        Ok(r) => r,
        Err(got) => return Verdict::fail(want, got),
    };
    let rpc = match r.rpc() {
        Ok(x) => x,
        Err(got) => return Verdict::fail(want, got),
    };
    match rpc.header {
        RpcHeader::Reply(rep) => match rep.body {
            ReplyBody::Accepted { stat: AcceptStat::ProgUnavail, .. } => {
                Verdict::pass(want, "PROG_UNAVAIL: the peer does not implement CCP")
            }
            ReplyBody::Accepted { stat: AcceptStat::Success, .. } => {
                let mut rd = Reader::new(rpc.body);
                match ConfigRdmaReply::decode(&mut rd) {
                    Ok(c) if rd.is_empty() => Verdict::pass(
                        want,
                        format!(
                            "maxcall_sendsize {} align {} maxrdmaread {}",
                            c.maxcall_sendsize, c.align, c.maxrdmaread
                        ),
                    ),
                    Ok(_) => Verdict::fail(want, format!("{} bytes after config_rdma_reply", rd.remaining())),
                    Err(e) => Verdict::fail(want, format!("SUCCESS without a valid config_rdma_reply: {e}")),
                }
            }
            other => Verdict::fail(want, format!("{other:?}")),
        },
        RpcHeader::Call(_) => Verdict::fail(want, "an RPC call instead of a reply"),
    }
}

pub static CHECKS: [Check; 1] = [Check {
    id: "rfc5666/6.2/conf-rdma",
    requirement: "Use of the Connection Configuration Protocol by an upper layer is OPTIONAL. ... Version 1 of the Connection Configuration Protocol consists of a single procedure that allows the client to inform the server of its connection requirements and the server to return connection information to the client.",
    key_word: KeyWord::Optional,
    acceptable: "SUCCESS with exactly a config_rdma_reply, or PROG_UNAVAIL (RFC 8166 A.1 deleted CCP as never implemented)",
    rationale: "A peer that half-implements CCP would misconfigure RFC 5666-era requesters.",
    groups: &["ccp"],
    run: conf_rdma,
}];
