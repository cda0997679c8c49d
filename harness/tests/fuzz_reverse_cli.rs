//! `fuzz --reverse` and `replay` of its findings at the command line, against the embedded
//! reference responder: a crash-like responder fault found (exit 1, a finding file), the file
//! replayed against the faulty responder (exit 1) and the faithful one (exit 0); the faithful
//! responder fuzzed without findings (exit 0); a server whose calls are unusable unsupported,
//! judged nothing (exit 1); options that mean nothing here refused (exit 2).

mod common;

use common::{harness, tmp};
use serde_json::Value;

#[test]
fn finds_replays_and_reports_unsupported() {
    let d = tmp("fuzz-reverse-cli");
    let out = d.join("found");
    let json = d.join("r.json");
    let fuzz = |fault: &[&str], cases: &str, out: &std::path::Path, json: &std::path::Path| {
        harness()
            .args(["fuzz", "--reverse", "--seed", "5", "--max-cases", cases, "--seconds", "60"])
            .args(fault)
            .arg("--out")
            .arg(out)
            .arg("--json")
            .arg(json)
            .output()
            .unwrap()
    };
    let o = fuzz(&["--fault", "crash-on-unknown-reverse-xid"], "100", &out, &json);
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    assert_eq!(o.status.code(), Some(1), "{text}");
    let v: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(v["findings"][0]["class"], "crash", "{v}");
    let file = v["findings"][0]["reproducer"].as_str().expect("a finding file").to_string();
    let replay = |fault: &[&str]| harness().args(["replay", &file]).args(fault).output().unwrap();
    let r = replay(&["--fault", "crash-on-unknown-reverse-xid"]);
    assert_eq!(r.status.code(), Some(1), "{}", String::from_utf8_lossy(&r.stdout));
    assert!(String::from_utf8_lossy(&r.stdout).contains("REPRODUCED: crash"));
    let r = replay(&[]);
    assert_eq!(r.status.code(), Some(0), "{}", String::from_utf8_lossy(&r.stdout));

    let o = fuzz(&[], "30", &d.join("none"), &json);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stdout));
    let v: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(v["after"]["answered"], 30, "{v}");

    let o = fuzz(&["--fault", "reverse-call-reply-type"], "30", &d.join("unsupported"), &json);
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    assert_eq!(o.status.code(), Some(1), "{text}");
    assert!(text.contains("unsupported: the server sends no reverse-direction calls"), "{text}");
    let v: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(v["unsupported"], true, "{v}");

    let o = harness().args(["fuzz", "--reverse", "--journal", "/dev/null"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
}
