//! `rpcrdma-harness serve`: act as the responder and judge the requester that connects (the
//! client catalogue): its private data, its procedures, its chunks, its respect for the
//! credit grant and the inline threshold, and (with `--self-test`) its reactions to the
//! scenarios the responder plays, each on a responder of its own. `serve SELECTOR...` judges
//! only the client checks selected (IDs, ID prefixes or groups, as `run` selects).

use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use clap::Args;
use rpcrdma_codec::Profile;
use rpcrdma_conformance::catalogue::client::{self, ClientCheck};
use rpcrdma_peers::observe::ObservedConnection;
use rpcrdma_peers::requester::{observed_workloads, observed_workloads_into, RequesterFaults, RequesterOptions};
use rpcrdma_peers::responder::Config;

use crate::args::TextArgs;
use crate::exit::{usage, HarnessError, Outcome};
use crate::output::plural;
use crate::report::{self, JudgedResult, Metadata, Run};
use crate::{signals, textln};

pub mod fuzz;
pub mod kernel_log;
pub mod storm;

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Client checks to judge: IDs, ID prefixes or groups (`scenario` for the active ones);
    /// all by default. `--self-test` plays the scenarios of the checks selected.
    #[arg(value_name = "SELECTOR")]
    select: Vec<String>,
    /// Leave out client checks matching this ID, prefix or group (repeatable).
    #[arg(long, value_name = "SELECTOR")]
    exclude: Vec<String>,
    /// Listen for requesters over RDMA verbs on ADDR[:PORT] (default port 20049).
    #[arg(long, value_name = "ADDR[:PORT]", conflicts_with = "self_test")]
    listen: Option<String>,
    /// Judge the embedded reference requester over the emulated transport instead.
    #[arg(long)]
    self_test: bool,
    /// Credits granted in every reply, 1 to 65536 (1 tests requesters at the smallest window;
    /// a Receive is posted per credit, and no RDMA receive queue is deeper than that).
    #[arg(long, default_value = "32", value_parser = crate::args::grant, allow_negative_numbers = true)]
    grant: u32,
    /// Stop when no requester has been connected for this many seconds since the last
    /// connection ended (at most a week); before the first connection only --max-time counts.
    #[arg(long, value_name = "SECS", default_value = "5", value_parser = crate::args::serve_secs, allow_negative_numbers = true)]
    idle: Duration,
    /// Stop after this many seconds in any case (at most a week).
    #[arg(long, value_name = "SECS", default_value = "600", value_parser = crate::args::serve_secs, allow_negative_numbers = true)]
    max_time: Duration,
    /// Count SHOULD and MAY deviations as failures.
    #[arg(long)]
    strict: bool,
    /// A reviewed expectation profile (JSON) for this requester.
    #[arg(long, value_name = "PROFILE")]
    expect: Option<PathBuf>,
    #[command(flatten)]
    outputs: report::Outputs,
    #[command(flatten)]
    text: TextArgs,
    #[command(flatten)]
    fuzz: fuzz::FuzzArgs,
    #[command(flatten)]
    version: crate::peer_version::PeerVersionArgs,
    #[command(flatten)]
    wire: crate::wire_profile::WireArgs,
    /// Make the embedded reference requester misbehave (`--self-test` only; for testing the
    /// harness itself).
    #[arg(long, value_name = "FAULT", hide = true)]
    fault: Vec<String>,
}

