//! A structure-aware fuzzer for RPC-over-RDMA responders: it generates and mutates transport
//! headers, chunk lists, the forbidden and Version Two forms and RPC calls with the codec's
//! builders ([`input`], [`generate`], [`mutate`]), backs every segment with real registered
//! memory fenced by guard bytes, and after each case classifies the peer with a liveness NULL
//! ([`execute`], [`classify`]). Inputs whose replies look new (a signature of each reply's
//! shape) join a corpus that later cases mutate preferentially. Every new kind of finding is
//! minimised ([`minimise`]) and handed back as a [`reproducer::Reproducer`] that `replay`
//! runs again. Where the peer's own log and process can be read, a crash is signed by its
//! backtrace ([`backtrace`]) and memory kept per connection is a finding ([`resources`]), the
//! peer restarted before its machine runs out.

pub mod backtrace;
pub mod classify;
pub mod execute;
pub mod generate;
pub mod input;
pub mod journal;
pub mod kernel_log;
pub mod minimise;
pub mod mutate;
pub mod reproducer;
pub mod resources;
pub mod reverse;
pub use rpcrdma_peers::rng;

use std::collections::{BTreeMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rpcrdma_peers::responder::{Config as ResponderConfig, Faults, Responder};
use rpcrdma_peers::transport::emulated::EmulatedConnector;
use rpcrdma_peers::transport::Connector;

pub use classify::{Class, Kind};
pub use execute::{Liveness, Observation, Spent, Timing};
use input::Spec;
pub use journal::{Journal, Sent};
pub use reproducer::Reproducer;
use rng::Rng;

use crate::engine::RunOptions;

/// The peer a fuzz run talks to.
pub trait Target {
    fn connector(&mut self) -> &mut dyn Connector;
    /// Brings up a fresh peer (after a crash, and before each minimisation trial); false when
    /// this target cannot (a remote peer, until the VM part restarts one).
    fn restart(&mut self) -> bool;
    /// Whether [`Target::restart`] can work.
    fn can_restart(&self) -> bool;
    fn describe(&self) -> String;
    /// Whether a restart costs little (a fresh embedded responder) and is done before every
    /// minimisation trial; a costly one (a server restarted by a command) is done only after
    /// a case that left the peer unwell.
    fn cheap_restart(&self) -> bool {
        true
    }
    /// As [`Target::restart`], the restart killed past `limit` when one is given and it is
    /// shorter than the target's own bound ([`Target::restart_bound`]); Err says why the peer
    /// is not back (the command's status).
    fn restart_within(&mut self, _limit: Option<Duration>) -> Result<(), String> {
        if self.restart() {
            Ok(())
        } else {
            Err("the peer could not be restarted".into())
        }
    }
    /// How long a costly restart may take before it is called failed (`--restart-timeout`);
    /// None where there is no bound of its own.
    fn restart_bound(&self) -> Option<Duration> {
        None
    }
    /// The peer's kernel log lines since the last call, where it can be read: what is there,
    /// read at once, and when that is anything, read on until a moment passes with nothing
    /// more (a report being written is read whole).
    fn kernel_log(&mut self) -> Vec<String> {
        Vec::new()
    }
    /// The peer's own log lines since the last call (a user-space server's log, where its
    /// crash handler writes a backtrace), where it can be read.
    fn peer_log(&mut self) -> Vec<String> {
        Vec::new()
    }
    /// Gives the peer's logs a moment to take the reports of a case that left the peer unwell
    /// (silent, disconnected, refused): its kernel may still be writing an oops. A case the
    /// peer answered does without: a report made while handling its messages was logged
    /// before their replies (and the liveness proof behind them) were sent.
    fn settle_logs(&mut self) {}
    /// The peer process's memory and its machine's, where they can be read.
    fn resources(&mut self) -> Option<resources::Sample> {
        None
    }
    /// Says what the run does to the peer and why (a restart because memory ran low).
    fn note(&mut self, _what: &str) {}
}

/// The embedded reference responder over the emulated fabric, brought up afresh on restart;
/// `faults` make it misbehave (crash-like ones included) to prove the fuzzer finds them;
/// it reads and writes the wire under `profile` (the run's).
pub struct Embedded {
    faults: Faults,
    profile: rpcrdma_codec::Profile,
    connector: EmulatedConnector<Responder>,
}

impl Embedded {
    pub fn new(faults: Faults) -> Self {
        Embedded::with_profile(faults, rpcrdma_codec::Profile::default())
    }

    /// The embedded responder reading and writing the wire under `profile`.
    pub fn with_profile(faults: Faults, profile: rpcrdma_codec::Profile) -> Self {
        let config = ResponderConfig { faults: faults.clone(), profile, ..ResponderConfig::default() };
        Embedded { faults, profile, connector: EmulatedConnector::new(Responder::reference(config)) }
    }
}

impl Target for Embedded {
    fn connector(&mut self) -> &mut dyn Connector {
        &mut self.connector
    }
    fn restart(&mut self) -> bool {
        *self = Embedded::with_profile(self.faults.clone(), self.profile);
        true
    }
    fn can_restart(&self) -> bool {
        true
    }
    fn describe(&self) -> String {
        let on: Vec<&str> = Faults::NAMES.iter().copied().filter(|n| Faults::only(n) == self.faults).collect();
        if self.faults == Faults::default() {
            "embedded reference responder".into()
        } else if on.len() == 1 {
            format!("embedded reference responder (fault {})", on[0])
        } else {
            "embedded reference responder (faults)".into()
        }
    }
}

/// Settings of a fuzz run.
#[derive(Debug, Clone)]
pub struct Config {
    pub seed: u64,
    /// Stop after this long.
    pub duration: Option<Duration>,
    /// Stop after this many fuzz messages (liveness NULLs not counted).
    pub max_messages: Option<u64>,
    /// Our connection parameters (receive size, send size, credits requested).
    pub options: RunOptions,
    pub timing: Timing,
    /// Candidates the minimiser may try per finding.
    pub minimise_budget: usize,
    /// Wall time the minimiser may spend per finding (a hang costs seconds per trial).
    pub minimise_time: Duration,
    /// Written into reproducers.
    pub tool_version: String,
    /// Stop once this many findings (new kinds) have been made.
    pub stop_after_findings: Option<usize>,
    /// Generate and discard the first this many cases of the seed's sequence, unsent.
    pub skip_cases: u64,
    /// Coverage feedback: cases whose replies look new join the corpus later cases mutate.
    /// Without it every case is generated afresh, and the sequence depends on the seed alone.
    pub feedback: bool,
    /// Where each case is written, as a reproducer, before it is sent.
    pub journal: Option<Arc<Journal>>,
    /// Where the peer's memory can be read ([`Target::resources`]): restart it before a case
    /// when the machine's MemAvailable is below this percentage of its MemTotal.
    pub memory_floor_percent: u64,
    /// Cases go on over the previous case's connection while the peer keeps it healthy, and
    /// a case's own last call proves liveness where it can (docs/fuzzing.md, "Cases and
    /// connections"); the default. Off: every case on a fresh connection with a NULL after it
    /// (`fuzz --fresh-connections`), the default of earlier releases.
    pub reuse_connections: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            seed: 1,
            duration: Some(Duration::from_secs(10)),
            max_messages: None,
            options: RunOptions { timeout: Duration::from_secs(2), ..RunOptions::default() },
            timing: Timing { reply: Duration::from_secs(1) },
            minimise_budget: 300,
            minimise_time: Duration::from_secs(15),
            tool_version: "unknown".into(),
            stop_after_findings: None,
            skip_cases: 0,
            feedback: true,
            journal: None,
            memory_floor_percent: 25,
            reuse_connections: true,
        }
    }
}

