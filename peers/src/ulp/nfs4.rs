//! NFSv4.0 over the same in-memory [`Tree`] as NFSv3, enough for a COMPOUND of several READs
//! (RFC 7530 16.2): PUTROOTFH, PUTFH, LOOKUP, GETFH and READ, and [`NfsServer`], which serves
//! both versions of the NFS program over one tree. Each READ's data is a DDP-eligible item
//! of its own (RFC 8267 6.1), so the RPC layer places the first in the first write chunk,
//! the next in the next, and so on (RFC 8267 6.4.1, RFC 8166 4.3.2.1).
//!
//! Choices RFC 7530 leaves open: no state is ever created, so READ takes only the anonymous
//! and the READ-bypass stateids (others are NFS4ERR_BAD_STATEID); the handles are NFSv3's
//! (as on Linux), so PUTROOTFH is the export root; minor versions 1 and 2 go to [`nfs41`];
//! another minor version than 0, 1 or 2 is NFS4ERR_MINOR_VERS_MISMATCH with no results; any other operation of minor version 0 is
//! NFS4ERR_NOTSUPP, any other number OP_ILLEGAL; an operation whose arguments do not decode
//! is NFS4ERR_BADXDR; each of those ends the COMPOUND (RFC 7530 15.2). The only DDP-eligible
//! arguments (RFC 8267 6.1: WRITE4args data, NF4LNK linkdata) belong to operations not
//! served, so a read chunk is accepted only where a WRITE's data or a CREATE's linkdata
//! starts after operations this server decodes; the operation then answers NFS4ERR_NOTSUPP.

use std::sync::{Arc, Mutex};

use rpcrdma_codec::xdr::Reader;

use super::nfs3::{Nfs3Server, MAX_READ};
use super::nfs41;
use super::tree::{NodeId, Tree};
use super::xdr::{put, put_opaque, Builder};
use super::{UlpOutcome, UlpResults, UpperLayer};
use crate::proto::nfs3::NFS_V3;
use crate::proto::nfs4::*;

/// OP_CREATE and OP_WRITE (RFC 7531), whose arguments hold DDP-eligible items.
const OP_CREATE: u32 = 6;
const OP_WRITE: u32 = 38;
/// createtype4 NF4LNK (RFC 7531).
const NF4LNK: u32 = 5;

/// The NFS program, versions 3 and 4 (minor version 0 over the NFSv3 tree; minor versions 1
/// and 2 over the [`nfs41::Shared`] state this connection joins).
#[derive(Debug, Clone, Default)]
pub struct NfsServer {
    v3: Nfs3Server,
    v41: nfs41::Conn,
    /// The write list offered with the next call (segments a chunk).
    write_list: Vec<u32>,
}

impl NfsServer {
    /// A server over a fresh standard tree.
    pub fn new() -> Self {
        NfsServer::default()
    }

    /// A server over a tree shared with others.
    pub fn shared(tree: Arc<Mutex<Tree>>) -> Self {
        NfsServer { v3: Nfs3Server::shared(tree), v41: nfs41::Conn::default(), write_list: Vec::new() }
    }

    /// This server, its NFSv4.1/4.2 side a new connection to `state` (shared by every
    /// connection of a responder, so sessions, delegations and back channels span them).
    pub fn with_v41(mut self, state: &nfs41::Shared) -> Self {
        self.v41 = state.connect();
        self
    }

    /// This server's NFSv4.1/4.2 connection.
    pub fn v41(&self) -> &nfs41::Conn {
        &self.v41
    }

    /// The tree this server serves.
    pub fn tree(&self) -> Arc<Mutex<Tree>> {
        self.v3.tree()
    }
}

impl UpperLayer for NfsServer {
    fn call(&mut self, prog: u32, vers: u32, proc_: u32, args: &[u8]) -> UlpOutcome {
        if prog != NFS_PROGRAM {
            return UlpOutcome::ProgUnavail;
        }
        match vers {
            NFS_V3 => self.v3.call(prog, vers, proc_, args),
            NFS_V4 => match proc_ {
                NFSPROC4_NULL => UlpOutcome::Success(UlpResults::default()),
                // Minor versions 1 and 2 (RFC 8881, RFC 7862); 0 below.
                NFSPROC4_COMPOUND if matches!(minor_version(args), Some(1 | 2)) => {
                    self.v41.compound(args, &self.write_list)
                }
                NFSPROC4_COMPOUND => {
                    let tree = self.v3.tree();
                    // The tree is valid between operations, so a poisoned lock is still usable.
                    let tree = tree.lock().unwrap_or_else(|e| e.into_inner());
                    compound(&tree, args)
                }
                _ => UlpOutcome::ProcUnavail,
            },
            _ => UlpOutcome::ProgMismatch { low: NFS_V3, high: NFS_V4 },
        }
    }

