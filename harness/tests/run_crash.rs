//! `run` against a peer that crashes: the embedded reference responder with the crash-like
//! fault `crash-on-huge-segment-count` (the message of `rfc8166/4.5.2/huge-segment-count`
//! takes it down: it drops the connection and refuses every later one, as NFS-Ganesha does
//! after its SIGSEGV). The crash is recorded against that check alone; a restart command
//! brings a fresh responder and the run goes on; without one the rest are not run (exit 1);
//! a profile can list the crash.

mod common;

use std::path::Path;

use common::{harness, tmp};
use serde_json::Value;

const CRASHER: &str = "rfc8166/4.5.2/huge-segment-count";
/// The check before the crasher, the crasher, and two after it (catalogue order).
const SELECTION: [&str; 4] = [
    "rfc8166/4.5.2/not-bool-discriminator",
    CRASHER,
    "rfc8166/4.5.2/msg-without-payload",
    "rfc8166/4.5/error-reply-form",
];
const RESTART: &str = "echo 'ganesha.log: restarting'; echo '#0 0x00007f in xdr_rpc_rdma_header ()' >&2";

/// Runs the selection against the crashing responder with `extra` options; the exit status,
/// the JSON report and the text.
fn run(d: &Path, extra: &[&str]) -> (i32, Value, String) {
    let json = d.join("r.json");
    let out = harness()
        .args(["run", "--timeout", "1", "--fault", "crash-on-huge-segment-count"])
        .args(SELECTION)
        .args(extra)
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).expect("the report was written");
    (out.status.code().unwrap_or(-1), v, String::from_utf8_lossy(&out.stdout).into_owned())
}

fn check<'v>(v: &'v Value, id: &str) -> &'v Value {
    v["checks"].as_array().unwrap().iter().find(|c| c["id"] == id).unwrap_or_else(|| panic!("no {id} in {v}"))
}

/// The IDs of the checks with a peer event.
fn crashed(v: &Value) -> Vec<&str> {
    v["checks"].as_array().unwrap().iter().filter(|c| !c["peer"].is_null()).map(|c| c["id"].as_str().unwrap()).collect()
}

