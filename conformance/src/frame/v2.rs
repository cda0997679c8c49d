//! The owned representation of a Version Two transport header (draft-cel-nfsv4-rpcrdma-
//! version-two-01 4.2, with the xcharext-02 and rtrext-03 operations).

use std::fmt;
use std::ops::Range;

use rpcrdma_codec::rtrext::{self, ReptErr, XmtCont};
use rpcrdma_codec::v1::FixedFields;
use rpcrdma_codec::v2::{self, ErrorInfo, Message, MsgType, OptInfo};
use rpcrdma_codec::xcharext;
use rpcrdma_codec::{DecodeError, Profile};

use super::v1::Chunks;

/// The operation an RDMA2_OPTIONAL carries, owned: the fields a check reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    /// xcharext-02 ROPT_RESPXCH: the request positions each subset holds, in ascending order.
    RespXch { done: Vec<usize>, rej: Vec<usize>, pend: Vec<usize> },
    /// rtrext-03 ROPT_XMTREQ: transmissions in the group, receive buffers reserved for the
    /// response, payload bytes in this transmission.
    XmtReq { count: u32, rsbuf: u32, pslen: u32 },
    /// rtrext-03 ROPT_XMTRESP: transmissions in the group, payload bytes in this one.
    XmtResp { count: u32, pslen: u32 },
    /// rtrext-03 ROPT_XMTCONT.
    XmtCont(XmtCont),
    /// rtrext-03 ROPT_REPTERR.
    ReptErr(ReptErr),
    /// Another known operation (ROPT_INITXCH, ROPT_REQXCH, ROPT_UPDXCH), by name.
    Other(&'static str),
    /// An opttype this decoder does not know.
    Unknown,
}

impl Op {
    fn of(info: &OptInfo<'_>) -> Op {
        match info {
            OptInfo::Xchar(xcharext::Op::RespXch(r)) => Op::RespXch {
                done: r.done.bits().collect(),
                rej: r.rej.bits().collect(),
                pend: r.pend.bits().collect(),
            },
            OptInfo::Rtr(rtrext::Op::XmtReq(r)) => Op::XmtReq { count: r.count, rsbuf: r.rsbuf, pslen: r.pslen },
            OptInfo::Rtr(rtrext::Op::XmtResp(r)) => Op::XmtResp { count: r.count, pslen: r.pslen },
            OptInfo::Rtr(rtrext::Op::XmtCont(c)) => Op::XmtCont(*c),
            OptInfo::Rtr(rtrext::Op::ReptErr(e)) => Op::ReptErr(*e),
            OptInfo::Xchar(op) => Op::Other(op.name()),
            OptInfo::Raw(_) => Op::Unknown,
        }
    }

    /// The operation's name (`ROPT_RESPXCH`), or None for an unknown opttype.
    pub fn name(&self) -> Option<&'static str> {
        Some(match self {
            Op::RespXch { .. } => "ROPT_RESPXCH",
            Op::XmtReq { .. } => "ROPT_XMTREQ",
            Op::XmtResp { .. } => "ROPT_XMTRESP",
            Op::XmtCont(_) => "ROPT_XMTCONT",
            Op::ReptErr(_) => "ROPT_REPTERR",
            Op::Other(name) => *name,
            Op::Unknown => return None,
        })
    }
}

/// `rpcrdma2_body`, owned; optinfo is a range of the frame's bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Body {
    Msg {
        direction: Option<MsgType>,
        chunks: Chunks,
    },
    NoMsg {
        direction: Option<MsgType>,
        chunks: Chunks,
    },
    Error(ErrorInfo),
    /// RDMA2_OPTIONAL: its direction, opttype, the operation decoded, and the optinfo bytes.
    Optional {
        dir: Option<MsgType>,
        opttype: u32,
        op: Op,
        info: Range<usize>,
    },
}

/// A Version Two header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    pub xid: u32,
    pub vers: u32,
    pub credit: u32,
    pub proc_: u32,
    pub body: Body,
    /// What follows the header: the RPC message of RDMA2_MSG, the (partial) payload stream
    /// of an RDMA2_OPTIONAL, normally nothing otherwise.
    pub payload: Range<usize>,
    summary: String,
}

impl Header {
    /// Decodes the header; with it, the range of the RPC message it carries whole: the
    /// payload of an RDMA2_MSG, or the `optxrs_pslen` bytes of a single-transmission
    /// ROPT_XMTRESP (rtrext-03 9.3) when they are there.
    pub fn decode(bytes: &[u8], profile: &Profile) -> Result<(Header, Option<Range<usize>>), DecodeError> {
        let m = Message::decode(bytes, profile)?;
        let payload = m.payload_offset..bytes.len();
        let mut rpc = None;
        let body = match m.header.body {
            v2::Body::Msg(c) => {
                if !m.payload.is_empty() {
                    rpc = Some(payload.clone());
                }
                Body::Msg { direction: c.direction, chunks: Chunks::of(&c.lists) }
            }
            v2::Body::NoMsg(c) => Body::NoMsg { direction: c.direction, chunks: Chunks::of(&c.lists) },
            v2::Body::Error(e) => Body::Error(e),
            v2::Body::Optional(o) => {
                let len = o.info.data_len();
                let at = m.payload_offset - rpcrdma_codec::xdr::round_up4(len);
                let op = Op::of(&o.info);
                if let Op::XmtResp { count: 1, pslen } = op {
                    if pslen as usize <= m.payload.len() {
                        rpc = Some(payload.start..payload.start + pslen as usize);
                    }
                }
                Body::Optional { dir: o.dir, opttype: o.opttype, op, info: at..at + len }
            }
        };
        let proc_ = m.header.body.proc_().0;
        let (xid, vers, credit) = (m.header.xid, m.header.vers, m.header.credit);
        Ok((Header { xid, vers, credit, proc_, body, payload, summary: m.header.to_string() }, rpc))
    }

