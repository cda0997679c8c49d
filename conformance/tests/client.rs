//! The client catalogue judging the reference requester over the emulated transport: every
//! client check passes for the conformant requester, and each notices the requester fault
//! that breaks it. The workload runs once plainly and once per scenario, each scenario on a
//! responder of its own, so one broken reaction cannot hide another; and once more speaking
//! Version Two, for the Version Two checks.

use std::time::Duration;

use rpcrdma_conformance::catalogue::client::{all, judge_all, nfs4, scenarios_of, speaks_nfs41, undetermined, v2};
use rpcrdma_conformance::codec::Profile;
use rpcrdma_conformance::engine::Outcome;
use rpcrdma_peers::observe::Observed;
use rpcrdma_peers::requester::{observed_workloads, RequesterFaults, RequesterOptions};
use rpcrdma_peers::responder::{Config, Scenario};

fn config() -> Config {
    Config { credits: 8, receive_window: Some(64), handle_delay: Duration::from_millis(20), ..Config::default() }
}

fn options() -> RequesterOptions {
    RequesterOptions { timeout: Duration::from_millis(700), ..RequesterOptions::default() }
}

fn v2_options() -> RequesterOptions {
    RequesterOptions { version: 2, ..options() }
}

/// The NFSv4.1 workload with a back channel on its connection (the reverse-direction checks).
fn nfs41_options() -> RequesterOptions {
    RequesterOptions { nfs4_minor: Some(1), ..options() }
}

/// Serves the reference requester's workload with observing responders, in Version One and
/// in Version Two; the judged results.
fn judged(faults: &RequesterFaults) -> Vec<(&'static str, Outcome, String)> {
    let mut observed = Vec::new();
    for (version, options) in [(false, options()), (true, v2_options())] {
        let mut runs = vec![None];
        runs.extend(scenarios_of(all().filter(|c| v2::is_v2(c) == version)).into_iter().map(Some));
        observed.extend(observed_workloads(&config(), &runs, &options, faults).0);
    }
    let mut runs = vec![None];
    runs.extend(scenarios_of(all().filter(|c| speaks_nfs41(c))).into_iter().map(Some));
    observed.extend(observed_workloads(&config(), &runs, &nfs41_options(), faults).0);
    judge_all(&observed, &Profile::default())
        .into_iter()
        .map(|r| (r.check.id, r.outcome, r.actual.to_string()))
        .collect()
}

#[test]
fn a_version_one_requester_gets_unsupported_from_every_version_two_check() {
    let runs: Vec<_> = Scenario::ALL.iter().copied().map(Some).chain([None]).collect();
    let (observed, _) = observed_workloads(&config(), &runs, &options(), &RequesterFaults::default());
    let results = judge_all(&observed, &Profile::default());
    for r in &results {
        let v2 = v2::CHECKS.iter().any(|c| c.info.id == r.check.id);
        if all().any(|c| c.info.id == r.check.id && speaks_nfs41(c)) {
            // NFSv3 offers no back channel: no reverse-direction call is ever sent; nor any
            // NFS version 4 call.
            assert_eq!(r.outcome, Outcome::Inconclusive, "{}: {}", r.check.id, r.actual);
        } else if v2 {
            assert_eq!(r.outcome, Outcome::Unsupported, "{}: {}", r.check.id, r.actual);
            assert!(r.actual.to_string().contains("Version One only"), "{}: {}", r.check.id, r.actual);
        } else {
            assert_eq!(r.outcome, Outcome::Pass, "{}: {}", r.check.id, r.actual);
        }
    }
}

#[test]
fn the_version_two_requester_speaks_version_two_on_every_connection() {
    let (observed, errors) = observed_workloads(&config(), &[None], &v2_options(), &RequesterFaults::default());
    assert!(errors.is_empty(), "{errors:?}");
    assert!(!observed.is_empty());
    for c in &observed {
        let served = rpcrdma_conformance::catalogue::client::Served::of(c, &Profile::default());
        assert!(v2::speaks_v2(&served), "{:?}", c.events.first());
    }
}

