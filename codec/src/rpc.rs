//! ONC RPC call and reply headers (RFC 5531 section 9), zero-copy: enough to drive a peer.
//! RPC-over-RDMA carries RPC messages without record marking (RFC 8166 3.2).

use core::fmt;

use crate::error::{DecodeError, EncodeError, ErrorKind};
use crate::xdr::{wire_enum, Reader, Writer};

/// RFC 5531 9: `rpcvers` MUST be 2.
pub const RPC_VERSION: u32 = 2;
/// `opaque body<400>` of opaque_auth (RFC 5531 8.2).
pub const MAX_AUTH_BYTES: u32 = 400;
/// `string machinename<255>` of authsys_parms (RFC 5531 appendix A).
pub const MAX_MACHINENAME: u32 = 255;
/// `unsigned int gids<16>` of authsys_parms.
pub const MAX_GIDS: u32 = 16;

wire_enum! {
    /// auth_flavor (RFC 5531 8.2 and the IANA registry).
    pub struct AuthFlavor(u32) {
        AUTH_NONE = 0,
        AUTH_SYS = 1,
        AUTH_SHORT = 2,
        AUTH_DH = 3,
        RPCSEC_GSS = 6,
    }
}

wire_enum! {
    /// msg_type (RFC 5531 9); Version Two reuses it for rdma_direction, rdma_optdir and
    /// xmsi_dir.
    pub struct MsgType(u32) {
        CALL = 0,
        REPLY = 1,
    }
}

impl MsgType {
    /// Reads the enum; another value is `invalid-enum` in `field`.
    pub fn decode(r: &mut Reader<'_>, field: &'static str) -> Result<MsgType, DecodeError> {
        let at = r.offset();
        let t = MsgType(r.u32(field)?);
        if !t.is_known() {
            return Err(DecodeError::new(field, at, ErrorKind::InvalidEnum { value: t.0 }));
        }
        Ok(t)
    }
}

wire_enum! {
    /// reply_stat (RFC 5531 9).
    pub struct ReplyStat(u32) {
        MSG_ACCEPTED = 0,
        MSG_DENIED = 1,
    }
}

wire_enum! {
    /// The accept_stat word; [`AcceptStat`] is the union it selects (RFC 5531 9).
    pub struct AcceptCode(u32) {
        SUCCESS = 0,
        PROG_UNAVAIL = 1,
        PROG_MISMATCH = 2,
        PROC_UNAVAIL = 3,
        GARBAGE_ARGS = 4,
        SYSTEM_ERR = 5,
    }
}

wire_enum! {
    /// reject_stat (RFC 5531 9); [`Rejected`] is the union it selects.
    pub struct RejectStat(u32) {
        RPC_MISMATCH = 0,
        AUTH_ERROR = 1,
    }
}

wire_enum! {
    /// auth_stat (RFC 5531 9, RFC 2203 5.3.3.3): kept open, peers send others.
    pub struct AuthStat(u32) {
        AUTH_OK = 0,
        AUTH_BADCRED = 1,
        AUTH_REJECTEDCRED = 2,
        AUTH_BADVERF = 3,
        AUTH_REJECTEDVERF = 4,
        AUTH_TOOWEAK = 5,
        AUTH_INVALIDRESP = 6,
        AUTH_FAILED = 7,
        AUTH_KERB_GENERIC = 8,
        AUTH_TIMEEXPIRE = 9,
        AUTH_TKT_FILE = 10,
        AUTH_DECODE = 11,
        AUTH_NET_ADDR = 12,
        RPCSEC_GSS_CREDPROBLEM = 13,
        RPCSEC_GSS_CTXPROBLEM = 14,
    }
}

/// `struct opaque_auth` (RFC 5531 8.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct OpaqueAuth<'a> {
    pub flavor: AuthFlavor,
    pub body: &'a [u8],
}

impl<'a> OpaqueAuth<'a> {
    /// AUTH_NONE with an empty body.
    pub const NONE: OpaqueAuth<'static> = OpaqueAuth { flavor: AuthFlavor::AUTH_NONE, body: &[] };

