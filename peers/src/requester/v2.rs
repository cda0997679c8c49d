//! Version Two in the reference requester (draft-cel-nfsv4-rpcrdma-version-two-01): with
//! `RequesterOptions::version` 2, each connection starts with one Version Two call (5: "the
//! requester sends a single valid RPC-over-RDMA message with the value two (2) in the
//! rdma_vers field"), then sends every call as RDMA2_MSG / RDMA2_NOMSG with rdma_direction
//! CALL (4.2.2). The first non-error reply agrees the version (5.1): the requester then
//! reports its receive buffer size with ROPT_INITXCH (xcharext-02, rdma_optdir CALL) and goes
//! on, on the same connection, at the Version Two inline threshold (2.3, 5.2). RDMA2_ERR_VERS
//! (or a Version One ERR_VERS) to the first call makes it speak Version One on that
//! connection from then on (5.2). It also sends one NULL call as a single-transmission
//! ROPT_XMTREQ (rtrext-03 9.3: an RDMA2_OPTIONAL carrying the whole payload, rdma_optdir
//! CALL), whose reply is a ROPT_XMTRESP. It answers backward-direction calls (4.2.2: REQUIRED)
//! with PROG_UNAVAIL: it serves no backward-direction program.
//!
//! The workload builds Version One calls; [`Conn::frame`] re-frames them, and
//! [`Session::agreed`] gives the workload each Version Two reply in Version One form.

use std::time::{Duration, Instant};

use rpcrdma_codec::profile::Profile;
use rpcrdma_codec::rpc::{AcceptStat, ReplyHeader, RpcMessage};
use rpcrdma_codec::rtrext::{self, OpKind, XmtReq};
use rpcrdma_codec::v2::{ErrorBody, ErrorInfo, HeaderBuilder, Message, MsgType, OptInfo, VERSION};
use rpcrdma_codec::xcharext::{self, InitXch, XcharSpec, XcharSubset, XcharVal};
use rpcrdma_codec::xdr::Encode;

use super::{Answer, RequesterOptions, Session, Step};
use crate::proto::Call;

/// The version a connection speaks.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Conn {
    /// Version Two calls are sent (until an RDMA2_ERR_VERS says otherwise).
    pub(super) speaking: bool,
    /// A non-error Version Two reply came: the version is agreed (5.1).
    agreed: bool,
    /// `v2-reconnect-after-negotiation` has reconnected once (kept across connections).
    reconnected: bool,
}

fn word(msg: &[u8], at: usize) -> Option<u32> {
    msg.get(at..at + 4).map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
}

impl Conn {
    /// A new connection's state.
    pub(super) fn new(options: &RequesterOptions, before: &Conn) -> Conn {
        Conn { speaking: options.version == VERSION, agreed: false, reconnected: before.reconnected }
    }

    /// `msg` as sent: a Version One RDMA_MSG or RDMA_NOMSG call re-framed as Version Two
    /// (rdma_vers 2, and rdma_direction CALL after rdma_proc: 4.2) when the connection speaks
    /// Version Two; anything else unchanged.
    pub(super) fn frame(&self, msg: &[u8]) -> Vec<u8> {
        if !self.speaking || word(msg, 4) != Some(1) || !matches!(word(msg, 12), Some(0 | 1)) {
            return msg.to_vec();
        }
        let mut out = Vec::with_capacity(msg.len() + 4);
        out.extend_from_slice(&msg[..4]);
        out.extend_from_slice(&VERSION.to_be_bytes());
        out.extend_from_slice(&msg[8..16]);
        out.extend_from_slice(&MsgType::CALL.0.to_be_bytes());
        out.extend_from_slice(&msg[16..]);
        out
    }

    /// What `msg` is to the call `xid` on a connection speaking Version Two: a forward reply
    /// (RDMA2_MSG / RDMA2_NOMSG with rdma_direction REPLY, 4.2.2), an RDMA2_ERROR it can
    /// decode (-01 codes 1 to 3), an ERR_VERS of either version to the first call (5.2), or
    /// nothing.
    pub(super) fn answer(&self, msg: &[u8], xid: u32) -> Answer {
        let (vers, proc_, err) = (word(msg, 4), word(msg, 12), word(msg, 16));
        if (vers, proc_, err) == (Some(VERSION), Some(0), Some(MsgType::CALL.0)) {
            return Answer::Backward;
        }
        if word(msg, 0) != Some(xid) {
            return Answer::Discard;
        }
        match (vers, proc_, err) {
            (Some(1 | VERSION), Some(4), Some(1)) if !self.agreed => Answer::Fallback,
            (Some(VERSION), Some(0 | 1), Some(d)) if d == MsgType::REPLY.0 => Answer::Reply,
            // A single-transmission ROPT_XMTRESP, rdma_optdir REPLY: the reply to a ROPT_XMTREQ.
            (Some(VERSION), Some(5), Some(d))
                if d == MsgType::REPLY.0 && word(msg, 20) == Some(xmt_opttype(OpKind::XmtResp)) =>
            {
                Answer::Reply
            }
            (Some(VERSION), Some(4), Some(e @ 1..=3)) => Answer::Error(e),
            _ => Answer::Discard,
        }
    }
}

fn xmt_opttype(kind: OpKind) -> u32 {
    kind.opttype(Profile::default().rtrext_opttypes)
}

