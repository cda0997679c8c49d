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

use std::sync::{Arc, Mutex};

use rpcrdma_codec::error::{DecodeError, EncodeError};
use rpcrdma_codec::xdr::{round_up4, Reader, Writer};

use super::tree::{self, Fattr3, Ftype, NodeId, Tree};
use super::{UlpOutcome, UlpResults, UpperLayer};
use crate::proto::nfs3::*;

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
/// dtpref, then maxfilesize [`tree::MAX_FILE_SIZE`], time_delta [`FSINFO_TIME_DELTA`] and
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
            Ok(UlpResults::plain(enc(4 + 4 + 64 + 2 * (4 + FATTR3_LEN), |w| {
                w.u32(NFS3_OK)?;
                w.opaque(&handle)?;
                put_post_op(w, Some(&tree.attrs(id)))?;
                put_post_op(w, Some(&dir_attr))
            })?))
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
            Ok(UlpResults { head, ddp: Some(path.to_vec()), ..Default::default() })
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
            Ok(UlpResults { head, ddp: Some(data.to_vec()), ..Default::default() })
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

/// The part of an entry3 / entryplus3 both share: value_follows, fileid, name, and the cookie
/// that resumes after entry `index` (RFC 1813 3.3.16, 3.3.17).
fn put_entry_head(w: &mut Writer<'_>, tree: &Tree, c: NodeId, index: usize) -> Result<(), EncodeError> {
    w.bool(true)?;
    w.u64(tree.fileid(c))?;
    w.opaque(tree.node(c).name.as_bytes())?;
    w.u64(index as u64 + 1)
}

/// The directory a READDIR or READDIRPLUS names, its attributes, its entries, and the entry
/// the cookie resumes at; or the error results (RFC 1813 3.3.16, 3.3.17).
fn open_dir<'t>(tree: &'t Tree, dir_fh: &[u8], cookie: u64, verf: &[u8]) -> Result<(Fattr3, &'t [NodeId], usize), Res> {
    let dir = tree.resolve(dir_fh).map_err(|s| status_post_op(s, None))?;
    let attr = tree.attrs(dir);
    let children = tree.children(dir).map_err(|s| status_post_op(s, Some(&attr)))?;
    if cookie > children.len() as u64 || (cookie != 0 && verf != COOKIEVERF) {
        return Err(status_post_op(NFS3ERR_BAD_COOKIE, Some(&attr)));
    }
    Ok((attr, children, cookie as usize))
}

/// READDIR (RFC 1813 3.3.16). `count` bounds the encoded READDIR3resok.
fn readdir(tree: &Tree, r: &mut Reader<'_>) -> Res {
    let dir_fh = fh(r, "dir")?;
    let cookie = r.u64("cookie")?;
    let verf = r.opaque_fixed(8, "cookieverf")?;
    let count = r.u32("count")?;
    let (attr, children, start) = match open_dir(tree, dir_fh, cookie, verf) {
        Ok(x) => x,
        Err(res) => return res,
    };
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
            put_entry_head(w, tree, c, i)?;
        }
        w.bool(false)?;
        w.bool(eof)
    })?;
    Ok(UlpResults::plain(bytes))
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

/// SETATTR (RFC 1813 3.3.2).
fn setattr(tree: &mut Tree, r: &mut Reader<'_>) -> Res {
    let object = fh(r, "object")?;
    let size = sattr(r)?;
    let guard = if r.bool("guard")? { Some((r.u32("obj_ctime")?, r.u32("obj_ctime")?)) } else { None };
    let id = match tree.resolve(object) {
        Ok(id) => id,
        Err(s) => return status_wcc(s, None, None),
    };
    let before = tree.attrs(id);
    if guard.is_some_and(|c| c != before.ctime) {
        return status_wcc(NFS3ERR_NOT_SYNC, Some(&before), Some(&before));
    }
    let status = match size {
        Some(n) => tree.set_size(id, n).err().unwrap_or(NFS3_OK),
        None => NFS3_OK,
    };
    status_wcc(status, Some(&before), Some(&tree.attrs(id)))
}

