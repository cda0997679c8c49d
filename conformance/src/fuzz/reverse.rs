//! `fuzz --reverse`: hostile reverse-direction replies toward a server (RFC 8167 5.2). Each
//! case sets up an NFSv4.1 session whose back channel rides a fresh connection, waits for the
//! server's reverse-direction call (its CB_NULL probe, or the CB_RECALL a conflicting OPEN
//! provokes: [`crate::catalogue::reverse`]), answers it with a mutated reply, then checks that
//! the server still answers a NULL on that connection, or else on a new one, and finally sends
//! the faithful reply. A seed and a case number name exactly what was sent: the case's
//! mutation and its parameter come from a generator seeded by both ([`draw`]), and the reply
//! it bends is the faithful one to the call the server made ([`apply`]). The peer's logs and
//! restarts go through the same [`Target`] as the forward fuzzer's.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::classify::{Class, Kind};
use super::rng::Rng;
use super::{backtrace, kernel_log, Target};
use crate::catalogue::reverse::{held_call, reverse_reply, REVERSE_CREDITS};
use crate::engine::health::{self, Probe};
use crate::engine::{Ctx, Outcome, Received, RunOptions};

/// A finding file's `format`.
pub const FORMAT: &str = "rpcrdma-harness/reverse-reply-finding/v1";

/// The mutations of a reverse-direction reply. The faithful reply is RDMA_MSG, rdma_xid =
/// the call's XID, rdma_vers 1, our reverse grant, three empty chunk lists (seven words), then
/// the RPC reply: xid, msg_type REPLY, MSG_ACCEPTED, an AUTH_NONE verifier, SUCCESS, results.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ReplyMutation {
    /// Both XIDs one no call of the server carried.
    UnknownXid,
    /// The RPC XID differs from rdma_xid, which is the call's (RFC 8167 5.2).
    RpcXidDiffers,
    /// rdma_xid differs from the RPC XID, which is the call's.
    RdmaXidDiffers,
    /// msg_type CALL: the reply posing as a reverse... forward call (RFC 8167 4.1).
    MsgTypeCall,
    /// msg_type neither CALL nor REPLY.
    MsgTypeGarbage,
    /// reply_stat neither MSG_ACCEPTED nor MSG_DENIED.
    ReplyStatGarbage,
    /// MSG_DENIED with a reject_stat out of range.
    DeniedGarbage,
    /// accept_stat beyond SYSTEM_ERR.
    AcceptStatGarbage,
    /// The verifier's length beyond MAX_AUTH_BYTES (RFC 5531 8.2: 400).
    VerifierLengthHuge,
    /// The whole message cut short.
    Truncate,
    /// The results (CB_COMPOUND4res, RFC 8881 20) cut short.
    ResultsTruncated,
    /// CB_COMPOUND4res's tag length huge.
    CbTagLengthHuge,
    /// CB_COMPOUND4res's resarray count huge.
    CbResultCountHuge,
    /// A read list, though a reply carries none (RFC 8167 5.2: chunks where none were offered).
    ReadListUnoffered,
    /// A write list the call never offered.
    WriteListUnoffered,
    /// A reply chunk the call never offered.
    ReplyChunkUnoffered,
    /// A write list whose chunk claims far more segments than follow.
    SegmentCountHuge,
    /// rdma_vers other than the connection's 1.
    RdmaVers,
    /// rdma_proc other than RDMA_MSG.
    RdmaProc,
    /// rdma_credit zero or huge.
    CreditExtreme,
    /// The faithful reply twice.
    Duplicate,
    /// Bytes after the faithful reply.
    TrailingBytes,
    /// One byte of the faithful reply flipped.
    ByteFlip,
}

impl ReplyMutation {
    pub const ALL: [ReplyMutation; 23] = [
        ReplyMutation::UnknownXid,
        ReplyMutation::RpcXidDiffers,
        ReplyMutation::RdmaXidDiffers,
        ReplyMutation::MsgTypeCall,
        ReplyMutation::MsgTypeGarbage,
        ReplyMutation::ReplyStatGarbage,
        ReplyMutation::DeniedGarbage,
        ReplyMutation::AcceptStatGarbage,
        ReplyMutation::VerifierLengthHuge,
        ReplyMutation::Truncate,
        ReplyMutation::ResultsTruncated,
        ReplyMutation::CbTagLengthHuge,
        ReplyMutation::CbResultCountHuge,
        ReplyMutation::ReadListUnoffered,
        ReplyMutation::WriteListUnoffered,
        ReplyMutation::ReplyChunkUnoffered,
        ReplyMutation::SegmentCountHuge,
        ReplyMutation::RdmaVers,
        ReplyMutation::RdmaProc,
        ReplyMutation::CreditExtreme,
        ReplyMutation::Duplicate,
        ReplyMutation::TrailingBytes,
        ReplyMutation::ByteFlip,
    ];

