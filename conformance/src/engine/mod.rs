//! The engine: runs checks (scripted scenarios) against a peer through a [`Connector`] and
//! turns each into a [`CheckResult`]. A peer that hangs, disconnects or sends garbage ends a
//! check with a verdict; it never hangs or crashes the run.

pub mod ctx;
pub mod expect;
pub mod health;
pub mod mismatch;

use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

pub use ctx::{CmExchange, Ctx, Direction, RdmaOp, Received, TranscriptEntry, Wire};
pub use health::{DownKind, PeerDown, PeerState};
pub use mismatch::{Mismatch, NoMessage};
use rpcrdma_codec::check::KeyWord;

use rpcrdma_peers::proto::nfs3::ROOT_FH;
use rpcrdma_peers::transport::Connector;

/// How a check ended (pynfs/Autobahn-style classes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Outcome {
    /// The peer did what the requirement says.
    Pass,
    /// The peer deviated from a SHOULD or MAY; counted as a failure under `--strict`.
    PassLax,
    /// The peer broke the requirement.
    Fail,
    /// The peer does not implement the optional feature the check needs.
    Unsupported,
    /// Not run (deselected, a prerequisite failed, or the run was interrupted).
    Skipped,
    /// Run, but not judged: the event that gives the peer its chance to break the statement
    /// (the check's [`CheckInfo::precondition`]) did not happen, so a pass would say nothing.
    /// Counted as a failure under `--strict`.
    Inconclusive,
    /// Not judged: the check itself broke (its scenario panicked). A defect of the harness,
    /// never counted against the peer.
    Error,
}

impl Outcome {
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Pass => "pass",
            Outcome::PassLax => "pass-lax",
            Outcome::Fail => "fail",
            Outcome::Unsupported => "unsupported",
            Outcome::Skipped => "skipped",
            Outcome::Inconclusive => "inconclusive",
            Outcome::Error => "error",
        }
    }
}

/// What happened, as a check saw it: a typed mismatch from a matcher, or the check's words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Actual {
    Note(String),
    Mismatch(Mismatch),
}

impl fmt::Display for Actual {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Actual::Note(s) => f.write_str(s),
            Actual::Mismatch(m) => write!(f, "{m}"),
        }
    }
}

impl From<String> for Actual {
    fn from(s: String) -> Self {
        Actual::Note(s)
    }
}

impl From<&str> for Actual {
    fn from(s: &str) -> Self {
        Actual::Note(s.to_string())
    }
}

impl From<&String> for Actual {
    fn from(s: &String) -> Self {
        Actual::Note(s.clone())
    }
}

impl From<Mismatch> for Actual {
    fn from(m: Mismatch) -> Self {
        Actual::Mismatch(m)
    }
}

/// What a scenario concluded: the outcome with what was expected and what happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    pub outcome: Outcome,
    pub expected: String,
    pub actual: Actual,
}

impl Verdict {
    fn new(outcome: Outcome, expected: impl Into<String>, actual: impl Into<Actual>) -> Self {
        Verdict { outcome, expected: expected.into(), actual: actual.into() }
    }

    pub fn pass(expected: impl Into<String>, actual: impl Into<Actual>) -> Self {
        Verdict::new(Outcome::Pass, expected, actual)
    }

    pub fn fail(expected: impl Into<String>, actual: impl Into<Actual>) -> Self {
        Verdict::new(Outcome::Fail, expected, actual)
    }

    pub fn lax(expected: impl Into<String>, actual: impl Into<Actual>) -> Self {
        Verdict::new(Outcome::PassLax, expected, actual)
    }

    pub fn unsupported(expected: impl Into<String>, actual: impl Into<Actual>) -> Self {
        Verdict::new(Outcome::Unsupported, expected, actual)
    }

    /// The check's precondition did not happen: `why` says what was missing.
    pub fn inconclusive(expected: impl Into<String>, why: impl Into<Actual>) -> Self {
        Verdict::new(Outcome::Inconclusive, expected, why)
    }
}

