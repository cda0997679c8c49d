//! The reverse direction against a server (RFC 8167; RFC 8267 6.5.2): the harness is an
//! NFSv4.1 client that offers a back channel on the connection (EXCHANGE_ID, then
//! CREATE_SESSION with CREATE_SESSION4_FLAG_CONN_BACK_CHAN), posts receives for the
//! reverse-direction credits it grants (RFC 8167 4.3.1), and judges the server's
//! reverse-direction calls (CB_NULL, CB_COMPOUND) and what it does with our replies. A server
//! that serves no NFSv4.1 over RDMA, or refuses the back channel (NFS-Ganesha 6.5 answers
//! CREATE_SESSION without CONN_BACK_CHAN), is `unsupported` here.

use std::time::{Duration, Instant};

use rpcrdma_codec::rpc::AcceptStat;
use rpcrdma_codec::xdr::Encode;

use rpcrdma_peers::proto::callback::{CbCompoundArgs, CbCompoundRes, CbOp, CbOpResult, CB_COMPOUND, CB_NULL};
use rpcrdma_peers::proto::nfs41::{
    self, compound_res, CbSec, ChannelAttrs, Claim, Delegation, Op, Res, SessionId, Xdr, CDFC4_BACK_OR_BOTH,
    CREATE_SESSION4_FLAG_CONN_BACK_CHAN, EXCHGID4_FLAG_USE_NON_PNFS, MINOR_V1, NFS4ERR_DELAY,
    NFS4ERR_MINOR_VERS_MISMATCH, NFS4ERR_NOTSUPP, NFS4_OK, NFSPROC4_COMPOUND, NFS_PROGRAM, NFS_V4,
    OPEN4_SHARE_ACCESS_READ, OPEN4_SHARE_ACCESS_WANT_READ_DELEG, OPEN4_SHARE_ACCESS_WRITE, OP_CREATE_SESSION,
    OP_EXCHANGE_ID, OP_OPEN, SP4_NONE,
};

use rpcrdma_peers::proto::nfs3::DIR_MANY;

use super::steps::start;
use crate::engine::{expect, Check, CheckInfo, Ctx, Judged, OrFail, Outcome, Received, Verdict};
use crate::frame::rpc::RpcKind;
use crate::frame::v1::Body;
use crate::frame::Frame;

/// Our callback program number: the client chooses it (RFC 8881 18.36, csa_cb_program).
pub const CB_PROGRAM: u32 = 0x4000_0000;
/// The reverse-direction credits we grant in our reverse-direction replies, and the receives
/// we post for them beyond the forward ones (RFC 8167 4.1, 4.3.1).
pub const REVERSE_CREDITS: u32 = 2;
/// Our back channel's ca_maxrequestsize and ca_maxresponsesize: within any connection's
/// inline threshold (RFC 8797's 1024-byte minimum), so the server MUST send Short calls
/// only (RFC 8267 6.5.2).
pub const BACK_CHANNEL_MAX: u32 = 1024;

/// The back channel attributes we offer (RFC 8881 18.36: csa_back_chan_attrs).
fn back_channel() -> ChannelAttrs {
    ChannelAttrs {
        headerpadsize: 0,
        maxrequestsize: BACK_CHANNEL_MAX,
        maxresponsesize: BACK_CHANNEL_MAX,
        maxresponsesize_cached: 0,
        maxoperations: 2,
        maxrequests: REVERSE_CREDITS,
        rdma_ird: None,
    }
}

/// The fore channel attributes we ask for: sizes any server trims to its own.
fn fore_channel() -> ChannelAttrs {
    ChannelAttrs {
        headerpadsize: 0,
        maxrequestsize: 1 << 20,
        maxresponsesize: 1 << 20,
        maxresponsesize_cached: 4096,
        maxoperations: 16,
        maxrequests: 8,
        rdma_ird: None,
    }
}

/// An NFSv4.1 client's state on the connection, and every reverse-direction message the
/// server sent so far (in order).
struct Client {
    clientid: u64,
    sequence: u32,
    sessions: Vec<SessionId>,
    /// The reverse-direction messages received: every message that answers no forward call of
    /// ours (RFC 8167 4.1: told apart by the RPC msg_type CALL, or by its XID).
    reverse: Vec<Frame>,
    /// Whether to answer reverse-direction calls as they come (else they are held).
    answering: bool,
    /// The reverse-direction calls held, unanswered.
    held: Vec<Frame>,
    /// Whether CB_NULL is answered while other calls are held (a held CB_NULL keeps a
    /// reverse-direction credit, and the calls after it wait for it).
    answering_null: bool,
    /// The reverse-direction credits our replies grant (RFC 8167 5.2).
    grant: u32,
    /// The next sa_sequenceid of slot 0 of our first session (RFC 8881 18.46).
    slot_seq: u32,
}

/// Whether `f` is the reply to our forward call `xid`: that rdma_xid, and no RPC CALL inside
/// (RFC 8167 2.4 lets the server reuse our XID for a call of its own).
fn answers(f: &Frame, xid: u32) -> bool {
    f.xid() == Some(xid) && !f.is_rpc_call()
}

impl Client {
    fn new() -> Self {
        Client {
            clientid: 0,
            sequence: 0,
            sessions: Vec::new(),
            reverse: Vec::new(),
            answering: true,
            held: Vec::new(),
            answering_null: false,
            grant: REVERSE_CREDITS,
            slot_seq: 1,
        }
    }

    /// A reverse-direction message arrived: kept, and answered when it is a well-formed call
    /// and we are answering.
    fn take(&mut self, ctx: &mut Ctx, f: Frame) {
        self.reverse.push(f.clone());
        let null = matches!(&f.rpc, Some(Ok(r)) if matches!(r.kind, RpcKind::Call { proc_: CB_NULL, .. }));
        if self.answering || self.answering_null && null {
            answer(ctx, &f, self.grant);
        } else {
            self.held.push(f);
        }
    }

