//! The responder's own transmission groups (rtrext-03 4.2, 9.3, 9.4): a READ reply too long
//! for one of our receive buffers, to a call sent with ROPT_XMTREQ reserving receives for
//! it, comes as a ROPT_XMTRESP and its ROPT_XMTCONTs, in order, with the call's xid, and
//! nothing between them.

use rpcrdma_codec::rpc::{AcceptStat, ReplyBody, RpcHeader, RpcMessage};
use rpcrdma_codec::rtrext::{self, XmtReq};
use rpcrdma_codec::v2::{ErrorInfo, MsgType};

use rpcrdma_peers::proto::nfs3::{self, NFSPROC3_READ};

use super::super::messages::{null_v2, rtr_msg, start_v2, supported, v2_lookup};
use crate::engine::{Check, CheckInfo, Ctx, Judged, NoMessage, Outcome, Received, Verdict};
use crate::frame::v2::{Body, Header, Op};
use crate::frame::Frame;

/// Bytes of `big` (70000 bytes) the long READ asks for: its reply needs three transmissions
/// of 4096 bytes, Version Two's default inline threshold (v2-01 2.3).
const LONG_READ: u32 = 10_000;
/// Receives the call reserves for its reply (optxrq_rsbuf): more than the group needs, under
/// either reading of rtrext-03 5.2 (the count of transmissions, or of those after the first).
const RESERVED: u32 = 8;

/// What came back for the long READ sent in a ROPT_XMTREQ and a NULL call sent right after it.
struct Answers {
    read_xid: u32,
    /// Every message received from the ROPT_XMTRESP on, in order, up to the NULL call's reply
    /// (and what followed it within the silence window).
    frames: Vec<Frame>,
    /// optxrs_count of the ROPT_XMTRESP that starts the group.
    count: u32,
}

impl Answers {
    /// Transmission `i` of the group, if it came and is Version Two.
    fn header(&self, i: usize) -> Option<&Header> {
        self.frames.get(i).and_then(Frame::v2)
    }
}

fn is_null_reply(f: &Frame, xid: u32) -> bool {
    f.v2().is_some_and(|h| h.xid == xid && matches!(h.body, Body::Msg { .. }))
}

/// Sends the long READ (one ROPT_XMTREQ, optxrq_rsbuf 8) and, without waiting, a Version Two
/// NULL call; collects the answers. Ends the check unsupported when the peer sends no group.
fn long_read(ctx: &mut Ctx, want: &str) -> Result<Answers, Verdict> {
    start_v2(ctx)?;
    let fh = v2_lookup(ctx, nfs3::FILE_BIG)?;
    let call = ctx.nfs3(NFSPROC3_READ, nfs3::read_args(&fh, 0, LONG_READ));
    let rpc = call.rpc_bytes();
    let op = rtrext::Op::XmtReq(XmtReq { count: 1, rsbuf: RESERVED, pslen: rpc.len() as u32, ..Default::default() });
    let read = rtr_msg(ctx, call.xid, op, &rpc);
    let null_xid = ctx.xid();
    let null = null_v2(ctx, null_xid);
    let _ = ctx.send(&read);
    let _ = ctx.send(&null);
    let mut frames = Vec::new();
    let mut got = ctx.recv();
    while let Received::Message(f) = got {
        let last = is_null_reply(&f, null_xid);
        frames.push(f);
        got = if last { ctx.expect_silence() } else { ctx.recv() };
    }
    if let Received::Nothing(NoMessage::RecvFailed(s)) = got {
        return Err(Verdict::fail(want, format!("our 4096-byte receive failed ({}): the peer sent more", s.name())));
    }
    // The answer to the READ (its replies may follow the NULL call's: RPC replies need not
    // come in order).
    let Some(at) = frames.iter().position(|f| f.xid() == Some(call.xid)) else {
        // Message continuation is not obligatory (rtrext-03 4.3); without a reply chunk the
        // peer may close the connection instead (RFC 8166 4.5.4).
        let why = format!("no answer to the long READ ({}): no transmission group", got.describe());
        return Err(Verdict::unsupported(want, why));
    };
    let frames = frames.split_off(at);
    let count = match frames[0].v2().map(|h| &h.body) {
        Some(Body::Optional { op: Op::XmtResp { count, .. }, .. }) => *count,
        Some(Body::Error(ErrorInfo { .. })) => {
            supported(&Received::Message(frames[0].clone()), "ROPT_XMTREQ")?;
            let why = format!("{} to the long READ: the peer sends no transmission groups", frames[0]);
            return Err(Verdict::unsupported(want, why));
        }
        _ => return Err(Verdict::fail(want, format!("{} answering the READ, not a ROPT_XMTRESP", frames[0]))),
    };
    if count < 2 {
        // A reply longer than 4096 bytes cannot have come whole in one receive.
        return Err(Verdict::fail(want, format!("a ROPT_XMTRESP with optxrs_count {count} for a ~10 KB reply")));
    }
    Ok(Answers { read_xid: call.xid, frames, count })
}