    fn decode(r: &mut Reader<'a>, flavor_field: &'static str, body_field: &'static str) -> Result<Self, DecodeError> {
        let flavor = AuthFlavor(r.u32(flavor_field)?);
        let body = r.opaque(body_field, MAX_AUTH_BYTES)?;
        Ok(OpaqueAuth { flavor, body })
    }

    pub fn encode(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        w.u32(self.flavor.0)?;
        w.opaque(self.body)
    }

    pub fn encoded_len(&self) -> usize {
        8 + crate::xdr::round_up4(self.body.len())
    }

    /// The AUTH_SYS parameters, when the flavor is AUTH_SYS.
    pub fn auth_sys(&self) -> Option<Result<AuthSys<'a>, DecodeError>> {
        (self.flavor == AuthFlavor::AUTH_SYS).then(|| AuthSys::decode(self.body))
    }
}

/// `struct authsys_parms` (RFC 5531 appendix A).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AuthSys<'a> {
    pub stamp: u32,
    pub machinename: &'a [u8],
    pub uid: u32,
    pub gid: u32,
    /// `count * 4` bytes of supplementary group ids.
    gids: &'a [u8],
}

impl<'a> AuthSys<'a> {
    /// Decodes an AUTH_SYS credential body; it must be consumed exactly.
    pub fn decode(body: &'a [u8]) -> Result<Self, DecodeError> {
        let mut r = Reader::new(body);
        let stamp = r.u32("stamp")?;
        let machinename = r.opaque("machinename", MAX_MACHINENAME)?;
        let uid = r.u32("uid")?;
        let gid = r.u32("gid")?;
        let n = r.bounded_count("gids", 4, MAX_GIDS)? as usize;
        let gids = r.take(n * 4, "gids")?;
        r.expect_empty("cred.body")?;
        Ok(AuthSys { stamp, machinename, uid, gid, gids })
    }

    pub fn gids(&self) -> impl ExactSizeIterator<Item = u32> + 'a {
        self.gids.chunks_exact(4).map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// Writes the parameters as the body of an opaque_auth (flavor, length, body, pad).
    pub fn encode_as_auth(
        w: &mut Writer<'_>,
        stamp: u32,
        machinename: &[u8],
        uid: u32,
        gid: u32,
        gids: &[u32],
    ) -> Result<(), EncodeError> {
        w.u32(AuthFlavor::AUTH_SYS.0)?;
        let at = w.reserve_u32()?;
        w.u32(stamp)?;
        w.opaque(machinename)?;
        w.u32(uid)?;
        w.u32(gid)?;
        w.u32(gids.len() as u32)?;
        for g in gids {
            w.u32(*g)?;
        }
        w.finish_opaque(at)
    }
}

/// `struct call_body` with its xid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallHeader<'a> {
    pub xid: u32,
    pub rpcvers: u32,
    pub prog: u32,
    pub vers: u32,
    pub proc_: u32,
    pub cred: OpaqueAuth<'a>,
    pub verf: OpaqueAuth<'a>,
}

impl<'a> CallHeader<'a> {
    /// A version-2 call with AUTH_NONE credential and verifier.
    pub fn new(xid: u32, prog: u32, vers: u32, proc_: u32) -> Self {
        CallHeader { xid, rpcvers: RPC_VERSION, prog, vers, proc_, cred: OpaqueAuth::NONE, verf: OpaqueAuth::NONE }
    }

    pub fn encoded_len(&self) -> usize {
        24 + self.cred.encoded_len() + self.verf.encoded_len()
    }

    pub fn encode(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        w.u32(self.xid)?;
        w.u32(MsgType::CALL.0)?;
        w.u32(self.rpcvers)?;
        w.u32(self.prog)?;
        w.u32(self.vers)?;
        w.u32(self.proc_)?;
        self.cred.encode(w)?;
        self.verf.encode(w)
    }
}