    /// Sends a forward COMPOUND and waits for its reply, taking the reverse-direction messages
    /// that come before it.
    fn compound(&mut self, ctx: &mut Ctx, ops: &[Op]) -> Result<Frame, Verdict> {
        let call = ctx.call_of(NFS_PROGRAM, NFS_V4, NFSPROC4_COMPOUND, nfs41::compound_args("rpcrdma", MINOR_V1, ops));
        let want = format!("a reply to our COMPOUND (xid {:#010x})", call.xid);
        ctx.send(&call.msg()).map_err(|e| Verdict::fail(&want, format!("send failed: {e}")))?;
        let deadline = Instant::now() + ctx.options.timeout;
        loop {
            match ctx.recv_until(deadline) {
                Received::Message(f) if answers(&f, call.xid) => return Ok(f),
                Received::Message(f) => self.take(ctx, f),
                other => return Err(Verdict::fail(want, other.describe())),
            }
        }
    }

    /// SEQUENCE on slot 0 of `sid` (its next sequenceid in `seq`), then `ops`: the COMPOUND's
    /// results (RFC 8881 18.46).
    fn sequenced(
        &mut self,
        ctx: &mut Ctx,
        sid: SessionId,
        seq: &mut u32,
        ops: &[Op],
        want: &str,
    ) -> Result<nfs41::CompoundRes, Verdict> {
        let sequence =
            Op::Sequence { sessionid: sid, sequenceid: *seq, slotid: 0, highest_slotid: 0, cachethis: false };
        let all: Vec<Op> = std::iter::once(sequence).chain(ops.iter().cloned()).collect();
        let f = self.compound(ctx, &all)?;
        let res = compound(&f, want)?;
        if res.results.first().is_some_and(|r| r.status == NFS4_OK) {
            *seq = seq.wrapping_add(1);
        }
        Ok(res)
    }

    /// Takes the reverse-direction messages that arrive until `deadline`; stops at the first
    /// when `first` (true when one came).
    fn listen(&mut self, ctx: &mut Ctx, deadline: Instant, first: bool) -> Result<bool, Verdict> {
        let mut any = false;
        loop {
            match ctx.recv_until(deadline) {
                Received::Message(f) => {
                    self.take(ctx, f);
                    any = true;
                    if first {
                        return Ok(true);
                    }
                }
                Received::SILENCE => return Ok(any),
                other => {
                    return Err(Verdict::fail(
                        "the connection kept while we wait for reverse-direction calls",
                        other.describe(),
                    ))
                }
            }
        }
    }
}

/// An unsupported verdict when the COMPOUND reply says the server serves no NFSv4.1.
fn nfs41_served(f: &Frame, want: &str) -> Result<(), Verdict> {
    match expect::rpc(f).map(|r| &r.kind) {
        Ok(RpcKind::Accepted(AcceptStat::ProgMismatch { .. } | AcceptStat::ProgUnavail)) => {
            Err(Verdict::unsupported(want, "the server serves no NFSv4 over RDMA (PROG_MISMATCH or PROG_UNAVAIL)"))
        }
        _ => Ok(()),
    }
}

/// Connects as an NFSv4.1 client and offers a back channel on the connection: EXCHANGE_ID,
/// then CREATE_SESSION with CONN_BACK_CHAN (RFC 8881 18.35, 18.36). Unsupported when the
/// server serves no NFSv4.1 or does not take the back channel.
fn session(ctx: &mut Ctx, mut c: Client) -> Result<Client, Verdict> {
    start(ctx)?;
    // Receives for the reverse-direction calls we allow, above the forward ones (RFC 8167 4.3.1).
    let size = ctx.options.receive_size as usize;
    let want = "receives posted for the reverse-direction credits we grant";
    ctx.conn().post_recv(size, REVERSE_CREDITS as usize).map_err(|e| Verdict::fail(want, format!("post_recv: {e}")))?;
    let owner = format!("rpcrdma-harness-{:08x}", ctx.xid());
    let (clientid, sequenceid) = exchange_id(ctx, &mut c, &owner, "EXCHANGE_ID (minor version 1) answered NFS4_OK")?;
    c.clientid = clientid;
    c.sequence = sequenceid;
    create_session(ctx, &mut c)?;
    Ok(c)
}

/// CREATE_SESSION with CONN_BACK_CHAN and our back channel attributes, for `c`'s client.
fn create_session(ctx: &mut Ctx, c: &mut Client) -> Result<(), Verdict> {
    let want = "CREATE_SESSION with CONN_BACK_CHAN answered NFS4_OK, the back channel taken";
    let op = Op::CreateSession {
        clientid: c.clientid,
        sequence: c.sequence,
        flags: CREATE_SESSION4_FLAG_CONN_BACK_CHAN,
        fore: fore_channel(),
        back: back_channel(),
        cb_program: CB_PROGRAM,
        sec: vec![CbSec::None],
    };
    let f = c.compound(ctx, &[op])?;
    let res = compound(&f, want)?;
    let Some(Res::CreateSession { sessionid, flags, .. }) = res.find(OP_CREATE_SESSION).cloned() else {
        let why = format!("COMPOUND status {}: no session, so no back channel", res.status);
        return Err(Verdict::unsupported(want, why));
    };
    if flags & CREATE_SESSION4_FLAG_CONN_BACK_CHAN == 0 {
        let why =
            "CREATE_SESSION answered without CONN_BACK_CHAN: the server takes no back channel on an RDMA connection";
        return Err(Verdict::unsupported(want, why));
    }
    c.sequence = c.sequence.wrapping_add(1);
    c.sessions.push(sessionid);
    Ok(())
}

/// COMPOUND4res of a reply.
fn compound(f: &Frame, want: &str) -> Result<nfs41::CompoundRes, Verdict> {
    let results = expect::results(f).or_fail(want)?;
    compound_res(results, |_| false).ok_or_else(|| Verdict::fail(want, "COMPOUND4res that does not decode"))
}

