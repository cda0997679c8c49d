//! `rpcrdma-harness run`: select checks, run them against the embedded reference responder
//! or a peer, judge them (strict mode, expectation profile), write the reports.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use clap::Args;
use rpcrdma_codec::Profile;
use rpcrdma_conformance::engine::{health, run_watched, Check, RunOptions, Step};
use rpcrdma_conformance::expectations::{judge, Status};
use rpcrdma_peers::responder::{Config, Faults, Responder};
use rpcrdma_peers::transport::emulated::EmulatedConnector;
use rpcrdma_peers::transport::Connector;

use crate::args::TextArgs;
use crate::exit::{usage, HarnessError, Outcome};
use crate::finish::{close, failed};
use crate::output::plural;
use crate::report::{self, JudgedResult, Metadata, Run};
use crate::{signals, textln};

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
    /// Seconds to wait for each expected reply (more than 0, at most 3600).
    #[arg(long, value_name = "SECS", default_value = "2", value_parser = crate::args::timeout, allow_negative_numbers = true)]
    timeout: Duration,
    /// Print each check's ID to standard error as it starts, a line each, even when standard
    /// error is not a terminal (a CI log then shows which check a silent peer holds up).
    #[arg(long)]
    progress: bool,
    /// Run each selected check N times in a row (a check whose outcome is a race on the peer):
    /// a line per attempt and one per check with the count of each outcome; the check's status
    /// is its worst attempt's, each attempt judged against the profile on its own (an entry's
    /// "outcomes" lists a race's). The JSON report adds "repeat" and, per check, "outcomes" and
    /// "attempts".
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1000))]
    repeat: u32,
    #[command(flatten)]
    outputs: report::Outputs,
    #[command(flatten)]
    text: TextArgs,
    #[command(flatten)]
    mount: crate::mount::MountArgs,
    #[command(flatten)]
    watch: crate::peer_health::RunWatchArgs,
    #[command(flatten)]
    version: crate::peer_version::PeerVersionArgs,
    #[command(flatten)]
    wire: crate::wire_profile::WireArgs,
    /// Make the embedded responder misbehave (for testing the harness itself).
    #[arg(long, value_name = "FAULT", hide = true)]
    fault: Vec<String>,
}

/// Where the check under way is shown.
#[derive(Debug, Clone, Copy)]
enum Progress {
    Off,
    /// One status line on a terminal, erased before the check's result is printed.
    Terminal,
    /// `[i/n] ID` lines on standard error (`--progress`).
    Lines,
}

impl Progress {
    fn starting(self, n: usize, total: usize, id: &str) {
        match self {
            Progress::Off => {}
            Progress::Terminal => crate::err!("[{n}/{total}] {id}"),
            Progress::Lines => crate::errln!("[{n}/{total}] {id}"),
        }
    }

    fn clear(self) {
        if let Progress::Terminal = self {
            crate::err!("\r\x1b[K");
        }
    }
}

/// The embedded reference responder, reading the wire under the run's `profile`.
fn embedded(faults: Faults, profile: Profile) -> EmulatedConnector<Responder> {
    EmulatedConnector::new(Responder::reference(Config { faults, profile, ..Config::default() }))
}