/// accept_stat with its arm (RFC 5531 9).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AcceptStat {
    Success,
    ProgUnavail,
    ProgMismatch { low: u32, high: u32 },
    ProcUnavail,
    GarbageArgs,
    SystemErr,
}

impl AcceptStat {
    pub fn code(&self) -> AcceptCode {
        match self {
            AcceptStat::Success => AcceptCode::SUCCESS,
            AcceptStat::ProgUnavail => AcceptCode::PROG_UNAVAIL,
            AcceptStat::ProgMismatch { .. } => AcceptCode::PROG_MISMATCH,
            AcceptStat::ProcUnavail => AcceptCode::PROC_UNAVAIL,
            AcceptStat::GarbageArgs => AcceptCode::GARBAGE_ARGS,
            AcceptStat::SystemErr => AcceptCode::SYSTEM_ERR,
        }
    }

    pub fn name(&self) -> &'static str {
        self.code().name().unwrap_or("")
    }
}

/// `rejected_reply` (RFC 5531 9).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rejected {
    RpcMismatch {
        low: u32,
        high: u32,
    },
    /// auth_stat, kept open (RFC 5531 9 and RFC 2203 add values).
    AuthError {
        stat: AuthStat,
    },
}

impl Rejected {
    pub fn code(&self) -> RejectStat {
        match self {
            Rejected::RpcMismatch { .. } => RejectStat::RPC_MISMATCH,
            Rejected::AuthError { .. } => RejectStat::AUTH_ERROR,
        }
    }

    pub fn name(&self) -> &'static str {
        self.code().name().unwrap_or("")
    }
}

/// `reply_body`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplyBody<'a> {
    Accepted { verf: OpaqueAuth<'a>, stat: AcceptStat },
    Denied(Rejected),
}

/// A reply header: xid and reply_body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReplyHeader<'a> {
    pub xid: u32,
    pub body: ReplyBody<'a>,
}

impl<'a> ReplyHeader<'a> {
    /// MSG_ACCEPTED with an AUTH_NONE verifier.
    pub fn accepted(xid: u32, stat: AcceptStat) -> Self {
        ReplyHeader { xid, body: ReplyBody::Accepted { verf: OpaqueAuth::NONE, stat } }
    }

    pub fn denied(xid: u32, why: Rejected) -> Self {
        ReplyHeader { xid, body: ReplyBody::Denied(why) }
    }

    /// xid, mtype, reply_stat, then the arm.
    pub fn encoded_len(&self) -> usize {
        12 + match &self.body {
            ReplyBody::Accepted { verf, stat } => {
                let mismatch = if matches!(stat, AcceptStat::ProgMismatch { .. }) { 8 } else { 0 };
                verf.encoded_len() + 4 + mismatch
            }
            ReplyBody::Denied(Rejected::RpcMismatch { .. }) => 4 + 8,
            ReplyBody::Denied(Rejected::AuthError { .. }) => 4 + 4,
        }
    }

    pub fn encode(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        w.u32(self.xid)?;
        w.u32(MsgType::REPLY.0)?;
        match &self.body {
            ReplyBody::Accepted { verf, stat } => {
                w.u32(ReplyStat::MSG_ACCEPTED.0)?;
                verf.encode(w)?;
                w.u32(stat.code().0)?;
                if let AcceptStat::ProgMismatch { low, high } = stat {
                    w.u32(*low)?;
                    w.u32(*high)?;
                }
                Ok(())
            }
            ReplyBody::Denied(why) => {
                w.u32(ReplyStat::MSG_DENIED.0)?;
                w.u32(why.code().0)?;
                match why {
                    Rejected::RpcMismatch { low, high } => {
                        w.u32(*low)?;
                        w.u32(*high)
                    }
                    Rejected::AuthError { stat } => w.u32(stat.0),
                }
            }
        }
    }
}