    pub fn name(self) -> &'static str {
        match self {
            ReplyMutation::UnknownXid => "reply-unknown-xid",
            ReplyMutation::RpcXidDiffers => "reply-rpc-xid-differs",
            ReplyMutation::RdmaXidDiffers => "reply-rdma-xid-differs",
            ReplyMutation::MsgTypeCall => "reply-msg-type-call",
            ReplyMutation::MsgTypeGarbage => "reply-msg-type-garbage",
            ReplyMutation::ReplyStatGarbage => "reply-stat-garbage",
            ReplyMutation::DeniedGarbage => "reply-denied-garbage",
            ReplyMutation::AcceptStatGarbage => "reply-accept-stat-garbage",
            ReplyMutation::VerifierLengthHuge => "reply-verifier-length",
            ReplyMutation::Truncate => "reply-truncate",
            ReplyMutation::ResultsTruncated => "reply-results-truncated",
            ReplyMutation::CbTagLengthHuge => "reply-cb-tag-length",
            ReplyMutation::CbResultCountHuge => "reply-cb-result-count",
            ReplyMutation::ReadListUnoffered => "reply-read-list",
            ReplyMutation::WriteListUnoffered => "reply-write-list",
            ReplyMutation::ReplyChunkUnoffered => "reply-reply-chunk",
            ReplyMutation::SegmentCountHuge => "reply-segment-count",
            ReplyMutation::RdmaVers => "reply-rdma-vers",
            ReplyMutation::RdmaProc => "reply-rdma-proc",
            ReplyMutation::CreditExtreme => "reply-credit",
            ReplyMutation::Duplicate => "reply-duplicate",
            ReplyMutation::TrailingBytes => "reply-trailing-bytes",
            ReplyMutation::ByteFlip => "reply-byte-flip",
        }
    }

    pub fn from_name(s: &str) -> Option<ReplyMutation> {
        ReplyMutation::ALL.into_iter().find(|m| m.name() == s)
    }
}

/// What one case sends: a mutation and the number it draws its choices from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mutated {
    pub mutation: ReplyMutation,
    pub param: u32,
}

/// The case `case` of `seed`'s sequence: a function of the two alone, so that a finding's
/// seed and case number name what was sent, and any case can be replayed by itself.
pub fn draw(seed: u64, case: u64) -> Mutated {
    let mut rng = Rng::new(seed ^ case.wrapping_mul(0x9e37_79b9_7f4a_7c15));
    let mutation = rng.pick(&ReplyMutation::ALL);
    let param = if rng.chance(1, 2) { rng.interesting_u32() } else { rng.u32() };
    Mutated { mutation, param }
}

/// Offsets of the faithful reply's words.
const RDMA_VERS: usize = 4;
const RDMA_CREDIT: usize = 8;
const RDMA_PROC: usize = 12;
const READ_LIST: usize = 16;
const WRITE_LIST: usize = 20;
const REPLY_CHUNK: usize = 24;
const RPC_XID: usize = 28;
const MSG_TYPE: usize = 32;
const REPLY_STAT: usize = 36;
const VERF_LENGTH: usize = 44;
const ACCEPT_STAT: usize = 48;
const RESULTS: usize = 52;

fn put(m: &mut [u8], at: usize, w: u32) {
    if let Some(b) = m.get_mut(at..at + 4) {
        b.copy_from_slice(&w.to_be_bytes());
    }
}

fn words(w: &[u32]) -> Vec<u8> {
    w.iter().flat_map(|x| x.to_be_bytes()).collect()
}

/// A value at least `floor` drawn from `param`.
fn at_least(param: u32, floor: u32) -> u32 {
    param.max(floor)
}