/// ACCESS (RFC 1813 3.3.4).
fn access(tree: &Tree, r: &mut Reader<'_>) -> Res {
    let object = fh(r, "object")?;
    let asked = r.u32("access")?;
    let id = match tree.resolve(object) {
        Ok(id) => id,
        Err(s) => return status_post_op(s, None),
    };
    let attr = tree.attrs(id);
    let allowed = match attr.ftype {
        Ftype::Reg => ACCESS_FILE,
        Ftype::Dir => ACCESS_DIR,
        Ftype::Lnk => ACCESS_LINK,
    };
    Ok(UlpResults::plain(enc(4 + 4 + FATTR3_LEN + 4, |w| {
        w.u32(NFS3_OK)?;
        put_post_op(w, Some(&attr))?;
        w.u32(asked & allowed)
    })?))
}

/// CREATE (RFC 1813 3.3.8): UNCHECKED succeeds on an existing file (applying the size);
/// GUARDED fails on it with NFS3ERR_EXIST; EXCLUSIVE succeeds only on a retry with the
/// verifier that created it.
fn create(tree: &mut Tree, r: &mut Reader<'_>) -> Res {
    let dir_fh = fh(r, "dir")?;
    let name = r.opaque("name", u32::MAX)?;
    let mode = r.u32("createmode")?;
    let (size, verf) = match mode {
        UNCHECKED | GUARDED => (sattr(r)?, None),
        EXCLUSIVE => {
            let v: [u8; 8] = r.opaque_fixed(8, "verf")?.try_into().map_err(|_| Fail::Garbage)?;
            (None, Some(v))
        }
        _ => return Err(Fail::Garbage),
    };
    let dir = match tree.resolve(dir_fh) {
        Ok(d) => d,
        Err(s) => return status_wcc(s, None, None),
    };
    let dir_before = tree.attrs(dir);
    let result = tree.create(dir, name, mode != UNCHECKED, verf).and_then(|(id, _)| match size {
        Some(n) => tree.set_size(id, n).map(|()| id),
        None => Ok(id),
    });
    let dir_after = tree.attrs(dir);
    match result {
        Ok(id) => {
            let handle = tree.handle(id);
            let attr = tree.attrs(id);
            Ok(UlpResults::plain(enc(4 + 4 + 4 + 64 + 4 + FATTR3_LEN + WCC_LEN, |w| {
                w.u32(NFS3_OK)?;
                w.bool(true)?;
                w.opaque(&handle)?;
                put_post_op(w, Some(&attr))?;
                put_wcc(w, Some(&dir_before), Some(&dir_after))
            })?))
        }
        Err(s) => status_wcc(s, Some(&dir_before), Some(&dir_after)),
    }
}

/// READDIRPLUS (RFC 1813 3.3.17). `dircount` bounds the fileid, name and cookie of the
/// entries returned; `maxcount` bounds the encoded READDIRPLUS3resok.
fn readdirplus(tree: &Tree, r: &mut Reader<'_>) -> Res {
    let dir_fh = fh(r, "dir")?;
    let cookie = r.u64("cookie")?;
    let verf = r.opaque_fixed(8, "cookieverf")?;
    let dircount = r.u32("dircount")?;
    let maxcount = r.u32("maxcount")?;
    let (attr, children, start) = match open_dir(tree, dir_fh, cookie, verf) {
        Ok(x) => x,
        Err(res) => return res,
    };
    // dir_attributes, cookieverf, the final "no more entries" and eof.
    let fixed = 4 + FATTR3_LEN + 8 + 4 + 4;
    let budget = maxcount.min(MAX_READDIR) as usize;
    let mut used = fixed;
    let mut dir_used = 0usize;
    let mut end = start;
    while end < children.len() {
        let c = children[end];
        let info = 8 + 4 + round_up4(tree.node(c).name.len()) + 8;
        // value_follows, info, name_attributes, name_handle.
        let size = 4 + info + 4 + FATTR3_LEN + 4 + 4 + round_up4(tree.handle(c).len());
        if used + size > budget || dir_used + info > dircount as usize {
            break;
        }
        used += size;
        dir_used += info;
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
            put_entry_head(w, tree, c, i)?;
            put_post_op(w, Some(&tree.attrs(c)))?;
            w.bool(true)?;
            w.opaque(&tree.handle(c))?;
        }
        w.bool(false)?;
        w.bool(eof)
    })?;
    Ok(UlpResults::plain(bytes))
}

