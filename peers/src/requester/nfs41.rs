//! NFSv4.1 and NFSv4.2 in the reference requester (RFC 8881, RFC 7862 over RFC 8267 6): a
//! session whose back channel rides the RDMA connection (CREATE_SESSION4_FLAG_CONN_BACK_CHAN,
//! RFC 8267 6.5.2), SEQUENCE-led COMPOUNDs (PUTROOTFH, LOOKUP, OPEN wanting a read delegation,
//! READ, two READs offering one write chunk (RFC 8267 6.4.1), CLOSE), a second client whose
//! OPEN for writing makes the server recall the delegation, and the callback program answered
//! in the reverse direction (`requester/reverse.rs`): CB_NULL, and CB_COMPOUND with
//! CB_SEQUENCE and CB_RECALL, after which the delegation goes back with DELEGRETURN.

use std::time::{Duration, Instant};

use rpcrdma_codec::rpc::RpcMessage;
use rpcrdma_codec::v1::Message;

use super::reverse::{ReverseCall, MIN_HEADER};
use super::{at, Answer, Failure, Session, Step, WorkloadError};
use crate::proto::callback::{CbCompoundArgs, CbCompoundRes, CbOp, CbOpResult, CB_COMPOUND, CB_NULL};
use crate::proto::nfs3::{FILE_FIVE, NFS_PROGRAM};
use crate::proto::nfs4::{NFS4_OK, NFSPROC4_COMPOUND};
use crate::proto::nfs41::Op;
use crate::proto::nfs41::{
    compound_args, compound_res, CbSec, ChannelAttrs, Claim, CompoundRes, Delegation, Res, SessionId, Stateid,
    CDFC4_BACK_OR_BOTH, CREATE_SESSION4_FLAG_CONN_BACK_CHAN, NFS4ERR_DELAY, NFS4ERR_NOTSUPP, OPEN4_SHARE_ACCESS_BOTH,
    OPEN4_SHARE_ACCESS_READ, OPEN4_SHARE_ACCESS_WANT_READ_DELEG, OP_CREATE_SESSION, OP_EXCHANGE_ID, OP_GETFH, OP_OPEN,
    OP_SEQUENCE, SEQ4_STATUS_CB_PATH_DOWN, SEQ4_STATUS_CB_PATH_DOWN_SESSION, SP4_NONE,
};
use crate::proto::Call;
use crate::transport::Access;
use rpcrdma_codec::chunk::Segment;

/// The first READ of the COMPOUND offering a write chunk: `five` in full.
const CHUNKED_READ: u32 = 5;

/// Its second READ, inline: two bytes of `five`.
const INLINE_READ: u32 = 2;

/// Whether `reply` is an RPC reply MSG_ACCEPTED with GARBAGE_ARGS.
fn garbage_args(reply: &[u8], profile: &rpcrdma_codec::Profile) -> bool {
    use rpcrdma_codec::rpc::{AcceptStat, ReplyBody, RpcHeader};
    let Ok(m) = Message::decode(reply, profile) else { return false };
    matches!(
        RpcMessage::decode(m.payload).map(|r| r.header),
        Ok(RpcHeader::Reply(r)) if matches!(r.body, ReplyBody::Accepted { stat: AcceptStat::GarbageArgs, .. })
    )
}

/// NFSv4's RPC version (RFC 8881 16).
const NFS_V4: u32 = 4;

/// The NULLs of [`Session::null_window`]: more than a small grant lets out at once, and more
/// than `ambiguous-credit`'s 4 still to send once its replies grant 8 (its proof of demand).
const NULL_WINDOW: u32 = 12;

/// How long the requester stays to answer reverse-direction calls before it ends its session.
const LINGER: Duration = Duration::from_millis(150);

/// How often the second client's OPEN is retried while the server answers NFS4ERR_DELAY (it
/// is recalling the delegation).
const DELAY_RETRIES: u32 = 20;

/// One client's session: its client ID, session ID and its one slot's sequence ID, and
/// whether it has a back channel (on the connection it was created on).
#[derive(Debug, Clone, Copy)]
struct Client {
    clientid: u64,
    sessionid: SessionId,
    sequenceid: u32,
    back: bool,
}

