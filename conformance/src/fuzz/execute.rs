//! Running one case against a peer: a fresh connection, each message's regions registered
//! (guards and contents written), its placeholders bound and the message sent; then a
//! liveness NULL, the replies collected (decoded once into frames by the engine's context),
//! the guard bytes read back, and, when the peer went quiet or away, a new connection tried.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use rpcrdma_codec::check::{Role, Violations};
use rpcrdma_codec::rpc::{RpcHeader, RpcMessage};
use rpcrdma_codec::v1::{Body, Message};
use rpcrdma_codec::Profile;
use rpcrdma_peers::transport::{Access, Connection, Connector, Region, RemoteOp};

use super::input::Wire;
use crate::engine::{Ctx, NoMessage, Received, RunOptions};
use crate::frame::Frame;

/// What the liveness NULL after a case found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Liveness {
    /// The NULL was answered on the same connection.
    Answered,
    /// The connection stayed up but the NULL was never answered (a new connection was).
    Silent,
    /// The connection went down (a new connection was answered).
    Disconnected,
    /// A new connection was refused, or accepted and never answered: crashed or wedged.
    Refused,
}

impl Liveness {
    pub const ALL: [Liveness; 4] = [Liveness::Answered, Liveness::Silent, Liveness::Disconnected, Liveness::Refused];

    pub fn name(self) -> &'static str {
        match self {
            Liveness::Answered => "answered",
            Liveness::Silent => "silent",
            Liveness::Disconnected => "disconnected",
            Liveness::Refused => "refused",
        }
    }
}

/// An access of the peer's outside every range a message let it make: bytes changed outside
/// the write and reply segments, or (when the transport records the peer's one-sided
/// operations, as the emulated fabric does) an RDMA Write or Read reaching outside them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OobAccess {
    pub message: usize,
    pub region: usize,
    /// Offset into the region (guard included) of the first byte outside.
    pub at: usize,
    /// How many bytes.
    pub bytes: usize,
    /// A read (else a write).
    pub read: bool,
}

/// Everything one case produced.
#[derive(Debug, Clone)]
pub struct Observation {
    pub liveness: Liveness,
    /// Every message that came back (liveness replies included), in order.
    pub replies: Vec<Frame>,
    /// For each message sent: whether it was well-formed (a faithful peer must answer it
    /// and must not drop the connection over it).
    pub well_formed: Vec<bool>,
    /// Well-formed messages no reply answered.
    pub unanswered: Vec<usize>,
    pub oob: Vec<OobAccess>,
    /// The first connection failed (the peer was already down).
    pub connect_failed: Option<String>,
    /// Messages sent.
    pub sent: usize,
    /// The rdma_xid of the liveness NULL.
    pub null_xid: u32,
    /// Bug reports the peer's kernel logged during the case, with their traces
    /// ([`super::kernel_log`]); empty where the log cannot be read.
    pub kernel: Vec<String>,
    /// Where the peer crashed, when its own log (`--peer-log`) carried a backtrace during the
    /// case ([`super::backtrace`]).
    pub crash_site: Option<super::backtrace::Site>,
    /// Cases that ran on this case's connection before it ([`Kept`]); 0 on a fresh one.
    pub after_cases: usize,
    /// Everything those cases sent was well-formed and every call of theirs answered (true on
    /// a fresh connection): else the peer may still act on an earlier message, such as writing
    /// into a region that went with its case, and a disconnect is not this case's doing.
    pub earlier_clean: bool,
    /// The liveness was proven by the reply to the case's own last message (a well-formed
    /// call), not by a NULL.
    pub own_probe: bool,
    /// Connections the case opened: its own when it had none to go on over, and the one the
    /// liveness probe opened when its own went quiet or away.
    pub connections: u64,
    /// Where the case's time went.
    pub spent: Spent,
    /// The wire profile the replies were decoded under (the run's, [`RunOptions::profile`]).
    pub profile: Profile,
    /// A wait was cut at the case's deadline ([`run_until`]) and the peer had not answered by
    /// then (its liveness, or a well-formed call's late reply): the outcome may be a slow
    /// peer's, so the case decides nothing.
    pub cut: bool,
}

