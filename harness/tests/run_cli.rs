//! `rpcrdma-harness run`, `list` and `serve` end to end against the embedded peers: exit
//! codes, the closing line, JSON and JUnit that parse and agree, expectation profiles,
//! selection, and Ctrl-C.

use std::process::Command as StdCommand;

use serde_json::Value;

mod common;
use common::{harness, tmp};

fn last_line(out: &[u8]) -> String {
    String::from_utf8_lossy(out).lines().last().unwrap_or("").to_string()
}

#[test]
fn full_run_passes_with_json_junit_and_pcaps_that_agree() {
    let d = tmp("full");
    let out = harness()
        .args(["run", "--timeout", "2"])
        .arg("--json")
        .arg(d.join("r.json"))
        .arg("--junit")
        .arg(d.join("r.xml"))
        .arg("--pcap")
        .arg(d.join("pcap"))
        .assert()
        .success();
    let stdout = out.get_output().stdout.clone();
    let v: Value = serde_json::from_slice(&std::fs::read(d.join("r.json")).unwrap()).unwrap();
    assert_eq!(v["schema"], "rpcrdma-harness/report/v1");
    let checks = v["checks"].as_array().unwrap();
    assert!(checks.len() >= 60, "{} checks", checks.len());
    let passed = checks.iter().filter(|c| c["status"] == "pass").count();
    assert_eq!(v["summary"]["passed"].as_u64().unwrap() as usize, passed);
    assert_eq!(last_line(&stdout), format!("{passed} passed, 0 failed, 0 skipped"));
    for c in checks {
        assert!(c["id"].as_str().unwrap().split('/').count() == 3);
        assert!(!c["requirement"].as_str().unwrap().is_empty());
        assert!(c["transcript"].as_array().unwrap().iter().all(|e| e["hex"].as_str().unwrap().len() % 2 == 0));
    }
    // JUnit: well-formed XML, one testcase per check, no failures.
    let xml = std::fs::read_to_string(d.join("r.xml")).unwrap();
    let doc = roxmltree::Document::parse(&xml).expect("JUnit is well-formed XML");
    let cases = doc.descendants().filter(|n| n.has_tag_name("testcase")).count();
    assert_eq!(cases, checks.len());
    assert_eq!(doc.descendants().filter(|n| n.has_tag_name("failure")).count(), 0);
    // A pcap per check: classic pcap magic, Ethernet link type.
    let pcaps: Vec<_> = std::fs::read_dir(d.join("pcap")).unwrap().collect();
    assert_eq!(pcaps.len(), checks.len());
    let first = std::fs::read(pcaps[0].as_ref().unwrap().path()).unwrap();
    assert_eq!(&first[..4], &[0xd4, 0xc3, 0xb2, 0xa1]);
    assert_eq!(&first[20..24], &[1, 0, 0, 0]);
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_broken_peer_fails_with_details_and_exit_1() {
    let d = tmp("broken");
    let out = harness()
        .args(["run", "write-chunks", "--fault", "pad-write-chunk", "--junit"])
        .arg(d.join("r.xml"))
        .assert()
        .code(1);
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(stdout.contains("× rfc8166/3.4.6.2/write-chunk-no-pad (FAIL)"), "{stdout}");
    assert!(stdout.contains("A Responder MUST NOT write XDR roundup padding"), "{stdout}");
    assert!(stdout.contains("Expected:") && stdout.contains("Actual:"), "{stdout}");
    let xml = std::fs::read_to_string(d.join("r.xml")).unwrap();
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let failed: Vec<_> = doc
        .descendants()
        .filter(|n| n.has_tag_name("failure"))
        .map(|n| n.parent().unwrap().attribute("name").unwrap().to_string())
        .collect();
    assert!(failed.contains(&"rfc8166/3.4.6.2/write-chunk-no-pad".to_string()), "{failed:?}");
    // The failure's conversation, decoded and in hex, beside it (issue 24, edge 6).
    let case = doc
        .descendants()
        .find(|n| n.has_tag_name("testcase") && n.attribute("name") == Some("rfc8166/3.4.6.2/write-chunk-no-pad"))
        .unwrap();
    let out: String = case.children().filter(|c| c.has_tag_name("system-out")).filter_map(|c| c.text()).collect();
    assert!(out.contains(" ms -> ") && out.lines().any(|l| l.trim_start().starts_with("0000  ")), "{xml}");
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn profiles_expect_divergences_and_report_stale_ones() {
    let d = tmp("profile");
    let profile = d.join("p.json");
    std::fs::write(
        &profile,
        r#"{"peer": "test-peer", "divergences": [
            {"id": "rfc8166/3.4.6.2/write-chunk-no-pad", "outcome": "fail", "reason": "pads write chunks"}]}"#,
    )
    .unwrap();
    // The divergence happens: expected, exit 0.
    let out = harness()
        .args(["run", "rfc8166/3.4.6.2/write-chunk-no-pad", "--fault", "pad-write-chunk", "--expect"])
        .arg(&profile)
        .assert()
        .success();
    // Counted apart, never as a pass (issue 24, edge 1); the header names the profile and
    // the recap the diverging ID, also under --quiet.
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert_eq!(last_line(&out.get_output().stdout), "0 passed, 0 failed, 0 skipped, 1 expected divergence");
    let header = stdout.lines().next().unwrap();
    assert!(header.contains(&format!("judged against the profile test-peer ({})", profile.display())), "{header}");
    let quiet = harness()
        .args(["run", "rfc8166/3.4.6.2/write-chunk-no-pad", "--fault", "pad-write-chunk", "-q", "--expect"])
        .arg(&profile)
        .assert()
        .success();
    assert_eq!(
        String::from_utf8_lossy(&quiet.get_output().stdout),
        "expected divergence: rfc8166/3.4.6.2/write-chunk-no-pad\n0 passed, 0 failed, 0 skipped, 1 expected divergence\n"
    );
    // The peer no longer diverges: an unexpected pass fails the run.
    let out = harness().args(["run", "rfc8166/3.4.6.2/write-chunk-no-pad", "--expect"]).arg(&profile).assert().code(1);
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(stdout.contains("UNEXPECTED PASS"), "{stdout}");
    std::fs::write(&profile, "{not json").unwrap();
    harness().args(["run", "--expect"]).arg(&profile).assert().code(2);
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn strict_counts_should_deviations() {
    harness().args(["run", "rfc8166/4.6.1/msgp-refused", "--fault", "no-err-chunk"]).assert().success();
    harness().args(["run", "rfc8166/4.6.1/msgp-refused", "--fault", "no-err-chunk", "--strict"]).assert().code(1);
}

#[test]
fn selection_and_listing() {
    let out = harness().args(["list", "credits"]).assert().success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(text.contains("rfc8166/3.3.1/window-served"), "{text}");
    assert!(!text.contains("rfc8166/4.5.1/vers-mismatch"), "{text}");
    let out = harness().args(["list"]).assert().success();
    let n: usize = last_line(&out.get_output().stdout).split_whitespace().next().unwrap().parse().unwrap();
    assert!(n >= 60, "{n} checks");
    harness().args(["run", "no/such/check"]).assert().code(2);
    let out = harness().args(["run", "rfc8166/4.5", "--exclude", "rfc8166/4.5.2"]).assert().success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(text.contains("rfc8166/4.5.1/vers-mismatch") && !text.contains("rfc8166/4.5.2/"), "{text}");
}

#[test]
fn serve_self_test_judges_the_reference_requester() {
    let out = harness().args(["serve", "--self-test"]).assert().success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(text.contains("✔ rfc8166/3.3.1/requester-within-grant"), "{text}");
    // The scenarios are played too: each active check judged, and passed.
    assert!(text.contains("✔ rfc8166/4.6.1/requester-discards-msgp"), "{text}");
    let n = rpcrdma_conformance::catalogue::client::all().count();
    // One check judges the other reading of RFC 5666 6.2's maxrdmaread: unsupported, saying
    // why, unless a profile chooses that reading (issue 21, section 3).
    assert_eq!(last_line(&out.get_output().stdout), format!("{} passed, 0 failed, 0 skipped, 1 unsupported", n - 1));
    assert!(
        text.contains("- rfc5666/6.2/requester-no-reads-at-zero (unsupported: this check judges the ord reading"),
        "{text}"
    );
    let d = tmp("readings");
    let profile = d.join("ord.json");
    std::fs::write(&profile, r#"{"peer": "t", "divergences": [], "readings": {"rfc5666/6.2/maxrdmaread": "ord"}}"#)
        .unwrap();
    let out = harness().args(["serve", "--self-test", "ccp", "--expect"]).arg(&profile).assert().success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(text.contains("✔ rfc5666/6.2/requester-no-reads-at-zero (pass)"), "{text}");
    let out = harness().args(["run", "ccp", "--expect"]).arg(&profile).assert().success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(text.contains("- rfc5666/6.2/maxrdmaread-zero (unsupported: this check judges the ird reading"), "{text}");
    std::fs::remove_dir_all(&d).unwrap();
    harness().args(["serve"]).assert().code(2);
    harness().args(["serve", "--self-test", "--grant", "0"]).assert().code(2);
}

/// `serve --self-test --fault NAME`: the reference requester misbehaves, the check its fault
/// breaks fails (status 1) where it passed without; an unknown fault, or one with --listen,
/// is a usage error.
#[test]
fn serve_self_test_takes_the_requester_faults() {
    let id = "rfc8167/4.3.1/requester-reverse-receives-after-reconnect";
    let out = harness().args(["serve", "--self-test", id]).assert().success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(text.contains(&format!("✔ {id} (pass)")), "{text}");
    let out =
        harness().args(["serve", "--self-test", id, "--fault", "no-reverse-receives-after-reconnect"]).assert().code(1);
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(text.contains(&format!("× {id} (FAIL)")), "{text}");
    assert!(text.contains("met no receive at the requester"), "{text}");
    harness().args(["serve", "--self-test", "--fault", "no-such-fault"]).assert().code(2);
    harness().args(["serve", "--listen", "127.0.0.1:1", "--fault", "no-reverse-receives"]).assert().code(2);
}

#[test]
fn ctrl_c_ends_the_run_with_a_report_of_what_ran() {
    let d = tmp("sigint");
    let json = d.join("r.json");
    let bin = common::bin();
    // The first check waits out its whole 2 s timeout (the responder ignores the bad version),
    // so a signal sent once the run has started lands during it, whatever the machine's speed.
    let mut child = StdCommand::new(bin)
        .args(["run", "rfc8166/4.5.1/vers-mismatch", "credits", "--fault", "ignore-bad-version", "--timeout", "2"])
        .arg("--json")
        .arg(&json)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    std::io::BufRead::read_line(&mut stdout, &mut first).unwrap();
    assert!(first.starts_with("rpcrdma-harness"), "{first}");
    let status = StdCommand::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    assert!(status.success());
    let mut rest = Vec::new();
    std::io::Read::read_to_end(&mut stdout, &mut rest).unwrap();
    let code = child.wait().unwrap().code();
    assert_eq!(code, Some(130), "an interrupted run exits 130");
    let out = std::process::Output { status: child.wait().unwrap(), stdout: rest, stderr: Vec::new() };
    let v: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).expect("the report was written");
    assert_eq!(v["interrupted"], true);
    let skipped = v["summary"]["skipped"].as_u64().unwrap();
    assert!(skipped > 0, "some checks were skipped");
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(text.contains("interrupted"), "{text}");
    assert!(last_line(&out.stdout).ends_with(&format!("{skipped} skipped")), "{text}");
    std::fs::remove_dir_all(&d).unwrap();
}