pub fn run(args: RunArgs) -> Outcome {
    // Every report destination is checked (and truncated) first, so whatever ends the run,
    // its reports say so.
    let mut outputs = args.outputs.prepare().map_err(HarnessError::Usage)?;
    let checks = crate::select::select(&args.select, &args.exclude).map_err(|e| failed(&mut outputs, "run", e))?;
    let profile = crate::profiles::load(args.expect.as_deref()).map_err(|e| failed(&mut outputs, "run", e))?;
    // The spec choices the checks, their frames and the embedded responder read the wire under.
    let wire = args.wire.profile().map_err(|e| failed(&mut outputs, "run", e))?;
    let mut faults = Faults::default();
    for f in &args.fault {
        if !faults.set(f) {
            let e = usage(format!("unknown fault {f:?}; known: {}", Faults::NAMES.join(", ")));
            return Err(failed(&mut outputs, "run", e));
        }
    }
    crate::output::text_to_stderr(args.outputs.report_on_stdout());
    crate::output::reconfigure();
    let quiet = args.text.quiet;
    let mut options = RunOptions {
        timeout: args.timeout,
        restart_wait: args.watch.restart_wait,
        interrupt: Some(&signals::INTERRUPT),
        profile: wire,
        ..RunOptions::default()
    };
    let (connector, peer, transport): (Box<dyn Connector>, String, String) = match &args.peer {
        None => (Box::new(embedded(faults.clone(), wire)), "embedded reference responder".into(), "emulated".into()),
        Some(addr) => {
            let c = crate::peer::connector(addr).map_err(|e| failed(&mut outputs, "run", e.into()))?;
            let d = c.describe();
            (c, addr.clone(), d)
        }
    };
    let fresh = args.peer.is_none().then(|| {
        let f = faults.clone();
        Box::new(move || Box::new(embedded(f.clone(), wire)) as Box<dyn Connector>) as crate::peer_health::Fresh
    });
    let mut target = crate::peer_health::Watched::new(connector, fresh, &args.watch)
        .map_err(|e| failed(&mut outputs, "run", usage(e.to_string())))?;

    // A peer that cannot be reached at all is exit 3, before running anything.
    if args.peer.is_some() {
        if let Err(e) = health::Peer::connector(&mut target).connect(&[], Instant::now() + options.timeout) {
            return Err(failed(&mut outputs, "run", HarnessError::Unreachable(format!("cannot reach {peer}: {e}"))));
        }
    }
    // The export's root file handle: by MOUNT from a peer, as NFS clients obtain it.
    let (root, mounted) = match crate::mount::for_run(&args.mount, args.peer.as_deref(), options.timeout) {
        Ok(r) => r,
        Err(e) => {
            report::write_failure(
                &mut outputs,
                "run",
                e.code(),
                "the export's root file handle could not be had (MOUNT)",
            );
            return Err(e);
        }
    };
    options.root_fh = root.fh.clone();

    let started = Instant::now();
    let started_unix = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    // On a terminal the check under way is one line, rewritten; with --progress, a line each.
    // A terminal that cannot move the cursor (`TERM=dumb`) gets a line each too.
    let dumb = std::env::var_os("TERM").is_some_and(|t| t == "dumb");
    let progress = if args.progress || (!quiet && dumb && std::io::stderr().is_terminal()) {
        Progress::Lines
    } else if !quiet && std::io::stderr().is_terminal() {
        Progress::Terminal
    } else {
        Progress::Off
    };
    // --repeat N: each check N times in a row.
    let repeat = args.repeat as usize;
    let checks: Vec<&'static Check> = checks.iter().flat_map(|c| std::iter::repeat_n(*c, repeat)).collect();
    let total = checks.len();
    if !quiet {
        let n = match repeat {
            1 => plural(total, "check", "checks"),
            _ => format!("{}, {repeat} attempts each", plural(total / repeat, "check", "checks")),
        };
        let root = root.describe();
        let against = report::profile_clause(profile.as_ref().map(|p| p.peer.as_str()), args.expect.as_deref());
        let wire = crate::wire_profile::clause(&wire);
        textln!(
            "rpcrdma-harness {} against {peer}, root handle {root} ({n}{wire}){against}",
            crate::build_info::VERSION
        );
    }
    let peer_version = crate::peer_version::PeerVersion::new(args.version.peer_version.as_deref(), profile.as_ref());
    peer_version.announce(quiet);
    let strict = args.strict;
    let mut group: Vec<JudgedResult> = Vec::new();
    let results = run_watched(&checks, &mut target, &options, &signals::INTERRUPT, |step| match step {
        Step::Starting(i) => progress.starting(i + 1, total, checks[i].info.id),
        Step::Finished(i, r) => {
            let j = judge(r, strict, profile.as_ref());
            progress.clear();
            if !quiet {
                let attempt =
                    if repeat > 1 { format!(" [attempt {} of {repeat}]", i % repeat + 1) } else { String::new() };
                textln!("{}{attempt}", report::text::line(r, &j));
                if j.status.fails(strict) {
                    crate::output::text_str(&report::text::details(r, &j));
                }
                // A repeated check's last attempt: the check over all of them.
                if repeat > 1 {
                    group.push(JudgedResult { result: r.clone(), judged: j });
                    if group.len() == repeat {
                        let c = aggregate(&group);
                        let counts = outcome_counts(&group);
                        textln!("{} over {repeat} attempts: {counts}", report::text::line(&c.result, &c.judged));
                        group.clear();
                    }
                }
            }
        }
    });
    let judged = crate::finish::judge_all(results, strict, profile.as_ref());
    // Repeated: each check's attempts, and one representative judged result per check.
    let (judged, attempts) = if repeat > 1 {
        let attempts: Vec<Vec<_>> = judged.chunks(repeat).map(<[_]>::to_vec).collect();
        (attempts.iter().map(|a| aggregate(a)).collect(), attempts)
    } else {
        (judged, Vec::new())
    };
    let interrupted = signals::received().is_some();
    let meta = Metadata {
        select: args.select.clone(),
        exclude: args.exclude.clone(),
        profile_path: args.expect.as_ref().map(|p| p.display().to_string()),
        wire_profile: crate::wire_profile::names(&wire),
        root_fh: Some(root),
        peer_version,
        attempts,
        ..Metadata::new("run")
    };
    let run = Run {
        peer,
        transport,
        strict,
        expectations: profile.as_ref().map(|p| p.peer.clone()),
        interrupted,
        started_unix,
        duration: started.elapsed(),
        checks: &judged,
        meta,
    };
    let wrote = report::write_files(&run, &mut outputs);
    if let Some(at) = mounted {
        // Courtesy, as umount does; the server's mount list is all it changes.
        let _ = crate::mount::umnt(at, &args.mount.export, options.timeout);
    }
    if interrupted && !quiet {
        textln!("interrupted: the remaining checks were skipped");
    }
    if let Some((id, n)) = crate::peer_health::stayed_down(judged.iter().map(|c| &c.result)) {
        textln!("the peer went down after {id} and did not come back: {} not run", plural(n, "check", "checks"));
    }
    close(wrote, &run)
}