/// Our reverse-direction reply (RFC 8167 5.2): RDMA_MSG with the call's XID, rdma_vers 1,
/// the reverse-direction credits we grant, no chunks; then an accepted RPC reply.
pub fn reverse_reply(xid: u32, grant: u32, results: &[u8]) -> Vec<u8> {
    let mut m = rpcrdma_codec::v1::HeaderBuilder::msg(xid, grant).encode_to_vec();
    // RFC 5531 9: xid, REPLY, MSG_ACCEPTED, AUTH_NONE verifier, SUCCESS.
    let mut x = Xdr::new();
    x.u32(xid).u32(1).u32(0).u32(0).u32(0).u32(0);
    m.extend_from_slice(&x.into_inner());
    m.extend_from_slice(results);
    m
}

/// Our results for a reverse-direction call: nothing for CB_NULL; for CB_COMPOUND, each
/// CB_SEQUENCE echoed and CB_RECALL done (RFC 8881 20.9, 20.2), anything else NOTSUPP.
fn callback_results(proc_: u32, args: &[u8]) -> Vec<u8> {
    if proc_ != CB_COMPOUND {
        return Vec::new();
    }
    let Ok(a) = CbCompoundArgs::decode(args) else { return Vec::new() };
    let mut results = Vec::new();
    let mut status = NFS4_OK;
    for op in &a.ops {
        let (st, sequence) = match op {
            CbOp::Sequence { sessionid, sequenceid, slotid, highest_slotid, .. } => {
                (NFS4_OK, Some((*sessionid, *sequenceid, *slotid, *highest_slotid, *highest_slotid)))
            }
            CbOp::Recall { .. } => (NFS4_OK, None),
            CbOp::Other(_) => (NFS4ERR_NOTSUPP, None),
        };
        results.push(CbOpResult { op: op.opnum(), status: st, sequence });
        if st != NFS4_OK {
            status = st;
            break;
        }
    }
    CbCompoundRes { status, tag: a.tag, results }.encode()
}

/// Answers a well-formed reverse-direction call of our callback program (a malformed one is
/// left unanswered: the check judging it fails anyway).
fn answer(ctx: &mut Ctx, f: &Frame, grant: u32) {
    let Some(Ok(rpc)) = &f.rpc else { return };
    let RpcKind::Call { prog, proc_, .. } = rpc.kind else { return };
    if f.v1().is_none() || f.xid() != Some(rpc.xid) || prog != CB_PROGRAM || !matches!(proc_, CB_NULL | CB_COMPOUND) {
        return;
    }
    let results = callback_results(proc_, f.slice(rpc.body.clone()));
    let _ = ctx.send(&reverse_reply(rpc.xid, grant, &results));
}

/// What is wrong with a reverse-direction call's framing (RFC 8167 5.1), if anything.
fn framing_fault(f: &Frame) -> Option<String> {
    let x = f.fixed()?;
    // 5.1: the same rdma_vers as forward-direction calls on the connection (ours are 1).
    if x.vers != 1 {
        return Some(format!("rdma_vers {} (our forward-direction calls carry 1)", x.vers));
    }
    let h = f.v1()?;
    if !matches!(h.body, Body::Msg { .. } | Body::NoMsg { .. }) {
        return None;
    }
    match &f.rpc {
        // RDMA_NOMSG: the call is in a chunk, judged by the Short-message check.
        None => None,
        Some(Err(e)) => Some(format!("an RPC message that does not decode: {e}")),
        Some(Ok(r)) if r.xid != x.xid => Some(format!("RPC XID {:#010x} under rdma_xid {:#010x}", r.xid, x.xid)),
        Some(Ok(r)) if !matches!(r.kind, RpcKind::Call { .. }) => {
            Some(format!("msg_type REPLY in a message of ours to answer ({})", r.summary))
        }
        Some(Ok(_)) => None,
    }
}

/// NFS4ERR_GRACE (RFC 8881 15.1.9.2): the server is in its grace period.
const NFS4ERR_GRACE: u32 = 10013;
/// How long a recall's OPEN is retried through a server's grace period: Linux nfsd refuses
/// OPEN for its own (10 s) and delegations while any lock manager is in grace
/// (`nfs4_open_delegation`, fs/nfsd/nfs4state.c: `locks_in_grace`; lockd's lasts 5 x
/// nlm_timeout, 50 s), and a freshly booted peer may still be in them.
const GRACE_WAIT: Duration = Duration::from_secs(60);
/// why_no_delegation4 WND4_RESOURCE (RFC 8881 18.16.3): what Linux nfsd says in its grace.
const WND4_RESOURCE: u32 = 2;
/// Set once a check waited [`GRACE_WAIT`] for a delegation in vain: the others do not wait.
static DELEGATION_WAITED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
/// Which of `dir`'s files the next recall uses: each its own, as a file whose delegation was
/// just recalled is not delegated again soon (Linux: the file's `fi_had_conflict`).
static RECALL_FILE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// EXCHANGE_ID for `owner`: (clientid, sequenceid).
fn exchange_id(ctx: &mut Ctx, c: &mut Client, owner: &str, want: &str) -> Result<(u64, u32), Verdict> {
    let exchange = Op::ExchangeId {
        verifier: *b"rpcrdma1",
        owner: owner.as_bytes().to_vec(),
        flags: EXCHGID4_FLAG_USE_NON_PNFS,
        state_protect: SP4_NONE,
        impl_id: None,
    };
    let f = c.compound(ctx, &[exchange])?;
    nfs41_served(&f, want)?;
    let res = compound(&f, want)?;
    match res.find(OP_EXCHANGE_ID) {
        Some(Res::ExchangeId { clientid, sequenceid, .. }) => Ok((*clientid, *sequenceid)),
        _ => {
            let why = match res.status {
                NFS4ERR_MINOR_VERS_MISMATCH => {
                    "NFS4ERR_MINOR_VERS_MISMATCH: the server serves no NFSv4.1 over RDMA".into()
                }
                st => format!("COMPOUND status {st}, no EXCHANGE_ID result: the server serves no NFSv4.1 over RDMA"),
            };
            Err(Verdict::unsupported(want, why))
        }
    }
}

