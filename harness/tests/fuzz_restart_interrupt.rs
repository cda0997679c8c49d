//! A restart command runs in a process group of its own (so that its stragglers die with it
//! past its time limit), where the terminal's SIGINT does not reach it: when the harness is
//! interrupted while one runs, the harness signals the command's group with the signal it got
//! (the command may clean up), kills what is left of the group, and the run ends at once,
//! its report written, `ended: interrupted`, exit 130 / 143. The embedded responder with a
//! crash-like fault stands for a server restarted by `--restart-command`; `fuzz` and
//! `fuzz --reverse` alike.

mod common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{tmp, wait, End};
use serde_json::Value;

/// Whether process `pid` is gone (or a zombie nobody has reaped yet: dead all the same).
fn gone(pid: &str) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat.rsplit(')').next().is_some_and(|rest| rest.trim_start().starts_with('Z')),
    }
}

fn wait_for(path: &Path, limit: Duration) -> String {
    let end = Instant::now() + limit;
    loop {
        if let Ok(s) = std::fs::read_to_string(path) {
            if s.ends_with('\n') {
                return s.trim().to_string();
            }
        }
        assert!(Instant::now() < end, "{} never written", path.display());
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn an_interrupt_during_a_restart_signals_the_command_and_ends_the_run_with_its_report() {
    let cases: [(&str, &[&str], i32, &str); 3] = [
        ("forward-int", &["--fault", "crash-on-many-write-chunks", "--seed", "1"], libc::SIGINT, "INT"),
        ("forward-term", &["--fault", "crash-on-many-write-chunks", "--seed", "1"], libc::SIGTERM, "TERM"),
        ("reverse-int", &["--reverse", "--fault", "crash-on-unknown-reverse-xid", "--seed", "5"], libc::SIGINT, "INT"),
    ];
    for (name, args, signal, trapped) in cases {
        let d = tmp(&format!("fuzz-restart-{name}"));
        let at = |f: &str| d.join(f).display().to_string();
        // The shell writes which signal reached it and exits; the sleep it started in the
        // background ignores SIGINT (as a non-interactive shell's background jobs do) and must
        // be gone all the same.
        let command = format!(
            "trap 'echo INT > {t}; exit 1' INT; trap 'echo TERM > {t}; exit 1' TERM; sleep 60 & echo $! > {s}; wait",
            t = at("trapped"),
            s = at("sleep"),
        );
        let json = d.join("r.json");
        let child = Command::new(common::bin())
            .arg("fuzz")
            .args(args)
            .args(["--seconds", "60", "--timeout", "0.3", "--restart-command", &command, "--json"])
            .arg(&json)
            .arg("--out")
            .arg(d.join("out"))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let pid = child.id() as libc::pid_t;
        let sleep = wait_for(&d.join("sleep"), Duration::from_secs(30));
        let sent = Instant::now();
        assert_eq!(unsafe { libc::kill(pid, signal) }, 0);
        let f = wait(child, Duration::from_secs(30));
        assert_eq!(f.end, End::Exit(128 + signal), "{name}: {}\n{}", f.stdout(), f.stderr());
        assert!(sent.elapsed() < Duration::from_secs(10), "{name}: the run went on {:?}", sent.elapsed());
        assert_eq!(wait_for(&d.join("trapped"), Duration::from_secs(1)), trapped, "{name}");
        let end = Instant::now() + Duration::from_secs(2);
        while !gone(&sleep) {
            assert!(Instant::now() < end, "{name}: the command's sleep {sleep} outlived the harness");
            std::thread::sleep(Duration::from_millis(20));
        }
        let v: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).expect("the report was written");
        assert_eq!(v["ended"], "interrupted", "{name}: {v}");
        assert_eq!(v["peer_down"], Value::Null, "{name}: not known down: {v}");
        assert_eq!(v["findings"][0]["class"], "crash", "{name}: the finding is kept: {v}");
        assert!(f.stdout().contains("ended by interrupted"), "{name}: {}", f.stdout());
        std::fs::remove_dir_all(&d).unwrap();
    }
}
