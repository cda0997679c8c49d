//! `fuzz --reverse` whose peer went down and could not be brought back fails the run as the
//! forward fuzzer's does (docs/fuzzing.md, "Exit status"): exit 1 even when the profile lists
//! every finding, `ended` and `peer_down` in the report saying so. The embedded responder with
//! a crash-like fault stands for a server restarted by `--restart-command`: a command that
//! fails leaves it down, one that exits 0 brings it back (the same run then exits 0).

mod common;

use common::{harness, tmp};
use serde_json::Value;

#[test]
fn a_peer_that_stays_down_fails_the_reverse_run_even_with_every_finding_known() {
    let d = tmp("fuzz-reverse-down");
    let profile = d.join("profile.json");
    std::fs::write(
        &profile,
        r#"{"peer": "p", "divergences": [], "findings": [{"kind": "crash", "reason": "the responder's crash-like fault"}]}"#,
    )
    .unwrap();
    let fuzz = |restart: &str, name: &str| {
        let json = d.join(format!("{name}.json"));
        let o = harness()
            .args(["fuzz", "--reverse", "--seed", "5", "--max-cases", "100", "--seconds", "60"])
            .args(["--fault", "crash-on-unknown-reverse-xid", "--restart-command", restart])
            .arg("--expect")
            .arg(&profile)
            .arg("--out")
            .arg(d.join(name))
            .arg("--json")
            .arg(&json)
            .timeout(std::time::Duration::from_secs(60))
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&o.stdout).into_owned();
        let v: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).expect("the report was written");
        (o.status.code(), text, v)
    };

    // The restart works: the crash is found, confirmed, listed: green.
    let (code, text, v) = fuzz("true", "up");
    assert_eq!(code, Some(0), "{text}");
    assert_eq!(v["findings"][0]["class"], "crash", "{v}");
    assert!(v["findings"][0]["known"].is_string(), "{v}");
    assert_eq!(v["peer_down"], Value::Null, "{v}");
    assert!(!text.contains("the peer is down"), "{text}");

    // The restart fails: the same finding, listed, but the rest of the budget went unfuzzed.
    let (code, text, v) = fuzz("false", "down");
    assert_eq!(code, Some(1), "{text}");
    assert_eq!(v["ended"], "the peer went down and cannot be restarted", "{v}");
    assert_eq!(v["findings"].as_array().map(Vec::len), Some(1), "{v}");
    assert!(v["findings"][0]["known"].is_string(), "{v}");
    assert_eq!(v["findings"][0]["confirmed"], false, "not confirmed without a restart: {v}");
    let why = "the restart command failed (exit 1): false";
    assert_eq!(v["peer_down"], why, "{v}");
    assert!(text.contains(&format!("the peer is down: {why}")), "{text}");
    assert!(v["cases"].as_u64().unwrap() < 100, "no case after the crash: {v}");
    std::fs::remove_dir_all(&d).unwrap();
}
