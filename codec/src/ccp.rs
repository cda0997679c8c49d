//! The Connection Configuration Protocol (RFC 5666 section 6; deleted by RFC 8166 A.1 as
//! never implemented). One ONC RPC program, carried like any other RPC in RDMA_MSG:
//!
//! ```text
//! program CONFIG_RDMA_PROG { version VERS1 {
//!     config_rdma_reply CONF_RDMA(config_rdma_req) = 1; } = 1; } = 100417;
//! struct config_rdma_req   { uint32 maxcall_sendsize; uint32 maxreply_sendsize; uint32 maxrdmaread; };
//! struct config_rdma_reply { uint32 maxcall_sendsize; uint32 align;             uint32 maxrdmaread; };
//! ```
//!
//! A CCP call is an RPC call header (rpcvers 2, prog 100417, vers 1, proc 1) followed by a
//! `config_rdma_req`; a CCP reply is an accepted SUCCESS reply followed by a
//! `config_rdma_reply`. The program has no NULL procedure 0 (wire notes A7): [`dispatch`]
//! says how a server should answer any call header.

use core::fmt;

use crate::error::{DecodeError, EncodeError, ErrorKind};
use crate::profile::Profile;
use crate::rpc::{
    AcceptStat, CallHeader, OpaqueAuth, Rejected, ReplyBody, ReplyHeader, RpcHeader, RpcMessage, RPC_VERSION,
};
use crate::v1::{field as v1_field, Body, HeaderBuilder, Message};
use crate::xdr::{Reader, Writer};

/// CONFIG_RDMA_PROG.
pub const PROGRAM: u32 = 100_417;
/// VERS1.
pub const VERSION: u32 = 1;
/// CONF_RDMA.
pub const CONF_RDMA: u32 = 1;

/// Byte offsets within an RPC call message of the words a CCP call checks (RFC 5531 9).
mod call_field {
    pub const MTYPE: usize = 4;
    pub const RPCVERS: usize = 8;
    pub const PROG: usize = 12;
    pub const VERS: usize = 16;
    pub const PROC: usize = 20;
}
/// Byte offset of `mtype` in an RPC reply.
const REPLY_MTYPE: usize = 4;

/// `struct config_rdma_req`: the client's connection requirements.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ConfigRdmaReq {
    /// "max size of inline RPC call"
    pub maxcall_sendsize: u32,
    /// "max size of inline RPC reply"
    pub maxreply_sendsize: u32,
    /// "max active RDMA Reads at client"
    pub maxrdmaread: u32,
}

impl ConfigRdmaReq {
    pub const ENCODED_LEN: usize = 12;

    pub const fn encoded_len(&self) -> usize {
        Self::ENCODED_LEN
    }

    pub fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(ConfigRdmaReq {
            maxcall_sendsize: r.u32("maxcall_sendsize")?,
            maxreply_sendsize: r.u32("maxreply_sendsize")?,
            maxrdmaread: r.u32("maxrdmaread")?,
        })
    }

    pub fn encode(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        w.u32(self.maxcall_sendsize)?;
        w.u32(self.maxreply_sendsize)?;
        w.u32(self.maxrdmaread)
    }
}

/// `struct config_rdma_reply`: the server's connection limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ConfigRdmaReply {
    /// "max call size accepted by server"
    pub maxcall_sendsize: u32,
    /// "server's receive buffer alignment" (what a client may use as RDMA_MSGP rdma_align)
    pub align: u32,
    /// "max active RDMA Reads at server"
    pub maxrdmaread: u32,
}

impl ConfigRdmaReply {
    pub const ENCODED_LEN: usize = 12;

    pub const fn encoded_len(&self) -> usize {
        Self::ENCODED_LEN
    }

    pub fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(ConfigRdmaReply {
            maxcall_sendsize: r.u32("maxcall_sendsize")?,
            align: r.u32("align")?,
            maxrdmaread: r.u32("maxrdmaread")?,
        })
    }

    pub fn encode(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        w.u32(self.maxcall_sendsize)?;
        w.u32(self.align)?;
        w.u32(self.maxrdmaread)
    }
}