/// Gives the server a reverse-direction call to make: our client opens a file of `dir` for reading,
/// wanting a read delegation, and a second client on the same connection (no back channel)
/// opens it for writing: the server recalls the delegation over our back channel (CB_RECALL,
/// RFC 8881 10.4.4, 20.2). Linux nfsd sends no CB_NULL to an NFSv4.1 client (its back channel
/// probe is a no-op from minor version 1 on), so this is how it is made to call. Ok(false)
/// when the server granted no delegation.
fn provoke_recall(ctx: &mut Ctx, c: &mut Client) -> Result<bool, Verdict> {
    use std::sync::atomic::Ordering;
    let name = rpcrdma_peers::ulp::tree::dir_entry_name(RECALL_FILE.fetch_add(1, Ordering::Relaxed) % 20);
    let want = format!("a read delegation on {DIR_MANY}/{name}, recalled when another client opens it for writing");
    let want = want.as_str();
    let Some(&sid) = c.sessions.first() else { return Ok(false) };
    let mut seq = c.slot_seq;
    // A new client completes its (empty) reclaim before OPEN (RFC 8881 18.51).
    c.sequenced(ctx, sid, &mut seq, &[Op::ReclaimComplete { one_fs: false }], want)?;
    let open = |clientid: u64, owner: &[u8], access: u32| {
        Op::open_existing(clientid, owner, access, Claim::Null(name.as_bytes().to_vec()))
    };
    let read = open(c.clientid, b"rpcrdma-reader", OPEN4_SHARE_ACCESS_READ | OPEN4_SHARE_ACCESS_WANT_READ_DELEG);
    // The export's root (the MOUNT handle: NFSv4 takes the same file handles), not the
    // pseudo-root PUTROOTFH gives, where `five` is not.
    let dir = [Op::PutFh(ctx.root_fh().to_vec()), Op::Lookup(DIR_MANY.as_bytes().to_vec())];
    let until = Instant::now() + GRACE_WAIT;
    let res = loop {
        let ops = [dir[0].clone(), dir[1].clone(), read.clone()];
        let res = c.sequenced(ctx, sid, &mut seq, &ops, want)?;
        let in_grace = matches!(res.status, NFS4ERR_GRACE | NFS4ERR_DELAY)
            || matches!(res.find(OP_OPEN), Some(Res::Open { delegation: Delegation::NoneExt(WND4_RESOURCE), .. }));
        if !in_grace || DELEGATION_WAITED.load(Ordering::Relaxed) {
            break res;
        }
        if Instant::now() > until {
            DELEGATION_WAITED.store(true, Ordering::Relaxed);
            break res;
        }
        let pause = Instant::now() + Duration::from_secs(1);
        c.listen(ctx, pause, false)?;
    };
    c.slot_seq = seq;
    let delegated = matches!(
        res.find(OP_OPEN),
        Some(Res::Open { delegation: Delegation::Read { .. } | Delegation::Write { .. }, .. })
    );
    if !delegated {
        return Ok(false);
    }
    // The second client: its own session, no back channel (RFC 8881 18.36).
    let owner = format!("rpcrdma-harness-writer-{:08x}", ctx.xid());
    let (clientid, sequence) = exchange_id(ctx, c, &owner, want)?;
    let op = Op::CreateSession {
        clientid,
        sequence,
        flags: 0,
        fore: fore_channel(),
        back: back_channel(),
        cb_program: CB_PROGRAM,
        sec: vec![CbSec::None],
    };
    let f = c.compound(ctx, &[op])?;
    let Some(Res::CreateSession { sessionid, .. }) = compound(&f, want)?.find(OP_CREATE_SESSION).cloned() else {
        return Ok(false);
    };
    let mut seq2 = 1;
    c.sequenced(ctx, sessionid, &mut seq2, &[Op::ReclaimComplete { one_fs: false }], want)?;
    // NFS4ERR_DELAY while the server recalls: the conflict is what we need.
    let write = open(clientid, b"rpcrdma-writer", OPEN4_SHARE_ACCESS_WRITE);
    let [putfh, lookup] = dir;
    c.sequenced(ctx, sessionid, &mut seq2, &[putfh, lookup, write], want)?;
    Ok(true)
}

/// Sets up the session and waits for the server's first reverse-direction message: a
/// CB_NULL probing the back channel, or else the CB_RECALL a conflicting OPEN provokes
/// ([`provoke_recall`]); then listens the silence window for more. Inconclusive when none
/// comes.
fn first_reverse(ctx: &mut Ctx, c: Client, want: &str) -> Result<Client, Verdict> {
    let mut c = session(ctx, c)?;
    await_reverse(ctx, &mut c, want)?;
    Ok(c)
}

/// Waits for the first reverse-direction message on the back channel just offered (provoking
/// a recall when no CB_NULL comes), then listens the silence window for more.
fn await_reverse(ctx: &mut Ctx, c: &mut Client, want: &str) -> Result<(), Verdict> {
    if c.reverse.is_empty() {
        let deadline = Instant::now() + ctx.options.silence;
        if !c.listen(ctx, deadline, true)? {
            let delegated = provoke_recall(ctx, c)?;
            let deadline = Instant::now() + ctx.options.timeout;
            if c.reverse.is_empty() && !c.listen(ctx, deadline, true)? {
                let why = if delegated {
                    "no reverse-direction call: no CB_NULL after CREATE_SESSION took our back channel, and no CB_RECALL after another client's OPEN for writing conflicted with our read delegation"
                } else {
                    "no reverse-direction call: no CB_NULL after CREATE_SESSION took our back channel, and no delegation granted to recall"
                };
                return Err(Verdict::inconclusive(want, why));
            }
        }
    }
    let deadline = Instant::now() + ctx.options.silence;
    c.listen(ctx, deadline, false)?;
    Ok(())
}

/// A reverse-direction call of the server held unanswered, for the reverse-reply fuzzer
/// ([`crate::fuzz::reverse`]).
pub(crate) struct HeldCall {
    /// Its XID (the same in both headers, RFC 8167 5.1).
    pub xid: u32,
    /// Its RPC procedure (CB_NULL or CB_COMPOUND).
    pub proc_: u32,
    /// The results a faithful reply carries ([`reverse_reply`] frames them).
    pub results: Vec<u8>,
}