    fn ddp_eligible_arg(&self, prog: u32, vers: u32, proc_: u32, args: &[u8], offset: usize) -> bool {
        if vers != NFS_V4 {
            return self.v3.ddp_eligible_arg(prog, vers, proc_, args, offset);
        }
        let eligible = match minor_version(args) {
            Some(1 | 2) => nfs41::eligible_arg_at(args, offset),
            _ => eligible_arg_at(args, offset),
        };
        prog == NFS_PROGRAM && proc_ == NFSPROC4_COMPOUND && eligible.unwrap_or(false)
    }

    fn take_reverse_calls(&mut self) -> Vec<Vec<u8>> {
        self.v41.take_reverse_calls()
    }

    fn reverse_reply(&mut self, msg: &[u8]) {
        self.v41.reverse_reply(msg)
    }

    fn offered_write_list(&mut self, segments: &[u32]) {
        self.write_list = segments.to_vec();
    }
}

/// COMPOUND4args' minorversion, after the tag.
fn minor_version(args: &[u8]) -> Option<u32> {
    let mut r = Reader::new(args);
    r.opaque("tag", u32::MAX).ok()?;
    r.u32("minorversion").ok()
}

/// Whether byte `offset` of COMPOUND4args starts a WRITE's data or a CREATE's NF4LNK
/// linkdata, walking the operations before it.
fn eligible_arg_at(args: &[u8], offset: usize) -> Option<bool> {
    let mut r = Reader::new(args);
    r.opaque("tag", u32::MAX).ok()?;
    r.u32("minorversion").ok()?;
    for _ in 0..r.u32("argarray").ok()? {
        match r.u32("argop").ok()? {
            OP_PUTROOTFH | OP_GETFH => {}
            OP_PUTFH => drop(r.opaque("object", NFS4_FHSIZE).ok()?),
            OP_LOOKUP => drop(r.opaque("objname", u32::MAX).ok()?),
            OP_READ => drop(r.take(STATEID_LEN + 12, "READ4args").ok()?),
            OP_WRITE => {
                r.take(STATEID_LEN + 12, "WRITE4args").ok()?;
                r.u32("data").ok()?;
                return Some(r.position() == offset);
            }
            OP_CREATE => {
                let linkdata = r.u32("objtype").ok()? == NF4LNK && r.u32("linkdata").is_ok();
                return Some(linkdata && r.position() == offset);
            }
            _ => return None,
        }
    }
    None
}

/// COMPOUND (RFC 7530 16.2): the operations in order until the first that fails.
fn compound(tree: &Tree, args: &[u8]) -> UlpOutcome {
    let mut r = Reader::new(args);
    let (Ok(tag), Ok(minor), Ok(count)) = (r.opaque("tag", u32::MAX), r.u32("minorversion"), r.u32("argarray")) else {
        return UlpOutcome::GarbageArgs;
    };
    let mut b = Builder::default();
    let (mut status, mut done) = (NFS4_OK, 0u32);
    let mut current: Option<NodeId> = None;
    if minor != 0 {
        status = NFS4ERR_MINOR_VERS_MISMATCH;
    } else {
        for _ in 0..count {
            let Ok(op) = r.u32("argop") else { return UlpOutcome::GarbageArgs };
            status = operation(tree, op, &mut r, &mut current, &mut b);
            done += 1;
            if status != NFS4_OK {
                break;
            }
        }
    }
    let mut prefix = Vec::new();
    put(&mut prefix, status);
    put_opaque(&mut prefix, tag);
    put(&mut prefix, done);
    UlpOutcome::Success(b.finish(prefix))
}

/// One operation: its nfs_resop4 appended to `b`; its status.
fn operation(tree: &Tree, op: u32, r: &mut Reader<'_>, current: &mut Option<NodeId>, b: &mut Builder) -> u32 {
    let resop = if (3..=OP_LAST_V40).contains(&op) { op } else { OP_ILLEGAL };
    let status = match op_result(tree, op, r, current) {
        Ok(Done::Plain) => NFS4_OK,
        Ok(Done::Handle(fh)) => {
            put(b.bytes(), OP_GETFH);
            put(b.bytes(), NFS4_OK);
            put_opaque(b.bytes(), &fh);
            return NFS4_OK;
        }
        Ok(Done::Read(data, eof)) => {
            let v = b.bytes();
            put(v, OP_READ);
            put(v, NFS4_OK);
            put(v, eof as u32);
            put(v, data.len() as u32);
            b.item(&data);
            return NFS4_OK;
        }
        Err(s) => s,
    };
    put(b.bytes(), resop);
    put(b.bytes(), status);
    status
}

/// What a successful operation returns beyond its status.
enum Done {
    Plain,
    Handle(Vec<u8>),
    Read(Vec<u8>, bool),
}

