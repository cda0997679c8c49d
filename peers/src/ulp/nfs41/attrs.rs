//! fattr4 (RFC 8881 5): the attributes served, encoded in bit order, and those SETATTR and
//! OPEN's createattrs take.

use rpcrdma_codec::xdr::Reader;

use super::super::nfs3::{FSINFO_RTMAX, FSINFO_TIME_DELTA, FSINFO_WTMAX, PATHCONF_LINKMAX};
use super::super::tree::{Ftype, NodeId, Tree, FSID, MAX_FILE_SIZE, MAX_NODES, NAME_MAX, TOTAL_BYTES};
use super::LEASE_TIME;
use crate::proto::nfs41::*;

/// The attributes served (every REQUIRED one, RFC 8881 5.6, and the RECOMMENDED ones the
/// Linux client asks and this tree can answer).
pub(super) const SUPPORTED: [u32; 38] = [
    FATTR4_SUPPORTED_ATTRS,
    FATTR4_TYPE,
    FATTR4_FH_EXPIRE_TYPE,
    FATTR4_CHANGE,
    FATTR4_SIZE,
    FATTR4_LINK_SUPPORT,
    FATTR4_SYMLINK_SUPPORT,
    FATTR4_NAMED_ATTR,
    FATTR4_FSID,
    FATTR4_UNIQUE_HANDLES,
    FATTR4_LEASE_TIME,
    FATTR4_RDATTR_ERROR,
    FATTR4_FILEHANDLE,
    FATTR4_FILEID,
    FATTR4_FILES_AVAIL,
    FATTR4_FILES_FREE,
    FATTR4_FILES_TOTAL,
    FATTR4_MAXFILESIZE,
    FATTR4_MAXLINK,
    FATTR4_MAXNAME,
    FATTR4_MAXREAD,
    FATTR4_MAXWRITE,
    FATTR4_MODE,
    FATTR4_NUMLINKS,
    FATTR4_OWNER,
    FATTR4_OWNER_GROUP,
    FATTR4_RAWDEV,
    FATTR4_SPACE_AVAIL,
    FATTR4_SPACE_FREE,
    FATTR4_SPACE_TOTAL,
    FATTR4_SPACE_USED,
    FATTR4_TIME_ACCESS,
    FATTR4_TIME_DELTA,
    FATTR4_TIME_METADATA,
    FATTR4_TIME_MODIFY,
    FATTR4_MOUNTED_ON_FILEID,
    FATTR4_FS_LAYOUT_TYPES,
    FATTR4_SUPPATTR_EXCLCREAT,
];

/// The attributes SETATTR takes (the write-only time_*_set among them, RFC 8881 5.8.2).
pub(super) const SETTABLE: [u32; 6] =
    [FATTR4_SIZE, FATTR4_MODE, FATTR4_OWNER, FATTR4_OWNER_GROUP, FATTR4_TIME_ACCESS_SET, FATTR4_TIME_MODIFY_SET];

fn supported(n: u32) -> bool {
    SUPPORTED.contains(&n)
}

/// The set bits of a bitmap4, in increasing order.
fn bits(mask: &[u32]) -> impl Iterator<Item = u32> + '_ {
    mask.iter()
        .enumerate()
        .flat_map(|(w, word)| (0..32).filter(move |b| word & (1 << b) != 0).map(move |b| w as u32 * 32 + b))
}

