//! A structure-aware fuzzer for RPC-over-RDMA responders: it generates and mutates transport
//! headers, chunk lists, the forbidden and Version Two forms and RPC calls with the codec's
//! builders ([`input`], [`generate`], [`mutate`]), backs every segment with real registered
//! memory fenced by guard bytes, and after each case classifies the peer with a liveness NULL
//! ([`execute`], [`classify`]). Inputs whose replies look new (a signature of each reply's
//! shape) join a corpus that later cases mutate preferentially. Every new kind of finding is
//! minimised ([`minimise`]) and handed back as a [`reproducer::Reproducer`] that `replay`
//! runs again.

pub mod classify;
pub mod execute;
pub mod generate;
pub mod input;
pub mod journal;
pub mod kernel_log;
pub mod minimise;
pub mod mutate;
pub mod reproducer;
pub use rpcrdma_peers::rng;

use std::collections::{BTreeMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rpcrdma_peers::responder::{Config as ResponderConfig, Faults, Responder};
use rpcrdma_peers::transport::emulated::EmulatedConnector;
use rpcrdma_peers::transport::Connector;

pub use classify::{Class, Kind};
pub use execute::{Liveness, Observation, Timing};
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
    /// The peer's kernel log lines since the last call, where it can be read.
    fn kernel_log(&mut self) -> Vec<String> {
        Vec::new()
    }
}

/// The embedded reference responder over the emulated fabric, brought up afresh on restart;
/// `faults` make it misbehave (crash-like ones included) to prove the fuzzer finds them.
pub struct Embedded {
    faults: Faults,
    connector: EmulatedConnector<Responder>,
}

impl Embedded {
    pub fn new(faults: Faults) -> Self {
        let config = ResponderConfig { faults: faults.clone(), ..ResponderConfig::default() };
        Embedded { faults, connector: EmulatedConnector::new(Responder::reference(config)) }
    }
}

