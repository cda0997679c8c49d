//! The catalogue: every check, with its stable ID from the spec section it tests, the
//! requirement quoted with its key word, the acceptable outcomes and a one-line rationale.

pub mod ccp;
pub mod client;
pub mod credits;
pub mod header;
pub mod nfs;
pub mod private_data;
pub mod read_chunks;
pub mod reply_chunk;
pub mod v2;
pub mod write_chunks;

use rpcrdma_codec::chunk::{ReadSegment, Segment};
use rpcrdma_codec::rpc::{AcceptStat, CallHeader};
use rpcrdma_codec::v1::HeaderBuilder;
use rpcrdma_codec::xdr::Writer;

use crate::engine::{expect, Check, Ctx, Received, Verdict};

/// authsys_parms (RFC 5531 appendix A): stamp 0, machinename "rpcrdma", uid 0, gid 0, no gids.
const AUTH_SYS_ROOT: [u8; 28] =
    [0, 0, 0, 0, 0, 0, 0, 7, b'r', b'p', b'c', b'r', b'd', b'm', b'a', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];

/// Every check, in run order (the sanity check first).
pub fn all() -> Vec<&'static Check> {
    let mut v: Vec<&'static Check> = Vec::new();
    v.extend(header::CHECKS.iter());
    v.extend(credits::CHECKS.iter());
    v.extend(read_chunks::CHECKS.iter());
    v.extend(write_chunks::CHECKS.iter());
    v.extend(reply_chunk::CHECKS.iter());
    v.extend(private_data::CHECKS.iter());
    v.extend(ccp::CHECKS.iter());
    v.extend(v2::CHECKS.iter());
    v
}

/// The check every other check depends on (tlsfuzzer's "sanity").
pub const SANITY: &str = "rfc8166/4.2.4/null-call";

/// Connects, or ends the check.
pub(crate) fn start(ctx: &mut Ctx) -> Result<(), Verdict> {
    ctx.connect().map_err(|e| Verdict::fail("a connection to the peer", e))
}

/// A call message: transport header with the given chunks, then the RPC call and `args`.
#[derive(Debug, Clone, Default)]
pub struct CallMsg {
    pub xid: u32,
    pub credit: u32,
    pub prog: u32,
    pub vers: u32,
    pub proc_: u32,
    pub args: Vec<u8>,
    pub reads: Vec<ReadSegment>,
    pub writes: Vec<Vec<Segment>>,
    pub reply: Option<Vec<Segment>>,
}

impl CallMsg {
    /// An NFSv3 call.
    pub fn nfs3(ctx: &mut Ctx, proc_: u32, args: Vec<u8>) -> Self {
        CallMsg {
            xid: ctx.xid(),
            credit: ctx.options.credits_requested,
            prog: crate::engine::ctx::NFS_PROGRAM,
            vers: crate::engine::ctx::NFS_V3,
            proc_,
            args,
            ..Default::default()
        }
    }

    /// The RPC call (header and arguments) alone: the payload stream. NFS procedures other
    /// than NULL carry AUTH_SYS as root (uid 0, gid 0), which an export with `no_root_squash`
    /// lets write; NULL and other programs carry AUTH_NONE.
    pub fn rpc_bytes(&self) -> Vec<u8> {
        let mut header = CallHeader::new(self.xid, self.prog, self.vers, self.proc_);
        if self.prog == crate::engine::ctx::NFS_PROGRAM && self.proc_ != nfs::PROC_NULL {
            header.cred = rpcrdma_codec::rpc::OpaqueAuth {
                flavor: rpcrdma_codec::rpc::AuthFlavor::AUTH_SYS,
                body: &AUTH_SYS_ROOT,
            };
        }
        let mut buf = vec![0u8; header.encoded_len() + self.args.len()];
        let mut w = Writer::new(&mut buf);
        header.encode(&mut w).expect("sized");
        w.bytes(&self.args).expect("sized");
        buf
    }

    /// The position, in the payload stream, of the byte after the arguments: where a data
    /// item split off the end of `args` (a WRITE's data) goes as a read chunk.
    pub fn end_position(&self) -> u32 {
        self.rpc_bytes().len() as u32
    }