/// One finding: its minimised reproducer and when it was found.
#[derive(Debug, Clone)]
pub struct Finding {
    pub reproducer: Reproducer,
    /// Fuzz messages sent before the case that found it (that case included).
    pub after_messages: u64,
    /// Whether the minimised case was checked to reproduce.
    pub minimised: bool,
}

/// Why a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    Time,
    Messages,
    /// As many findings as asked for were made.
    Findings,
    Interrupted,
    /// The peer went down and this target cannot bring it back.
    PeerDown,
    /// The peer could not be reached before the first case.
    Unreachable,
    /// Not ended: the report of a run still going ([`run_watched`]'s progress).
    Running,
}

impl Ended {
    pub fn name(self) -> &'static str {
        match self {
            Ended::Time => "time limit",
            Ended::Messages => "message limit",
            Ended::Findings => "finding limit",
            Ended::Interrupted => "interrupted",
            Ended::PeerDown => "the peer went down and cannot be restarted",
            Ended::Unreachable => "the peer is unreachable",
            Ended::Running => {
                "not ended: written while the run was still going (a run killed before its end leaves this)"
            }
        }
    }
}

/// The result of a run.
#[derive(Debug, Clone)]
pub struct Report {
    pub seed: u64,
    pub peer: String,
    /// Cases of the seed's sequence generated and discarded unsent (`skip_cases`).
    pub skipped: u64,
    /// Cases sent.
    pub cases: u64,
    pub messages: u64,
    /// Connections the cases opened (minimisation's not counted).
    pub connections: u64,
    /// Cases that went on over the connection of the cases before them.
    pub reused: u64,
    /// Cases whose liveness the reply to their own last message proved, with no NULL.
    pub own_probes: u64,
    /// Cases that dropped a kept connection over well-formed messages after earlier cases on
    /// it sent something malformed or left a call unanswered, and were sent again alone on a
    /// fresh connection ([`classify::disconnect_but_for_earlier`]); their messages are not
    /// counted again in `messages`.
    pub disconnects_rechecked: u64,
    /// Of those, the ones whose drop did not repeat alone and that showed nothing worse there
    /// ([`classify::recheck_finding`]): no `disconnect` finding, counted here (their own
    /// finding, such as a violation, counted as usual). One that did worse alone (a crash, say)
    /// has that finding, found from the re-check, and is not counted here.
    pub disconnects_not_reproduced_alone: u64,
    /// Of those re-checked, the ones that did worse alone than drop the connection, by the
    /// class of the finding they had there (counted in `classes` too).
    pub disconnects_worse_alone: BTreeMap<&'static str, u64>,
    pub elapsed: Duration,
    /// Of `elapsed`, the time spent minimising findings and re-checking disconnects alone.
    pub minimising: Duration,
    /// Of `elapsed` less `minimising`, where the cases' time went.
    pub spent: Spent,
    /// Cases per liveness outcome.
    pub outcomes: BTreeMap<&'static str, u64>,
    /// Cases per finding class (every occurrence, not only new kinds).
    pub classes: BTreeMap<&'static str, u64>,
    pub findings: Vec<Finding>,
    pub corpus: usize,
    pub signatures: usize,
    pub ended: Ended,
    /// Why the peer is reported down when the run ended so ([`Ended::PeerDown`]): the restart
    /// that failed, or the liveness probe after it that went unanswered.
    pub down: Option<String>,
    /// What was seen of the peer's memory, where it could be read.
    pub memory: Option<resources::Watch>,
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

