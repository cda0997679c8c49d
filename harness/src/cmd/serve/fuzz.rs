//! `serve --fuzz`: the responder answers a real requester (or the embedded one) and replaces
//! one reply in N with a mutated copy (`rpcrdma_peers::responder::reply_fuzz`), while the
//! requester's kernel log is followed. What it finds: a kernel bug report (WARN, BUG, oops,
//! KASAN, hung task) after a mutated reply, kept with that reply and the call it answered.
//! The client catalogue is not judged meanwhile: its checks assume faithful replies.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use clap::Args;
use rpcrdma_codec::hex::Hex;
use rpcrdma_conformance::expectations::Expectations;
use rpcrdma_conformance::fuzz::kernel_log::{report_signature, report_signatures, CONTEXT_LINES};
use rpcrdma_conformance::fuzz::Journal;
use rpcrdma_peers::observe::{Listener, Observed, ObservedConnection};
use rpcrdma_peers::responder::reply_fuzz::{mutation_names, Only};
use rpcrdma_peers::responder::{ReplyFuzz, ReverseMutation};
use serde_json::json;

use crate::client_finding::{self, journal};
use crate::exit::{usage, Ending, HarnessError, Outcome};
use crate::kernel_log::KernelLog;
use crate::textln;

#[derive(Debug, Clone, Default, Args)]
pub struct FuzzArgs {
    /// Mutate replies (one in `--fuzz-one-in`) instead of judging the client catalogue:
    /// truncated, wrong version, procedure, credit or XID, chunk lists broken, bits flipped;
    /// and reverse-direction calls (`reverse-*`: transport header, RPC header, CB_COMPOUND).
    #[arg(long)]
    pub fuzz: bool,
    /// The seed of the mutations; from the clock by default, and printed.
    #[arg(long, value_name = "S", requires = "fuzz")]
    pub seed: Option<u64>,
    /// Mutate one reply in N (at least 1); reverse-direction calls (NFSv4.1 callbacks, RFC
    /// 8167) likewise.
    #[arg(long, value_name = "N", default_value_t = 3, requires = "fuzz")]
    pub fuzz_one_in: u32,
    /// Mutate only reverse-direction calls (NFSv4.1 callbacks toward the client's back
    /// channel), never replies, so the client gets as far as its back channel every time.
    #[arg(long, requires = "fuzz")]
    pub fuzz_reverse_only: bool,
    /// Mutate only in these ways (repeatable): a message is still drawn as mutated or not as
    /// without it, then how from these alone, and one none applies to is sent as it is. To
    /// narrow down which mutation sets off a finding.
    #[arg(long = "fuzz-only", value_name = "MUTATION", requires = "fuzz", value_parser = fuzz_only_names())]
    pub fuzz_only: Vec<String>,
    /// Follow the requester's kernel log (`/dev/kmsg` on the client's machine): with --fuzz a
    /// bug report after a mutated reply is a finding; judging the catalogue, the lines logged
    /// while a scenario was played join its checks, and a bug report among them fails them.
    #[arg(long, value_name = "FILE")]
    pub kernel_log: Option<PathBuf>,
    /// Where finding files go.
    #[arg(long, value_name = "DIR", default_value = "serve-fuzz-findings", requires = "fuzz")]
    pub out: PathBuf,
    /// Append each mutated message to FILE, flushed before it is sent, and each finding once
    /// its report is a second old: a device the host keeps (a serial port) when the client's
    /// kernel may panic and take the harness with it; `fuzz-panic --journal` reads it.
    #[arg(long, value_name = "FILE", requires = "fuzz")]
    pub journal: Option<PathBuf>,
}

/// The names `--fuzz-only` takes.
fn fuzz_only_names() -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(mutation_names())
}

/// A fuzzing session under way: the mutator the responders share, what it mutated, and the
/// kernel log's findings.
pub struct Session {
    pub mutator: Arc<ReplyFuzz>,
    /// Told of every observed event: journals each mutated message, and keeps it while a
    /// report in the kernel log may yet follow it.
    pub tracker: Arc<Tracker>,
    /// `--fuzz-reverse-only`.
    pub reverse_only: bool,
    watcher: Option<Watcher>,
}