    fn header(&self, nomsg: bool) -> Vec<u8> {
        let writes: Vec<&[Segment]> = self.writes.iter().map(|c| c.as_slice()).collect();
        let mut b =
            if nomsg { HeaderBuilder::nomsg(self.xid, self.credit) } else { HeaderBuilder::msg(self.xid, self.credit) };
        b = b.read_list(&self.reads).write_list(&writes);
        if let Some(r) = &self.reply {
            b = b.reply_chunk(r);
        }
        let mut buf =
            vec![0u8; 64 + 24 * self.reads.len() + 16 * (self.writes.iter().map(Vec::len).sum::<usize>() + 8) + 64];
        let n = b.encode(&mut buf).expect("sized");
        buf.truncate(n);
        buf
    }

    /// RDMA_MSG: header, then the RPC call inline.
    pub fn msg(&self) -> Vec<u8> {
        let mut m = self.header(false);
        m.extend_from_slice(&self.rpc_bytes());
        m
    }

    /// RDMA_NOMSG: header only (the payload travels in a position-zero read chunk).
    pub fn nomsg(&self) -> Vec<u8> {
        self.header(true)
    }
}

/// Sends `msg` (answering xid `xid`) and judges an ERR_CHUNK reply; then checks liveness.
pub(crate) fn expect_err_chunk(ctx: &mut Ctx, xid: u32, msg: &[u8]) -> Verdict {
    if let Err(v) = start(ctx) {
        return v;
    }
    let ex = ctx.call(xid, msg);
    let want = "RDMA_ERROR ERR_CHUNK echoing the rdma_xid, rdma_vers 1, non-zero credit grant";
    match expect::err_chunk(&ex.received, xid) {
        Ok(_) => {
            let alive = ctx.liveness();
            Verdict::pass(want, format!("ERR_CHUNK; connection {}", if alive { "survived" } else { "closed" }))
        }
        Err(got) => Verdict::fail(want, got),
    }
}

/// Sends `msg`, which the peer MUST silently discard: no reply within the silence window,
/// and the connection still answers a NULL call.
pub(crate) fn expect_discard(ctx: &mut Ctx, msg: &[u8]) -> Verdict {
    if let Err(v) = start(ctx) {
        return v;
    }
    let _ = ctx.send(msg);
    let want = "no reply (silently discarded), then a NULL call still answered";
    match ctx.expect_silence() {
        Received::Silence => {
            if ctx.liveness() {
                Verdict::pass(want, "no reply; connection alive")
            } else {
                Verdict::fail(want, "no reply, but the connection no longer answers")
            }
        }
        other => Verdict::fail(want, other.describe()),
    }
}

/// A NULL call round trip; returns the reply or a failed verdict.
pub(crate) fn null_round_trip(ctx: &mut Ctx) -> Result<expect::Reply, Verdict> {
    let xid = ctx.xid();
    let msg = ctx.null_call(xid);
    let ex = ctx.call(xid, &msg);
    expect::rpc_accepted(&ex.received, xid, AcceptStat::Success)
        .map_err(|got| Verdict::fail("RDMA_MSG reply to the NULL call with accept_stat SUCCESS", got))
}

/// Looks up `name` in the export root; the file handle.
pub(crate) fn lookup(ctx: &mut Ctx, name: &str) -> Result<Vec<u8>, Verdict> {
    let call = CallMsg::nfs3(ctx, nfs::PROC_LOOKUP, nfs::lookup_args(&nfs::ROOT_FH, name));
    let ex = ctx.call(call.xid, &call.msg());
    let want = format!("LOOKUP of {name:?} answered NFS3_OK");
    let r = expect::rpc_accepted(&ex.received, call.xid, AcceptStat::Success).map_err(|g| Verdict::fail(&want, g))?;
    let rpc = r.rpc().map_err(|g| Verdict::fail(&want, g))?;
    nfs::lookup_fh(rpc.body).ok_or_else(|| Verdict::fail(&want, format!("status {:?}", nfs::status(rpc.body))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_well_formed() {
        let all = all();
        assert!(all.len() >= 15);
        for (i, c) in all.iter().enumerate() {
            assert!(all[i + 1..].iter().all(|o| o.id != c.id), "duplicate {}", c.id);
            let parts: Vec<&str> = c.id.split('/').collect();
            assert_eq!(parts.len(), 3, "{}", c.id);
            assert!(parts[1].chars().all(|ch| ch.is_ascii_digit() || ch == '.'), "{}", c.id);
            assert!(!c.requirement.is_empty() && !c.rationale.is_empty() && !c.acceptable.is_empty());
            let kw = c.key_word.as_str();
            assert!(
                c.requirement.contains(kw) || c.requirement.contains(&kw.to_lowercase()),
                "{} does not quote its key word {kw}",
                c.id
            );
        }
        assert_eq!(all[0].id, SANITY);
    }
}
