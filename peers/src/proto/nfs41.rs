//! NFSv4.1 (RFC 8881) and the NFSv4.2 operations (RFC 7862) both sides of a conformance run
//! need: the COMPOUND operations of sessions (EXCHANGE_ID, CREATE_SESSION with fore and back
//! channel attributes and the callback program, SEQUENCE, BIND_CONN_TO_SESSION,
//! DESTROY_SESSION, DESTROY_CLIENTID, RECLAIM_COMPLETE) and of a workload (PUTROOTFH, LOOKUP,
//! GETFH, GETATTR, OPEN, READ, WRITE, CLOSE, READDIR, DELEGRETURN, ...). One [`Op`] type is
//! encoded by a requester ([`compound_args`]) and decoded by a responder ([`Op::decode`]);
//! one [`Res`] type is encoded by a responder ([`Res::encode`]) and decoded by a requester
//! ([`compound_res`]). The XDR is RFC 8881 section 18's (RFC 5662) and RFC 7862's.
//!
//! The NFSv4.0 vocabulary (procedure numbers, the operations and codes shared with minor
//! version 0) stays in [`super::nfs4`] and is re-exported here.

use rpcrdma_codec::xdr::{round_up4, Reader};

pub use super::nfs4::{
    NFS4ERR_BADHANDLE, NFS4ERR_BADXDR, NFS4ERR_BAD_STATEID, NFS4ERR_INVAL, NFS4ERR_ISDIR, NFS4ERR_MINOR_VERS_MISMATCH,
    NFS4ERR_NOENT, NFS4ERR_NOFILEHANDLE, NFS4ERR_NOTDIR, NFS4ERR_NOTSUPP, NFS4ERR_OP_ILLEGAL, NFS4_FHSIZE, NFS4_OK,
    NFSPROC4_COMPOUND, NFSPROC4_NULL, NFS_PROGRAM, NFS_V4, OP_GETFH, OP_ILLEGAL, OP_LOOKUP, OP_PUTFH, OP_PUTROOTFH,
    OP_READ, STATEID_LEN,
};

/// Minor versions (RFC 8881 2.7, RFC 7862 1).
pub const MINOR_V1: u32 = 1;
pub const MINOR_V2: u32 = 2;

/// NFS4_OPAQUE_LIMIT (RFC 8881 18 / RFC 5662): the bound of owners, scopes and major ids.
pub const NFS4_OPAQUE_LIMIT: u32 = 1024;
/// sessionid4: opaque[NFS4_SESSIONID_SIZE] (RFC 8881 3.3).
pub const NFS4_SESSIONID_SIZE: usize = 16;
pub type SessionId = [u8; NFS4_SESSIONID_SIZE];
pub type Stateid = [u8; STATEID_LEN];
pub type Verifier = [u8; 8];

// nfs_opnum4 (RFC 8881 16.1 / RFC 5662; RFC 7862 15) beyond the ones minor version 0 shares.
pub const OP_ACCESS: u32 = 3;
pub const OP_CLOSE: u32 = 4;
pub const OP_COMMIT: u32 = 5;
pub const OP_CREATE: u32 = 6;
pub const OP_DELEGPURGE: u32 = 7;
pub const OP_DELEGRETURN: u32 = 8;
pub const OP_GETATTR: u32 = 9;
pub const OP_LOCK: u32 = 12;
pub const OP_LOOKUPP: u32 = 16;
pub const OP_OPEN: u32 = 18;
pub const OP_OPEN_CONFIRM: u32 = 20;
pub const OP_READDIR: u32 = 26;
pub const OP_READLINK: u32 = 27;
pub const OP_RENEW: u32 = 30;
pub const OP_RESTOREFH: u32 = 31;
pub const OP_SAVEFH: u32 = 32;
pub const OP_SETATTR: u32 = 34;
pub const OP_SETCLIENTID: u32 = 35;
pub const OP_SETCLIENTID_CONFIRM: u32 = 36;
pub const OP_WRITE: u32 = 38;
pub const OP_RELEASE_LOCKOWNER: u32 = 39;
pub const OP_BACKCHANNEL_CTL: u32 = 40;
pub const OP_BIND_CONN_TO_SESSION: u32 = 41;
pub const OP_EXCHANGE_ID: u32 = 42;
pub const OP_CREATE_SESSION: u32 = 43;
pub const OP_DESTROY_SESSION: u32 = 44;
pub const OP_FREE_STATEID: u32 = 45;
pub const OP_SECINFO_NO_NAME: u32 = 52;
pub const OP_SEQUENCE: u32 = 53;
pub const OP_TEST_STATEID: u32 = 55;
pub const OP_DESTROY_CLIENTID: u32 = 57;
pub const OP_RECLAIM_COMPLETE: u32 = 58;
/// The highest operation number of minor version 1 (OP_RECLAIM_COMPLETE).
pub const OP_LAST_V41: u32 = 58;
// NFSv4.2 (RFC 7862 15).
pub const OP_ALLOCATE: u32 = 59;
pub const OP_COPY: u32 = 60;
pub const OP_DEALLOCATE: u32 = 62;
pub const OP_READ_PLUS: u32 = 68;
pub const OP_SEEK: u32 = 69;
pub const OP_CLONE: u32 = 71;
/// The highest operation number of minor version 2 (OP_CLONE).
pub const OP_LAST_V42: u32 = 71;

// nfsstat4 beyond minor version 0's in super::nfs4 (RFC 8881 15.1).
pub const NFS4ERR_ACCESS: u32 = 13;
pub const NFS4ERR_EXIST: u32 = 17;
pub const NFS4ERR_FBIG: u32 = 27;
pub const NFS4ERR_NOSPC: u32 = 28;
pub const NFS4ERR_NAMETOOLONG: u32 = 63;
pub const NFS4ERR_STALE: u32 = 70;
pub const NFS4ERR_BAD_COOKIE: u32 = 10003;
pub const NFS4ERR_TOOSMALL: u32 = 10005;
pub const NFS4ERR_SERVERFAULT: u32 = 10006;
pub const NFS4ERR_DELAY: u32 = 10008;
pub const NFS4ERR_CLID_INUSE: u32 = 10017;
pub const NFS4ERR_NOT_SAME: u32 = 10027;
pub const NFS4ERR_SYMLINK: u32 = 10029;
pub const NFS4ERR_RESTOREFH: u32 = 10030;
pub const NFS4ERR_ATTRNOTSUPP: u32 = 10032;
pub const NFS4ERR_LOCKS_HELD: u32 = 10037;
pub const NFS4ERR_OPENMODE: u32 = 10038;
pub const NFS4ERR_STALE_CLIENTID: u32 = 10022;
pub const NFS4ERR_BAD_SEQID: u32 = 10026;
pub const NFS4ERR_BADSESSION: u32 = 10052;
pub const NFS4ERR_BADSLOT: u32 = 10053;
pub const NFS4ERR_COMPLETE_ALREADY: u32 = 10054;
pub const NFS4ERR_CONN_NOT_BOUND_TO_SESSION: u32 = 10055;
pub const NFS4ERR_SEQ_MISORDERED: u32 = 10063;
pub const NFS4ERR_SEQUENCE_POS: u32 = 10064;
pub const NFS4ERR_REQ_TOO_BIG: u32 = 10065;
pub const NFS4ERR_RETRY_UNCACHED_REP: u32 = 10068;
pub const NFS4ERR_TOO_MANY_OPS: u32 = 10070;
pub const NFS4ERR_OP_NOT_IN_SESSION: u32 = 10071;
pub const NFS4ERR_CLIENTID_BUSY: u32 = 10074;
pub const NFS4ERR_NOT_ONLY_OP: u32 = 10081;
pub const NFS4ERR_WRONG_TYPE: u32 = 10083;