/// FSSTAT (RFC 1813 3.3.18): [`tree::TOTAL_BYTES`] and [`tree::MAX_NODES`] less what the
/// tree uses; invarsec 0.
fn fsstat(tree: &Tree, r: &mut Reader<'_>) -> Res {
    let root = fh(r, "fsroot")?;
    let id = match tree.resolve(root) {
        Ok(id) => id,
        Err(s) => return status_post_op(s, None),
    };
    let attr = tree.attrs(id);
    let free = tree::TOTAL_BYTES.saturating_sub(tree.used_bytes());
    let files = tree::MAX_NODES as u64;
    let ffiles = files.saturating_sub(tree.len() as u64);
    Ok(UlpResults::plain(enc(4 + 4 + FATTR3_LEN + 48 + 4, |w| {
        w.u32(NFS3_OK)?;
        put_post_op(w, Some(&attr))?;
        w.u64(tree::TOTAL_BYTES)?;
        w.u64(free)?;
        w.u64(free)?;
        w.u64(files)?;
        w.u64(ffiles)?;
        w.u64(ffiles)?;
        w.u32(0)
    })?))
}

/// FSINFO (RFC 1813 3.3.19).
fn fsinfo(tree: &Tree, r: &mut Reader<'_>) -> Res {
    let root = fh(r, "fsroot")?;
    let id = match tree.resolve(root) {
        Ok(id) => id,
        Err(s) => return status_post_op(s, None),
    };
    let attr = tree.attrs(id);
    Ok(UlpResults::plain(enc(4 + 4 + FATTR3_LEN + 28 + 8 + 8 + 4, |w| {
        w.u32(NFS3_OK)?;
        put_post_op(w, Some(&attr))?;
        for v in [FSINFO_RTMAX, FSINFO_RTPREF, FSINFO_RTMULT, FSINFO_WTMAX, FSINFO_WTPREF, FSINFO_WTMULT, FSINFO_DTPREF]
        {
            w.u32(v)?;
        }
        w.u64(tree::MAX_FILE_SIZE)?;
        w.u32(FSINFO_TIME_DELTA.0)?;
        w.u32(FSINFO_TIME_DELTA.1)?;
        w.u32(FSINFO_PROPERTIES)
    })?))
}

/// PATHCONF (RFC 1813 3.3.20): linkmax [`PATHCONF_LINKMAX`], name_max
/// [`tree::NAME_MAX`], no_trunc, chown_restricted, case-sensitive, case-preserving.
fn pathconf(tree: &Tree, r: &mut Reader<'_>) -> Res {
    let object = fh(r, "object")?;
    let id = match tree.resolve(object) {
        Ok(id) => id,
        Err(s) => return status_post_op(s, None),
    };
    let attr = tree.attrs(id);
    Ok(UlpResults::plain(enc(4 + 4 + FATTR3_LEN + 24, |w| {
        w.u32(NFS3_OK)?;
        put_post_op(w, Some(&attr))?;
        w.u32(PATHCONF_LINKMAX)?;
        w.u32(tree::NAME_MAX as u32)?;
        w.bool(true)?;
        w.bool(true)?;
        w.bool(false)?;
        w.bool(true)
    })?))
}

/// COMMIT (RFC 1813 3.3.21): every WRITE is already FILE_SYNC, so this only checks the
/// object and returns [`WRITE_VERF`]; a directory is NFS3ERR_ISDIR, a symlink NFS3ERR_INVAL.
fn commit(tree: &Tree, r: &mut Reader<'_>) -> Res {
    let file = fh(r, "file")?;
    let _offset = r.u64("offset")?;
    let _count = r.u32("count")?;
    let id = match tree.resolve(file) {
        Ok(id) => id,
        Err(s) => return status_wcc(s, None, None),
    };
    let attr = tree.attrs(id);
    let status = match attr.ftype {
        Ftype::Reg => NFS3_OK,
        Ftype::Dir => NFS3ERR_ISDIR,
        Ftype::Lnk => NFS3ERR_INVAL,
    };
    Ok(UlpResults::plain(enc(4 + WCC_LEN + 8, |w| {
        w.u32(status)?;
        put_wcc(w, Some(&attr), Some(&attr))?;
        if status == NFS3_OK {
            w.opaque_fixed(&WRITE_VERF)?;
        }
        Ok(())
    })?))
}