/// Where a case's (or a run's) wall time went, phase by phase.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Spent {
    /// Opening connections: the case's own and the one a probe opens after silence.
    pub connect: Duration,
    /// Registering the case's regions, writing them, binding and sending its messages.
    pub send: Duration,
    /// Waiting for the liveness proof (the own call's reply or a NULL's) and the replies before
    /// and behind it.
    pub wait: Duration,
    /// Reading back the guard bytes and regions, deregistering them.
    pub check: Duration,
    /// Reading the peer's logs and memory after the case.
    pub logs: Duration,
    /// Writing the case to the journal before it is sent.
    pub journal: Duration,
    /// Drawing the next case and classifying the observation.
    pub generate: Duration,
    /// Closing connections no later case goes on over (disconnect, teardown).
    pub close: Duration,
    /// Restarting the peer between cases (after a finding, or a case that left it unwell).
    pub restart: Duration,
    /// Writing the report as the run goes.
    pub report: Duration,
}

impl Spent {
    /// The phases by name, in the order a case goes through them.
    pub fn named(&self) -> [(&'static str, Duration); 10] {
        [
            ("generate", self.generate),
            ("journal", self.journal),
            ("connect", self.connect),
            ("send", self.send),
            ("wait", self.wait),
            ("check", self.check),
            ("logs", self.logs),
            ("close", self.close),
            ("restart", self.restart),
            ("report", self.report),
        ]
    }

    /// Adds `other`'s phases to these.
    pub fn add(&mut self, other: &Spent) {
        self.connect += other.connect;
        self.send += other.send;
        self.wait += other.wait;
        self.check += other.check;
        self.logs += other.logs;
        self.journal += other.journal;
        self.generate += other.generate;
        self.close += other.close;
        self.restart += other.restart;
        self.report += other.report;
    }
}

/// How long to wait for the liveness reply, and how much longer before calling it silence.
#[derive(Debug, Clone, Copy)]
pub struct Timing {
    pub reply: Duration,
}

/// A connection kept open between cases while the peer answers on it, its receives posted.
pub struct Kept {
    conn: Box<dyn Connection>,
    peer_private_data: Vec<u8>,
    /// Cases that ran on it; 0 for a connection whose only traffic was a liveness NULL.
    pub cases: usize,
    /// Every rdma_xid sent on it: a reply bearing one of them may be late, so only a call
    /// whose rdma_xid is new here can prove liveness by its reply.
    xids: HashSet<u32>,
    /// Every message sent on it was well-formed and every call answered
    /// ([`Observation::earlier_clean`]).
    clean: bool,
}

/// One case as [`run_until`] runs it: its messages, our connection settings (sizes, credits)
/// and waits, whether the reply to its own last call may prove liveness instead of a NULL, and
/// the deadline every wait ends by.
#[derive(Debug, Clone, Copy)]
pub struct Plan<'a> {
    pub case: &'a [Wire],
    pub options: &'a RunOptions,
    pub timing: Timing,
    pub own_probe: bool,
    pub until: Option<Instant>,
}

/// Runs `case` over a new connection from `connector` with `options` (our sizes, credits).
pub fn run(connector: &mut dyn Connector, options: &RunOptions, timing: Timing, case: &[Wire]) -> Observation {
    run_on(connector, &mut None, options, timing, case, false)
}

/// Runs `case` over the connection `kept` holds (taken out of it), or over a new one from
/// `connector` when it holds none. A case that ends with the connection answering puts it back
/// into `kept`, the case's regions deregistered, for the next case to go on over; a case that
/// broke it leaves there the new connection the liveness probe opened, when that answered.
/// `own_probe`: the reply to the case's own last call may prove liveness instead of a NULL.
pub fn run_on(
    connector: &mut dyn Connector,
    kept: &mut Option<Kept>,
    options: &RunOptions,
    timing: Timing,
    case: &[Wire],
    own_probe: bool,
) -> Observation {
    run_until(connector, kept, Plan { case, options, timing, own_probe, until: None })
}

/// As [`run_on`], every wait (the connects, the replies, the probes) ending by `plan.until`
/// at the latest: a case whose peer had not answered when a wait reached it is marked
/// [`Observation::cut`] (a minimisation trial's waits count against its time limit).
pub fn run_until(connector: &mut dyn Connector, kept: &mut Option<Kept>, plan: Plan<'_>) -> Observation {
    let mut obs = run_bounded(connector, kept, &plan);
    obs.cut |= obs.liveness != Liveness::Answered && plan.until.is_some_and(|u| Instant::now() >= u);
    obs
}

/// `wait`, or less so that it ends by `until`.
fn by(until: Option<Instant>, wait: Duration) -> Duration {
    until.map_or(wait, |u| wait.min(u.saturating_duration_since(Instant::now())))
}

