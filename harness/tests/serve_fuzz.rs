//! `serve --fuzz` against the embedded reference requester: replies are mutated at the rate
//! asked, the session is repeatable from its seed, and a bug report in the requester's kernel
//! log (here a file the test appends to, as the kernel appends to /dev/kmsg) is a finding
//! kept with the mutated reply before it; a profile that lists it makes it known. With
//! `--journal`, each mutated message and finding is a line, and `fuzz-panic` makes the last
//! mutated message the finding of a panic that killed the client's machine.

use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use assert_cmd::Command;
use serde_json::Value;

const BUG: &str = "1,77,123456,-;BUG: KASAN: slab-out-of-bounds in rpcrdma_reply_handler+0x51/0x3a0 [rpcrdma]\n";
const KIND: &str = "kernel-report: BUG: KASAN: slab-out-of-bounds in rpcrdma_reply_handler";

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("rpcrdma-serve-fuzz-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn serve_fuzz(d: &std::path::Path, extra: &[&str], log_line_after: Option<Duration>) -> (Option<i32>, String, Value) {
    let log = d.join("kmsg");
    std::fs::write(&log, "6,1,1,-;before the session\n").unwrap();
    let writer = log_line_after.map(|after| {
        let log = log.clone();
        std::thread::spawn(move || {
            std::thread::sleep(after);
            std::fs::OpenOptions::new().append(true).open(&log).unwrap().write_all(BUG.as_bytes()).unwrap();
        })
    });
    let json = d.join("r.json");
    let out = Command::cargo_bin("rpcrdma-harness")
        .unwrap()
        .args(["serve", "--self-test", "--fuzz", "--seed", "11", "--fuzz-one-in", "2", "--kernel-log"])
        .arg(&log)
        .arg("--out")
        .arg(d.join("out"))
        .arg("--json")
        .arg(&json)
        .args(extra)
        .output()
        .unwrap();
    if let Some(w) = writer {
        w.join().unwrap();
    }
    let text = String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    let v: Value = serde_json::from_slice(&std::fs::read(&json).expect("the JSON report")).unwrap();
    (out.status.code(), text, v)
}

#[test]
fn replies_are_mutated_repeatably_and_nothing_is_found_in_a_quiet_log() {
    let (a, b) = (tmp("quiet-a"), tmp("quiet-b"));
    let (code, text, va) = serve_fuzz(&a, &[], None);
    assert_eq!(code, Some(0), "{text}");
    assert_eq!(va["schema"], "rpcrdma-harness/serve-fuzz-report/v1");
    let mutated: u64 = va["mutated"].as_object().unwrap().values().map(|n| n.as_u64().unwrap()).sum();
    let replies = va["replies"].as_u64().unwrap();
    // One in two, within what chance allows over tens of replies.
    assert!(replies >= 20 && mutated * 4 >= replies && mutated * 4 <= replies * 3, "{mutated} of {replies}: {va}");
    assert_eq!(va["findings"].as_array().unwrap().len(), 0);
    assert!(text.contains("no findings"), "{text}");
    let (_, _, vb) = serve_fuzz(&b, &[], None);
    // The reference requester's workload is the same from run to run, so a seed names every
    // reply and reverse-direction call and what became of each (docs/fuzzing.md).
    assert_eq!(va["mutated"], vb["mutated"], "the same seed, the same mutations");
    assert_eq!((&va["replies"], &va["calls"]), (&vb["replies"], &vb["calls"]), "the same exchange");
    std::fs::remove_dir_all(&a).unwrap();
    std::fs::remove_dir_all(&b).unwrap();
}

