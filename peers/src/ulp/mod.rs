//! Upper layers served by the reference responder: a small NFSv3 server ([`Nfs3Server`]) over
//! an in-memory tree ([`tree`]), NFSv4.0 COMPOUND with PUTFH and READ over the same tree
//! ([`nfs4`], both versions behind [`NfsServer`]), NFSv4.1 and 4.2 with sessions, a back
//! channel and read delegations ([`nfs41`], minor versions 1 and 2 behind [`NfsServer`]), and
//! [`NullServer`], which answers only NULL.
//!
//! An upper layer sees unreduced argument bytes and returns its results split around their
//! DDP-eligible items (RFC 8267 4: at most one in NFSv3; 6.4.1: one per READ in an NFSv4
//! COMPOUND), so the RPC layer can move each item through a write chunk: the item's length
//! word stays in the payload stream, only its data moves, without the XDR pad (RFC 8166
//! 3.4.4.1).

pub mod ccp;
pub mod nfs3;
pub mod nfs4;
pub mod nfs41;
pub mod tree;
mod xdr;

pub use ccp::{CcpServer, Programs};
pub use nfs3::Nfs3Server;
pub use nfs4::NfsServer;
pub use tree::Tree;

use rpcrdma_codec::xdr::pad4;

/// A procedure's outcome, as the RPC layer needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UlpOutcome {
    /// accept_stat SUCCESS (the NFS status may still be an error): the results, split around
    /// the one DDP-eligible data item if the procedure has one.
    Success(UlpResults),
    ProgUnavail,
    ProgMismatch {
        low: u32,
        high: u32,
    },
    ProcUnavail,
    GarbageArgs,
    SystemErr,
}

/// Procedure results, split around their DDP-eligible items.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UlpResults {
    /// Result bytes up to and including the first DDP-eligible item's length word (all results when there is no such item).
    pub head: Vec<u8>,
    /// The first DDP-eligible item's data bytes, without XDR pad (READ data, READLINK path), if any.
    pub ddp: Option<Vec<u8>>,
    /// Result bytes after that item in the unreduced stream (i.e. after its data and pad), up
    /// to and including the next item's length word when there is one.
    pub tail: Vec<u8>,
    /// The DDP-eligible items after the first, in order (the READs of an NFSv4 COMPOUND after
    /// its first, RFC 8267 6.4.1).
    pub more: Vec<LaterItem>,
}

/// A DDP-eligible item after a reply's first, and the result bytes after it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LaterItem {
    /// The item's data bytes, without XDR pad.
    pub data: Vec<u8>,
    /// Result bytes after the item's data and pad, up to and including the next item's
    /// length word when there is one.
    pub tail: Vec<u8>,
}

impl UlpResults {
    /// Results with no DDP-eligible item.
    pub fn plain(bytes: Vec<u8>) -> Self {
        UlpResults { head: bytes, ..Default::default() }
    }

    /// Every DDP-eligible item in order, each with the result bytes after it.
    pub fn items(&self) -> impl Iterator<Item = (&[u8], &[u8])> {
        let first = self.ddp.as_deref().map(|d| (d, self.tail.as_slice()));
        first.into_iter().chain(self.more.iter().map(|m| (m.data.as_slice(), m.tail.as_slice())))
    }

    /// The unreduced results: head, then each item's data and XDR pad and the bytes after it.
    pub fn inline(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(self.inline_len());
        v.extend_from_slice(&self.head);
        for (d, tail) in self.items() {
            v.extend_from_slice(d);
            v.resize(v.len() + pad4(d.len()), 0);
            v.extend_from_slice(tail);
        }
        if self.ddp.is_none() {
            v.extend_from_slice(&self.tail);
        }
        v
    }

    /// Length of [`UlpResults::inline`].
    pub fn inline_len(&self) -> usize {
        let items: usize = self.items().map(|(d, tail)| d.len() + pad4(d.len()) + tail.len()).sum();
        let tail = if self.ddp.is_none() { self.tail.len() } else { 0 };
        self.head.len() + items + tail
    }
}

