//! Reports: each reads a finished, judged run and writes one format. None of them runs
//! anything or knows about transports.

pub mod json;
pub mod junit;
pub mod pcap;
pub mod text;

use rpcrdma_conformance::engine::CheckResult;
use rpcrdma_conformance::expectations::{Judged, Status};

/// A finished run as the reports see it.
#[derive(Debug)]
pub struct Run<'a> {
    /// What was tested: `embedded reference responder (emulated transport)`, `verbs 10.0.0.1:20049`.
    pub peer: String,
    pub transport: String,
    pub strict: bool,
    /// The expectation profile's name, when one was loaded.
    pub expectations: Option<String>,
    pub interrupted: bool,
    pub started_unix: u64,
    pub duration: std::time::Duration,
    pub results: &'a [CheckResult],
    pub judged: &'a [Judged],
}

/// Totals for the closing line.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Totals {
    pub passed: usize,
    pub failed: usize,
    pub skipped: usize,
}

impl Run<'_> {
    pub fn totals(&self) -> Totals {
        let mut t = Totals::default();
        for j in self.judged {
            match j.status {
                Status::Pass | Status::PassLax | Status::ExpectedDivergence => t.passed += 1,
                Status::Fail | Status::UnexpectedPass => t.failed += 1,
                Status::Unsupported | Status::Skipped => t.skipped += 1,
            }
        }
        t
    }
}

/// The closing line: `N passed, N failed, N skipped`.
pub fn closing_line(t: Totals) -> String {
    format!("{} passed, {} failed, {} skipped", t.passed, t.failed, t.skipped)
}
