//! `rpcrdma-harness run`: select checks, run them against the embedded reference responder
//! or a peer, judge them (strict mode, expectation profile), write the reports.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use clap::Args;
use rpcrdma_conformance::catalogue;
use rpcrdma_conformance::engine::{run_checks, Check, RunOptions};
use rpcrdma_conformance::expectations::{judge, Expectations};
use rpcrdma_peers::responder::{Config, Faults, Responder};
use rpcrdma_peers::transport::emulated::EmulatedConnector;
use rpcrdma_peers::transport::Connector;

use crate::report::{self, Run};

/// Exit codes (h2spec / NFStest conventions).
pub const EXIT_OK: i32 = 0;
pub const EXIT_FAILED: i32 = 1;
pub const EXIT_USAGE: i32 = 2;
pub const EXIT_UNREACHABLE: i32 = 3;

#[derive(Debug, Args)]
pub struct RunArgs {
    /// Checks to run: IDs, ID prefixes (`rfc8166/4.5`) or group names (`credits`); all by default.
    #[arg(value_name = "SELECTOR")]
    select: Vec<String>,
    /// Leave out checks matching this ID, prefix or group (repeatable).
    #[arg(long, value_name = "SELECTOR")]
    exclude: Vec<String>,
    /// Run against a peer over verbs instead of the embedded reference responder.
    #[arg(long, value_name = "HOST[:PORT]")]
    peer: Option<String>,
    /// Count SHOULD and MAY deviations (pass-lax) as failures.
    #[arg(long)]
    strict: bool,
    /// A reviewed expectation profile (JSON) for this peer.
    #[arg(long, value_name = "PROFILE")]
    expect: Option<PathBuf>,
    /// Seconds to wait for each expected reply.
    #[arg(long, value_name = "SECS", default_value_t = 2.0)]
    timeout: f64,
    #[command(flatten)]
    outputs: report::Outputs,
    /// Make the embedded responder misbehave (for testing the harness itself).
    #[arg(long, value_name = "FAULT", hide = true)]
    fault: Vec<String>,
}

/// Whether `check` matches a selector: its exact ID, a prefix of it ending at a `/` or at a
/// section-number `.` (so `rfc8166/4.5` selects 4.5, 4.5.1, 4.5.2 but not 4.50), or a group.
pub fn matches(check: &Check, selector: &str) -> bool {
    let s = selector.trim_end_matches('/');
    check.info.id == s
        || check.info.id.strip_prefix(s).is_some_and(|rest| rest.starts_with('/') || rest.starts_with('.'))
        || check.info.groups.contains(&s)
}

/// The checks a selection names, in catalogue order; an error names a selector matching nothing.
pub fn select(select: &[String], exclude: &[String]) -> Result<Vec<&'static Check>, String> {
    let all = catalogue::all();
    for s in select.iter().chain(exclude) {
        if !all.iter().any(|c| matches(c, s)) {
            return Err(format!("{s:?} matches no check (see `rpcrdma-harness list`)"));
        }
    }
    Ok(all
        .into_iter()
        .filter(|c| select.is_empty() || select.iter().any(|s| matches(c, s)))
        .filter(|c| !exclude.iter().any(|s| matches(c, s)))
        .collect())
}

fn embedded(faults: Faults) -> EmulatedConnector<Responder> {
    EmulatedConnector::new(Responder::reference(Config { faults, ..Config::default() }))
}