/// An RPC program served over the responder.
pub trait UpperLayer: Send {
    /// Handles one call: program, version, procedure and the unreduced argument bytes (read chunks already reinserted).
    fn call(&mut self, prog: u32, vers: u32, proc_: u32, args: &[u8]) -> UlpOutcome;

    /// Whether a read chunk inserted at byte `offset` of the unreduced arguments `args`
    /// carries a DDP-eligible argument data item (RFC 8166 6.1: a Responder MUST NOT process
    /// a call that reduces any other). None are, unless the upper layer says so.
    fn ddp_eligible_arg(&self, _prog: u32, _vers: u32, _proc: u32, _args: &[u8], _offset: usize) -> bool {
        false
    }

    /// The RDMA Reads the requester allows active at once, when it said (RFC 5666 6.2: CCP's
    /// maxrdmaread); None when no upper layer heard it.
    fn peer_max_rdma_reads(&self) -> Option<u32> {
        None
    }

    /// Reverse-direction calls (RFC 8167) the upper layer wants sent to the requester over
    /// this connection now: whole RPC call messages (the XID is the upper layer's, from its
    /// own XID space, RFC 8167 4.2). The responder asks after each forward call it answers
    /// and while the connection is idle; it frames and sends them (RFC 8167 5.1).
    fn take_reverse_calls(&mut self) -> Vec<Vec<u8>> {
        Vec::new()
    }

    /// A reverse-direction reply arrived on this connection: the whole RPC reply message
    /// (RFC 8167 5.2). Replies to calls the upper layer never made are its to ignore.
    fn reverse_reply(&mut self, _msg: &[u8]) {}

    /// The write list offered with the call [`UpperLayer::call`] serves next: each write
    /// chunk's segment count, in order (RFC 8166 4.3.2; RFC 8267 6.4.1: the k-th chunk is for
    /// the k-th DDP-eligible result). The responder places the results; an upper layer looks
    /// at this only under a fault.
    fn offered_write_list(&mut self, _segments: &[u32]) {}
}

/// The NFSACL program (RFC 8267 5.2; no data item in it is DDP-eligible).
pub const NFSACL_PROGRAM: u32 = 100227;

/// The NFSACL version that goes with NFSv3.
pub const NFSACL_V3: u32 = 3;

/// NFSACL version 3 with only NULL served: a Linux client binds the program on the NFS
/// connection when NULL is answered (`rpc_bind_new_program()` pings it, from
/// `nfs_init_server_aclclient()`), so it sends its ACL procedures, a SETACL of a large ACL as a
/// long call (RFC 8166 3.5.3). Those procedures get PROG_UNAVAIL, on which that client stops
/// using the program for the mount (`nfs3_get_acl()`, `__nfs3_proc_setacls()`), so a listing
/// costs one GETACL, not one a file.
#[derive(Debug, Clone, Copy, Default)]
pub struct NfsAclServer;

impl UpperLayer for NfsAclServer {
    fn call(&mut self, _prog: u32, vers: u32, proc_: u32, _args: &[u8]) -> UlpOutcome {
        match (vers, proc_) {
            (NFSACL_V3, 0) => UlpOutcome::Success(UlpResults::default()),
            (NFSACL_V3, _) => UlpOutcome::ProgUnavail,
            _ => UlpOutcome::ProgMismatch { low: NFSACL_V3, high: NFSACL_V3 },
        }
    }
}

/// Answers procedure 0 (NULL) of any program and version with empty results; any other
/// procedure is PROC_UNAVAIL.
#[derive(Debug, Clone, Copy, Default)]
pub struct NullServer;

impl UpperLayer for NullServer {
    fn call(&mut self, _prog: u32, _vers: u32, proc_: u32, _args: &[u8]) -> UlpOutcome {
        match proc_ {
            0 => UlpOutcome::Success(UlpResults::default()),
            _ => UlpOutcome::ProcUnavail,
        }
    }
}
