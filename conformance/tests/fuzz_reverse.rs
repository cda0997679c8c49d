//! `fuzz --reverse`: hostile reverse-direction replies toward a server (RFC 8167 5.2), proven
//! against the embedded reference responder: nothing found against the faithful one, a
//! responder that falls over on a reply of an unknown XID found, its finding replayed, and a
//! server whose calls are unusable reported unsupported rather than passed.

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use rpcrdma_conformance::engine::RunOptions;
use rpcrdma_conformance::fuzz::reverse::{self, After, Config, Ended, Finding, ReplyMutation};
use rpcrdma_conformance::fuzz::{Class, Embedded};
use rpcrdma_peers::responder::Faults;

const REPLY: Duration = Duration::from_millis(300);

fn config(seed: u64, cases: u64) -> Config {
    Config {
        seed,
        duration: Duration::from_secs(120),
        max_cases: Some(cases),
        options: RunOptions {
            timeout: Duration::from_secs(2),
            silence: Duration::from_millis(300),
            ..RunOptions::default()
        },
        reply_wait: REPLY,
        tool_version: "test".into(),
        stop_after_findings: Some(1),
    }
}

#[test]
fn finds_nothing_against_the_faithful_responder() {
    let mut t = Embedded::new(Faults::default());
    let c = Config { stop_after_findings: None, ..config(11, 60) };
    let r = reverse::run(&mut t, &c, &AtomicBool::new(false), |_| {});
    assert!(r.findings.is_empty(), "false findings: {}", r.text());
    assert_eq!(r.ended, Ended::Cases, "{}", r.text());
    // Every case answered a real call with a mutated reply, and the server lived on.
    assert_eq!(r.outcomes[After::NoCall.name()], 0, "{}", r.text());
    assert_eq!(r.outcomes[After::Refused.name()] + r.outcomes[After::Silent.name()], 0, "{}", r.text());
    assert!(!r.judged_nothing());
    assert!(r.mutations.values().filter(|n| **n > 0).count() > 10, "{}", r.text());
}

#[test]
fn finds_a_responder_that_falls_over_on_an_unknown_xid_and_replays_it() {
    let fault = "crash-on-unknown-reverse-xid";
    let mut t = Embedded::new(Faults::only(fault));
    let r = reverse::run(&mut t, &config(5, 200), &AtomicBool::new(false), |_| {});
    assert_eq!(r.findings.len(), 1, "{}", r.text());
    let f = r.findings[0].clone();
    assert_eq!(f.kind.class, Class::Crash, "{}", r.text());
    assert_eq!(r.unanswered[f.mutated.mutation.name()][After::Refused.name()], 1, "{}", r.text());
    assert!(f.confirmed, "{}", r.text());
    // Only a reply whose rdma_xid matches no call of the server can show it.
    assert!(
        matches!(
            f.mutated.mutation,
            ReplyMutation::UnknownXid | ReplyMutation::RdmaXidDiffers | ReplyMutation::ByteFlip
        ),
        "{}",
        r.text()
    );
    assert_eq!(reverse::draw(5, f.case), f.mutated, "the seed and case name the mutation");
    // Through a file, and replayed alone: against the faulty responder, and not the faithful.
    let back = Finding::from_json(&serde_json::from_str(&f.to_json().to_string()).unwrap()).unwrap();
    assert_eq!(back, f);
    let options = config(5, 1).options;
    let (hit, run) = reverse::replay(&mut Embedded::new(Faults::only(fault)), &back, &options, REPLY);
    assert!(hit, "{}", run.describe());
    let (hit, run) = reverse::replay(&mut Embedded::new(Faults::default()), &back, &options, REPLY);
    assert!(!hit && run.after == After::Answered, "{}", run.describe());
}

#[test]
fn a_finding_file_that_names_another_case_is_refused() {
    let f = Finding {
        tool_version: "test".into(),
        seed: 5,
        case: 3,
        mutated: reverse::draw(5, 4),
        peer: "p".into(),
        kind: rpcrdma_conformance::fuzz::Kind { class: Class::Crash, detail: String::new() },
        observed: String::new(),
        confirmed: false,
    };
    let err = Finding::from_json(&f.to_json()).unwrap_err();
    assert!(err.contains("seed 5 case 3 draws"), "{err}");
}

#[test]
fn a_server_with_no_usable_reverse_direction_call_is_unsupported() {
    // Its calls say msg_type REPLY (RFC 8167 5.1): none can be answered, nothing is fuzzed.
    let mut t = Embedded::new(Faults::only("reverse-call-reply-type"));
    let r = reverse::run(&mut t, &config(1, 20), &AtomicBool::new(false), |_| {});
    assert!(matches!(&r.ended, Ended::Unsupported(_)), "{}", r.text());
    assert!(r.ended.name().starts_with("unsupported: the server sends no reverse-direction calls"), "{}", r.text());
    assert!(r.judged_nothing() && r.findings.is_empty(), "{}", r.text());
    assert_eq!(r.cases, reverse::NO_CALL_SET_UPS, "{}", r.text());
}
