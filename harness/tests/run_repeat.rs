//! `run --repeat N` and profile entries that list a race's outcomes (issue 21, section 5): each
//! attempt judged on its own against the listed outcomes, the report keeping each attempt, and
//! the kernels table repeating exactly the checks its profiles list as races.

mod common;

use std::collections::BTreeSet;
use std::path::Path;

use common::{harness, tmp};
use rpcrdma_conformance::expectations::Expectations;
use serde_json::{json, Value};

const CHECK: &str = "rfc8166/3.4.5/position-beyond-payload";

/// `run --repeat 3 CHECK` against the embedded responder with `faults`, judged by a profile
/// listing `outcomes` for CHECK: (exit status, JSON report).
fn repeated(name: &str, faults: &[&str], outcomes: Value) -> (Option<i32>, Value) {
    let d = tmp(name);
    let profile = d.join("p.json");
    let entry = json!({"id": CHECK, "outcomes": outcomes, "reason": "a race"});
    std::fs::write(&profile, json!({"peer": "t", "divergences": [entry]}).to_string()).unwrap();
    let report = d.join("r.json");
    let mut cmd = harness();
    cmd.args(["run", "--quiet", "--repeat", "3", CHECK, "--expect"]).arg(&profile).arg("--json").arg(&report);
    for f in faults {
        cmd.args(["--fault", f]);
    }
    let out = cmd.output().unwrap();
    let v: Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    std::fs::remove_dir_all(&d).unwrap();
    (out.status.code(), v)
}

#[test]
fn every_attempt_is_judged_against_the_listed_outcomes() {
    // Listed: fail and pass. The reference responder passes, lenient-read-list fails: both expected.
    for faults in [&[][..], &["lenient-read-list"][..]] {
        let (code, v) = repeated("listed", faults, json!({"fail": 2, "pass": 1}));
        assert_eq!(code, Some(0), "{faults:?}: {v}");
        let c = &v["checks"][0];
        assert_eq!(v["repeat"], 3);
        assert_eq!(c["status"], "expected-divergence", "{faults:?}");
        let outcome = if faults.is_empty() { "pass" } else { "fail" };
        assert_eq!(c["outcomes"], json!({ outcome: 3 }));
        let attempts = c["attempts"].as_array().unwrap();
        assert_eq!(attempts.len(), 3);
        for (k, a) in attempts.iter().enumerate() {
            assert_eq!((a["attempt"].as_u64(), a["outcome"].as_str()), (Some(k as u64 + 1), Some(outcome)));
            assert_eq!(a["status"], "expected-divergence");
            assert!(a["transcript"].as_array().is_some_and(|t| !t.is_empty()), "{a}");
        }
    }
    // Fail not listed: every attempt fails, and so does the run.
    let (code, v) = repeated("unlisted", &["lenient-read-list"], json!({"pass-lax": 1, "pass": 1}));
    assert_eq!(code, Some(1), "{v}");
    assert_eq!(v["checks"][0]["status"], "fail");
    assert_eq!(v["summary"]["failed"], 1, "a check counts once, not once per attempt");
}

#[test]
fn without_repeat_the_report_is_unchanged() {
    let d = tmp("once");
    let report = d.join("r.json");
    let out = harness().args(["run", "--quiet", CHECK, "--json"]).arg(&report).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let v: Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    assert!(v.get("repeat").is_none() && v["checks"][0].get("attempts").is_none(), "{v}");
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn the_text_names_each_attempt_and_counts_the_outcomes() {
    let out = harness().args(["run", "--repeat", "2", CHECK, "--fault", "lenient-read-list"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("[attempt 1 of 2]") && text.contains("[attempt 2 of 2]"), "{text}");
    assert!(text.contains("over 2 attempts: fail 2"), "{text}");
    assert!(text.contains("0 passed, 1 failed, 0 skipped"), "{text}");
    for bad in ["0", "-1", "x", "1001"] {
        let out = harness().args(["run", "--repeat", bad, CHECK]).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "--repeat {bad}");
    }
}

/// The kernels table's REPEAT field (N:CHECK,...) names exactly the checks the line's profiles
/// (rxe and -siw) list with several outcomes, each a server check: a race is neither left out
/// nor judged against a single outcome.
#[test]
fn the_kernels_table_repeats_exactly_the_profiles_races() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let table = std::fs::read_to_string(root.join("harness/linux-peer/kernels")).unwrap();
    let server: Vec<&str> = rpcrdma_conformance::catalogue::all().iter().map(|c| c.info.id).collect();
    let mut lines = 0;
    for line in table.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()) {
        lines += 1;
        let f: Vec<&str> = line.split_whitespace().collect();
        assert!(f.len() == 4 || f.len() == 5, "{line}: NAME SUITES IMAGE PROFILE [REPEAT]");
        let repeat: BTreeSet<&str> = match f.get(4) {
            None => BTreeSet::new(),
            Some(r) => {
                let (n, ids) = r.split_once(':').unwrap_or_else(|| panic!("{line}: REPEAT is N:CHECK,..."));
                assert!(n.parse::<u32>().is_ok_and(|n| n > 0), "{line}: {n} is no count");
                ids.split(',').collect()
            }
        };
        for id in &repeat {
            assert!(server.contains(id), "{line}: {id} is no server check");
        }
        if f[3] == "none" {
            assert!(repeat.is_empty(), "{line}: repeats checks with no profile to judge them");
            continue;
        }
        let rxe = root.join("conformance/profiles").join(f[3]);
        let siw = rxe.with_file_name(f[3].replace(".json", "-siw.json"));
        for p in [&rxe, &siw].into_iter().filter(|p| *p == &rxe || p.exists()) {
            let e = Expectations::from_json(&std::fs::read_to_string(p).unwrap()).unwrap();
            // The server checks whose outcome races (`run --repeat` measures them); a client
            // check's race is measured over separate client phases, `serve` has no repeat.
            let races: BTreeSet<&str> = e
                .divergences
                .iter()
                .filter(|d| d.outcome.is_race() && server.contains(&d.id.as_str()))
                .map(|d| d.id.as_str())
                .collect();
            assert_eq!(races, repeat, "{}: its races against {line}", p.display());
        }
    }
    assert!(lines >= 3, "{table}");
}