impl Target for Embedded {
    fn connector(&mut self) -> &mut dyn Connector {
        &mut self.connector
    }
    fn restart(&mut self) -> bool {
        *self = Embedded::new(self.faults.clone());
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
    pub elapsed: Duration,
    /// Of `elapsed`, the time spent minimising findings.
    pub minimising: Duration,
    /// Cases per liveness outcome.
    pub outcomes: BTreeMap<&'static str, u64>,
    /// Cases per finding class (every occurrence, not only new kinds).
    pub classes: BTreeMap<&'static str, u64>,
    pub findings: Vec<Finding>,
    pub corpus: usize,
    pub signatures: usize,
    pub ended: Ended,
}

impl Report {
    /// Fuzz messages per second of fuzzing (minimisation not counted).
    pub fn messages_per_second(&self) -> f64 {
        let s = self.elapsed.saturating_sub(self.minimising).as_secs_f64();
        if s > 0.0 {
            self.messages as f64 / s
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
        for v in classify::reply_violations(f) {
            parts.push(format!("reply {f} breaks {v}"));
        }
    }
    parts.join("; ")
}

/// Runs a case (specs encoded) against `target`, journalled first when there is a journal.
fn execute_specs(target: &mut dyn Target, config: &Config, case: &[Spec], sent: Sent) -> Observation {
    let wires: Vec<input::Wire> = case.iter().map(Spec::encode).collect();
    if let Some(j) = &config.journal {
        j.append(&journal::line(&journal::reproducer(config, target.describe(), sent, &wires), sent));
    }
    // Lines logged since the last case (late ones of that case included) count for this one:
    // a report is misplaced by a case at worst, never lost.
    let mut obs = execute::run(target.connector(), &config.options, config.timing, &wires);
    obs.kernel = kernel_log::reports(&target.kernel_log());
    obs
}

/// Replays a reproducer: whether its finding shows again (for a `kernel-panic`, whether the
/// peer crashed or hung), and what was observed.
pub fn replay(target: &mut dyn Target, r: &Reproducer, timing: Timing) -> (bool, Option<Kind>, Observation) {
    let options = RunOptions { timeout: timing.reply * 2, ..r.options() };
    // What the kernel logged before the replay is not its doing.
    target.kernel_log();
    let mut obs = execute::run(target.connector(), &options, timing, &r.messages);
    obs.kernel = kernel_log::reports(&target.kernel_log());
    let got = classify::finding(&obs);
    // Seen from outside, a machine that panics is a peer that crashed or went silent.
    let hit = match r.kind.class {
        Class::KernelPanic => got.as_ref().is_some_and(|k| matches!(k.class, Class::Crash | Class::Hang)),
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
    mut on_finding: impl FnMut(&Finding),
) -> Report {
    let started = Instant::now();
    let mut report = Report {
        seed: config.seed,
        peer: target.describe(),
        skipped: config.skip_cases,
        cases: 0,
        messages: 0,
        elapsed: Duration::ZERO,
        minimising: Duration::ZERO,
        outcomes: Liveness::ALL.iter().map(|l| (l.name(), 0)).collect(),
        classes: Class::ALL.iter().map(|c| (c.name(), 0)).collect(),
        findings: Vec::new(),
        corpus: 0,
        signatures: 0,
        ended: Ended::Time,
    };
    // Reachable at all? An empty case connects and sends only the liveness NULL.
    let first = execute_specs(target, config, &[], Sent::Probe { skipped: config.skip_cases });
    if first.connect_failed.is_some() {
        report.ended = Ended::Unreachable;
        return report;
    }
    let mut rng = Rng::new(config.seed);
    let mut xid = (config.seed as u32) << 16 | 1;
    let mut corpus: Vec<Vec<Spec>> = Vec::new();
    let mut seen_signatures: HashSet<u64> = HashSet::new();
    let mut seen_kinds: HashSet<Kind> = HashSet::new();
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
        let case = next_case(&mut rng, &mut xid, &corpus);
        let case_no = config.skip_cases + report.cases + 1;
        let obs = execute_specs(target, config, &case, Sent::Case(case_no));
        report.cases += 1;
        report.messages += obs.sent as u64;
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
        let finding = classify::finding(&obs);
        let obs_liveness = (obs.liveness, obs.kernel.is_empty());
        if let Some(kind) = &finding {
            *report.classes.entry(kind.class.name()).or_default() += 1;
        }
        match finding {
            Some(kind) if seen_kinds.insert(kind.clone()) => {
                let t = Instant::now();
                let f = minimise_finding(target, config, interrupt, &case, kind, obs, case_no, report.messages);
                report.minimising += t.elapsed();
                on_finding(&f);
                report.findings.push(f);
                if !target.restart() && target.can_restart() {
                    report.ended = Ended::PeerDown;
                    break;
                }
            }
            Some(_) if target.can_restart() && (target.cheap_restart() || unwell(&obs_liveness)) => {
                target.restart();
            }
            _ => {}
        }
        if !target.can_restart() && report.outcomes.get("refused").copied().unwrap_or(0) > 0 {
            report.ended = Ended::PeerDown;
            break;
        }
    }
    report.elapsed = started.elapsed();
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

/// Whether a case left the peer in need of a restart: not answering, or its kernel reporting
/// a bug of its own. (`liveness`, whether the kernel logged no report.)
fn unwell(state: &(Liveness, bool)) -> bool {
    state.0 != Liveness::Answered || !state.1
}

/// Minimises a new finding (only on targets that can restart the peer between trials) and
/// builds its reproducer.
#[allow(clippy::too_many_arguments)]
fn minimise_finding(
    target: &mut dyn Target,
    config: &Config,
    interrupt: &AtomicBool,
    case: &[Spec],
    kind: Kind,
    obs: Observation,
    case_no: u64,
    after_messages: u64,
) -> Finding {
    let sent = obs.sent.max(1).min(case.len());
    let (min, observed, minimised) = if target.can_restart() {
        let mut last: Option<Observation> = None;
        let until = Instant::now() + config.minimise_time;
        let mut state = (obs.liveness, obs.kernel.is_empty());
        let mut trial = 0;
        let min = minimise::minimise(&case[..sent], config.minimise_budget, |c| {
            // Interrupted or out of time: keep what is minimised so far.
            if interrupt.load(Ordering::SeqCst) || Instant::now() >= until {
                return false;
            }
            if target.cheap_restart() || unwell(&state) {
                target.restart();
            }
            trial += 1;
            let o = execute_specs(target, config, c, Sent::Trial { case: case_no, trial });
            state = (o.liveness, o.kernel.is_empty());
            let hit = classify::finding(&o).as_ref() == Some(&kind);
            if hit {
                last = Some(o);
            }
            hit
        });
        // Confirm the minimised case once more on a fresh peer.
        if target.cheap_restart() || unwell(&state) {
            target.restart();
        }
        let o = execute_specs(target, config, &min, Sent::Trial { case: case_no, trial: 0 });
        let ok = classify::finding(&o).as_ref() == Some(&kind);
        let o = if ok { o } else { last.unwrap_or(obs) };
        (min, o, ok)
    } else {
        (case[..sent].to_vec(), obs, false)
    };
    let reproducer = Reproducer {
        tool_version: config.tool_version.clone(),
        seed: config.seed,
        case: case_no,
        peer: target.describe(),
        receive_size: config.options.receive_size,
        send_size: config.options.send_size,
        credits: config.options.credits_requested,
        kind,
        observed: describe(&observed),
        original_messages: case.len(),
        messages: min.iter().map(Spec::encode).collect(),
    };
    Finding { reproducer, after_messages, minimised }
}
