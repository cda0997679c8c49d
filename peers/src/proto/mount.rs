//! How a client obtains an export's root file handle: the MOUNT protocol, version 3 (RFC 1813
//! appendix I: MOUNTPROC3_MNT of a `dirpath` answers a `mountres3` with the `fhandle3`), at
//! the port the portmapper gives (RFC 1833 3: PMAPPROC_GETPORT of a `mapping`). Arguments and
//! results of both, encoded and decoded; the records that carry them are [`super::record`]'s.

use std::fmt;

use rpcrdma_codec::xdr::{round_up4, Reader, Writer};
use rpcrdma_codec::DecodeError;

use super::record::ReplyError;

pub const MOUNT_PROGRAM: u32 = 100005;
pub const MOUNT_V3: u32 = 3;
// Procedures (RFC 1813 appendix I).
pub const MOUNTPROC3_NULL: u32 = 0;
pub const MOUNTPROC3_MNT: u32 = 1;
pub const MOUNTPROC3_UMNT: u32 = 3;
/// `dirpath<MNTPATHLEN>`.
pub const MNTPATHLEN: u32 = 1024;
/// `fhandle3<FHSIZE3>`.
pub const FHSIZE3: u32 = 64;

pub const PMAP_PROG: u32 = 100000;
pub const PMAP_VERS: u32 = 2;
pub const PMAPPROC_GETPORT: u32 = 3;
/// The portmapper's well-known port (RFC 1833 3).
pub const PMAP_PORT: u16 = 111;
/// `mapping.prot` for TCP (RFC 1833 3).
pub const IPPROTO_TCP: u32 = 6;

/// `mountstat3` (RFC 1813 appendix I), open: a value the RFC does not define survives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MountStat3(pub u32);

impl MountStat3 {
    pub const MNT3_OK: MountStat3 = MountStat3(0);
    pub const MNT3ERR_PERM: MountStat3 = MountStat3(1);
    pub const MNT3ERR_NOENT: MountStat3 = MountStat3(2);
    pub const MNT3ERR_IO: MountStat3 = MountStat3(5);
    pub const MNT3ERR_ACCES: MountStat3 = MountStat3(13);
    pub const MNT3ERR_NOTDIR: MountStat3 = MountStat3(20);
    pub const MNT3ERR_INVAL: MountStat3 = MountStat3(22);
    pub const MNT3ERR_NAMETOOLONG: MountStat3 = MountStat3(63);
    pub const MNT3ERR_NOTSUPP: MountStat3 = MountStat3(10004);
    pub const MNT3ERR_SERVERFAULT: MountStat3 = MountStat3(10006);

    /// The RFC's name, or None for a value it does not define.
    pub fn name(self) -> Option<&'static str> {
        Some(match self.0 {
            0 => "MNT3_OK",
            1 => "MNT3ERR_PERM",
            2 => "MNT3ERR_NOENT",
            5 => "MNT3ERR_IO",
            13 => "MNT3ERR_ACCES",
            20 => "MNT3ERR_NOTDIR",
            22 => "MNT3ERR_INVAL",
            63 => "MNT3ERR_NAMETOOLONG",
            10004 => "MNT3ERR_NOTSUPP",
            10006 => "MNT3ERR_SERVERFAULT",
            _ => return None,
        })
    }
}

impl fmt::Display for MountStat3 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(n) => f.write_str(n),
            None => write!(f, "mountstat3 {} (not defined by RFC 1813)", self.0),
        }
    }
}

/// Why MOUNT or GETPORT did not give what was asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MountError {
    /// The reply itself: garbled, denied, or not SUCCESS.
    Reply(ReplyError),
    /// MOUNTPROC3_MNT answered an error status.
    Status(MountStat3),
    /// GETPORT answered port 0: the program is not registered (RFC 1833 3).
    NotRegistered { prog: u32, vers: u32 },
    /// GETPORT answered a port no TCP port can be.
    PortOutOfRange(u32),
    /// A `dirpath` longer than MNTPATHLEN bytes: not sent.
    PathTooLong(usize),
}

