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

use rpcrdma_codec::profile::{Profile, V2Envelope, V2ErrorNumbering};
use rpcrdma_codec::rpc::{AcceptStat, ReplyHeader, RpcHeader, RpcMessage};
use rpcrdma_codec::rtrext::{self, OpKind, XmtReq};
use rpcrdma_codec::v2::{
    field, reframe, Body, ErrorBody, ErrorInfo, HeaderBuilder, Message, MsgType, OptInfo, VERSION,
};
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
    /// (rdma_vers 2, and under -01 rdma_direction CALL after rdma_proc: 4.2) when the
    /// connection speaks Version Two; anything else unchanged.
    pub(super) fn frame(&self, msg: &[u8], envelope: V2Envelope) -> Vec<u8> {
        let v2 = self.speaking.then(|| reframe::from_v1(msg, MsgType::CALL, envelope)).flatten();
        v2.unwrap_or_else(|| msg.to_vec())
    }

    /// What `msg` is to the call `xid` on a connection speaking Version Two: a forward reply
    /// (RDMA2_MSG / RDMA2_NOMSG with rdma_direction REPLY, 4.2.2), an RDMA2_ERROR it can
    /// decode (a code of the profile's numbering), an ERR_VERS of either version to the first
    /// call (5.2), or nothing.
    pub(super) fn answer(&self, msg: &[u8], xid: u32, profile: &Profile) -> Answer {
        let (vers, proc_, err) = (word(msg, field::VERS), word(msg, field::PROC), word(msg, field::BODY));
        let (dir, opttype) = match profile.v2_envelope {
            V2Envelope::Draft01 => (err, word(msg, field::OPTTYPE)),
            V2Envelope::Draft00 => (direction_00(msg, profile).map(|d| d.0), word(msg, field::OPTTYPE_00)),
        };
        if (vers, proc_, dir) == (Some(VERSION), Some(0), Some(MsgType::CALL.0)) {
            return Answer::Backward;
        }
        if word(msg, field::XID) != Some(xid) {
            return Answer::Discard;
        }
        if let (Some(1 | VERSION), Some(4), Some(1)) = (vers, proc_, err) {
            if !self.agreed {
                return Answer::Fallback;
            }
        }
        match (vers, proc_, dir) {
            (Some(VERSION), Some(0 | 1), Some(d)) if d == MsgType::REPLY.0 => Answer::Reply,
            // A single-transmission ROPT_XMTRESP, rdma_optdir REPLY: the reply to a ROPT_XMTREQ.
            (Some(VERSION), Some(5), Some(d))
                if d == MsgType::REPLY.0 && opttype == Some(xmt_opttype(OpKind::XmtResp, profile)) =>
            {
                Answer::Reply
            }
            (Some(VERSION), Some(4), _) => match err {
                Some(e) if (1..=last_error_code(profile.v2_error_numbering)).contains(&e) => Answer::Error(e),
                _ => Answer::Discard,
            },
            _ => Answer::Discard,
        }
    }
}

/// The highest rdma_err value of a numbering (wire notes 1.6).
fn last_error_code(numbering: V2ErrorNumbering) -> u32 {
    match numbering {
        V2ErrorNumbering::Draft01 => 3,
        V2ErrorNumbering::Draft02 => 6,
        V2ErrorNumbering::Draft04 => 10,
    }
}

/// The direction of a message from the responder in the -00 envelope, which has no
/// rdma_direction or rdma_optdir: an RDMA2_MSG's is its RPC message's msg_type; any other
/// message a responder sends is a reply. None when it does not decode.
fn direction_00(msg: &[u8], profile: &Profile) -> Option<MsgType> {
    let m = Message::decode(msg, profile).ok()?;
    Some(match m.header.body {
        Body::Msg(_) => match RpcMessage::decode(m.payload).ok()?.header {
            RpcHeader::Call(_) => MsgType::CALL,
            RpcHeader::Reply(_) => MsgType::REPLY,
        },
        _ => MsgType::REPLY,
    })
}

fn xmt_opttype(kind: OpKind, profile: &Profile) -> u32 {
    kind.opttype(profile.rtrext_opttypes)
}

