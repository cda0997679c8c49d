//! The run loop: each check on a fresh context, in order, the peer's health probed after a
//! check that saw it go quiet or away.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use rpcrdma_peers::transport::Connector;

use crate::engine::check::{Check, Outcome, Verdict};
use crate::engine::ctx::Ctx;
use crate::engine::health::{self, Peer};
use crate::engine::options::RunOptions;
use crate::engine::result::{CheckResult, PeerState};

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

/// Runs `checks` in order on a bare connector (no logs, no restart): [`run_watched`].
pub fn run_checks(
    checks: &[&'static Check],
    mut connector: &mut dyn Connector,
    options: &RunOptions,
    interrupt: &AtomicBool,
    progress: impl FnMut(Step<'_>),
) -> Vec<CheckResult> {
    run_watched(checks, &mut connector, options, interrupt, progress)
}

/// Runs `checks` in order on `peer`, telling `progress` as each starts and ends, probing the
/// peer after each check that saw a sign of trouble ([`health::after_check`], which also
/// restarts a peer). A set `interrupt` flag skips the rest, so an interrupted run still ends
/// with a complete report. When the peer went down and did not come back, the
/// remaining checks are not run: skipped, naming the check after which it went down.
pub fn run_watched(
    checks: &[&'static Check],
    peer: &mut dyn Peer,
    options: &RunOptions,
    interrupt: &AtomicBool,
    mut progress: impl FnMut(Step<'_>),
) -> Vec<CheckResult> {
    let mut results = Vec::with_capacity(checks.len());
    let mut down_after: Option<&'static str> = None;
    for (i, c) in checks.iter().enumerate() {
        let r = if interrupt.load(Ordering::SeqCst) {
            CheckResult::skipped(&c.info, "the run was interrupted")
        } else if let Some(id) = down_after {
            let mut r = CheckResult::skipped(&c.info, &format!("not run: the peer went down after {id}"));
            r.peer.down_after = Some(id);
            r
        } else {
            progress(Step::Starting(i));
            // What the logs gained before this check is not this check's.
            let _ = (peer.log(), peer.kernel_log());
            let mut r = run_check(c, peer.connector(), options);
            health::after_check(&mut r, peer, options, interrupt);
            if r.peer.down.as_ref().is_some_and(|d| !d.back()) {
                down_after = Some(c.info.id);
            }
            r
        };
        progress(Step::Finished(i, &r));
        results.push(r);
    }
    results
}
