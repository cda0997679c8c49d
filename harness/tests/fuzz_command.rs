//! `rpcrdma-harness fuzz` and `replay` end to end against the embedded reference responder:
//! exit statuses, reproducer files that replay (exit 1) against the faulty responder and not
//! (exit 0) against the faithful one, the JSON report, and SIGINT / SIGTERM.

use std::path::PathBuf;
use std::process::Command as StdCommand;

use assert_cmd::Command;
use serde_json::Value;

fn harness() -> Command {
    Command::cargo_bin("rpcrdma-harness").unwrap()
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("rpcrdma-fuzz-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// `fuzz` against the embedded responder with `fault`, seed and budget given, writing its
/// reproducers into `d/out` and its JSON report; the exit status asserted, then the text and
/// the report.
fn fuzz_faulty(d: &std::path::Path, seed: &str, messages: &str, fault: &str, code: i32) -> (String, Value) {
    let json = d.join("r.json");
    let out = harness()
        .args(["fuzz", "--seconds", "30", "--max-messages", messages, "--seed", seed, "--timeout", "0.3"])
        .args(["--fault", fault, "--out"])
        .arg(d.join("out"))
        .arg("--json")
        .arg(&json)
        .assert()
        .code(code);
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    (text, serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap())
}

#[test]
fn a_bounded_run_against_the_faithful_responder_finds_nothing() {
    let d = tmp("faithful");
    let json = d.join("r.json");
    let out = harness()
        .args(["fuzz", "--seconds", "20", "--max-messages", "400", "--seed", "3", "--timeout", "0.3", "--out"])
        .arg(d.join("out"))
        .arg("--json")
        .arg(&json)
        .assert()
        .code(0);
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(text.contains("no findings"), "{text}");
    let v: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(v["schema"], "rpcrdma-harness/fuzz-report/v1");
    assert_eq!(v["findings"].as_array().unwrap().len(), 0);
    assert!(v["messages"].as_u64().unwrap() >= 400, "{v}");
    assert_eq!(v["ended"], "message limit");
    let cases = v["cases"].as_u64().unwrap();
    let per_outcome: u64 = v["liveness"].as_object().unwrap().values().map(|x| x.as_u64().unwrap()).sum();
    assert_eq!(per_outcome, cases, "each case has one liveness outcome");
    assert_eq!(std::fs::read_dir(d.join("out")).unwrap().count(), 0, "no reproducer files");
    std::fs::remove_dir_all(&d).unwrap();
}

/// Connections go on across cases by default; `--fresh-connections` opens one for each case
/// and probes each with a NULL; `--reuse-connections`, the default's old name, still runs.
#[test]
fn cases_reuse_connections_unless_asked_for_fresh_ones() {
    let d = tmp("connections");
    let run = |extra: &[&str], name: &str| -> Value {
        let json = d.join(name);
        harness()
            .args(["fuzz", "--seconds", "20", "--max-messages", "150", "--seed", "3", "--timeout", "0.3", "--json"])
            .arg(&json)
            .args(extra)
            .assert()
            .code(0);
        serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap()
    };
    let reused = run(&[], "default.json");
    let (cases, connections) = (reused["cases"].as_u64().unwrap(), reused["connections"].as_u64().unwrap());
    assert!(reused["reused_cases"].as_u64().unwrap() > 0 && connections < cases, "{reused}");
    let old_name = run(&["--reuse-connections"], "old-name.json");
    assert!(old_name["reused_cases"].as_u64().unwrap() > 0, "{old_name}");
    let fresh = run(&["--fresh-connections"], "fresh.json");
    assert_eq!(fresh["reused_cases"], 0, "{fresh}");
    assert!(fresh["connections"].as_u64().unwrap() >= fresh["cases"].as_u64().unwrap(), "{fresh}");
    harness().args(["fuzz", "--fresh-connections", "--reuse-connections"]).assert().code(2);
    std::fs::remove_dir_all(&d).unwrap();
}

/// Drops of kept connections that earlier cases on them may have caused are re-checked alone
/// and, where they do not repeat, counted in the JSON report and the text, not findings.
#[test]
fn disconnects_not_reproduced_alone_are_counted_in_the_report() {
    let d = tmp("recheck");
    let (text, v) = fuzz_faulty(&d, "3", "1500", "disconnect-after-bad-header", 0);
    let rechecked = v["disconnects_rechecked"].as_u64().unwrap();
    assert!(rechecked > 0, "{v}");
    assert_eq!(v["disconnects_not_reproduced_alone"], rechecked, "{v}");
    assert_eq!(v["finding_classes"]["disconnect"], 0, "{v}");
    assert_eq!(v["disconnects_worse_alone"], serde_json::json!({}), "{v}");
    let line = format!("{rechecked} re-checked alone on a fresh connection, {rechecked} of them not reproduced");
    assert!(text.contains(&line), "{text}");
    assert!(text.contains("not reproduced there (counted, no finding)\n"), "none did worse, none named: {text}");
    std::fs::remove_dir_all(&d).unwrap();
}

/// A re-checked case that does worse alone than drop the connection (here it writes out of
/// bounds: `write-past-segment` beside `disconnect-after-bad-header`) has that finding, and
/// is not counted as not reproduced: in the JSON report and the text.
#[test]
fn a_re_check_alone_that_does_worse_is_a_finding_not_counted_as_not_reproduced() {
    let d = tmp("recheck-worse");
    let json = d.join("r.json");
    let out = harness()
        .args(["fuzz", "--seconds", "30", "--max-messages", "300", "--seed", "7", "--timeout", "0.3"])
        .args(["--fault", "disconnect-after-bad-header", "--fault", "write-past-segment", "--out"])
        .arg(d.join("out"))
        .arg("--json")
        .arg(&json)
        .assert()
        .code(1);
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    let v: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let rechecked = v["disconnects_rechecked"].as_u64().unwrap();
    let not_reproduced = v["disconnects_not_reproduced_alone"].as_u64().unwrap();
    assert!(not_reproduced < rechecked, "{v}");
    assert_eq!(v["finding_classes"]["disconnect"], 0, "{v}");
    assert!(v["finding_classes"]["oob-write"].as_u64().unwrap() >= rechecked - not_reproduced, "{v}");
    // No drop repeated alone (no `disconnect`): every other re-check did worse, an oob-write.
    let worse = rechecked - not_reproduced;
    assert_eq!(v["disconnects_worse_alone"], serde_json::json!({"oob-write": worse}), "{v}");
    let line = format!(
        "{rechecked} re-checked alone on a fresh connection, {not_reproduced} of them not reproduced there (counted, no finding), {worse} did worse there (oob-write {worse})\n"
    );
    assert!(text.contains(&line), "{text}");
    let findings = v["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 1, "{v}");
    assert_eq!(findings[0]["class"], "oob-write", "{v}");
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_finding_is_saved_and_replays_only_against_the_faulty_responder() {
    let d = tmp("oob");
    let (text, v) = fuzz_faulty(&d, "1", "300", "write-past-segment", 1);
    let findings = v["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 1, "{text}");
    assert_eq!(findings[0]["class"], "oob-write");
    let file = PathBuf::from(findings[0]["reproducer"].as_str().unwrap());
    let r: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    assert_eq!(r["format"], "rpcrdma-fuzz-reproducer/1");
    assert_eq!(r["seed"], 1);
    assert_eq!(r["classification"]["class"], "oob-write");
    assert_eq!(r["messages"].as_array().unwrap().len(), 1);

    let replay = |fault: Option<&str>| {
        let mut c = harness();
        c.arg("replay").arg(&file).args(["--timeout", "0.3"]);
        if let Some(f) = fault {
            c.args(["--fault", f]);
        }
        c.assert()
    };
    let hit = replay(Some("write-past-segment")).code(1);
    assert!(String::from_utf8_lossy(&hit.get_output().stdout).contains("REPRODUCED: oob-write"));
    let miss = replay(None).code(0);
    assert!(String::from_utf8_lossy(&miss.get_output().stdout).contains("NOT REPRODUCED"));
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn usage_errors_exit_2() {
    harness().args(["fuzz", "--seconds", "0"]).assert().code(2);
    harness().args(["fuzz", "--seconds", "1", "--fault", "no-such-fault"]).assert().code(2);
    // --restart-timeout: a positive number of seconds, with a restart command to bound.
    let restart = ["fuzz", "--seconds", "1", "--fault", "zero-credit", "--restart-command", "true"];
    harness().args(restart).args(["--restart-timeout", "0"]).assert().code(2);
    harness().args(restart).args(["--restart-timeout", "soon"]).assert().code(2);
    harness().args(["fuzz", "--seconds", "1", "--restart-timeout", "5"]).assert().code(2);
    // The embedded responder restarts itself: a command only for testing, with --fault.
    harness().args(["fuzz", "--seconds", "1", "--restart-command", "true"]).assert().code(2);
    harness().args(["replay", "/nonexistent/reproducer.json"]).assert().code(2);
    let d = tmp("usage");
    std::fs::write(d.join("bad.json"), "{\"format\": \"something-else\"}").unwrap();
    harness().arg("replay").arg(d.join("bad.json")).assert().code(2);
    std::fs::remove_dir_all(&d).unwrap();
}

fn signalled(signal: &str, code: i32) {
    let d = tmp(signal);
    let json = d.join("r.json");
    let bin = assert_cmd::cargo::cargo_bin("rpcrdma-harness");
    let child = StdCommand::new(bin)
        .args(["fuzz", "--seconds", "60", "--seed", "5", "--out"])
        .arg(d.join("out"))
        .arg("--json")
        .arg(&json)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    assert!(StdCommand::new("kill").args([&format!("-{signal}"), &child.id().to_string()]).status().unwrap().success());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(code), "{}", String::from_utf8_lossy(&out.stdout));
    let v: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).expect("the report was written");
    assert_eq!(v["ended"], "interrupted");
    assert!(v["seconds"].as_f64().unwrap() < 30.0);
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn sigint_ends_the_run_with_the_report_written() {
    signalled("INT", 130);
}

#[test]
fn sigterm_ends_the_run_with_the_report_written() {
    signalled("TERM", 143);
}

/// The reproducers of real findings kept in the repository are reproducer files `replay`
/// reads, and the reference responder has none of those bugs; the client findings of `serve
/// --fuzz` hold the call and the mutated reply.
#[test]
fn the_findings_in_the_repository_replay_and_not_against_the_reference_responder() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/findings");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "json") {
            let v: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            if v["format"] == "rpcrdma-serve-fuzz-finding/1" {
                let m = &v["after_mutation"];
                assert!(v["kind"].as_str().unwrap().starts_with("kernel-report: "), "{}", path.display());
                assert!(!m["call"].as_str().unwrap().is_empty(), "{}", path.display());
                // A mutated reply keeps the call it answered; a mutated reverse-direction call
                // (a callback) is the call, its place on the connection in reverse_call.
                match m["reverse_call"].as_u64() {
                    Some(n) => assert!(n >= 1 && m.get("reply").is_none(), "{}", path.display()),
                    None => assert!(!m["reply"].as_str().unwrap().is_empty(), "{}", path.display()),
                }
                n += 1;
                continue;
            }
            assert_eq!(v["format"], "rpcrdma-fuzz-reproducer/1", "{}", path.display());
            let out = harness().arg("replay").arg(&path).assert().code(0);
            let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
            assert!(text.contains("NOT REPRODUCED"), "{}: {text}", path.display());
            n += 1;
        }
    }
    assert!(n >= 2, "the reproducers in {} are gone", dir.display());
}

/// A `serve --fuzz` finding is replayed toward a requester (`--listen`), never with `--peer`;
/// a fuzz reproducer never with `--listen`; and a kernel report needs the requester's log.
#[test]
fn a_client_finding_replays_only_toward_a_requester_with_its_kernel_log() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let client = format!("{root}/docs/findings/linux-xprtrdma-frwr-unmap-sync-oops.json");
    let server = format!("{root}/docs/findings/linux-svcxdr-init-decode-warn.json");
    let run = |args: &[&str]| {
        let out = harness().arg("replay").args(args).output().unwrap();
        (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
    };
    let (code, err) = run(&[&client]);
    assert_eq!(code, Some(2));
    assert!(err.contains("is a `serve --fuzz` finding: replay it toward a requester with --listen"), "{err}");
    let (code, err) = run(&[&server, "--listen", "127.0.0.1"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("is a fuzz reproducer (use --peer)"), "{err}");
    let (code, err) = run(&[&client, "--listen", "127.0.0.1"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("give --kernel-log"), "{err}");
    let (code, err) = run(&[&client, "--listen", "127.0.0.1", "--peer", "127.0.0.1"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("cannot be used with"), "{err}");
}

/// Issue 24, edge 5: `fuzz` follows `run`'s conventions. `--json -` puts the report on
/// standard output (the text on standard error, no file named `-`); a report path that
/// cannot be written fails at once, before the session; a duration too long to be meant
/// says so.
#[test]
fn fuzz_follows_runs_conventions_for_reports_and_durations() {
    let d = tmp("conventions");
    let out = harness()
        .current_dir(&d)
        .args(["fuzz", "--seconds", "1", "--max-messages", "30", "--seed", "3", "--out", "out", "--json", "-"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).expect("standard output holds the JSON report alone");
    assert_eq!(v["seed"], 3);
    assert!(String::from_utf8_lossy(&out.stderr).contains("fuzzing embedded reference responder"));
    assert!(!d.join("-").exists(), "a file named - was written");
    // An unwritable report path: refused before a session of 60 s.
    let started = std::time::Instant::now();
    let out = harness().args(["fuzz", "--seconds", "60", "--json"]).arg(d.join("no/such/dir/r.json")).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(started.elapsed() < std::time::Duration::from_secs(10), "{:?}", started.elapsed());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--json"), "{}", String::from_utf8_lossy(&out.stderr));
    // Durations: a clear error, never "must be positive" for a positive number.
    let out = harness().args(["fuzz", "--seconds", "1e30"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(err.contains("--seconds 1e30: at most") && !err.contains("positive"), "{err}");
    let out = harness().args(["fuzz", "--seconds=-1"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("positive, finite"));
    std::fs::remove_dir_all(&d).unwrap();
}

/// A crash whose restart command fails (exit 1), or outlives `--restart-timeout`, ends the
/// session within seconds: the finding kept and its reproducer written, marked not fully
/// minimised with the reason, the report saying the peer is down, exit 1 (the peer went
/// down). The embedded responder stands for a peer restarted by a command (`--fault` with
/// `--restart-command`): it is brought up afresh only when the command exits 0.
#[test]
fn a_restart_that_fails_ends_the_session_with_the_finding_kept() {
    for (name, command, timeout, why) in [
        ("restart-false", "false", None, "(exit 1): false"),
        ("restart-sleeps", "sleep 30", Some("1"), "(killed after 1 s): sleep 30"),
    ] {
        let d = tmp(name);
        let json = d.join("r.json");
        let started = std::time::Instant::now();
        let mut cmd = harness();
        cmd.args(["fuzz", "--seconds", "60", "--max-messages", "2000", "--seed", "1", "--timeout", "0.3"])
            .args(["--fault", "crash-on-many-write-chunks", "--restart-command", command])
            .arg("--out")
            .arg(d.join("out"))
            .arg("--json")
            .arg(&json);
        if let Some(t) = timeout {
            cmd.args(["--restart-timeout", t]);
        }
        let out = cmd.timeout(std::time::Duration::from_secs(30)).assert().code(1);
        assert!(started.elapsed() < std::time::Duration::from_secs(10), "{name}: {:?}", started.elapsed());
        let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
        assert!(text.contains(&format!("the peer is down: the restart command failed {why}")), "{text}");
        assert!(text.contains("not fully minimised"), "{text}");
        let v: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
        assert_eq!(v["ended"], "the peer went down and cannot be restarted", "{v}");
        assert!(v["peer_down"].as_str().is_some_and(|d| d.ends_with(why)), "{v}");
        assert!(v["messages"].as_u64().unwrap() < 2000, "no case after the crash: {v}");
        let findings = v["findings"].as_array().unwrap();
        assert_eq!(findings.len(), 1, "{v}");
        let f = &findings[0];
        assert_eq!((f["class"].as_str(), f["minimised"].as_bool()), (Some("crash"), Some(false)), "{v}");
        assert!(f["minimisation_cut_short"].as_str().is_some_and(|d| d.ends_with(why)), "{v}");
        let file = PathBuf::from(f["reproducer"].as_str().unwrap());
        let r: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
        assert!(r["minimisation_cut_short"].as_str().is_some_and(|d| d.ends_with(why)), "{r}");
        // The case kept crashes a fresh faulty responder, and not a faithful one.
        harness()
            .arg("replay")
            .arg(&file)
            .args(["--timeout", "0.3", "--fault", "crash-on-many-write-chunks"])
            .assert()
            .code(1);
        harness().arg("replay").arg(&file).args(["--timeout", "0.3"]).assert().code(0);
        std::fs::remove_dir_all(&d).unwrap();
    }
}
