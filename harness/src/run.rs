//! `rpcrdma-harness run`: select checks, run them against the embedded reference responder
//! or a peer, judge them (strict mode, expectation profile), write the reports.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use clap::Args;
use rpcrdma_conformance::catalogue;
use rpcrdma_conformance::engine::{health, Check, CheckInfo, CheckResult, RunOptions, Step};
use rpcrdma_conformance::expectations::{judge, Expectations, Judged, Status};
use rpcrdma_peers::responder::{Config, Faults, Responder};
use rpcrdma_peers::transport::emulated::EmulatedConnector;
use rpcrdma_peers::transport::Connector;

use crate::output::plural;
use crate::report::{self, Metadata, Run};
use crate::{outln, signals, textln};

/// Exit codes (h2spec / NFStest conventions).
pub const EXIT_OK: i32 = 0;
pub const EXIT_FAILED: i32 = 1;
pub const EXIT_USAGE: i32 = 2;
pub const EXIT_UNREACHABLE: i32 = 3;
/// A check broke (a harness defect): the peer was not judged by it.
pub const EXIT_HARNESS_ERROR: i32 = 4;

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

/// How the text is printed (`run` and `serve`).
#[derive(Debug, Clone, Default, Args)]
pub struct TextArgs {
    /// Print only the closing line (`N passed, N failed, N skipped`) and errors.
    #[arg(short, long)]
    pub quiet: bool,
}

/// A check of either catalogue, for `list`.
#[derive(Debug, Clone, Copy)]
pub struct Entry {
    pub info: &'static CheckInfo,
    /// A client check: judged by `serve`, not run by `run`.
    pub client: bool,
}

/// Every check: the server catalogue in run order, then the client checks.
pub fn entries() -> Vec<Entry> {
    let server = catalogue::all().into_iter().map(|c| Entry { info: &c.info, client: false });
    server.chain(catalogue::client::all().map(|c| Entry { info: &c.info, client: true })).collect()
}

/// Whether a check (its ID and groups) matches a selector: its exact ID, a prefix of it
/// ending at a `/` or at a section-number `.` (so `rfc8166/4.5` selects 4.5, 4.5.1, 4.5.2 but
/// not 4.50), or a group.
pub fn id_matches(id: &str, groups: &[&str], selector: &str) -> bool {
    let s = selector.trim_end_matches('/');
    id == s
        || id.strip_prefix(s).is_some_and(|rest| rest.starts_with('/') || rest.starts_with('.'))
        || groups.contains(&s)
}

/// The check ID or group nearest to a selector that matches nothing, when one is near
/// (a few edits away): `rfc8166/4.5/short-mesage-discarded` -> `...short-message-discarded`.
pub fn did_you_mean(selector: &str) -> Option<String> {
    let names = catalogue::infos().flat_map(|i| std::iter::once(i.id).chain(i.groups.iter().copied()));
    let (best, d) = names.map(|n| (n, edit_distance(selector, n))).min_by_key(|&(_, d)| d)?;
    (d <= 1.max(selector.len() / 5)).then(|| best.to_string())
}

/// Levenshtein distance over bytes.
fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

/// Whether `check` matches a selector (see [`id_matches`]).
pub fn matches(check: &Check, selector: &str) -> bool {
    id_matches(check.info.id, check.info.groups, selector)
}

/// The checks a selection names, in catalogue order; an error names a selector matching
/// nothing, and says so when the selection is empty after the exclusions.
pub fn select(select: &[String], exclude: &[String]) -> Result<Vec<&'static Check>, String> {
    let all = catalogue::all();
    for s in select.iter().chain(exclude) {
        if !all.iter().any(|c| matches(c, s)) {
            if catalogue::client::all().any(|c| id_matches(c.info.id, c.info.groups, s)) {
                return Err(format!("{s:?} names only client checks: `rpcrdma-harness serve` judges those"));
            }
            let hint = did_you_mean(s).map(|m| format!("; did you mean {m:?}?")).unwrap_or_default();
            return Err(format!("{s:?} matches no check{hint} (see `rpcrdma-harness list`)"));
        }
    }
    let chosen: Vec<&'static Check> = all
        .into_iter()
        .filter(|c| select.is_empty() || select.iter().any(|s| matches(c, s)))
        .filter(|c| !exclude.iter().any(|s| matches(c, s)))
        .collect();
    if chosen.is_empty() {
        return Err(format!(
            "the selection is empty: --exclude {} leaves out every check {}",
            exclude.join(" --exclude "),
            if select.is_empty() { "there is".to_string() } else { format!("that {} selects", select.join(" ")) }
        ));
    }
    Ok(chosen)
}