/// A call or reply header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RpcHeader<'a> {
    Call(CallHeader<'a>),
    Reply(ReplyHeader<'a>),
}

impl RpcHeader<'_> {
    pub fn xid(&self) -> u32 {
        match self {
            RpcHeader::Call(c) => c.xid,
            RpcHeader::Reply(r) => r.xid,
        }
    }

    pub fn encoded_len(&self) -> usize {
        match self {
            RpcHeader::Call(c) => c.encoded_len(),
            RpcHeader::Reply(r) => r.encoded_len(),
        }
    }

    pub fn encode(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        match self {
            RpcHeader::Call(c) => c.encode(w),
            RpcHeader::Reply(r) => r.encode(w),
        }
    }
}

/// A decoded RPC message: its header and the procedure's arguments or results.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RpcMessage<'a> {
    pub header: RpcHeader<'a>,
    /// Where the arguments or results start, from the start of the RPC message.
    pub body_offset: usize,
    pub body: &'a [u8],
}

impl<'a> RpcMessage<'a> {
    /// Decodes an RPC message at the start of `buf`; error offsets count from `buf[0]`.
    pub fn decode(buf: &'a [u8]) -> Result<Self, DecodeError> {
        Self::decode_at(buf, 0)
    }

    /// As [`RpcMessage::decode`], with error offsets counted from `base` (e.g. the length of
    /// the transport header in front of the payload).
    pub fn decode_at(buf: &'a [u8], base: usize) -> Result<Self, DecodeError> {
        let mut r = Reader::with_base(buf, base);
        let xid = r.u32("xid")?;
        let at = r.offset();
        let header = match MsgType(r.u32("mtype")?) {
            MsgType::CALL => RpcHeader::Call(CallHeader {
                xid,
                rpcvers: r.u32("rpcvers")?,
                prog: r.u32("prog")?,
                vers: r.u32("vers")?,
                proc_: r.u32("proc")?,
                cred: OpaqueAuth::decode(&mut r, "cred", "cred.body")?,
                verf: OpaqueAuth::decode(&mut r, "verf", "verf.body")?,
            }),
            MsgType::REPLY => RpcHeader::Reply(ReplyHeader { xid, body: Self::decode_reply(&mut r)? }),
            MsgType(value) => return Err(DecodeError::new("mtype", at, ErrorKind::InvalidEnum { value })),
        };
        Ok(RpcMessage { header, body_offset: r.position(), body: r.rest() })
    }

    fn decode_reply(r: &mut Reader<'a>) -> Result<ReplyBody<'a>, DecodeError> {
        let at = r.offset();
        match ReplyStat(r.u32("reply_stat")?) {
            ReplyStat::MSG_ACCEPTED => {
                let verf = OpaqueAuth::decode(r, "verf", "verf.body")?;
                let at = r.offset();
                let stat = match AcceptCode(r.u32("accept_stat")?) {
                    AcceptCode::SUCCESS => AcceptStat::Success,
                    AcceptCode::PROG_UNAVAIL => AcceptStat::ProgUnavail,
                    AcceptCode::PROG_MISMATCH => AcceptStat::ProgMismatch { low: r.u32("low")?, high: r.u32("high")? },
                    AcceptCode::PROC_UNAVAIL => AcceptStat::ProcUnavail,
                    AcceptCode::GARBAGE_ARGS => AcceptStat::GarbageArgs,
                    AcceptCode::SYSTEM_ERR => AcceptStat::SystemErr,
                    AcceptCode(value) => {
                        return Err(DecodeError::new("accept_stat", at, ErrorKind::InvalidEnum { value }))
                    }
                };
                Ok(ReplyBody::Accepted { verf, stat })
            }
            ReplyStat::MSG_DENIED => {
                let at = r.offset();
                Ok(ReplyBody::Denied(match RejectStat(r.u32("reject_stat")?) {
                    RejectStat::RPC_MISMATCH => Rejected::RpcMismatch { low: r.u32("low")?, high: r.u32("high")? },
                    RejectStat::AUTH_ERROR => Rejected::AuthError { stat: AuthStat(r.u32("auth_stat")?) },
                    RejectStat(value) => {
                        return Err(DecodeError::new("reject_stat", at, ErrorKind::InvalidEnum { value }))
                    }
                }))
            }
            ReplyStat(value) => Err(DecodeError::new("reply_stat", at, ErrorKind::InvalidEnum { value })),
        }
    }
}

impl fmt::Display for RpcHeader<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RpcHeader::Call(c) => write!(
                f,
                "CALL xid={:#010x} prog={} vers={} proc={} cred={}",
                c.xid, c.prog, c.vers, c.proc_, c.cred.flavor
            ),
            RpcHeader::Reply(r) => match r.body {
                ReplyBody::Accepted { stat, .. } => {
                    write!(f, "REPLY xid={:#010x} MSG_ACCEPTED {}", r.xid, stat.name())
                }
                ReplyBody::Denied(why) => {
                    write!(f, "REPLY xid={:#010x} MSG_DENIED {}", r.xid, why.name())
                }
            },
        }
    }
}

