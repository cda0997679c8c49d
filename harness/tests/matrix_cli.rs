//! `rpcrdma-harness matrix` as a CI engineer uses it (issue 24): the same report given twice is
//! refused, `--fail-on-drift` gates on drift, and an interrupted run's skipped checks are not
//! drift.

mod common;

use common::{harness, tmp};
use serde_json::json;

fn report(dir: &std::path::Path, name: &str, interrupted: bool, checks: &[(&str, &str)]) -> String {
    let checks: Vec<_> = checks.iter().map(|(id, st)| json!({"id": id, "status": st, "actual": ""})).collect();
    let v = json!({"schema": "rpcrdma-harness/report/v1", "peer": "p", "expectations": "prof",
        "interrupted": interrupted, "started_unix": 1_700_000_000u64,
        "tool": {"revision": "abc123"}, "checks": checks});
    let path = dir.join(name);
    std::fs::write(&path, v.to_string()).unwrap();
    path.display().to_string()
}

#[test]
fn the_same_report_twice_is_refused() {
    let d = tmp("matrix-twice");
    let a = report(&d, "a.json", false, &[("rfc8166/4.2.4/null-call", "pass")]);
    let again = d.join(".").join("a.json").display().to_string();
    let out = harness().args(["matrix", &a, &format!("{again}=B")]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("twice"));
}

#[test]
fn fail_on_drift_gates_and_an_interrupted_run_is_no_drift() {
    let d = tmp("matrix-drift");
    let id = "rfc8166/4.2.4/null-call";
    let a = report(&d, "a.json", false, &[(id, "pass")]);
    let b = report(&d, "b.json", false, &[(id, "fail")]);
    let out = harness().args(["matrix", &format!("{a}=A"), &format!("{b}=B"), "--fail-on-drift"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    let md = String::from_utf8_lossy(&out.stdout);
    assert!(md.contains("1 rows that differ"), "{md}");
    assert!(md.contains("profile prof, harness revision abc123, started 2023-11-14 22:13:20 UTC"), "{md}");
    assert!(md.contains("**totals**"), "{md}");
    // Without the flag the matrix is information, exit 0.
    let out = harness().args(["matrix", &format!("{a}=A"), &format!("{b}=B")]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    // An interrupted run skipped the check: not run there, so no drift.
    let c = report(&d, "c.json", true, &[(id, "skipped")]);
    let out = harness().args(["matrix", &format!("{a}=A"), &format!("{c}=C"), "--fail-on-drift"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stdout));
    assert!(String::from_utf8_lossy(&out.stdout).contains("interrupted"));
}