/// A Version Two RDMA2_MSG / RDMA2_NOMSG reply as its Version One equivalent (rdma_vers 1,
/// no rdma_direction); other messages unchanged.
fn as_v1(reply: Vec<u8>, envelope: V2Envelope) -> Vec<u8> {
    reframe::to_v1(&reply, envelope).unwrap_or(reply)
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
        let Ok(m) = Message::decode(call, &self.options.profile) else { return Ok(()) };
        let Ok(rpc) = RpcMessage::decode(m.payload) else { return Ok(()) };
        let reply = ReplyHeader::accepted(rpc.header.xid(), AcceptStat::ProgUnavail).encode_to_vec();
        // The backward direction's own credit value (4.2.2): one call at a time.
        let b = HeaderBuilder::msg(m.header.xid, 1, MsgType::REPLY).payload(&reply);
        let msg = b.envelope(self.options.profile.v2_envelope).encode_to_vec();
        self.send(step, &msg)
    }

    /// The reply to a call, in Version One form. The first reply on a connection speaking
    /// Version Two agrees the version (5.1): the requester reports its receive buffer size
    /// (ROPT_INITXCH, one-way) and goes on on the same connection (5.2).
    pub(super) fn agreed(&mut self, step: &'static str, reply: Vec<u8>) -> Step<Vec<u8>> {
        let envelope = self.options.profile.v2_envelope;
        if !self.v2.speaking || self.v2.agreed || word(&reply, field::VERS) != Some(VERSION) {
            return Ok(as_v1(reply, envelope));
        }
        self.v2.agreed = true;
        let xid = self.xid();
        let dir = if self.faults.v2_initxch_optdir_reply { MsgType::REPLY } else { MsgType::CALL };
        let p = self.options.profile;
        // The size we advertised in RFC 8797 private data.
        let rbsiz = self.options.receive_size.to_be_bytes();
        let vals = [XcharVal::new(xcharext::XCHAR_RBSIZ, &rbsiz)];
        let op = xcharext::Op::InitXch(InitXch {
            start: XcharSpec::new(&vals, p.property_ids),
            nochg: XcharSubset::new(&[], p.subset_bit_order),
        });
        // Under rtrext-literal xcharext-02 has no opttypes (1..4 are rtrext-03's): no notice.
        if xcharext::is_opttype(op.opttype(), &p) {
            let b = HeaderBuilder::optional(xid, self.options.credits, dir, op.opttype(), OptInfo::Xchar(op));
            self.send(step, &b.envelope(envelope).encode_to_vec())?;
        }
        if self.faults.v2_reconnect_after_negotiation && !self.v2.reconnected {
            self.v2.reconnected = true;
            self.connect()?;
        }
        Ok(as_v1(reply, envelope))
    }
}

/// Version Two's own messages after the workload's calls: a NULL as a single-transmission
/// ROPT_XMTREQ (its RDMA2_ERR_INVAL_OPTION, from a responder without rtrext, ends the step),
/// then the misbehaviours the faults ask for.
pub(super) fn extras(s: &mut Session<'_>) -> Step<()> {
    if !s.v2.speaking {
        return Ok(());
    }
    let (f, credits, envelope) = (s.faults, s.options.credits, s.options.profile.v2_envelope);
    let xid = s.xid();
    let rpc = Call::null(xid, credits).rpc_bytes();
    let op = rtrext::Op::XmtReq(XmtReq { count: 1, rsbuf: 1, pslen: rpc.len() as u32, ..Default::default() });
    // 4.2.2: rdma_optdir is the msg_type of the RPC message it carries.
    let dir = if f.v2_xmtreq_optdir_reply { MsgType::REPLY } else { MsgType::CALL };
    let msg =
        HeaderBuilder::optional(xid, credits, dir, xmt_opttype(OpKind::XmtReq, &s.options.profile), OptInfo::Rtr(op))
            .payload(&rpc)
            .envelope(envelope);
    let _ = s.call("a NULL in a ROPT_XMTREQ", xid, &msg.encode_to_vec());
    s.ensure_connected()?;
    if f.v2_msg_without_payload {
        let xid = s.xid();
        let _ = s.call(
            "RDMA2_MSG without a payload",
            xid,
            &HeaderBuilder::msg(xid, credits, MsgType::CALL).envelope(envelope).encode_to_vec(),
        );
        s.ensure_connected()?;
    }
    if f.v2_call_direction_reply {
        let xid = s.xid();
        let rpc = Call::null(xid, credits).rpc_bytes();
        let msg = HeaderBuilder::msg(xid, credits, MsgType::REPLY).envelope(envelope).payload(&rpc).encode_to_vec();
        let _ = s.call("a NULL with rdma_direction REPLY", xid, &msg);
        s.ensure_connected()?;
    }
    if f.v2_error_with_payload {
        let xid = s.xid();
        let numbering = s.options.profile.v2_error_numbering;
        if let Some(e) = ErrorInfo::new(ErrorBody::unparsable(numbering), numbering) {
            let mut msg = HeaderBuilder::error(xid, credits, e).encode_to_vec();
            msg.extend_from_slice(&Call::null(xid, credits).rpc_bytes());
            s.send("RDMA2_ERROR with a payload", &msg)?;
            let _ = s.recv_until("RDMA2_ERROR with a payload", Instant::now() + Duration::from_millis(100));
        }
    }
    Ok(())
}
