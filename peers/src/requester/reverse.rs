//! The reverse direction in the reference requester (RFC 8167): with an NFSv4.1 session whose
//! back channel rides the connection, the requester is the reverse-direction responder. It
//! posts receives for the reverse-direction credits it advertises above those for its forward
//! calls (4.3.1), grants those credits in every reverse-direction reply (4.1), frames each reply
//! as 5.2 says (the call's rdma_vers and XID, msg_type REPLY, RDMA_MSG without chunks), and
//! answers a reverse-direction call that carries chunks with ERR_CHUNK (5.3): it supports no
//! chunks in the reverse direction (RFC 8267 6.5.2: no callback item is DDP-eligible), so the
//! back channel attributes it offers keep every call a Short message.

use rpcrdma_codec::rpc::{AcceptStat, ReplyHeader, RpcHeader, RpcMessage};
use rpcrdma_codec::v1::{HeaderBuilder, Message, Proc};
use rpcrdma_codec::xdr::Encode;
use rpcrdma_codec::Profile;

use super::{at, Session, Step};

/// The smallest Version One transport header (RFC 8166 4.7): a reverse-direction call of
/// `ca_maxrequestsize` bytes travels in a Send this much longer.
pub(super) const MIN_HEADER: u32 = rpcrdma_codec::v1::MIN_HEADER_LEN as u32;

/// What a reverse-direction call needs answered: its transport header's fields and its RPC
/// call, decoded.
pub(super) struct ReverseCall {
    pub(super) xid: u32,
    pub(super) vers: u32,
    /// A non-empty read list, write list or reply chunk came with it.
    pub(super) chunks: bool,
    pub(super) prog: u32,
    pub(super) proc_: u32,
    /// The RPC call's arguments.
    pub(super) args: Vec<u8>,
}

/// `msg` as a reverse-direction call: a Version One RDMA_MSG whose inline RPC message has
/// msg_type CALL (RFC 8167 5.1). Anything else is none (a forward reply, or nothing to us).
pub(super) fn call(msg: &[u8], profile: &Profile) -> Option<ReverseCall> {
    let m = Message::decode(msg, profile).ok()?;
    if m.header.body.proc_() != Proc::RDMA_MSG {
        return None;
    }
    let rpc = RpcMessage::decode(m.payload).ok()?;
    let RpcHeader::Call(c) = rpc.header else { return None };
    let chunks =
        m.header.body.chunks().is_some_and(|c| !c.reads.is_empty() || !c.writes.is_empty() || c.reply.is_some());
    Some(ReverseCall {
        xid: m.header.xid,
        vers: m.header.vers,
        chunks,
        prog: c.prog,
        proc_: c.proc_,
        args: rpc.body.to_vec(),
    })
}

impl Session<'_> {
    /// Whether the connection carries a back channel: the NFSv4.1 workload offers one.
    pub(super) fn back_channel(&self) -> bool {
        self.options.nfs4_minor.is_some()
    }

    /// The reverse-direction credits advertised: the back channel's ca_maxrequests, granted
    /// in every reverse-direction reply (RFC 8167 4.1), and the receives posted for them
    /// above the forward ones (4.3.1).
    pub(super) fn reverse_credits(&self) -> u32 {
        if self.back_channel() {
            self.options.back_channel_slots.max(1)
        } else {
            0
        }
    }

    /// Whether receives are posted one per forward call as it is sent, and none for the back
    /// channel (`no-reverse-receives`: a requester without reverse-direction support, 4.3.1;
    /// `no-reverse-receives-after-reconnect`: so on every connection after the first, where
    /// 4.3.1 has the client post them again).
    pub(super) fn receives_per_call(&self) -> bool {
        let f = self.faults;
        let reconnected = self.connections > 1;
        (f.no_reverse_receives || f.no_reverse_receives_after_reconnect && reconnected) && self.back_channel()
    }

    /// Answers a reverse-direction call: ERR_CHUNK when it carries chunks (5.3), else an
    /// RDMA_MSG carrying the callback program's RPC reply, framed as 5.2 says.
    pub(super) fn answer_reverse(&mut self, step: &'static str, call: ReverseCall) -> Step<()> {
        let f = self.faults;
        if f.ignore_reverse_calls {
            return Ok(());
        }
        // The reverse-direction credits granted (4.1); none under `reverse-zero-credit`.
        let credit = if f.reverse_zero_credit { 0 } else { self.reverse_credits() };
        if call.chunks && !f.reverse_chunks_accepted {
            let msg = HeaderBuilder::err_chunk(call.xid, credit).raw_vers(call.vers).encode_to_vec();
            return self.send_reverse(step, &msg);
        }
        let mut rpc = self.callback_reply(&call);
        if f.reverse_reply_as_call && rpc.len() >= 8 {
            // msg_type CALL (0) where 5.2 says REPLY.
            rpc[4..8].copy_from_slice(&0u32.to_be_bytes());
        }
        let vers = if f.reverse_reply_bad_version { 2 } else { call.vers };
        let xid = if f.reverse_reply_xid_mismatch { call.xid.wrapping_add(1) } else { call.xid };
        let msg = [HeaderBuilder::msg(xid, credit).raw_vers(vers).encode_to_vec(), rpc].concat();
        self.send_reverse(step, &msg)
    }

    /// The RPC reply to a reverse-direction call: the callback program's (see
    /// [`Session::callback_results`]), or PROG_UNAVAIL / PROC_UNAVAIL.
    fn callback_reply(&mut self, call: &ReverseCall) -> Vec<u8> {
        let stat = if call.prog != self.options.cb_program {
            AcceptStat::ProgUnavail
        } else {
            match self.callback_results(call) {
                Some(results) => {
                    let mut b = ReplyHeader::accepted(call.xid, AcceptStat::Success).encode_to_vec();
                    b.extend_from_slice(&results);
                    return b;
                }
                None => AcceptStat::ProcUnavail,
            }
        };
        ReplyHeader::accepted(call.xid, stat).encode_to_vec()
    }

    /// A reverse-direction reply: sent as it is (no Version Two re-framing, no receive posted:
    /// it expects no answer).
    fn send_reverse(&mut self, step: &'static str, msg: &[u8]) -> Step<()> {
        let r = self.conn(step)?.send(msg);
        at(step, r)
    }
}
