//! A small NFSv3 server (RFC 1813) over the in-memory [`Tree`]: NULL, GETATTR, LOOKUP,
//! READLINK, READ, WRITE and READDIR. READ data and the READLINK path are returned as the
//! DDP-eligible item (RFC 8267 4); WRITE data arrives already reinserted.
//!
//! Choices RFC 1813 leaves open: times never change; WRITE is always committed FILE_SYNC
//! with [`WRITE_VERF`]; a WRITE whose count differs from its data length is NFS3ERR_INVAL;
//! READ returns at most [`MAX_READ`] bytes; READDIR returns no "." or ".." entries, cookie
//! `k` resumes at the k-th entry, and a nonzero cookie needs [`COOKIEVERF`]; bytes after
//! the arguments are ignored.

use std::sync::{Arc, Mutex};

use rpcrdma_codec::error::{DecodeError, EncodeError};
use rpcrdma_codec::xdr::{round_up4, Reader, Writer};

use super::tree::{Fattr3, NodeId, Tree};
use super::{UlpOutcome, UlpResults, UpperLayer};

pub const NFS_PROGRAM: u32 = 100003;
pub const NFS_V3: u32 = 3;

// Procedures (RFC 1813 3).
pub const NFSPROC3_NULL: u32 = 0;
pub const NFSPROC3_GETATTR: u32 = 1;
pub const NFSPROC3_LOOKUP: u32 = 3;
pub const NFSPROC3_READLINK: u32 = 5;
pub const NFSPROC3_READ: u32 = 6;
pub const NFSPROC3_WRITE: u32 = 7;
pub const NFSPROC3_READDIR: u32 = 16;

// nfsstat3 (RFC 1813 2.6).
pub const NFS3_OK: u32 = 0;
pub const NFS3ERR_PERM: u32 = 1;
pub const NFS3ERR_NOENT: u32 = 2;
pub const NFS3ERR_IO: u32 = 5;
pub const NFS3ERR_ACCES: u32 = 13;
pub const NFS3ERR_NOTDIR: u32 = 20;
pub const NFS3ERR_ISDIR: u32 = 21;
pub const NFS3ERR_INVAL: u32 = 22;
pub const NFS3ERR_FBIG: u32 = 27;
pub const NFS3ERR_NAMETOOLONG: u32 = 63;
pub const NFS3ERR_STALE: u32 = 70;
pub const NFS3ERR_BADHANDLE: u32 = 10001;
pub const NFS3ERR_BAD_COOKIE: u32 = 10003;
pub const NFS3ERR_NOTSUPP: u32 = 10004;
pub const NFS3ERR_TOOSMALL: u32 = 10005;
pub const NFS3ERR_SERVERFAULT: u32 = 10006;

/// nfs_fh3 data<NFS3_FHSIZE> (RFC 1813 2.4).
pub const NFS3_FHSIZE: u32 = 64;
// stable_how (RFC 1813 3.3.7).
pub const UNSTABLE: u32 = 0;
pub const DATA_SYNC: u32 = 1;
pub const FILE_SYNC: u32 = 2;