#[test]
fn without_a_restart_the_crash_is_its_checks_and_the_rest_are_not_run() {
    let d = tmp("crash-no-restart");
    let (code, v, text) = run(&d, &[]);
    assert_eq!(code, 1, "{text}");
    assert_eq!(crashed(&v), [CRASHER]);
    let c = check(&v, CRASHER);
    assert_eq!(c["status"], "fail");
    assert_eq!(c["peer"]["event"], "crashed");
    assert!(c["peer"]["restart"].is_null());
    assert!(c["divergence_reason"].as_str().unwrap().contains("RFC 8166 4.5"), "{c}");
    assert_eq!(check(&v, SELECTION[0])["status"], "pass");
    for id in &SELECTION[2..] {
        let c = check(&v, id);
        assert_eq!(c["status"], "skipped", "{c}");
        assert_eq!(c["not_run_after"], CRASHER);
        assert_eq!(c["actual"], format!("not run: the peer went down after {CRASHER}"));
        assert!(c["transcript"].as_array().unwrap().is_empty(), "not run, so nothing was sent");
    }
    assert_eq!(v["summary"]["not_run"], 2);
    assert!(text.contains(&format!("{CRASHER} (FAIL, peer crashed")), "{text}");
    assert!(text.contains(&format!("the peer went down after {CRASHER} and did not come back: 2 checks not run")));
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn with_a_restart_the_checks_after_the_crash_run_and_pass_and_its_output_is_reported() {
    let d = tmp("crash-restart");
    let xml = d.join("r.xml");
    let (code, v, text) = run(&d, &["--restart-command", RESTART, "--junit", xml.to_str().unwrap()]);
    assert_eq!(code, 1, "an unlisted crash fails the run: {text}");
    assert_eq!(crashed(&v), [CRASHER]);
    let restart = &check(&v, CRASHER)["peer"]["restart"];
    assert_eq!(restart["command"], RESTART);
    assert_eq!(restart["status"], "exit 0");
    assert_eq!(restart["back"], true);
    assert_eq!(restart["output"], "ganesha.log: restarting\n#0 0x00007f in xdr_rpc_rdma_header ()\n");
    for id in SELECTION.iter().filter(|id| **id != CRASHER) {
        assert_eq!(check(&v, id)["status"], "pass", "{id}: {text}");
    }
    assert_eq!((v["summary"]["failed"].as_u64(), v["summary"]["not_run"].as_u64()), (Some(1), Some(0)));
    let junit = std::fs::read_to_string(&xml).unwrap();
    assert!(junit.contains("xdr_rpc_rdma_header") && junit.contains("peer crashed"), "{junit}");
    assert!(text.contains("peer crashed; restarted"), "{text}");
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_restart_that_fails_leaves_the_rest_not_run() {
    let d = tmp("crash-restart-fails");
    let (code, v, text) = run(&d, &["--restart-command", "echo cannot; exit 7", "--restart-wait", "0.5"]);
    assert_eq!(code, 1, "{text}");
    let restart = &check(&v, CRASHER)["peer"]["restart"];
    assert_eq!((restart["status"].as_str(), restart["back"].as_bool()), (Some("exit 7"), Some(false)));
    assert_eq!(restart["output"], "cannot\n");
    assert_eq!(v["summary"]["not_run"], 2);
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_profile_listing_the_crash_makes_it_expected() {
    let d = tmp("crash-profile");
    let profile = d.join("p.json");
    let entry = |peer: &str| {
        format!(
            r#"{{"peer": "crashing", "divergences": [{{"id": "{CRASHER}", "outcome": "fail", {peer}"reason": "SIGSEGV in the header walk"}}]}}"#
        )
    };
    std::fs::write(&profile, entry(r#""peer": "crashed", "#)).unwrap();
    let p = profile.to_str().unwrap();
    let (code, v, text) = run(&d, &["--expect", p, "--restart-command", "true"]);
    assert_eq!(code, 0, "{text}");
    assert_eq!(check(&v, CRASHER)["status"], "expected-divergence");
    // Listed, but the peer did not come back: the checks after it were not judged.
    let (code, v, _) = run(&d, &["--expect", p]);
    assert_eq!((code, check(&v, CRASHER)["status"].as_str()), (1, Some("expected-divergence")));
    // A divergence entry that does not say the peer crashes does not cover a crash.
    std::fs::write(&profile, entry("")).unwrap();
    let (code, v, _) = run(&d, &["--expect", p, "--restart-command", "true"]);
    assert_eq!((code, check(&v, CRASHER)["status"].as_str()), (1, Some("fail")));
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_peer_that_stays_up_is_never_restarted() {
    let d = tmp("crash-faithful");
    let marker = d.join("restarted");
    let json = d.join("r.json");
    harness()
        .args(["run", "--timeout", "1", "rfc8166/4.5", "--restart-command"])
        .arg(format!("touch {}", marker.display()))
        .arg("--json")
        .arg(&json)
        .assert()
        .code(0);
    let v: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert!(crashed(&v).is_empty());
    assert!(!marker.exists(), "the restart command ran against a peer that stayed up");
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn the_peer_log_lines_of_the_crashing_check_are_attached() {
    let d = tmp("crash-peer-log");
    let log = d.join("ganesha.log");
    std::fs::write(&log, "before the run\n").unwrap();
    // A server logging all the while: its lines during the crashing check are attached.
    let writer = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("while :; do echo tick >> {}; sleep 0.02; done", log.display()))
        .spawn()
        .unwrap();
    let (code, v, text) = run(&d, &["--peer-log", log.to_str().unwrap()]);
    let mut writer = writer;
    let _ = writer.kill();
    let _ = writer.wait();
    assert_eq!(code, 1, "{text}");
    let lines = check(&v, CRASHER)["peer"]["log"].as_array().unwrap().clone();
    assert!(!lines.is_empty());
    assert!(lines.iter().all(|l| l == "tick"), "{lines:?}");
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn bad_watch_options_are_usage_errors() {
    harness().args(["run", "rfc8166/4.5.1", "--peer-log", "/nonexistent/ganesha.log"]).assert().code(2);
    harness().args(["run", "rfc8166/4.5.1", "--restart-wait", "0"]).assert().code(2);
}
