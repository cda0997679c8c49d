//! What a check is and how it ends: its declaration ([`CheckInfo`]), its scenario
//! ([`Check`]), and the verdict the scenario reaches ([`Verdict`], an [`Outcome`] with what was
//! expected and what happened).

use std::fmt;

use crate::engine::ctx::Ctx;
use crate::engine::mismatch::Mismatch;

rpcrdma_codec::named_enum! {
    /// How a check ended (pynfs/Autobahn-style classes).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
    pub enum Outcome {
        /// The peer did what the requirement says.
        Pass = "pass",
        /// The peer deviated from a SHOULD or MAY; counted as a failure under `--strict`.
        PassLax = "pass-lax",
        /// The peer broke the requirement.
        Fail = "fail",
        /// The peer does not implement the optional feature the check needs.
        Unsupported = "unsupported",
        /// Not run (deselected, a prerequisite failed, or the run was interrupted).
        Skipped = "skipped",
        /// Run, but not judged: the event that gives the peer its chance to break the statement
        /// (the check's [`CheckInfo::precondition`]) did not happen, so a pass would say nothing.
        /// Counted as a failure under `--strict`.
        Inconclusive = "inconclusive",
        /// Not judged: the check itself broke (its scenario panicked). A defect of the harness,
        /// never counted against the peer.
        Error = "error",
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
    pub(crate) fn new(outcome: Outcome, expected: impl Into<String>, actual: impl Into<Actual>) -> Self {
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
    /// A declaration with `id` and nothing else, for tests that need a check to point at.
    #[doc(hidden)]
    pub const fn stub(id: &'static str) -> CheckInfo {
        CheckInfo { id, judges: &[], acceptable: "", rationale: "", groups: &[], broken_by: &[], precondition: None }
    }

    /// The statements this check judges: (ID, whether only in part), as declared.
    pub fn judged(&self) -> impl Iterator<Item = (&'static str, bool)> {
        self.judges.iter().map(|j| match j.strip_prefix('~') {
            Some(id) => (id, true),
            None => (*j, false),
        })
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
