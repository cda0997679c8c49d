//! How a command ends, and the one mapping to the process's exit status (README "Exit
//! status", the manual's EXIT STATUS; h2spec / NFStest conventions): a command returns
//! [`Outcome`], and `main` prints the error and exits in one place.

use std::fmt;

/// Everything as expected.
pub const EXIT_OK: i32 = 0;
/// A check failed, a listed divergence did not happen, a finding is new, the peer went down.
pub const EXIT_FAILED: i32 = 1;
/// A usage or environment error.
pub const EXIT_USAGE: i32 = 2;
/// The peer could not be reached.
pub const EXIT_UNREACHABLE: i32 = 3;
/// A check broke (a harness defect): the peer was not judged by it.
pub const EXIT_HARNESS_ERROR: i32 = 4;

/// What every subcommand's exit status means, as the manual's EXIT STATUS section.
pub const MEANINGS: [(&str, &str); 6] = [
    ("0", "Everything as expected: every check passed or diverged as the profile lists."),
    ("1", "A check failed, a listed divergence did not happen, a finding is new, or the peer went down."),
    ("2", "A usage or environment error (bad arguments, an unreadable profile, no RDMA device)."),
    ("3", "The peer could not be reached."),
    ("4", "A check broke: a harness defect; the peer was not judged by it."),
    ("130, 143", "Interrupted by SIGINT or SIGTERM; the reports say how far the run got."),
];

/// A command that ran to its end (or to a signal): what it found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// Every check passed or diverged as the profile lists; no new finding; not reproduced.
    AsExpected,
    /// A check failed, a finding is new, a finding reproduced, the peer went down.
    Failed,
    /// A check broke: a harness defect.
    HarnessDefect,
    /// Cut short by a signal: 128 + its number.
    Interrupted(i32),
}

/// Why a command could not do what it was asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HarnessError {
    /// Bad arguments or input (an unknown selector, an unreadable profile, a bad address).
    Usage(String),
    /// This machine or build cannot do it (no RDMA device, a directory that cannot be made).
    Environment(String),
    /// The peer could not be reached.
    Unreachable(String),
    /// A report or finding file could not be written; each failure was said as it happened.
    Unwritten,
}

impl fmt::Display for HarnessError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HarnessError::Usage(m) | HarnessError::Environment(m) | HarnessError::Unreachable(m) => f.write_str(m),
            HarnessError::Unwritten => f.write_str("a report could not be written"),
        }
    }
}

impl std::error::Error for HarnessError {}

impl HarnessError {
    /// The exit status this error ends the process with.
    pub fn code(&self) -> i32 {
        match self {
            HarnessError::Usage(_) | HarnessError::Environment(_) | HarnessError::Unwritten => EXIT_USAGE,
            HarnessError::Unreachable(_) => EXIT_UNREACHABLE,
        }
    }

    /// What `main` prints (`error: ...`); None when it was said already.
    pub fn message(&self) -> Option<String> {
        match self {
            HarnessError::Unwritten => None,
            e => Some(e.to_string()),
        }
    }
}

impl Ending {
    /// The exit status of a command that ended so.
    pub fn code(self) -> i32 {
        match self {
            Ending::AsExpected => EXIT_OK,
            Ending::Failed => EXIT_FAILED,
            Ending::HarnessDefect => EXIT_HARNESS_ERROR,
            Ending::Interrupted(code) => code,
        }
    }

    /// [`Ending::Failed`] when `failed`, else [`Ending::AsExpected`]; a signal received
    /// first makes it [`Ending::Interrupted`].
    pub fn judged(failed: bool) -> Ending {
        match crate::signals::exit_code() {
            Some(code) => Ending::Interrupted(code),
            None if failed => Ending::Failed,
            None => Ending::AsExpected,
        }
    }
}

/// What every command returns.
pub type Outcome = Result<Ending, HarnessError>;

/// The exit status of a command's outcome.
pub fn code(outcome: &Outcome) -> i32 {
    match outcome {
        Ok(e) => e.code(),
        Err(e) => e.code(),
    }
}

/// A usage error from any text.
pub fn usage(message: impl Into<String>) -> HarnessError {
    HarnessError::Usage(message.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// README "Exit status": each kind of ending has its own number.
    #[test]
    fn each_ending_and_error_has_its_documented_status() {
        assert_eq!(Ending::AsExpected.code(), 0);
        assert_eq!(Ending::Failed.code(), 1);
        assert_eq!(Ending::HarnessDefect.code(), 4);
        assert_eq!(Ending::Interrupted(143).code(), 143);
        assert_eq!(usage("x").code(), 2);
        assert_eq!(HarnessError::Environment("x".into()).code(), 2);
        assert_eq!(HarnessError::Unreachable("x".into()).code(), 3);
        assert_eq!(HarnessError::Unwritten.code(), 2);
        assert_eq!(HarnessError::Unwritten.message(), None);
    }
}
