//! `fuzz --journal`, `--skip-cases` and the hidden `fuzz-panic` (issue 15: a case that panics
//! the peer's kernel kills the machine): every case sent is a journal line that `replay` reads;
//! a skipped seed resumes where it was; the journal's last line and a console panic make a
//! `kernel-panic` finding, known when the profile lists it.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::Value;

fn harness() -> Command {
    Command::cargo_bin("rpcrdma-harness").unwrap()
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("rpcrdma-fuzz-journal-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn lines(journal: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(journal).unwrap();
    text.lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"))).collect()
}

/// The journal as a machine that died after its last case leaves it: without the end line.
fn died(journal: &Path) -> PathBuf {
    let text = std::fs::read_to_string(journal).unwrap();
    let cut = text.trim_end().rfind('\n').unwrap();
    let dead = journal.with_extension("died");
    std::fs::write(&dead, &text[..cut + 1]).unwrap();
    dead
}

/// Fuzzes the embedded responder with `args`, journalling into `journal`; the exit status.
fn fuzz(d: &Path, journal: &Path, args: &[&str]) -> i32 {
    let out = harness()
        .args(["fuzz", "--seconds", "30", "--timeout", "0.3", "--out"])
        .arg(d.join("out"))
        .arg("--journal")
        .arg(journal)
        .args(args)
        .output()
        .unwrap();
    out.status.code().unwrap()
}

/// The journal lines of cases (not the probe, not minimisation trials), by case number.
fn cases(journal: &Path) -> Vec<(u64, Value)> {
    lines(journal)
        .into_iter()
        .filter(|l| l["journal"]["sent"].as_str().is_some_and(|s| s.starts_with("case ")))
        .map(|l| (l["case"].as_u64().unwrap(), l["messages"].clone()))
        .collect()
}

#[test]
fn each_case_is_journalled_as_a_reproducer_that_replay_runs() {
    let d = tmp("replay");
    let j = d.join("journal");
    assert_eq!(fuzz(&d, &j, &["--seed", "1", "--max-messages", "300", "--fault", "write-past-segment"]), 1);
    let mut all = lines(&j);
    // The run ended (it did not die): its last line says so.
    let end = all.pop().unwrap();
    assert_eq!((&end["journal"], &end["ended"]), (&Value::from("end"), &Value::from("message limit")), "{end}");
    // Its finding has a line of its own once minimised (fuzz_panic_keeps_the_findings_...).
    let found = all.iter().filter(|l| l["journal"] == "finding").count();
    assert_eq!(found, std::fs::read_dir(d.join("out")).unwrap().count());
    let line_no: Vec<usize> = (0..all.len()).filter(|&i| all[i]["journal"] != "finding").collect();
    all.retain(|l| l["journal"] != "finding");
    for l in &all {
        assert_eq!(l["format"], "rpcrdma-fuzz-reproducer/1");
        assert_eq!(l["classification"]["class"], "kernel-panic");
        assert!(l["classification"]["detail"].as_str().unwrap().contains("last case sent before"), "{l}");
    }
    // The probe, then cases 1, 2, ... in order; trials once the finding is minimised.
    assert_eq!(all[0]["journal"]["sent"], "the liveness probe before the first case");
    let numbered: Vec<u64> = cases(&j).iter().map(|(n, _)| *n).collect();
    assert_eq!(numbered, (1..=numbered.len() as u64).collect::<Vec<_>>());
    let first_trial = all.iter().position(|l| l["journal"]["sent"].as_str().unwrap().contains("trial")).unwrap();
    // Trials (and the confirmation) name the case whose finding they minimise.
    let trials: Vec<&Value> =
        all.iter().filter(|l| l["journal"]["sent"].as_str().unwrap().contains("finding of case")).collect();
    assert!(trials.len() >= 2 && trials.iter().all(|l| l["case"] == all[first_trial - 1]["case"]));
    // The case that found the out-of-bounds write is the line before the first trial: saved on
    // its own, `replay` reads it and sends it, and the faulty responder writes out of bounds.
    let line = std::fs::read_to_string(&j).unwrap().lines().nth(line_no[first_trial - 1]).unwrap().to_string();
    let file = d.join("case.json");
    std::fs::write(&file, &line).unwrap();
    let out = harness().arg("replay").arg(&file).args(["--timeout", "0.3", "--fault", "write-past-segment"]).output();
    let text = String::from_utf8_lossy(&out.as_ref().unwrap().stdout).to_string();
    assert!(text.contains("outside the advertised segments"), "{text}");
    assert!(text.contains("NOT REPRODUCED: expected kernel-panic"), "{text}");
    assert_eq!(out.unwrap().status.code(), Some(0));
    // Against the faithful responder nothing is outside.
    let faithful = harness().arg("replay").arg(&file).args(["--timeout", "0.3"]).output().unwrap();
    assert!(!String::from_utf8_lossy(&faithful.stdout).contains("outside the advertised"));
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn without_feedback_a_skipped_seed_sends_exactly_the_cases_after_the_skipped_ones() {
    let d = tmp("skip");
    let (full, resumed) = (d.join("full"), d.join("resumed"));
    let no_fb = ["--seed", "7", "--no-feedback"];
    assert_eq!(fuzz(&d, &full, &[&no_fb[..], &["--max-messages", "120"]].concat()), 0);
    assert_eq!(fuzz(&d, &resumed, &[&no_fb[..], &["--max-messages", "40", "--skip-cases", "9"]].concat()), 0);
    let (full, resumed) = (cases(&full), cases(&resumed));
    assert_eq!(resumed[0].0, 10, "the first case sent after skipping 9 is case 10");
    assert!(resumed.len() >= 5 && full.len() >= 9 + resumed.len(), "{} {}", full.len(), resumed.len());
    for (n, messages) in &resumed {
        assert_eq!(Some(messages), full.iter().find(|(m, _)| m == n).map(|(_, x)| x), "case {n}");
    }
    // A different skip is a different case 10 onwards (the comparison can fail).
    let other = d.join("other");
    assert_eq!(fuzz(&d, &other, &[&no_fb[..], &["--max-messages", "20", "--skip-cases", "10"]].concat()), 0);
    assert_ne!(cases(&other)[0].1, resumed[0].1);
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn with_feedback_the_skipped_cases_are_not_sent_and_numbering_continues() {
    let d = tmp("skip-feedback");
    let j = d.join("j");
    assert_eq!(fuzz(&d, &j, &["--seed", "7", "--max-messages", "30", "--skip-cases", "25"]), 0);
    let first = &lines(&j)[0];
    assert_eq!(first["journal"]["skip_cases"], 25, "the probe resumes where it stood");
    assert_eq!(cases(&j)[0].0, 26);
    std::fs::remove_dir_all(&d).unwrap();
}

// A 6.x x86 oops and the panic it ends in (panic_on_oops), as the serial console prints them
// (arch/x86/mm/fault.c page_fault_oops(), arch/x86/kernel/dumpstack.c __die() and
// oops_end(), kernel/panic.c panic()), after an earlier boot's panic of another kind.
const CONSOLE: &str = "\
[    0.000000] Linux version 6.12.0 (root@build) #1 SMP PREEMPT_DYNAMIC
[   42.000000] Kernel panic - not syncing: an earlier boot's panic
[    0.000000] Linux version 6.12.0 (root@build) #1 SMP PREEMPT_DYNAMIC
[    3.100000] svcrdma: listening on 10.55.0.1:20049
[  812.345678] BUG: kernel NULL pointer dereference, address: 0000000000000068
[  812.346001] #PF: supervisor write access in kernel mode
[  812.346210] #PF: error_code(0x0002) - not-present page
[  812.346400] PGD 0 P4D 0
[  812.346555] Oops: Oops: 0002 [#1] PREEMPT SMP NOPTI
[  812.346800] CPU: 1 UID: 0 PID: 2417 Comm: kworker/u8:3 Not tainted 6.12.0 #1
[  812.347000] Hardware name: QEMU Standard PC (i440FX + PIIX, 1996), BIOS 1.16.3-debian-1.16.3-2 04/01/2014
[  812.347200] Workqueue: rpciod rpc_async_schedule [sunrpc]
[  812.347400] RIP: 0010:frwr_unmap_sync+0xb1/0x240 [rpcrdma]
[  812.347600] Code: 48 8b 45 a8 48 8b 50 08 48 85 d2 74 2c <48> 89 42 68 48 8b 45 a8
[  812.347800] RSP: 0018:ffffc90000d3bd18 EFLAGS: 00010246
[  812.348000] RAX: 0000000000000000 RBX: ffff888104a3c000 RCX: 0000000000000000
[  812.349000] Call Trace:
[  812.349100]  <TASK>
[  812.349200]  ? __die+0x23/0x70
[  812.349300]  ? page_fault_oops+0x171/0x4e0
[  812.349600]  ? frwr_unmap_sync+0xb1/0x240 [rpcrdma]
[  812.349700]  xprt_rdma_free+0x41/0xa0 [rpcrdma]
[  812.349800]  rpc_free_task+0x3c/0x70 [sunrpc]
[  812.349900]  </TASK>
[  812.350000] Modules linked in: rpcrdma rdma_rxe ib_uverbs ib_core nfsd
[  812.350100] CR2: 0000000000000068
[  812.350200] ---[ end trace 0000000000000000 ]---
[  812.350300] RIP: 0010:frwr_unmap_sync+0xb1/0x240 [rpcrdma]
[  812.350400] Kernel panic - not syncing: Fatal exception
[  812.350500] Kernel Offset: disabled
[  812.350600] ---[ end Kernel panic - not syncing: Fatal exception ]---
";
// panic_on_oops made the oops fatal ("Fatal exception"): the finding is the oops's report.
const KIND: &str = "kernel-report: BUG: kernel NULL pointer dereference in frwr_unmap_sync";

fn console_of(d: &Path) -> PathBuf {
    let c = d.join("console.log");
    std::fs::write(&c, CONSOLE).unwrap();
    c
}

fn fuzz_panic(d: &Path, journal: &Path, console: &Path, expect: Option<&Path>) -> (i32, String) {
    let mut c = harness();
    c.args(["fuzz-panic", "--journal"]).arg(journal).arg("--console").arg(console).arg("--out").arg(d.join("found"));
    if let Some(p) = expect {
        c.arg("--expect").arg(p);
    }
    let out = c.output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    (out.status.code().unwrap(), text)
}

#[test]
fn fuzz_panic_makes_the_last_journal_line_a_finding_known_only_when_listed() {
    let d = tmp("panic");
    let j = d.join("journal");
    let report = d.join("report.json");
    assert_eq!(fuzz(&d, &j, &["--seed", "4", "--max-messages", "20", "--json", report.to_str().unwrap()]), 0);
    let report: Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    let j = died(&j);
    let last = lines(&j).pop().unwrap();
    assert!(last["journal"]["sent"].as_str().unwrap().starts_with("case "), "{last}");
    let console = d.join("console.log");
    std::fs::write(&console, CONSOLE).unwrap();

    let (code, text) = fuzz_panic(&d, &j, &console, None);
    assert_eq!(code, 1, "{text}");
    let file = d.join("found/001-kernel-report.json");
    assert!(text.starts_with(&format!("finding: {KIND} -> {}\n", file.display())), "{text}");
    assert!(text.contains(&format!("resume: --seed 4 --skip-cases {}", last["case"])), "{text}");
    // The messages the run's own report counted, in the cases it counted: what a resumed run's
    // budget is reduced by.
    assert!(report["messages"].as_u64().unwrap() >= 20, "{report}");
    let sent = format!("sent before the panic: {} messages in {} cases", report["messages"], report["cases"]);
    assert!(text.contains(&sent), "{sent}: {text}");
    let r: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    assert_eq!(r["classification"]["class"], "kernel-report");
    assert_eq!(r["classification"]["detail"], KIND.trim_start_matches("kernel-report: "));
    let observed = r["classification"]["observed"].as_str().unwrap();
    assert!(observed.contains("RIP: 0010:frwr_unmap_sync") && observed.contains("Fatal exception"), "{observed}");
    assert!(!observed.contains("earlier boot") && !observed.contains("svcrdma: listening"), "{observed}");
    // The same messages (the journal holds region contents as runs, the file as hex).
    let messages = |v: &Value| rpcrdma_conformance::fuzz::Reproducer::from_json(v).unwrap().messages;
    assert_eq!(messages(&r), messages(&last), "the journal's last case");
    // The file replays (the faithful responder does not crash: not reproduced).
    harness().arg("replay").arg(&file).args(["--timeout", "0.3"]).assert().code(0);

    let profile = |kind: &str| {
        let p = d.join(format!("profile-{}.json", kind.len()));
        let v = serde_json::json!({"peer": "p", "divergences": [], "findings": [{"kind": kind, "reason": "frwr bug"}]});
        std::fs::write(&p, v.to_string()).unwrap();
        p
    };
    let (code, text) = fuzz_panic(&d, &j, &console, Some(&profile(KIND)));
    assert_eq!(code, 0, "{text}");
    // The kind a file there holds (an earlier boot's) is judged, not saved again.
    let again = format!("finding: {KIND} -> {} (saved already: not written again) (known: frwr bug)", file.display());
    assert!(text.contains(&again), "{text}");
    assert_eq!(std::fs::read_dir(d.join("found")).unwrap().count(), 1, "{text}");
    let (code, text) = fuzz_panic(&d, &j, &console, Some(&profile("kernel-panic: Oops in frwr_unmap_sync")));
    assert_eq!(code, 1, "{text}");
    // An oops in interrupt context panics whatever panic_on_oops says: a panic of its own.
    let in_interrupt = d.join("console-interrupt.log");
    std::fs::write(&in_interrupt, CONSOLE.replace("Fatal exception", "Fatal exception in interrupt")).unwrap();
    let panic_kind = KIND.replace("kernel-report:", "kernel-panic:");
    let (code, text) = fuzz_panic(&d, &j, &in_interrupt, Some(&profile(&panic_kind)));
    assert_eq!(code, 0, "{text}");
    assert!(text.contains(&format!("finding: {panic_kind} -> ")) && text.contains("-kernel-panic.json"), "{text}");
    std::fs::remove_dir_all(&d).unwrap();
}

/// The findings a run made before its machine died come back from their journal lines, each
/// judged against the profile with the panic.
#[test]
fn fuzz_panic_keeps_the_findings_journaled_before_the_machine_died() {
    let d = tmp("panic-findings");
    let j = d.join("journal");
    assert_eq!(fuzz(&d, &j, &["--seed", "1", "--max-messages", "300", "--fault", "write-past-segment"]), 1);
    let found: Vec<Value> = lines(&j).into_iter().filter(|l| l["journal"] == "finding").collect();
    assert!(!found.is_empty(), "the run's findings are journaled");
    let saved: Vec<PathBuf> = std::fs::read_dir(d.join("out")).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(found.len(), saved.len(), "one journal line a finding file");
    let kinds: Vec<String> = found
        .iter()
        .map(|f| rpcrdma_conformance::fuzz::Reproducer::from_json(&f["finding"]).unwrap().kind.to_string())
        .collect();
    // The journal as a machine that died at the run's last case leaves it.
    let j = died(&j);
    let console = console_of(&d);
    let (code, text) = fuzz_panic(&d, &j, &console, None);
    assert_eq!(code, 1, "{text}");
    for k in &kinds {
        assert!(text.contains(&format!("finding before the panic: {k} -> ")), "{k}: {text}");
    }
    let files = std::fs::read_dir(d.join("found")).unwrap().count();
    assert_eq!(files, kinds.len() + 1, "{text}");
    // Known, every one: as expected. The panic alone known: the earlier findings fail it.
    let profile = |kinds: &[String]| {
        let p = d.join(format!("profile-{}.json", kinds.len()));
        let findings: Vec<Value> = kinds.iter().map(|k| serde_json::json!({"kind": k, "reason": "known"})).collect();
        std::fs::write(&p, serde_json::json!({"peer": "p", "divergences": [], "findings": findings}).to_string())
            .unwrap();
        p
    };
    let all: Vec<String> = kinds.iter().cloned().chain([KIND.to_string()]).collect();
    assert_eq!(fuzz_panic(&d, &j, &console, Some(&profile(&all))).0, 0);
    assert_eq!(fuzz_panic(&d, &j, &console, Some(&profile(&[KIND.to_string()]))).0, 1);
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn fuzz_panic_refuses_missing_or_empty_inputs() {
    let d = tmp("panic-bad");
    let (j, console, empty) = (d.join("journal"), d.join("console.log"), d.join("empty"));
    assert_eq!(fuzz(&d, &j, &["--seed", "4", "--max-messages", "5"]), 0);
    // A journal whose run ended names no case that died with the machine.
    let (code, text) = fuzz_panic(&d, &j, &console_of(&d), None);
    assert_eq!(code, 2, "{text}");
    assert!(text.contains("the run ended"), "{text}");
    let j = died(&j);
    std::fs::write(&console, CONSOLE).unwrap();
    std::fs::write(&empty, "").unwrap();
    let no_panic = d.join("no-panic.log");
    std::fs::write(&no_panic, CONSOLE.replace("Kernel panic", "Kernel pan1c")).unwrap();
    for (journal, console) in
        [(&empty, &console), (&d.join("missing"), &console), (&j, &no_panic), (&j, &d.join("none"))]
    {
        let (code, text) = fuzz_panic(&d, journal, console, None);
        assert_eq!(code, 2, "{} {}: {text}", journal.display(), console.display());
        assert!(text.starts_with("error: "), "{text}");
    }
    assert!(!d.join("found").exists() || std::fs::read_dir(d.join("found")).unwrap().count() == 0);
    std::fs::remove_dir_all(&d).unwrap();
}

/// Without a journal (the machine died while `serve --fuzz` mutated what it sent the client):
/// the panic's report judged alone, no file written; a console without a panic still refused.
#[test]
fn fuzz_panic_without_a_journal_judges_the_panic_alone() {
    let d = tmp("panic-client");
    let console = console_of(&d);
    let judge = |console: &Path, expect: Option<&Path>| {
        let mut c = harness();
        c.args(["fuzz-panic", "--console"]).arg(console).arg("--out").arg(d.join("found"));
        if let Some(p) = expect {
            c.arg("--expect").arg(p);
        }
        let out = c.output().unwrap();
        (
            out.status.code().unwrap(),
            String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr),
        )
    };
    let (code, text) = judge(&console, None);
    assert_eq!(code, 1, "{text}");
    assert!(text.starts_with(&format!("finding: {KIND} (no journal: no reproducer)\n")), "{text}");
    assert!(text.contains("RIP: 0010:frwr_unmap_sync") && !text.contains("resume:"), "{text}");
    let p = d.join("profile.json");
    let v = serde_json::json!({"peer": "p", "divergences": [], "findings": [{"kind": KIND, "reason": "frwr bug"}]});
    std::fs::write(&p, v.to_string()).unwrap();
    let (code, text) = judge(&console, Some(&p));
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("(known: frwr bug)"), "{text}");
    assert!(!d.join("found").exists(), "no reproducer without a journal");
    let no_panic = d.join("no-panic.log");
    std::fs::write(&no_panic, CONSOLE.replace("Kernel panic", "Kernel pan1c")).unwrap();
    assert_eq!(judge(&no_panic, None).0, 2);
    std::fs::remove_dir_all(&d).unwrap();
}