impl Session {
    /// Sets up the session; an error says why not.
    pub fn start(args: &FuzzArgs, wire: &rpcrdma_codec::Profile) -> Result<Session, HarnessError> {
        let seed = crate::fuzz_target::seed_or_clock(args.seed);
        let log = match &args.kernel_log {
            None => None,
            Some(p) => Some(KernelLog::follow(p).map_err(|e| usage(format!("--kernel-log {}: {e}", p.display())))?),
        };
        std::fs::create_dir_all(&args.out)
            .map_err(|e| HarnessError::Environment(format!("--out {}: {e}", args.out.display())))?;
        let journal = match &args.journal {
            None => None,
            Some(p) => Some(
                Journal::open(p).map_err(|e| HarnessError::Environment(format!("--journal {}: {e}", p.display())))?,
            ),
        };
        let mut mutator = if args.fuzz_reverse_only {
            ReplyFuzz::reverse_only(seed, args.fuzz_one_in)
        } else {
            ReplyFuzz::new(seed, args.fuzz_one_in)
        };
        if !args.fuzz_only.is_empty() {
            let only = Only::named(args.fuzz_only.iter().map(String::as_str)).map_err(usage)?;
            if args.fuzz_reverse_only && only.reverse.is_empty() {
                return Err(usage("--fuzz-reverse-only with --fuzz-only naming no reverse-* mutation mutates nothing"));
            }
            mutator = mutator.only(only);
        }
        let mutator = Arc::new(mutator);
        let wire: Vec<String> = crate::wire_profile::names(wire).iter().map(|s| s.to_string()).collect();
        let tracker = Arc::new(Tracker {
            started: Instant::now(),
            seed,
            wire,
            journal,
            follows_log: log.is_some(),
            state: Mutex::default(),
        });
        let watcher = log.map(|l| Watcher::start(l, tracker.clone()));
        Ok(Session { mutator, tracker, reverse_only: args.fuzz_reverse_only, watcher })
    }

    /// The seed of the mutations.
    pub fn seed(&self) -> u64 {
        self.tracker.seed
    }

    /// Time since the session started (the clock of findings).
    pub fn elapsed(&self) -> Duration {
        self.tracker.started.elapsed()
    }
}

/// One mutated reply: when, how, the call it answered and what was sent instead; or one
/// mutated reverse-direction call (`reverse_call`: the n-th on its connection, from 1; `call`
/// what was sent, `reply` empty).
#[derive(Debug)]
struct Mutation {
    at: Duration,
    how: &'static str,
    xid: u32,
    call: Vec<u8>,
    reply: Vec<u8>,
    reverse_call: Option<usize>,
}

impl Mutation {
    fn json(&self) -> serde_json::Value {
        client_finding::after_mutation(self.how, self.xid, &self.call, &self.reply, self.reverse_call)
    }
}

/// Calls kept per connection to pair a mutated reply with the call it answers (a requester
/// has no more outstanding than its credits: 128 covers every grant `serve` is run with in
/// practice; an older call's mutated reply is kept with an empty call).
const CALLS_KEPT: usize = 128;

/// Pairs each mutated message with the call it answered and what was sent, as the responders
/// record them ([`Listener`]), and journals it before it is sent. It keeps a mutated message
/// only until the kernel log has been read past it (the message a report follows is taken as
/// its line is read, [`WatchState::take`]); the observation log keeps them all.
#[derive(Debug)]
pub struct Tracker {
    started: Instant,
    seed: u64,
    wire: Vec<String>,
    journal: Option<Journal>,
    /// A kernel log is followed: its reports are paired with the mutated messages before them.
    follows_log: bool,
    state: Mutex<TrackerState>,
}

#[derive(Debug, Default)]
struct TrackerState {
    connections: HashMap<usize, Connection>,
    /// Mutated messages sent this session (the journal numbers them).
    sent: u64,
    /// The last mutated message sent before the kernel log was last read, and those since.
    recent: VecDeque<Arc<Mutation>>,
}