pub fn run(args: RunArgs, interrupt: Arc<AtomicBool>) -> i32 {
    let checks = match select(&args.select, &args.exclude) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_USAGE;
        }
    };
    let profile = match load_profile(args.expect.as_deref()) {
        Ok(p) => p,
        Err(code) => return code,
    };
    if !(args.timeout > 0.0 && args.timeout.is_finite()) {
        eprintln!("error: --timeout must be a positive number of seconds");
        return EXIT_USAGE;
    }
    let mut faults = Faults::default();
    for f in &args.fault {
        if !faults.set(f) {
            eprintln!("error: unknown fault {f:?}; known: {}", Faults::NAMES.join(", "));
            return EXIT_USAGE;
        }
    }
    let (mut connector, peer, transport): (Box<dyn Connector>, String, String) = match &args.peer {
        None => (Box::new(embedded(faults)), "embedded reference responder".into(), "emulated".into()),
        Some(addr) => match crate::peer::connector(addr) {
            Ok(c) => {
                let d = c.describe();
                (c, addr.clone(), d)
            }
            Err(crate::peer::PeerError::Usage(e)) => {
                eprintln!("error: {e}");
                return EXIT_USAGE;
            }
            Err(crate::peer::PeerError::Environment(e)) => {
                eprintln!("error: {e}");
                return EXIT_USAGE;
            }
        },
    };
    let options = RunOptions { timeout: Duration::from_secs_f64(args.timeout), ..RunOptions::default() };

    // A peer that cannot be reached at all is exit 3, before running anything.
    if args.peer.is_some() {
        if let Err(e) = connector.connect(&[], Instant::now() + options.timeout) {
            eprintln!("error: cannot reach {peer}: {e}");
            return EXIT_UNREACHABLE;
        }
    }

    let started = Instant::now();
    let started_unix = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let progress = std::io::stderr().is_terminal();
    let total = checks.len();
    let mut out = std::io::stdout();
    println!("rpcrdma-harness {} against {peer} ({} checks)", env!("CARGO_PKG_VERSION"), total);
    let strict = args.strict;
    let results = run_checks(&checks, connector.as_mut(), &options, &interrupt, |i, r| {
        let j = judge(r, strict, profile.as_ref());
        if progress {
            eprint!("\r\x1b[K");
        }
        let _ = writeln!(out, "{}", report::text::line(r, &j));
        if j.status.is_failure() {
            let _ = write!(out, "{}", report::text::details(r, &j));
        }
        if progress && i + 1 < total {
            eprint!("[{}/{total}] {}", i + 2, checks[i + 1].info.id);
        }
        let _ = out.flush();
    });
    let judged: Vec<_> = results.iter().map(|r| judge(r, strict, profile.as_ref())).collect();
    let interrupted = interrupt.load(Ordering::SeqCst);
    let run = Run {
        peer,
        transport,
        strict,
        expectations: profile.as_ref().map(|p| p.peer.clone()),
        interrupted,
        started_unix,
        duration: started.elapsed(),
        results: &results,
        judged: &judged,
    };
    let write_failed = !report::write_files(&run, &args.outputs);
    if interrupted {
        println!("interrupted: the remaining checks were skipped");
    }
    let totals = run.totals();
    println!("{}", report::closing_line(totals));
    if write_failed {
        EXIT_USAGE
    } else if totals.failed > 0 {
        EXIT_FAILED
    } else {
        EXIT_OK
    }
}

/// Loads an expectation profile; Err(exit code) after saying why.
pub fn load_profile(path: Option<&std::path::Path>) -> Result<Option<Expectations>, i32> {
    let Some(path) = path else { return Ok(None) };
    match std::fs::read_to_string(path).map_err(|e| e.to_string()).and_then(|t| Expectations::from_json(&t)) {
        Ok(p) => Ok(Some(p)),
        Err(e) => {
            eprintln!("error: expectation profile {}: {e}", path.display());
            Err(EXIT_USAGE)
        }
    }
}

/// `rpcrdma-harness list`: every check with its requirement.
pub fn list(select_args: &[String], verbose: bool) -> i32 {
    let checks = match select(select_args, &[]) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_USAGE;
        }
    };
    for c in &checks {
        println!("{}  [{}]  ({})", c.info.id, c.info.key_word.as_str(), c.info.groups.join(", "));
        if verbose {
            println!("    requirement: {}", c.info.requirement);
            println!("    acceptable:  {}", c.info.acceptable);
            println!("    rationale:   {}", c.info.rationale);
        }
    }
    println!("{} checks", checks.len());
    EXIT_OK
}
