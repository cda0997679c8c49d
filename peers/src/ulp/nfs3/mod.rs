//! A small NFSv3 server (RFC 1813) over the in-memory [`Tree`]: NULL, GETATTR, SETATTR,
//! LOOKUP, ACCESS, READLINK, READ, WRITE, CREATE, READDIR, READDIRPLUS, FSSTAT, FSINFO,
//! PATHCONF and COMMIT — enough for the Linux client to mount, list, read, write and create
//! files. READ data and the READLINK path are returned as the DDP-eligible item (RFC 8267 4);
//! WRITE data arrives already reinserted. Other procedures (MKDIR, SYMLINK, MKNOD, REMOVE,
//! RMDIR, RENAME, LINK) are PROC_UNAVAIL.
//!
//! Choices RFC 1813 leaves open: times never change; WRITE is always committed FILE_SYNC
//! with [`WRITE_VERF`], and COMMIT returns the same verifier; a WRITE whose count differs
//! from its data length is NFS3ERR_INVAL; READ returns at most [`MAX_READ`] bytes; READDIR
//! and READDIRPLUS return no "." or ".." entries, cookie `k` resumes at the k-th entry, and a
//! nonzero cookie needs [`COOKIEVERF`] (CREATE only appends, so cookies stay valid); SETATTR
//! applies only a size (mode, owner and times are accepted and ignored: attributes are
//! fixed); ACCESS grants [`ACCESS_FILE`], [`ACCESS_DIR`] or [`ACCESS_LINK`] by type, whoever
//! asks; bytes after the arguments are ignored.
//!
//! Here: the server, its dispatch and the XDR of attributes both halves share; the
//! procedures on one object in `files`, the directory listings in `dirs`, what the file
//! system reports about itself in `fs`.

mod dirs;
mod files;
mod fs;

use std::sync::{Arc, Mutex};

use rpcrdma_codec::error::{DecodeError, EncodeError};
use rpcrdma_codec::xdr::{Reader, Writer};

use super::tree::{Fattr3, Tree};
use super::{UlpOutcome, UlpResults, UpperLayer};
use crate::proto::nfs3::*;
use dirs::{readdir, readdirplus};
use files::{access, commit, create, getattr, lookup, read, readlink, setattr, write};
use fs::{fsinfo, fsstat, pathconf};

// ACCESS bits (RFC 1813 3.3.4).
pub const ACCESS3_READ: u32 = 0x0001;
pub const ACCESS3_LOOKUP: u32 = 0x0002;
pub const ACCESS3_MODIFY: u32 = 0x0004;
pub const ACCESS3_EXTEND: u32 = 0x0008;
pub const ACCESS3_DELETE: u32 = 0x0010;
pub const ACCESS3_EXECUTE: u32 = 0x0020;
/// ACCESS rights granted on a regular file (no DELETE: there is no REMOVE).
pub const ACCESS_FILE: u32 = ACCESS3_READ | ACCESS3_MODIFY | ACCESS3_EXTEND;
/// ACCESS rights granted on a directory (MODIFY and EXTEND: CREATE adds entries).
pub const ACCESS_DIR: u32 = ACCESS3_READ | ACCESS3_LOOKUP | ACCESS3_MODIFY | ACCESS3_EXTEND | ACCESS3_EXECUTE;
/// ACCESS rights granted on a symbolic link.
pub const ACCESS_LINK: u32 = ACCESS3_READ;
// FSINFO properties (RFC 1813 3.3.19).
pub const FSF3_LINK: u32 = 0x0001;
pub const FSF3_SYMLINK: u32 = 0x0002;
pub const FSF3_HOMOGENEOUS: u32 = 0x0008;
pub const FSF3_CANSETTIME: u32 = 0x0010;

/// writeverf3 of every WRITE reply.
pub const WRITE_VERF: [u8; 8] = *b"WRITEVF1";
/// cookieverf3 of every READDIR reply (directories never change).
pub const COOKIEVERF: [u8; 8] = *b"COOKIEV1";
/// Largest READ count served; a larger request gets a short read (RFC 1813 3.3.6).
pub const MAX_READ: u32 = 1 << 20;
/// Largest READDIR count (and READDIRPLUS maxcount) honoured.
pub const MAX_READDIR: u32 = 32 << 10;