fn run_bounded(connector: &mut dyn Connector, kept: &mut Option<Kept>, plan: &Plan<'_>) -> Observation {
    let Plan { case, options, timing, own_probe, until } = *plan;
    // The connect may take as long as a reply may before it is called silence (four times the
    // reply wait, as the new-connection probe waits): a peer slow to accept, such as
    // NFS-Ganesha registering 65 MiB per connection under emulation, is not a crashed one. A
    // refused connect fails at once whatever the deadline.
    let mut ctx = Ctx::new(connector, RunOptions { timeout: by(until, timing.reply * 4), ..options.clone() });
    let mut obs = Observation {
        liveness: Liveness::Answered,
        replies: Vec::new(),
        well_formed: Vec::new(),
        unanswered: Vec::new(),
        oob: Vec::new(),
        connect_failed: None,
        sent: 0,
        null_xid: 0,
        kernel: Vec::new(),
        crash_site: None,
        after_cases: 0,
        earlier_clean: true,
        own_probe: false,
        connections: 0,
        spent: Spent::default(),
        profile: options.profile,
        cut: false,
    };
    let t = Instant::now();
    let mut seen_xids = HashSet::new();
    match kept.take() {
        Some(k) if k.conn.is_connected() => {
            obs.after_cases = k.cases;
            obs.earlier_clean = k.clean;
            seen_xids = k.xids;
            ctx.adopt(k.conn, k.peer_private_data);
        }
        _ => {
            obs.connections += 1;
            if let Err(e) = ctx.connect() {
                obs.connect_failed = Some(format!("{e:?}"));
                obs.liveness = Liveness::Refused;
                obs.spent.connect = t.elapsed();
                return obs;
            }
        }
    }
    obs.spent.connect = t.elapsed();
    let t = Instant::now();
    // The run's spec choices, for every decode here as for the replies (the engine's Ctx).
    let profile = *ctx.profile();
    let peer_receive = rpcrdma_codec::private_data::effective(ctx.peer_private_data(), &profile).params;
    let mut regions: Vec<Vec<(Region, &Wire)>> = Vec::new();
    // Per message, per region: what the bytes as sent let the peer write and read (byte
    // edits can change a segment after the spec laid it out).
    let mut granted: Vec<Vec<Grant>> = Vec::new();
    let mut xids = Vec::new();
    for w in case {
        let mut mine = Vec::new();
        for r in &w.regions {
            let Ok(reg) = ctx.conn().register(r.contents.len() as u32, Access::READ_WRITE) else { break };
            let _ = ctx.conn().write_local(&reg, 0, &r.contents);
            mine.push((reg, w));
        }
        let bound: Vec<(u32, u64)> = mine.iter().map(|(r, _)| (r.handle, r.offset)).collect();
        if bound.len() < w.regions.len() {
            regions.push(mine);
            break;
        }
        let bytes = w.bind(&bound);
        let regs: Vec<Region> = mine.iter().map(|(r, _)| *r).collect();
        granted.push(advertised(&bytes, &regs, &profile));
        let contents: Vec<&[u8]> = w.regions.iter().map(|r| r.contents.as_slice()).collect();
        obs.well_formed.push(well_formed(&bytes, &regs, &contents, peer_receive.receive_size() as usize, &profile));
        xids.push(bytes.get(0..4).map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]])));
        regions.push(mine);
        if ctx.send(&bytes).is_err() {
            break;
        }
        obs.sent += 1;
    }
    // The case's own traffic proves liveness where it can: a reply to its last message, a
    // well-formed call (which a faithful peer answers, RFC 5531 9) whose rdma_xid nothing
    // else on this connection carried, shows the connection up and the peer answering after
    // every message of the case, as a NULL's reply would.
    let own = match (obs.sent.checked_sub(1), obs.sent == case.len()) {
        (Some(last), true) if own_probe && obs.well_formed[last] => {
            xids[last].filter(|x| !seen_xids.contains(x) && xids[..last].iter().all(|y| *y != Some(*x)))
        }
        _ => None,
    };
    seen_xids.extend(xids.iter().flatten());
    obs.spent.send = t.elapsed();
    let t = Instant::now();
    obs.liveness = liveness(&mut ctx, timing, &mut obs, own, until);
    if obs.liveness == Liveness::Answered {
        // A well-formed call's reply may still be on its way behind the NULL's.
        let answered = |obs: &Observation, x: u32| obs.replies.iter().any(|f| f.xid() == Some(x));
        let missing = |obs: &Observation| {
            (0..obs.sent).filter(|&i| obs.well_formed[i] && xids[i].is_some_and(|x| !answered(obs, x))).count()
        };
        let wait = by(until, timing.reply / 4);
        let late = Instant::now() + wait;
        while missing(&obs) > 0 {
            match ctx.recv_until(late) {
                Received::Message(f) => obs.replies.push(f),
                Received::Nothing(_) => break,
            }
        }
        obs.unanswered =
            (0..obs.sent).filter(|&i| obs.well_formed[i] && xids[i].is_some_and(|x| !answered(&obs, x))).collect();
        // A reply still missing when a wait the deadline shortened ended is no proof of a
        // reply never sent: the case decides nothing.
        obs.cut = wait < timing.reply / 4 && !obs.unanswered.is_empty();
    }
    obs.spent.wait = t.elapsed();
    let t = Instant::now();
    // Guard bytes and read regions: nothing outside the writable ranges may change, and no
    // one-sided operation may reach outside the ranges the message gave for it.
    for (m, regs) in regions.iter().enumerate().take(granted.len()) {
        for (i, (reg, w)) in regs.iter().enumerate() {
            let Ok(now) = ctx.conn().read_local(reg) else { continue };
            let spec = &w.regions[i];
            let g = &granted[m][i];
            let writable: Vec<(u32, u32)> = spec.writable.iter().chain(&g.writable).copied().collect();
            let readable: Vec<(u32, u32)> = spec.readable.iter().chain(&g.readable).copied().collect();
            let inside =
                |ranges: &[(u32, u32)], at: usize| ranges.iter().any(|&(lo, hi)| at >= lo as usize && at < hi as usize);
            let changed: Vec<usize> = (0..now.len().min(spec.contents.len()))
                .filter(|&a| now[a] != spec.contents[a] && !inside(&writable, a))
                .collect();
            if let Some(&first) = changed.first() {
                obs.oob.push(OobAccess { message: m, region: i, at: first, bytes: changed.len(), read: false });
                continue;
            }
            // One-sided operations, where the transport records them (not over verbs).
            for a in ctx.conn().accesses(reg).unwrap_or_default() {
                let read = a.op == RemoteOp::Read;
                let allowed = if read { &readable } else { &writable };
                let outside: Vec<usize> =
                    (a.at as usize..a.at as usize + a.length as usize).filter(|&b| !inside(allowed, b)).collect();
                if let Some(&first) = outside.first() {
                    obs.oob.push(OobAccess { message: m, region: i, at: first, bytes: outside.len(), read });
                    break;
                }
            }
        }
    }
    if obs.liveness == Liveness::Answered {
        // The connection goes on into the next case; this case's regions go.
        for (reg, _) in regions.iter().flatten() {
            let _ = ctx.conn().deregister(reg);
        }
        obs.spent.check = t.elapsed();
        if let Some((conn, peer_private_data)) = ctx.take_connection() {
            let clean = obs.earlier_clean
                && obs.sent == case.len()
                && obs.well_formed.iter().all(|w| *w)
                && obs.unanswered.is_empty();
            *kept = Some(Kept { conn, peer_private_data, cases: obs.after_cases + 1, xids: seen_xids, clean });
        }
    } else {
        obs.spent.check = t.elapsed();
        let t = Instant::now();
        obs.connections += 1;
        let answers = new_connection_answers(&mut ctx, timing, until);
        obs.spent.connect += t.elapsed();
        if answers {
            // The probe's new connection carried only a NULL: as good as fresh for the next case.
            if let Some((conn, peer_private_data)) = ctx.take_connection() {
                *kept = Some(Kept { conn, peer_private_data, cases: 0, xids: HashSet::new(), clean: true });
            }
        } else {
            obs.liveness = Liveness::Refused;
        }
    }
    let t = Instant::now();
    drop(ctx);
    obs.spent.close = t.elapsed();
    obs
}

