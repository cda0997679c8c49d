//! NFSv4.0 (RFC 7530) as much as both sides of a conformance run need: the COMPOUND
//! procedure with PUTFH, PUTROOTFH, LOOKUP, GETFH and READ, the call encoder a requester
//! sends and the reply decoder that judges a peer. Minor version 0 needs no session, and READ
//! with a special stateid needs no open (RFC 7530 9.1.4.3), so one COMPOUND reads a file
//! whose handle an NFSv3 LOOKUP found (the Linux server and the reference tree share handles
//! across versions). READ carries the READ-bypass stateid, not the anonymous one: Linux
//! answers the anonymous stateid NFS4ERR_GRACE during its grace period (fs/nfsd/nfs4state.c,
//! check_special_stateids), the bypass stateid never. READ4resok's data is DDP-eligible (RFC 8267 6.1), and a COMPOUND holds
//! as many such items as it has READs (RFC 8267 6.4.1).

use rpcrdma_codec::xdr::{round_up4, Reader, Writer};

pub use super::nfs3::NFS_PROGRAM;

pub const NFS_V4: u32 = 4;

// Procedures (RFC 7530 16).
pub const NFSPROC4_NULL: u32 = 0;
pub const NFSPROC4_COMPOUND: u32 = 1;

// nfs_opnum4 (RFC 7531, the NFSv4.0 XDR).
pub const OP_GETFH: u32 = 10;
pub const OP_LOOKUP: u32 = 15;
pub const OP_PUTFH: u32 = 22;
pub const OP_PUTROOTFH: u32 = 24;
pub const OP_READ: u32 = 25;
/// The highest operation number of minor version 0 (OP_RELEASE_LOCKOWNER).
pub const OP_LAST_V40: u32 = 39;
pub const OP_ILLEGAL: u32 = 10044;

// nfsstat4 (RFC 7530 13): the codes shared with NFSv3 keep their values.
pub const NFS4_OK: u32 = 0;
pub const NFS4ERR_NOENT: u32 = 2;
pub const NFS4ERR_NOTDIR: u32 = 20;
pub const NFS4ERR_ISDIR: u32 = 21;
pub const NFS4ERR_INVAL: u32 = 22;
pub const NFS4ERR_BADHANDLE: u32 = 10001;
pub const NFS4ERR_NOTSUPP: u32 = 10004;
pub const NFS4ERR_NOFILEHANDLE: u32 = 10020;
pub const NFS4ERR_MINOR_VERS_MISMATCH: u32 = 10021;
pub const NFS4ERR_BAD_STATEID: u32 = 10025;
pub const NFS4ERR_BADXDR: u32 = 10036;
pub const NFS4ERR_OP_ILLEGAL: u32 = 10044;

/// nfs_fh4 opaque<NFS4_FHSIZE> (RFC 7530 2.2).
pub const NFS4_FHSIZE: u32 = 128;
/// stateid4: seqid and a 12-byte other (RFC 7530 9.1.4).
pub const STATEID_LEN: usize = 16;
/// The anonymous stateid, all zeros: READ without an open (RFC 7530 9.1.4.3).
pub const ANONYMOUS_STATEID: [u8; STATEID_LEN] = [0; STATEID_LEN];
/// The READ bypass stateid, all ones (RFC 7530 9.1.4.3).
pub const READ_BYPASS_STATEID: [u8; STATEID_LEN] = [0xff; STATEID_LEN];

/// One operation of a COMPOUND4args (nfs_argop4).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    PutRootFh,
    PutFh(Vec<u8>),
    Lookup(String),
    GetFh,
    /// READ4args with the READ-bypass stateid: offset, count.
    Read {
        offset: u64,
        count: u32,
    },
}

impl Op {
    fn encoded_len(&self) -> usize {
        4 + match self {
            Op::PutRootFh | Op::GetFh => 0,
            Op::PutFh(fh) => 4 + round_up4(fh.len()),
            Op::Lookup(name) => 4 + round_up4(name.len()),
            Op::Read { .. } => STATEID_LEN + 8 + 4,
        }
    }

    fn encode(&self, w: &mut Writer<'_>) -> Result<(), rpcrdma_codec::EncodeError> {
        match self {
            Op::PutRootFh => w.u32(OP_PUTROOTFH),
            Op::GetFh => w.u32(OP_GETFH),
            Op::PutFh(fh) => {
                w.u32(OP_PUTFH)?;
                w.opaque(fh)
            }
            Op::Lookup(name) => {
                w.u32(OP_LOOKUP)?;
                w.opaque(name.as_bytes())
            }
            Op::Read { offset, count } => {
                w.u32(OP_READ)?;
                w.bytes(&READ_BYPASS_STATEID)?;
                w.u64(*offset)?;
                w.u32(*count)
            }
        }
    }
}

/// COMPOUND4args { tag, minorversion 0, argarray }.
pub fn compound_args(tag: &str, ops: &[Op]) -> Vec<u8> {
    let len = 4 + round_up4(tag.len()) + 4 + 4 + ops.iter().map(Op::encoded_len).sum::<usize>();
    let mut buf = vec![0u8; len];
    let mut w = Writer::new(&mut buf);
    let mut put = || -> Result<(), rpcrdma_codec::EncodeError> {
        w.opaque(tag.as_bytes())?;
        w.u32(0)?;
        w.u32(ops.len() as u32)?;
        ops.iter().try_for_each(|op| op.encode(&mut w))
    };
    put().expect("the arguments' length is computed exactly");
    buf
}