/// What FSINFO reports (RFC 1813 3.3.19): rtmax, rtpref, rtmult, wtmax, wtpref, wtmult,
/// dtpref, then maxfilesize [`super::tree::MAX_FILE_SIZE`], time_delta [`FSINFO_TIME_DELTA`] and
/// properties [`FSINFO_PROPERTIES`]. 64 KiB transfers are larger than any inline threshold,
/// so a client's READs and WRITEs of whole pages use chunks.
pub const FSINFO_RTMAX: u32 = 64 << 10;
pub const FSINFO_RTPREF: u32 = 64 << 10;
pub const FSINFO_RTMULT: u32 = 4096;
pub const FSINFO_WTMAX: u32 = 64 << 10;
pub const FSINFO_WTPREF: u32 = 64 << 10;
pub const FSINFO_WTMULT: u32 = 4096;
pub const FSINFO_DTPREF: u32 = 8192;
/// Times never change, so the granularity claimed is a whole second.
pub const FSINFO_TIME_DELTA: (u32, u32) = (1, 0);
/// Symlinks, homogeneous PATHCONF; no hard links, times cannot be set.
pub const FSINFO_PROPERTIES: u32 = FSF3_SYMLINK | FSF3_HOMOGENEOUS;
/// PATHCONF linkmax (RFC 1813 3.3.20).
pub const PATHCONF_LINKMAX: u32 = 255;

/// Encoded size of fattr3.
pub const FATTR3_LEN: usize = 84;

/// The NFSv3 upper layer. Clones of the tree handle share one tree, so a factory can hand
/// every connection the same files (see [`Nfs3Server::shared`]).
#[derive(Debug, Clone)]
pub struct Nfs3Server {
    tree: Arc<Mutex<Tree>>,
}

impl Default for Nfs3Server {
    fn default() -> Self {
        Nfs3Server::new()
    }
}

impl Nfs3Server {
    /// A server over a fresh standard tree.
    pub fn new() -> Self {
        Nfs3Server { tree: Arc::new(Mutex::new(Tree::new())) }
    }

    /// A server over a tree shared with others.
    pub fn shared(tree: Arc<Mutex<Tree>>) -> Self {
        Nfs3Server { tree }
    }

    /// The tree this server serves.
    pub fn tree(&self) -> Arc<Mutex<Tree>> {
        self.tree.clone()
    }
}

enum Fail {
    Garbage,
    System,
}

impl From<DecodeError> for Fail {
    fn from(_: DecodeError) -> Self {
        Fail::Garbage
    }
}

impl From<EncodeError> for Fail {
    fn from(_: EncodeError) -> Self {
        Fail::System
    }
}

type Res = Result<UlpResults, Fail>;

impl UpperLayer for Nfs3Server {
    /// RFC 8267 4 (NFSv3): the opaque file data of WRITE and the pathname of SYMLINK are the
    /// only DDP-eligible arguments. WRITE's data must start where the chunk is inserted;
    /// SYMLINK is not served here (PROC_UNAVAIL), so its chunk is let through to that answer.
    fn ddp_eligible_arg(&self, prog: u32, vers: u32, proc_: u32, args: &[u8], offset: usize) -> bool {
        if prog != NFS_PROGRAM || vers != NFS_V3 {
            return false;
        }
        match proc_ {
            NFSPROC3_WRITE => {
                let mut r = Reader::new(args);
                // file handle, offset, count, stable, then the data's length word.
                let head = r.opaque("file", 64).is_ok()
                    && r.u64("offset").is_ok()
                    && r.u32("count").is_ok()
                    && r.u32("stable").is_ok()
                    && r.u32("data length").is_ok();
                head && args.len() - r.remaining() == offset
            }
            NFSPROC3_SYMLINK => true,
            _ => false,
        }
    }

    fn call(&mut self, prog: u32, vers: u32, proc_: u32, args: &[u8]) -> UlpOutcome {
        if prog != NFS_PROGRAM {
            return UlpOutcome::ProgUnavail;
        }
        if vers != NFS_V3 {
            return UlpOutcome::ProgMismatch { low: NFS_V3, high: NFS_V3 };
        }
        // The tree is valid between operations, so a poisoned lock is still usable.
        let mut tree = self.tree.lock().unwrap_or_else(|e| e.into_inner());
        let mut r = Reader::new(args);
        let res = match proc_ {
            NFSPROC3_NULL => Ok(UlpResults::default()),
            NFSPROC3_GETATTR => getattr(&tree, &mut r),
            NFSPROC3_LOOKUP => lookup(&tree, &mut r),
            NFSPROC3_READLINK => readlink(&tree, &mut r),
            NFSPROC3_READ => read(&tree, &mut r),
            NFSPROC3_WRITE => write(&mut tree, &mut r),
            NFSPROC3_READDIR => readdir(&tree, &mut r),
            NFSPROC3_SETATTR => setattr(&mut tree, &mut r),
            NFSPROC3_ACCESS => access(&tree, &mut r),
            NFSPROC3_CREATE => create(&mut tree, &mut r),
            NFSPROC3_READDIRPLUS => readdirplus(&tree, &mut r),
            NFSPROC3_FSSTAT => fsstat(&tree, &mut r),
            NFSPROC3_FSINFO => fsinfo(&tree, &mut r),
            NFSPROC3_PATHCONF => pathconf(&tree, &mut r),
            NFSPROC3_COMMIT => commit(&tree, &mut r),
            _ => return UlpOutcome::ProcUnavail,
        };
        match res {
            Ok(r) => UlpOutcome::Success(r),
            Err(Fail::Garbage) => UlpOutcome::GarbageArgs,
            Err(Fail::System) => UlpOutcome::SystemErr,
        }
    }
}