// EXCHANGE_ID flags (RFC 8881 18.35).
pub const EXCHGID4_FLAG_SUPP_MOVED_REFER: u32 = 0x0000_0001;
pub const EXCHGID4_FLAG_SUPP_MOVED_MIGR: u32 = 0x0000_0002;
pub const EXCHGID4_FLAG_BIND_PRINC_STATEID: u32 = 0x0000_0100;
pub const EXCHGID4_FLAG_USE_NON_PNFS: u32 = 0x0001_0000;
pub const EXCHGID4_FLAG_USE_PNFS_MDS: u32 = 0x0002_0000;
pub const EXCHGID4_FLAG_USE_PNFS_DS: u32 = 0x0004_0000;
pub const EXCHGID4_FLAG_MASK_PNFS: u32 = 0x0007_0000;
pub const EXCHGID4_FLAG_UPD_CONFIRMED_REC_A: u32 = 0x4000_0000;
pub const EXCHGID4_FLAG_CONFIRMED_R: u32 = 0x8000_0000;
// state_protect_how4 (RFC 8881 18.35).
pub const SP4_NONE: u32 = 0;
pub const SP4_MACH_CRED: u32 = 1;
pub const SP4_SSV: u32 = 2;

// CREATE_SESSION flags (RFC 8881 18.36).
pub const CREATE_SESSION4_FLAG_PERSIST: u32 = 0x1;
pub const CREATE_SESSION4_FLAG_CONN_BACK_CHAN: u32 = 0x2;
pub const CREATE_SESSION4_FLAG_CONN_RDMA: u32 = 0x4;
// callback_sec_parms4's flavours (RFC 5531, RFC 2203).
pub const AUTH_NONE: u32 = 0;
pub const AUTH_SYS: u32 = 1;
pub const RPCSEC_GSS: u32 = 6;

// SEQUENCE4resok's sr_status_flags (RFC 8881 18.46.3).
pub const SEQ4_STATUS_CB_PATH_DOWN: u32 = 0x0000_0001;
pub const SEQ4_STATUS_CB_GSS_CONTEXTS_EXPIRING: u32 = 0x0000_0002;
pub const SEQ4_STATUS_CB_GSS_CONTEXTS_EXPIRED: u32 = 0x0000_0004;
pub const SEQ4_STATUS_EXPIRED_ALL_STATE_REVOKED: u32 = 0x0000_0008;
pub const SEQ4_STATUS_EXPIRED_SOME_STATE_REVOKED: u32 = 0x0000_0010;
pub const SEQ4_STATUS_ADMIN_STATE_REVOKED: u32 = 0x0000_0020;
pub const SEQ4_STATUS_RECALLABLE_STATE_REVOKED: u32 = 0x0000_0040;
pub const SEQ4_STATUS_LEASE_MOVED: u32 = 0x0000_0080;
pub const SEQ4_STATUS_RESTART_RECLAIM_NEEDED: u32 = 0x0000_0100;
pub const SEQ4_STATUS_CB_PATH_DOWN_SESSION: u32 = 0x0000_0200;
pub const SEQ4_STATUS_BACKCHANNEL_FAULT: u32 = 0x0000_0400;

// channel_dir_from_client4 and channel_dir_from_server4 (RFC 8881 18.34).
pub const CDFC4_FORE: u32 = 0x1;
pub const CDFC4_BACK: u32 = 0x2;
pub const CDFC4_FORE_OR_BOTH: u32 = 0x3;
pub const CDFC4_BACK_OR_BOTH: u32 = 0x7;
pub const CDFS4_FORE: u32 = 0x1;
pub const CDFS4_BACK: u32 = 0x2;
pub const CDFS4_BOTH: u32 = 0x3;

// OPEN (RFC 8881 18.16).
pub const OPEN4_SHARE_ACCESS_READ: u32 = 0x1;
pub const OPEN4_SHARE_ACCESS_WRITE: u32 = 0x2;
pub const OPEN4_SHARE_ACCESS_BOTH: u32 = 0x3;
pub const OPEN4_SHARE_DENY_NONE: u32 = 0x0;
pub const OPEN4_SHARE_ACCESS_WANT_DELEG_MASK: u32 = 0xFF00;
pub const OPEN4_SHARE_ACCESS_WANT_NO_PREFERENCE: u32 = 0x0000;
pub const OPEN4_SHARE_ACCESS_WANT_READ_DELEG: u32 = 0x0100;
pub const OPEN4_SHARE_ACCESS_WANT_NO_DELEG: u32 = 0x0400;
pub const OPEN4_NOCREATE: u32 = 0;
pub const OPEN4_CREATE: u32 = 1;
pub const UNCHECKED4: u32 = 0;
pub const GUARDED4: u32 = 1;
pub const EXCLUSIVE4: u32 = 2;
pub const EXCLUSIVE4_1: u32 = 3;
pub const CLAIM_NULL: u32 = 0;
pub const CLAIM_PREVIOUS: u32 = 1;
pub const CLAIM_DELEGATE_CUR: u32 = 2;
pub const CLAIM_DELEGATE_PREV: u32 = 3;
pub const CLAIM_FH: u32 = 4;
pub const CLAIM_DELEG_CUR_FH: u32 = 5;
pub const CLAIM_DELEG_PREV_FH: u32 = 6;
pub const OPEN4_RESULT_LOCKTYPE_POSIX: u32 = 0x4;
// open_delegation_type4 and why_no_delegation4.
pub const OPEN_DELEGATE_NONE: u32 = 0;
pub const OPEN_DELEGATE_READ: u32 = 1;
pub const OPEN_DELEGATE_WRITE: u32 = 2;
pub const OPEN_DELEGATE_NONE_EXT: u32 = 3;
pub const WND4_NOT_WANTED: u32 = 0;
pub const WND4_CONTENTION: u32 = 1;
pub const WND4_RESOURCE: u32 = 2;
// nfsace4 (RFC 8881 6.2.1): the permissions of a read delegation.
pub const ACE4_ACCESS_ALLOWED_ACE_TYPE: u32 = 0;
// stable_how4 (RFC 8881 18.32).
pub const UNSTABLE4: u32 = 0;
pub const DATA_SYNC4: u32 = 1;
pub const FILE_SYNC4: u32 = 2;
// ACCESS4 bits (RFC 8881 18.1).
pub const ACCESS4_READ: u32 = 0x01;
pub const ACCESS4_LOOKUP: u32 = 0x02;
pub const ACCESS4_MODIFY: u32 = 0x04;
pub const ACCESS4_EXTEND: u32 = 0x08;
pub const ACCESS4_DELETE: u32 = 0x10;
pub const ACCESS4_EXECUTE: u32 = 0x20;
// secinfo_style4 (RFC 8881 18.45).
pub const SECINFO_STYLE4_CURRENT_FH: u32 = 0;
pub const SECINFO_STYLE4_PARENT: u32 = 1;
// nfs_ftype4 (RFC 8881 5.8.1.2).
pub const NF4REG: u32 = 1;
pub const NF4DIR: u32 = 2;
pub const NF4LNK: u32 = 5;

// Attribute numbers (RFC 8881 5.8, RFC 7862 12.2).
pub const FATTR4_SUPPORTED_ATTRS: u32 = 0;
pub const FATTR4_TYPE: u32 = 1;
pub const FATTR4_FH_EXPIRE_TYPE: u32 = 2;
pub const FATTR4_CHANGE: u32 = 3;
pub const FATTR4_SIZE: u32 = 4;
pub const FATTR4_LINK_SUPPORT: u32 = 5;
pub const FATTR4_SYMLINK_SUPPORT: u32 = 6;
pub const FATTR4_NAMED_ATTR: u32 = 7;
pub const FATTR4_FSID: u32 = 8;
pub const FATTR4_UNIQUE_HANDLES: u32 = 9;
pub const FATTR4_LEASE_TIME: u32 = 10;
pub const FATTR4_RDATTR_ERROR: u32 = 11;
pub const FATTR4_FILEHANDLE: u32 = 19;
pub const FATTR4_FILEID: u32 = 20;
pub const FATTR4_FILES_AVAIL: u32 = 21;
pub const FATTR4_FILES_FREE: u32 = 22;
pub const FATTR4_FILES_TOTAL: u32 = 23;
pub const FATTR4_MAXFILESIZE: u32 = 27;
pub const FATTR4_MAXLINK: u32 = 28;
pub const FATTR4_MAXNAME: u32 = 29;
pub const FATTR4_MAXREAD: u32 = 30;
pub const FATTR4_MAXWRITE: u32 = 31;
pub const FATTR4_MODE: u32 = 33;
pub const FATTR4_NUMLINKS: u32 = 35;
pub const FATTR4_OWNER: u32 = 36;
pub const FATTR4_OWNER_GROUP: u32 = 37;
pub const FATTR4_RAWDEV: u32 = 41;
pub const FATTR4_SPACE_AVAIL: u32 = 42;
pub const FATTR4_SPACE_FREE: u32 = 43;
pub const FATTR4_SPACE_TOTAL: u32 = 44;
pub const FATTR4_SPACE_USED: u32 = 45;
pub const FATTR4_TIME_ACCESS: u32 = 47;
pub const FATTR4_TIME_ACCESS_SET: u32 = 48;
pub const FATTR4_TIME_DELTA: u32 = 51;
pub const FATTR4_TIME_METADATA: u32 = 52;
pub const FATTR4_TIME_MODIFY: u32 = 53;
pub const FATTR4_TIME_MODIFY_SET: u32 = 54;
pub const FATTR4_MOUNTED_ON_FILEID: u32 = 55;
pub const FATTR4_FS_LAYOUT_TYPES: u32 = 62;
pub const FATTR4_SUPPATTR_EXCLCREAT: u32 = 75;
// settime4's time_how4 (RFC 8881 3.3.7).
pub const SET_TO_SERVER_TIME4: u32 = 0;
pub const SET_TO_CLIENT_TIME4: u32 = 1;