crate::xdr::impl_encode! {
    OpaqueAuth<'_> => encode;
    CallHeader<'_> => encode;
    ReplyHeader<'_> => encode;
    RpcHeader<'_> => encode;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(ws: &[u32]) -> std::vec::Vec<u8> {
        ws.iter().flat_map(|w| w.to_be_bytes()).collect()
    }

    // RFC 5531 9: NFS (100003) version 3 NULL call, AUTH_NONE both ways.
    #[test]
    fn null_call() {
        let b = words(&[0x1234, 0, 2, 100003, 3, 0, 0, 0, 0, 0]);
        let m = RpcMessage::decode(&b).unwrap();
        assert_eq!(m.body_offset, 40);
        let RpcHeader::Call(c) = m.header else { panic!() };
        assert_eq!((c.xid, c.prog, c.vers, c.proc_), (0x1234, 100003, 3, 0));
        let mut out = [0u8; 40];
        let mut w = Writer::new(&mut out);
        c.encode(&mut w).unwrap();
        assert_eq!(w.written(), &b[..]);
        assert_eq!(c.encoded_len(), 40);
    }

    #[test]
    fn auth_sys_round_trip() {
        let mut out = [0u8; 128];
        let mut w = Writer::new(&mut out);
        AuthSys::encode_as_auth(&mut w, 7, b"client", 0, 0, &[10, 20]).unwrap();
        let n = w.len();
        // flavor, length, stamp, name length, "client"+2 pad, uid, gid, count, 2 gids
        assert_eq!(n, 8 + 4 + 4 + 8 + 4 + 4 + 4 + 8);
        let mut r = Reader::new(&out[..n]);
        let a = OpaqueAuth::decode(&mut r, "cred", "cred.body").unwrap();
        let s = a.auth_sys().unwrap().unwrap();
        assert_eq!(s.machinename, b"client");
        assert_eq!(s.gids().collect::<std::vec::Vec<_>>(), [10, 20]);
    }

    #[test]
    fn prog_mismatch_reply() {
        let b = words(&[9, 1, 0, 0, 0, 2, 2, 4]);
        let m = RpcMessage::decode(&b).unwrap();
        assert_eq!(m.header, RpcHeader::Reply(ReplyHeader::accepted(9, AcceptStat::ProgMismatch { low: 2, high: 4 })));
        let mut out = [0u8; 32];
        let mut w = Writer::new(&mut out);
        m.header.encode(&mut w).unwrap();
        assert_eq!(w.written(), &b[..]);
    }

    #[test]
    fn oversized_credential_is_too_long() {
        let b = words(&[1, 0, 2, 1, 1, 0, 1, 401]);
        let e = RpcMessage::decode(&b).unwrap_err();
        assert_eq!(e, DecodeError::new("cred.body", 28, ErrorKind::TooLong { length: 401, max: 400 }));
    }

    #[test]
    fn bad_mtype() {
        let e = RpcMessage::decode_at(&words(&[1, 2]), 28).unwrap_err();
        assert_eq!(e, DecodeError::new("mtype", 32, ErrorKind::InvalidEnum { value: 2 }));
    }
}
