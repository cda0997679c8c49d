//! What the file system reports about itself: FSSTAT, FSINFO and PATHCONF (RFC 1813
//! 3.3.18 to 3.3.20).

use rpcrdma_codec::xdr::Reader;

use super::{
    enc, fh, put_post_op, status_post_op, Res, FATTR3_LEN, FSINFO_DTPREF, FSINFO_PROPERTIES, FSINFO_RTMAX,
    FSINFO_RTMULT, FSINFO_RTPREF, FSINFO_TIME_DELTA, FSINFO_WTMAX, FSINFO_WTMULT, FSINFO_WTPREF, PATHCONF_LINKMAX,
};
use crate::proto::nfs3::*;
use crate::ulp::tree::{self, Tree};
use crate::ulp::UlpResults;

/// FSSTAT (RFC 1813 3.3.18): [`tree::TOTAL_BYTES`] and [`tree::MAX_NODES`] less what the
/// tree uses; invarsec 0.
pub(super) fn fsstat(tree: &Tree, r: &mut Reader<'_>) -> Res {
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
pub(super) fn fsinfo(tree: &Tree, r: &mut Reader<'_>) -> Res {
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
pub(super) fn pathconf(tree: &Tree, r: &mut Reader<'_>) -> Res {
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