/// A growable XDR encoder (RFC 4506): what every encoder here writes with.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Xdr(pub Vec<u8>);

impl Xdr {
    pub fn new() -> Self {
        Xdr::default()
    }
    pub fn u32(&mut self, v: u32) -> &mut Self {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }
    pub fn u64(&mut self, v: u64) -> &mut Self {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }
    pub fn bool(&mut self, v: bool) -> &mut Self {
        self.u32(v as u32)
    }
    /// Fixed-length opaque: the bytes and their pad.
    pub fn fixed(&mut self, b: &[u8]) -> &mut Self {
        self.0.extend_from_slice(b);
        self.0.resize(round_up4(self.0.len()), 0);
        self
    }
    /// Variable-length opaque: length, bytes, pad.
    pub fn opaque(&mut self, b: &[u8]) -> &mut Self {
        self.u32(b.len() as u32).fixed(b)
    }
    /// bitmap4: the words, their count first.
    pub fn bitmap(&mut self, words: &[u32]) -> &mut Self {
        self.u32(words.len() as u32);
        words.iter().for_each(|w| {
            self.u32(*w);
        });
        self
    }
    pub fn into_inner(self) -> Vec<u8> {
        self.0
    }
}

/// A bitmap4 with bit `n` of the attributes set (RFC 8881 3.3.5: word n/32, bit n%32).
pub fn bitmap_of(attrs: &[u32]) -> Vec<u32> {
    let words = attrs.iter().map(|a| a / 32 + 1).max().unwrap_or(0) as usize;
    let mut v = vec![0u32; words];
    for a in attrs {
        v[(a / 32) as usize] |= 1 << (a % 32);
    }
    v
}

/// Whether bitmap4 `bits` has attribute `n`.
pub fn bitmap_has(bits: &[u32], n: u32) -> bool {
    bits.get((n / 32) as usize).is_some_and(|w| w & (1 << (n % 32)) != 0)
}

type R<T> = Result<T, rpcrdma_codec::error::DecodeError>;

fn bitmap(r: &mut Reader<'_>) -> R<Vec<u32>> {
    let n = r.count("bitmap4", 4)?;
    (0..n).map(|_| r.u32("bitmap4")).collect()
}

fn fixed<const N: usize>(r: &mut Reader<'_>, field: &'static str) -> R<[u8; N]> {
    let b = r.opaque_fixed(N, field)?;
    let mut a = [0u8; N];
    a.copy_from_slice(b);
    Ok(a)
}

fn utf8(r: &mut Reader<'_>, field: &'static str) -> R<String> {
    Ok(String::from_utf8_lossy(r.opaque(field, NFS4_OPAQUE_LIMIT)?).into_owned())
}

/// channel_attrs4 (RFC 8881 18.36).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ChannelAttrs {
    pub headerpadsize: u32,
    pub maxrequestsize: u32,
    pub maxresponsesize: u32,
    pub maxresponsesize_cached: u32,
    pub maxoperations: u32,
    pub maxrequests: u32,
    /// ca_rdma_ird<1>.
    pub rdma_ird: Option<u32>,
}

impl ChannelAttrs {
    pub fn encode(&self, x: &mut Xdr) {
        x.u32(self.headerpadsize)
            .u32(self.maxrequestsize)
            .u32(self.maxresponsesize)
            .u32(self.maxresponsesize_cached)
            .u32(self.maxoperations)
            .u32(self.maxrequests);
        match self.rdma_ird {
            Some(ird) => x.u32(1).u32(ird),
            None => x.u32(0),
        };
    }

    pub fn decode(r: &mut Reader<'_>) -> R<Self> {
        let mut a = ChannelAttrs {
            headerpadsize: r.u32("ca_headerpadsize")?,
            maxrequestsize: r.u32("ca_maxrequestsize")?,
            maxresponsesize: r.u32("ca_maxresponsesize")?,
            maxresponsesize_cached: r.u32("ca_maxresponsesize_cached")?,
            maxoperations: r.u32("ca_maxoperations")?,
            maxrequests: r.u32("ca_maxrequests")?,
            rdma_ird: None,
        };
        match r.u32("ca_rdma_ird")? {
            0 => {}
            1 => a.rdma_ird = Some(r.u32("ca_rdma_ird")?),
            _ => {
                return Err(rpcrdma_codec::error::DecodeError::new(
                    "ca_rdma_ird",
                    r.offset(),
                    rpcrdma_codec::error::ErrorKind::InvalidEnum { value: 2 },
                ))
            }
        }
        Ok(a)
    }
}

/// callback_sec_parms4 (RFC 8881 18.36): the security the server uses for back channel calls.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CbSec {
    None,
    /// authsys_parms, encoded (RFC 5531 appendix A).
    Sys(Vec<u8>),
    /// gss_cb_handles4: service, handle from server, handle from client.
    Gss {
        service: u32,
        from_server: Vec<u8>,
        from_client: Vec<u8>,
    },
}

impl CbSec {
    fn encode(&self, x: &mut Xdr) {
        match self {
            CbSec::None => x.u32(AUTH_NONE),
            CbSec::Sys(parms) => x.u32(AUTH_SYS).fixed(parms),
            CbSec::Gss { service, from_server, from_client } => {
                x.u32(RPCSEC_GSS).u32(*service).opaque(from_server).opaque(from_client)
            }
        };
    }

    fn decode(r: &mut Reader<'_>) -> R<Self> {
        let at = r.offset();
        Ok(match r.u32("cb_secflavor")? {
            AUTH_NONE => CbSec::None,
            AUTH_SYS => {
                // authsys_parms: stamp, machinename<255>, uid, gid, gids<16>.
                let start = r.position();
                r.u32("stamp")?;
                r.opaque("machinename", 255)?;
                r.u32("uid")?;
                r.u32("gid")?;
                let n = r.bounded_count("gids", 4, 16)?;
                r.take(4 * n as usize, "gids")?;
                CbSec::Sys(r.since(start).to_vec())
            }
            RPCSEC_GSS => CbSec::Gss {
                service: r.u32("gcbp_service")?,
                from_server: r.opaque("gcbp_handle_from_server", u32::MAX)?.to_vec(),
                from_client: r.opaque("gcbp_handle_from_client", u32::MAX)?.to_vec(),
            },
            value => {
                return Err(rpcrdma_codec::error::DecodeError::new(
                    "cb_secflavor",
                    at,
                    rpcrdma_codec::error::ErrorKind::InvalidEnum { value },
                ))
            }
        })
    }
}

/// fattr4: the bitmap and the attribute values as encoded (RFC 8881 3.3.10).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Fattr {
    pub mask: Vec<u32>,
    pub vals: Vec<u8>,
}