/// The messages a case sends in place of `good` (the faithful reply to the call `xid`).
pub fn apply(m: Mutated, good: &[u8], xid: u32) -> Vec<Vec<u8>> {
    let p = m.param;
    let mut out = good.to_vec();
    // An XID no call carried: the call's with its top bit flipped, and more of `p`'s bits.
    let other = xid ^ 0x8000_0000 ^ (p & 0x7fff_0000);
    let segment = |handle: u32, n: u32| -> Vec<u32> { vec![handle, 4096 + (n & 0xfff), 0, 0x1000 * n] };
    match m.mutation {
        ReplyMutation::UnknownXid => {
            put(&mut out, 0, other);
            put(&mut out, RPC_XID, other);
        }
        ReplyMutation::RpcXidDiffers => put(&mut out, RPC_XID, other),
        ReplyMutation::RdmaXidDiffers => put(&mut out, 0, other),
        ReplyMutation::MsgTypeCall => put(&mut out, MSG_TYPE, 0),
        ReplyMutation::MsgTypeGarbage => put(&mut out, MSG_TYPE, at_least(p, 2)),
        ReplyMutation::ReplyStatGarbage => put(&mut out, REPLY_STAT, at_least(p, 2)),
        ReplyMutation::DeniedGarbage => {
            out.truncate(REPLY_STAT);
            out.extend(words(&[1, at_least(p, 2), p]));
        }
        ReplyMutation::AcceptStatGarbage => put(&mut out, ACCEPT_STAT, at_least(p, 6)),
        ReplyMutation::VerifierLengthHuge => put(&mut out, VERF_LENGTH, at_least(p, 401)),
        ReplyMutation::Truncate => out.truncate(p as usize % good.len().max(1)),
        ReplyMutation::ResultsTruncated => {
            let results = good.len().saturating_sub(RESULTS);
            out.truncate(RESULTS + p as usize % results.max(1));
        }
        // CB_COMPOUND4res: status, tag<>, resarray<> (RFC 8881 20).
        ReplyMutation::CbTagLengthHuge => {
            out.truncate(RESULTS + 4);
            out.extend(words(&[at_least(p, 0x1000)]));
        }
        ReplyMutation::CbResultCountHuge => {
            out.truncate(RESULTS + 4);
            out.extend(words(&[0, at_least(p, 0x1000)]));
        }
        ReplyMutation::ReadListUnoffered => {
            let mut w = vec![1, 0];
            w.extend(segment(p, 1));
            w.push(0);
            out.splice(READ_LIST..READ_LIST + 4, words(&w));
        }
        ReplyMutation::WriteListUnoffered => {
            let n = 1 + p % 3;
            let mut w = vec![1, n];
            (0..n).for_each(|i| w.extend(segment(p, i)));
            w.push(0);
            out.splice(WRITE_LIST..WRITE_LIST + 4, words(&w));
        }
        ReplyMutation::ReplyChunkUnoffered => {
            let n = 1 + p % 3;
            let mut w = vec![1, n];
            (0..n).for_each(|i| w.extend(segment(p, i)));
            out.splice(REPLY_CHUNK..REPLY_CHUNK + 4, words(&w));
        }
        ReplyMutation::SegmentCountHuge => {
            let mut w = vec![1, at_least(p, 0x1000)];
            w.extend(segment(p, 0));
            w.push(0);
            out.splice(WRITE_LIST..WRITE_LIST + 4, words(&w));
        }
        ReplyMutation::RdmaVers => put(&mut out, RDMA_VERS, if p == 1 { 0 } else { p }),
        // RDMA_NOMSG, RDMA_MSGP, RDMA_DONE, RDMA_ERROR with the reply after them, or garbage.
        ReplyMutation::RdmaProc => put(&mut out, RDMA_PROC, if p % 5 < 4 { 1 + p % 5 } else { at_least(p, 5) }),
        ReplyMutation::CreditExtreme => put(&mut out, RDMA_CREDIT, if p % 2 == 0 { 0 } else { at_least(p, 0x10000) }),
        ReplyMutation::Duplicate => return vec![out.clone(), out],
        ReplyMutation::TrailingBytes => {
            let mut rng = Rng::new(p as u64);
            out.extend((0..1 + p % 64).map(|_| rng.u32() as u8));
        }
        ReplyMutation::ByteFlip => {
            let at = p as usize % good.len().max(1);
            if let Some(b) = out.get_mut(at) {
                *b ^= 1 << (p >> 24 & 7);
            }
        }
    }
    vec![out]
}