/// Sets up a session whose back channel rides `ctx`'s connection and waits for the server's
/// first well-formed reverse-direction call (a CB_NULL, or else the CB_RECALL a conflicting
/// OPEN provokes), held unanswered. Unsupported or inconclusive as the checks here are when
/// the server takes no back channel or makes no call.
pub(crate) fn held_call(ctx: &mut Ctx) -> Result<HeldCall, Verdict> {
    let want = "a reverse-direction call on the back channel we offered";
    let mut c = session(ctx, Client { answering: false, ..Client::new() })?;
    let deadline = Instant::now() + ctx.options.silence;
    // A CB_NULL may come before CREATE_SESSION's reply, held while we waited for it.
    if c.held.is_empty() && !c.listen(ctx, deadline, true)? {
        // A file another run of this boot had recalled gets no delegation soon (Linux: its
        // `fi_had_conflict`): the next files are tried.
        let mut delegated = false;
        for _ in 0..4 {
            delegated = provoke_recall(ctx, &mut c)?;
            if delegated || !c.held.is_empty() {
                break;
            }
        }
        let deadline = Instant::now() + ctx.options.timeout;
        if c.held.is_empty() && !c.listen(ctx, deadline, true)? {
            let why = if delegated {
                "no reverse-direction call: no CB_NULL once CREATE_SESSION took our back channel, and no CB_RECALL after another client's conflicting OPEN"
            } else {
                "no reverse-direction call: no CB_NULL once CREATE_SESSION took our back channel, and no delegation granted to recall"
            };
            return Err(Verdict::inconclusive(want, why));
        }
    }
    for f in &c.held {
        let Some(Ok(rpc)) = &f.rpc else { continue };
        let RpcKind::Call { prog: CB_PROGRAM, proc_, .. } = rpc.kind else { continue };
        if call_xid(f).is_some() && f.v1().is_some() {
            let results = callback_results(proc_, f.slice(rpc.body.clone()));
            return Ok(HeldCall { xid: rpc.xid, proc_, results });
        }
    }
    Err(Verdict::inconclusive(want, "no well-formed reverse-direction call of our callback program to answer"))
}

fn no_call_before_back_channel(ctx: &mut Ctx) -> Judged {
    let want = "no reverse-direction call after EXCHANGE_ID while no back channel is offered on the connection; calls once CREATE_SESSION offered one";
    start(ctx)?;
    let size = ctx.options.receive_size as usize;
    ctx.conn().post_recv(size, REVERSE_CREDITS as usize).map_err(|e| Verdict::fail(want, format!("post_recv: {e}")))?;
    let mut c = Client::new();
    let owner = format!("rpcrdma-harness-{:08x}", ctx.xid());
    let (clientid, sequenceid) = exchange_id(ctx, &mut c, &owner, "EXCHANGE_ID (minor version 1) answered NFS4_OK")?;
    c.clientid = clientid;
    c.sequence = sequenceid;
    // RFC 8167 6: a client that offered no back channel is not prepared for calls.
    let deadline = Instant::now() + ctx.options.silence;
    c.listen(ctx, deadline, false)?;
    if let Some(f) = c.reverse.first() {
        return Err(Verdict::fail(want, format!("{f} before any back channel was offered")));
    }
    // The precondition: a server that calls at all, once it may.
    create_session(ctx, &mut c)?;
    await_reverse(ctx, &mut c, want)?;
    Ok(Verdict::pass(want, format!("none before CREATE_SESSION, {} after it", c.reverse.len())))
}

fn call_framing(ctx: &mut Ctx) -> Judged {
    let want =
        "every reverse-direction message of the server: rdma_vers 1, the RPC XID equal to rdma_xid, msg_type CALL";
    let c = first_reverse(ctx, Client::new(), want)?;
    for f in &c.reverse {
        if let Some(why) = framing_fault(f) {
            return Err(Verdict::fail(want, format!("{f}: {why}")));
        }
    }
    Ok(Verdict::pass(want, format!("{} reverse-direction call(s), each framed per RFC 8167 5.1", c.reverse.len())))
}

fn short_calls_only(ctx: &mut Ctx) -> Judged {
    let want = format!(
        "with our back channel ca_maxrequestsize {BACK_CHANNEL_MAX} (within the inline threshold), every reverse-direction call a Short message (RDMA_MSG, no read list) of at most {BACK_CHANNEL_MAX} bytes of RPC message"
    );
    let c = first_reverse(ctx, Client::new(), &want)?;
    for f in &c.reverse {
        let Some(h) = f.v1() else { continue };
        let why = match &h.body {
            Body::NoMsg { .. } => Some("RDMA_NOMSG (a Long call)".to_string()),
            Body::Msg { chunks, .. } if !chunks.reads.is_empty() => {
                Some("a read list (part of the call moved by RDMA Read)".into())
            }
            // RFC 8881 18.36: ca_maxrequestsize bounds the whole RPC call, transport framing excluded.
            Body::Msg { payload, .. } if payload.len() > BACK_CHANNEL_MAX as usize => {
                Some(format!("an RPC call of {} bytes, over our ca_maxrequestsize", payload.len()))
            }
            _ => None,
        };
        if let Some(why) = why {
            return Err(Verdict::fail(want, format!("{f}: {why}")));
        }
    }
    Ok(Verdict::pass(want, format!("{} reverse-direction call(s), all Short and within size", c.reverse.len())))
}

/// A reverse-direction message with its RPC XID (to answer), when it is a well-formed call.
fn call_xid(f: &Frame) -> Option<u32> {
    match &f.rpc {
        Some(Ok(r)) if matches!(r.kind, RpcKind::Call { .. }) && f.xid() == Some(r.xid) => Some(r.xid),
        _ => None,
    }
}