impl Fattr {
    fn encode(&self, x: &mut Xdr) {
        x.bitmap(&self.mask).opaque(&self.vals);
    }
    fn decode(r: &mut Reader<'_>) -> R<Self> {
        Ok(Fattr { mask: bitmap(r)?, vals: r.opaque("attr_vals", u32::MAX)?.to_vec() })
    }
}

/// openflag4 (RFC 8881 18.16): no create, or createhow4.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OpenHow {
    NoCreate,
    Unchecked(Fattr),
    Guarded(Fattr),
    Exclusive(Verifier),
    /// EXCLUSIVE4_1: creatverfattr.
    Exclusive41(Verifier, Fattr),
}

/// open_claim4 (RFC 8881 18.16): the claims a server here takes, others by their type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Claim {
    Null(Vec<u8>),
    Fh,
    /// CLAIM_PREVIOUS, CLAIM_DELEGATE_CUR/PREV, CLAIM_DELEG_CUR_FH/PREV_FH: decoded, not served.
    Other(u32),
}

/// One operation of a COMPOUND4args (nfs_argop4) of minor version 1 or 2.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    Access(u32),
    Close {
        seqid: u32,
        stateid: Stateid,
    },
    Commit {
        offset: u64,
        count: u32,
    },
    DelegReturn(Stateid),
    GetAttr(Vec<u32>),
    GetFh,
    Lookup(Vec<u8>),
    LookupP,
    Open {
        seqid: u32,
        share_access: u32,
        share_deny: u32,
        clientid: u64,
        owner: Vec<u8>,
        how: OpenHow,
        claim: Claim,
    },
    PutFh(Vec<u8>),
    PutRootFh,
    Read {
        stateid: Stateid,
        offset: u64,
        count: u32,
    },
    Readdir {
        cookie: u64,
        verifier: Verifier,
        dircount: u32,
        maxcount: u32,
        attrs: Vec<u32>,
    },
    RestoreFh,
    SaveFh,
    SetAttr {
        stateid: Stateid,
        attrs: Fattr,
    },
    Write {
        stateid: Stateid,
        offset: u64,
        stable: u32,
        data: Vec<u8>,
    },
    BindConnToSession {
        sessionid: SessionId,
        dir: u32,
        use_rdma: bool,
    },
    /// EXCHANGE_ID with SP4_NONE (other state protection is decoded as `state_protect`) and
    /// no implementation id when `impl_id` is None.
    ExchangeId {
        verifier: Verifier,
        owner: Vec<u8>,
        flags: u32,
        state_protect: u32,
        impl_id: Option<(String, String)>,
    },
    CreateSession {
        clientid: u64,
        sequence: u32,
        flags: u32,
        fore: ChannelAttrs,
        back: ChannelAttrs,
        cb_program: u32,
        sec: Vec<CbSec>,
    },
    DestroySession(SessionId),
    FreeStateid(Stateid),
    SecInfoNoName(u32),
    Sequence {
        sessionid: SessionId,
        sequenceid: u32,
        slotid: u32,
        highest_slotid: u32,
        cachethis: bool,
    },
    TestStateid(Vec<Stateid>),
    DestroyClientId(u64),
    ReclaimComplete {
        one_fs: bool,
    },
    /// Any other operation: its number only (a server answers it NFS4ERR_NOTSUPP or
    /// OP_ILLEGAL and stops; its arguments are not decoded).
    Other(u32),
}

impl Op {
    /// OPEN of an existing file, sharing with everyone (OPEN4_NOCREATE, OPEN4_SHARE_DENY_NONE;
    /// seqid 0: minor version 1 ignores it, RFC 8881 18.16.3), as `owner` of `clientid`.
    pub fn open_existing(clientid: u64, owner: &[u8], share_access: u32, claim: Claim) -> Op {
        Op::Open {
            seqid: 0,
            share_access,
            share_deny: OPEN4_SHARE_DENY_NONE,
            clientid,
            owner: owner.to_vec(),
            how: OpenHow::NoCreate,
            claim,
        }
    }

    /// The operation number.
    pub fn opnum(&self) -> u32 {
        match self {
            Op::Access(_) => OP_ACCESS,
            Op::Close { .. } => OP_CLOSE,
            Op::Commit { .. } => OP_COMMIT,
            Op::DelegReturn(_) => OP_DELEGRETURN,
            Op::GetAttr(_) => OP_GETATTR,
            Op::GetFh => OP_GETFH,
            Op::Lookup(_) => OP_LOOKUP,
            Op::LookupP => OP_LOOKUPP,
            Op::Open { .. } => OP_OPEN,
            Op::PutFh(_) => OP_PUTFH,
            Op::PutRootFh => OP_PUTROOTFH,
            Op::Read { .. } => OP_READ,
            Op::Readdir { .. } => OP_READDIR,
            Op::RestoreFh => OP_RESTOREFH,
            Op::SaveFh => OP_SAVEFH,
            Op::SetAttr { .. } => OP_SETATTR,
            Op::Write { .. } => OP_WRITE,
            Op::BindConnToSession { .. } => OP_BIND_CONN_TO_SESSION,
            Op::ExchangeId { .. } => OP_EXCHANGE_ID,
            Op::CreateSession { .. } => OP_CREATE_SESSION,
            Op::DestroySession(_) => OP_DESTROY_SESSION,
            Op::FreeStateid(_) => OP_FREE_STATEID,
            Op::SecInfoNoName(_) => OP_SECINFO_NO_NAME,
            Op::Sequence { .. } => OP_SEQUENCE,
            Op::TestStateid(_) => OP_TEST_STATEID,
            Op::DestroyClientId(_) => OP_DESTROY_CLIENTID,
            Op::ReclaimComplete { .. } => OP_RECLAIM_COMPLETE,
            Op::Other(n) => *n,
        }
    }

    /// nfs_argop4: the number and the arguments.
    pub fn encode(&self, x: &mut Xdr) {
        x.u32(self.opnum());
        match self {
            Op::GetFh | Op::LookupP | Op::PutRootFh | Op::RestoreFh | Op::SaveFh | Op::Other(_) => {}
            Op::Access(a) => _ = x.u32(*a),
            Op::Close { seqid, stateid } => _ = x.u32(*seqid).fixed(stateid),
            Op::Commit { offset, count } => _ = x.u64(*offset).u32(*count),
            Op::DelegReturn(s) | Op::FreeStateid(s) => _ = x.fixed(s),
            Op::GetAttr(bits) => _ = x.bitmap(bits),
            Op::Lookup(name) => _ = x.opaque(name),
            Op::Open { seqid, share_access, share_deny, clientid, owner, how, claim } => {
                x.u32(*seqid).u32(*share_access).u32(*share_deny).u64(*clientid).opaque(owner);
                match how {
                    OpenHow::NoCreate => _ = x.u32(OPEN4_NOCREATE),
                    OpenHow::Unchecked(a) => a.encode(x.u32(OPEN4_CREATE).u32(UNCHECKED4)),
                    OpenHow::Guarded(a) => a.encode(x.u32(OPEN4_CREATE).u32(GUARDED4)),
                    OpenHow::Exclusive(v) => _ = x.u32(OPEN4_CREATE).u32(EXCLUSIVE4).fixed(v),
                    OpenHow::Exclusive41(v, a) => a.encode(x.u32(OPEN4_CREATE).u32(EXCLUSIVE4_1).fixed(v)),
                }
                match claim {
                    Claim::Null(name) => _ = x.u32(CLAIM_NULL).opaque(name),
                    Claim::Fh => _ = x.u32(CLAIM_FH),
                    Claim::Other(t) => _ = x.u32(*t),
                }
            }
            Op::PutFh(fh) => _ = x.opaque(fh),
            Op::Read { stateid, offset, count } => _ = x.fixed(stateid).u64(*offset).u32(*count),
            Op::Readdir { cookie, verifier, dircount, maxcount, attrs } => {
                x.u64(*cookie).fixed(verifier).u32(*dircount).u32(*maxcount).bitmap(attrs);
            }
            Op::SetAttr { stateid, attrs } => attrs.encode(x.fixed(stateid)),
            Op::Write { stateid, offset, stable, data } => _ = x.fixed(stateid).u64(*offset).u32(*stable).opaque(data),
            Op::BindConnToSession { sessionid, dir, use_rdma } => _ = x.fixed(sessionid).u32(*dir).bool(*use_rdma),
            Op::ExchangeId { verifier, owner, flags, state_protect, impl_id } => {
                x.fixed(verifier).opaque(owner).u32(*flags).u32(*state_protect);
                if *state_protect == SP4_MACH_CRED {
                    x.bitmap(&[]).bitmap(&[]);
                }
                match impl_id {
                    Some((domain, name)) => {
                        _ = x.u32(1).opaque(domain.as_bytes()).opaque(name.as_bytes()).u64(0).u32(0)
                    }
                    None => _ = x.u32(0),
                }
            }
            Op::CreateSession { clientid, sequence, flags, fore, back, cb_program, sec } => {
                x.u64(*clientid).u32(*sequence).u32(*flags);
                fore.encode(x);
                back.encode(x);
                x.u32(*cb_program).u32(sec.len() as u32);
                sec.iter().for_each(|s| s.encode(x));
            }
            Op::DestroySession(s) => _ = x.fixed(s),
            Op::SecInfoNoName(style) => _ = x.u32(*style),
            Op::Sequence { sessionid, sequenceid, slotid, highest_slotid, cachethis } => {
                x.fixed(sessionid).u32(*sequenceid).u32(*slotid).u32(*highest_slotid).bool(*cachethis);
            }
            Op::TestStateid(ids) => {
                x.u32(ids.len() as u32);
                ids.iter().for_each(|s| _ = x.fixed(s));
            }
            Op::DestroyClientId(c) => _ = x.u64(*c),
            Op::ReclaimComplete { one_fs } => _ = x.bool(*one_fs),
        }
    }