/// What a check body returns. A step that cannot go on ends the check early with `?`: its
/// error is the verdict (a failure, or unsupported).
pub type Judged = Result<Verdict, Verdict>;

/// Turns a matcher's mismatch into a failed verdict, for `?`:
/// `expect::err_chunk(&got, xid).or_fail(want)?`.
pub trait OrFail<T> {
    fn or_fail(self, expected: &str) -> Result<T, Verdict>;
}

impl<T, E: Into<Actual>> OrFail<T> for Result<T, E> {
    fn or_fail(self, expected: &str) -> Result<T, Verdict> {
        self.map_err(|m| Verdict::fail(expected, m))
    }
}

/// What every check declares about itself, once: its ID, the requirement it judges and how,
/// and the fault switches of the reference peer that must break it.
#[derive(Debug, Clone, Copy)]
pub struct CheckInfo {
    /// Stable ID from the spec section: `rfc8166/4.5.1/vers-mismatch`.
    pub id: &'static str,
    /// The statements of the requirements matrix this check judges (`rfc8166/4.5.1#1`), `~`
    /// before one it judges only in part. The matrix's `checks` column is derived from these,
    /// and the quote and key word a check shows come from the matrix ([`CheckInfo::requirement`]):
    /// one source, tested verbatim against the specs.
    pub judges: &'static [&'static str],
    /// The outcomes that pass, in words.
    pub acceptable: &'static str,
    /// Why the check matters, in one line.
    pub rationale: &'static str,
    /// Groups for selection (`header`, `chunks`, `credits`, ...).
    pub groups: &'static [&'static str],
    /// Proof that the check bites: each fault switch of the reference peer (the responder's
    /// for server checks, the requester's for client checks) that breaks the requirement,
    /// with the outcome it must produce.
    pub broken_by: &'static [(&'static str, Outcome)],
    /// The event that gives the peer its chance to break the requirement (a call after a
    /// grant of 0, more than one call outstanding, ...), when the check's scenario cannot
    /// make it happen by itself. A run whose transcript lacks it is
    /// [`Outcome::Inconclusive`], never a pass.
    pub precondition: Option<&'static str>,
}

impl CheckInfo {
    /// The statements this check judges: (ID, whether only in part), as declared.
    pub fn judged(&self) -> impl Iterator<Item = (&'static str, bool)> {
        self.judges.iter().map(|j| match j.strip_prefix('~') {
            Some(id) => (id, true),
            None => (*j, false),
        })
    }

    /// The requirement as the matrix quotes it: the text of each statement judged in full,
    /// then (marked) those judged in part, each with its ID.
    pub fn requirement(&self) -> String {
        let mut parts: Vec<(bool, String)> = self
            .judged()
            .filter_map(|(id, partial)| {
                let r = crate::requirements::by_id(id)?;
                Some((partial, format!("{} ({id}{})", r.text, if partial { ", in part" } else { "" })))
            })
            .collect();
        parts.sort_by_key(|(partial, _)| *partial);
        parts.into_iter().map(|(_, t)| t).collect::<Vec<_>>().join(" ... ")
    }

    /// The strongest key word among the statements judged in full (in part when none is).
    pub fn key_word(&self) -> KeyWord {
        let of = |partial: bool| {
            self.judged()
                .filter(|(_, p)| *p == partial)
                .filter_map(|(id, _)| crate::requirements::by_id(id).and_then(|r| key_word_of(&r.key_word)))
                .min_by_key(|k| strength(*k))
        };
        of(false).or_else(|| of(true)).unwrap_or(KeyWord::May)
    }

    /// The spec section part of the ID: `rfc8166/4.5.1`.
    pub fn section(&self) -> &'static str {
        self.id.rsplit_once('/').map_or(self.id, |(s, _)| s)
    }
}

/// One server check: a scenario played against a responder.
#[derive(Debug, Clone, Copy)]
pub struct Check {
    pub info: CheckInfo,
    pub run: fn(&mut Ctx) -> Judged,
}

