//! `fuzz` watching its peer (issue 26, issue 21 section 6): the report survives the harness
//! being killed outright (the OOM killer's SIGKILL), a crash backtrace in the peer's own log
//! (`--peer-log`) names the crash site, which a profile lists or the run fails, and
//! `--peer-pid-file` reads the peer process's memory.

mod common;

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{tmp, wait, End};
use serde_json::Value;

fn json(path: &std::path::Path) -> Option<Value> {
    serde_json::from_slice(&std::fs::read(path).ok()?).ok()
}

#[test]
fn a_fuzz_run_killed_outright_leaves_a_report_saying_it_did_not_end() {
    let d = tmp("fuzz-killed");
    let report = d.join("fuzz-report.json");
    let child = Command::new(common::bin())
        .args(["fuzz", "--seed", "1", "--seconds", "60", "--out"])
        .arg(d.join("findings"))
        .arg("--json")
        .arg(&report)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id() as libc::pid_t;
    // Wait for a report with some cases in it, then kill it as the OOM killer does.
    let deadline = Instant::now() + Duration::from_secs(30);
    let seen = loop {
        if let Some(v) = json(&report).filter(|v| v["cases"].as_u64().unwrap_or(0) > 0) {
            break v;
        }
        assert!(Instant::now() < deadline, "no report with cases in it within 30 s");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(seen["ended"].as_str().unwrap().starts_with("not ended"), "{seen}");
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(unsafe { libc::kill(pid, libc::SIGKILL) }, 0);
    let f = wait(child, Duration::from_secs(10));
    assert_eq!(f.end, End::Signal(libc::SIGKILL));
    let v = json(&report).expect("the report is whole JSON after the kill");
    assert_eq!(v["schema"], "rpcrdma-harness/fuzz-report/v1");
    assert!(v["ended"].as_str().unwrap().starts_with("not ended"), "{v}");
    // Rewritten as the run went on, not only once at the start.
    assert!(v["cases"].as_u64().unwrap() > seen["cases"].as_u64().unwrap(), "{v}\nfirst: {seen}");
}

/// NFS-Ganesha 6.5's crash handler output, as it logged the write list crash in the peer VM.
const BACKTRACE: &str = "\
27/11/2026 06:53:33 : epoch 6b0928d7 : rpcrdma-peer : nfs-ganesha-129[svc_18] gsh_libunwind :NFS STARTUP :MAJ :BACKTRACE:
 #0 gsh_libunwind + 0x29 [ip=0x7f5a210bb9f9] [sp=0x7f59fb7fbce0]
 #1 crash_handler + 0x18 [ip=0x7f5a2109a728] [sp=0x7f59fb7fc730]
 #2 __sigaction + 0x40 [ip=0x7f5a20ea3050] [sp=0x7f59fb7fc740]
 #3 xdr_rdma_svc_recv + 0x26b [ip=0x7f5a20e4dd1b] [sp=0x7f59fb7fd410]
 #4 svc_rdma_decode + 0x47 [ip=0x7f5a20e4a8d7] [sp=0x7f59fb7fd4e0]
 #5 svc_request + 0x2c [ip=0x7f5a20e3b05c] [sp=0x7f59fb7fd500]
 #6 xdr_rdma_wrap_callback + 0x26 [ip=0x7f5a20e4be56] [sp=0x7f59fb7fd520]
";
const SITE: &str = "crash: xdr_rdma_svc_recv < svc_rdma_decode < svc_request";

/// Fuzzes the embedded responder for a few seconds following `log`, into which a crash
/// backtrace is appended a moment after the start; returns (exit code, JSON report).
fn fuzz_with_a_crash_in_the_log(name: &str, expect: Option<&str>) -> (Option<i32>, Value) {
    let d = tmp(name);
    let log = d.join("peer.log");
    std::fs::write(&log, "a line from before the run\n").unwrap();
    let report = d.join("fuzz-report.json");
    let mut cmd = Command::new(common::bin());
    cmd.args(["fuzz", "--seed", "1", "--seconds", "3", "--out"])
        .arg(d.join("findings"))
        .arg("--json")
        .arg(&report)
        .arg("--peer-log")
        .arg(&log);
    if let Some(profile) = expect {
        let p = d.join("profile.json");
        std::fs::write(&p, profile).unwrap();
        cmd.arg("--expect").arg(&p);
    }
    let child = cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    std::thread::sleep(Duration::from_millis(800));
    let mut f = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
    f.write_all(BACKTRACE.as_bytes()).unwrap();
    drop(f);
    let done = wait(child, Duration::from_secs(60));
    (done.code(), json(&report).unwrap_or_else(|| panic!("no report: {}", done.stderr())))
}

fn profile(kind: &str) -> String {
    serde_json::json!({
        "peer": "test",
        "description": "the embedded responder with a crash site in its log",
        "divergences": [],
        "findings": [{"kind": kind, "reason": "the site this test writes into the log"}]
    })
    .to_string()
}

#[test]
fn a_backtrace_in_the_peer_log_names_the_crash_site() {
    let (code, v) = fuzz_with_a_crash_in_the_log("crash-site-new", None);
    let findings = v["findings"].as_array().unwrap();
    let crash: Vec<&Value> = findings.iter().filter(|f| f["class"] == "crash").collect();
    assert_eq!(crash.len(), 1, "{v}");
    assert_eq!(format!("crash: {}", crash[0]["detail"].as_str().unwrap()), SITE);
    assert!(crash[0]["observed"].as_str().unwrap().contains("#3 xdr_rdma_svc_recv + 0x26b"), "{v}");
    // Not in any profile: a new finding fails the run.
    assert_eq!(code, Some(1), "{v}");
}

#[test]
fn a_listed_crash_site_is_known_and_another_is_not() {
    let (code, v) = fuzz_with_a_crash_in_the_log("crash-site-known", Some(&profile(SITE)));
    assert_eq!(code, Some(0), "{v}");
    assert!(v["findings"][0]["known"].is_string(), "{v}");
    // A profile that lists only a crash at an unknown site, or another site, does not cover it.
    for other in ["crash", "crash: xdr_rdma_svc_reply < svc_rdma_decode < svc_request"] {
        let (code, v) = fuzz_with_a_crash_in_the_log("crash-site-other", Some(&profile(other)));
        assert_eq!(code, Some(1), "{other}: {v}");
        assert!(v["findings"][0]["known"].is_null(), "{v}");
    }
}

#[test]
fn the_peer_process_memory_is_read_from_its_pid_file() {
    let d = tmp("pid-file");
    let pid_file = d.join("peer.pid");
    // This test process stands for the peer: it does not grow per connection.
    std::fs::write(&pid_file, format!("{}\n", std::process::id())).unwrap();
    let report = d.join("fuzz-report.json");
    let out = common::run(
        &[
            "fuzz",
            "--seed",
            "1",
            "--max-messages",
            "300",
            "--out",
            d.join("findings").to_str().unwrap(),
            "--json",
            report.to_str().unwrap(),
            "--peer-pid-file",
            pid_file.to_str().unwrap(),
        ],
        None,
        Duration::from_secs(60),
    );
    assert_eq!(out.code(), Some(0), "{}{}", out.stdout(), out.stderr());
    let v = json(&report).unwrap();
    let m = &v["peer_memory"];
    assert!(m["most_held_kib"].as_u64().unwrap() > 0, "{v}");
    assert!(m["total_kib"].as_u64().unwrap() > m["least_available_kib"].as_u64().unwrap(), "{v}");
    assert_eq!(m["restarts"], 0, "{v}");
    assert!(v["findings"].as_array().unwrap().is_empty(), "{v}");
    assert!(out.stdout().contains("peer memory: it held at most"), "{}", out.stdout());
}

#[test]
fn a_pid_file_naming_no_process_is_refused() {
    let d = tmp("pid-file-bad");
    for (content, what) in
        [(None, "missing"), (Some("not a number\n"), "garbage"), (Some("999999999\n"), "no such process")]
    {
        let pid_file = d.join("peer.pid");
        let _ = std::fs::remove_file(&pid_file);
        if let Some(c) = content {
            std::fs::write(&pid_file, c).unwrap();
        }
        let out = common::run(
            &[
                "fuzz",
                "--seconds",
                "1",
                "--out",
                d.join("f").to_str().unwrap(),
                "--peer-pid-file",
                pid_file.to_str().unwrap(),
            ],
            None,
            Duration::from_secs(30),
        );
        assert_eq!(out.code(), Some(2), "{what}: {}", out.stderr());
        assert!(out.stderr().contains("--peer-pid-file"), "{what}: {}", out.stderr());
    }
    let out = common::run(&["fuzz", "--seconds", "1", "--peer-memory-floor", "95"], None, Duration::from_secs(30));
    assert_eq!(out.code(), Some(2), "{}", out.stderr());
}