/// The payload streams of the group concatenated (rtrext-03 9.4) decode as the READ reply
/// with the 10000 bytes of `big`.
fn reassembled(a: &Answers) -> Result<(), String> {
    let mut stream = Vec::new();
    for i in 0..a.count as usize {
        let h = a.header(i).ok_or("the group cut short")?;
        let pslen = match h.body {
            Body::Optional { op: Op::XmtResp { pslen, .. }, .. } => pslen,
            Body::Optional { op: Op::XmtCont(c), .. } => c.pslen,
            _ => return Err(format!("{h} in the group")),
        };
        let part = a.frames[i].slice(h.payload.clone());
        stream.extend_from_slice(part.get(..pslen as usize).ok_or("a pslen beyond the transmission")?);
    }
    let m = RpcMessage::decode(&stream).map_err(|e| format!("the concatenated payload streams: {e}"))?;
    match m.header {
        RpcHeader::Reply(r) if r.xid == a.read_xid => match r.body {
            ReplyBody::Accepted { stat: AcceptStat::Success, .. } => {}
            other => return Err(format!("the reassembled reply: {other:?}")),
        },
        other => return Err(format!("the reassembled payload is not the READ reply: {other:?}")),
    }
    let rr = nfs3::read_result(m.body).ok_or("READ3 results that do not decode")?;
    let data = m.body.get(rr.data_at..rr.data_at + rr.data_len as usize).unwrap_or_default();
    if rr.status != nfs3::NFS3_OK || data != &nfs3::file_contents(70_000)[..LONG_READ as usize] {
        return Err(format!("READ3 status {} with {} of the {LONG_READ} bytes asked for", rr.status, data.len()));
    }
    Ok(())
}

fn reply_group_in_order(ctx: &mut Ctx) -> Judged {
    let want = "the long READ's reply as ROPT_XMTRESP then ROPT_XMTCONT 1, 2, ... with nothing between them, \
        their payload streams concatenated the READ reply with the data";
    let a = long_read(ctx, want)?;
    for i in 1..a.count as usize {
        let Some(f) = a.frames.get(i) else {
            return Err(Verdict::fail(want, format!("{i} of {} transmissions, then nothing", a.count)));
        };
        match a.header(i).map(|h| &h.body) {
            Some(Body::Optional { op: Op::XmtCont(c), .. }) if c.xnum == i as u32 => {}
            Some(Body::Optional { op: Op::XmtCont(c), .. }) => {
                let got = format!("ROPT_XMTCONT {} where {i} was due: the group out of order", c.xnum);
                return Err(Verdict::fail(want, got));
            }
            _ => return Err(Verdict::fail(want, format!("transmission {i} of {}: {f}, intervening", a.count))),
        }
    }
    reassembled(&a).map_err(|why| Verdict::fail(want, why))?;
    Ok(Verdict::pass(want, format!("{} transmissions in order, the READ reply whole", a.count)))
}

fn reply_cont_xid(ctx: &mut Ctx) -> Judged {
    let want = "every ROPT_XMTCONT of the long READ's reply group with the rdma_xid of its ROPT_XMTRESP";
    let a = long_read(ctx, want)?;
    let conts: Vec<&Header> = (1..a.frames.len())
        .filter_map(|i| a.header(i))
        .filter(|h| matches!(h.body, Body::Optional { op: Op::XmtCont(_), dir: Some(MsgType::REPLY) | None, .. }))
        .collect();
    if let Some(h) = conts.iter().find(|h| h.xid != a.read_xid) {
        let got = format!("{h}: rdma_xid {:#010x}, the group's is {:#010x}", h.xid, a.read_xid);
        return Err(Verdict::fail(want, got));
    }
    if conts.len() + 1 != a.count as usize {
        let got = format!("{} ROPT_XMTCONTs for an optxrs_count of {}", conts.len(), a.count);
        return Err(Verdict::fail(want, got));
    }
    Ok(Verdict::pass(want, format!("{} continuations, each with rdma_xid {:#010x}", conts.len(), a.read_xid)))
}

pub(super) const CHECKS: [Check; 2] = [
    Check {
        info: CheckInfo {
            id: "rtrext-03/4.2/reply-group-in-order",
            judges: &["rtrext-03/4.2#1"],
            acceptable: "a READ of 10000 bytes sent in a ROPT_XMTREQ reserving 8 receives, followed at once by a \
                NULL call: ROPT_XMTRESP (optxrs_count k) and ROPT_XMTCONT 1 .. k-1 back to back (the NULL call's \
                reply before or after them, not between), their payload streams together the READ reply with the \
                data (RDMA2_ERROR to the READ, or no answer to it: unsupported)",
            rationale: "A requester reassembles a reply from the transmissions as they arrive; one out of order or \
                a message between them corrupts the reply or the message it interrupts.",
            groups: &["v2", "rtrext"],
            broken_by: &[("v2-group-out-of-order", Outcome::Fail), ("v2-group-interleaved", Outcome::Fail)],
            precondition: None,
        },
        run: reply_group_in_order,
    },
    Check {
        info: CheckInfo {
            id: "rtrext-03/9.4/reply-cont-xid",
            judges: &["rtrext-03/9.4#1"],
            acceptable: "every ROPT_XMTCONT continuing the long READ's reply carries the rdma_xid of the \
                ROPT_XMTRESP, and there are optxrs_count - 1 of them (RDMA2_ERROR to the READ, or no answer to \
                it: unsupported)",
            rationale: "The xid is how a requester matches continuations to the reply they extend.",
            groups: &["v2", "rtrext"],
            broken_by: &[("v2-cont-wrong-xid", Outcome::Fail)],
            precondition: None,
        },
        run: reply_cont_xid,
    },
];