    /// Fuzz messages per second of fuzzing (minimisation not counted).
    pub fn messages_per_second(&self) -> f64 {
        self.per_second(self.messages)
    }

    /// Cases per second of fuzzing (minimisation not counted).
    pub fn cases_per_second(&self) -> f64 {
        self.per_second(self.cases)
    }

    fn per_second(&self, n: u64) -> f64 {
        let s = self.elapsed.saturating_sub(self.minimising).as_secs_f64();
        if s > 0.0 {
            n as f64 / s
        } else {
            0.0
        }
    }
}

/// A one-line account of an observation, for reproducers and reports.
pub fn describe(obs: &Observation) -> String {
    let mut parts = vec![format!("liveness {}", obs.liveness.name()), format!("{} sent", obs.sent)];
    if let Some(e) = &obs.connect_failed {
        parts.push(format!("connect failed: {e}"));
    }
    if !obs.kernel.is_empty() {
        parts.push(format!("the kernel logged:\n{}\n", obs.kernel.join("\n")));
    }
    if let Some(site) = &obs.crash_site {
        parts.push(format!(
            "the peer logged a backtrace (crash site {}):\n{}\n",
            site.signature,
            site.trace.join("\n")
        ));
    }
    for o in &obs.oob {
        let what = if o.read { "read" } else { "changed" };
        parts.push(format!(
            "message {} region {}: {} byte(s) {what} outside the advertised segments, first at offset {}",
            o.message, o.region, o.bytes, o.at
        ));
    }
    if !obs.unanswered.is_empty() {
        parts.push(format!("well-formed message(s) {:?} unanswered", obs.unanswered));
    }
    for f in &obs.replies {
        for v in classify::reply_violations(f, &obs.profile) {
            parts.push(format!("reply {f} breaks {v}"));
        }
    }
    parts.join("; ")
}

/// Most cases one connection carries: then a fresh one, so that a finding that needs the
/// cases before it on its connection names at most this many less one.
pub const CASES_PER_CONNECTION: usize = 32;

/// The most messages a finding's case and the cases before it on its connection are sent as,
/// one case, when the case alone does not show it.
const FLAT_MESSAGES: usize = 16;

/// The connection cases go on over while the peer keeps it healthy ([`execute::Kept`]), and
/// the cases it carried, by number, as sent.
#[derive(Default)]
struct Session {
    kept: Option<execute::Kept>,
    cases: Vec<Numbered>,
}

/// A case by its number in the seed's sequence.
type Numbered = (u64, Vec<Spec>);

impl Session {
    /// Before a case: the connection it goes on over, or none (a fresh one) when there is
    /// none, it carried only a probe, or it carried its share.
    fn prepare(&mut self) {
        match &self.kept {
            Some(k) if k.cases > 0 && self.cases.len() < CASES_PER_CONNECTION => {}
            Some(k) if k.cases == 0 => self.cases.clear(),
            _ => *self = Session::default(),
        }
    }

    /// The cases before `obs`'s on its connection.
    fn preceding(&self, obs: &Observation) -> Vec<Numbered> {
        self.cases[..obs.after_cases.min(self.cases.len())].to_vec()
    }
}

/// Runs a case (specs encoded) against `target`, journalled first when there is a journal;
/// the peer restarted first when its machine is running out of the memory it holds. Over a
/// fresh connection, or with a `session`, over its connection when it has one. Its waits end
/// by `until` when one is given ([`execute::run_until`]).
fn execute_specs(
    target: &mut dyn Target,
    config: &Config,
    watch: &mut resources::Watch,
    case: &[Spec],
    sent: Sent,
    session: Option<&mut Session>,
    until: Option<Instant>,
) -> Observation {
    let restarted = watch.must_restart() && target.can_restart();
    if restarted {
        let s = watch.last.unwrap_or_default();
        target.note(&format!(
            "restarting the peer: the machine has {} MiB of {} MiB available (the floor is {}%) and the peer holds {} MiB",
            s.available_kib / 1024,
            s.total_kib / 1024,
            watch.floor_percent,
            s.held_kib() / 1024
        ));
        target.restart();
        watch.restarted_for_memory();
    }
    let mut fresh = Session::default();
    let session = match session {
        Some(s) if !restarted && config.reuse_connections => {
            s.prepare();
            s
        }
        Some(s) => {
            *s = Session::default();
            s
        }
        None => &mut fresh,
    };
    let t = Instant::now();
    let wires: Vec<input::Wire> = case.iter().map(Spec::encode).collect();
    let encoded = t.elapsed();
    let mut journalled = Duration::ZERO;
    if let Some(j) = &config.journal {
        let t = Instant::now();
        let after: Vec<u64> = match &session.kept {
            Some(k) if k.cases > 0 => session.cases.iter().map(|(n, _)| *n).collect(),
            _ => Vec::new(),
        };
        j.append(&journal::case_line(&journal::reproducer(config, target.describe(), sent, &wires), sent, &after));
        journalled = t.elapsed();
    }
    // Lines logged since the last case (late ones of that case included) count for this one:
    // a report is misplaced by a case at worst, never lost.
    let plan = execute::Plan {
        case: &wires,
        options: &config.options,
        timing: config.timing,
        own_probe: config.reuse_connections,
        until,
    };
    let mut obs = execute::run_until(target.connector(), &mut session.kept, plan);
    obs.spent.generate += encoded;
    obs.spent.journal = journalled;
    if session.kept.as_ref().is_some_and(|k| k.cases > 0) {
        session.cases.truncate(obs.after_cases);
        session.cases.push((sent.case(), case.to_vec()));
    }
    observe_peer(target, watch, &mut obs);
    obs
}