/// What the server did after a case's mutated reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum After {
    /// The NULL on the case's connection was answered.
    Answered,
    /// The case's connection went down; a new connection's NULL was answered. A server may
    /// drop a connection over a message it cannot trust; not a finding.
    Disconnected,
    /// The case's connection stayed up without answering; a new connection's was answered.
    Silent,
    /// No new connection was answered: crashed or wedged.
    Refused,
    /// The server made no reverse-direction call this time (set-up only; nothing was sent).
    NoCall,
}

impl After {
    pub const ALL: [After; 5] = [After::Answered, After::Disconnected, After::Silent, After::Refused, After::NoCall];

    pub fn name(self) -> &'static str {
        match self {
            After::Answered => "answered",
            After::Disconnected => "disconnected",
            After::Silent => "silent",
            After::Refused => "refused",
            After::NoCall => "no-call",
        }
    }
}

/// One case as it went.
#[derive(Debug, Clone)]
pub struct CaseRun {
    pub mutated: Mutated,
    pub after: After,
    /// The call answered (CB_NULL 0, CB_COMPOUND 1) and its XID.
    pub call: Option<(u32, u32)>,
    /// Why the set-up made no call (for [`After::NoCall`]), and whether that was because the
    /// server takes no back channel or serves no NFSv4.1 at all (unsupported).
    pub no_call: Option<(String, bool)>,
    /// Messages the mutated reply drew from the server (an RDMA_ERROR, say), summarised.
    pub answered_with: Vec<String>,
    /// Kernel bug reports during the case.
    pub kernel: Vec<String>,
    pub crash_site: Option<backtrace::Site>,
}

impl CaseRun {
    /// The finding the case shows, if any (the forward fuzzer's classes).
    pub fn finding(&self) -> Option<Kind> {
        let kind = |class, detail: &str| Some(Kind { class, detail: detail.to_string() });
        if let Some((_, signature)) = kernel_log::report_signatures(&self.kernel).into_iter().next() {
            return kind(Class::KernelReport, &signature);
        }
        if let Some(site) = &self.crash_site {
            return kind(Class::Crash, &site.signature);
        }
        match self.after {
            After::Refused => kind(Class::Crash, ""),
            After::Silent => kind(Class::Hang, ""),
            _ => None,
        }
    }

    /// A one-line account.
    pub fn describe(&self) -> String {
        let mut parts = vec![format!("{} (param {:#010x})", self.mutated.mutation.name(), self.mutated.param)];
        match self.call {
            Some((proc_, xid)) => {
                let name = if proc_ == 0 { "CB_NULL" } else { "CB_COMPOUND" };
                parts.push(format!("answering the server's {name} {xid:#010x}"));
            }
            None => parts.push("no call to answer".into()),
        }
        parts.push(format!("then {}", self.after.name()));
        if let Some((why, _)) = &self.no_call {
            parts.push(why.clone());
        }
        if !self.answered_with.is_empty() {
            parts.push(format!("the server answered our reply with {}", self.answered_with.join(", ")));
        }
        if !self.kernel.is_empty() {
            parts.push(format!("the kernel logged:\n{}\n", self.kernel.join("\n")));
        }
        if let Some(site) = &self.crash_site {
            parts.push(format!(
                "the peer logged a backtrace (crash site {}):\n{}\n",
                site.signature,
                site.trace.join("\n")
            ));
        }
        parts.join("; ")
    }
}