/// A served connection as the tracker follows it.
#[derive(Debug, Default)]
struct Connection {
    /// The requester's latest calls, each with its XID.
    calls: VecDeque<(u32, Vec<u8>)>,
    reverse_calls: usize,
    /// A mutation recorded, awaiting the message sent in its place.
    pending: Option<(&'static str, u32, Option<usize>)>,
}

impl Listener for Tracker {
    fn observed(&self, conn: usize, what: &Observed) {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let c = s.connections.entry(conn).or_default();
        match what {
            Observed::FromRequester(b) if b.len() >= 4 => {
                if c.calls.len() == CALLS_KEPT {
                    c.calls.pop_front();
                }
                c.calls.push_back((u32::from_be_bytes([b[0], b[1], b[2], b[3]]), b.clone()));
            }
            Observed::ReverseCall { .. } => c.reverse_calls += 1,
            Observed::Mutated { how, xid } => {
                let reverse = ReverseMutation::ALL.iter().any(|m| m.name() == *how).then_some(c.reverse_calls);
                c.pending = Some((how, *xid, reverse));
            }
            Observed::ToRequester(sent) => {
                let Some((how, xid, reverse_call)) = c.pending.take() else { return };
                let (call, reply) = match reverse_call {
                    Some(_) => (sent.clone(), Vec::new()),
                    None => {
                        let call = c.calls.iter().rev().find(|(x, _)| *x == xid).map(|(_, b)| b.clone());
                        (call.unwrap_or_default(), sent.clone())
                    }
                };
                let m = Mutation { at: self.started.elapsed(), how, xid, call, reply, reverse_call };
                if let Some(j) = &self.journal {
                    let at_ms = std::time::SystemTime::now()
                        .duration_since(std::time::UNIX_EPOCH)
                        .map_or(0, |d| d.as_millis() as u64);
                    j.append(&journal::mutation_line(self.seed, &self.wire, s.sent + 1, at_ms, m.json()));
                }
                s.sent += 1;
                if self.follows_log {
                    s.recent.push_back(Arc::new(m));
                }
            }
            Observed::Closed | Observed::Stopped(_) => {
                s.connections.remove(&conn);
            }
            _ => {}
        }
    }
}

impl Tracker {
    /// A new log's connections are numbered from 0 again: what was followed of the last one's
    /// is dropped.
    pub fn new_log(&self) {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).connections.clear();
    }

    /// The last mutation sent at or before `at`, each of `at` the time a line of the kernel log
    /// was read (a mutation sent by then is recorded by now); then forgets those no line read
    /// later can follow: all before the last sent at or before `read_from` (a time before
    /// the lines were last taken from the follower: a line read later is read after it).
    fn last_before(&self, at: &[Duration], read_from: Duration) -> Vec<Option<Arc<Mutation>>> {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let before = |s: &TrackerState, t: Duration| s.recent.partition_point(|m| m.at <= t).checked_sub(1);
        let found = at.iter().map(|t| before(&s, *t).map(|i| s.recent[i].clone())).collect();
        if let Some(i) = before(&s, read_from) {
            s.recent.drain(..i);
        }
        found
    }

    fn finding_json(&self, f: &Finding) -> serde_json::Value {
        client_finding::finding(self.seed, &self.wire, &f.kind, &f.lines, f.after.as_deref().map(Mutation::json))
    }
}

/// A kernel report: its signature, the lines, and the mutation that came last before it.
#[derive(Debug, Clone)]
struct Finding {
    kind: String,
    lines: Vec<String>,
    after: Option<Arc<Mutation>>,
}

/// Lines of the kernel log kept; a flood beyond it drops the oldest (their findings are kept).
const LINES_KEPT: usize = 16_384;

/// A report is journaled once it is this old, its trace logged after it.
const REPORT_SETTLED: Duration = Duration::from_secs(1);

/// Follows the kernel log in the background: its lines kept, its reports found as they come
/// (each kind once) and journaled once settled.
struct Watcher {
    state: Arc<Mutex<WatchState>>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
    log: KernelLog,
}

#[derive(Default)]
struct WatchState {
    lines: Vec<KernelLine>,
    found: Vec<Finding>,
    journaled: usize,
}

/// A line of the kernel log: when it was read, and, when it may begin a report
/// ([`report_signature`]), the mutation sent last before.
struct KernelLine {
    at: Duration,
    text: String,
    after: Option<Arc<Mutation>>,
}

impl Watcher {
    fn start(log: KernelLog, tracker: Arc<Tracker>) -> Watcher {
        let state = Arc::new(Mutex::new(WatchState::default()));
        let stop = Arc::new(AtomicBool::new(false));
        let (st, sp, lg) = (state.clone(), stop.clone(), log.clone());
        let thread = std::thread::Builder::new()
            .name("report-watcher".into())
            .spawn(move || {
                while !sp.load(Ordering::SeqCst) {
                    std::thread::sleep(Duration::from_millis(250));
                    let mut w = st.lock().unwrap_or_else(|e| e.into_inner());
                    w.take(&lg, &tracker, false);
                }
            })
            .ok();
        Watcher { state, stop, thread, log }
    }