/// The attributes of `id` that `req` asks and this server supports (RFC 8881 18.7.3: the
/// result bitmap says which).
pub(super) fn encode(tree: &Tree, change: u64, id: NodeId, req: &[u32]) -> Fattr {
    let a = tree.attrs(id);
    let mut x = Xdr::new();
    let mut mask = Vec::new();
    let time = |x: &mut Xdr, (s, ns): (u32, u32)| _ = x.u64(s as u64).u32(ns);
    for n in bits(req).filter(|n| supported(*n)) {
        mask.push(n);
        match n {
            FATTR4_SUPPORTED_ATTRS => _ = x.bitmap(&bitmap_of(&SUPPORTED)),
            FATTR4_TYPE => {
                _ = x.u32(match a.ftype {
                    Ftype::Reg => NF4REG,
                    Ftype::Dir => NF4DIR,
                    Ftype::Lnk => NF4LNK,
                })
            }
            // FH4_PERSISTENT.
            FATTR4_FH_EXPIRE_TYPE => _ = x.u32(0),
            FATTR4_CHANGE => _ = x.u64(change),
            FATTR4_SIZE => _ = x.u64(a.size),
            FATTR4_LINK_SUPPORT | FATTR4_NAMED_ATTR => _ = x.bool(false),
            FATTR4_SYMLINK_SUPPORT | FATTR4_UNIQUE_HANDLES => _ = x.bool(true),
            FATTR4_FSID => _ = x.u64(FSID).u64(0),
            FATTR4_LEASE_TIME => _ = x.u32(LEASE_TIME),
            FATTR4_RDATTR_ERROR => _ = x.u32(NFS4_OK),
            FATTR4_FILEHANDLE => _ = x.opaque(&tree.handle(id)),
            FATTR4_FILEID | FATTR4_MOUNTED_ON_FILEID => _ = x.u64(a.fileid),
            FATTR4_FILES_AVAIL | FATTR4_FILES_FREE => _ = x.u64((MAX_NODES - tree.len()) as u64),
            FATTR4_FILES_TOTAL => _ = x.u64(MAX_NODES as u64),
            FATTR4_MAXFILESIZE => _ = x.u64(MAX_FILE_SIZE),
            FATTR4_MAXLINK => _ = x.u32(PATHCONF_LINKMAX),
            FATTR4_MAXNAME => _ = x.u32(NAME_MAX as u32),
            FATTR4_MAXREAD => _ = x.u64(FSINFO_RTMAX as u64),
            FATTR4_MAXWRITE => _ = x.u64(FSINFO_WTMAX as u64),
            FATTR4_MODE => _ = x.u32(a.mode),
            FATTR4_NUMLINKS => _ = x.u32(a.nlink),
            FATTR4_OWNER => _ = x.opaque(a.uid.to_string().as_bytes()),
            FATTR4_OWNER_GROUP => _ = x.opaque(a.gid.to_string().as_bytes()),
            FATTR4_RAWDEV => _ = x.u32(a.rdev.0).u32(a.rdev.1),
            FATTR4_SPACE_AVAIL | FATTR4_SPACE_FREE => _ = x.u64(TOTAL_BYTES.saturating_sub(tree.used_bytes())),
            FATTR4_SPACE_TOTAL => _ = x.u64(TOTAL_BYTES),
            FATTR4_SPACE_USED => _ = x.u64(a.used),
            FATTR4_TIME_ACCESS => time(&mut x, a.atime),
            FATTR4_TIME_DELTA => time(&mut x, FSINFO_TIME_DELTA),
            FATTR4_TIME_METADATA => time(&mut x, a.ctime),
            FATTR4_TIME_MODIFY => time(&mut x, a.mtime),
            // No pNFS: an empty layouttype4 list.
            FATTR4_FS_LAYOUT_TYPES => _ = x.u32(0),
            FATTR4_SUPPATTR_EXCLCREAT => _ = x.bitmap(&bitmap_of(&[FATTR4_SIZE, FATTR4_MODE])),
            _ => unreachable!("every supported attribute is encoded"),
        }
    }
    Fattr { mask: bitmap_of(&mask), vals: x.into_inner() }
}

/// What a SETATTR or createattrs asks: the size to apply, and the bitmap of the attributes
/// taken (attrsset). An attribute not supported is NFS4ERR_ATTRNOTSUPP, a supported one that
/// cannot be set NFS4ERR_INVAL (RFC 8881 18.30.3), values that do not decode NFS4ERR_BADXDR.
pub(super) fn settable(a: &Fattr) -> Result<(Option<u64>, Vec<u32>), u32> {
    let mut r = Reader::new(&a.vals);
    let mut size = None;
    let bad = |_| NFS4ERR_BADXDR;
    for n in bits(&a.mask) {
        match n {
            FATTR4_SIZE => size = Some(r.u64("size").map_err(bad)?),
            FATTR4_MODE => _ = r.u32("mode").map_err(bad)?,
            FATTR4_OWNER | FATTR4_OWNER_GROUP => _ = r.opaque("owner", NFS4_OPAQUE_LIMIT).map_err(bad)?,
            FATTR4_TIME_ACCESS_SET | FATTR4_TIME_MODIFY_SET => {
                if r.u32("set_it").map_err(bad)? == SET_TO_CLIENT_TIME4 {
                    r.take(12, "nfstime4").map_err(bad)?;
                }
            }
            n if supported(n) => return Err(NFS4ERR_INVAL),
            _ => return Err(NFS4ERR_ATTRNOTSUPP),
        }
    }
    if !r.is_empty() {
        return Err(NFS4ERR_BADXDR);
    }
    Ok((size, bitmap_of(&bits(&a.mask).filter(|n| SETTABLE.contains(n)).collect::<Vec<_>>())))
}
