//! NFSv3 (RFC 1813) as both sides of a conformance run speak it: program, procedures and
//! status codes, the test export's conventions (root handle, file names, file contents), the
//! argument encoders a requester needs to drive a peer's chunks, and the result decoders that
//! judge its replies. READ and READLINK results are DDP-eligible (write chunks), WRITE data is
//! DDP-eligible (read chunks), READDIR replies grow past any inline threshold (reply chunk).

use rpcrdma_codec::xdr::{round_up4, Reader, Writer};

pub const NFS_PROGRAM: u32 = 100003;
pub const NFS_V3: u32 = 3;

// Procedures (RFC 1813 3).
pub const NFSPROC3_NULL: u32 = 0;
pub const NFSPROC3_GETATTR: u32 = 1;
pub const NFSPROC3_SETATTR: u32 = 2;
pub const NFSPROC3_LOOKUP: u32 = 3;
pub const NFSPROC3_ACCESS: u32 = 4;
pub const NFSPROC3_READLINK: u32 = 5;
pub const NFSPROC3_READ: u32 = 6;
pub const NFSPROC3_WRITE: u32 = 7;
pub const NFSPROC3_CREATE: u32 = 8;
pub const NFSPROC3_SYMLINK: u32 = 10;
pub const NFSPROC3_READDIR: u32 = 16;
pub const NFSPROC3_READDIRPLUS: u32 = 17;
pub const NFSPROC3_FSSTAT: u32 = 18;
pub const NFSPROC3_FSINFO: u32 = 19;
pub const NFSPROC3_PATHCONF: u32 = 20;
pub const NFSPROC3_COMMIT: u32 = 21;

// nfsstat3 (RFC 1813 2.6).
pub const NFS3_OK: u32 = 0;
pub const NFS3ERR_PERM: u32 = 1;
pub const NFS3ERR_NOENT: u32 = 2;
pub const NFS3ERR_IO: u32 = 5;
pub const NFS3ERR_ACCES: u32 = 13;
pub const NFS3ERR_EXIST: u32 = 17;
pub const NFS3ERR_NOTDIR: u32 = 20;
pub const NFS3ERR_ISDIR: u32 = 21;
pub const NFS3ERR_INVAL: u32 = 22;
pub const NFS3ERR_FBIG: u32 = 27;
pub const NFS3ERR_NOSPC: u32 = 28;
pub const NFS3ERR_NAMETOOLONG: u32 = 63;
pub const NFS3ERR_STALE: u32 = 70;
pub const NFS3ERR_BADHANDLE: u32 = 10001;
pub const NFS3ERR_NOT_SYNC: u32 = 10002;
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
// createmode3 (RFC 1813 3.3.8).
pub const UNCHECKED: u32 = 0;
pub const GUARDED: u32 = 1;
pub const EXCLUSIVE: u32 = 2;

/// The root file handle of an `fsid=1` export on Linux; the reference tree uses it too.
pub const ROOT_FH: [u8; 8] = [0x01, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00, 0x00];

/// Files every peer's export holds (the Linux VM creates them; the reference tree has them).
pub const FILE_FIVE: &str = "five";
pub const FILE_BIG: &str = "big";
pub const FILE_SCRATCH: &str = "scratch";
pub const DIR_MANY: &str = "dir";

/// Arguments of exactly `len` bytes, written by `f`.
fn encode(len: usize, f: impl FnOnce(&mut Writer<'_>) -> Result<(), rpcrdma_codec::EncodeError>) -> Vec<u8> {
    let mut buf = vec![0u8; len];
    let mut w = Writer::new(&mut buf);
    f(&mut w).expect("the arguments' length is computed exactly");
    assert_eq!(w.len(), len, "the arguments' length is computed exactly");
    buf
}

/// The XDR length of a variable-length opaque (RFC 4506 4.10): a length word, the bytes, the pad.
fn opaque_len(bytes: &[u8]) -> usize {
    4 + round_up4(bytes.len())
}

/// GETATTR3args: the object's handle.
pub fn getattr_args(fh: &[u8]) -> Vec<u8> {
    encode(opaque_len(fh), |w| w.opaque(fh))
}

/// LOOKUP3args: diropargs3 { dir, name }.
pub fn lookup_args(dir: &[u8], name: &str) -> Vec<u8> {
    encode(opaque_len(dir) + opaque_len(name.as_bytes()), |w| {
        w.opaque(dir)?;
        w.opaque(name.as_bytes())
    })
}

/// READ3args { file, offset, count }.
pub fn read_args(fh: &[u8], offset: u64, count: u32) -> Vec<u8> {
    encode(opaque_len(fh) + 8 + 4, |w| {
        w.opaque(fh)?;
        w.u64(offset)?;
        w.u32(count)
    })
}

/// WRITE3args { file, offset, count, stable = FILE_SYNC, data<> } split around the data item:
/// (bytes up to and including the data length word, the data). The data is what a requester
/// moves into a read chunk at the split position (RFC 8267 3.2, RFC 8166 3.4.4.1).
pub fn write_args_split(fh: &[u8], offset: u64, data: &[u8]) -> Vec<u8> {
    encode(opaque_len(fh) + 8 + 4 + 4 + 4, |w| {
        w.opaque(fh)?;
        w.u64(offset)?;
        w.u32(data.len() as u32)?;
        w.u32(2)?; // FILE_SYNC
        w.u32(data.len() as u32)
    })
}

/// READDIR3args { dir, cookie, cookieverf, count }.
pub fn readdir_args(dir: &[u8], cookie: u64, verf: [u8; 8], count: u32) -> Vec<u8> {
    encode(opaque_len(dir) + 8 + 8 + 4, |w| {
        w.opaque(dir)?;
        w.u64(cookie)?;
        w.bytes(&verf)?;
        w.u32(count)
    })
}

/// nfsstat3 from the first word of results.
pub fn status(results: &[u8]) -> Option<u32> {
    Reader::new(results).u32("status").ok()
}

/// Skips a post_op_attr (bool, then fattr3 of 84 bytes).
fn skip_post_op_attr(r: &mut Reader<'_>) -> Option<()> {
    if r.bool("attributes_follow").ok()? {
        r.take(84, "fattr3").ok()?;
    }
    Some(())
}

/// LOOKUP3res: the object handle on NFS3_OK.
pub fn lookup_fh(results: &[u8]) -> Option<Vec<u8>> {
    let mut r = Reader::new(results);
    if r.u32("status").ok()? != 0 {
        return None;
    }
    Some(r.opaque("object", 64).ok()?.to_vec())
}

/// The parts of READ3resok: count, eof, the data length word, and the offset of the data
/// within `results` (the data itself is absent when it went through a write chunk).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadResult {
    pub status: u32,
    pub count: u32,
    pub eof: bool,
    pub data_len: u32,
    pub data_at: usize,
}