/// Waits for the case's liveness proof, collecting every reply before it: the reply to
/// `own` (the rdma_xid of the case's last message, a well-formed call) for a quarter of the
/// reply wait, and else (or after it) a NULL's.
fn liveness(
    ctx: &mut Ctx<'_>,
    timing: Timing,
    obs: &mut Observation,
    own: Option<u32>,
    until: Option<Instant>,
) -> Liveness {
    let mut probes = Vec::new();
    let mut rounds = vec![timing.reply, timing.reply * 4];
    match own {
        Some(x) => {
            probes.push(x);
            rounds.insert(0, timing.reply / 4);
        }
        None => {
            let null = ctx.null();
            obs.null_xid = null.xid;
            if ctx.send(&null.msg()).is_err() {
                return Liveness::Disconnected;
            }
            probes.push(null.xid);
        }
    }
    // A slow peer is not a silent one: on silence, one more NULL and a longer wait.
    let last = rounds.len() - 1;
    for (round, wait) in rounds.into_iter().enumerate() {
        let deadline = Instant::now() + by(until, wait);
        loop {
            match ctx.recv_until(deadline) {
                Received::Message(f) => {
                    let done = f.v1().is_some_and(|h| probes.contains(&h.xid));
                    obs.replies.push(f);
                    if done {
                        obs.own_probe = own.is_some() && obs.null_xid == 0;
                        return Liveness::Answered;
                    }
                }
                Received::Nothing(NoMessage::Silence) => break,
                Received::Nothing(_) => return Liveness::Disconnected,
            }
        }
        if round < last {
            let again = ctx.null();
            if obs.null_xid == 0 {
                obs.null_xid = again.xid;
            }
            probes.push(again.xid);
            if ctx.send(&again.msg()).is_err() {
                return Liveness::Disconnected;
            }
        }
    }
    Liveness::Silent
}