/// What the peer's logs and process say after a case: kernel reports, a crash backtrace, the
/// memory it holds now that the case's connection is closed.
fn observe_peer(target: &mut dyn Target, watch: &mut resources::Watch, obs: &mut Observation) {
    let t = Instant::now();
    if obs.liveness != Liveness::Answered {
        target.settle_logs();
    }
    obs.kernel = kernel_log::reports(&target.kernel_log());
    let peer = target.peer_log();
    obs.crash_site = backtrace::crash_site(&peer);
    watch.peer_logged(&peer);
    if let Some(s) = target.resources() {
        watch.observe(s, obs.connections);
    }
    obs.spent.logs += t.elapsed();
}

/// Replays a reproducer: whether its finding shows again (for a `kernel-panic`, whether the
/// peer crashed or hung; for a crash, at the same site unless either site is unknown; for a
/// `resource-leak`, whether the same quantities grow over [`resources::MIN_CONNECTIONS`] and
/// one more connections of the case, where the peer's memory can be read), and what was observed.
pub fn replay(target: &mut dyn Target, r: &Reproducer, timing: Timing) -> (bool, Option<Kind>, Observation) {
    let options = RunOptions { timeout: timing.reply * 2, ..r.options() };
    // What the logs said before the replay is not its doing.
    target.kernel_log();
    target.peer_log();
    let mut watch = resources::Watch::new(0);
    if let Some(s) = target.resources() {
        watch.observe(s, 0);
    }
    let rounds = if r.kind.class == Class::ResourceLeak { resources::MIN_CONNECTIONS + 1 } else { 1 };
    // The cases the finding needed before it, on its connection, then it on the same one,
    // probed as the run that found it probed them (its reproducer says how: with
    // `--reuse-connections` by a case's own last call where it can, else a NULL after each).
    let mut kept = None;
    let own_probe = r.reuse_connections;
    for (_, c) in &r.preceding {
        execute::run_on(target.connector(), &mut kept, &options, timing, c, own_probe);
    }
    let mut obs = execute::run_on(target.connector(), &mut kept, &options, timing, &r.messages, own_probe);
    drop(kept);
    // One replay: whatever its outcome, the logs are given their moment.
    target.settle_logs();
    observe_peer(target, &mut watch, &mut obs);
    for _ in 1..rounds {
        obs = execute::run(target.connector(), &options, timing, &r.messages);
        target.settle_logs();
        observe_peer(target, &mut watch, &mut obs);
    }
    let got = match watch.take_leak() {
        Some(leak) if r.kind.class == Class::ResourceLeak => {
            Some(Kind { class: Class::ResourceLeak, detail: leak.detail() })
        }
        _ => classify::finding(&obs),
    };
    // Seen from outside, a machine that panics is a peer that crashed or went silent.
    let hit = match (r.kind.class, &got) {
        (Class::KernelPanic, Some(k)) => matches!(k.class, Class::Crash | Class::Hang),
        (Class::Crash, Some(k)) if k.class == Class::Crash => {
            k.detail == r.kind.detail || k.detail.is_empty() || r.kind.detail.is_empty()
        }
        _ => got.as_ref() == Some(&r.kind),
    };
    (hit, got, obs)
}

/// Fuzzes `target` until the time or message limit, an interrupt, or the peer going down for
/// good; `on_finding` sees each new finding as soon as it is minimised.
pub fn run(
    target: &mut dyn Target,
    config: &Config,
    interrupt: &AtomicBool,
    on_finding: impl FnMut(&Finding),
) -> Report {
    run_watched(target, config, interrupt, on_finding, |_| {})
}

