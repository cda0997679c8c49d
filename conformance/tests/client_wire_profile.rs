//! The Version Two client checks under every Version Two choice of the wire profile, given to
//! the reference requester, the observing responder and the judge alike: each check passes
//! or, where the chosen revision lacks its statement, is unsupported naming the choice; and
//! each requester fault that breaks a check by default still breaks it under the choice.

use std::time::Duration;

use rpcrdma_conformance::catalogue::client::{judge_all, scenarios_of, v2};
use rpcrdma_conformance::codec::Profile;
use rpcrdma_conformance::engine::Outcome;
use rpcrdma_peers::requester::{observed_workloads, RequesterFaults, RequesterOptions};
use rpcrdma_peers::responder::Config;

/// The Version Two checks' results for the reference requester with `faults` under `profile`.
fn judged(profile: Profile, faults: &RequesterFaults) -> Vec<(&'static str, Outcome, String)> {
    let config = Config {
        credits: 8,
        receive_window: Some(64),
        handle_delay: Duration::from_millis(20),
        profile,
        ..Config::default()
    };
    let options =
        RequesterOptions { version: 2, timeout: Duration::from_millis(700), profile, ..RequesterOptions::default() };
    let mut runs = vec![None];
    runs.extend(scenarios_of(v2::CHECKS.iter()).into_iter().map(Some));
    let observed = observed_workloads(&config, &runs, &options, faults).0;
    judge_all(&observed, &profile)
        .into_iter()
        .filter(|r| v2::CHECKS.iter().any(|c| c.info.id == r.check.id))
        .map(|r| (r.check.id, r.outcome, r.actual.to_string()))
        .collect()
}

#[test]
fn every_v2_choice_holds_for_the_reference_requester_and_its_faults_still_show() {
    let direction = ["v2-01/4.2.2/requester-direction", "v2-01/4.2.2/requester-optdir-call"];
    // (choice, checks unsupported under it, a word of their reason). Their faults are not
    // tried: the field they write is not in the -00 envelope, or (rtrext-literal) the
    // ROPT_INITXCH they bend is not sent.
    let choices: [(&str, &[&str], &str); 5] = [
        ("v2-00", &[direction[0], direction[1], "v2-01/4.2.2/requester-optdir-payload"], "-00"),
        ("v2-errors-02", &[], ""),
        ("v2-errors-04", &[], ""),
        ("rtrext-literal", &[direction[1]], "rtrext-literal"),
        ("props-v2-03", &[], ""),
    ];
    let mut wrong = Vec::new();
    for (choice, unsupported, reason) in choices {
        let mut profile = Profile::default();
        assert!(profile.apply(choice), "{choice}");
        let plain = judged(profile, &RequesterFaults::default());
        assert_eq!(plain.len(), v2::CHECKS.len(), "{choice}");
        for (id, outcome, actual) in &plain {
            let skipped = unsupported.contains(id);
            let want = if skipped { Outcome::Unsupported } else { Outcome::Pass };
            if *outcome != want || (skipped && !actual.contains(reason)) {
                wrong.push(format!("{choice}: {id} {} (want {}): {actual}", outcome.name(), want.name()));
            }
        }
        for c in v2::CHECKS.iter().filter(|c| !unsupported.contains(&c.info.id)) {
            for (fault, broken) in c.info.broken_by {
                let results = judged(profile, &RequesterFaults::only(fault));
                let (_, outcome, actual) = results.iter().find(|(id, ..)| *id == c.info.id).expect("judged");
                if outcome != broken {
                    wrong.push(format!(
                        "{choice}: {} with fault {fault}: {} (want {}): {actual}",
                        c.info.id,
                        outcome.name(),
                        broken.name()
                    ));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