    /// nfs_argop4 as a server reads it. Operations outside `OP_ACCESS..=OP_LAST_V42` not
    /// listed in [`Op`] come back as [`Op::Other`] with their arguments unread.
    pub fn decode(r: &mut Reader<'_>) -> R<Op> {
        let op = r.u32("argop")?;
        let stateid = |r: &mut Reader<'_>| fixed::<STATEID_LEN>(r, "stateid");
        Ok(match op {
            OP_ACCESS => Op::Access(r.u32("access")?),
            OP_CLOSE => Op::Close { seqid: r.u32("seqid")?, stateid: stateid(r)? },
            OP_COMMIT => Op::Commit { offset: r.u64("offset")?, count: r.u32("count")? },
            OP_DELEGRETURN => Op::DelegReturn(stateid(r)?),
            OP_GETATTR => Op::GetAttr(bitmap(r)?),
            OP_GETFH => Op::GetFh,
            OP_LOOKUP => Op::Lookup(r.opaque("objname", u32::MAX)?.to_vec()),
            OP_LOOKUPP => Op::LookupP,
            OP_OPEN => {
                let seqid = r.u32("seqid")?;
                let share_access = r.u32("share_access")?;
                let share_deny = r.u32("share_deny")?;
                let clientid = r.u64("clientid")?;
                let owner = r.opaque("owner", NFS4_OPAQUE_LIMIT)?.to_vec();
                let how = match r.u32("opentype")? {
                    OPEN4_NOCREATE => OpenHow::NoCreate,
                    _ => match r.u32("createmode")? {
                        UNCHECKED4 => OpenHow::Unchecked(Fattr::decode(r)?),
                        GUARDED4 => OpenHow::Guarded(Fattr::decode(r)?),
                        EXCLUSIVE4 => OpenHow::Exclusive(fixed(r, "createverf")?),
                        _ => OpenHow::Exclusive41(fixed(r, "cva_verf")?, Fattr::decode(r)?),
                    },
                };
                let claim = match r.u32("claim")? {
                    CLAIM_NULL => Claim::Null(r.opaque("file", u32::MAX)?.to_vec()),
                    CLAIM_FH => Claim::Fh,
                    t => Claim::Other(t),
                };
                Op::Open { seqid, share_access, share_deny, clientid, owner, how, claim }
            }
            OP_PUTFH => Op::PutFh(r.opaque("object", NFS4_FHSIZE)?.to_vec()),
            OP_PUTROOTFH => Op::PutRootFh,
            OP_READ => Op::Read { stateid: stateid(r)?, offset: r.u64("offset")?, count: r.u32("count")? },
            OP_READDIR => Op::Readdir {
                cookie: r.u64("cookie")?,
                verifier: fixed(r, "cookieverf")?,
                dircount: r.u32("dircount")?,
                maxcount: r.u32("maxcount")?,
                attrs: bitmap(r)?,
            },
            OP_RESTOREFH => Op::RestoreFh,
            OP_SAVEFH => Op::SaveFh,
            OP_SETATTR => Op::SetAttr { stateid: stateid(r)?, attrs: Fattr::decode(r)? },
            OP_WRITE => Op::Write {
                stateid: stateid(r)?,
                offset: r.u64("offset")?,
                stable: r.u32("stable")?,
                data: r.opaque("data", u32::MAX)?.to_vec(),
            },
            OP_BIND_CONN_TO_SESSION => Op::BindConnToSession {
                sessionid: fixed(r, "bctsa_sessid")?,
                dir: r.u32("bctsa_dir")?,
                use_rdma: r.bool("bctsa_use_conn_in_rdma_mode")?,
            },
            OP_EXCHANGE_ID => {
                let verifier = fixed(r, "co_verifier")?;
                let owner = r.opaque("co_ownerid", NFS4_OPAQUE_LIMIT)?.to_vec();
                let flags = r.u32("eia_flags")?;
                let state_protect = r.u32("spa_how")?;
                match state_protect {
                    SP4_NONE => {}
                    SP4_MACH_CRED => {
                        bitmap(r)?;
                        bitmap(r)?;
                    }
                    _ => {
                        // ssv_sp_parms4: ops, hash algs, encr algs, window, num_gss_handles.
                        bitmap(r)?;
                        bitmap(r)?;
                        for field in ["ssp_hash_algs", "ssp_encr_algs"] {
                            for _ in 0..r.count(field, 4)? {
                                r.opaque(field, u32::MAX)?;
                            }
                        }
                        r.u32("ssp_window")?;
                        r.u32("ssp_num_gss_handles")?;
                    }
                }
                let impl_id = match r.bounded_count("eia_client_impl_id", 4, 1)? {
                    0 => None,
                    _ => {
                        let id = (utf8(r, "nii_domain")?, utf8(r, "nii_name")?);
                        r.u64("nii_date.seconds")?;
                        r.u32("nii_date.nseconds")?;
                        Some(id)
                    }
                };
                Op::ExchangeId { verifier, owner, flags, state_protect, impl_id }
            }
            OP_CREATE_SESSION => {
                let clientid = r.u64("csa_clientid")?;
                let sequence = r.u32("csa_sequence")?;
                let flags = r.u32("csa_flags")?;
                let fore = ChannelAttrs::decode(r)?;
                let back = ChannelAttrs::decode(r)?;
                let cb_program = r.u32("csa_cb_program")?;
                let n = r.count("csa_sec_parms", 4)?;
                let sec = (0..n).map(|_| CbSec::decode(r)).collect::<R<Vec<_>>>()?;
                Op::CreateSession { clientid, sequence, flags, fore, back, cb_program, sec }
            }
            OP_DESTROY_SESSION => Op::DestroySession(fixed(r, "dsa_sessionid")?),
            OP_FREE_STATEID => Op::FreeStateid(stateid(r)?),
            OP_SECINFO_NO_NAME => Op::SecInfoNoName(r.u32("secinfo_style4")?),
            OP_SEQUENCE => Op::Sequence {
                sessionid: fixed(r, "sa_sessionid")?,
                sequenceid: r.u32("sa_sequenceid")?,
                slotid: r.u32("sa_slotid")?,
                highest_slotid: r.u32("sa_highest_slotid")?,
                cachethis: r.bool("sa_cachethis")?,
            },
            OP_TEST_STATEID => {
                let n = r.count("ts_stateids", STATEID_LEN)?;
                Op::TestStateid((0..n).map(|_| stateid(r)).collect::<R<Vec<_>>>()?)
            }
            OP_DESTROY_CLIENTID => Op::DestroyClientId(r.u64("dca_clientid")?),
            OP_RECLAIM_COMPLETE => Op::ReclaimComplete { one_fs: r.bool("rca_one_fs")? },
            n => Op::Other(n),
        })
    }
}