/// The result of one check.
#[derive(Debug, Clone)]
pub struct CheckResult {
    pub check: &'static CheckInfo,
    pub outcome: Outcome,
    pub expected: String,
    pub actual: Actual,
    /// Whether a liveness NULL after the check was answered, when one was sent.
    pub connection_survived: Option<bool>,
    pub transcript: Vec<TranscriptEntry>,
    pub duration: Duration,
    /// Whether the peer outlived the check ([`health`]).
    pub peer: PeerState,
}

impl CheckResult {
    /// A failure found beside the check's own verdict (the peer's log, how the conversation
    /// went): the result fails, a failure's own reason kept first. A check that was not run
    /// or broke stays as it is: nothing was judged to fail.
    pub fn fail_beside(&mut self, why: &str) {
        if matches!(self.outcome, Outcome::Skipped | Outcome::Error) {
            return;
        }
        let said = if self.outcome == Outcome::Fail { self.actual.to_string() } else { String::new() };
        let sep = if said.is_empty() { "" } else { "; " };
        self.actual = Actual::Note(format!("{said}{sep}{why}"));
        self.outcome = Outcome::Fail;
    }

    /// A result for a check that did not run.
    pub fn skipped(check: &'static CheckInfo, why: &str) -> Self {
        CheckResult {
            check,
            outcome: Outcome::Skipped,
            expected: String::new(),
            actual: Actual::Note(why.into()),
            connection_survived: None,
            transcript: Vec::new(),
            duration: Duration::ZERO,
            peer: PeerState::default(),
        }
    }
}

/// Run-wide settings.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Deadline for each expected reply.
    pub timeout: Duration,
    /// How long "no reply" checks wait for silence.
    pub silence: Duration,
    /// Receive buffer size we post and advertise (RFC 8797 Receive Size).
    pub receive_size: u32,
    /// Send size we advertise.
    pub send_size: u32,
    /// Credits we request in calls.
    pub credits_requested: u32,
    /// The export's root file handle, from which every check looks up the test files: what
    /// the peer's MOUNT service returned (RFC 1813 appendix I, MOUNTPROC3_MNT), or given; the
    /// embedded reference responder's is [`ROOT_FH`].
    pub root_fh: Vec<u8>,
    /// After a restart of a peer that went down, how long to wait for it to answer.
    pub restart_wait: Duration,
    /// A flag a signal sets (the harness's SIGINT/SIGTERM): every wait for the peer then ends
    /// within a tenth of a second, and the check under way is skipped as interrupted, not
    /// judged on a wait cut short.
    pub interrupt: Option<&'static AtomicBool>,
}

impl RunOptions {
    /// Whether the interrupt flag is set.
    pub fn interrupted(&self) -> bool {
        self.interrupt.is_some_and(|f| f.load(std::sync::atomic::Ordering::SeqCst))
    }
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            timeout: Duration::from_secs(2),
            silence: Duration::from_millis(300),
            receive_size: 4096,
            send_size: 4096,
            credits_requested: 32,
            root_fh: ROOT_FH.to_vec(),
            restart_wait: Duration::from_secs(30),
            interrupt: None,
        }
    }
}

/// Runs one check on a fresh context; a panic inside a scenario is the harness's error, not
/// the peer's failure.
pub fn run_check(check: &'static Check, connector: &mut dyn Connector, options: &RunOptions) -> CheckResult {
    let started = Instant::now();
    let mut ctx = Ctx::new(connector, options.clone());
    let verdict = catch_unwind(AssertUnwindSafe(|| (check.run)(&mut ctx)))
        .unwrap_or_else(|panic| {
            let why = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "unknown panic".into());
            Err(Verdict::new(
                Outcome::Error,
                "the scenario to complete",
                format!("the harness broke, not the peer: the scenario panicked: {why}"),
            ))
        })
        .unwrap_or_else(|v| v);
    let cut = ctx.cut_short();
    let (transcript, survived, sign) = ctx.finish();
    if cut {
        // A wait the signal ended says nothing about the peer: not judged, and no probe.
        return CheckResult {
            transcript,
            duration: started.elapsed(),
            ..CheckResult::skipped(
                &check.info,
                "interrupted: the signal cut the check's wait short, so it was not judged",
            )
        };
    }
    CheckResult {
        check: &check.info,
        outcome: verdict.outcome,
        expected: verdict.expected,
        actual: verdict.actual,
        connection_survived: survived,
        transcript,
        duration: started.elapsed(),
        peer: PeerState { sign, ..PeerState::default() },
    }
}