/// Runs case `mutated` against `target`: set-up, the call awaited (provoked), the mutated
/// reply, liveness, the faithful reply.
pub fn run_case(target: &mut dyn Target, options: &RunOptions, reply_wait: Duration, mutated: Mutated) -> CaseRun {
    let mut run = CaseRun {
        mutated,
        after: After::NoCall,
        call: None,
        no_call: None,
        answered_with: Vec::new(),
        kernel: Vec::new(),
        crash_site: None,
    };
    {
        let mut ctx = Ctx::new(target.connector(), options.clone());
        match held_call(&mut ctx) {
            Err(v) => {
                run.no_call = Some((format!("{}: {}", v.expected, v.actual), v.outcome == Outcome::Unsupported));
            }
            Ok(call) => {
                run.call = Some((call.proc_, call.xid));
                let good = reverse_reply(call.xid, REVERSE_CREDITS, &call.results);
                for m in apply(mutated, &good, call.xid) {
                    if ctx.send(&m).is_err() {
                        break;
                    }
                }
                // The NULL's reply, and whatever the mutated reply drew before it.
                let null = ctx.null();
                let mut after = if ctx.send(&null.msg()).is_err() { After::Disconnected } else { After::Silent };
                let deadline = Instant::now() + reply_wait * 4;
                while after == After::Silent {
                    match ctx.recv_until(deadline) {
                        Received::Message(f) if f.xid() == Some(null.xid) && !f.is_rpc_call() => {
                            after = After::Answered
                        }
                        Received::Message(f) if f.xid().is_some_and(|x| x != null.xid) && !f.is_rpc_call() => {
                            run.answered_with.push(f.to_string())
                        }
                        Received::Message(_) => {}
                        Received::Nothing(crate::engine::NoMessage::Silence) => break,
                        Received::Nothing(_) => after = After::Disconnected,
                    }
                }
                if after == After::Answered {
                    let _ = ctx.send(&good);
                }
                run.after = after;
            }
        }
        drop(ctx.finish());
    }
    // Not answered on its own connection (or no set-up at all): does a new one answer?
    if run.after != After::Answered {
        let mut ctx = Ctx::new(target.connector(), options.clone());
        if health::probe(&mut ctx, reply_wait * 4) != Probe::Answered {
            // A set-up that drew no call from a server now down is a crash all the same.
            run.after = After::Refused;
        }
        drop(ctx.finish());
    }
    // A case is a whole session here: the logs get their moment after each, as they always had.
    target.settle_logs();
    run.kernel = kernel_log::reports(&target.kernel_log());
    run.crash_site = backtrace::crash_site(&target.peer_log());
    run
}

/// Set-ups in a row, from the first, that draw no reverse-direction call before a run ends
/// unsupported.
pub const NO_CALL_SET_UPS: u64 = 3;

/// Settings of a reverse-reply fuzz run.
#[derive(Debug, Clone)]
pub struct Config {
    pub seed: u64,
    pub duration: Duration,
    pub max_cases: Option<u64>,
    pub options: RunOptions,
    /// How long to wait for the liveness NULL's reply (four times that before silence).
    pub reply_wait: Duration,
    pub tool_version: String,
    pub stop_after_findings: Option<usize>,
}

/// A finding and what reproduces it: the seed and case (so the mutation and its parameter).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub tool_version: String,
    pub seed: u64,
    pub case: u64,
    pub mutated: Mutated,
    pub peer: String,
    pub kind: Kind,
    pub observed: String,
    /// Whether the case, run again alone on a restarted peer, showed it again.
    pub confirmed: bool,
}

impl Finding {
    pub fn to_json(&self) -> Value {
        json!({
            "format": FORMAT,
            "tool_version": self.tool_version,
            "seed": self.seed,
            "case": self.case,
            "mutation": self.mutated.mutation.name(),
            "param": self.mutated.param,
            "peer": self.peer,
            "class": self.kind.class.name(),
            "detail": self.kind.detail,
            "observed": self.observed,
            "confirmed": self.confirmed,
            "how_to_replay": "set up an NFSv4.1 session with its back channel on a fresh connection, wait for (or provoke) the server's reverse-direction call, answer it with this mutation of the faithful reply, probe with a NULL, then send the faithful reply",
        })
    }

    pub fn from_json(v: &Value) -> Result<Finding, String> {
        if v.get("format").and_then(Value::as_str) != Some(FORMAT) {
            return Err(format!("\"format\" is not {FORMAT}"));
        }
        let str_of =
            |k: &str| v.get(k).and_then(Value::as_str).ok_or_else(|| format!("\"{k}\": missing or not a string"));
        let u64_of =
            |k: &str| v.get(k).and_then(Value::as_u64).ok_or_else(|| format!("\"{k}\": missing or not a number"));
        let seed = u64_of("seed")?;
        let case = u64_of("case")?;
        let name = str_of("mutation")?;
        let mutation = ReplyMutation::from_name(name).ok_or_else(|| format!("\"mutation\": no mutation {name}"))?;
        let param = u32::try_from(u64_of("param")?).map_err(|_| "\"param\": beyond 32 bits".to_string())?;
        let class_name = str_of("class")?;
        let class = Class::from_name(class_name).ok_or_else(|| format!("\"class\": no finding class {class_name}"))?;
        let mutated = Mutated { mutation, param };
        if draw(seed, case) != mutated {
            return Err(format!(
                "seed {seed} case {case} draws {} (param {:#x}), not the file's {name} (param {param:#x})",
                draw(seed, case).mutation.name(),
                draw(seed, case).param
            ));
        }
        Ok(Finding {
            tool_version: str_of("tool_version")?.to_string(),
            seed,
            case,
            mutated,
            peer: str_of("peer")?.to_string(),
            kind: Kind { class, detail: str_of("detail").unwrap_or_default().to_string() },
            observed: str_of("observed").unwrap_or_default().to_string(),
            confirmed: v.get("confirmed").and_then(Value::as_bool).unwrap_or(false),
        })
    }
}

