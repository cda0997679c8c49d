//! Reports: each reads a finished, judged run and writes one format. None of them runs
//! anything or knows about transports.

pub mod json;
pub mod junit;
pub mod pcap;
pub mod text;

use std::path::{Path, PathBuf};

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

/// Where to write the machine-readable reports.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct Outputs {
    /// Write the JSON report here (schema rpcrdma-harness/report/v1).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write a JUnit XML report here.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Write each check's conversation as a RoCEv2 pcap into this directory.
    #[arg(long, value_name = "DIR")]
    pub pcap: Option<PathBuf>,
}

fn write_file(path: &Path, bytes: &[u8]) -> bool {
    match std::fs::write(path, bytes) {
        Ok(()) => true,
        Err(e) => {
            eprintln!("error: cannot write {}: {e}", path.display());
            false
        }
    }
}

/// Writes every requested report; false (after saying why) when one could not be written.
pub fn write_files(run: &Run<'_>, out: &Outputs) -> bool {
    let mut ok = true;
    if let Some(path) = &out.json {
        let text = serde_json::to_string_pretty(&json::render(run)).expect("JSON values serialize");
        ok &= write_file(path, text.as_bytes());
    }
    if let Some(path) = &out.junit {
        ok &= write_file(path, junit::render(run).as_bytes());
    }
    if let Some(dir) = &out.pcap {
        if let Err(e) = std::fs::create_dir_all(dir) {
            eprintln!("error: {}: {e}", dir.display());
            return false;
        }
        for r in run.results {
            if !r.transcript.is_empty() {
                ok &=
                    write_file(&dir.join(pcap::file_name(r.check.id)), &pcap::capture(&r.transcript, run.started_unix));
            }
        }
    }
    ok
}