/// A repeated check's result over its attempts: its worst attempt's status (a failure, then a
/// harness error, inconclusive, an expected divergence, pass-lax, pass, unsupported, skipped),
/// with that attempt as the representative result and its judgement.
pub fn aggregate(attempts: &[JudgedResult]) -> JudgedResult {
    let rank = |s: Status| match s {
        Status::Fail | Status::UnexpectedPass => 0,
        Status::Error => 1,
        Status::Inconclusive => 2,
        Status::ExpectedDivergence => 3,
        Status::PassLax => 4,
        Status::Pass => 5,
        Status::Unsupported => 6,
        Status::Skipped => 7,
    };
    let worst = attempts.iter().min_by_key(|c| rank(c.judged.status)).expect("at least one attempt");
    worst.clone()
}

/// `fail 3, pass 2`: how many attempts had each outcome, most frequent first.
pub fn outcome_counts(attempts: &[JudgedResult]) -> String {
    let mut counts: Vec<(&str, usize)> = Vec::new();
    for c in attempts {
        let outcome = c.result.outcome.name();
        match counts.iter_mut().find(|(o, _)| *o == outcome) {
            Some((_, n)) => *n += 1,
            None => counts.push((outcome, 1)),
        }
    }
    counts.sort_by_key(|&(o, n)| (std::cmp::Reverse(n), o));
    counts.iter().map(|(o, n)| format!("{o} {n}")).collect::<Vec<_>>().join(", ")
}