/// Why a run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ended {
    Time,
    Cases,
    Findings,
    Interrupted,
    /// The peer went down and this target cannot bring it back.
    PeerDown,
    /// The peer could not be reached.
    Unreachable,
    /// The first set-up drew no reverse-direction call: nothing to fuzz (the reason).
    Unsupported(String),
}

impl Ended {
    pub fn name(&self) -> String {
        match self {
            Ended::Time => "time limit".into(),
            Ended::Cases => "case limit".into(),
            Ended::Findings => "finding limit".into(),
            Ended::Interrupted => "interrupted".into(),
            Ended::PeerDown => "the peer went down and cannot be restarted".into(),
            Ended::Unreachable => "the peer is unreachable".into(),
            Ended::Unsupported(why) => format!("unsupported: the server sends no reverse-direction calls ({why})"),
        }
    }
}

/// The result of a run.
#[derive(Debug, Clone)]
pub struct Report {
    pub seed: u64,
    pub peer: String,
    pub cases: u64,
    pub elapsed: Duration,
    /// Cases per outcome ([`After`]).
    pub outcomes: BTreeMap<&'static str, u64>,
    /// Cases per mutation.
    pub mutations: BTreeMap<&'static str, u64>,
    /// The cases whose mutated reply was not followed by an answer on its connection: per
    /// mutation, per outcome ([`After`]), so a disconnect or a hang is laid at its mutation.
    pub unanswered: BTreeMap<&'static str, BTreeMap<&'static str, u64>>,
    pub findings: Vec<Finding>,
    pub ended: Ended,
    /// Why the peer is reported down when the run ended so ([`Ended::PeerDown`]): the restart
    /// command's status; None when this target cannot restart it (it refused connections).
    pub down: Option<String>,
}

impl Report {
    /// Ends the run on a peer that could not be brought back (`why`): down, or interrupted
    /// when the interrupt came first (a restart command the harness stopped is no proof the
    /// peer is down).
    fn end_down(&mut self, why: Option<String>, interrupt: &AtomicBool) {
        if interrupt.load(Ordering::SeqCst) {
            self.ended = Ended::Interrupted;
        } else {
            self.down = why;
            self.ended = Ended::PeerDown;
        }
    }

    /// Whether nothing was fuzzed: no case answered a call.
    pub fn judged_nothing(&self) -> bool {
        self.cases == self.outcomes.get(After::NoCall.name()).copied().unwrap_or(0)
    }

    pub fn text(&self) -> String {
        let mut s = format!(
            "fuzzed reverse-direction replies toward {} for {:.1} s (seed {}, ended by {}): {} cases\n",
            self.peer,
            self.elapsed.as_secs_f64(),
            self.seed,
            self.ended.name(),
            self.cases
        );
        if let Some(why) = &self.down {
            s += &format!("the peer is down: {why}\n");
        }
        let o: Vec<String> = self.outcomes.iter().map(|(k, v)| format!("{k} {v}")).collect();
        s += &format!("after each mutated reply: {}\n", o.join(", "));
        let m: Vec<String> = self.mutations.iter().filter(|(_, v)| **v > 0).map(|(k, v)| format!("{k} {v}")).collect();
        s += &format!("mutations sent: {}\n", if m.is_empty() { "none".into() } else { m.join(", ") });
        for (name, by) in &self.unanswered {
            let o: Vec<String> = by.iter().map(|(k, v)| format!("{k} {v}")).collect();
            s += &format!("not answered after {name}: {}\n", o.join(", "));
        }
        if self.findings.is_empty() {
            s += "no findings\n";
        }
        for (i, f) in self.findings.iter().enumerate() {
            s += &format!(
                "finding {}: {} at case {}{}\n    {}\n",
                i + 1,
                f.kind,
                f.case,
                if f.confirmed { "" } else { " (not confirmed)" },
                f.observed
            );
        }
        s
    }