/// Encodes into a fresh buffer of `cap` bytes, cut to what was written.
fn enc(cap: usize, f: impl FnOnce(&mut Writer<'_>) -> Result<(), EncodeError>) -> Result<Vec<u8>, Fail> {
    let mut buf = vec![0u8; cap];
    let mut w = Writer::new(&mut buf);
    f(&mut w)?;
    let n = w.len();
    buf.truncate(n);
    Ok(buf)
}

fn fh<'a>(r: &mut Reader<'a>, field: &'static str) -> Result<&'a [u8], DecodeError> {
    r.opaque(field, NFS3_FHSIZE)
}

/// fattr3 (RFC 1813 2.5).
fn put_fattr(w: &mut Writer<'_>, a: &Fattr3) -> Result<(), EncodeError> {
    w.u32(a.ftype as u32)?;
    w.u32(a.mode)?;
    w.u32(a.nlink)?;
    w.u32(a.uid)?;
    w.u32(a.gid)?;
    w.u64(a.size)?;
    w.u64(a.used)?;
    w.u32(a.rdev.0)?;
    w.u32(a.rdev.1)?;
    w.u64(a.fsid)?;
    w.u64(a.fileid)?;
    for t in [a.atime, a.mtime, a.ctime] {
        w.u32(t.0)?;
        w.u32(t.1)?;
    }
    Ok(())
}

/// post_op_attr (RFC 1813 2.6).
fn put_post_op(w: &mut Writer<'_>, a: Option<&Fattr3>) -> Result<(), EncodeError> {
    w.bool(a.is_some())?;
    match a {
        Some(a) => put_fattr(w, a),
        None => Ok(()),
    }
}

/// wcc_data: pre_op_attr (wcc_attr: size, mtime, ctime), post_op_attr (RFC 1813 2.6).
fn put_wcc(w: &mut Writer<'_>, before: Option<&Fattr3>, after: Option<&Fattr3>) -> Result<(), EncodeError> {
    w.bool(before.is_some())?;
    if let Some(b) = before {
        w.u64(b.size)?;
        for t in [b.mtime, b.ctime] {
            w.u32(t.0)?;
            w.u32(t.1)?;
        }
    }
    put_post_op(w, after)
}

/// A result that is only a status and a post_op_attr.
fn status_post_op(status: u32, a: Option<&Fattr3>) -> Res {
    Ok(UlpResults::plain(enc(8 + FATTR3_LEN, |w| {
        w.u32(status)?;
        put_post_op(w, a)
    })?))
}

/// Encoded size of wcc_data with both halves present.
const WCC_LEN: usize = 4 + 24 + 4 + FATTR3_LEN;

/// A result that is only a status and a wcc_data.
fn status_wcc(status: u32, before: Option<&Fattr3>, after: Option<&Fattr3>) -> Res {
    Ok(UlpResults::plain(enc(4 + WCC_LEN, |w| {
        w.u32(status)?;
        put_wcc(w, before, after)
    })?))
}

/// sattr3 (RFC 1813 2.6); only the size is kept.
fn sattr(r: &mut Reader<'_>) -> Result<Option<u64>, Fail> {
    for field in ["set_mode", "set_uid", "set_gid"] {
        if r.bool(field)? {
            r.u32(field)?;
        }
    }
    let size = if r.bool("set_size")? { Some(r.u64("size")?) } else { None };
    for field in ["set_atime", "set_mtime"] {
        // time_how: DONT_CHANGE, SET_TO_SERVER_TIME, SET_TO_CLIENT_TIME (+ nfstime3).
        match r.u32(field)? {
            0 | 1 => {}
            2 => {
                r.u32(field)?;
                r.u32(field)?;
            }
            _ => return Err(Fail::Garbage),
        }
    }
    Ok(size)
}