/// How a CCP server answers a call header (RFC 5531 9 accept_stat; wire notes A7).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dispatch {
    /// prog 100417, vers 1, proc 1: decode `config_rdma_req`, answer SUCCESS.
    ConfRdma,
    /// Procedure 0 of the right program and version: not defined by RFC 5666; RFC 5531 7
    /// makes it NULL by convention. A server may answer an empty SUCCESS or PROC_UNAVAIL.
    Null,
    /// Another program: PROG_UNAVAIL.
    ProgUnavail,
    /// Another version: PROG_MISMATCH with low = high = 1.
    ProgMismatch,
    /// Another procedure: PROC_UNAVAIL.
    ProcUnavail,
    /// rpcvers other than 2: MSG_DENIED RPC_MISMATCH with low = high = 2.
    RpcMismatch,
}

impl Dispatch {
    /// The reply body a server sends for this case (SUCCESS for Null, by convention).
    pub fn reply_body(self) -> ReplyBody<'static> {
        let accepted = |stat| ReplyBody::Accepted { verf: OpaqueAuth::NONE, stat };
        match self {
            Dispatch::ConfRdma | Dispatch::Null => accepted(AcceptStat::Success),
            Dispatch::ProgUnavail => accepted(AcceptStat::ProgUnavail),
            Dispatch::ProgMismatch => accepted(AcceptStat::ProgMismatch { low: VERSION, high: VERSION }),
            Dispatch::ProcUnavail => accepted(AcceptStat::ProcUnavail),
            Dispatch::RpcMismatch => ReplyBody::Denied(Rejected::RpcMismatch { low: RPC_VERSION, high: RPC_VERSION }),
        }
    }
}

/// Classifies a call header for a CCP server.
pub fn dispatch(call: &CallHeader<'_>) -> Dispatch {
    if call.rpcvers != RPC_VERSION {
        Dispatch::RpcMismatch
    } else if call.prog != PROGRAM {
        Dispatch::ProgUnavail
    } else if call.vers != VERSION {
        Dispatch::ProgMismatch
    } else {
        match call.proc_ {
            CONF_RDMA => Dispatch::ConfRdma,
            0 => Dispatch::Null,
            _ => Dispatch::ProcUnavail,
        }
    }
}

/// A CONF_RDMA call: the RPC call header and its argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CcpCall<'a> {
    pub header: CallHeader<'a>,
    pub args: ConfigRdmaReq,
}

impl<'a> CcpCall<'a> {
    /// A call with AUTH_NONE credential and verifier.
    pub fn new(xid: u32, args: ConfigRdmaReq) -> Self {
        CcpCall { header: CallHeader::new(xid, PROGRAM, VERSION, CONF_RDMA), args }
    }

    /// Decodes a CCP call from an RPC message (no record mark). The header must be a CALL
    /// with rpcvers 2 (`unsupported-version rpcvers`), prog 100417 (`invalid prog`), vers 1
    /// (`unsupported-version vers`) and proc 1 (`invalid proc`; 0 included, as the program
    /// defines no NULL procedure); the argument must fill the rest exactly (`trailing-data
    /// config_rdma_req`).
    pub fn decode(rpc: &'a [u8]) -> Result<Self, DecodeError> {
        Self::decode_at(rpc, 0)
    }

    /// As [`CcpCall::decode`], with error offsets counted from `base` (the transport header's
    /// length when the RPC message is an RDMA_MSG payload).
    pub fn decode_at(rpc: &'a [u8], base: usize) -> Result<Self, DecodeError> {
        let m = RpcMessage::decode_at(rpc, base)?;
        let RpcHeader::Call(header) = m.header else {
            return Err(DecodeError::new(
                "mtype",
                base + call_field::MTYPE,
                ErrorKind::Invalid { reason: "a CCP call must be an RPC CALL" },
            ));
        };
        if header.rpcvers != RPC_VERSION {
            return Err(DecodeError::new(
                "rpcvers",
                base + call_field::RPCVERS,
                ErrorKind::UnsupportedVersion { value: header.rpcvers },
            ));
        }
        if header.prog != PROGRAM {
            return Err(DecodeError::new(
                "prog",
                base + call_field::PROG,
                ErrorKind::Invalid { reason: "not CONFIG_RDMA_PROG (100417)" },
            ));
        }
        if header.vers != VERSION {
            return Err(DecodeError::new(
                "vers",
                base + call_field::VERS,
                ErrorKind::UnsupportedVersion { value: header.vers },
            ));
        }
        if header.proc_ != CONF_RDMA {
            return Err(DecodeError::new(
                "proc",
                base + call_field::PROC,
                ErrorKind::Invalid { reason: "CONFIG_RDMA_PROG defines only procedure 1 (CONF_RDMA)" },
            ));
        }
        let mut r = Reader::with_base(m.body, base + m.body_offset);
        let args = ConfigRdmaReq::decode(&mut r)?;
        r.expect_empty("config_rdma_req")?;
        Ok(CcpCall { header, args })
    }

