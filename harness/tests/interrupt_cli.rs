//! Interrupted runs (issue 13): SIGINT and SIGTERM, sent with kill(2) as a terminal or a CI
//! runner sends them, end `run` and `serve` after the current step with the reports written
//! and an exit status that is not success: 130 for SIGINT, 143 for SIGTERM.

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

use common::{tmp, wait, End};
use serde_json::Value;

/// Starts the harness, waits for its first line of text (the signal handlers are in place
/// by then), sends `signals` one after the other, and waits for it to end.
fn interrupt(args: &[&str], signals: &[i32], gap: Duration) -> common::Finished {
    let mut child = Command::new(common::bin())
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    out.read_line(&mut first).unwrap();
    assert!(first.starts_with("rpcrdma-harness"), "{first}");
    for (i, &sig) in signals.iter().enumerate() {
        if i > 0 {
            std::thread::sleep(gap);
        }
        assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, sig) }, 0);
    }
    child.stdout = None;
    let rest = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut out, &mut s);
        s
    });
    let mut f = wait(child, Duration::from_secs(60));
    f.stdout = format!("{first}{}", rest.join().unwrap()).into_bytes();
    f
}

fn report(path: &std::path::Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).expect("the report was written")
}

#[test]
fn sigint_stops_run_with_exit_130_and_the_report() {
    let d = tmp("run-int");
    let json = d.join("r.json");
    let xml = d.join("r.xml");
    let f = interrupt(
        &["run", "--json", json.to_str().unwrap(), "--junit", xml.to_str().unwrap()],
        &[libc::SIGINT],
        Duration::ZERO,
    );
    assert_eq!(f.end, End::Exit(130), "{}", f.stderr());
    assert!(f.stderr().contains("stopping after the current check; press Ctrl-C again to abort"), "{}", f.stderr());
    let v = report(&json);
    assert_eq!(v["interrupted"], true);
    assert!(v["summary"]["skipped"].as_u64().unwrap() > 0);
    assert!(f.stdout().contains("interrupted"), "{}", f.stdout());
    let xml = std::fs::read_to_string(&xml).unwrap();
    roxmltree::Document::parse(&xml).expect("JUnit written and well-formed");
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn sigterm_stops_run_with_exit_143_and_the_report() {
    let d = tmp("run-term");
    let json = d.join("r.json");
    let f = interrupt(&["run", "--json", json.to_str().unwrap()], &[libc::SIGTERM], Duration::ZERO);
    assert_eq!(f.end, End::Exit(143), "{}", f.stderr());
    let v = report(&json);
    assert_eq!(v["interrupted"], true);
    let last = f.stdout().lines().last().unwrap_or("").to_string();
    assert!(last.ends_with(&format!("{} skipped", v["summary"]["skipped"])), "{last}");
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_second_sigint_aborts() {
    // A peer that never answers a bad version: the check waits its whole 60 s timeout, so
    // the first signal cannot end the run soon, and the second must.
    let d = tmp("abort");
    let json = d.join("r.json");
    std::fs::write(&json, r#"{"stale": "a report from an earlier run"}"#).unwrap();
    let started = std::time::Instant::now();
    let mut child = Command::new(common::bin())
        .args(["run", "rfc8166/4.5.1/vers-mismatch", "--fault", "ignore-bad-version", "--timeout", "60", "--progress"])
        .arg("--json")
        .arg(&json)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    out.read_line(&mut first).unwrap();
    assert!(first.starts_with("rpcrdma-harness"), "the run did not start: {first:?}");
    // The first signal only once the check is under way: one that lands before it starts
    // skips it, and the run ends before the second signal can be sent.
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut said = String::new();
    while !said.contains("[1/1] rfc8166/4.5.1/vers-mismatch\n") {
        assert!(err.read_line(&mut said).unwrap() > 0, "{said}");
    }
    let pid = child.id() as libc::pid_t;
    assert_eq!(unsafe { libc::kill(pid, libc::SIGINT) }, 0);
    while !said.contains("press Ctrl-C again to abort") {
        assert!(err.read_line(&mut said).unwrap() > 0, "{said}");
    }
    assert_eq!(unsafe { libc::kill(pid, libc::SIGINT) }, 0);
    let f = wait(child, Duration::from_secs(50));
    assert_eq!(f.end, End::Exit(130));
    let mut rest = String::new();
    let _ = std::io::Read::read_to_string(&mut err, &mut rest);
    // Everything standard error said, the lines read while waiting for the first message included.
    let all = format!("{said}{rest}");
    assert!(all.contains("aborted"), "{all}");
    assert!(started.elapsed() < Duration::from_secs(40), "the second signal did not abort: {:?}", started.elapsed());
    let mut text = String::new();
    let _ = std::io::Read::read_to_string(&mut out, &mut text);
    assert!(!text.contains(" passed, "), "aborted before the closing line: {text}");
    // No report, and no earlier report left to pass for this run's.
    assert!(!std::fs::read_to_string(&json).unwrap().contains("stale"));
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn serve_writes_its_reports_when_interrupted() {
    for (sig, code) in [(libc::SIGINT, 130), (libc::SIGTERM, 143)] {
        let d = tmp(&format!("serve-{sig}"));
        let json = d.join("r.json");
        let xml = d.join("r.xml");
        let f = interrupt(
            &["serve", "--self-test", "--json", json.to_str().unwrap(), "--junit", xml.to_str().unwrap()],
            &[sig],
            Duration::ZERO,
        );
        assert_eq!(f.end, End::Exit(code), "signal {sig}: {}", f.stderr());
        let v = report(&json);
        assert_eq!(v["interrupted"], true);
        assert_eq!(v["command"], "serve");
        assert!(std::fs::read_to_string(&xml).unwrap().contains("<testsuites"));
        std::fs::remove_dir_all(&d).unwrap();
    }
}