/// COMPOUND4args { tag, minorversion, argarray } (RFC 8881 16.2).
pub fn compound_args(tag: &str, minor: u32, ops: &[Op]) -> Vec<u8> {
    let mut x = Xdr::new();
    x.opaque(tag.as_bytes()).u32(minor).u32(ops.len() as u32);
    ops.iter().for_each(|op| op.encode(&mut x));
    x.into_inner()
}

/// open_delegation4 (RFC 8881 18.16).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Delegation {
    None,
    Read {
        stateid: Stateid,
        recall: bool,
    },
    Write {
        stateid: Stateid,
        recall: bool,
    },
    /// OPEN_DELEGATE_NONE_EXT with its why_no_delegation4.
    NoneExt(u32),
}

/// One entry4 of READDIR4resok.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirEntry {
    pub cookie: u64,
    pub name: Vec<u8>,
    pub attrs: Fattr,
}

/// READ4resok as found in a reply (see [`super::nfs4::Read4`]).
pub use super::nfs4::Read4;

/// The results of one operation that succeeded, beyond its status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Res {
    /// Operations whose results are their status alone.
    Empty,
    Access {
        supported: u32,
        access: u32,
    },
    /// CLOSE's, and any other stateid4 result.
    Stateid(Stateid),
    Commit(Verifier),
    GetAttr(Fattr),
    GetFh(Vec<u8>),
    Open {
        stateid: Stateid,
        cinfo: (bool, u64, u64),
        rflags: u32,
        attrset: Vec<u32>,
        delegation: Delegation,
    },
    /// READ4resok: eof and the data (a decoder fills `data` only when it was inline).
    Read {
        eof: bool,
        data: Vec<u8>,
        read: Option<Read4>,
    },
    Readdir {
        verifier: Verifier,
        entries: Vec<DirEntry>,
        eof: bool,
    },
    /// READLINK4resok's linkdata, DDP-eligible (RFC 8267 6.1): the encoder writes its length
    /// word only; the decoder fills it when it was inline.
    Readlink(Vec<u8>),
    SetAttr(Vec<u32>),
    Write {
        count: u32,
        committed: u32,
        verifier: Verifier,
    },
    BindConnToSession {
        sessionid: SessionId,
        dir: u32,
        use_rdma: bool,
    },
    ExchangeId {
        clientid: u64,
        sequenceid: u32,
        flags: u32,
        minor_id: u64,
        major_id: Vec<u8>,
        scope: Vec<u8>,
    },
    CreateSession {
        sessionid: SessionId,
        sequence: u32,
        flags: u32,
        fore: ChannelAttrs,
        back: ChannelAttrs,
    },
    SecInfo(Vec<u32>),
    Sequence {
        sessionid: SessionId,
        sequenceid: u32,
        slotid: u32,
        highest_slotid: u32,
        target_highest_slotid: u32,
        status_flags: u32,
    },
    TestStateid(Vec<u32>),
}

impl Res {
    /// The resok arm after the status; READ's data is left to the caller (a DDP-eligible
    /// item, RFC 8267 6.1): this writes eof and the data length word only.
    pub fn encode(&self, x: &mut Xdr) {
        match self {
            Res::Empty => {}
            Res::Access { supported, access } => _ = x.u32(*supported).u32(*access),
            Res::Stateid(s) => _ = x.fixed(s),
            Res::Commit(v) => _ = x.fixed(v),
            Res::GetAttr(a) => a.encode(x),
            Res::GetFh(fh) => _ = x.opaque(fh),
            Res::Open { stateid, cinfo, rflags, attrset, delegation } => {
                x.fixed(stateid).bool(cinfo.0).u64(cinfo.1).u64(cinfo.2).u32(*rflags).bitmap(attrset);
                match delegation {
                    Delegation::None => _ = x.u32(OPEN_DELEGATE_NONE),
                    Delegation::Read { stateid, recall } => {
                        // nfsace4 permissions: ALLOWED, no flags, READ, "EVERYONE@".
                        x.u32(OPEN_DELEGATE_READ).fixed(stateid).bool(*recall);
                        x.u32(ACE4_ACCESS_ALLOWED_ACE_TYPE).u32(0).u32(ACCESS4_READ).opaque(b"EVERYONE@");
                    }
                    Delegation::Write { stateid, recall } => {
                        // nfs_space_limit4 NFS_LIMIT_SIZE (1) unlimited, then the ACE.
                        x.u32(OPEN_DELEGATE_WRITE).fixed(stateid).bool(*recall).u32(1).u64(u64::MAX);
                        x.u32(ACE4_ACCESS_ALLOWED_ACE_TYPE).u32(0).u32(ACCESS4_READ).opaque(b"EVERYONE@");
                    }
                    Delegation::NoneExt(why) => {
                        x.u32(OPEN_DELEGATE_NONE_EXT).u32(*why);
                        if *why == WND4_CONTENTION || *why == WND4_RESOURCE {
                            x.bool(false);
                        }
                    }
                }
            }
            Res::Read { eof, data, .. } => _ = x.bool(*eof).u32(data.len() as u32),
            Res::Readlink(link) => _ = x.u32(link.len() as u32),
            Res::Readdir { verifier, entries, eof } => {
                x.fixed(verifier);
                for e in entries {
                    x.bool(true).u64(e.cookie).opaque(&e.name);
                    e.attrs.encode(x);
                }
                x.bool(false).bool(*eof);
            }
            Res::SetAttr(bits) => _ = x.bitmap(bits),
            Res::Write { count, committed, verifier } => _ = x.u32(*count).u32(*committed).fixed(verifier),
            Res::BindConnToSession { sessionid, dir, use_rdma } => _ = x.fixed(sessionid).u32(*dir).bool(*use_rdma),
            Res::ExchangeId { clientid, sequenceid, flags, minor_id, major_id, scope } => {
                // SP4_NONE; no server implementation id.
                x.u64(*clientid).u32(*sequenceid).u32(*flags).u32(SP4_NONE);
                x.u64(*minor_id).opaque(major_id).opaque(scope).u32(0);
            }
            Res::CreateSession { sessionid, sequence, flags, fore, back } => {
                x.fixed(sessionid).u32(*sequence).u32(*flags);
                fore.encode(x);
                back.encode(x);
            }
            Res::SecInfo(flavors) => {
                x.u32(flavors.len() as u32);
                flavors.iter().for_each(|f| _ = x.u32(*f));
            }
            Res::Sequence { sessionid, sequenceid, slotid, highest_slotid, target_highest_slotid, status_flags } => {
                x.fixed(sessionid).u32(*sequenceid).u32(*slotid).u32(*highest_slotid);
                x.u32(*target_highest_slotid).u32(*status_flags);
            }
            Res::TestStateid(codes) => {
                x.u32(codes.len() as u32);
                codes.iter().for_each(|c| _ = x.u32(*c));
            }
        }
    }