    pub fn encoded_len(&self) -> usize {
        self.header.encoded_len() + ConfigRdmaReq::ENCODED_LEN
    }

    pub fn encode(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        self.header.encode(w)?;
        self.args.encode(w)
    }
}

/// A reply to a CCP call. `result` is present exactly when the reply is MSG_ACCEPTED
/// SUCCESS; any other reply (PROC_UNAVAIL for procedure 0, PROG_MISMATCH, MSG_DENIED) has
/// void results.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CcpReply<'a> {
    pub header: ReplyHeader<'a>,
    pub result: Option<ConfigRdmaReply>,
}

impl<'a> CcpReply<'a> {
    /// MSG_ACCEPTED SUCCESS with an AUTH_NONE verifier.
    pub fn success(xid: u32, result: ConfigRdmaReply) -> Self {
        CcpReply { header: ReplyHeader::accepted(xid, AcceptStat::Success), result: Some(result) }
    }

    /// The reply a server sends for a call it does not execute (see [`dispatch`]).
    pub fn refusal(xid: u32, why: Dispatch) -> Self {
        CcpReply { header: ReplyHeader { xid, body: why.reply_body() }, result: None }
    }

    /// Decodes a reply message. A REPLY has no program number, so the caller matches the
    /// xid to its CCP call. After SUCCESS, a `config_rdma_reply` must fill the rest exactly;
    /// after anything else, nothing may follow (`trailing-data results`). An empty SUCCESS
    /// (what a server may send for procedure 0) is `truncated maxcall_sendsize`: decode it
    /// with [`RpcMessage::decode`] when procedure 0 was called.
    pub fn decode(rpc: &'a [u8]) -> Result<Self, DecodeError> {
        Self::decode_at(rpc, 0)
    }

    /// As [`CcpReply::decode`], with error offsets counted from `base`.
    pub fn decode_at(rpc: &'a [u8], base: usize) -> Result<Self, DecodeError> {
        let m = RpcMessage::decode_at(rpc, base)?;
        let RpcHeader::Reply(header) = m.header else {
            return Err(DecodeError::new(
                "mtype",
                base + REPLY_MTYPE,
                ErrorKind::Invalid { reason: "a CCP reply must be an RPC REPLY" },
            ));
        };
        let mut r = Reader::with_base(m.body, base + m.body_offset);
        let result = match header.body {
            ReplyBody::Accepted { stat: AcceptStat::Success, .. } => {
                let res = ConfigRdmaReply::decode(&mut r)?;
                r.expect_empty("config_rdma_reply")?;
                Some(res)
            }
            _ => {
                r.expect_empty("results")?;
                None
            }
        };
        Ok(CcpReply { header, result })
    }

    pub fn encoded_len(&self) -> usize {
        self.header.encoded_len() + self.result.map_or(0, |_| ConfigRdmaReply::ENCODED_LEN)
    }

    /// Writes the reply header and, when present, the result.
    pub fn encode(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        self.header.encode(w)?;
        match &self.result {
            Some(res) => res.encode(w),
            None => Ok(()),
        }
    }
}

fn decode_rdma_msg<'a>(buf: &'a [u8], profile: &Profile) -> Result<Message<'a>, DecodeError> {
    let m = Message::decode(buf, profile)?;
    if !matches!(m.header.body, Body::Msg(_)) {
        return Err(DecodeError::new(
            "rdma_proc",
            v1_field::PROC,
            ErrorKind::Invalid { reason: "CCP messages are carried inline in RDMA_MSG" },
        ));
    }
    Ok(m)
}

/// Decodes a whole received Send buffer: a Version One RDMA_MSG header (`invalid rdma_proc`
/// otherwise) whose payload is a CCP call. Error offsets count from the start of `buf`. The
/// chunk lists are returned but not interpreted: CCP messages fit the 1024-byte initial
/// inline threshold (RFC 5666 6.1), so they are expected to be empty.
pub fn decode_call_message<'a>(buf: &'a [u8], profile: &Profile) -> Result<(Message<'a>, CcpCall<'a>), DecodeError> {
    let m = decode_rdma_msg(buf, profile)?;
    let call = CcpCall::decode_at(m.payload, m.payload_offset)?;
    Ok((m, call))
}