/// Whether a new connection's NULL is answered (the engine's probe of a peer's health).
fn new_connection_answers(ctx: &mut Ctx<'_>, timing: Timing, until: Option<Instant>) -> bool {
    ctx.options.timeout = by(until, timing.reply * 4);
    let wait = by(until, timing.reply * 4);
    crate::engine::health::probe(ctx, wait) == crate::engine::health::Probe::Answered
}

/// Whether `bytes` is a call a faithful responder must answer without dropping the
/// connection: Version One RDMA_MSG or RDMA_NOMSG that decodes, breaks no RFC 8166 rule,
/// fits the peer's receive buffer, whose every segment lies inside a region we registered
/// for it (`contents[i]` is what region `i` holds), and which carries an RPC call with the
/// transport header's XID: inline for RDMA_MSG, in a position-zero read chunk for
/// RDMA_NOMSG (RFC 8166 3.5.3), and whose read chunks at non-zero positions reduce only
/// DDP-eligible arguments ([`reduces_only_eligible`]). A message whose RPC part is no call may
/// be dropped (RFC 5531 9 answers calls only).
pub fn well_formed(
    bytes: &[u8],
    regions: &[Region],
    contents: &[&[u8]],
    peer_receive: usize,
    profile: &Profile,
) -> bool {
    if bytes.len() > peer_receive {
        return false;
    }
    let Ok(m) = Message::decode(bytes, profile) else { return false };
    if m.header.vers != 1 || !Violations::of(&m, Role::Call).is_empty() {
        return false;
    }
    let chunks = match m.header.body {
        Body::Msg(c) if !m.payload.is_empty() => c,
        Body::NoMsg(c) => c,
        _ => return false,
    };
    let inside = |h: u32, off: u64, len: u32| {
        regions
            .iter()
            .any(|r| r.handle == h && off >= r.offset && off.saturating_add(len as u64) <= r.offset + r.length as u64)
    };
    let segments_inside = chunks.reads.segments().all(|s| inside(s.target.handle, s.target.offset, s.target.length))
        && chunks.writes.chunks().flat_map(|c| c.segments()).all(|s| inside(s.handle, s.offset, s.length))
        && chunks.reply.iter().flat_map(|c| c.segments()).all(|s| inside(s.handle, s.offset, s.length));
    if !segments_inside {
        return false;
    }
    let position_zero = || chunks.reads.segments().filter(|s| s.position == 0);
    let call: Vec<u8> = match m.header.body {
        // A position-zero chunk in RDMA_MSG would put data before the inline RPC header.
        Body::Msg(_) if position_zero().count() > 0 => return false,
        Body::Msg(_) => m.payload.to_vec(),
        _ => {
            let mut call = Vec::new();
            for s in position_zero() {
                let t = s.target;
                let Some((r, c)) = regions.iter().zip(contents).find(|(r, _)| r.handle == t.handle) else {
                    return false;
                };
                let from = (t.offset - r.offset) as usize;
                match c.get(from..from + t.length as usize) {
                    Some(b) => call.extend_from_slice(b),
                    None => return false,
                }
            }
            call
        }
    };
    let Ok(RpcMessage { header: RpcHeader::Call(c), body_offset, body }) = RpcMessage::decode(&call) else {
        return false;
    };
    let data_positions = chunks.reads.segments().map(|s| s.position).filter(|p| *p != 0);
    if !reduces_only_eligible(&c, body, body_offset, data_positions) {
        return false;
    }
    // A read chunk placed inside the call's RPC header (RDMA_MSG, a position short of the
    // header's end) makes the reassembled message something else than the inline call.
    let inside_header =
        matches!(m.header.body, Body::Msg(_)) && chunks.reads.segments().any(|s| (s.position as usize) < body_offset);
    c.xid == m.header.xid && !inside_header
}