fn embedded(faults: Faults) -> EmulatedConnector<Responder> {
    EmulatedConnector::new(Responder::reference(Config { faults, ..Config::default() }))
}

/// The exit status for a finished (or interrupted) run: a report that could not be written
/// is 2, an interrupted run 128 + the signal, any failure (or checks not run because the peer
/// went down, or under `--strict` a check left inconclusive, or a run that judged nothing) 1,
/// else 0.
pub fn exit_status(wrote: bool, totals: report::Totals) -> i32 {
    if !wrote {
        EXIT_USAGE
    } else if let Some(code) = signals::exit_code() {
        code
    } else if totals.failed > 0
        || totals.not_run > 0
        || (totals.strict && totals.inconclusive > 0)
        || totals.nothing_judged()
    {
        EXIT_FAILED
    } else if totals.errors > 0 {
        EXIT_HARNESS_ERROR
    } else {
        EXIT_OK
    }
}

/// Ends a run that judged nothing: the error on standard error, and in every report asked
/// for (an earlier run's report is never left standing as this one's).
fn failed(outputs: &mut report::Prepared, code: i32, message: &str) -> i32 {
    crate::errln!("error: {message}");
    report::write_failure(outputs, "run", code, message);
    code
}

pub fn run(args: RunArgs) -> i32 {
    // Every report destination is checked (and truncated) first, so whatever ends the run,
    // its reports say so.
    let mut outputs = match args.outputs.prepare() {
        Ok(p) => p,
        Err(e) => {
            crate::errln!("error: {e}");
            return EXIT_USAGE;
        }
    };
    let checks = match select(&args.select, &args.exclude) {
        Ok(c) => c,
        Err(e) => return failed(&mut outputs, EXIT_USAGE, &e),
    };
    let profile = match read_profile(args.expect.as_deref()) {
        Ok(p) => p,
        Err(e) => return failed(&mut outputs, EXIT_USAGE, &e),
    };
    let mut faults = Faults::default();
    for f in &args.fault {
        if !faults.set(f) {
            let e = format!("unknown fault {f:?}; known: {}", Faults::NAMES.join(", "));
            return failed(&mut outputs, EXIT_USAGE, &e);
        }
    }
    crate::output::text_to_stderr(args.outputs.report_on_stdout());
    crate::output::reconfigure();
    let quiet = args.text.quiet;
    let (connector, peer, transport): (Box<dyn Connector>, String, String) = match &args.peer {
        None => (Box::new(embedded(faults.clone())), "embedded reference responder".into(), "emulated".into()),
        Some(addr) => match crate::peer::connector(addr) {
            Ok(c) => {
                let d = c.describe();
                (c, addr.clone(), d)
            }
            Err(crate::peer::PeerError::Usage(e)) | Err(crate::peer::PeerError::Environment(e)) => {
                return failed(&mut outputs, EXIT_USAGE, &e);
            }
        },
    };
    let mut options = RunOptions {
        timeout: args.timeout,
        restart_wait: args.watch.restart_wait,
        interrupt: Some(&signals::INTERRUPT),
        ..RunOptions::default()
    };
    let fresh = args.peer.is_none().then(|| {
        let f = faults.clone();
        Box::new(move || Box::new(embedded(f.clone())) as Box<dyn Connector>) as crate::peer_health::Fresh
    });
    let mut target = match crate::peer_health::Watched::new(connector, fresh, &args.watch) {
        Ok(w) => w,
        Err(e) => return failed(&mut outputs, EXIT_USAGE, &e.to_string()),
    };

    // A peer that cannot be reached at all is exit 3, before running anything.
    if args.peer.is_some() {
        if let Err(e) = health::Peer::connector(&mut target).connect(&[], Instant::now() + options.timeout) {
            return failed(&mut outputs, EXIT_UNREACHABLE, &format!("cannot reach {peer}: {e}"));
        }
    }
    // The export's root file handle: by MOUNT from a peer, as NFS clients obtain it.
    let (root, mounted) = match crate::mount::for_run(&args.mount, args.peer.as_deref(), options.timeout) {
        Ok(r) => r,
        Err(code) => {
            // mount said why on standard error.
            report::write_failure(&mut outputs, "run", code, "the export's root file handle could not be had (MOUNT)");
            return code;
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
        textln!("rpcrdma-harness {} against {peer}, root handle {root} ({n}){against}", report::VERSION);
    }
    let peer_version = crate::peer_version::PeerVersion::new(args.version.peer_version.as_deref(), profile.as_ref());
    peer_version.announce(quiet);
    let strict = args.strict;
    let mut group: Vec<(CheckResult, Judged)> = Vec::new();
    let results = health::run_watched(&checks, &mut target, &options, &signals::INTERRUPT, |step| match step {
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
                    group.push((r.clone(), j));
                    if group.len() == repeat {
                        let (r, j) = aggregate(&group);
                        textln!("{} over {repeat} attempts: {}", report::text::line(&r, &j), outcome_counts(&group));
                        group.clear();
                    }
                }
            }
        }
    });
    let mut judged: Vec<_> = results.iter().map(|r| judge(r, strict, profile.as_ref())).collect();
    // Repeated: each check's attempts, and one representative result and judgement per check.
    let (results, attempts) = if repeat > 1 {
        let attempts: Vec<Vec<_>> =
            results.into_iter().zip(judged).collect::<Vec<_>>().chunks(repeat).map(<[_]>::to_vec).collect();
        let (reps, agg): (Vec<_>, Vec<_>) = attempts.iter().map(|a| aggregate(a)).unzip();
        judged = agg;
        (reps, attempts)
    } else {
        (results, Vec::new())
    };
    let interrupted = signals::received().is_some();
    let meta = Metadata {
        select: args.select.clone(),
        exclude: args.exclude.clone(),
        profile_path: args.expect.as_ref().map(|p| p.display().to_string()),
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
        results: &results,
        judged: &judged,
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
    if let Some((id, n)) = crate::peer_health::stayed_down(&results) {
        textln!("the peer went down after {id} and did not come back: {} not run", plural(n, "check", "checks"));
    }
    close(wrote, &run)
}