/// As [`decode_call_message`], for a CCP reply.
pub fn decode_reply_message<'a>(buf: &'a [u8], profile: &Profile) -> Result<(Message<'a>, CcpReply<'a>), DecodeError> {
    let m = decode_rdma_msg(buf, profile)?;
    let reply = CcpReply::decode_at(m.payload, m.payload_offset)?;
    Ok((m, reply))
}

/// Writes a chunk-less RDMA_MSG header (rdma_xid = the RPC xid) and the CCP call; returns the
/// length written.
pub fn encode_call_message(buf: &mut [u8], credit: u32, call: &CcpCall<'_>) -> Result<usize, EncodeError> {
    let mut w = Writer::new(buf);
    HeaderBuilder::msg(call.header.xid, credit).write(&mut w)?;
    call.encode(&mut w)?;
    Ok(w.len())
}

/// Writes a chunk-less RDMA_MSG header (rdma_xid = the RPC xid) and the CCP reply.
pub fn encode_reply_message(buf: &mut [u8], credit: u32, reply: &CcpReply<'_>) -> Result<usize, EncodeError> {
    let mut w = Writer::new(buf);
    HeaderBuilder::msg(reply.header.xid, credit).write(&mut w)?;
    reply.encode(&mut w)?;
    Ok(w.len())
}

impl fmt::Display for ConfigRdmaReq {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "config_rdma_req maxcall_sendsize={} maxreply_sendsize={} maxrdmaread={}",
            self.maxcall_sendsize, self.maxreply_sendsize, self.maxrdmaread
        )
    }
}

impl fmt::Display for ConfigRdmaReply {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "config_rdma_reply maxcall_sendsize={} align={} maxrdmaread={}",
            self.maxcall_sendsize, self.align, self.maxrdmaread
        )
    }
}

impl fmt::Display for CcpCall<'_> {
    /// `CONF_RDMA call xid=0x00000001 config_rdma_req maxcall_sendsize=...`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CONF_RDMA call xid={:#010x} {}", self.header.xid, self.args)
    }
}

impl fmt::Display for CcpReply<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.result {
            Some(res) => write!(f, "CONF_RDMA reply xid={:#010x} {}", self.header.xid, res),
            None => write!(f, "CONF_RDMA reply {}", RpcHeader::Reply(self.header)),
        }
    }
}