/// A Version Two RDMA2_MSG / RDMA2_NOMSG reply as its Version One equivalent (rdma_vers 1,
/// no rdma_direction); other messages unchanged.
fn as_v1(reply: Vec<u8>) -> Vec<u8> {
    if word(&reply, 4) != Some(VERSION) || !matches!(word(&reply, 12), Some(0 | 1)) || reply.len() < 20 {
        return reply;
    }
    let mut out = Vec::with_capacity(reply.len() - 4);
    out.extend_from_slice(&reply[..4]);
    out.extend_from_slice(&1u32.to_be_bytes());
    out.extend_from_slice(&reply[8..16]);
    out.extend_from_slice(&reply[20..]);
    out
}

impl Session<'_> {
    /// The size of the receives posted: the advertised receive size, or 1024 bytes under
    /// `v2-receive-1024` when Version Two is spoken.
    pub(super) fn receive_buffer(&self) -> usize {
        if self.faults.v2_receive_1024 && self.options.version == VERSION {
            1024
        } else {
            self.options.receive_size as usize
        }
    }

    /// Answers a backward-direction call (an RDMA2_MSG with rdma_direction CALL) with an
    /// RDMA2_MSG, rdma_direction REPLY, carrying PROG_UNAVAIL to its RPC call.
    pub(super) fn backward(&mut self, step: &'static str, call: &[u8]) -> Step<()> {
        if self.faults.v2_ignore_backward_calls {
            return Ok(());
        }
        let Ok(m) = Message::decode(call, &Profile::default()) else { return Ok(()) };
        let Ok(rpc) = RpcMessage::decode(m.payload) else { return Ok(()) };
        let reply = ReplyHeader::accepted(rpc.header.xid(), AcceptStat::ProgUnavail).encode_to_vec();
        // The backward direction's own credit value (4.2.2): one call at a time.
        let msg = HeaderBuilder::msg(m.header.xid, 1, MsgType::REPLY).payload(&reply).encode_to_vec();
        self.send(step, &msg)
    }

    /// The reply to a call, in Version One form. The first reply on a connection speaking
    /// Version Two agrees the version (5.1): the requester reports its receive buffer size
    /// (ROPT_INITXCH, one-way) and goes on on the same connection (5.2).
    pub(super) fn agreed(&mut self, step: &'static str, reply: Vec<u8>) -> Step<Vec<u8>> {
        if !self.v2.speaking || self.v2.agreed || word(&reply, 4) != Some(VERSION) {
            return Ok(as_v1(reply));
        }
        self.v2.agreed = true;
        let xid = self.xid();
        let dir = if self.faults.v2_initxch_optdir_reply { MsgType::REPLY } else { MsgType::CALL };
        let p = Profile::default();
        // The size we advertised in RFC 8797 private data.
        let rbsiz = self.options.receive_size.to_be_bytes();
        let vals = [XcharVal::new(xcharext::XCHAR_RBSIZ, &rbsiz)];
        let op = xcharext::Op::InitXch(InitXch {
            start: XcharSpec::new(&vals, p.property_ids),
            nochg: XcharSubset::new(&[], p.subset_bit_order),
        });
        let b = HeaderBuilder::optional(xid, self.options.credits, dir, op.opttype(), OptInfo::Xchar(op));
        self.send(step, &b.encode_to_vec())?;
        if self.faults.v2_reconnect_after_negotiation && !self.v2.reconnected {
            self.v2.reconnected = true;
            self.connect()?;
        }
        Ok(as_v1(reply))
    }
}

/// Version Two's own messages after the workload's calls: a NULL as a single-transmission
/// ROPT_XMTREQ (its RDMA2_ERR_INVAL_OPTION, from a responder without rtrext, ends the step),
/// then the misbehaviours the faults ask for.
pub(super) fn extras(s: &mut Session<'_>) -> Step<()> {
    if !s.v2.speaking {
        return Ok(());
    }
    let (f, credits) = (s.faults, s.options.credits);
    let xid = s.xid();
    let rpc = Call::null(xid, credits).rpc_bytes();
    let op = rtrext::Op::XmtReq(XmtReq { count: 1, rsbuf: 1, pslen: rpc.len() as u32, ..Default::default() });
    // 4.2.2: rdma_optdir is the msg_type of the RPC message it carries.
    let dir = if f.v2_xmtreq_optdir_reply { MsgType::REPLY } else { MsgType::CALL };
    let msg = HeaderBuilder::optional(xid, credits, dir, xmt_opttype(OpKind::XmtReq), OptInfo::Rtr(op)).payload(&rpc);
    let _ = s.call("a NULL in a ROPT_XMTREQ", xid, &msg.encode_to_vec());
    s.ensure_connected()?;
    if f.v2_msg_without_payload {
        let xid = s.xid();
        let _ = s.call(
            "RDMA2_MSG without a payload",
            xid,
            &HeaderBuilder::msg(xid, credits, MsgType::CALL).encode_to_vec(),
        );
        s.ensure_connected()?;
    }
    if f.v2_call_direction_reply {
        let xid = s.xid();
        let rpc = Call::null(xid, credits).rpc_bytes();
        let msg = HeaderBuilder::msg(xid, credits, MsgType::REPLY).payload(&rpc).encode_to_vec();
        let _ = s.call("a NULL with rdma_direction REPLY", xid, &msg);
        s.ensure_connected()?;
    }
    if f.v2_error_with_payload {
        let xid = s.xid();
        if let Some(e) = ErrorInfo::new(ErrorBody::BadHeader, Profile::default().v2_error_numbering) {
            let mut msg = HeaderBuilder::error(xid, credits, e).encode_to_vec();
            msg.extend_from_slice(&Call::null(xid, credits).rpc_bytes());
            s.send("RDMA2_ERROR with a payload", &msg)?;
            let _ = s.recv_until("RDMA2_ERROR with a payload", Instant::now() + Duration::from_millis(100));
        }
    }
    Ok(())
}