/// Prints the recap of the failed and diverging IDs, the closing line (and, for a run that
/// judged nothing, one line saying so), also under `--quiet`, and returns the exit status
/// ([`exit_status`]).
pub fn close(wrote: bool, run: &Run<'_>) -> i32 {
    for line in report::recap(run) {
        textln!("{line}");
    }
    let totals = run.totals();
    textln!("{}", report::closing_line(totals));
    if totals.nothing_judged() && signals::exit_code().is_none() {
        textln!("{}", report::nothing_judged_line(totals));
    }
    exit_status(wrote, totals)
}

/// A repeated check's result over its attempts: its worst attempt's status (a failure, then a
/// harness error, inconclusive, an expected divergence, pass-lax, pass, unsupported, skipped),
/// with that attempt as the representative result and its judgement.
pub fn aggregate(attempts: &[(CheckResult, Judged)]) -> (CheckResult, Judged) {
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
    let worst = attempts.iter().min_by_key(|(_, j)| rank(j.status)).expect("at least one attempt");
    worst.clone()
}

/// `fail 3, pass 2`: how many attempts had each outcome, most frequent first.
pub fn outcome_counts(attempts: &[(CheckResult, Judged)]) -> String {
    let mut counts: Vec<(&str, usize)> = Vec::new();
    for (r, _) in attempts {
        match counts.iter_mut().find(|(o, _)| *o == r.outcome.name()) {
            Some((_, n)) => *n += 1,
            None => counts.push((r.outcome.name(), 1)),
        }
    }
    counts.sort_by_key(|&(o, n)| (std::cmp::Reverse(n), o));
    counts.iter().map(|(o, n)| format!("{o} {n}")).collect::<Vec<_>>().join(", ")
}

/// Loads an expectation profile and checks that every entry names a known check (a typo
/// would otherwise hide a divergence); Err(exit code) after saying why.
pub fn load_profile(path: Option<&std::path::Path>) -> Result<Option<Expectations>, i32> {
    read_profile(path).map_err(|e| {
        crate::errln!("error: {e}");
        EXIT_USAGE
    })
}