crate::xdr::impl_encode! {
    ConfigRdmaReq => encode;
    ConfigRdmaReply => encode;
    CcpCall<'_> => encode;
    CcpReply<'_> => encode;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(ws: &[u32]) -> std::vec::Vec<u8> {
        ws.iter().flat_map(|w| w.to_be_bytes()).collect()
    }

    // RFC 5666 6.2: call xid 1, CALL, rpcvers 2, prog 100417, vers 1, proc 1, AUTH_NONE x2,
    // then config_rdma_req {4096, 4096, 16}.
    const CALL: [u32; 13] = [1, 0, 2, 100417, 1, 1, 0, 0, 0, 0, 4096, 4096, 16];

    #[test]
    fn parse_and_emit_call() {
        let b = words(&CALL);
        let c = CcpCall::decode(&b).unwrap();
        assert_eq!(c.args, ConfigRdmaReq { maxcall_sendsize: 4096, maxreply_sendsize: 4096, maxrdmaread: 16 });
        assert_eq!(c, CcpCall::new(1, c.args));
        assert_eq!(c.encoded_len(), 52);
        let mut out = [0u8; 52];
        let mut w = Writer::new(&mut out);
        c.encode(&mut w).unwrap();
        assert_eq!(&out[..], &b[..]);
    }

    #[test]
    fn call_header_checks() {
        let mut ws = CALL;
        ws[5] = 0;
        let e = CcpCall::decode_at(&words(&ws), 28).unwrap_err();
        assert_eq!((e.field, e.offset), ("proc", 48));
        let mut ws = CALL;
        ws[4] = 2;
        assert_eq!(CcpCall::decode(&words(&ws)).unwrap_err().kind, ErrorKind::UnsupportedVersion { value: 2 });
        let mut ws = CALL;
        ws[3] = 100003;
        assert_eq!(CcpCall::decode(&words(&ws)).unwrap_err().field, "prog");
        let e = CcpCall::decode(&words(&CALL[..12])).unwrap_err();
        assert_eq!(e, DecodeError::new("maxrdmaread", 48, ErrorKind::Truncated { needed: 4, available: 0 }));
        let mut long = words(&CALL);
        long.extend([0, 0, 0, 0]);
        assert_eq!(CcpCall::decode(&long).unwrap_err().kind, ErrorKind::TrailingData { extra: 4 });
    }

    #[test]
    fn reply_round_trip() {
        let b = words(&[1, 1, 0, 0, 0, 0, 8192, 4096, 4]);
        let r = CcpReply::decode(&b).unwrap();
        assert_eq!(r, CcpReply::success(1, ConfigRdmaReply { maxcall_sendsize: 8192, align: 4096, maxrdmaread: 4 }));
        assert_eq!(r.encoded_len(), 36);
        let mut out = [0u8; 36];
        let mut w = Writer::new(&mut out);
        r.encode(&mut w).unwrap();
        assert_eq!(&out[..], &b[..]);
    }

    #[test]
    fn refusals_have_no_result() {
        let b = words(&[3, 1, 0, 0, 0, 3]);
        let r = CcpReply::decode(&b).unwrap();
        assert_eq!(r, CcpReply::refusal(3, Dispatch::ProcUnavail));
        assert_eq!(r.encoded_len(), 24);
        for (d, len) in [(Dispatch::ProgMismatch, 32), (Dispatch::RpcMismatch, 24)] {
            let r = CcpReply::refusal(9, d);
            let mut out = [0u8; 64];
            let mut w = Writer::new(&mut out);
            r.encode(&mut w).unwrap();
            assert_eq!((w.len(), r.encoded_len()), (len, len));
            assert_eq!(CcpReply::decode(&out[..len]).unwrap(), r);
        }
        // An empty SUCCESS (the conventional NULL answer) is not a CONF_RDMA result.
        assert_eq!(CcpReply::refusal(9, Dispatch::Null).encoded_len(), 24);
        let e = CcpReply::decode(&words(&[3, 1, 0, 0, 0, 0])).unwrap_err();
        assert_eq!((e.field, e.offset), ("maxcall_sendsize", 24));
        let e = CcpReply::decode(&words(&[3, 1, 0, 0, 0, 3, 7])).unwrap_err();
        assert_eq!((e.field, e.offset), ("results", 24));
        let e = CcpReply::decode(&words(&CALL)).unwrap_err();
        assert_eq!((e.field, e.offset), ("mtype", 4));
    }

    #[test]
    fn dispatch_table() {
        let h = |rpcvers, prog, vers, proc_| {
            let mut c = CallHeader::new(1, prog, vers, proc_);
            c.rpcvers = rpcvers;
            dispatch(&c)
        };
        assert_eq!(h(2, PROGRAM, 1, 1), Dispatch::ConfRdma);
        assert_eq!(h(2, PROGRAM, 1, 0), Dispatch::Null);
        assert_eq!(h(2, PROGRAM, 1, 2), Dispatch::ProcUnavail);
        assert_eq!(h(2, PROGRAM, 2, 1), Dispatch::ProgMismatch);
        assert_eq!(h(2, 100003, 1, 1), Dispatch::ProgUnavail);
        assert_eq!(h(3, PROGRAM, 1, 1), Dispatch::RpcMismatch);
    }

    #[test]
    fn carried_in_rdma_msg() {
        let call = CcpCall::new(7, ConfigRdmaReq { maxcall_sendsize: 1024, maxreply_sendsize: 1024, maxrdmaread: 0 });
        let mut buf = [0u8; 128];
        let n = encode_call_message(&mut buf, 1, &call).unwrap();
        assert_eq!(n, 28 + 52);
        let (m, c) = decode_call_message(&buf[..n], &Profile::default()).unwrap();
        assert_eq!((m.header.xid, m.payload_offset), (7, 28));
        assert_eq!(c, call);
        let mut nomsg = buf;
        nomsg[15] = 1;
        let e = decode_call_message(&nomsg[..n], &Profile::default()).unwrap_err();
        assert_eq!((e.field, e.offset), ("rdma_proc", 12));
        let reply = CcpReply::success(7, ConfigRdmaReply { maxcall_sendsize: 1024, align: 0, maxrdmaread: 0 });
        let n = encode_reply_message(&mut buf, 1, &reply).unwrap();
        assert_eq!(decode_reply_message(&buf[..n], &Profile::default()).unwrap().1, reply);
    }
}
