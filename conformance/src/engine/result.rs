//! The result of one check: its verdict, the conversation that led to it, and whether the
//! peer outlived it ([`PeerState`], which [`super::health`] fills in).

use std::time::Duration;

use crate::engine::check::{Actual, CheckInfo, Outcome};
use crate::engine::ctx::TranscriptEntry;

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

rpcrdma_codec::named_enum! {
    /// How the peer went down.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum DownKind {
        /// A new connection was refused, or accepted and dropped before the NULL was answered.
        Crashed = "crashed",
        /// A new connection was not answered (the connect or the NULL timed out).
        Wedged = "wedged",
    }
}

/// A restart command as it ran.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CommandRun {
    pub command: String,
    /// How it ended: `exit 0`, `exit 1`, `killed after 120 s`, `cannot start sh: ...`.
    pub status: String,
    /// Its standard output and error (the tail, when long).
    pub output: String,
}

impl CommandRun {
    /// Whether it exited 0.
    pub fn succeeded(&self) -> bool {
        self.status == "exit 0"
    }
}

/// The restart after the peer went down.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Restart {
    pub run: CommandRun,
    /// Whether the peer then answered a new connection's NULL within the restart wait.
    pub back: bool,
    /// From the command's start until the peer answered (or the wait ran out).
    pub waited: Duration,
}

/// The peer went down after a check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PeerDown {
    pub kind: DownKind,
    /// What the probe saw: `a new connection was refused: ...`.
    pub detail: String,
    /// Lines the peer's log (`--peer-log`) gained while the check ran.
    pub log: Vec<String>,
    /// Lines the peer's kernel log (`--kernel-log`) gained while the check ran.
    pub kernel_log: Vec<String>,
    /// None: no restart is configured.
    pub restart: Option<Restart>,
}

impl PeerDown {
    /// Whether the peer is up again (restarted and answering).
    pub fn back(&self) -> bool {
        self.restart.as_ref().is_some_and(|r| r.back)
    }
}

/// The peer's health around one check.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PeerState {
    /// The first sign, during the check, that the peer may have gone: the connection ended,
    /// a deadline passed without a reply, a connect failed. Only then is the peer probed.
    pub sign: Option<String>,
    /// The peer went down after this check.
    pub down: Option<PeerDown>,
    /// Not run: the peer went down after the check with this ID and did not come back.
    pub down_after: Option<&'static str>,
    /// `serve --kernel-log`: what the requester's kernel logged while this check's scenario
    /// was played.
    pub kernel_log: Vec<String>,
}