fn credits_kept(ctx: &mut Ctx) -> Judged {
    let want = format!(
        "with our reverse-direction replies granting 1 credit (our forward calls request {}), no second reverse-direction call while one is unanswered, and the next one once we answer",
        ctx.options.credits_requested
    );
    let mut c = first_reverse(ctx, Client { grant: 1, ..Client::new() }, &want)?;
    // Every call so far answered, granting one credit: hold the next, and provoke another
    // while it is unanswered. A server probes each new back channel with CB_NULL (a further
    // CREATE_SESSION with CONN_BACK_CHAN); one that does not is given recalls to make, and
    // then no further CREATE_SESSION: a server may abandon its outstanding callbacks when the
    // back channel moves to a new session and send them again there (Linux nfsd does), which
    // is another matter than the credits.
    c.answering = false;
    let mut by_recall = false;
    let provoke = |ctx: &mut Ctx, c: &mut Client, by_recall: &mut bool| -> Result<(), Verdict> {
        let before = c.reverse.len();
        if !*by_recall {
            create_session(ctx, c)?;
            let deadline = Instant::now() + ctx.options.silence;
            if c.listen(ctx, deadline, true)? || c.reverse.len() > before {
                return Ok(());
            }
            *by_recall = true;
        }
        provoke_recall(ctx, c)?;
        if c.reverse.len() == before {
            let deadline = Instant::now() + ctx.options.timeout;
            c.listen(ctx, deadline, true)?;
        }
        Ok(())
    };
    provoke(ctx, &mut c, &mut by_recall)?;
    let Some((outstanding, call)) = c.held.first().and_then(|f| Some((call_xid(f)?, f.clone()))) else {
        let why = "no second reverse-direction call (a CB_NULL for a second CREATE_SESSION offering a back channel, or a CB_RECALL of a second delegation): none to hold";
        return Err(Verdict::inconclusive(want, why));
    };
    provoke(ctx, &mut c, &mut by_recall)?;
    let deadline = Instant::now() + ctx.options.silence;
    c.listen(ctx, deadline, false)?;
    if let Some(extra) = c.held.get(1) {
        return Err(Verdict::fail(want, format!("{extra} while our reply to {outstanding:#010x} was outstanding")));
    }
    c.answering = true;
    answer(ctx, &call, 1);
    let deadline = Instant::now() + ctx.options.timeout;
    if !c.listen(ctx, deadline, true)? {
        let why = "no reverse-direction call came once we answered: the server never had a second call to make while one was outstanding";
        return Err(Verdict::inconclusive(want, why));
    }
    Ok(Verdict::pass(want, "the third reverse-direction call waited for our reply to the second"))
}

fn hostile_replies(ctx: &mut Ctx) -> Judged {
    let want = "our hostile reverse-direction replies (an unknown XID; rdma_xid and RPC XID differing; an RPC reply cut after msg_type) left unanswered, then the real reply taken and the connection alive";
    let mut c = first_reverse(ctx, Client { answering: false, ..Client::new() }, want)?;
    let Some((xid, call)) = c.held.iter().find_map(|f| Some((call_xid(f)?, f.clone()))) else {
        return Err(Verdict::inconclusive(want, "no well-formed reverse-direction call to answer"));
    };
    let unknown = xid ^ 0x8000_0000;
    let mut differing = reverse_reply(xid, REVERSE_CREDITS, &[]);
    differing[28..32].copy_from_slice(&unknown.to_be_bytes());
    let mut short = reverse_reply(xid, REVERSE_CREDITS, &[]);
    short.truncate(28 + 8);
    let hostile = [reverse_reply(unknown, REVERSE_CREDITS, &[]), differing, short];
    for m in &hostile {
        ctx.send(m).map_err(|e| Verdict::fail(want, format!("send failed: {e}")))?;
    }
    // Anything answering them (an RDMA_ERROR, an RPC reply) is a reply treated as a call.
    let deadline = Instant::now() + ctx.options.silence;
    loop {
        match ctx.recv_until(deadline) {
            Received::Message(f) if f.xid().is_some_and(|x| x == xid || x == unknown) && !f.is_rpc_call() => {
                return Err(Verdict::fail(want, format!("{f}: our reply answered as if it were a call")));
            }
            Received::Message(f) => c.take(ctx, f),
            Received::SILENCE => break,
            other => return Err(Verdict::fail(want, format!("{} after our hostile replies", other.describe()))),
        }
    }
    answer(ctx, &call, REVERSE_CREDITS);
    if !ctx.liveness() {
        return Err(Verdict::fail(want, "the connection no longer answers a NULL call"));
    }
    Ok(Verdict::pass(want, "no answer to any of them; the connection still answers"))
}

/// How long, after our reconnected connection is bound to the session's back channel, a
/// pending CB_RECALL may take to come again: past Linux nfsd's callback RPC timeout (a tenth
/// of the lease, 9 s: `max_cb_time`, fs/nfsd/nfs4callback.c), after which it restarts a call
/// whose connection went away.
const RESEND_WAIT: Duration = Duration::from_secs(12);

/// The stateid a reverse-direction message recalls (a CB_COMPOUND holding CB_RECALL,
/// RFC 8881 20.2), with the message's XID.
fn recall_in(f: &Frame) -> Option<(u32, nfs41::Stateid)> {
    let Some(Ok(rpc)) = &f.rpc else { return None };
    let RpcKind::Call { prog: CB_PROGRAM, proc_: CB_COMPOUND, .. } = rpc.kind else { return None };
    let args = CbCompoundArgs::decode(f.slice(rpc.body.clone())).ok()?;
    args.ops.iter().find_map(|op| match op {
        CbOp::Recall { stateid, .. } => Some((rpc.xid, *stateid)),
        _ => None,
    })
}