#[test]
fn the_version_two_requester_falls_back_to_version_one() {
    let config = Config { version_two: false, ..config() };
    let (observed, errors) = observed_workloads(&config, &[None], &v2_options(), &RequesterFaults::default());
    assert!(errors.is_empty(), "{errors:?}");
    let results = judge_all(&observed, &Profile::default());
    let v2_pass = results.iter().filter(|r| v2::CHECKS.iter().any(|c| c.info.id == r.check.id));
    // The connections began in Version Two: the Version Two checks judge them, and none fails.
    assert!(v2_pass.clone().all(|r| r.outcome != Outcome::Fail), "{results:?}");
}

#[test]
fn the_reference_requester_passes_every_client_check() {
    let results = judged(&RequesterFaults::default());
    let bad: Vec<String> =
        results.iter().filter(|r| r.1 != Outcome::Pass).map(|r| format!("{} {:?}: {}", r.0, r.1, r.2)).collect();
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    assert_eq!(results.len(), all().count());
}

#[test]
fn each_client_check_notices_its_requester_fault() {
    let mut wrong = Vec::new();
    for c in all() {
        assert!(!c.info.broken_by.is_empty(), "no requester fault breaks {}", c.info.id);
        for (fault, want) in c.info.broken_by {
            let results = judged(&RequesterFaults::only(fault));
            let (_, got, actual) = results.iter().find(|r| r.0 == c.info.id).expect("the check ran");
            if got != want {
                wrong.push(format!("{} with {fault}: {got:?} (want {want:?}): {actual}", c.info.id));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    for f in RequesterFaults::NAMES {
        let used = all().any(|c| c.info.broken_by.iter().any(|(n, _)| n == f));
        assert!(used, "requester fault {f} is used by no check");
    }
}

#[test]
fn every_scenario_has_a_check_and_is_played_once_on_its_own_connections() {
    for s in Scenario::ALL {
        assert!(all().any(|c| c.scenario == Some(*s)), "scenario {} is judged by no check", s.name());
    }
    let mut observed = Vec::new();
    for (version, options) in [(false, options()), (true, v2_options())] {
        let scenarios = Scenario::ALL.iter().filter(|s| s.version_two() == version);
        let runs: Vec<_> = scenarios.copied().map(Some).chain([None]).collect();
        let (seen, errors) = observed_workloads(&config(), &runs, &options, &RequesterFaults::default());
        assert!(errors.is_empty(), "{errors:?}");
        observed.extend(seen);
    }
    // The NFS version 4 scenarios, and `ambiguous-credit`, play on the NFSv4.1 workload.
    let nfs4 = nfs4::CHECKS.iter().chain(undetermined::CHECKS.iter());
    let nfs4_runs: Vec<_> = nfs4.filter_map(|c| c.scenario).map(Some).collect();
    let (seen, errors) = observed_workloads(&config(), &nfs4_runs, &nfs41_options(), &RequesterFaults::default());
    assert!(errors.is_empty(), "{errors:?}");
    observed.extend(seen);
    for s in Scenario::ALL {
        let injected: Vec<u32> = observed
            .iter()
            .flat_map(|c| c.events.iter().map(move |(_, e)| (c.scenario, e)))
            .filter_map(|(on, e)| match e {
                Observed::Injected { scenario, xid } if *scenario == s.name() => {
                    assert_eq!(on, Some(s.name()), "injected on another scenario's connection");
                    Some(*xid)
                }
                _ => None,
            })
            .collect();
        // The scenarios played on the CM exchange or CCP alone replace no reply.
        let want = usize::from(s.replaces_reply());
        assert_eq!(injected.len(), want, "scenario {}: {injected:x?}", s.name());
    }
    let plain = observed.iter().filter(|c| c.scenario.is_none());
    assert!(plain.flat_map(|c| &c.events).all(|(_, e)| !matches!(e, Observed::Injected { .. })));
}

/// The outcome of check `id` against the reference requester with `options` and `faults`,
/// playing only its scenario.
fn outcome_of(id: &str, options: &RequesterOptions, faults: &RequesterFaults) -> (Outcome, String) {
    let check = all().find(|c| c.info.id == id).expect("a client check");
    let (observed, _) = observed_workloads(&config(), &[check.scenario], options, faults);
    let results = rpcrdma_conformance::catalogue::client::judge(&[check], &observed, &Profile::default());
    (results[0].outcome, results[0].actual.to_string())
}

/// Each check declaring a precondition: a requester that never gives the event is
/// inconclusive (never a pass), and one that breaks the rule once given it fails.
#[test]
fn a_check_whose_precondition_did_not_happen_is_inconclusive_and_a_breaking_peer_fails() {
    let stops = RequesterOptions { stop_after_first_read: true, ..options() };
    let serial = RequesterOptions { window: Some(1), ..options() };
    let none = RequesterFaults::default();
    // (check, a workload that gives no chance, a fault that breaks the rule given the chance)
    let cases: [(&str, &RequesterOptions, &str); 10] = [
        // One call at a time never reaches the grant of 8.
        ("rfc8166/3.3.1/requester-within-grant", &serial, "exceed-grant"),
        // Nothing sent after the reply that granted 0.
        ("rfc8166/3.3.1/requester-zero-grant", &stops, "zero-grant-as-one"),
        // No call after the huge grant, then calls only one at a time.
        ("rfc8166/3.3.1/requester-receives-for-grant", &stops, "window-beyond-receives"),
        ("rfc8166/3.3.1/requester-receives-for-grant", &serial, "window-beyond-receives"),
        ("rfc8166/3.3.1/requester-within-shrunk-grant", &stops, "ignore-grant-changes"),
        // No new connection after we closed the first.
        ("rfc8797/4/requester-settings-on-reconnect", &stops, "keep-first-thresholds"),
        // No call over 1024 bytes in all: nothing that could have gone inline beyond it.
        ("rfc8797/5.1/requester-no-private-data", &stops, "assume-large-responder-receive"),
        ("rfc8797/5.2/requester-bad-identifier", &stops, "assume-large-responder-receive"),
        // No call too long for inline without DDP-eligible data: no long call (RFC 8166 3.5.3).
        ("rfc8166/4.2.4/requester-nomsg-payload", &stops, "nomsg-without-payload"),
        ("rfc8166/3.5.3/requester-long-call-padded", &stops, "long-call-unpadded"),
    ];
    for (id, no_chance, fault) in cases {
        let check = all().find(|c| c.info.id == id).unwrap();
        assert!(check.info.precondition.is_some(), "{id} declares no precondition");
        let (got, actual) = outcome_of(id, no_chance, &none);
        assert_eq!(got, Outcome::Inconclusive, "{id} with no chance: {actual}");
        // The same workload breaking the rule, given the chance, fails.
        let (got, actual) = outcome_of(id, &options(), &RequesterFaults::only(fault));
        assert_eq!(got, Outcome::Fail, "{id} with {fault}: {actual}");
        // A conformant requester given the chance passes.
        let (got, actual) = outcome_of(id, &options(), &none);
        assert_eq!(got, Outcome::Pass, "{id}: {actual}");
    }
    // The zero-grant check judges the call a requester sends after it on the connection (as
    // xprtrdma's rpcrdma_reply_handler() does, taking a grant of 0 as 1), not only a burst.
    let (got, actual) =
        outcome_of("rfc8166/3.3.1/requester-zero-grant", &serial, &RequesterFaults::only("zero-grant-as-one"));
    assert_eq!(got, Outcome::Fail, "{actual}");
    assert!(actual.contains("after every reply granted 0"), "{actual}");
}