/// [`load_profile`], with the error as text rather than printed.
pub fn read_profile(path: Option<&std::path::Path>) -> Result<Option<Expectations>, String> {
    let Some(path) = path else { return Ok(None) };
    let known = entries();
    let text =
        crate::input::read_text(path, "profile", crate::input::MAX_PROFILE).map_err(|e| format!("expectation {e}"))?;
    Expectations::from_json(&text)
        .and_then(|p| p.check_ids(|id| known.iter().any(|e| e.info.id == id)).map(|()| p))
        .map(Some)
        .map_err(|e| format!("expectation profile {}: {e}", path.display()))
}

#[derive(Debug, Args)]
pub struct ListArgs {
    /// IDs, prefixes or groups to list.
    #[arg(value_name = "SELECTOR")]
    select: Vec<String>,
    /// Also print each requirement, the acceptable outcomes and the rationale.
    #[arg(short, long)]
    verbose: bool,
    /// Print one JSON object: `{"checks": [...]}` with every field (and `client`).
    #[arg(long, conflicts_with = "groups")]
    json: bool,
    /// List the groups (for selectors) with how many checks each has.
    #[arg(long)]
    groups: bool,
    /// Print the requirements matrix instead: coverage per spec and side, then every
    /// normative statement with the checks that judge it or why none does yet. Selectors
    /// here are spec or section prefixes (`rfc8797`, `rfc8166/4.5`).
    #[arg(long, conflicts_with = "groups")]
    requirements: bool,
}

/// `list --requirements`: the matrix, as text or JSON.
fn list_requirements(args: &ListArgs) -> i32 {
    use rpcrdma_conformance::requirements;
    let chosen: Vec<&requirements::Requirement> = requirements::all()
        .iter()
        .filter(|r| args.select.is_empty() || args.select.iter().any(|s| id_matches(&r.id.replace('#', "/"), &[], s)))
        .collect();
    if chosen.is_empty() {
        let specs: Vec<&str> = requirements::SPECS.iter().map(|s| s.name).collect();
        crate::errln!("error: {:?} matches no requirement (specs: {})", args.select, specs.join(", "));
        return EXIT_USAGE;
    }
    if args.json {
        let mut v = requirements::to_json();
        v["requirements"] = serde_json::Value::Array(chosen.iter().map(|r| r.to_json()).collect());
        outln!("{}", serde_json::to_string_pretty(&v).expect("JSON values serialize"));
        return EXIT_OK;
    }
    let pct = |c: requirements::Coverage| match c.percent() {
        Some(p) => format!("{}/{} ({p:.0}%)", c.judged, c.total),
        None => "-".to_string(),
    };
    // The coverage of what the selection names (every statement without one), with a total.
    // Judged as proven: a fault that breaks the statement makes a citing check fail.
    let owned: Vec<requirements::Requirement> = chosen.iter().map(|r| (*r).clone()).collect();
    let coverage = requirements::coverage_proven(&owned);
    outln!("{:<14} {:>16} {:>16}", "spec", "server judged", "client judged");
    let mut all = requirements::SpecCoverage::default();
    for (spec, c) in &coverage {
        outln!("{:<14} {:>16} {:>16}", spec, pct(c.server), pct(c.client));
        all.server.judged += c.server.judged;
        all.server.total += c.server.total;
        all.client.judged += c.client.judged;
        all.client.total += c.client.total;
    }
    if coverage.len() > 1 {
        outln!("{:<14} {:>16} {:>16}", "all", pct(all.server), pct(all.client));
    }
    outln!();
    for r in &chosen {
        let judged: Vec<&str> = r.judged_by().collect();
        let reason = r.reason.strip_prefix("not yet judged: ").unwrap_or(&r.reason);
        let by = if judged.is_empty() { format!("not judged: {reason}") } else { judged.join(", ") };
        let (binds, observable) = (requirements::binds_name(r.binds), requirements::observable_name(r.observable));
        outln!("{}  [{}] binds {binds}, observable {observable}: {by}", r.id, r.key_word);
        if args.verbose {
            outln!("    {}", r.text);
        }
    }
    outln!("{}", plural(chosen.len(), "requirement", "requirements"));
    EXIT_OK
}

