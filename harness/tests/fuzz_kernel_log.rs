//! `fuzz --kernel-log`: a bug report the peer's kernel logs during a case is a finding, kept
//! under a signature without CPU, PID or addresses, with its trace; a profile that lists the
//! finding's kind makes it known (exit 0). The log here is a file the test appends to, as the
//! kernel appends to /dev/kmsg.

use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use assert_cmd::Command;
use serde_json::Value;

const WARN: &str = "4,1520,86412345,-;WARNING: CPU: 0 PID: 812 at net/sunrpc/xprtrdma/svc_rdma_rw.c:351 \
                    svc_rdma_post_chunk_ctxt+0x1a0/0x1f0 [rpcrdma]\n4,1521,86412350,c; Call Trace:\n";
const KIND: &str = "kernel-report: WARNING at net/sunrpc/xprtrdma/svc_rdma_rw.c svc_rdma_post_chunk_ctxt";

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("rpcrdma-fuzz-klog-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Fuzzes the faithful embedded responder for 3 s while a warning is logged once, 1 s in.
fn fuzz_with_a_warning(d: &std::path::Path, extra: &[&str]) -> (Option<i32>, String, Value) {
    let log = d.join("kmsg");
    std::fs::write(&log, "6,1,1,-;an old line, logged before the run\n").unwrap();
    let writer = {
        let log = log.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_secs(1));
            let mut f = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
            f.write_all(WARN.as_bytes()).unwrap();
        })
    };
    let json = d.join("r.json");
    let out = Command::cargo_bin("rpcrdma-harness")
        .unwrap()
        .args(["fuzz", "--seconds", "3", "--seed", "5", "--timeout", "0.3", "--kernel-log"])
        .arg(&log)
        .arg("--out")
        .arg(d.join("out"))
        .arg("--json")
        .arg(&json)
        .args(extra)
        .output()
        .unwrap();
    writer.join().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    let v: Value = serde_json::from_slice(&std::fs::read(&json).expect("the JSON report")).unwrap();
    (out.status.code(), text, v)
}

#[test]
fn a_kernel_warning_during_a_case_is_a_finding_with_its_trace() {
    let d = tmp("warn");
    let (code, text, v) = fuzz_with_a_warning(&d, &[]);
    assert_eq!(code, Some(1), "{text}");
    let findings = v["findings"].as_array().unwrap();
    let f = findings.iter().find(|f| f["class"] == "kernel-report").unwrap_or_else(|| panic!("{text}"));
    assert_eq!(format!("kernel-report: {}", f["detail"].as_str().unwrap()), KIND);
    let observed = f["observed"].as_str().unwrap();
    assert!(
        // The line number is in the finding's text, not in its signature (a point release
        // moves it).
        observed.contains("svc_rdma_post_chunk_ctxt+0x1a0/0x1f0")
            && observed.contains("svc_rdma_rw.c:351")
            && observed.contains("Call Trace:"),
        "{observed}"
    );
    assert!(!observed.contains("an old line"), "{observed}");
    assert!(f["known"].is_null());
    // Logged once: one finding of this kind, and its reproducer on disk.
    assert_eq!(findings.iter().filter(|f| f["class"] == "kernel-report").count(), 1);
    let file = f["reproducer"].as_str().unwrap();
    assert!(std::fs::read_to_string(file).unwrap().contains("kernel-report"));
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_finding_the_profile_lists_is_known_and_does_not_fail_the_run() {
    let d = tmp("known");
    let profile = d.join("p.json");
    let entry = serde_json::json!({"peer": "test", "divergences": [], "findings": [
        {"kind": KIND, "reason": "svc_rdma_post_chunk_ctxt() warns on a test line"}]});
    std::fs::write(&profile, entry.to_string()).unwrap();
    let (code, text, v) = fuzz_with_a_warning(&d, &["--expect", profile.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{text}");
    let f = v["findings"].as_array().unwrap().iter().find(|f| f["class"] == "kernel-report").unwrap().clone();
    assert_eq!(f["known"], "svc_rdma_post_chunk_ctxt() warns on a test line");
    assert!(text.contains("known (the profile lists it)"), "{text}");
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn watch_options_are_checked() {
    let d = tmp("usage");
    let missing = d.join("no-such-log");
    let out = Command::cargo_bin("rpcrdma-harness")
        .unwrap()
        .args(["fuzz", "--seconds", "1", "--kernel-log"])
        .arg(&missing)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--kernel-log"));
    let out = Command::cargo_bin("rpcrdma-harness")
        .unwrap()
        .args(["fuzz", "--seconds", "1", "--restart-command", "true"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--restart-command applies to --peer only"));
    let profile = d.join("bad.json");
    std::fs::write(&profile, r#"{"peer": "p", "divergences": [], "findings": [{"kind": "explosion", "reason": "r"}]}"#)
        .unwrap();
    let out = Command::cargo_bin("rpcrdma-harness")
        .unwrap()
        .args(["fuzz", "--seconds", "1", "--expect"])
        .arg(&profile)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("not a finding class"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::remove_dir_all(&d).unwrap();
}