impl From<ReplyError> for MountError {
    fn from(e: ReplyError) -> Self {
        MountError::Reply(e)
    }
}

impl From<DecodeError> for MountError {
    fn from(e: DecodeError) -> Self {
        MountError::Reply(ReplyError::Garbled(e))
    }
}

impl fmt::Display for MountError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MountError::Reply(e) => e.fmt(f),
            MountError::Status(s) => s.fmt(f),
            MountError::NotRegistered { prog, vers } => {
                write!(f, "program {prog} version {vers} is not registered for TCP (GETPORT answered port 0)")
            }
            MountError::PortOutOfRange(p) => write!(f, "GETPORT answered port {p}, beyond 65535"),
            MountError::PathTooLong(n) => {
                write!(f, "the export path is {n} bytes, more than MNTPATHLEN ({MNTPATHLEN})")
            }
        }
    }
}

impl std::error::Error for MountError {}

/// Exactly `len` bytes written by `f`.
fn encode(len: usize, f: impl FnOnce(&mut Writer<'_>) -> Result<(), rpcrdma_codec::EncodeError>) -> Vec<u8> {
    let mut buf = vec![0u8; len];
    let mut w = Writer::new(&mut buf);
    f(&mut w).expect("the length is computed exactly");
    assert_eq!(w.len(), len, "the length is computed exactly");
    buf
}

/// The argument of MOUNTPROC3_MNT and MOUNTPROC3_UMNT: `dirpath`, a `string<MNTPATHLEN>`.
pub fn dirpath_args(path: &str) -> Result<Vec<u8>, MountError> {
    if path.len() > MNTPATHLEN as usize {
        return Err(MountError::PathTooLong(path.len()));
    }
    Ok(encode(4 + round_up4(path.len()), |w| w.opaque(path.as_bytes())))
}

/// `dirpath` decoded (the reference MOUNT responder's side); not UTF-8 is garbage.
pub fn decode_dirpath(args: &[u8]) -> Result<String, DecodeError> {
    let mut r = Reader::new(args);
    let at = r.offset();
    let path = r.opaque("dirpath", MNTPATHLEN)?;
    String::from_utf8(path.to_vec())
        .map_err(|_| DecodeError::new("dirpath", at, rpcrdma_codec::ErrorKind::Invalid { reason: "not UTF-8" }))
}

/// `mountres3_ok`: the export's root handle and the flavors the server accepts on it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MountOk {
    pub fhandle: Vec<u8>,
    pub auth_flavors: Vec<u32>,
}

/// The results of MOUNTPROC3_MNT: the handle (at most FHSIZE3 bytes) and flavors on
/// MNT3_OK, the status otherwise.
pub fn decode_mountres3(results: &[u8]) -> Result<MountOk, MountError> {
    let mut r = Reader::new(results);
    let status = MountStat3(r.u32("fhs_status")?);
    if status != MountStat3::MNT3_OK {
        return Err(MountError::Status(status));
    }
    let fhandle = r.opaque("fhandle", FHSIZE3)?.to_vec();
    let n = r.count("auth_flavors", 4)?;
    let auth_flavors = (0..n).map(|_| r.u32("auth_flavors")).collect::<Result<_, _>>()?;
    Ok(MountOk { fhandle, auth_flavors })
}

/// `mountres3` for MNT3_OK (the reference MOUNT responder's side).
pub fn mountres3_ok(fhandle: &[u8], auth_flavors: &[u32]) -> Vec<u8> {
    encode(4 + 4 + round_up4(fhandle.len()) + 4 + 4 * auth_flavors.len(), |w| {
        w.u32(MountStat3::MNT3_OK.0)?;
        w.opaque(fhandle)?;
        w.u32(auth_flavors.len() as u32)?;
        auth_flavors.iter().try_for_each(|f| w.u32(*f))
    })
}