impl Client {
    /// The SEQUENCE of the next call on slot 0 (RFC 8881 18.46), the slot's sequence ID taken.
    fn next_sequence(&mut self) -> Op {
        let seq = Op::Sequence {
            sessionid: self.sessionid,
            sequenceid: self.sequenceid,
            slotid: 0,
            highest_slotid: 0,
            cachethis: false,
        };
        self.sequenceid = self.sequenceid.wrapping_add(1);
        seq
    }
}

/// What the callback program learnt: the delegations the server recalled (CB_RECALL).
#[derive(Debug, Default)]
pub(super) struct Callbacks {
    recalled: Vec<Stateid>,
}

impl Session<'_> {
    /// The results of a callback procedure (RFC 8881 20): CB_NULL's none; CB_COMPOUND's with
    /// CB_SEQUENCE answered on its slot and CB_RECALL taken (the delegation is returned
    /// later); none for another procedure (PROC_UNAVAIL).
    pub(super) fn callback_results(&mut self, call: &ReverseCall) -> Option<Vec<u8>> {
        match call.proc_ {
            CB_NULL => Some(Vec::new()),
            CB_COMPOUND => Some(self.cb_compound(&call.args)),
            _ => None,
        }
    }

    fn cb_compound(&mut self, args: &[u8]) -> Vec<u8> {
        let Ok(a) = CbCompoundArgs::decode(args) else {
            // NFS4ERR_BADXDR (RFC 8881 15.1.1.2), no results.
            return CbCompoundRes { status: 10036, tag: Vec::new(), results: Vec::new() }.encode();
        };
        let mut results = Vec::new();
        let mut status = NFS4_OK;
        for op in &a.ops {
            let r = match op {
                CbOp::Sequence { sessionid, sequenceid, slotid, highest_slotid, .. } => CbOpResult {
                    op: op.opnum(),
                    status: NFS4_OK,
                    sequence: Some((*sessionid, *sequenceid, *slotid, *highest_slotid, *highest_slotid)),
                },
                CbOp::Recall { stateid, .. } => {
                    self.callbacks.recalled.push(*stateid);
                    CbOpResult { op: op.opnum(), status: NFS4_OK, sequence: None }
                }
                CbOp::Other(_) => CbOpResult { op: op.opnum(), status: NFS4ERR_NOTSUPP, sequence: None },
            };
            status = r.status;
            results.push(r);
            if status != NFS4_OK {
                break;
            }
        }
        CbCompoundRes { status, tag: a.tag, results }.encode()
    }

    /// A COMPOUND of `ops` (RFC 8881 16.2); its decoded results. A reply that does not decode
    /// fails the step.
    fn compound(&mut self, step: &'static str, ops: &[Op]) -> Step<CompoundRes> {
        let minor = self.options.nfs4_minor.unwrap_or(1);
        let xid = self.xid();
        let call = Call::new(
            xid,
            self.options.credits,
            NFS_PROGRAM,
            NFS_V4,
            NFSPROC4_COMPOUND,
            compound_args(step, minor, ops),
        );
        self.compound_call(step, &call)
    }

    /// Sends a COMPOUND call (its chunks with it); its decoded results. GARBAGE_ARGS fails the
    /// step (RFC 8267 6.4.2: the call is not sent again), as does a reply that does not decode.
    fn compound_call(&mut self, step: &'static str, call: &Call) -> Step<CompoundRes> {
        let mut reply = self.call(step, call.xid, &call.msg())?;
        if garbage_args(&reply, &self.options.profile) && self.faults.bend_resend_refused(false) {
            reply = self.call(step, call.xid, &call.msg())?;
        }
        if garbage_args(&reply, &self.options.profile) {
            return Err(WorkloadError { step, failure: Failure::GarbageArgs });
        }
        let m = at(step, Message::decode(&reply, &self.options.profile))?;
        let rpc = at(step, RpcMessage::decode(m.payload))?;
        compound_res(rpc.body, |_| false).ok_or(WorkloadError { step, failure: Failure::Status(None) })
    }

    /// Under a grant smaller than [`NULL_WINDOW`], that many NULL calls (procedure 0, RFC 8881
    /// 16.1: no session slot), at most the current grant of them outstanding (RFC 8166 3.3.1; and no more than `window`), each sent as an earlier one is
    /// answered. Reverse-direction calls meanwhile are answered. An RDMA_ERROR or RDMA_DONE
    /// whose XID matches none of the NULLs is discarded, its credit value ignored (RFC 8167
    /// 4.1: neither context nor a payload tells its direction); `apply-undetermined-credit`
    /// takes it as the grant.
    fn null_window(&mut self) -> Step<()> {
        // Under a grant of NULL_WINDOW or more they would all go at once: no demand beyond it.
        if self.grant.unwrap_or(1) >= NULL_WINDOW {
            return Ok(());
        }
        let step = "the NULL window";
        let (mut sent, mut outstanding) = (0u32, Vec::new());
        let deadline = Instant::now() + self.options.timeout;
        loop {
            let grant = self.grant.unwrap_or(1).min(self.options.credits);
            let grant = self.options.window.map_or(grant, |w| grant.min(w));
            while sent < NULL_WINDOW && (outstanding.len() as u32) < grant {
                let xid = self.xid();
                let call = Call::new(xid, self.options.credits, NFS_PROGRAM, NFS_V4, 0, Vec::new());
                self.send(step, &call.msg())?;
                outstanding.push(xid);
                sent += 1;
            }
            if outstanding.is_empty() {
                return Ok(());
            }
            // A NULL left unanswered is not sent again: the window only makes the demand.
            let Ok(msg) = self.recv_until(step, deadline) else { return self.ensure_connected() };
            let Ok(h) = rpcrdma_codec::v1::FixedFields::decode(&msg) else { continue };
            match self.answer(&msg, h.xid) {
                Answer::Reverse(c) => self.answer_reverse(step, c)?,
                _ if !outstanding.contains(&h.xid) => {
                    let proc_ = rpcrdma_codec::v1::Proc(h.proc_);
                    self.grant = self.faults.bend_undetermined_credit(proc_, h.credit, self.grant);
                }
                Answer::Reply => {
                    outstanding.retain(|x| *x != h.xid);
                    self.grant = self.faults.bend_grant(self.grant, Some(h.credit));
                }
                Answer::Error(_) => outstanding.retain(|x| *x != h.xid),
                _ => {}
            }
        }
    }

    /// SEQUENCE, PUTFH and two READs of `fh` (RFC 8267 6.4.1): the first of [`CHUNKED_READ`]
    /// bytes through the COMPOUND's one write chunk (6.4.2: no more than one, of up to sixteen
    /// segments), the second of [`INLINE_READ`] bytes inline (more READs than write chunks).
    fn reads_through_write_chunk(&mut self, client: &mut Client, fh: &[u8], stateid: Stateid) -> Step<()> {
        let sized = self.faults.bend_chunked_read(CHUNKED_READ, INLINE_READ);
        let chunk = self
            .faults
            .bend_nfs4_write_chunk(sized)
            .into_iter()
            .map(|n| self.register(n, Access::WRITE).map(|r| r.segment()))
            .collect::<Step<Vec<Segment>>>()?;
        let seq = client.next_sequence();
        let ops = [
            seq,
            Op::PutFh(fh.to_vec()),
            Op::Read { stateid, offset: 0, count: CHUNKED_READ },
            Op::Read { stateid, offset: 1, count: INLINE_READ },
        ];
        let minor = self.options.nfs4_minor.unwrap_or(1);
        let xid = self.xid();
        let mut call = Call::new(
            xid,
            self.options.credits,
            NFS_PROGRAM,
            NFS_V4,
            NFSPROC4_COMPOUND,
            compound_args("READ READ", minor, &ops),
        );
        call.writes = vec![chunk];
        let _ = self.compound_call("READ through a write chunk", &call);
        Ok(())
    }

    /// A SEQUENCE-led COMPOUND on `client`'s slot 0 (RFC 8881 18.46). A reply saying the
    /// session's back channel is down (SEQ4_STATUS_CB_PATH_DOWN_SESSION, or CB_PATH_DOWN:
    /// after a reconnect, the new connection carries none) has the back channel bound to the
    /// connection again (RFC 8881 18.46.3, 18.34), as the Linux client does.
    fn sequenced(&mut self, step: &'static str, client: &mut Client, ops: Vec<Op>) -> Step<CompoundRes> {
        let seq = client.next_sequence();
        let r = self.compound(step, &[vec![seq], ops].concat())?;
        let down = SEQ4_STATUS_CB_PATH_DOWN | SEQ4_STATUS_CB_PATH_DOWN_SESSION;
        if client.back
            && matches!(r.find(OP_SEQUENCE), Some(Res::Sequence { status_flags, .. }) if status_flags & down != 0)
        {
            self.bind_back_channel(client.sessionid)?;
        }
        Ok(r)
    }

    /// EXCHANGE_ID and CREATE_SESSION for the owner `owner`; `back`: the session's back
    /// channel rides this connection (CREATE_SESSION4_FLAG_CONN_BACK_CHAN).
    fn create_session(&mut self, owner: &[u8], back: bool) -> Step<Client> {
        let verifier = *b"rpcrdma!";
        let op = Op::ExchangeId { verifier, owner: owner.to_vec(), flags: 0, state_protect: SP4_NONE, impl_id: None };
        let r = self.compound("EXCHANGE_ID", &[op])?;
        let Some(Res::ExchangeId { clientid, sequenceid, .. }) = r.find(OP_EXCHANGE_ID).cloned() else {
            return Err(WorkloadError { step: "EXCHANGE_ID", failure: Failure::Status(Some(r.status)) });
        };
        let (receive, send) = (self.options.receive_size, self.options.send_size);
        let fore = ChannelAttrs {
            headerpadsize: 0,
            maxrequestsize: 1 << 20,
            maxresponsesize: 1 << 20,
            maxresponsesize_cached: 4096,
            maxoperations: 16,
            maxrequests: self.options.credits,
            rdma_ird: None,
        };
        // Back channel calls arrive in our receives as Short messages (RFC 8267 6.5.2: no
        // chunks in our reverse direction): the largest is a receive less the smallest
        // transport header; our replies likewise within the responder's receive.
        let maxrequestsize = self.faults.bend_back_channel_request_size(receive, receive.saturating_sub(MIN_HEADER));
        let backattrs = ChannelAttrs {
            headerpadsize: 0,
            maxrequestsize,
            maxresponsesize: send.saturating_sub(MIN_HEADER),
            maxresponsesize_cached: 0,
            maxoperations: 2,
            maxrequests: self.reverse_credits().max(1),
            rdma_ird: None,
        };
        let op = Op::CreateSession {
            clientid,
            sequence: sequenceid,
            flags: if back { CREATE_SESSION4_FLAG_CONN_BACK_CHAN } else { 0 },
            fore,
            back: backattrs,
            cb_program: self.options.cb_program,
            sec: vec![CbSec::None],
        };
        let r = self.compound("CREATE_SESSION", &[op])?;
        let Some(Res::CreateSession { sessionid, .. }) = r.find(OP_CREATE_SESSION).cloned() else {
            return Err(WorkloadError { step: "CREATE_SESSION", failure: Failure::Status(Some(r.status)) });
        };
        Ok(Client { clientid, sessionid, sequenceid: 1, back })
    }

    /// Waits `how_long` for reverse-direction calls, answering each (RFC 8167 5.2).
    /// Binds the connection to `sessionid` for both directions (RFC 8881 18.34), its back
    /// channel with it.
    pub(super) fn bind_back_channel(&mut self, sessionid: SessionId) -> Step<()> {
        let op = Op::BindConnToSession { sessionid, dir: CDFC4_BACK_OR_BOTH, use_rdma: false };
        self.compound("BIND_CONN_TO_SESSION", &[op]).map(|_| ())
    }

    fn linger(&mut self, step: &'static str, how_long: Duration) -> Step<()> {
        let deadline = Instant::now() + how_long;
        loop {
            let msg = match self.recv_until(step, deadline) {
                Ok(m) => m,
                Err(WorkloadError { failure: Failure::NoReply, .. }) => return Ok(()),
                Err(e) => return Err(e),
            };
            if let Answer::Reverse(c) = self.answer(&msg, 0) {
                self.answer_reverse(step, c)?;
            }
        }
    }

    /// Returns the delegations the server recalled (RFC 8881 20.2: DELEGRETURN).
    fn return_recalled(&mut self, client: &mut Client, fh: &[u8]) -> Step<()> {
        for stateid in std::mem::take(&mut self.callbacks.recalled) {
            self.sequenced("DELEGRETURN", client, vec![Op::PutFh(fh.to_vec()), Op::DelegReturn(stateid)])?;
        }
        Ok(())
    }
}