/// READ4resok as found in a reply: eof, the data length word, and where the data lies in the
/// results (`None` when it was reduced, i.e. went through a write chunk).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Read4 {
    pub eof: bool,
    pub data_len: u32,
    pub data_at: Option<usize>,
}

/// One nfs_resop4: the operation, its status, and what the checks look at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpResult {
    pub op: u32,
    pub status: u32,
    /// READ's results on NFS4_OK.
    pub read: Option<Read4>,
    /// GETFH's handle on NFS4_OK.
    pub fh: Option<Vec<u8>>,
}

/// COMPOUND4res decoded: the status, the results in order, and how many bytes follow them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompoundRes {
    pub status: u32,
    pub results: Vec<OpResult>,
    pub trailing: usize,
}

/// COMPOUND4res from `results`. `reduced(k)` says whether the k-th READ's data was reduced
/// (its length word inline, its bytes and XDR roundup not: RFC 8166 3.4.4.1, 3.4.4.4), as a
/// requester knows from the write chunk it offered for that READ. None when the results do
/// not decode as that.
pub fn compound_res(results: &[u8], reduced: impl Fn(usize) -> bool) -> Option<CompoundRes> {
    let mut reads = 0;
    let (status, results, trailing) = read_compound_res(results, |op, op_status, r| {
        let mut res = OpResult { op, status: op_status, read: None, fh: None };
        if op_status == NFS4_OK {
            match op {
                OP_PUTFH | OP_PUTROOTFH | OP_LOOKUP => {}
                OP_GETFH => res.fh = Some(r.opaque("object", NFS4_FHSIZE).ok()?.to_vec()),
                OP_READ => {
                    let eof = r.bool("eof").ok()?;
                    let data_len = r.u32("data").ok()?;
                    let data_at = if reduced(reads) {
                        None
                    } else {
                        let at = r.position();
                        r.take(round_up4(data_len as usize), "data").ok()?;
                        Some(at)
                    };
                    reads += 1;
                    res.read = Some(Read4 { eof, data_len, data_at });
                }
                _ => return None,
            }
        }
        Some(res)
    })?;
    Some(CompoundRes { status, results, trailing })
}

/// COMPOUND4res of any minor version (RFC 7530 16.2.3, RFC 8881 16.2.3): the status, the tag
/// and the count of resarray, then each nfs_resop4's resop and status, from which `result`
/// reads the rest of that result off `r`. Returns the status, the results in order, and how
/// many bytes follow them; None when any of it does not decode (or `result` says None).
pub(super) fn read_compound_res<'a, T>(
    results: &'a [u8],
    mut result: impl FnMut(u32, u32, &mut Reader<'a>) -> Option<T>,
) -> Option<(u32, Vec<T>, usize)> {
    let mut r = Reader::new(results);
    let status = r.u32("status").ok()?;
    r.opaque("tag", u32::MAX).ok()?;
    let n = r.u32("resarray").ok()?;
    let mut out = Vec::new();
    for _ in 0..n {
        let op = r.u32("resop").ok()?;
        let op_status = r.u32("status").ok()?;
        out.push(result(op, op_status, &mut r)?);
    }
    Some((status, out, r.remaining()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(w: &[u32]) -> Vec<u8> {
        w.iter().flat_map(|x| x.to_be_bytes()).collect()
    }

    #[test]
    fn compound_args_layout() {
        // COMPOUND4args (RFC 7530 16.2): tag "t", minorversion 0, 2 ops: PUTFH (4-byte handle), READ.
        let a = compound_args("t", &[Op::PutFh(vec![1, 2, 3, 4]), Op::Read { offset: 7, count: 5 }]);
        let mut want = words(&[1]);
        want.extend_from_slice(b"t\0\0\0");
        want.extend(words(&[0, 2, 22, 4]));
        want.extend_from_slice(&[1, 2, 3, 4]);
        want.extend(words(&[25, !0, !0, !0, !0, 0, 7, 5]));
        assert_eq!(a, want);
    }

    #[test]
    fn compound_res_with_one_reduced_and_one_inline_read() {
        // status OK, empty tag, 2 results: READ eof 1 data<5> reduced; READ eof 0 data<2> inline.
        let mut b = words(&[0, 0, 2, 25, 0, 1, 5, 25, 0, 0, 2]);
        b.extend_from_slice(&[9, 9, 0, 0]);
        let res = compound_res(&b, |k| k == 0).unwrap();
        assert_eq!(res.trailing, 0);
        assert_eq!(res.results[0].read, Some(Read4 { eof: true, data_len: 5, data_at: None }));
        assert_eq!(res.results[1].read, Some(Read4 { eof: false, data_len: 2, data_at: Some(44) }));
        // Decoded as if both were reduced, the second READ's data is left over.
        assert_eq!(compound_res(&b, |_| true).unwrap().trailing, 4);
    }

    #[test]
    fn a_failed_op_ends_its_result() {
        let b = words(&[NFS4ERR_NOFILEHANDLE, 0, 1, 25, NFS4ERR_NOFILEHANDLE]);
        let res = compound_res(&b, |_| true).unwrap();
        assert_eq!(res.results, [OpResult { op: OP_READ, status: NFS4ERR_NOFILEHANDLE, read: None, fh: None }]);
    }
}