/// Whether every read chunk at a non-zero position (`positions`) reduces a DDP-eligible
/// argument of call `c` (its arguments `body`, at `body_offset` in the RPC message): RFC 8166
/// 6.1, a Requester MUST NOT reduce any other, and the Responder MUST NOT process such a
/// call but report it as an XDR error (4.5.2: ERR_CHUNK). RFC 8267 4 makes NFS version 3's
/// WRITE data and SYMLINK pathname DDP-eligible; only WRITE's data is located here (after
/// its length word, RFC 8166 3.4.4.1): a chunk anywhere else, or in any other call, makes
/// the message no well-formed one.
fn reduces_only_eligible(
    c: &rpcrdma_codec::rpc::CallHeader<'_>,
    body: &[u8],
    body_offset: usize,
    mut positions: impl Iterator<Item = u32>,
) -> bool {
    use rpcrdma_peers::proto::nfs3::{NFSPROC3_WRITE, NFS_PROGRAM, NFS_V3};
    let word = |at: usize| body.get(at..at + 4).map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]) as usize);
    // WRITE3args: file (nfs_fh3, opaque<64>), offset (8), count, stable, then data's length.
    let data_at = match word(0) {
        Some(fh) if fh <= 64 && (c.prog, c.vers, c.proc_) == (NFS_PROGRAM, NFS_V3, NFSPROC3_WRITE) => {
            let length_word = 4 + fh.next_multiple_of(4) + 8 + 4 + 4;
            word(length_word).map(|_| body_offset + length_word + 4)
        }
        _ => None,
    };
    positions.all(|p| Some(p as usize) == data_at)
}

/// The ranges of one region a message's bytes grant the peer.
#[derive(Debug, Clone, Default)]
struct Grant {
    writable: Vec<(u32, u32)>,
    readable: Vec<(u32, u32)>,
}