/// RFC 8167 5.4, RFC 8881 2.10.6.2: a CB_RECALL left unanswered when the connection is lost
/// is sent again once the client binds a new connection to the session's back channel.
fn recall_resent(ctx: &mut Ctx) -> Judged {
    let want = format!(
        "a CB_RECALL we left unanswered sent again (same delegation stateid) within {} s of our dropping the connection, reconnecting and binding the new one to the session's back channel (BIND_CONN_TO_SESSION)",
        RESEND_WAIT.as_secs()
    );
    let want = want.as_str();
    // CB_NULL probes answered; the CB_RECALL held.
    let mut c = session(ctx, Client { answering_null: true, ..Client::new() })?;
    let deadline = Instant::now() + ctx.options.silence;
    c.listen(ctx, deadline, false)?;
    c.answering = false;
    let held = |c: &Client| c.held.iter().find_map(recall_in);
    // A file recalled in an earlier run of this boot gets no delegation soon (Linux: its
    // `fi_had_conflict`): the next files are tried.
    let mut delegated = false;
    for _ in 0..4 {
        delegated |= provoke_recall(ctx, &mut c)?;
        if delegated || held(&c).is_some() {
            break;
        }
    }
    if held(&c).is_none() {
        let deadline = Instant::now() + ctx.options.timeout;
        while held(&c).is_none() && c.listen(ctx, deadline, true)? {}
    }
    let Some((first_xid, stateid)) = held(&c) else {
        let why = if delegated {
            "no CB_RECALL after another client's OPEN for writing conflicted with our read delegation"
        } else {
            "no delegation granted to recall"
        };
        return Err(Verdict::inconclusive(want, why));
    };
    let Some(&sid) = c.sessions.first() else { return Err(Verdict::inconclusive(want, "no session")) };
    // The connection lost with the CB_RECALL unanswered; a new one bound to the session's
    // back channel (RFC 8881 18.34), with receives for the calls we grant (RFC 8167 4.3.1).
    ctx.disconnect();
    start(ctx)?;
    let size = ctx.options.receive_size as usize;
    ctx.conn().post_recv(size, REVERSE_CREDITS as usize).map_err(|e| Verdict::fail(want, format!("post_recv: {e}")))?;
    c.held.clear();
    let bind = Op::BindConnToSession { sessionid: sid, dir: CDFC4_BACK_OR_BOTH, use_rdma: false };
    let f = c.compound(ctx, &[bind])?;
    let res = compound(&f, want)?;
    if res.status != NFS4_OK {
        let why = format!("BIND_CONN_TO_SESSION answered {}: no back channel on the new connection", res.status);
        return Err(Verdict::inconclusive(want, why));
    }
    let deadline = Instant::now() + RESEND_WAIT;
    while !c.held.iter().filter_map(recall_in).any(|(_, s)| s == stateid) {
        if !c.listen(ctx, deadline, true)? {
            let others = c.held.len();
            let got = format!(
                "no CB_RECALL of the delegation again ({others} other call(s) held on the new connection): the recall (xid {first_xid:#010x}) was abandoned with the connection"
            );
            return Ok(Verdict::lax(want, got));
        }
    }
    let (xid, _) = c.held.iter().filter_map(recall_in).find(|(_, s)| *s == stateid).expect("found above");
    // Answered now, so the conflicting OPEN can go on.
    let again = c.held.iter().find(|f| recall_in(f).is_some_and(|(_, s)| s == stateid)).cloned();
    if let Some(f) = again {
        answer(ctx, &f, REVERSE_CREDITS);
    }
    let same = if xid == first_xid { "its XID unchanged" } else { "with a new XID" };
    Ok(Verdict::pass(want, format!("the CB_RECALL sent again on the new connection, {same} ({xid:#010x})")))
}