/// writeverf3 of every WRITE reply.
pub const WRITE_VERF: [u8; 8] = *b"WRITEVF1";
/// cookieverf3 of every READDIR reply (directories never change).
pub const COOKIEVERF: [u8; 8] = *b"COOKIEV1";
/// Largest READ count served; a larger request gets a short read (RFC 1813 3.3.6).
pub const MAX_READ: u32 = 1 << 20;
/// Largest READDIR count honoured.
pub const MAX_READDIR: u32 = 32 << 10;

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
        Nfs3Server {
            tree: Arc::new(Mutex::new(Tree::new())),
        }
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
    fn call(&mut self, prog: u32, vers: u32, proc_: u32, args: &[u8]) -> UlpOutcome {
        if prog != NFS_PROGRAM {
            return UlpOutcome::ProgUnavail;
        }
        if vers != NFS_V3 {
            return UlpOutcome::ProgMismatch {
                low: NFS_V3,
                high: NFS_V3,
            };
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
fn enc(
    cap: usize,
    f: impl FnOnce(&mut Writer<'_>) -> Result<(), EncodeError>,
) -> Result<Vec<u8>, Fail> {
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
fn put_wcc(
    w: &mut Writer<'_>,
    before: Option<&Fattr3>,
    after: Option<&Fattr3>,
) -> Result<(), EncodeError> {
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

/// GETATTR (RFC 1813 3.3.1).
fn getattr(tree: &Tree, r: &mut Reader<'_>) -> Res {
    let object = fh(r, "object")?;
    let bytes = match tree.resolve(object) {
        Ok(id) => enc(4 + FATTR3_LEN, |w| {
            w.u32(NFS3_OK)?;
            put_fattr(w, &tree.attrs(id))
        })?,
        Err(s) => enc(4, |w| w.u32(s))?,
    };
    Ok(UlpResults::plain(bytes))
}

/// LOOKUP (RFC 1813 3.3.3).
fn lookup(tree: &Tree, r: &mut Reader<'_>) -> Res {
    let dir_fh = fh(r, "dir")?;
    let name = r.opaque("name", u32::MAX)?;
    let dir = match tree.resolve(dir_fh) {
        Ok(d) => d,
        Err(s) => return status_post_op(s, None),
    };
    let dir_attr = tree.attrs(dir);
    match tree.lookup(dir, name) {
        Ok(id) => {
            let handle = tree.handle(id);
            Ok(UlpResults::plain(enc(
                4 + 4 + 64 + 2 * (4 + FATTR3_LEN),
                |w| {
                    w.u32(NFS3_OK)?;
                    w.opaque(&handle)?;
                    put_post_op(w, Some(&tree.attrs(id)))?;
                    put_post_op(w, Some(&dir_attr))
                },
            )?))
        }
        Err(s) => status_post_op(s, Some(&dir_attr)),
    }
}

/// READLINK (RFC 1813 3.3.5); the path is DDP-eligible (RFC 8267 4).
fn readlink(tree: &Tree, r: &mut Reader<'_>) -> Res {
    let symlink = fh(r, "symlink")?;
    let id = match tree.resolve(symlink) {
        Ok(id) => id,
        Err(s) => return status_post_op(s, None),
    };
    let attr = tree.attrs(id);
    match tree.readlink(id) {
        Ok(path) => {
            let head = enc(4 + 4 + FATTR3_LEN + 4, |w| {
                w.u32(NFS3_OK)?;
                put_post_op(w, Some(&attr))?;
                w.u32(path.len() as u32)
            })?;
            Ok(UlpResults {
                head,
                ddp: Some(path.to_vec()),
                tail: Vec::new(),
            })
        }
        Err(s) => status_post_op(s, Some(&attr)),
    }
}

/// READ (RFC 1813 3.3.6); the data is DDP-eligible (RFC 8267 4).
fn read(tree: &Tree, r: &mut Reader<'_>) -> Res {
    let file = fh(r, "file")?;
    let offset = r.u64("offset")?;
    let count = r.u32("count")?;
    let id = match tree.resolve(file) {
        Ok(id) => id,
        Err(s) => return status_post_op(s, None),
    };
    let attr = tree.attrs(id);
    match tree.read(id, offset, count.min(MAX_READ)) {
        Ok((data, eof)) => {
            let head = enc(4 + 4 + FATTR3_LEN + 12, |w| {
                w.u32(NFS3_OK)?;
                put_post_op(w, Some(&attr))?;
                w.u32(data.len() as u32)?;
                w.bool(eof)?;
                w.u32(data.len() as u32)
            })?;
            Ok(UlpResults {
                head,
                ddp: Some(data.to_vec()),
                tail: Vec::new(),
            })
        }
        Err(s) => status_post_op(s, Some(&attr)),
    }
}

/// WRITE (RFC 1813 3.3.7).
fn write(tree: &mut Tree, r: &mut Reader<'_>) -> Res {
    let file = fh(r, "file")?;
    let offset = r.u64("offset")?;
    let count = r.u32("count")?;
    let stable = r.u32("stable")?;
    if stable > FILE_SYNC {
        return Err(Fail::Garbage);
    }
    let data = r.opaque("data", u32::MAX)?;
    const WCC_LEN: usize = 4 + 24 + 4 + FATTR3_LEN;
    let id = match tree.resolve(file) {
        Ok(id) => id,
        Err(s) => {
            return Ok(UlpResults::plain(enc(4 + WCC_LEN, |w| {
                w.u32(s)?;
                put_wcc(w, None, None)
            })?))
        }
    };
    let before = tree.attrs(id);
    let status = if count as usize != data.len() {
        NFS3ERR_INVAL
    } else {
        match tree.write(id, offset, data) {
            Ok(()) => NFS3_OK,
            Err(s) => s,
        }
    };
    let after = tree.attrs(id);
    Ok(UlpResults::plain(enc(4 + WCC_LEN + 16, |w| {
        w.u32(status)?;
        put_wcc(w, Some(&before), Some(&after))?;
        if status == NFS3_OK {
            w.u32(count)?;
            w.u32(FILE_SYNC)?;
            w.opaque_fixed(&WRITE_VERF)?;
        }
        Ok(())
    })?))
}

/// READDIR (RFC 1813 3.3.16). `count` bounds the encoded READDIR3resok.
fn readdir(tree: &Tree, r: &mut Reader<'_>) -> Res {
    let dir_fh = fh(r, "dir")?;
    let cookie = r.u64("cookie")?;
    let verf = r.opaque_fixed(8, "cookieverf")?;
    let count = r.u32("count")?;
    let dir = match tree.resolve(dir_fh) {
        Ok(d) => d,
        Err(s) => return status_post_op(s, None),
    };
    let attr = tree.attrs(dir);
    let children: &[NodeId] = match tree.children(dir) {
        Ok(c) => c,
        Err(s) => return status_post_op(s, Some(&attr)),
    };
    if cookie > children.len() as u64 || (cookie != 0 && verf != COOKIEVERF) {
        return status_post_op(NFS3ERR_BAD_COOKIE, Some(&attr));
    }
    let start = cookie as usize;
    // dir_attributes, cookieverf, the final "no more entries" and eof.
    let fixed = 4 + FATTR3_LEN + 8 + 4 + 4;
    let budget = count.min(MAX_READDIR) as usize;
    let mut used = fixed;
    let mut end = start;
    while end < children.len() {
        // value_follows, fileid, name, cookie.
        let size = 4 + 8 + 4 + round_up4(tree.node(children[end]).name.len()) + 8;
        if used + size > budget {
            break;
        }
        used += size;
        end += 1;
    }
    if end == start && start < children.len() {
        return status_post_op(NFS3ERR_TOOSMALL, Some(&attr));
    }
    let eof = end == children.len();
    let bytes = enc(4 + used, |w| {
        w.u32(NFS3_OK)?;
        put_post_op(w, Some(&attr))?;
        w.opaque_fixed(&COOKIEVERF)?;
        for (i, &c) in children.iter().enumerate().take(end).skip(start) {
            w.bool(true)?;
            w.u64(tree.fileid(c))?;
            w.opaque(tree.node(c).name.as_bytes())?;
            w.u64(i as u64 + 1)?;
        }
        w.bool(false)?;
        w.bool(eof)
    })?;
    Ok(UlpResults::plain(bytes))
}
