//! The procedures on one object: its attributes, its name in a directory, its data and
//! link target (RFC 1813 3.3.1 to 3.3.8, 3.3.21).

use rpcrdma_codec::xdr::Reader;

use super::{
    enc, fh, put_fattr, put_post_op, put_wcc, sattr, status_post_op, status_wcc, Fail, Res, ACCESS_DIR, ACCESS_FILE,
    ACCESS_LINK, FATTR3_LEN, MAX_READ, WCC_LEN, WRITE_VERF,
};
use crate::proto::nfs3::*;
use crate::ulp::tree::{Ftype, Tree};
use crate::ulp::UlpResults;

/// GETATTR (RFC 1813 3.3.1).
pub(super) fn getattr(tree: &Tree, r: &mut Reader<'_>) -> Res {
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
pub(super) fn lookup(tree: &Tree, r: &mut Reader<'_>) -> Res {
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

/// SETATTR (RFC 1813 3.3.2).
pub(super) fn setattr(tree: &mut Tree, r: &mut Reader<'_>) -> Res {
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
pub(super) fn access(tree: &Tree, r: &mut Reader<'_>) -> Res {
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

/// READLINK (RFC 1813 3.3.5); the path is DDP-eligible (RFC 8267 4).
pub(super) fn readlink(tree: &Tree, r: &mut Reader<'_>) -> Res {
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
pub(super) fn read(tree: &Tree, r: &mut Reader<'_>) -> Res {
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
pub(super) fn write(tree: &mut Tree, r: &mut Reader<'_>) -> Res {
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

/// CREATE (RFC 1813 3.3.8): UNCHECKED succeeds on an existing file (applying the size);
/// GUARDED fails on it with NFS3ERR_EXIST; EXCLUSIVE succeeds only on a retry with the
/// verifier that created it.
pub(super) fn create(tree: &mut Tree, r: &mut Reader<'_>) -> Res {
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

/// COMMIT (RFC 1813 3.3.21): every WRITE is already FILE_SYNC, so this only checks the
/// object and returns [`WRITE_VERF`]; a directory is NFS3ERR_ISDIR, a symlink NFS3ERR_INVAL.
pub(super) fn commit(tree: &Tree, r: &mut Reader<'_>) -> Res {
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