/// What the bytes as sent grant in each of `regions`: the segments (decoded as Version One or
/// Two) whose handle is a region's, as ranges of it. Nothing when the bytes do not decode.
fn advertised(bytes: &[u8], regions: &[Region], p: &Profile) -> Vec<Grant> {
    let mut out = vec![Grant::default(); regions.len()];
    let lists = match (Message::decode(bytes, p), rpcrdma_codec::v2::Message::decode(bytes, p)) {
        (Ok(m), _) => m.header.body.chunks().copied(),
        (_, Ok(m)) => m.header.body.chunks().map(|c| c.lists),
        _ => None,
    };
    let Some(lists) = lists else { return out };
    let mut grant = |s: rpcrdma_codec::chunk::Segment, write: bool| {
        for (r, g) in regions.iter().zip(out.iter_mut()) {
            if r.handle == s.handle && s.offset >= r.offset {
                let lo = (s.offset - r.offset).min(r.length as u64) as u32;
                let hi = (s.offset - r.offset).saturating_add(s.length as u64).min(r.length as u64) as u32;
                if write { &mut g.writable } else { &mut g.readable }.push((lo, hi));
            }
        }
    };
    for s in lists.reads.segments() {
        grant(s.target, false);
    }
    for s in lists.writes.chunks().flat_map(|c| c.segments()).chain(lists.reply.iter().flat_map(|c| c.segments())) {
        grant(s, true);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use rpcrdma_codec::chunk::{ReadSegment, Segment};
    use rpcrdma_codec::rpc::CallHeader;
    use rpcrdma_codec::v1::HeaderBuilder;
    use rpcrdma_codec::xdr::Encode;

    const XID: u32 = 0x0001_0002;
    const REGION: Region = Region { handle: 0x77, offset: 0x1000, length: 64 };

    /// An NFSv3 NULL call's RPC header, with `xid`.
    fn null_call(xid: u32) -> Vec<u8> {
        CallHeader::new(xid, 100003, 3, 0).encode_to_vec()
    }

    /// RDMA_NOMSG whose call is in a position-zero read chunk holding `call` at offset 8 of
    /// the region.
    fn nomsg_with(call: &[u8]) -> (Vec<u8>, Vec<u8>) {
        let mut contents = vec![0xc5; 64];
        contents[8..8 + call.len()].copy_from_slice(call);
        let seg =
            [ReadSegment { position: 0, target: Segment::new(REGION.handle, call.len() as u32, REGION.offset + 8) }];
        (HeaderBuilder::nomsg(XID, 32).read_list(&seg).encode_to_vec(), contents)
    }

    #[test]
    fn a_position_zero_chunk_must_hold_a_call_with_the_transport_xid() {
        let (bytes, contents) = nomsg_with(&null_call(XID));
        assert!(well_formed(&bytes, &[REGION], &[&contents], 4096, &Profile::default()));
        // The 6.1 false finding: the chunk held filler, no RPC call; a server may drop it.
        let (bytes, contents) = nomsg_with(&[0xc5; 40]);
        assert!(!well_formed(&bytes, &[REGION], &[&contents], 4096, &Profile::default()));
        let (bytes, contents) = nomsg_with(&null_call(XID + 1));
        assert!(!well_formed(&bytes, &[REGION], &[&contents], 4096, &Profile::default()));
    }

    #[test]
    fn rdma_msg_needs_an_inline_call_and_no_position_zero_chunk() {
        let header = HeaderBuilder::msg(XID, 32).encode_to_vec();
        assert!(well_formed(&[header.clone(), null_call(XID)].concat(), &[], &[], 4096, &Profile::default()));
        assert!(!well_formed(&[header, vec![0xc5; 40]].concat(), &[], &[], 4096, &Profile::default()));
        // The 30-minute session's false no-reply: a chunk at position 4, inside the RPC header.
        let seg = [ReadSegment { position: 4, target: Segment::new(REGION.handle, 4, REGION.offset) }];
        let header = HeaderBuilder::msg(XID, 32).read_list(&seg).encode_to_vec();
        assert!(!well_formed(&[header, null_call(XID)].concat(), &[REGION], &[&[0x11; 64]], 4096, &Profile::default()));
        // The 7.3 WARN case: a position-zero chunk in RDMA_MSG, before an inline call.
        let seg = [ReadSegment { position: 0, target: Segment::new(REGION.handle, 4, REGION.offset) }];
        let header = HeaderBuilder::msg(XID, 32).read_list(&seg).encode_to_vec();
        assert!(!well_formed(&[header, null_call(XID)].concat(), &[REGION], &[&[0x11; 64]], 4096, &Profile::default()));
    }

    /// RFC 8166 6.1 with RFC 8267 4: a read chunk at a non-zero position is well-formed only
    /// where it reduces an NFSv3 WRITE's data; reducing a NULL call's "argument" (the
    /// fuzzer's data chunk at the call's end), or a WRITE's other arguments, is not, and the
    /// reference responder answers ERR_CHUNK.
    #[test]
    fn only_a_ddp_eligible_argument_may_be_reduced() {
        let data = |position: u32| [ReadSegment { position, target: Segment::new(REGION.handle, 16, REGION.offset) }];
        let msg = |call: &[u8], position: u32| {
            let header = HeaderBuilder::msg(XID, 32).read_list(&data(position)).encode_to_vec();
            well_formed(&[header, call.to_vec()].concat(), &[REGION], &[&[0x11; 64]], 4096, &Profile::default())
        };
        let null = null_call(XID);
        assert!(!msg(&null, null.len() as u32), "a NULL call has no DDP-eligible argument");
        // WRITE3args: an 8-byte file handle, offset, count 16, UNSTABLE, the data's length 16.
        let mut write = CallHeader::new(XID, 100003, 3, 7).encode_to_vec();
        let header_len = write.len();
        for w in [8u32, 0xaaaa_aaaa, 0xbbbb_bbbb, 0, 0, 16, 0, 16] {
            write.extend_from_slice(&w.to_be_bytes());
        }
        assert!(msg(&write, write.len() as u32), "WRITE's data, after its length word");
        assert!(!msg(&write, write.len() as u32 - 4), "WRITE's length word reduced");
        assert!(!msg(&write, header_len as u32), "WRITE's file handle reduced");
        let mut not_write = write.clone();
        not_write[20..24].copy_from_slice(&6u32.to_be_bytes());
        assert!(!msg(&not_write, write.len() as u32), "the same arguments under READ");
    }

    /// Runs `cases` one after another over one kept connection to the reference responder
    /// with `faults`, each probed by its own last call where it can be (as a run does).
    fn in_a_row(faults: &str, cases: &[Wire]) -> Vec<Observation> {
        use crate::fuzz::Target;
        let faults = if faults.is_empty() {
            rpcrdma_peers::responder::Faults::default()
        } else {
            rpcrdma_peers::responder::Faults::only(faults)
        };
        let mut peer = crate::fuzz::Embedded::new(faults);
        let options = RunOptions { timeout: Duration::from_secs(2), ..RunOptions::default() };
        let timing = Timing { reply: Duration::from_millis(400) };
        let mut kept = None;
        cases
            .iter()
            .map(|c| run_on(peer.connector(), &mut kept, &options, timing, std::slice::from_ref(c), true))
            .collect()
    }

    /// A NULL call, RDMA_MSG: well-formed, answered.
    fn null(xid: u32) -> Wire {
        Wire::new([HeaderBuilder::msg(xid, 32).encode_to_vec(), null_call(xid)].concat(), Vec::new())
    }

    /// (after_cases, earlier_clean) of each observation.
    fn history(obs: &[Observation]) -> Vec<(usize, bool)> {
        obs.iter().map(|o| (o.after_cases, o.earlier_clean)).collect()
    }

    #[test]
    fn a_kept_connection_whose_cases_were_well_formed_and_answered_is_clean() {
        let obs = in_a_row("", &[null(XID), null(XID + 1), null(XID + 2)]);
        assert!(obs.iter().all(|o| o.liveness == Liveness::Answered && o.unanswered.is_empty()));
        assert_eq!(history(&obs), [(0, true), (1, true), (2, true)]);
    }

    #[test]
    fn a_malformed_message_leaves_its_kept_connection_unclean_for_good() {
        // RDMA_MSG whose payload is no RPC call: malformed; the peer may drop it, the
        // connection lives on.
        let filler = Wire::new([HeaderBuilder::msg(XID, 32).encode_to_vec(), vec![0xc5; 40]].concat(), Vec::new());
        let obs = in_a_row("", &[filler, null(XID + 1), null(XID + 2)]);
        assert_eq!((obs[0].well_formed.as_slice(), obs[0].liveness), (&[false][..], Liveness::Answered));
        assert_eq!(history(&obs), [(0, true), (1, false), (2, false)]);
    }

    #[test]
    fn an_unanswered_call_leaves_its_kept_connection_unclean() {
        // GETATTR without its file handle: well-formed garbage arguments, which this responder
        // drops unanswered; the liveness NULL after it is answered.
        let call = CallHeader::new(XID, 100003, 3, 1).encode_to_vec();
        let getattr = Wire::new([HeaderBuilder::msg(XID, 32).encode_to_vec(), call].concat(), Vec::new());
        let obs = in_a_row("drop-garbage-args", &[getattr, null(XID + 1)]);
        assert_eq!(obs[0].well_formed, [true]);
        assert_eq!((obs[0].unanswered.as_slice(), obs[0].liveness), (&[0][..], Liveness::Answered));
        assert_eq!(history(&obs), [(0, true), (1, false)]);
    }

    /// A well-formed call the peer never answers is a no-reply only when the wait for its
    /// late reply ran whole: a minimisation trial near its deadline, whose late-reply wait the
    /// deadline shortened, is cut (it decides nothing; a slow peer is not a silent one), and
    /// never taken as reproducing the finding.
    #[test]
    fn a_late_reply_wait_the_deadline_shortened_is_cut() {
        use crate::fuzz::Target;
        let mut peer = crate::fuzz::Embedded::new(rpcrdma_peers::responder::Faults::only("drop-garbage-args"));
        let options = RunOptions { timeout: Duration::from_secs(2), ..RunOptions::default() };
        // The late-reply wait is a quarter of the reply wait: 500 ms.
        let timing = Timing { reply: Duration::from_secs(2) };
        // GETATTR without its file handle: garbage arguments, which this responder drops
        // unanswered; the liveness NULL after it is answered.
        let call = CallHeader::new(XID, 100003, 3, 1).encode_to_vec();
        let case = [Wire::new([HeaderBuilder::msg(XID, 32).encode_to_vec(), call].concat(), Vec::new())];
        let mut trial = |until| {
            let o = run_until(
                peer.connector(),
                &mut None,
                Plan { case: &case, options: &options, timing, own_probe: false, until },
            );
            (o.liveness, o.unanswered.clone(), o.cut, super::super::classify::finding(&o).map(|k| k.class))
        };
        let no_reply = Some(super::super::Class::NoReply);
        // No deadline, or one well after the waits: the wait ran whole, the call went unanswered.
        assert_eq!(trial(None), (Liveness::Answered, vec![0], false, no_reply));
        assert_eq!(
            trial(Some(Instant::now() + Duration::from_secs(30))),
            (Liveness::Answered, vec![0], false, no_reply)
        );
        // A deadline 250 ms off: the NULL answered at once, the late-reply wait cut to what is
        // left of the 250 ms.
        let (_, _, cut, _) = trial(Some(Instant::now() + Duration::from_millis(250)));
        assert!(cut, "a late-reply wait the deadline shortened decides nothing");
    }
}