    pub fn to_json(&self) -> Value {
        json!({
            "schema": "rpcrdma-harness/reverse-fuzz-report/v1",
            "peer": self.peer,
            "seed": self.seed,
            "ended": self.ended.name(),
            "unsupported": matches!(self.ended, Ended::Unsupported(_)),
            "peer_down": self.down,
            "seconds": self.elapsed.as_secs_f64(),
            "cases": self.cases,
            "after": self.outcomes,
            "mutations": self.mutations,
            "unanswered": self.unanswered,
            "findings": self.findings.iter().map(Finding::to_json).collect::<Vec<_>>(),
        })
    }
}

/// Fuzzes `target`'s reverse direction until the time or case limit, an interrupt, or the
/// peer going down for good; `on_finding` sees each new finding at once.
pub fn run(
    target: &mut dyn Target,
    config: &Config,
    interrupt: &AtomicBool,
    mut on_finding: impl FnMut(&Finding),
) -> Report {
    let started = Instant::now();
    let mut report = Report {
        seed: config.seed,
        peer: target.describe(),
        cases: 0,
        elapsed: Duration::ZERO,
        outcomes: After::ALL.iter().map(|a| (a.name(), 0)).collect(),
        mutations: ReplyMutation::ALL.iter().map(|m| (m.name(), 0)).collect(),
        unanswered: BTreeMap::new(),
        findings: Vec::new(),
        ended: Ended::Time,
        down: None,
    };
    let mut seen = std::collections::HashSet::new();
    loop {
        if interrupt.load(Ordering::SeqCst) {
            report.ended = Ended::Interrupted;
            break;
        }
        if started.elapsed() >= config.duration {
            report.ended = Ended::Time;
            break;
        }
        if config.max_cases.is_some_and(|n| report.cases >= n) {
            report.ended = Ended::Cases;
            break;
        }
        if config.stop_after_findings.is_some_and(|n| report.findings.len() >= n) {
            report.ended = Ended::Findings;
            break;
        }
        let case = report.cases + 1;
        let mutated = draw(config.seed, case);
        let run = run_case(target, &config.options, config.reply_wait, mutated);
        report.cases += 1;
        *report.outcomes.entry(run.after.name()).or_default() += 1;
        if run.call.is_some() {
            *report.mutations.entry(mutated.mutation.name()).or_default() += 1;
            if run.after != After::Answered {
                let by = report.unanswered.entry(mutated.mutation.name()).or_default();
                *by.entry(run.after.name()).or_default() += 1;
            }
        }
        // The first set-ups decide whether there is anything to fuzz: a server that takes no
        // back channel (or serves no NFSv4.1) at once, one that makes no call after
        // NO_CALL_SET_UPS set-ups in a row (a delegation not granted once is no verdict).
        if report.cases <= NO_CALL_SET_UPS && run.call.is_none() && report.judged_nothing() {
            let unsupported = run.no_call.as_ref().is_some_and(|(_, u)| *u);
            if run.after == After::Refused && case == 1 {
                report.ended = Ended::Unreachable;
                break;
            }
            if unsupported || report.cases == NO_CALL_SET_UPS {
                let why = run.no_call.as_ref().map_or("no call".into(), |(w, _)| w.clone());
                report.ended = Ended::Unsupported(why);
                break;
            }
        }
        if let Some(kind) = run.finding() {
            if seen.insert(kind.clone()) {
                let mut f = Finding {
                    tool_version: config.tool_version.clone(),
                    seed: config.seed,
                    case,
                    mutated,
                    peer: target.describe(),
                    kind: kind.clone(),
                    observed: run.describe(),
                    confirmed: false,
                };
                // Confirmed when the case alone, on a restarted peer, shows it again. A restart
                // that fails ends the run at once (the finding kept, not confirmed): no second
                // restart, no case sent into a dead peer.
                let down = if target.can_restart() { target.restart_within(None).err() } else { None };
                if target.can_restart() && down.is_none() {
                    let again = run_case(target, &config.options, config.reply_wait, mutated);
                    f.confirmed = again.finding().as_ref() == Some(&kind);
                }
                on_finding(&f);
                report.findings.push(f);
                if down.is_some() {
                    report.end_down(down, interrupt);
                    break;
                }
            }
            if !target.can_restart() && run.after == After::Refused {
                report.ended = Ended::PeerDown;
                break;
            }
            if let Some(why) = target.can_restart().then(|| target.restart_within(None).err()).flatten() {
                report.end_down(Some(why), interrupt);
                break;
            }
        }
    }
    report.elapsed = started.elapsed();
    report
}

