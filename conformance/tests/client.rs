//! The client catalogue judging the reference requester over the emulated transport: every
//! client check passes for the conformant requester, and each notices the requester fault
//! that breaks it. The workload runs once plainly and once per scenario, each scenario on a
//! responder of its own, so one broken reaction cannot hide another.

use std::time::Duration;

use rpcrdma_conformance::catalogue::client::{all, judge_all, scenarios_of};
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

/// Serves the reference requester's workload with observing responders; the judged results.
fn judged(faults: &RequesterFaults) -> Vec<(&'static str, Outcome, String)> {
    let mut runs = vec![None];
    runs.extend(scenarios_of(all()).into_iter().map(Some));
    let (observed, _) = observed_workloads(&config(), &runs, &options(), faults);
    judge_all(&observed).into_iter().map(|r| (r.check.id, r.outcome, r.actual.to_string())).collect()
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
    let runs: Vec<_> = Scenario::ALL.iter().copied().map(Some).chain([None]).collect();
    let (observed, errors) = observed_workloads(&config(), &runs, &options(), &RequesterFaults::default());
    assert!(errors.is_empty(), "{errors:?}");
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