/// The NFSv4.1 workload on one connection, with the back channel on it.
pub(super) fn workload(s: &mut Session<'_>) -> Step<()> {
    s.connect()?;
    let mut c = s.create_session(b"rpcrdma-requester", true)?;
    s.sequenced("RECLAIM_COMPLETE", &mut c, vec![Op::ReclaimComplete { one_fs: false }])?;

    // LOOKUP of `five`, then OPEN wanting a read delegation (RFC 8881 18.16.3).
    let r = s.sequenced("LOOKUP", &mut c, vec![Op::PutRootFh, Op::Lookup(FILE_FIVE.as_bytes().to_vec()), Op::GetFh])?;
    let Some(Res::GetFh(fh)) = r.find(OP_GETFH).cloned() else {
        return Err(WorkloadError { step: "LOOKUP", failure: Failure::Status(Some(r.status)) });
    };
    let open = |access: u32, clientid: u64, owner: &[u8]| Op::open_existing(clientid, owner, access, Claim::Fh);
    let access = OPEN4_SHARE_ACCESS_READ | OPEN4_SHARE_ACCESS_WANT_READ_DELEG;
    let ops = vec![Op::PutFh(fh.clone()), open(access, c.clientid, b"reader")];
    let r = s.sequenced("OPEN", &mut c, ops)?;
    let Some(Res::Open { stateid, delegation, .. }) = r.find(OP_OPEN).cloned() else {
        return Err(WorkloadError { step: "OPEN", failure: Failure::Status(Some(r.status)) });
    };
    let delegated = matches!(delegation, Delegation::Read { .. } | Delegation::Write { .. });
    super::faults::drop_with_delegation(s, c.sessionid, delegated, LINGER)?;
    match s.sequenced("READ", &mut c, vec![Op::PutFh(fh.clone()), Op::Read { stateid, offset: 0, count: 5 }]) {
        // Refused unprocessed (RFC 8267 6.4.2, RFC 8166 4.5): the READ is complete with its
        // error, and the slot's sequence ID was not used (RFC 8881 2.10.6.1).
        Err(WorkloadError { failure: Failure::RdmaError(_) | Failure::GarbageArgs, .. }) => {
            c.sequenceid = c.sequenceid.wrapping_sub(1)
        }
        r => _ = r?,
    }
    s.null_window()?;
    s.reads_through_write_chunk(&mut c, &fh, stateid)?;
    s.sequenced("CLOSE", &mut c, vec![Op::PutFh(fh.clone()), Op::Close { seqid: 0, stateid }])?;

    // A second client opens the file for writing: the server recalls our delegation
    // (CB_RECALL) and answers NFS4ERR_DELAY until it is returned.
    if delegated {
        let mut other = s.create_session(b"rpcrdma-requester-2", false)?;
        let op = open(OPEN4_SHARE_ACCESS_BOTH, other.clientid, b"writer");
        for _ in 0..DELAY_RETRIES {
            let r = s.sequenced("OPEN for writing", &mut other, vec![Op::PutFh(fh.clone()), op.clone()])?;
            s.return_recalled(&mut c, &fh)?;
            if r.status != NFS4ERR_DELAY {
                if let Some(Res::Open { stateid, .. }) = r.find(OP_OPEN).cloned() {
                    s.sequenced("CLOSE", &mut other, vec![Op::PutFh(fh.clone()), Op::Close { seqid: 0, stateid }])?;
                }
                break;
            }
            s.linger("OPEN for writing", Duration::from_millis(20))?;
        }
        s.compound("DESTROY_SESSION", &[Op::DestroySession(other.sessionid)])?;
        s.compound("DESTROY_CLIENTID", &[Op::DestroyClientId(other.clientid)])?;
    }
    s.linger("the back channel", LINGER)?;
    s.return_recalled(&mut c, &fh)?;
    s.compound("DESTROY_SESSION", &[Op::DestroySession(c.sessionid)])?;
    s.compound("DESTROY_CLIENTID", &[Op::DestroyClientId(c.clientid)])?;
    Ok(())
}