fn op_result(tree: &Tree, op: u32, r: &mut Reader<'_>, current: &mut Option<NodeId>) -> Result<Done, u32> {
    let badxdr = |_| NFS4ERR_BADXDR;
    match op {
        OP_PUTROOTFH => *current = Some(tree.root()),
        OP_PUTFH => *current = Some(tree.resolve(r.opaque("object", NFS4_FHSIZE).map_err(badxdr)?)?),
        OP_LOOKUP => {
            let name = r.opaque("objname", u32::MAX).map_err(badxdr)?;
            let dir = current.ok_or(NFS4ERR_NOFILEHANDLE)?;
            if name.is_empty() {
                return Err(NFS4ERR_INVAL);
            }
            *current = Some(tree.lookup(dir, name)?);
        }
        OP_GETFH => return Ok(Done::Handle(tree.handle(current.ok_or(NFS4ERR_NOFILEHANDLE)?))),
        OP_READ => {
            let stateid = r.take(STATEID_LEN, "stateid").map_err(badxdr)?;
            let offset = r.u64("offset").map_err(badxdr)?;
            let count = r.u32("count").map_err(badxdr)?;
            let id = current.ok_or(NFS4ERR_NOFILEHANDLE)?;
            if stateid != ANONYMOUS_STATEID && stateid != READ_BYPASS_STATEID {
                return Err(NFS4ERR_BAD_STATEID);
            }
            let (data, eof) = tree.read(id, offset, count.min(MAX_READ))?;
            return Ok(Done::Read(data.to_vec(), eof));
        }
        3..=OP_LAST_V40 => return Err(NFS4ERR_NOTSUPP),
        _ => return Err(NFS4ERR_OP_ILLEGAL),
    }
    Ok(Done::Plain)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::nfs3::{file_contents, ROOT_FH};

    fn run(ops: &[Op]) -> UlpResults {
        let args = compound_args("", ops);
        match NfsServer::new().call(NFS_PROGRAM, NFS_V4, NFSPROC4_COMPOUND, &args) {
            UlpOutcome::Success(r) => r,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn two_reads_are_two_items() {
        let r = run(&[
            Op::PutFh(ROOT_FH.to_vec()),
            Op::Lookup("five".into()),
            Op::Read { offset: 0, count: 64 },
            Op::PutRootFh,
            Op::Lookup("big".into()),
            Op::Read { offset: 0, count: 40 },
        ]);
        assert_eq!(r.ddp.as_deref(), Some(&file_contents(5)[..]));
        assert_eq!(r.more.len(), 1);
        assert_eq!(r.more[0].data, file_contents(70000)[..40]);
        // Decoded unreduced, the whole stream is a COMPOUND4res of six results.
        let res = compound_res(&r.inline(), |_| false).unwrap();
        assert_eq!((res.status, res.results.len(), res.trailing), (NFS4_OK, 6, 0));
        let read = res.results[2].read.clone().unwrap();
        assert_eq!((read.eof, read.data_len), (true, 5));
        // The head ends at the first READ's data length word, the tail at the second's.
        assert_eq!(r.head[r.head.len() - 4..], [0, 0, 0, 5]);
        assert_eq!(r.tail[r.tail.len() - 4..], [0, 0, 0, 40]);
        assert!(r.more[0].tail.is_empty());
    }

    #[test]
    fn the_first_failure_ends_the_compound() {
        let r = run(&[Op::Read { offset: 0, count: 4 }, Op::PutRootFh]);
        let res = compound_res(&r.inline(), |_| false).unwrap();
        assert_eq!(res.status, NFS4ERR_NOFILEHANDLE);
        assert_eq!(res.results.len(), 1);
        assert!(r.ddp.is_none());
        let r = run(&[Op::PutRootFh, Op::Lookup("nothing".into()), Op::GetFh]);
        assert_eq!(compound_res(&r.inline(), |_| false).unwrap().status, NFS4ERR_NOENT);
    }

    #[test]
    fn versions_and_eligible_arguments() {
        let mut s = NfsServer::new();
        assert_eq!(s.call(NFS_PROGRAM, 2, 0, &[]), UlpOutcome::ProgMismatch { low: 3, high: 4 });
        assert!(matches!(s.call(NFS_PROGRAM, 3, 0, &[]), UlpOutcome::Success(_)));
        // PUTROOTFH, then WRITE: stateid, offset, stable, then the data length word at 48.
        let mut args = compound_args("", &[Op::PutRootFh]);
        args[11] = 2;
        args.extend_from_slice(&OP_WRITE.to_be_bytes());
        args.extend_from_slice(&[0; STATEID_LEN + 12]);
        args.extend_from_slice(&4u32.to_be_bytes());
        assert!(s.ddp_eligible_arg(NFS_PROGRAM, 4, 1, &args, 52));
        assert!(!s.ddp_eligible_arg(NFS_PROGRAM, 4, 1, &args, 48));
    }
}