/// Where [`run_checks`] is, for a progress display.
#[derive(Debug)]
pub enum Step<'a> {
    /// Check `i` starts now: the interrupt flag was clear when it was read.
    Starting(usize),
    /// Check `i` ended (or was skipped) with this result.
    Finished(usize, &'a CheckResult),
}

/// Runs `checks` in order, telling `progress` as each starts and ends. A set `interrupt` flag
/// skips the rest, so an interrupted run still ends with a complete report. The peer is
/// probed after a check that saw it go quiet or away, and a peer that went down leaves the
/// rest not run ([`health::run_watched`], which also restarts a peer).
pub fn run_checks(
    checks: &[&'static Check],
    mut connector: &mut dyn Connector,
    options: &RunOptions,
    interrupt: &AtomicBool,
    progress: impl FnMut(Step<'_>),
) -> Vec<CheckResult> {
    health::run_watched(checks, &mut connector, options, interrupt, progress)
}

/// A matrix key word as the codec's [`KeyWord`] (lowercase as uppercase; REQUIRED and SHALL
/// as MUST, RECOMMENDED as SHOULD, RFC 2119).
fn key_word_of(s: &str) -> Option<KeyWord> {
    Some(match s.to_ascii_uppercase().as_str() {
        "MUST" | "REQUIRED" | "SHALL" => KeyWord::Must,
        "MUST NOT" | "SHALL NOT" => KeyWord::MustNot,
        "SHOULD" | "RECOMMENDED" => KeyWord::Should,
        "SHOULD NOT" | "NOT RECOMMENDED" => KeyWord::ShouldNot,
        "MAY" => KeyWord::May,
        "OPTIONAL" => KeyWord::Optional,
        _ => return None,
    })
}

/// Strongest first: absolute requirements, then recommendations, then permissions.
fn strength(k: KeyWord) -> u8 {
    match k {
        KeyWord::MustNot | KeyWord::Must => 0,
        KeyWord::ShouldNot | KeyWord::Should => 1,
        KeyWord::May | KeyWord::Optional => 2,
    }
}

#[cfg(test)]
mod key_word_tests {
    use super::*;

    fn info(judges: &'static [&'static str]) -> CheckInfo {
        CheckInfo {
            id: "x/1/y",
            judges,
            acceptable: "",
            rationale: "",
            groups: &[],
            broken_by: &[],
            precondition: None,
        }
    }

    // rfc8166/3.3.1#2 is a MUST NOT, #3 a MAY; v2-01/4.2.2#1 says REQUIRED (RFC 2119: MUST).
    #[test]
    fn the_key_word_is_the_strongest_judged_in_full() {
        assert_eq!(info(&["rfc8166/3.3.1#3", "rfc8166/3.3.1#2"]).key_word(), KeyWord::MustNot);
        assert_eq!(info(&["rfc8166/3.3.1#3", "~rfc8166/3.3.1#2"]).key_word(), KeyWord::May);
        assert_eq!(info(&["~rfc8166/3.3.1#2"]).key_word(), KeyWord::MustNot);
        assert_eq!(info(&["v2-01/4.2.2#1"]).key_word(), KeyWord::Must);
        let q = info(&["rfc8166/3.3.1#3", "~rfc8166/3.3.1#2"]).requirement();
        assert!(q.starts_with("The requested and granted credit values MAY"), "{q}");
        assert!(q.ends_with("(rfc8166/3.3.1#2, in part)"), "{q}");
    }
}