/// As [`run`], and `on_progress` sees the report as it stands (ended [`Ended::Running`]) after
/// every case, so a report can be written while the run goes on and outlive its being killed.
pub fn run_watched(
    target: &mut dyn Target,
    config: &Config,
    interrupt: &AtomicBool,
    mut on_finding: impl FnMut(&Finding),
    mut on_progress: impl FnMut(&Report),
) -> Report {
    let started = Instant::now();
    let mut report = Report {
        seed: config.seed,
        peer: target.describe(),
        skipped: config.skip_cases,
        cases: 0,
        messages: 0,
        connections: 0,
        reused: 0,
        own_probes: 0,
        disconnects_rechecked: 0,
        disconnects_not_reproduced_alone: 0,
        disconnects_worse_alone: BTreeMap::new(),
        elapsed: Duration::ZERO,
        minimising: Duration::ZERO,
        spent: Spent::default(),
        outcomes: Liveness::ALL.iter().map(|l| (l.name(), 0)).collect(),
        classes: Class::ALL.iter().map(|c| (c.name(), 0)).collect(),
        findings: Vec::new(),
        corpus: 0,
        signatures: 0,
        ended: Ended::Running,
        down: None,
        memory: None,
    };
    let mut watch = resources::Watch::new(config.memory_floor_percent);
    if let Some(s) = target.resources() {
        watch.observe(s, 0);
    }
    // Reachable at all? An empty case connects and sends only the liveness NULL.
    let first = execute_specs(target, config, &mut watch, &[], Sent::Probe { skipped: config.skip_cases }, None, None);
    if first.connect_failed.is_some() {
        report.ended = Ended::Unreachable;
        return report;
    }
    let mut rng = Rng::new(config.seed);
    let mut xid = (config.seed as u32) << 16 | 1;
    let mut corpus: Vec<Vec<Spec>> = Vec::new();
    let mut seen_signatures: HashSet<u64> = HashSet::new();
    let mut seen_kinds: HashSet<Kind> = HashSet::new();
    // Cases go on over one connection while it stays healthy; the first after a resume
    // (`skip_cases`) opens a fresh one.
    let mut session = Session::default();
    // Skipped cases are drawn as a run would draw them, with nothing learnt from answers.
    for _ in 0..config.skip_cases {
        next_case(&mut rng, &mut xid, &corpus);
    }
    loop {
        if interrupt.load(Ordering::SeqCst) {
            report.ended = Ended::Interrupted;
            break;
        }
        if config.duration.is_some_and(|d| started.elapsed() >= d) {
            report.ended = Ended::Time;
            break;
        }
        if config.stop_after_findings.is_some_and(|n| report.findings.len() >= n) {
            report.ended = Ended::Findings;
            break;
        }
        if config.max_messages.is_some_and(|m| report.messages >= m) {
            report.ended = Ended::Messages;
            break;
        }
        let t = Instant::now();
        let case = next_case(&mut rng, &mut xid, &corpus);
        let drawn = t.elapsed();
        let case_no = config.skip_cases + report.cases + 1;
        let obs = execute_specs(target, config, &mut watch, &case, Sent::Case(case_no), Some(&mut session), None);
        let t = Instant::now();
        report.cases += 1;
        report.messages += obs.sent as u64;
        report.connections += obs.connections;
        report.reused += u64::from(obs.after_cases > 0);
        report.own_probes += u64::from(obs.own_probe);
        *report.outcomes.entry(obs.liveness.name()).or_default() += 1;
        let mut new = false;
        for s in classify::signatures(&obs) {
            new |= seen_signatures.insert(s);
        }
        if new && config.feedback {
            if corpus.len() < 512 {
                corpus.push(case.clone());
            } else {
                let i = rng.below(corpus.len());
                corpus[i] = case.clone();
            }
        }
        let mut finding = classify::finding(&obs);
        let mut sick = unwell(&obs);
        report.spent.add(&obs.spent);
        report.spent.generate += drawn + t.elapsed();
        // A drop of a kept connection the earlier cases on it may have caused: the case alone,
        // on a fresh connection, decides (its time counted as minimisation's).
        let mut obs = obs;
        if classify::disconnect_but_for_earlier(&obs) {
            let t = Instant::now();
            report.disconnects_rechecked += 1;
            session = Session::default();
            let again = recheck_alone(target, config, &mut watch, &case[..obs.sent], case_no, sick);
            report.minimising += t.elapsed();
            match again {
                Err(why) => {
                    report.end_down(Some(why), interrupt);
                    break;
                }
                Ok(a) => {
                    sick = unwell(&a);
                    // The drop repeated, or the case alone did worse: found from the re-check.
                    match classify::recheck_finding(&a) {
                        Some(kind) => {
                            if kind.class != Class::Disconnect {
                                *report.disconnects_worse_alone.entry(kind.class.name()).or_default() += 1;
                            }
                            finding = Some(kind);
                            obs = a;
                        }
                        None => report.disconnects_not_reproduced_alone += 1,
                    }
                }
            }
        }
        if let Some(kind) = &finding {
            *report.classes.entry(kind.class.name()).or_default() += 1;
        }
        if finding.is_some() {
            // A new kind is minimised (the peer restarted between trials) and a restarted peer
            // has no connection of ours: the next case then opens a fresh one.
            if let Some(kind) = finding.clone().filter(|k| !seen_kinds.contains(k)) {
                seen_kinds.insert(kind.clone());
                let preceding = session.preceding(&obs);
                session = Session::default();
                let t = Instant::now();
                let (f, after) = minimise_finding(
                    target,
                    config,
                    &mut watch,
                    interrupt,
                    (&case, case_no, preceding),
                    kind,
                    obs,
                    report.messages,
                );
                report.minimising += t.elapsed();
                on_finding(&f);
                report.findings.push(f);
                // A costly restart only when the last case minimisation sent left the peer
                // unwell: a violation leaves it answering as it was. A restart that failed
                // during minimisation, or fails now, ends the run at once: no case is sent
                // into a dead peer, each to cost a timeout.
                let t = Instant::now();
                let down = match after {
                    PeerAfter::Down(why) => Some(why),
                    PeerAfter::Unwell | PeerAfter::Well if !target.can_restart() => None,
                    PeerAfter::Unwell => revive(target, config, None).down(),
                    PeerAfter::Well if target.cheap_restart() => revive(target, config, None).down(),
                    PeerAfter::Well => None,
                };
                report.spent.restart += t.elapsed();
                if down.is_some() {
                    report.end_down(down, interrupt);
                    break;
                }
            } else if target.can_restart() && (target.cheap_restart() || sick) {
                let t = Instant::now();
                session = Session::default();
                let revived = revive(target, config, None);
                report.spent.restart += t.elapsed();
                if let Some(why) = revived.down() {
                    report.end_down(Some(why), interrupt);
                    break;
                }
            }
        }
        // Memory kept per connection, seen over this case or the minimisation after it.
        if let Some(leak) = watch.take_leak() {
            let kind = Kind { class: Class::ResourceLeak, detail: leak.detail() };
            *report.classes.entry(kind.class.name()).or_default() += 1;
            if seen_kinds.insert(kind.clone()) {
                let f = leak_finding(target, config, kind, &leak, case_no, case.len(), report.messages);
                on_finding(&f);
                report.findings.push(f);
            }
        }
        if !target.can_restart() && report.outcomes.get("refused").copied().unwrap_or(0) > 0 {
            report.ended = Ended::PeerDown;
            break;
        }
        report.elapsed = started.elapsed();
        report.corpus = corpus.len();
        report.signatures = seen_signatures.len();
        report.memory = watch.last.is_some().then(|| watch.clone());
        let t = Instant::now();
        on_progress(&report);
        report.spent.report += t.elapsed();
    }
    report.elapsed = started.elapsed();
    report.memory = watch.last.is_some().then_some(watch);
    report.corpus = corpus.len();
    report.signatures = seen_signatures.len();
    report
}

