//! The engine: runs checks (scripted scenarios) against a peer through a [`Connector`] and
//! turns each into a [`CheckResult`]. A peer that hangs, disconnects or sends garbage ends a
//! check with a verdict; it never hangs or crashes the run.

pub mod ctx;
pub mod expect;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

pub use ctx::{Ctx, Exchange, Received, TranscriptEntry};
use rpcrdma_codec::check::KeyWord;

use crate::transport::Connector;

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
}

impl Outcome {
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Pass => "pass",
            Outcome::PassLax => "pass-lax",
            Outcome::Fail => "fail",
            Outcome::Unsupported => "unsupported",
            Outcome::Skipped => "skipped",
        }
    }
}

/// What a scenario concluded: the outcome with what was expected and what happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    pub outcome: Outcome,
    pub expected: String,
    pub actual: String,
}

impl Verdict {
    pub fn pass(expected: impl Into<String>, actual: impl Into<String>) -> Self {
        Verdict { outcome: Outcome::Pass, expected: expected.into(), actual: actual.into() }
    }

    pub fn fail(expected: impl Into<String>, actual: impl Into<String>) -> Self {
        Verdict { outcome: Outcome::Fail, expected: expected.into(), actual: actual.into() }
    }

    pub fn lax(expected: impl Into<String>, actual: impl Into<String>) -> Self {
        Verdict { outcome: Outcome::PassLax, expected: expected.into(), actual: actual.into() }
    }

    pub fn unsupported(expected: impl Into<String>, actual: impl Into<String>) -> Self {
        Verdict { outcome: Outcome::Unsupported, expected: expected.into(), actual: actual.into() }
    }
}

/// One catalogue entry.
#[derive(Debug, Clone, Copy)]
pub struct Check {
    /// Stable ID from the spec section: `rfc8166/4.5.1/vers-mismatch`.
    pub id: &'static str,
    /// The requirement, quoted from the spec.
    pub requirement: &'static str,
    pub key_word: KeyWord,
    /// The outcomes that pass, in words.
    pub acceptable: &'static str,
    /// Why the check matters, in one line.
    pub rationale: &'static str,
    /// Groups for selection (`header`, `chunks`, `credits`, ...).
    pub groups: &'static [&'static str],
    pub run: fn(&mut Ctx) -> Verdict,
}

impl Check {
    /// The spec section part of the ID: `rfc8166/4.5.1`.
    pub fn section(&self) -> &'static str {
        self.id.rsplit_once('/').map_or(self.id, |(s, _)| s)
    }
}

/// The result of one check.
#[derive(Debug, Clone)]
pub struct CheckResult {
    pub id: &'static str,
    pub key_word: KeyWord,
    pub requirement: &'static str,
    pub outcome: Outcome,
    pub expected: String,
    pub actual: String,
    /// Whether a liveness NULL after the check was answered, when one was sent.
    pub connection_survived: Option<bool>,
    pub transcript: Vec<TranscriptEntry>,
    pub duration: Duration,
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
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            timeout: Duration::from_secs(2),
            silence: Duration::from_millis(300),
            receive_size: 4096,
            send_size: 4096,
            credits_requested: 32,
        }
    }
}

/// Runs one check on a fresh context; a panic inside a scenario becomes a failure.
pub fn run_check(check: &Check, connector: &mut dyn Connector, options: &RunOptions) -> CheckResult {
    let started = Instant::now();
    let mut ctx = Ctx::new(connector, options.clone());
    let verdict = catch_unwind(AssertUnwindSafe(|| (check.run)(&mut ctx))).unwrap_or_else(|panic| {
        let why = panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "unknown panic".into());
        Verdict::fail("the scenario to complete", format!("the scenario panicked: {why}"))
    });
    let (transcript, survived) = ctx.finish();
    CheckResult {
        id: check.id,
        key_word: check.key_word,
        requirement: check.requirement,
        outcome: verdict.outcome,
        expected: verdict.expected,
        actual: verdict.actual,
        connection_survived: survived,
        transcript,
        duration: started.elapsed(),
    }
}

/// A result for a check that did not run.
pub fn skipped(check: &Check, why: &str) -> CheckResult {
    CheckResult {
        id: check.id,
        key_word: check.key_word,
        requirement: check.requirement,
        outcome: Outcome::Skipped,
        expected: String::new(),
        actual: why.into(),
        connection_survived: None,
        transcript: Vec::new(),
        duration: Duration::ZERO,
    }
}

/// Runs `checks` in order, calling `progress` after each. A set `interrupt` flag skips the
/// rest, so an interrupted run still ends with a complete report.
pub fn run_checks(
    checks: &[&Check],
    connector: &mut dyn Connector,
    options: &RunOptions,
    interrupt: &AtomicBool,
    mut progress: impl FnMut(usize, &CheckResult),
) -> Vec<CheckResult> {
    let mut results = Vec::with_capacity(checks.len());
    for (i, c) in checks.iter().enumerate() {
        let r = if interrupt.load(Ordering::SeqCst) {
            skipped(c, "the run was interrupted")
        } else {
            run_check(c, connector, options)
        };
        progress(i, &r);
        results.push(r);
    }
    results
}