/// `mountres3` for an error status: the status alone (the `default: void` arm).
pub fn mountres3_err(status: MountStat3) -> Vec<u8> {
    status.0.to_be_bytes().to_vec()
}

/// `struct mapping` (RFC 1833 3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mapping {
    pub prog: u32,
    pub vers: u32,
    pub prot: u32,
    pub port: u32,
}

impl Mapping {
    /// The GETPORT question for `prog`/`vers` over TCP (port 0: ignored, RFC 1833 3).
    pub fn tcp(prog: u32, vers: u32) -> Mapping {
        Mapping { prog, vers, prot: IPPROTO_TCP, port: 0 }
    }

    pub fn encode(&self) -> Vec<u8> {
        encode(16, |w| {
            w.u32(self.prog)?;
            w.u32(self.vers)?;
            w.u32(self.prot)?;
            w.u32(self.port)
        })
    }

    pub fn decode(args: &[u8]) -> Result<Mapping, DecodeError> {
        let mut r = Reader::new(args);
        Ok(Mapping { prog: r.u32("prog")?, vers: r.u32("vers")?, prot: r.u32("prot")?, port: r.u32("port")? })
    }
}

/// The result of PMAPPROC_GETPORT for `asked`: the port, which 0 says is not registered.
pub fn decode_getport(results: &[u8], asked: &Mapping) -> Result<u16, MountError> {
    let port = Reader::new(results).u32("port")?;
    match port {
        0 => Err(MountError::NotRegistered { prog: asked.prog, vers: asked.vers }),
        p => u16::try_from(p).map_err(|_| MountError::PortOutOfRange(p)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rpcrdma_codec::ErrorKind;

    // Expected bytes written from the XDR of RFC 1813 appendix I and RFC 1833 3.

    #[test]
    fn dirpath() {
        assert_eq!(dirpath_args("/export").unwrap(), [0, 0, 0, 7, b'/', b'e', b'x', b'p', b'o', b'r', b't', 0]);
        assert_eq!(dirpath_args("/").unwrap(), [0, 0, 0, 1, b'/', 0, 0, 0]);
        assert_eq!(dirpath_args(&"a".repeat(1024)).unwrap().len(), 4 + 1024);
        assert_eq!(dirpath_args(&"a".repeat(1025)), Err(MountError::PathTooLong(1025)));
        assert_eq!(decode_dirpath(&[0, 0, 0, 2, b'/', b'x', 0, 0]).unwrap(), "/x");
        assert!(decode_dirpath(&[0, 0, 4, 1]).is_err(), "longer than MNTPATHLEN");
        assert!(decode_dirpath(&[0, 0, 0, 2, 0xff, 0xfe, 0, 0]).is_err(), "not UTF-8");
    }

    #[test]
    fn mountres3_ok_decodes() {
        #[rustfmt::skip]
        let ok = [
            0, 0, 0, 0,                              // MNT3_OK
            0, 0, 0, 8, 1, 0, 1, 0, 1, 0, 0, 0,      // fhandle3, 8 bytes
            0, 0, 0, 2, 0, 0, 0, 1, 0, 5, 0xf3, 0x73, // auth_flavors: AUTH_SYS, 390003 (krb5)
        ];
        let m = decode_mountres3(&ok).unwrap();
        assert_eq!(m, MountOk { fhandle: vec![1, 0, 1, 0, 1, 0, 0, 0], auth_flavors: vec![1, 390003] });
        assert_eq!(mountres3_ok(&m.fhandle, &m.auth_flavors), ok);
        // A 64-byte handle is the longest.
        let mut long = vec![0, 0, 0, 0, 0, 0, 0, 64];
        long.extend([0xab; 64]);
        long.extend([0, 0, 0, 0]);
        assert_eq!(decode_mountres3(&long).unwrap().fhandle, [0xab; 64]);
    }

    #[test]
    fn mount_errors_are_named_as_the_rfc_names_them() {
        for (code, name) in
            [(1, "MNT3ERR_PERM"), (2, "MNT3ERR_NOENT"), (13, "MNT3ERR_ACCES"), (10006, "MNT3ERR_SERVERFAULT")]
        {
            let e = decode_mountres3(&u32::to_be_bytes(code)).unwrap_err();
            assert_eq!(e, MountError::Status(MountStat3(code)));
            assert_eq!(e.to_string(), name);
        }
        assert_eq!(mountres3_err(MountStat3::MNT3ERR_ACCES), [0, 0, 0, 13]);
        let e = decode_mountres3(&[0, 0, 0, 99]).unwrap_err();
        assert_eq!(e.to_string(), "mountstat3 99 (not defined by RFC 1813)");
    }

    fn garbled(r: Result<MountOk, MountError>) -> ErrorKind {
        match r {
            Err(MountError::Reply(ReplyError::Garbled(e))) => e.kind,
            other => panic!("not garbled: {other:?}"),
        }
    }

    #[test]
    fn hostile_mount_results() {
        // A handle longer than FHSIZE3, a huge length, a handle cut short, a flavor count the
        // bytes left cannot hold, nothing at all.
        let mut long = vec![0, 0, 0, 0, 0, 0, 0, 65];
        long.extend([0; 68 + 4]);
        assert_eq!(garbled(decode_mountres3(&long)), ErrorKind::TooLong { length: 65, max: 64 });
        assert_eq!(
            garbled(decode_mountres3(&[0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff])),
            ErrorKind::TooLong { length: u32::MAX, max: 64 }
        );
        assert!(matches!(garbled(decode_mountres3(&[0, 0, 0, 0, 0, 0, 0, 8, 1, 2])), ErrorKind::Truncated { .. }));
        let many = [0, 0, 0, 0, 0, 0, 0, 0, 0x40, 0, 0, 0, 0, 0, 0, 1];
        assert!(matches!(garbled(decode_mountres3(&many)), ErrorKind::CountExceedsInput { .. }));
        assert!(matches!(garbled(decode_mountres3(&[])), ErrorKind::Truncated { .. }));
        // No prefix of a good reply panics or succeeds.
        let ok = mountres3_ok(&[7; 12], &[1]);
        for n in 0..ok.len() {
            assert!(decode_mountres3(&ok[..n]).is_err(), "{n}");
        }
    }

    #[test]
    fn getport() {
        let asked = Mapping::tcp(MOUNT_PROGRAM, MOUNT_V3);
        assert_eq!(asked.encode(), [0, 1, 0x86, 0xa5, 0, 0, 0, 3, 0, 0, 0, 6, 0, 0, 0, 0]);
        assert_eq!(Mapping::decode(&asked.encode()).unwrap(), asked);
        assert!(Mapping::decode(&[0; 15]).is_err());
        assert_eq!(decode_getport(&[0, 0, 0x02, 0x6b], &asked).unwrap(), 619);
        assert_eq!(decode_getport(&[0, 0, 0, 0], &asked), Err(MountError::NotRegistered { prog: 100005, vers: 3 }));
        assert_eq!(decode_getport(&[0, 1, 0, 0], &asked), Err(MountError::PortOutOfRange(65536)));
        assert!(matches!(decode_getport(&[0, 0], &asked), Err(MountError::Reply(ReplyError::Garbled(_)))));
    }

    #[test]
    fn replies_as_records() {
        use crate::proto::record::{accepted_record, denied_record};
        use rpcrdma_codec::rpc::{AcceptStat, AuthStat, Rejected};
        // 24 bytes of header (xid, REPLY, MSG_ACCEPTED, AUTH_NONE verf, SUCCESS), 4 of results.
        #[rustfmt::skip]
        let want = [0x80, 0, 0, 28, 0, 0, 0, 7, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 13];
        assert_eq!(accepted_record(7, AcceptStat::Success, &[0, 0, 0, 13]), want);
        let denied = denied_record(7, Rejected::AuthError { stat: AuthStat::AUTH_TOOWEAK });
        assert_eq!(denied, [0x80, 0, 0, 20, 0, 0, 0, 7, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 5]);
    }
}