/// The next case of the sequence: mostly a mutation of the corpus once there is one, else
/// fresh messages.
fn next_case(rng: &mut Rng, xid: &mut u32, corpus: &[Vec<Spec>]) -> Vec<Spec> {
    let mut next_xid = || {
        *xid = xid.wrapping_add(1);
        *xid
    };
    if !corpus.is_empty() && rng.chance(4, 5) {
        let mut c = corpus[rng.below(corpus.len())].clone();
        let donor = corpus[rng.below(corpus.len())].clone();
        mutate::mutate(rng, &mut c, Some(&donor), &mut next_xid);
        c
    } else {
        (0..1 + rng.below(mutate::MAX_MESSAGES)).map(|_| generate::message(rng, next_xid())).collect()
    }
}

/// Whether a case left the peer in need of a restart: not answering, its kernel reporting a
/// bug of its own other than a warning (an oops or a `BUG` kills the task, a warning does
/// not), or its crash handler writing a backtrace.
fn unwell(obs: &Observation) -> bool {
    obs.liveness != Liveness::Answered || !kernel_log::only_warnings(&obs.kernel) || obs.crash_site.is_some()
}

/// Sends `messages` (a case that dropped a kept connection after earlier cases on it sent
/// something malformed or left a call unanswered) again, alone on a fresh connection, as its
/// reproducer would replay them; the peer brought back first where it can be (always where a
/// restart is cheap, when `sick` where it is costly). Err: the peer could not be (why).
fn recheck_alone(
    target: &mut dyn Target,
    config: &Config,
    watch: &mut resources::Watch,
    messages: &[Spec],
    case_no: u64,
    sick: bool,
) -> Result<Observation, String> {
    let sent = Sent::Recheck { case: case_no };
    if !target.can_restart() {
        return Ok(execute_specs(target, config, watch, messages, sent, None, None));
    }
    let mut trials = Trials { sick, down: None, out_of_time: false };
    // No deadline: nothing is cut, so only a peer that is down gives no observation.
    let why = "the peer could not be restarted for a re-check";
    let o = trials.run(target, config, watch, messages, sent, None);
    o.ok_or_else(|| trials.down.clone().unwrap_or_else(|| why.into()))
}

/// The finding for memory kept per connection. Its reproducer is one connection that sends
/// nothing but the liveness NULL: every connection was counted, whatever it carried, and
/// `replay` repeats it while watching the peer's memory.
fn leak_finding(
    target: &mut dyn Target,
    config: &Config,
    kind: Kind,
    leak: &resources::Leak,
    case_no: u64,
    case_len: usize,
    after_messages: u64,
) -> Finding {
    let reproducer = reproducer(config, target, case_no, kind, leak.describe(), case_len, Vec::new());
    Finding { reproducer, after_messages, minimised: false }
}