#[test]
fn a_kernel_report_is_a_finding_with_the_mutated_reply_before_it() {
    let d = tmp("bug");
    let (code, text, v) = serve_fuzz(&d, &[], Some(Duration::from_millis(1500)));
    assert_eq!(code, Some(1), "{text}");
    let f = &v["findings"][0];
    assert_eq!(f["kind"], KIND, "{v}");
    assert!(f["after_mutation"]["how"].is_string(), "{f}");
    let file: Value = serde_json::from_str(&std::fs::read_to_string(f["file"].as_str().unwrap()).unwrap()).unwrap();
    assert_eq!(file["format"], "rpcrdma-serve-fuzz-finding/1");
    // Half the self-test's workloads are NFSv4.1: the mutation before the report may be of a
    // reverse-direction call, recorded as sent (`call`) with no reply.
    let after = &file["after_mutation"];
    let sent = if after["reverse_call"].is_u64() { &after["call"] } else { &after["reply"] };
    assert!(!sent.as_str().unwrap().is_empty(), "{file}");
    assert!(file["kernel_log"][0].as_str().unwrap().starts_with("BUG: KASAN"));

    let profile = d.join("p.json");
    let p = serde_json::json!({"peer": "t", "divergences": [], "findings": [{"kind": KIND, "reason": "a test line"}]});
    std::fs::write(&profile, p.to_string()).unwrap();
    let (code, text, v) = serve_fuzz(&d, &["--expect", profile.to_str().unwrap()], Some(Duration::from_millis(1500)));
    assert_eq!(code, Some(0), "{text}");
    assert_eq!(v["findings"][0]["known"], "a test line");
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn fuzz_options_need_fuzz_and_the_catalogue_reports_are_refused() {
    let out =
        Command::cargo_bin("rpcrdma-harness").unwrap().args(["serve", "--self-test", "--seed", "1"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = Command::cargo_bin("rpcrdma-harness")
        .unwrap()
        .args(["serve", "--self-test", "--fuzz", "--junit", "/dev/null"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--junit"), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn reverse_only_mutates_callbacks_and_a_finding_names_the_call() {
    let d = tmp("reverse");
    let (code, text, v) = serve_fuzz(&d, &["--fuzz-reverse-only"], Some(Duration::from_millis(1500)));
    assert_eq!(code, Some(1), "{text}");
    let mutated = v["mutated"].as_object().unwrap();
    assert!(!mutated.is_empty(), "{v}");
    assert!(mutated.keys().all(|k| k.starts_with("reverse-")), "only reverse-direction calls: {v}");
    let f = &v["findings"][0];
    assert_eq!(f["kind"], KIND, "{v}");
    assert!(f["after_mutation"]["how"].as_str().unwrap().starts_with("reverse-"), "{f}");
    assert!(f["after_mutation"]["reverse_call"].as_u64().unwrap() >= 1, "{f}");
    let file: Value = serde_json::from_str(&std::fs::read_to_string(f["file"].as_str().unwrap()).unwrap()).unwrap();
    let after = &file["after_mutation"];
    assert!(after["reverse_call"].as_u64().unwrap() >= 1, "{file}");
    assert!(after.get("reply").is_none(), "{file}");
    let call = rpcrdma_harness::input::parse_hex(after["call"].as_str().unwrap()).unwrap();
    let f = rpcrdma_harness::client_finding::ClientFinding::from_json(&file).expect("replayable");
    assert_eq!(f.call, call);
    assert!(text.contains("reverse-direction call"), "{text}");
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn fuzz_only_holds_the_session_to_the_named_mutations() {
    let d = tmp("only");
    let (code, text, v) = serve_fuzz(&d, &["--fuzz-only", "xid", "--fuzz-only", "reverse-csa-slotid"], None);
    assert_eq!(code, Some(0), "{text}");
    let mutated = v["mutated"].as_object().unwrap();
    assert!(mutated.contains_key("xid"), "{v}");
    assert!(mutated.keys().all(|k| k == "xid" || k == "reverse-csa-slotid"), "{v}");
    assert_eq!(v["only"], serde_json::json!(["xid", "reverse-csa-slotid"]));
    assert!(text.contains("(seed 11, only xid reverse-csa-slotid)"), "{text}");
    // Without it the same seed mutates in other ways too, and the report says so by null.
    let (_, _, all) = serve_fuzz(&d, &[], None);
    assert!(all["mutated"].as_object().unwrap().keys().any(|k| k != "xid" && k != "reverse-csa-slotid"), "{all}");
    assert!(all["only"].is_null(), "{all}");
    for bad in [&["--fuzz-only", "rdma-xid"][..], &["--fuzz-reverse-only", "--fuzz-only", "xid"]] {
        let out = Command::cargo_bin("rpcrdma-harness")
            .unwrap()
            .args(["serve", "--self-test", "--fuzz"])
            .args(bad)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("rdma-xid") || err.contains("mutates nothing"), "{err}");
    }
    std::fs::remove_dir_all(&d).unwrap();
}

// A 6.x x86 oops in the client's reply handler, made fatal by panic_on_oops, as the serial
// console prints it (arch/x86/mm/fault.c page_fault_oops(), kernel/panic.c panic()).
const PANIC_CONSOLE: &str = "\
[    0.000000] Linux version 6.12.0 (root@build) #1 SMP PREEMPT_DYNAMIC
[  101.000001] BUG: kernel NULL pointer dereference, address: 0000000000000010
[  101.000002] #PF: supervisor read access in kernel mode
[  101.000003] Oops: Oops: 0000 [#1] PREEMPT SMP NOPTI
[  101.000004] Workqueue: ib-comp-wq ib_cq_poll_work [ib_core]
[  101.000005] RIP: 0010:rpcrdma_reply_handler+0x51/0x3a0 [rpcrdma]
[  101.000006] Call Trace:
[  101.000007]  <TASK>
[  101.000008]  __ib_process_cq+0x75/0x170 [ib_core]
[  101.000009]  </TASK>
[  101.000010] ---[ end trace 0000000000000000 ]---
[  101.000011] Kernel panic - not syncing: Fatal exception
[  101.000012] ---[ end Kernel panic - not syncing: Fatal exception ]---
";
const PANIC_KIND: &str = "kernel-report: BUG: kernel NULL pointer dereference in rpcrdma_reply_handler";

#[test]
fn the_journal_holds_each_mutated_message_and_finding_and_fuzz_panic_reads_it() {
    let d = tmp("journal");
    let j = d.join("journal");
    let (code, text, v) = serve_fuzz(&d, &["--journal", j.to_str().unwrap()], Some(Duration::from_millis(1500)));
    assert_eq!(code, Some(1), "{text}");
    let lines: Vec<Value> =
        std::fs::read_to_string(&j).unwrap().lines().map(|l| serde_json::from_str(l).expect("a JSON line")).collect();
    let muts: Vec<&Value> = lines.iter().filter(|l| l["journal"] == "serve-fuzz-mutation").collect();
    // A line a mutated message, numbered in order, of the kinds and number the report counts.
    let mut by_how = serde_json::Map::new();
    for (i, m) in muts.iter().enumerate() {
        assert_eq!(m["n"], i as u64 + 1, "{m}");
        assert_eq!(m["seed"], 11, "{m}");
        let how = m["after_mutation"]["how"].as_str().unwrap().to_string();
        let n = by_how.get(&how).and_then(Value::as_u64).unwrap_or(0);
        by_how.insert(how, (n + 1).into());
    }
    assert_eq!(Value::Object(by_how), v["mutated"], "{v}");
    for m in &muts {
        let a = &m["after_mutation"];
        let call = a["call"].as_str().unwrap();
        if a["reverse_call"].is_u64() {
            // Our reverse-direction call as sent: its RPC XID is the one named.
            assert!(a.get("reply").is_none() && !call.is_empty(), "{m}");
        } else {
            // The call answered: its rdma_xid (its first word) is the one the reply answered.
            assert_eq!(&call[..8], &a["xid"].as_str().unwrap()[2..], "{m}");
            assert!(!a["reply"].as_str().unwrap().is_empty(), "{m}");
        }
    }
    // The finding's line holds its finding file.
    let found: Vec<&Value> = lines.iter().filter(|l| l["journal"] == "serve-fuzz-finding").collect();
    assert_eq!(found.len(), 1, "{lines:?}");
    let file: Value =
        serde_json::from_str(&std::fs::read_to_string(v["findings"][0]["file"].as_str().unwrap()).unwrap()).unwrap();
    assert_eq!(found[0]["finding"], file);

    // The client's machine died after the session's last mutated message.
    let console = d.join("console.log");
    std::fs::write(&console, PANIC_CONSOLE).unwrap();
    let panic = |expect: Option<&std::path::Path>| {
        let mut c = Command::cargo_bin("rpcrdma-harness").unwrap();
        c.args(["fuzz-panic", "--journal"]).arg(&j).arg("--console").arg(&console).arg("--out").arg(d.join("found"));
        if let Some(p) = expect {
            c.arg("--expect").arg(p);
        }
        let out = c.output().unwrap();
        (out.status.code(), String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr))
    };
    let (code, text) = panic(None);
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains(&format!("finding before the panic: {KIND} -> ")), "{text}");
    assert!(text.contains(&format!("finding: {PANIC_KIND} -> ")), "{text}");
    assert!(text.contains(&format!("mutated before the panic: {} messages", muts.len())), "{text}");
    let saved: Vec<Value> = std::fs::read_dir(d.join("found"))
        .unwrap()
        .map(|e| serde_json::from_slice(&std::fs::read(e.unwrap().path()).unwrap()).unwrap())
        .collect();
    assert_eq!(saved.len(), 2);
    let f = saved.iter().find(|f| f["kind"] == PANIC_KIND).expect("the panic's finding file");
    assert_eq!(f["after_mutation"], muts.last().unwrap()["after_mutation"], "the last mutated message sent");
    assert!(f["kernel_log"].as_array().unwrap().iter().any(|l| l.as_str().unwrap().starts_with("RIP: ")), "{f}");
    rpcrdma_harness::client_finding::ClientFinding::from_json(f).expect("replay --listen reads it");
    // Again (another boot, say): judged, known when the profile lists both, nothing saved twice.
    let profile = d.join("p.json");
    let findings = serde_json::json!([{"kind": KIND, "reason": "r1"}, {"kind": PANIC_KIND, "reason": "r2"}]);
    std::fs::write(&profile, serde_json::json!({"peer": "t", "divergences": [], "findings": findings}).to_string())
        .unwrap();
    let (code, text) = panic(Some(&profile));
    assert_eq!(code, Some(0), "{text}");
    assert_eq!(text.matches("saved already").count(), 2, "{text}");
    assert_eq!(std::fs::read_dir(d.join("found")).unwrap().count(), 2);
    // Two serve processes' journals (here the same lines twice, the second's clock later):
    // every mutation counted, the later last line the finding's.
    let later = d.join("journal-later");
    let last = muts.last().unwrap();
    let mut moved = (*last).clone();
    moved["at_ms"] = (last["at_ms"].as_u64().unwrap() + 1).into();
    moved["after_mutation"]["how"] = "the later one".into();
    std::fs::write(&later, format!("{}\n{moved}\n", std::fs::read_to_string(&j).unwrap().trim_end())).unwrap();
    let out = Command::cargo_bin("rpcrdma-harness")
        .unwrap()
        .args(["fuzz-panic", "--journal"])
        .arg(&j)
        .arg("--journal")
        .arg(&later)
        .arg("--console")
        .arg(&console)
        .arg("--out")
        .arg(d.join("found-2"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains(&format!("mutated before the panic: {} messages", 2 * muts.len() + 1)), "{text}");
    assert!(text.contains("the last (the later one, XID"), "{text}");
    std::fs::remove_dir_all(&d).unwrap();
}