pub fn read_result(results: &[u8]) -> Option<ReadResult> {
    let mut r = Reader::new(results);
    let status = r.u32("status").ok()?;
    skip_post_op_attr(&mut r)?;
    if status != 0 {
        return Some(ReadResult { status, count: 0, eof: false, data_len: 0, data_at: r.position() });
    }
    let count = r.u32("count").ok()?;
    let eof = r.bool("eof").ok()?;
    let data_len = r.u32("data").ok()?;
    Some(ReadResult { status, count, eof, data_len, data_at: r.position() })
}

/// READDIR3res decoded whole: the status and how many entries, when `results` holds
/// exactly one complete READDIR3res (nothing missing, nothing after it).
pub fn readdir_result(results: &[u8]) -> Option<(u32, usize)> {
    let mut r = Reader::new(results);
    let status = r.u32("status").ok()?;
    skip_post_op_attr(&mut r)?;
    let mut entries = 0;
    if status == 0 {
        r.take(8, "cookieverf").ok()?;
        while r.bool("value_follows").ok()? {
            r.u64("fileid").ok()?;
            r.opaque("name", 255).ok()?;
            r.u64("cookie").ok()?;
            entries += 1;
        }
        r.bool("eof").ok()?;
    }
    r.is_empty().then_some((status, entries))
}

/// WRITE3resok: status and count.
pub fn write_result(results: &[u8]) -> Option<(u32, u32)> {
    let mut r = Reader::new(results);
    let status = r.u32("status").ok()?;
    // wcc_data: pre_op_attr (bool + 24 bytes), post_op_attr.
    if r.bool("before").ok()? {
        r.take(24, "wcc_attr").ok()?;
    }
    skip_post_op_attr(&mut r)?;
    if status != 0 {
        return Some((status, 0));
    }
    Some((status, r.u32("count").ok()?))
}

/// Byte `i` of a test-export file created with `len` bytes: `(i * 7 + len) % 251`. The
/// reference tree and the Linux VM's export hold the same files.
pub fn content_byte(len: usize, i: usize) -> u8 {
    ((i as u64 * 7 + len as u64) % 251) as u8
}

/// The initial contents of a test-export file of `len` bytes.
pub fn file_contents(len: usize) -> Vec<u8> {
    (0..len).map(|i| content_byte(len, i)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_args_layout() {
        // nfs_fh3 (4 + 8), offset (8), count (4): RFC 1813 READ3args.
        let a = read_args(&ROOT_FH, 0x1_0000_0002, 5);
        assert_eq!(a.len(), 24);
        assert_eq!(&a[..4], &[0, 0, 0, 8]);
        assert_eq!(&a[12..20], &[0, 0, 0, 1, 0, 0, 0, 2]);
        assert_eq!(&a[20..], &[0, 0, 0, 5]);
    }

    #[test]
    fn read_result_with_reduced_data() {
        // status 0, no attributes, count 5, eof TRUE, data length 5 and no data (in a chunk).
        let b: Vec<u8> = [0u32, 0, 5, 1, 5].iter().flat_map(|w| w.to_be_bytes()).collect();
        let r = read_result(&b).unwrap();
        assert_eq!(r, ReadResult { status: 0, count: 5, eof: true, data_len: 5, data_at: 20 });
    }

    #[test]
    fn contents_formula() {
        assert_eq!(file_contents(5), vec![5, 12, 19, 26, 33]);
    }
}
