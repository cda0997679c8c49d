//! Reading what was served: the requester's forward-direction calls told apart from its
//! answers to our reverse-direction calls (RFC 8167 4.1), the NFSv3 call a frame carries, and
//! the words the checks count in.

use std::collections::HashSet;

use rpcrdma_codec::xdr::Reader;
use rpcrdma_peers::proto::nfs3::NFS_PROGRAM;

use super::served::{Seen, Served};
use crate::frame::rpc::RpcKind;
use crate::frame::{Frame, Rpc};

/// Calls the requester sent, with their connection: its answers to our reverse-direction
/// calls (RFC 8167) left out.
pub(super) fn calls<'a>(served: &'a [Served<'a>]) -> impl Iterator<Item = (&'a Served<'a>, &'a Frame)> {
    served.iter().flat_map(|s| {
        let reverse = reverse_xids(s);
        s.events.iter().filter_map(move |(_, e)| match e {
            Seen::Call(f) if !is_reverse_answer(f, &reverse) => Some((s, f)),
            _ => None,
        })
    })
}

/// The XIDs of our reverse-direction calls on a connection.
pub fn reverse_xids(s: &Served<'_>) -> HashSet<u32> {
    s.events
        .iter()
        .filter_map(|(_, e)| match e {
            Seen::Reply(f) if f.is_rpc_call() => f.rpc.as_ref()?.as_ref().ok().map(|r| r.xid),
            _ => None,
        })
        .collect()
}

/// Whether a message the requester sent answers one of our reverse-direction calls (`xids`):
/// no forward call (an RPC call decoding from it is one even when it carries the XID of one of
/// ours, RFC 8167 2.4.1), and it carries an RPC reply, or its rdma_xid (or RPC XID) is one of
/// theirs. Such messages are no forward-direction calls: the forward checks leave them out.
pub fn is_reverse_answer(f: &Frame, xids: &HashSet<u32>) -> bool {
    let rpc = f.rpc.as_ref().and_then(|r| r.as_ref().ok());
    !f.is_rpc_call()
        && (rpc.is_some_and(|r| xids.contains(&r.xid))
            || f.fixed().is_some_and(|h| xids.contains(&h.xid))
            || rpc.is_some())
}

/// The NFSv3 call a frame carries: its procedure and arguments.
pub(super) fn nfs3_call(f: &Frame) -> Option<(u32, &[u8])> {
    match f.rpc.as_ref()?.as_ref().ok()? {
        r @ Rpc { kind: RpcKind::Call { prog: NFS_PROGRAM, vers: 3, proc_ }, .. } => {
            Some((*proc_, f.slice(r.body.clone())))
        }
        _ => None,
    }
}

/// The READ3args count of an NFSv3 READ call's arguments.
pub(super) fn read_count(args: &[u8]) -> Option<u32> {
    let mut r = Reader::new(args);
    r.opaque("file", 64).ok()?;
    r.u64("offset").ok()?;
    r.u32("count").ok()
}

pub(super) fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        word.to_string()
    } else {
        format!("{word}s")
    }
}
