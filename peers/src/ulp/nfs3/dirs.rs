//! Directory listings: READDIR and READDIRPLUS (RFC 1813 3.3.16, 3.3.17).

use rpcrdma_codec::error::EncodeError;
use rpcrdma_codec::xdr::{round_up4, Reader, Writer};

use super::{enc, fh, put_post_op, status_post_op, Res, COOKIEVERF, FATTR3_LEN, MAX_READDIR};
use crate::proto::nfs3::*;
use crate::ulp::tree::{Fattr3, NodeId, Tree};
use crate::ulp::UlpResults;

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
pub(super) fn readdir(tree: &Tree, r: &mut Reader<'_>) -> Res {
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

/// READDIRPLUS (RFC 1813 3.3.17). `dircount` bounds the fileid, name and cookie of the
/// entries returned; `maxcount` bounds the encoded READDIRPLUS3resok.
pub(super) fn readdirplus(tree: &Tree, r: &mut Reader<'_>) -> Res {
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