    /// The resok arm of operation `op` (status NFS4_OK). `reduced` says whether this READ's
    /// data went through a write chunk (RFC 8166 3.4.4.1).
    fn decode(op: u32, r: &mut Reader<'_>, reduced: bool) -> R<Option<Res>> {
        let stateid = |r: &mut Reader<'_>| fixed::<STATEID_LEN>(r, "stateid");
        Ok(Some(match op {
            OP_ACCESS => Res::Access { supported: r.u32("supported")?, access: r.u32("access")? },
            OP_CLOSE => Res::Stateid(stateid(r)?),
            OP_COMMIT => Res::Commit(fixed(r, "writeverf")?),
            OP_GETATTR => Res::GetAttr(Fattr::decode(r)?),
            OP_GETFH => Res::GetFh(r.opaque("object", NFS4_FHSIZE)?.to_vec()),
            OP_OPEN => {
                let sid = stateid(r)?;
                let cinfo = (r.bool("atomic")?, r.u64("before")?, r.u64("after")?);
                let rflags = r.u32("rflags")?;
                let attrset = bitmap(r)?;
                let delegation = match r.u32("delegation_type")? {
                    OPEN_DELEGATE_NONE => Delegation::None,
                    t @ (OPEN_DELEGATE_READ | OPEN_DELEGATE_WRITE) => {
                        let (s, recall) = (stateid(r)?, r.bool("recall")?);
                        if t == OPEN_DELEGATE_WRITE {
                            match r.u32("limitby")? {
                                1 => _ = r.u64("filesize")?,
                                _ => _ = r.take(8, "mod_blocks")?,
                            }
                        }
                        r.take(12, "nfsace4")?;
                        r.opaque("who", u32::MAX)?;
                        if t == OPEN_DELEGATE_READ {
                            Delegation::Read { stateid: s, recall }
                        } else {
                            Delegation::Write { stateid: s, recall }
                        }
                    }
                    OPEN_DELEGATE_NONE_EXT => {
                        let why = r.u32("ond_why")?;
                        if why == WND4_CONTENTION || why == WND4_RESOURCE {
                            r.bool("ond_server_will")?;
                        }
                        Delegation::NoneExt(why)
                    }
                    _ => return Ok(None),
                };
                Res::Open { stateid: sid, cinfo, rflags, attrset, delegation }
            }
            OP_READ => {
                let eof = r.bool("eof")?;
                let data_len = r.u32("data")?;
                if reduced {
                    Res::Read { eof, data: Vec::new(), read: Some(Read4 { eof, data_len, data_at: None }) }
                } else {
                    let at = r.position();
                    let data = r.take(round_up4(data_len as usize), "data")?[..data_len as usize].to_vec();
                    Res::Read { eof, data, read: Some(Read4 { eof, data_len, data_at: Some(at) }) }
                }
            }
            OP_READDIR => {
                let verifier = fixed(r, "cookieverf")?;
                let mut entries = Vec::new();
                while r.bool("entries")? {
                    let cookie = r.u64("cookie")?;
                    let name = r.opaque("name", u32::MAX)?.to_vec();
                    entries.push(DirEntry { cookie, name, attrs: Fattr::decode(r)? });
                }
                Res::Readdir { verifier, entries, eof: r.bool("eof")? }
            }
            OP_SETATTR => Res::SetAttr(bitmap(r)?),
            OP_READLINK if reduced => Res::Readlink(Vec::new()),
            OP_READLINK => Res::Readlink(r.opaque("link", u32::MAX)?.to_vec()),
            OP_WRITE => {
                Res::Write { count: r.u32("count")?, committed: r.u32("committed")?, verifier: fixed(r, "writeverf")? }
            }
            OP_BIND_CONN_TO_SESSION => Res::BindConnToSession {
                sessionid: fixed(r, "bctsr_sessid")?,
                dir: r.u32("bctsr_dir")?,
                use_rdma: r.bool("bctsr_use_conn_in_rdma_mode")?,
            },
            OP_EXCHANGE_ID => {
                let clientid = r.u64("eir_clientid")?;
                let sequenceid = r.u32("eir_sequenceid")?;
                let flags = r.u32("eir_flags")?;
                match r.u32("spr_how")? {
                    SP4_NONE => {}
                    SP4_MACH_CRED => {
                        bitmap(r)?;
                        bitmap(r)?;
                    }
                    _ => return Ok(None),
                }
                let minor_id = r.u64("so_minor_id")?;
                let major_id = r.opaque("so_major_id", NFS4_OPAQUE_LIMIT)?.to_vec();
                let scope = r.opaque("eir_server_scope", NFS4_OPAQUE_LIMIT)?.to_vec();
                if r.bounded_count("eir_server_impl_id", 4, 1)? == 1 {
                    utf8(r, "nii_domain")?;
                    utf8(r, "nii_name")?;
                    r.take(12, "nii_date")?;
                }
                Res::ExchangeId { clientid, sequenceid, flags, minor_id, major_id, scope }
            }
            OP_CREATE_SESSION => Res::CreateSession {
                sessionid: fixed(r, "csr_sessionid")?,
                sequence: r.u32("csr_sequence")?,
                flags: r.u32("csr_flags")?,
                fore: ChannelAttrs::decode(r)?,
                back: ChannelAttrs::decode(r)?,
            },
            OP_SECINFO_NO_NAME => {
                let mut flavors = Vec::new();
                for _ in 0..r.count("SECINFO4resok", 4)? {
                    let f = r.u32("flavor")?;
                    if f == RPCSEC_GSS {
                        r.opaque("oid", u32::MAX)?;
                        r.u32("qop")?;
                        r.u32("service")?;
                    }
                    flavors.push(f);
                }
                Res::SecInfo(flavors)
            }
            OP_SEQUENCE => Res::Sequence {
                sessionid: fixed(r, "sr_sessionid")?,
                sequenceid: r.u32("sr_sequenceid")?,
                slotid: r.u32("sr_slotid")?,
                highest_slotid: r.u32("sr_highest_slotid")?,
                target_highest_slotid: r.u32("sr_target_highest_slotid")?,
                status_flags: r.u32("sr_status_flags")?,
            },
            OP_TEST_STATEID => {
                let n = r.count("tsr_status_codes", 4)?;
                Res::TestStateid((0..n).map(|_| r.u32("tsr_status_codes")).collect::<R<Vec<_>>>()?)
            }
            OP_DELEGRETURN | OP_DESTROY_SESSION | OP_DESTROY_CLIENTID | OP_FREE_STATEID | OP_LOOKUP | OP_LOOKUPP
            | OP_PUTFH | OP_PUTROOTFH | OP_RECLAIM_COMPLETE | OP_RESTOREFH | OP_SAVEFH => Res::Empty,
            _ => return Ok(None),
        }))
    }
}

/// One nfs_resop4: the operation, its status, and its results when it succeeded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpResult {
    pub op: u32,
    pub status: u32,
    pub res: Option<Res>,
}

/// COMPOUND4res decoded: the status, the results in order, and how many bytes follow them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompoundRes {
    pub status: u32,
    pub results: Vec<OpResult>,
    pub trailing: usize,
}

impl CompoundRes {
    /// The results of the first operation `op` that succeeded.
    pub fn find(&self, op: u32) -> Option<&Res> {
        self.results.iter().find(|r| r.op == op).and_then(|r| r.res.as_ref())
    }
}