pub static CHECKS: [Check; 6] = [
    Check {
        info: CheckInfo {
            id: "rfc8167/6/no-call-before-back-channel",
            judges: &["rfc8167/6#1"],
            acceptable: "no reverse-direction call between EXCHANGE_ID and the CREATE_SESSION that offers a back channel on the connection (we wait the silence window), and a call (CB_NULL, or the CB_RECALL of a provoked recall) once it did; unsupported as below",
            rationale: "A client that has not offered a back channel has posted no receives for calls: a call then can cost it the connection (RFC 8167 4.3.1, 6).",
            groups: &["reverse", "nfs41"],
            broken_by: &[("cb-before-back-channel", Outcome::Fail)],
            precondition: Some("the server makes a reverse-direction call once a back channel is offered, so its silence before one is telling"),
        },
        run: no_call_before_back_channel,
    },
    Check {
        info: CheckInfo {
            id: "rfc8167/5.1/reverse-call-framing",
            judges: &["rfc8167/5.1#1", "rfc8167/5.1#2"],
            acceptable: "each reverse-direction call the server sends on the back channel we offered (CREATE_SESSION with CONN_BACK_CHAN) carries rdma_vers 1 as our forward calls, rdma_xid equal to the RPC XID, and msg_type CALL; a server that serves no NFSv4.1 over RDMA or refuses the back channel is unsupported",
            rationale: "A client routes reverse-direction calls by msg_type and XID (RFC 8167 4.1): a call with the wrong version, XID or direction is dropped and the callback path looks down.",
            groups: &["reverse", "nfs41"],
            broken_by: &[
                ("reverse-call-vers-2", Outcome::Fail),
                ("reverse-call-xid-mismatch", Outcome::Fail),
                ("reverse-call-reply-type", Outcome::Fail),
            ],
            precondition: Some("the server sends a reverse-direction call (its CB_NULL probe) once CREATE_SESSION took our back channel"),
        },
        run: call_framing,
    },
    Check {
        info: CheckInfo {
            id: "rfc8267/6.5.2/short-reverse-calls",
            judges: &["rfc8267/6.5.2#2"],
            acceptable: "with our back channel ca_maxrequestsize 1024, every reverse-direction call is RDMA_MSG without a read list (a Short message), its RPC call no longer than 1024 bytes (RFC 8881 18.36); unsupported as above",
            rationale: "A client whose back channel takes no Long calls has no receive for an RDMA_NOMSG call's chunk; RFC 8267 6.5.2 makes the server keep to Short messages.",
            groups: &["reverse", "nfs41", "inline"],
            broken_by: &[("reverse-call-long", Outcome::Fail), ("cb-large-call", Outcome::Fail)],
            precondition: Some("the server sends a reverse-direction call once CREATE_SESSION took our back channel"),
        },
        run: short_calls_only,
    },
    Check {
        info: CheckInfo {
            id: "rfc8167/4.1/reverse-credits-kept",
            judges: &["rfc8167/4.1#1"],
            acceptable: "after a reverse-direction reply of ours granting one credit (our forward calls request 32), the server sends no second reverse-direction call while one is unanswered; inconclusive when it never has two to make",
            rationale: "Reverse-direction credits are the client's receives for calls, accounted apart from the forward ones (RFC 8167 4.1, 4.3.1): a call beyond them finds no receive and the connection is lost.",
            groups: &["reverse", "nfs41", "credits"],
            broken_by: &[("reverse-call-over-credits", Outcome::Fail)],
            precondition: Some("the server has another reverse-direction call to make while one is unanswered (a CB_NULL probing a new back channel: we send CREATE_SESSION with CONN_BACK_CHAN again; or else the CB_RECALL of another delegation)"),
        },
        run: credits_kept,
    },
    Check {
        info: CheckInfo {
            id: "rfc8167/5.2/hostile-reverse-replies",
            judges: &["rfc8267/6.5.2#1"],
            acceptable: "reverse-direction replies with an unknown XID, with rdma_xid and RPC XID differing, or cut after msg_type get no answer (no RDMA_ERROR: msg_type REPLY marks a reply, RFC 8167 4.1, 5.2), and the connection keeps answering",
            rationale: "A server that takes a reply for a call answers the client's reply with an error or drops the connection, and a client's stray reply takes the callback path down.",
            groups: &["reverse", "nfs41", "errors"],
            broken_by: &[("reverse-reply-answered", Outcome::Fail)],
            precondition: Some("the server sends a reverse-direction call, which our hostile replies pretend to answer"),
        },
        run: hostile_replies,
    },
    Check {
        info: CheckInfo {
            id: "rfc8167/5.4/recall-resent-after-reconnect",
            judges: &["~rfc8167/5.4#2"],
            acceptable: "a CB_RECALL we leave unanswered comes again, recalling the same delegation stateid (with its XID or a new one), within 12 s of our dropping the connection, connecting again and binding the new connection to the session's back channel (BIND_CONN_TO_SESSION); no CB_RECALL again is pass-lax (RFC 8167 5.4 and RFC 8881 2.10.6.2 expect the retransmission without a key word; the server may give the call up); inconclusive without a delegation recalled; unsupported as above",
            rationale: "A server cannot reconnect to a client: a callback lost with its connection is delivered only if the server sends it again once the client binds a new connection to the back channel (RFC 8167 5.4, RFC 8881 2.10.6.2), else the conflicting OPEN waits out the delegation's revocation.",
            groups: &["reverse", "nfs41"],
            broken_by: &[("cb-abandoned-on-reconnect", Outcome::PassLax)],
            precondition: Some("the server recalls a delegation of ours (CB_RECALL) when another client opens the file for writing"),
        },
        run: recall_resent,
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    fn words(w: &[u32]) -> Vec<u8> {
        w.iter().flat_map(|x| x.to_be_bytes()).collect()
    }

    #[test]
    fn our_reverse_reply_is_framed_as_rfc_8167_5_2_says() {
        // rdma_xid = the call's XID, rdma_vers 1, our reverse grant, RDMA_MSG, three empty
        // lists; then xid, REPLY, MSG_ACCEPTED, AUTH_NONE (flavor, length), SUCCESS.
        let want = words(&[7, 1, REVERSE_CREDITS, 0, 0, 0, 0, 7, 1, 0, 0, 0, 0]);
        assert_eq!(reverse_reply(7, REVERSE_CREDITS, &[]), want);
    }

    fn frame(w: &[u32]) -> Frame {
        Frame::decode(words(w), None, rpcrdma_codec::check::Role::Reply, &rpcrdma_codec::Profile::default())
    }

    #[test]
    fn framing_faults_are_named() {
        // CB_NULL of our program: xid 9 in both headers, CALL.
        let call = [9, 1, 2, 0, 0, 0, 0, 9, 0, 2, CB_PROGRAM, 1, 0, 0, 0, 0, 0];
        assert_eq!(framing_fault(&frame(&call)), None);
        let mut v2 = call;
        v2[1] = 2;
        assert!(framing_fault(&frame(&v2)).is_some_and(|w| w.contains("rdma_vers 2")));
        let mut xid = call;
        xid[0] = 8;
        assert!(framing_fault(&frame(&xid)).is_some_and(|w| w.contains("RPC XID")));
        let mut reply = call;
        reply[8] = 1;
        assert!(framing_fault(&frame(&reply)).is_some());
    }

    #[test]
    fn a_received_call_is_decoded_as_a_call() {
        // A reverse-direction call arrives where replies are expected: its RPC msg_type
        // makes it a call (RFC 8167 4.1), so a credit request of 0 is no zero grant.
        let f = frame(&[9, 1, 0, 0, 0, 0, 0, 9, 0, 2, CB_PROGRAM, 1, 0, 0, 0, 0, 0]);
        assert!(f.is_rpc_call());
        assert!(f.v1().unwrap().violations.is_empty(), "{:?}", f.v1().unwrap().violations);
        assert!(!answers(&f, 9));
    }

    #[test]
    fn cb_compound_results_echo_cb_sequence() {
        let sid = [3u8; 16];
        let args = CbCompoundArgs {
            tag: b"t".to_vec(),
            minorversion: 1,
            callback_ident: 0,
            ops: vec![CbOp::Sequence {
                sessionid: sid,
                sequenceid: 5,
                slotid: 0,
                highest_slotid: 0,
                cachethis: false,
                referring: Vec::new(),
            }],
        };
        let res = CbCompoundRes::decode(&callback_results(CB_COMPOUND, &args.encode())).unwrap();
        assert_eq!(res.status, NFS4_OK);
        assert_eq!(res.results[0].sequence, Some((sid, 5, 0, 0, 0)));
        assert!(callback_results(CB_NULL, &[]).is_empty());
    }
}
