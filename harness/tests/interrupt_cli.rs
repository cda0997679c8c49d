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
fn a_second_signal_aborts() {
    // A peer that never answers a bad version: the check waits its whole 60 s timeout. The
    // first signal cuts that wait short and the run would end on its own soon after, so the
    // second signal goes at once, as another signal (SIGTERM after SIGINT: two of one kind
    // may merge into one while the first is pending): whichever the handler takes second
    // aborts, before the run can end by itself.
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
    // The signals only once the check is under way: ones that land before it starts skip it.
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut said = String::new();
    while !said.contains("[1/1] rfc8166/4.5.1/vers-mismatch\n") {
        assert!(err.read_line(&mut said).unwrap() > 0, "{said}");
    }
    let pid = child.id() as libc::pid_t;
    assert_eq!(unsafe { libc::kill(pid, libc::SIGINT) }, 0);
    assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
    let f = wait(child, Duration::from_secs(50));
    assert!(matches!(f.end, End::Exit(130) | End::Exit(143)), "{:?}", f.end);
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

/// Starts the harness, waits `after` past its first line of text, sends SIGINT or SIGTERM
/// once, and waits for it to end; how long it took from the signal.
fn signal_after(args: &[&str], sig: i32, after: Duration) -> (common::Finished, Duration) {
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
    std::thread::sleep(after);
    let sent = std::time::Instant::now();
    assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, sig) }, 0);
    let rest = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut out, &mut s);
        s
    });
    let mut f = wait(child, Duration::from_secs(60));
    let took = sent.elapsed();
    f.stdout = format!("{first}{}", rest.join().unwrap()).into_bytes();
    (f, took)
}

/// Issue 24, edge 4: the first signal cuts the current check's wait short (a CI cancel grace
/// is about 10 s; the check would wait its whole --timeout of 30 s), the check is skipped as
/// interrupted rather than judged on a wait cut short, and the reports are written.
#[test]
fn the_first_signal_cuts_the_current_wait_short() {
    let d = tmp("run-cut");
    let json = d.join("r.json");
    // drop-unsendable-reply: the responder never answers this check's call.
    let args = [
        "run",
        "rfc8166/4.5.4/reply-chunk-too-small",
        "--fault",
        "drop-unsendable-reply",
        "--timeout",
        "30",
        "--json",
        json.to_str().unwrap(),
    ];
    let (f, took) = signal_after(&args, libc::SIGINT, Duration::from_millis(800));
    assert_eq!(f.end, End::Exit(130), "{}", f.stderr());
    assert!(took < Duration::from_secs(5), "the wait went on for {took:?} after the signal");
    let v = report(&json);
    assert_eq!(v["interrupted"], true);
    let check = &v["checks"][0];
    assert_eq!(check["status"], "skipped", "{check}");
    assert!(check["actual"].as_str().unwrap().contains("cut the check's wait short"), "{check}");
    std::fs::remove_dir_all(&d).unwrap();
}

/// Issue 24, edge 3: SIGTERM while an input read blocks (a FIFO nobody writes blocks in
/// open(2)) ends the run at once with 143 and a report saying why.
#[test]
fn sigterm_ends_a_blocking_read() {
    let d = tmp("run-fifo");
    let fifo = d.join("profile.fifo");
    let path = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o600) }, 0);
    let json = d.join("r.json");
    let child = Command::new(common::bin())
        .args(["run", "--expect", fifo.to_str().unwrap(), "--json", json.to_str().unwrap()])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Nothing is printed before the profile is read: give the handlers time to be installed.
    std::thread::sleep(Duration::from_millis(800));
    let sent = std::time::Instant::now();
    assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) }, 0);
    let f = wait(child, Duration::from_secs(30));
    assert_eq!(f.end, End::Exit(143), "{}", f.stderr());
    assert!(sent.elapsed() < Duration::from_secs(5), "{:?}", sent.elapsed());
    assert!(f.stderr().contains("interrupted by a signal while reading"), "{}", f.stderr());
    let v = report(&json);
    assert!(v["error"]["message"].as_str().unwrap().contains("interrupted by a signal"), "{v}");
    // decode reads its input the same way: Ctrl-C ends it (SA_RESTART restarted the read).
    let child = Command::new(common::bin())
        .args(["decode", "--file", fifo.to_str().unwrap()])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(800));
    assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) }, 0);
    let f = wait(child, Duration::from_secs(30));
    assert_eq!(f.end, End::Exit(130), "{}", f.stderr());
    assert!(f.stderr().contains("interrupted by a signal while reading"), "{}", f.stderr());
    std::fs::remove_dir_all(&d).unwrap();
}