/// Replays a finding against `target`: whether it shows again, what showed, the case.
pub fn replay(target: &mut dyn Target, f: &Finding, options: &RunOptions, reply_wait: Duration) -> (bool, CaseRun) {
    let _ = target.kernel_log();
    let _ = target.peer_log();
    let run = run_case(target, options, reply_wait, f.mutated);
    let got = run.finding();
    let hit = match &got {
        Some(k) if k.class == Class::Crash && f.kind.class == Class::Crash => {
            k.detail == f.kind.detail || k.detail.is_empty() || f.kind.detail.is_empty()
        }
        Some(k) => *k == f.kind,
        None => false,
    };
    (hit, run)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn good() -> Vec<u8> {
        reverse_reply(0x1234, 2, &words(&[0, 1, 0x7400_0000, 1, 11, 0]))
    }

    #[test]
    fn a_seed_and_case_name_the_mutation() {
        assert_eq!(draw(7, 3), draw(7, 3));
        let all: std::collections::HashSet<_> = (1..2000).map(|c| draw(7, c).mutation).collect();
        assert_eq!(all.len(), ReplyMutation::ALL.len(), "every mutation is drawn");
        assert_ne!((1..50).map(|c| draw(7, c)).collect::<Vec<_>>(), (1..50).map(|c| draw(8, c)).collect::<Vec<_>>());
    }

    #[test]
    fn names_round_trip() {
        for m in ReplyMutation::ALL {
            assert_eq!(ReplyMutation::from_name(m.name()), Some(m));
        }
    }

    #[test]
    fn the_xid_mutations_bend_the_named_header() {
        let g = good();
        let m = |mutation| apply(Mutated { mutation, param: 0x0001_0000 }, &g, 0x1234).remove(0);
        let word = |b: &[u8], at: usize| u32::from_be_bytes(b[at..at + 4].try_into().unwrap());
        let unknown = m(ReplyMutation::UnknownXid);
        assert_eq!(word(&unknown, 0), word(&unknown, RPC_XID));
        assert_ne!(word(&unknown, 0), 0x1234);
        let rpc = m(ReplyMutation::RpcXidDiffers);
        assert_eq!(word(&rpc, 0), 0x1234);
        assert_ne!(word(&rpc, RPC_XID), 0x1234);
        let rdma = m(ReplyMutation::RdmaXidDiffers);
        assert_eq!(word(&rdma, RPC_XID), 0x1234);
        assert_ne!(word(&rdma, 0), 0x1234);
        assert_eq!(word(&m(ReplyMutation::MsgTypeCall), MSG_TYPE), 0);
    }

    #[test]
    fn chunk_mutations_decode_as_the_chunks_they_claim() {
        let g = good();
        let p = rpcrdma_codec::Profile::default();
        let w = apply(Mutated { mutation: ReplyMutation::WriteListUnoffered, param: 1 }, &g, 0x1234).remove(0);
        let msg = rpcrdma_codec::v1::Message::decode(&w, &p).expect("decodes");
        let chunks = msg.header.body.chunks().expect("RDMA_MSG");
        assert_eq!(chunks.writes.len(), 1);
        assert_eq!(msg.payload, &g[RPC_XID..]);
        let r = apply(Mutated { mutation: ReplyMutation::ReplyChunkUnoffered, param: 1 }, &g, 0x1234).remove(0);
        let msg = rpcrdma_codec::v1::Message::decode(&r, &p).expect("decodes");
        assert!(msg.header.body.chunks().is_some_and(|c| c.reply.is_some()));
        let d = apply(Mutated { mutation: ReplyMutation::Duplicate, param: 0 }, &g, 0x1234);
        assert_eq!(d, vec![g.clone(), g]);
    }
}