/// `rpcrdma-harness list`: every check with its requirement; client checks (judged by
/// `serve`) are marked `[client]`.
pub fn list(args: ListArgs) -> i32 {
    if args.requirements {
        return list_requirements(&args);
    }
    let all = entries();
    for s in &args.select {
        if !all.iter().any(|e| id_matches(e.info.id, e.info.groups, s)) {
            crate::errln!("error: {s:?} matches no check");
            return EXIT_USAGE;
        }
    }
    let chosen: Vec<Entry> = all
        .into_iter()
        .filter(|e| args.select.is_empty() || args.select.iter().any(|s| id_matches(e.info.id, e.info.groups, s)))
        .collect();
    if args.groups {
        // Per group: the checks `run` runs (server) and those `serve` judges (client).
        let mut groups: Vec<(&str, usize, usize)> = Vec::new();
        for e in &chosen {
            for g in e.info.groups {
                let i = match groups.iter().position(|(n, _, _)| n == g) {
                    Some(i) => i,
                    None => {
                        groups.push((g, 0, 0));
                        groups.len() - 1
                    }
                };
                if e.client {
                    groups[i].2 += 1;
                } else {
                    groups[i].1 += 1;
                }
            }
        }
        groups.sort();
        for (g, server, client) in &groups {
            let by = match (server, client) {
                (_, 0) => format!("{}, run by `run`", plural(*server, "check", "checks")),
                (0, _) => format!("{}, judged by `serve`", plural(*client, "client check", "client checks")),
                _ => format!("{} run by `run`, {} judged by `serve`", plural(*server, "check", "checks"), client),
            };
            outln!("{g}  ({by})");
        }
        outln!("{}", plural(groups.len(), "group", "groups"));
        return EXIT_OK;
    }
    if args.json {
        let checks: Vec<serde_json::Value> = chosen
            .iter()
            .map(|e| {
                serde_json::json!({
                    "id": e.info.id,
                    "key_word": e.info.key_word().as_str(),
                    "requirement": e.info.requirement(),
                    "acceptable": e.info.acceptable,
                    "rationale": e.info.rationale,
                    "precondition": e.info.precondition,
                    "groups": e.info.groups,
                    "client": e.client,
                })
            })
            .collect();
        let v = serde_json::json!({ "checks": checks });
        outln!("{}", serde_json::to_string_pretty(&v).expect("JSON values serialize"));
        return EXIT_OK;
    }
    for e in &chosen {
        let client = if e.client { "  [client: judged by serve]" } else { "" };
        outln!("{}  [{}]  ({}){client}", e.info.id, e.info.key_word().as_str(), e.info.groups.join(", "));
        if args.verbose {
            outln!("    requirement: {}", e.info.requirement());
            outln!("    acceptable:  {}", e.info.acceptable);
            outln!("    rationale:   {}", e.info.rationale);
            if let Some(p) = e.info.precondition {
                outln!("    precondition: {p}");
            }
        }
    }
    let clients = chosen.iter().filter(|e| e.client).count();
    outln!("{} ({} client)", plural(chosen.len(), "check", "checks"), clients);
    EXIT_OK
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_broken_check_exits_4_unless_the_peer_also_failed() {
        let errors = report::Totals { errors: 1, ..Default::default() };
        assert_eq!(exit_status(true, errors), EXIT_HARNESS_ERROR);
        assert_eq!(exit_status(true, report::Totals { failed: 1, ..errors }), EXIT_FAILED);
        assert_eq!(exit_status(true, report::Totals { passed: 3, ..Default::default() }), EXIT_OK);
        // A run that judged nothing is not green; an inconclusive check fails under --strict.
        assert_eq!(
            exit_status(true, report::Totals { skipped: 2, inconclusive: 1, ..Default::default() }),
            EXIT_FAILED
        );
        let some = report::Totals { passed: 1, inconclusive: 1, ..Default::default() };
        assert_eq!(exit_status(true, some), EXIT_OK);
        assert_eq!(exit_status(true, report::Totals { strict: true, ..some }), EXIT_FAILED);
        assert_eq!(report::closing_line(some), "1 passed, 0 failed, 0 skipped, 1 inconclusive");
        assert!(!some.nothing_judged());
        assert!(report::Totals { skipped: 3, ..Default::default() }.nothing_judged());
        assert_eq!(exit_status(false, errors), EXIT_USAGE);
    }
}