/// The embedded reference requester's workload, once plainly (when a passive check is
/// selected) and once per scenario the checks need, each on a reference responder of its own;
/// speaking Version Two for the Version Two checks, Version One for the others.
fn self_test(
    grant: u32,
    checks: &[&'static ClientCheck],
    fuzz: Option<&fuzz::Session>,
    profile: Profile,
    faults: &RequesterFaults,
) -> Vec<ObservedConnection> {
    let config = Config {
        profile,
        credits: grant,
        receive_window: Some(grant.max(64)),
        handle_delay: Duration::from_millis(20),
        reply_fuzz: fuzz.map(|s| s.mutator.clone()),
        ..Config::default()
    };
    if let Some(session) = fuzz {
        return fuzz_self_test(&config, session);
    }
    let mut observed = Vec::new();
    // The reverse-direction and NFS version 4 checks judge the NFSv4.1 workload (its back
    // channel on the connection, RFC 8167; RFC 8267 6); the others the NFSv3 one, in each
    // version.
    let is_reverse = |c: &ClientCheck| client::speaks_nfs41(c);
    let reverse: Vec<&ClientCheck> = checks.iter().copied().filter(|c| is_reverse(c)).collect();
    if !reverse.is_empty() {
        let mut runs = vec![None];
        runs.extend(client::scenarios_of(reverse.iter().copied()).into_iter().map(Some));
        let options = RequesterOptions { nfs4_minor: Some(1), profile, ..RequesterOptions::default() };
        let (seen, errors) = observed_workloads(&config, &runs, &options, faults);
        for e in errors {
            crate::errln!("note: the reference requester (NFSv4.1) stopped early: {e}");
        }
        observed.extend(seen);
    }
    for version in [1, 2] {
        let mine: Vec<&ClientCheck> =
            checks.iter().copied().filter(|c| client::v2::is_v2(c) == (version == 2) && !is_reverse(c)).collect();
        let mut runs = Vec::new();
        if mine.iter().any(|c| c.scenario.is_none()) {
            runs.push(None);
        }
        runs.extend(client::scenarios_of(mine.iter().copied()).into_iter().map(Some));
        if runs.is_empty() {
            continue;
        }
        let options = RequesterOptions { version, profile, ..RequesterOptions::default() };
        let (seen, errors) = observed_workloads(&config, &runs, &options, faults);
        for e in errors {
            crate::errln!("note: the reference requester (Version {version}) stopped early: {e}");
        }
        observed.extend(seen);
    }
    observed
}

/// The reference requester's workload, [`FUZZ_WORKLOADS`] times one after the other (a
/// mutated reply ends a workload early), on the session's clock.
fn fuzz_self_test(config: &Config, session: &fuzz::Session) -> Vec<ObservedConnection> {
    let mut all = Vec::new();
    for i in 0..FUZZ_WORKLOADS {
        if signals::INTERRUPT.load(std::sync::atomic::Ordering::SeqCst) {
            break;
        }
        let offset = session.elapsed();
        // A discarded reply costs a timeout: short ones, the embedded responder answers in
        // microseconds.
        // Every other workload NFSv4.1 (every one with --fuzz-reverse-only): its back channel
        // takes the reverse-direction calls fuzzed (RFC 8167).
        let nfs4_minor = (session.reverse_only || i % 2 == 1).then_some(1);
        let options = RequesterOptions {
            timeout: Duration::from_millis(150),
            nfs4_minor,
            profile: config.profile,
            ..RequesterOptions::default()
        };
        session.tracker.new_log();
        let log = rpcrdma_peers::observe::Log::with_listener(Some(session.tracker.clone()));
        let (observed, _) = observed_workloads_into(&log, config, &[None], &options, &RequesterFaults::default());
        all.extend(observed.into_iter().map(|mut c| {
            c.events.iter_mut().for_each(|(t, _)| *t += offset);
            c.wire.iter_mut().for_each(|(t, _)| *t += offset);
            c
        }));
    }
    all
}

/// Workloads of the reference requester under `serve --self-test --fuzz`.
const FUZZ_WORKLOADS: usize = 12;

pub fn run(args: ServeArgs) -> Outcome {
    let profile = crate::profiles::load(args.expect.as_deref())?;
    // The spec choices both sides read the wire under, and every observed message is decoded
    // under: the codec's resolutions, or the `--profile` choices.
    let wire = args.wire.profile()?;
    if !args.self_test && args.listen.is_none() {
        return Err(usage("give --listen ADDR[:PORT] or --self-test"));
    }
    let mut faults = RequesterFaults::default();
    for f in &args.fault {
        if !args.self_test {
            return Err(usage("--fault applies to the embedded reference requester only (--self-test)"));
        }
        if !faults.set(f) {
            return Err(usage(format!("unknown fault {f:?}; known: {}", RequesterFaults::NAMES.join(", "))));
        }
    }
    let checks = crate::select::select_client(&args.select, &args.exclude)?;
    if args.fuzz.fuzz && (args.outputs.junit.is_some() || args.outputs.pcap.is_some() || args.outputs.kcidb.is_some()) {
        return Err(usage(
            "serve --fuzz writes its own report (--json); --junit, --pcap and --kcidb judge the catalogue",
        ));
    }
    crate::output::text_to_stderr(args.outputs.report_on_stdout());
    crate::output::reconfigure();
    let quiet = args.text.quiet;
    let mut outputs = args.outputs.prepare().map_err(HarnessError::Usage)?;
    let session = if args.fuzz.fuzz { Some(fuzz::Session::start(&args.fuzz, &wire)?) } else { None };
    // Judging the catalogue of a real requester, its kernel log joins each scenario's checks.
    let scenario_log = match (&args.fuzz.kernel_log, &session, &args.listen) {
        (Some(p), None, Some(_)) => {
            Some(kernel_log::ScenarioLog::follow(p).map_err(|e| usage(format!("--kernel-log {}: {e}", p.display())))?)
        }
        _ => None,
    };
    let started = Instant::now();
    let started_unix = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    // Listening, the banner comes once the address is bound (with the port it got), so a
    // listener that cannot start prints only its error.
    if !quiet && args.listen.is_none() {
        let against = report::profile_clause(profile.as_ref().map(|p| p.peer.as_str()), args.expect.as_deref());
        textln!(
            "rpcrdma-harness {} serving the embedded reference requester (grant {}{}){against}",
            crate::build_info::VERSION,
            args.grant,
            crate::wire_profile::clause(&wire)
        );
    }
    let (observed, peer, transport) = if args.self_test {
        (
            self_test(args.grant, &checks, session.as_ref(), wire, &faults),
            "embedded reference requester".to_string(),
            "emulated".to_string(),
        )
    } else {
        let addr = args.listen.as_deref().unwrap_or_default();
        let scenarios = if session.is_some() { Vec::new() } else { client::scenarios_of(checks.iter().copied()) };
        let replacing = session
            .as_ref()
            .map_or(crate::peer::Replacing::Nothing, |s| crate::peer::Replacing::Mutated(s.mutator.clone()));
        let options = crate::peer::ServeOptions {
            listener: session
                .as_ref()
                .map(|s| s.tracker.clone() as std::sync::Arc<dyn rpcrdma_peers::observe::Listener>),
            grant: args.grant,
            scenarios: &scenarios,
            replacing,
            idle: args.idle,
            max_time: args.max_time,
            profile: wire,
            interrupt: &signals::INTERRUPT,
        };
        let (obs, desc) = crate::peer::serve(addr, options)?;
        (obs, format!("requesters on {addr}"), desc)
    };
    if !quiet {
        // Listening, the banner (printed once bound) cannot name the profile: this line does.
        let against = match args.listen {
            Some(_) => report::profile_clause(profile.as_ref().map(|p| p.peer.as_str()), args.expect.as_deref()),
            None => String::new(),
        };
        textln!(
            "observed {}, {}{against}",
            plural(observed.len(), "connection", "connections"),
            plural(observed.iter().map(|c| c.events.len()).sum::<usize>(), "message", "messages")
        );
    }
    if let Some(s) = session {
        return fuzz::finish(s, &args.fuzz, &observed, profile.as_ref(), &wire, outputs.json.as_mut());
    }
    let mut results = client::judge(&checks, &observed, &wire);
    if let Some(log) = &scenario_log {
        log.attribute(&checks, &observed, &mut results);
    }
    storm::judge(&checks, &observed, &mut results);
    let judged = crate::finish::judge_all(results, args.strict, profile.as_ref());
    if !quiet {
        for JudgedResult { result: r, judged: j } in &judged {
            textln!("{}", report::text::line(r, j));
            if j.status.fails(args.strict) {
                crate::output::text_str(&report::text::details(r, j));
            }
        }
    }
    let interrupted = signals::received().is_some();
    let peer_version = crate::peer_version::PeerVersion::new(args.version.peer_version.as_deref(), profile.as_ref());
    peer_version.announce(quiet);
    let meta = Metadata {
        profile_path: args.expect.as_ref().map(|p| p.display().to_string()),
        wire_profile: crate::wire_profile::names(&wire),
        peer_version,
        ..Metadata::new("serve")
    };
    let run = Run {
        peer,
        transport,
        strict: args.strict,
        expectations: profile.as_ref().map(|p| p.peer.clone()),
        interrupted,
        started_unix,
        duration: started.elapsed(),
        checks: &judged,
        meta,
    };
    let mut wrote = report::write_files(&run, &mut outputs);
    if let Some(dir) = &outputs.pcap {
        let path = dir.join(report::pcap::OBSERVED_FILE);
        if let Err(e) = std::fs::write(&path, report::pcap::observed(&observed, &wire, started_unix)) {
            crate::errln!("error: --pcap: cannot write {}: {e}", path.display());
            wrote = false;
        }
    }
    if interrupted && !quiet {
        textln!("interrupted: judged what was observed before the signal");
    }
    crate::finish::close(wrote, &run)
}