/// How bringing the peer back went ([`revive`]).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Revived {
    Up,
    /// Cut short by minimisation's deadline: the restart killed or the probe's waits cut, so
    /// the peer's state is unknown (it is restarted again, with its own bound, before the run
    /// goes on).
    OutOfTime,
    /// Not back: the restart failed (its exit status, or killed at `--restart-timeout`), or
    /// the peer did not answer the liveness probe after it. Why.
    Down(String),
}

impl Revived {
    fn down(self) -> Option<String> {
        match self {
            Revived::Down(why) => Some(why),
            _ => None,
        }
    }
}

/// Restarts the peer and, where a restart is costly (a command: its exit 0 is its word, not
/// proof), checks that the peer answers a NULL on a fresh connection after it. `until`: a
/// deadline (minimisation's) the restart and the probe are cut at, the restart killed.
fn revive(target: &mut dyn Target, config: &Config, until: Option<Instant>) -> Revived {
    if target.cheap_restart() {
        return if target.restart() { Revived::Up } else { Revived::Down("the peer could not be restarted".into()) };
    }
    let left = until.map(|u| u.saturating_duration_since(Instant::now()));
    if left.is_some_and(|l| l.is_zero()) {
        return Revived::OutOfTime;
    }
    // Cut by the deadline rather than by the restart's own bound.
    let cut = match (left, target.restart_bound()) {
        (Some(l), Some(b)) => l < b,
        (Some(_), None) => true,
        (None, _) => false,
    };
    if let Err(why) = target.restart_within(if cut { left } else { None }) {
        // Killed at the deadline, or failed by itself before it.
        let killed = cut && until.is_some_and(|u| Instant::now() >= u);
        return if killed { Revived::OutOfTime } else { Revived::Down(why) };
    }
    // Lines the probe makes the peer log count for the next case, as between cases.
    let plan = execute::Plan { case: &[], options: &config.options, timing: config.timing, own_probe: false, until };
    let probe = execute::run_until(target.connector(), &mut None, plan);
    match probe.liveness {
        Liveness::Answered => Revived::Up,
        _ if probe.cut => Revived::OutOfTime,
        l => Revived::Down(format!(
            "the peer did not answer a NULL on a fresh connection after the restart (liveness {}{})",
            l.name(),
            probe.connect_failed.map_or(String::new(), |e| format!(": connect failed: {e}"))
        )),
    }
}

/// The peer as a finding's minimisation leaves it.
#[derive(Debug, Clone, PartialEq, Eq)]
enum PeerAfter {
    /// The last case sent left it answering.
    Well,
    /// The last case sent left it unwell, or a restart was cut short by the deadline: it needs
    /// a restart before the run goes on.
    Unwell,
    /// A restart failed: the run ends (why).
    Down(String),
}

/// The peer across a finding's trials: restarted before a trial when it needs it (before
/// every trial where a restart is cheap, after one that left it unwell where it is costly),
/// and whether a restart failed.
struct Trials {
    sick: bool,
    down: Option<String>,
    /// A trial or a restart was cut short by the deadline: no more trials.
    out_of_time: bool,
}

impl Trials {
    /// Runs case `c` as trial `sent` on a fresh connection, the peer brought back first when
    /// it needs it, the restart and the case's waits ending by `until`. None when there was no
    /// trial (the peer is down, or time ran out) or its outcome rests on a wait the deadline
    /// cut (a peer that did not answer within shortened waits may only be slow).
    fn run(
        &mut self,
        target: &mut dyn Target,
        config: &Config,
        watch: &mut resources::Watch,
        c: &[Spec],
        sent: Sent,
        until: Option<Instant>,
    ) -> Option<Observation> {
        if !self.ready(target, config, until) {
            return None;
        }
        let o = execute_specs(target, config, watch, c, sent, None, until);
        self.sick = unwell(&o);
        if o.cut {
            self.out_of_time = true;
            return None;
        }
        Some(o)
    }

    /// Before a trial: the peer brought back when it needs it, by `until`. False when it is
    /// not (down, or out of time) or an earlier trial found it so.
    fn ready(&mut self, target: &mut dyn Target, config: &Config, until: Option<Instant>) -> bool {
        if self.down.is_some() || self.out_of_time {
            return false;
        }
        if target.cheap_restart() || self.sick {
            match revive(target, config, until) {
                Revived::Up => self.sick = false,
                Revived::OutOfTime => {
                    (self.sick, self.out_of_time) = (true, true);
                    return false;
                }
                Revived::Down(why) => {
                    (self.sick, self.down) = (true, Some(why));
                    return false;
                }
            }
        }
        true
    }

    /// How the trials leave the peer.
    fn after(&self) -> PeerAfter {
        match &self.down {
            Some(why) => PeerAfter::Down(why.clone()),
            None if self.sick => PeerAfter::Unwell,
            None => PeerAfter::Well,
        }
    }
}