    /// Stops following; the findings, the last lines read.
    fn finish(mut self, tracker: &Tracker) -> Vec<Finding> {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        let mut w = self.state.lock().unwrap_or_else(|e| e.into_inner());
        w.take(&self.log, tracker, true);
        std::mem::take(&mut w.found)
    }
}

impl WatchState {
    /// Reads the lines logged since, finds new reports, journals the settled ones (all, at
    /// the `end`).
    fn take(&mut self, log: &KernelLog, tracker: &Tracker, end: bool) {
        let now = tracker.started.elapsed();
        // Each line that may begin a report is paired with the mutation before it as it is
        // read: a report found later needs no older mutation kept.
        let mut read: Vec<KernelLine> = log
            .drain_timed()
            .into_iter()
            .map(|(t, text)| KernelLine { at: t.saturating_duration_since(tracker.started), text, after: None })
            .collect();
        let reports: Vec<usize> = (0..read.len()).filter(|&i| report_signature(&read[i].text).is_some()).collect();
        let at: Vec<Duration> = reports.iter().map(|&i| read[i].at).collect();
        for (i, after) in reports.into_iter().zip(tracker.last_before(&at, now)) {
            read[i].after = after;
        }
        self.lines.extend(read);
        let text: Vec<String> = self.lines.iter().map(|l| l.text.clone()).collect();
        let mut settling_from = text.len();
        for (i, sig) in report_signatures(&text) {
            let at = self.lines[i].at;
            let kind = format!("kernel-report: {sig}");
            if !end && now.saturating_sub(at) < REPORT_SETTLED {
                settling_from = settling_from.min(i);
                continue;
            }
            if self.found.iter().any(|f| f.kind == kind) {
                continue;
            }
            let end_line = (i + 1 + CONTEXT_LINES).min(text.len());
            self.found.push(Finding { kind, lines: text[i..end_line].to_vec(), after: self.lines[i].after.clone() });
        }
        if let Some(j) = &tracker.journal {
            for f in &self.found[self.journaled..] {
                j.append(&journal::finding_line(&tracker.finding_json(f)));
            }
        }
        self.journaled = self.found.len();
        // A flood: the oldest lines go, down to half the room, but not a report still settling
        // (the reports before it are found already).
        if self.lines.len() > LINES_KEPT {
            let drop = (self.lines.len() - LINES_KEPT / 2).min(settling_from);
            self.lines.drain(..drop);
        }
    }
}

/// A finding file.
fn save(dir: &Path, n: usize, f: &Finding, tracker: &Tracker) -> Result<PathBuf, String> {
    let name = crate::fuzz_target::finding_name(n + 1, &crate::fuzz_target::file_safe(&f.kind), "");
    crate::fuzz_target::save_finding(dir, &name, &tracker.finding_json(f))
}