/// COMPOUND4res from `results`; `reduced(k)` says whether the k-th DDP-eligible item (READ
/// data, READLINK linkdata) was reduced.
/// SETATTR's attrsset follows its status whatever the status (RFC 8881 18.30.2). None when
/// the results do not decode, or hold an operation this vocabulary does not know.
pub fn compound_res(results: &[u8], reduced: impl Fn(usize) -> bool) -> Option<CompoundRes> {
    let mut reads = 0;
    let (status, results, trailing) = super::nfs4::read_compound_res(results, |op, st, r| {
        let res = if st == NFS4_OK || op == OP_SETATTR {
            // READ and READLINK results are the DDP-eligible items, in order (RFC 8267 6.4.1).
            let item = op == OP_READ || op == OP_READLINK;
            let red = item && reduced(reads);
            reads += item as usize;
            Some(Res::decode(op, r, red).ok()??)
        } else {
            None
        };
        Some(OpResult { op, status: st, res })
    })?;
    Some(CompoundRes { status, results, trailing })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(w: &[u32]) -> Vec<u8> {
        w.iter().flat_map(|x| x.to_be_bytes()).collect()
    }

    const SID: SessionId = [0x5a; 16];

    #[test]
    fn exchange_id_and_create_session_args_layout() {
        // RFC 8881 18.35.1: verifier4 (8), co_ownerid<> "ab", eia_flags, SP4_NONE, impl_id<1> empty.
        let a = compound_args(
            "",
            1,
            &[Op::ExchangeId {
                verifier: *b"VERIFIER",
                owner: b"ab".to_vec(),
                flags: EXCHGID4_FLAG_USE_NON_PNFS,
                state_protect: SP4_NONE,
                impl_id: None,
            }],
        );
        let mut want = words(&[0, 1, 1, 42]);
        want.extend_from_slice(b"VERIFIER");
        want.extend(words(&[2]));
        want.extend_from_slice(b"ab\0\0");
        want.extend(words(&[0x10000, 0, 0]));
        assert_eq!(a, want);
        assert_eq!(
            Op::decode(&mut Reader::new(&a[12..])).unwrap(),
            Op::ExchangeId {
                verifier: *b"VERIFIER",
                owner: b"ab".to_vec(),
                flags: 0x10000,
                state_protect: 0,
                impl_id: None
            }
        );

        // RFC 8881 18.36.1: clientid (hyper), sequence, flags, two channel_attrs4 (six counts
        // and ca_rdma_ird<1>), cb_program, csa_sec_parms<>: AUTH_NONE, then AUTH_SYS.
        let attrs = ChannelAttrs {
            headerpadsize: 0,
            maxrequestsize: 4096,
            maxresponsesize: 4096,
            maxresponsesize_cached: 0,
            maxoperations: 2,
            maxrequests: 1,
            rdma_ird: None,
        };
        let sys = words(&[0, 1, 0x6d000000, 0, 0, 0]); // stamp 0, "m", uid 0, gid 0, no gids
        let op = Op::CreateSession {
            clientid: 0x0102030405060708,
            sequence: 1,
            flags: CREATE_SESSION4_FLAG_CONN_BACK_CHAN,
            fore: ChannelAttrs { rdma_ird: Some(7), ..attrs },
            back: attrs,
            cb_program: 0x40000000,
            sec: vec![CbSec::None, CbSec::Sys(sys.clone())],
        };
        let mut x = Xdr::new();
        op.encode(&mut x);
        let mut want = words(&[43, 0x01020304, 0x05060708, 1, 2]);
        want.extend(words(&[0, 4096, 4096, 0, 2, 1, 1, 7]));
        want.extend(words(&[0, 4096, 4096, 0, 2, 1, 0]));
        want.extend(words(&[0x40000000, 2, 0, 1]));
        want.extend(&sys);
        assert_eq!(x.0, want);
        assert_eq!(Op::decode(&mut Reader::new(&want)).unwrap(), op);
    }

    #[test]
    fn sequence_open_and_bind_args_layout() {
        let mut x = Xdr::new();
        Op::Sequence { sessionid: SID, sequenceid: 9, slotid: 2, highest_slotid: 3, cachethis: true }.encode(&mut x);
        let mut want = words(&[53]);
        want.extend_from_slice(&SID);
        want.extend(words(&[9, 2, 3, 1]));
        assert_eq!(x.0, want);

        // OPEN4args: seqid, share_access, share_deny, open_owner4 {clientid, owner<>},
        // openflag4 OPEN4_NOCREATE, open_claim4 CLAIM_NULL "five".
        let mut x = Xdr::new();
        let open = Op::Open {
            seqid: 0,
            share_access: OPEN4_SHARE_ACCESS_READ,
            share_deny: OPEN4_SHARE_DENY_NONE,
            clientid: 5,
            owner: vec![1],
            how: OpenHow::NoCreate,
            claim: Claim::Null(b"five".to_vec()),
        };
        open.encode(&mut x);
        let mut want = words(&[18, 0, 1, 0, 0, 5, 1, 0x01000000, 0, 0, 4]);
        want.extend_from_slice(b"five");
        assert_eq!(x.0, want);
        assert_eq!(Op::decode(&mut Reader::new(&want)).unwrap(), open);

        // BIND_CONN_TO_SESSION4args: sessionid, CDFC4_BACK_OR_BOTH, use_conn_in_rdma_mode.
        let mut x = Xdr::new();
        Op::BindConnToSession { sessionid: SID, dir: CDFC4_BACK_OR_BOTH, use_rdma: false }.encode(&mut x);
        let mut want = words(&[41]);
        want.extend_from_slice(&SID);
        want.extend(words(&[7, 0]));
        assert_eq!(x.0, want);
    }

    #[test]
    fn session_replies_decode() {
        // COMPOUND4res OK, tag "", 3 results: EXCHANGE_ID, CREATE_SESSION, SEQUENCE.
        let mut b = words(&[0, 0, 3]);
        // EXCHANGE_ID4resok: clientid 0x11_0000_0022, sequenceid 1, flags CONFIRMED_R|USE_NON_PNFS,
        // SP4_NONE, server_owner4 {minor 0, major "s"}, scope "s", no impl id.
        b.extend(words(&[42, 0, 0x11, 0x22, 1, 0x80010000, 0, 0, 0, 1, 0x73000000, 1, 0x73000000, 0]));
        // CREATE_SESSION4resok: sessionid, sequence 1, flags CONN_BACK_CHAN, fore and back attrs.
        b.extend(words(&[43, 0]));
        b.extend_from_slice(&SID);
        b.extend(words(&[1, 2, 0, 8192, 8192, 1024, 8, 16, 0, 0, 4096, 4096, 0, 2, 1, 0]));
        // SEQUENCE4resok: sessionid, seq 1, slot 0, highest 15, target 15, CB_PATH_DOWN.
        b.extend(words(&[53, 0]));
        b.extend_from_slice(&SID);
        b.extend(words(&[1, 0, 15, 15, 1]));
        let res = compound_res(&b, |_| false).unwrap();
        assert_eq!((res.status, res.results.len(), res.trailing), (0, 3, 0));
        match res.find(OP_EXCHANGE_ID).unwrap() {
            Res::ExchangeId { clientid, sequenceid, flags, .. } => {
                assert_eq!((*clientid, *sequenceid, *flags), (0x11_0000_0022, 1, 0x80010000))
            }
            other => panic!("{other:?}"),
        }
        match res.find(OP_CREATE_SESSION).unwrap() {
            Res::CreateSession { sessionid, flags, fore, back, .. } => {
                assert_eq!((*sessionid, *flags), (SID, CREATE_SESSION4_FLAG_CONN_BACK_CHAN));
                assert_eq!((fore.maxrequests, fore.maxresponsesize_cached), (16, 1024));
                assert_eq!((back.maxrequests, back.maxoperations, back.rdma_ird), (1, 2, None));
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(res.find(OP_SEQUENCE), Some(Res::Sequence { status_flags: SEQ4_STATUS_CB_PATH_DOWN, .. })));
    }

    #[test]
    fn open_with_a_read_delegation_decodes() {
        // OPEN4resok: stateid, change_info4 {atomic, before, after}, rflags, attrset<>,
        // OPEN_DELEGATE_READ {stateid, recall, nfsace4 {type, flag, mask, who "EVERYONE@"}}.
        let mut b = words(&[0, 0, 1, 18, 0, 1]);
        b.extend_from_slice(&[1; 12]);
        b.extend(words(&[1, 0, 3, 0, 4, 4, 0, 1, 2]));
        b.extend_from_slice(&[2; 12]);
        b.extend(words(&[0, 0, 0, 1, 9]));
        b.extend_from_slice(b"EVERYONE@\0\0\0");
        let res = compound_res(&b, |_| false).unwrap();
        let mut deleg = [0u8; 16];
        deleg[..4].copy_from_slice(&[0, 0, 0, 2]);
        deleg[4..].copy_from_slice(&[2; 12]);
        let mut open = [0u8; 16];
        open[..4].copy_from_slice(&[0, 0, 0, 1]);
        open[4..].copy_from_slice(&[1; 12]);
        assert_eq!(
            res.find(OP_OPEN),
            Some(&Res::Open {
                stateid: open,
                cinfo: (true, 3, 4),
                rflags: 4,
                attrset: vec![],
                delegation: Delegation::Read { stateid: deleg, recall: false }
            })
        );
        // The server's encoder writes the same bytes.
        let mut x = Xdr::new();
        res.find(OP_OPEN).unwrap().encode(&mut x);
        assert_eq!(x.0, b[20..]);
    }

    #[test]
    fn bitmaps() {
        assert_eq!(bitmap_of(&[FATTR4_TYPE, FATTR4_SIZE, FATTR4_MODE]), [0b10010, 0b10]);
        assert!(bitmap_has(&[0, 1 << 11], FATTR4_MOUNTED_ON_FILEID - 12));
        assert!(!bitmap_has(&[1], 40));
    }
}