/// Minimises a new finding (only on targets that can restart the peer between trials) and
/// builds its reproducer; and how the trials left the peer. A restart that fails (or a peer
/// that does not answer after it) stops minimising at once: the finding keeps the smallest
/// case that showed it so far, its reproducer says minimising was cut short and why.
#[allow(clippy::too_many_arguments)]
fn minimise_finding(
    target: &mut dyn Target,
    config: &Config,
    watch: &mut resources::Watch,
    interrupt: &AtomicBool,
    (case, case_no, preceding): (&[Spec], u64, Vec<Numbered>),
    kind: Kind,
    obs: Observation,
    after_messages: u64,
) -> (Finding, PeerAfter) {
    let sent = obs.sent.max(1).min(case.len());
    let encode = |cases: &[Numbered]| -> Vec<(u64, Vec<input::Wire>)> {
        cases.iter().map(|(n, c)| (*n, c.iter().map(Spec::encode).collect())).collect()
    };
    let mut trials = Trials { sick: unwell(&obs), down: None, out_of_time: false };
    let shows = |o: &Option<Observation>| o.as_ref().is_some_and(|o| classify::finding(o).as_ref() == Some(&kind));
    // Found on a connection earlier cases went over: does the case show it alone, on a fresh
    // connection? Else the messages of the cases just before it and its own, sent as one case
    // (at most FLAT_MESSAGES, well under the credits we ask for), which then is minimised? If
    // neither, its reproducer is the case after those cases, each as the run sent it.
    let mut start = case[..sent].to_vec();
    if !preceding.is_empty() && target.can_restart() {
        let mut flat = start.clone();
        for (_, c) in preceding.iter().rev() {
            if flat.len() + c.len() > FLAT_MESSAGES {
                break;
            }
            flat.splice(0..0, c.iter().cloned());
        }
        let trial0 = Sent::Trial { case: case_no, trial: 0 };
        let alone = shows(&trials.run(target, config, watch, &start, trial0, None));
        if !alone
            && flat.len() > start.len()
            && shows(&trials.run(target, config, watch, &flat, Sent::Trial { case: case_no, trial: 0 }, None))
        {
            start = flat;
        } else if !alone {
            // The cases in a row on one connection: the first brings the peer back if need be.
            let mut again = None;
            if trials.ready(target, config, None) {
                let mut session = Session::default();
                for (i, (_, c)) in preceding.iter().chain([(case_no, case[..sent].to_vec())].iter()).enumerate() {
                    let trial = Sent::Trial { case: case_no, trial: i + 1 };
                    again = Some(execute_specs(target, config, watch, c, trial, Some(&mut session), None));
                }
            }
            if let Some(a) = &again {
                trials.sick = unwell(a);
            }
            let ok = shows(&again);
            let observed = if ok { again.expect("it showed") } else { obs };
            let messages = case[..sent].iter().map(Spec::encode).collect();
            let mut r = reproducer(config, target, case_no, kind, describe(&observed), case.len(), messages);
            r.preceding = encode(&preceding);
            r.cut_short = trials.down.clone();
            return (Finding { reproducer: r, after_messages, minimised: ok }, trials.after());
        }
    }
    // A peer the case left unwell is brought back first, with the restart's own bound (the run
    // would restart it as much without minimising): a peer that cannot be is down at once, and
    // the time limit then bounds the trials, each trial's restart and waits included.
    let (min, observed, minimised) =
        if target.can_restart() && (target.cheap_restart() || trials.ready(target, config, None)) {
            let mut last: Option<Observation> = None;
            let until = Instant::now() + config.minimise_time;
            let mut trial = 0;
            let min = minimise::minimise(&start, config.minimise_budget, |c| {
                // Interrupted, out of time or the peer down: keep what is minimised so far.
                if interrupt.load(Ordering::SeqCst) || Instant::now() >= until {
                    return false;
                }
                trial += 1;
                let o = trials.run(target, config, watch, c, Sent::Trial { case: case_no, trial }, Some(until));
                let hit = shows(&o);
                if hit {
                    last = o;
                }
                hit
            });
            // Confirm the minimised case once more on a fresh peer (its restart bounded by its own
            // bound, not the deadline).
            trials.out_of_time = false;
            let o = trials.run(target, config, watch, &min, Sent::Trial { case: case_no, trial: 0 }, None);
            let ok = shows(&o);
            let o = if ok { o.expect("it showed") } else { last.unwrap_or(obs) };
            (min, o, ok)
        } else {
            (case[..sent].to_vec(), obs, false)
        };
    let messages = min.iter().map(Spec::encode).collect();
    let mut reproducer = reproducer(config, target, case_no, kind, describe(&observed), case.len(), messages);
    reproducer.cut_short = trials.down.clone();
    // Not tried alone (the peer cannot be restarted): the cases before it come with it.
    if !target.can_restart() {
        reproducer.preceding = encode(&preceding);
    }
    (Finding { reproducer, after_messages, minimised }, trials.after())
}

/// A finding's reproducer: the run's seed and connection settings, the case, what was seen.
fn reproducer(
    config: &Config,
    target: &dyn Target,
    case: u64,
    kind: Kind,
    observed: String,
    original_messages: usize,
    messages: Vec<input::Wire>,
) -> Reproducer {
    Reproducer {
        tool_version: config.tool_version.clone(),
        seed: config.seed,
        case,
        peer: target.describe(),
        receive_size: config.options.receive_size,
        send_size: config.options.send_size,
        credits: config.options.credits_requested,
        kind,
        observed,
        original_messages,
        messages,
        preceding: Vec::new(),
        reuse_connections: config.reuse_connections,
        profile: config.options.profile,
        cut_short: None,
    }
}