    pub fn fixed(&self) -> FixedFields {
        FixedFields { xid: self.xid, vers: self.vers, credit: self.credit, proc_: self.proc_ }
    }
}

impl fmt::Display for Header {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.summary)
    }
}

#[cfg(test)]
mod tests {
    use rpcrdma_codec::check::Role;
    use rpcrdma_codec::rpc::{AcceptStat, ReplyHeader, RpcHeader};
    use rpcrdma_codec::rtrext::{OptrDetail, OptrErr, OptrInfo, XmsId, XmtResp};
    use rpcrdma_codec::v2::HeaderBuilder;
    use rpcrdma_codec::xcharext::{RespXch, XcharSubset};
    use rpcrdma_codec::xdr::Writer;

    use super::*;
    use crate::frame::rpc::RpcKind;
    use crate::frame::Frame;

    fn build(b: HeaderBuilder<'_>) -> Vec<u8> {
        let mut buf = vec![0u8; 512];
        let n = b.encode(&mut buf).expect("fits");
        buf.truncate(n);
        buf
    }

    fn rpc_ok(xid: u32) -> Vec<u8> {
        let mut b = vec![0u8; 64];
        let mut w = Writer::new(&mut b);
        RpcHeader::Reply(ReplyHeader::accepted(xid, AcceptStat::Success)).encode(&mut w).expect("fits");
        let n = w.len();
        b.truncate(n);
        b
    }

    fn optional(op: OptInfo<'_>, payload: &[u8]) -> Frame {
        let p = Profile::default();
        let opttype = match op {
            OptInfo::Xchar(x) => x.opttype(),
            OptInfo::Rtr(r) => r.kind().opttype(p.rtrext_opttypes),
            OptInfo::Raw(_) => 0x7fff_0001,
        };
        Frame::decode(
            build(HeaderBuilder::optional(7, 3, MsgType::REPLY, opttype, op).payload(payload)),
            None,
            Role::Reply,
            &p,
        )
    }

    #[test]
    fn respxch_subsets_are_owned_positions() {
        let o = Profile::default().subset_bit_order;
        let r = RespXch {
            done: XcharSubset::new(&[0b1001], o),
            rej: XcharSubset::new(&[0b0100], o),
            pend: XcharSubset::new(&[], o),
        };
        let f = optional(OptInfo::Xchar(xcharext::Op::RespXch(r)), &[]);
        let h = f.v2().expect("v2");
        let want = Op::RespXch { done: vec![0, 3], rej: vec![2], pend: vec![] };
        assert!(matches!(&h.body, Body::Optional { dir: Some(MsgType::REPLY), op, .. } if *op == want));
        assert_eq!(want.name(), Some("ROPT_RESPXCH"));
    }

    #[test]
    fn xmtresp_carries_its_rpc_reply() {
        let ok = rpc_ok(7);
        let resp = |count, pslen| rtrext::Op::XmtResp(XmtResp { count, pslen, ..Default::default() });
        let f = optional(OptInfo::Rtr(resp(1, ok.len() as u32)), &ok);
        assert!(matches!(f.v2().expect("v2").body, Body::Optional { op: Op::XmtResp { count: 1, .. }, .. }));
        let r = f.rpc.as_ref().expect("an RPC reply").as_ref().expect("decodes");
        assert_eq!((r.xid, &r.kind), (7, &RpcKind::Accepted(AcceptStat::Success)));
        // Beyond the bytes sent, or one of several transmissions: no whole RPC message.
        assert!(optional(OptInfo::Rtr(resp(1, 200)), &ok).rpc.is_none());
        assert!(optional(OptInfo::Rtr(resp(2, ok.len() as u32)), &ok).rpc.is_none());
    }

    #[test]
    fn repterr_and_error_payload() {
        let e = ReptErr {
            bad: XmsId { xid: 7, dir: MsgType::CALL, seq: 2 },
            lead: None,
            info: OptrInfo { which: OptrErr::OPTRERR_BADSEQ, detail: OptrDetail::ExpCur { expect: 1, current: 2 } },
        };
        let f = optional(OptInfo::Rtr(rtrext::Op::ReptErr(e)), &[]);
        assert!(matches!(f.v2().expect("v2").body, Body::Optional { op: Op::ReptErr(r), .. } if r == e));
        let f = optional(OptInfo::Raw(&[0, 0, 0, 1]), &[]);
        assert!(matches!(f.v2().expect("v2").body, Body::Optional { op: Op::Unknown, .. }));
        let info = ErrorInfo::new(v2::ErrorBody::BadHeader, Profile::default().v2_error_numbering).expect("-01");
        let f = Frame::decode(
            build(HeaderBuilder::error(7, 3, info).payload(&[0, 0, 0, 1])),
            None,
            Role::Reply,
            &Profile::default(),
        );
        let h = f.v2().expect("v2");
        assert_eq!((h.payload.len(), h.body.clone()), (4, Body::Error(info)));
    }
}
