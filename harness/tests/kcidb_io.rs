//! `--kcidb` and `report kcidb` (issue 24): the output validated by KCIDB's own I/O library
//! (the `kcidb-io` Python package, `pip install kcidb-io`), not by a schema of ours; and the
//! status mapping checked against the JSON report of the same run.
//!
//! The validation needs Python with kcidb-io, so it is `#[ignore]`d here and run by `.ci/run`
//! (`cargo test -p rpcrdma-harness --test kcidb_io -- --ignored`), which installs the package.

mod common;

use std::path::Path;
use std::process::Command;

use common::{harness, tmp};
use serde_json::Value;

/// Validates `file` with kcidb-io's latest schema (`kcidb_io.schema.LATEST.validate_exactly`,
/// jsonschema's Draft 7 validator with format checks): Ok(the schema version), or the error.
fn kcidb_validate(file: &Path) -> Result<String, String> {
    let script = "import json, sys\n\
        from kcidb_io.schema import LATEST\n\
        data = json.load(open(sys.argv[1]))\n\
        LATEST.validate_exactly(data)\n\
        print(f'v{LATEST.major}.{LATEST.minor}')\n";
    let out = Command::new("python3")
        .args(["-c", script])
        .arg(file)
        .output()
        .map_err(|e| format!("python3: {e} (install Python 3 and `pip install kcidb-io`)"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

fn read(p: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap()
}

/// A run with failures, expected divergences, unexpected passes, a crash and the checks it
/// left unrun, and a serve run: every kind of test the converter writes.
fn reports(d: &Path) -> Vec<std::path::PathBuf> {
    let profile = d.join("vendor.json");
    std::fs::write(
        &profile,
        r#"{"peer": "vendor", "measured": ["6.12.118-1"], "divergences": [
            {"id": "rfc8166/3.4.6.2/write-chunk-no-pad", "outcome": "fail", "reason": "writes the pad (a fault switch)"},
            {"id": "rfc8166/4.2.4/null-call", "outcome": "fail", "reason": "listed to be stale"}]}"#,
    )
    .unwrap();
    let runs: [(&str, &[&str]); 3] = [
        (
            "faulty.json",
            &[
                "run",
                "write-chunks",
                "rfc8166/4.2.4/null-call",
                "--fault",
                "pad-write-chunk",
                "--peer-version",
                "6.12.118-1",
                "--expect",
                "vendor.json",
            ],
        ),
        (
            "crash.json",
            &["run", "rfc8166/4.5.2", "--fault", "crash-on-huge-segment-count", "--peer-version", "6.12.118-1"],
        ),
        ("serve.json", &["serve", "--self-test", "--peer-version", "6.12.118-1"]),
    ];
    let mut out = Vec::new();
    for (name, args) in runs {
        let r = harness()
            .current_dir(d)
            .args(args)
            .args(["-q", "--json", name, "--kcidb"])
            .arg(format!("{name}.kcidb"))
            .output()
            .unwrap();
        assert!(matches!(r.status.code(), Some(0 | 1)), "{args:?}: {}", String::from_utf8_lossy(&r.stderr));
        out.push(d.join(name));
    }
    out
}

#[test]
#[ignore = "needs Python's kcidb-io (pip install kcidb-io); run by .ci/run"]
fn kcidb_output_is_valid_for_kcidb_io() {
    let d = tmp("kcidb-io");
    let reports = reports(&d);
    for r in &reports {
        let f = r.with_extension("json.kcidb");
        let v = kcidb_validate(&f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        assert_eq!(v, "v5.3", "the latest schema kcidb-io knows is what we write");
    }
    let all = d.join("all.kcidb.json");
    let out = harness().arg("report").arg("kcidb").args(&reports).arg("-o").arg(&all).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    kcidb_validate(&all).unwrap();
    // The validator is not a rubber stamp: a check ID as a path ('/' is not allowed), an
    // unknown status, a null property are each refused.
    let good = read(&all);
    type Breakage = (&'static str, fn(&mut Value));
    let breakages: [Breakage; 3] = [
        ("slash path", |v| v["tests"][0]["path"] = "rfc8166/4.2.4/null-call".into()),
        ("status", |v| v["tests"][0]["status"] = "INCONCLUSIVE".into()),
        ("null", |v| v["tests"][0]["comment"] = Value::Null),
    ];
    for (what, breakage) in breakages {
        let mut bad = good.clone();
        breakage(&mut bad);
        let f = d.join("bad.json");
        std::fs::write(&f, serde_json::to_vec(&bad).unwrap()).unwrap();
        assert!(kcidb_validate(&f).is_err(), "kcidb-io took a broken file ({what})");
    }
}

#[test]
fn kcidb_statuses_follow_the_json_report() {
    let d = tmp("kcidb-map");
    let reports = reports(&d);
    let mut expected_kinds = std::collections::BTreeSet::new();
    for r in &reports {
        let json = read(r);
        let k = read(&r.with_extension("json.kcidb"));
        assert_eq!(k["version"], serde_json::json!({"major": 5, "minor": 3}));
        assert_eq!(k["checkouts"][0]["id"], "rpcrdma:6.12.118-1", "the checkout is the peer's version");
        assert_eq!(k["builds"][0]["checkout_id"], k["checkouts"][0]["id"]);
        let checks = json["checks"].as_array().unwrap();
        let tests = k["tests"].as_array().unwrap();
        assert_eq!(tests.len(), checks.len(), "one test per check");
        for (c, t) in checks.iter().zip(tests) {
            assert_eq!(t["misc"]["check_id"], c["id"]);
            assert_eq!(t["build_id"], k["builds"][0]["id"]);
            let want = match c["status"].as_str().unwrap() {
                "pass" | "pass-lax" | "unexpected-pass" => "PASS",
                "fail" | "expected-divergence" => "FAIL",
                "unsupported" | "inconclusive" | "skipped" => "SKIP",
                "error" => "ERROR",
                other => panic!("status {other}"),
            };
            assert_eq!(t["status"], want, "{c}");
            expected_kinds.insert(c["status"].as_str().unwrap().to_string());
            // The profile's entries are KCIDB issues: present when it diverged as listed,
            // absent when the check now passes.
            let incident = k["incidents"].as_array().unwrap().iter().find(|i| i["test_id"] == t["id"]);
            match c["status"].as_str().unwrap() {
                "expected-divergence" => assert_eq!(incident.unwrap()["present"], true),
                "unexpected-pass" => assert_eq!(incident.unwrap()["present"], false),
                _ => assert!(incident.is_none(), "{c}"),
            }
            if c["status"] == "fail" {
                assert!(t["log_excerpt"].as_str().unwrap().contains(c["actual"].as_str().unwrap()));
            }
        }
    }
    for kind in ["pass", "fail", "expected-divergence", "unexpected-pass", "skipped"] {
        assert!(expected_kinds.contains(kind), "the reports exercise {kind}: {expected_kinds:?}");
    }
}