/// Ends the session: reads the kernel log, writes finding files and the report (`json`),
/// prints the summary; [`Ending::Failed`] on a finding the profile does not list.
pub fn finish(
    session: Session,
    args: &FuzzArgs,
    observed: &[ObservedConnection],
    profile: Option<&Expectations>,
    wire: &rpcrdma_codec::Profile,
    json_out: Option<&mut crate::report::Sink>,
) -> Outcome {
    let wire = crate::wire_profile::names(wire);
    let (seed, followed) = (session.seed(), session.watcher.is_some());
    let found = session.watcher.map(|w| w.finish(&session.tracker)).unwrap_or_default();
    let known: Vec<Option<String>> =
        found.iter().map(|f| profile.and_then(|p| p.known_finding(&f.kind)).map(|k| k.reason.clone())).collect();
    let events = || observed.iter().flat_map(|c| c.events.iter()).map(|(_, e)| e);
    // Counted from the log: each `Mutated` is followed there by the message sent in its place.
    let mut by_how: BTreeMap<&str, usize> = BTreeMap::new();
    for e in events() {
        if let Observed::Mutated { how, .. } = e {
            *by_how.entry(how).or_default() += 1;
        }
    }
    let mutated: usize = by_how.values().sum();
    let replies = events().filter(|e| matches!(e, Observed::ToRequester(_))).count();
    let calls = events().filter(|e| matches!(e, Observed::FromRequester(_))).count();
    let mut failed_write = false;
    let mut files = Vec::new();
    for (n, f) in found.iter().enumerate() {
        match save(&args.out, n, f, &session.tracker) {
            Ok(p) => files.push(Some(p)),
            Err(e) => {
                crate::errln!("error: {e}");
                failed_write = true;
                files.push(None);
            }
        }
    }
    let how: Vec<String> = by_how.iter().map(|(k, v)| format!("{k} {v}")).collect();
    let only = if args.fuzz_only.is_empty() { String::new() } else { format!(", only {}", args.fuzz_only.join(" ")) };
    textln!(
        "fuzzed replies (seed {}{only}): {} of {replies} replies mutated ({}), {calls} calls on {} connections",
        seed,
        mutated,
        if how.is_empty() { "none".to_string() } else { how.join(", ") },
        observed.len()
    );
    if let Some(e) = session.tracker.journal.as_ref().and_then(Journal::error) {
        crate::errln!("error: cannot write the journal: {e}");
        failed_write = true;
    }
    if !followed {
        textln!("no kernel log followed (--kernel-log): only the transcript was kept");
    }
    for (i, f) in found.iter().enumerate() {
        textln!("finding {}: {}", i + 1, f.kind);
        match f.after.as_deref() {
            Some(m @ Mutation { reverse_call: Some(n), .. }) => textln!(
                "    after our reverse-direction call {:#010x} (call {n} on its connection) was mutated ({}): {}",
                m.xid,
                m.how,
                Hex(&m.call)
            ),
            Some(m) => textln!("    after our reply to {:#010x} was mutated ({}): {}", m.xid, m.how, Hex(&m.reply)),
            None => {}
        }
        for l in f.lines.iter().take(8) {
            textln!("    {l}");
        }
        if let Some(Some(p)) = files.get(i) {
            textln!("    finding file: {}", p.display());
        }
        if let Some(reason) = &known[i] {
            textln!("    known (the profile lists it): {reason}");
        }
    }
    if found.is_empty() {
        textln!("no findings");
    }
    if let Some(sink) = json_out {
        let v = json!({
            "schema": "rpcrdma-harness/serve-fuzz-report/v1",
            "tool": format!("rpcrdma-harness {}", env!("CARGO_PKG_VERSION")),
            "seed": seed,
            "wire_profile": wire,
            "one_in": args.fuzz_one_in,
            "only": (!args.fuzz_only.is_empty()).then_some(&args.fuzz_only),
            "connections": observed.len(),
            "calls": calls,
            "replies": replies,
            "mutated": by_how,
            "kernel_log_followed": followed,
            "findings": found.iter().enumerate().map(|(i, f)| json!({
                "kind": f.kind,
                "kernel_log": f.lines,
                "after_mutation": f.after.as_ref().map(|m| json!({
                    "how": m.how, "xid": format!("{:#010x}", m.xid), "reverse_call": m.reverse_call,
                })),
                "file": files.get(i).cloned().flatten().map(|p| p.display().to_string()),
                "known": known[i],
            })).collect::<Vec<_>>(),
        });
        let text = serde_json::to_string_pretty(&v).expect("JSON values serialize") + "\n";
        failed_write |= !crate::report::write_sink(sink, text.as_bytes());
    }
    if failed_write && crate::signals::exit_code().is_none() {
        return Err(HarnessError::Unwritten);
    }
    Ok(Ending::judged(known.iter().any(Option::is_none)))
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    fn tracker(journal: Option<Journal>) -> Tracker {
        Tracker {
            started: Instant::now(),
            seed: 1,
            wire: Vec::new(),
            journal,
            follows_log: true,
            state: Mutex::default(),
        }
    }

    /// A fresh directory for test `name` with an empty `kmsg` file in it, followed.
    fn followed_kmsg(name: &str) -> (std::path::PathBuf, std::path::PathBuf, KernelLog) {
        let d = std::env::temp_dir().join(format!("rpcrdma-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        let kmsg = d.join("kmsg");
        std::fs::write(&kmsg, "").unwrap();
        let follower = KernelLog::follow(&kmsg).unwrap();
        (d, kmsg, follower)
    }

    /// Appends kmsg records to `path` and waits until the follower has read them.
    fn log(path: &Path, lines: &[String]) {
        let mut f = std::fs::OpenOptions::new().append(true).open(path).unwrap();
        let text: String = lines.iter().map(|l| format!("6,1,1,-;{l}\n")).collect();
        f.write_all(text.as_bytes()).unwrap();
        std::thread::sleep(Duration::from_millis(150));
    }

    /// A mutated reply of `len` bytes to a call of as many, XID `xid`, on connection 0.
    fn mutate(t: &Tracker, xid: u32, len: usize) {
        let mut call = xid.to_be_bytes().to_vec();
        call.resize(len, 0);
        t.observed(0, &Observed::FromRequester(call.clone()));
        t.observed(0, &Observed::Mutated { how: "xid", xid });
        t.observed(0, &Observed::ToRequester(call));
    }

    /// The bytes of mutated messages the tracker holds.
    fn held(t: &Tracker) -> usize {
        let s = t.state.lock().unwrap();
        s.recent.iter().map(|m| m.call.len() + m.reply.len()).sum()
    }

    #[test]
    fn mutated_messages_are_kept_until_the_kernel_log_is_read_past_them() {
        let (d, kmsg, follower) = followed_kmsg("held");
        let t = tracker(None);
        let mut w = WatchState::default();
        // 4,000 mutated replies of 1 KiB and their calls (8 MB), the log read every 100.
        for xid in 1..=4000 {
            mutate(&t, xid, 1024);
            if xid % 100 == 0 {
                w.take(&follower, &t, false);
            }
        }
        assert!(held(&t) <= 2 * 1024, "{} bytes held", held(&t));
        // A report after the 4,000th: found with it, though more were sent before it settled.
        log(&kmsg, &["BUG: KASAN: use-after-free in g+0x1/0x2".into()]);
        for xid in 4001..=4100 {
            mutate(&t, xid, 1024);
        }
        w.take(&follower, &t, false);
        assert!(w.found.is_empty(), "not settled yet");
        std::thread::sleep(REPORT_SETTLED);
        w.take(&follower, &t, false);
        assert_eq!(w.found.len(), 1);
        assert_eq!(w.found[0].after.as_ref().map(|m| m.xid), Some(4000));
        assert!(held(&t) <= 2 * 1024, "{} bytes held", held(&t));
        // No kernel log followed: none kept.
        let quiet = Tracker { follows_log: false, ..tracker(None) };
        mutate(&quiet, 1, 1024);
        assert_eq!(held(&quiet), 0);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_report_is_journaled_once_settled_and_a_flood_keeps_the_reports_found() {
        let (d, kmsg, follower) = followed_kmsg("watch");
        let jpath = d.join("journal");
        let t = tracker(Some(Journal::open(&jpath).unwrap()));
        let mut w = WatchState::default();
        log(&kmsg, &["WARNING: CPU: 0 PID: 1 at net/sunrpc/xprtrdma/verbs.c:10 f+0x1/0x2".into()]);
        w.take(&follower, &t, false);
        // Not a second old: found later, its trace logged by then.
        assert!(w.found.is_empty());
        assert_eq!(std::fs::read_to_string(&jpath).unwrap(), "");
        std::thread::sleep(REPORT_SETTLED);
        // A flood after it, a few thousand lines a tick (the follower keeps 4,096 between
        // reads), past the lines kept.
        for _ in 0..5 {
            log(&kmsg, &(0..4000).map(|i| format!("noise {i}")).collect::<Vec<_>>());
            w.take(&follower, &t, false);
        }
        assert_eq!(w.found.len(), 1, "found once");
        assert!(w.lines.len() <= LINES_KEPT, "{} lines kept", w.lines.len());
        let journal = std::fs::read_to_string(&jpath).unwrap();
        assert_eq!(journal.lines().count(), 1, "{journal}");
        let line: serde_json::Value = serde_json::from_str(journal.trim()).unwrap();
        assert_eq!(line["finding"]["kind"], "kernel-report: WARNING at net/sunrpc/xprtrdma/verbs.c f");
        // A second report, at the end of the session: found and journaled without waiting.
        log(&kmsg, &["BUG: KASAN: use-after-free in g+0x1/0x2".into()]);
        w.take(&follower, &t, true);
        assert_eq!(w.found.len(), 2);
        assert_eq!(std::fs::read_to_string(&jpath).unwrap().lines().count(), 2);
        std::fs::remove_dir_all(&d).unwrap();
    }
}
