//! `--profile NAME` (the wire profile: the spec choices left open) on `run`, `serve`, `fuzz`,
//! `replay` and `decode`: an unknown choice is a usage error, a choice reaches the peers and
//! the judge (a judgement changes), and the reports, reproducers and replays carry it.

use std::path::PathBuf;

use serde_json::Value;

mod common;
use common::{harness, tmp};

fn stdout_json(out: &assert_cmd::assert::Assert) -> Value {
    serde_json::from_slice(&out.get_output().stdout).expect("a JSON report on standard output")
}

/// The check of RFC 8797 5.2's search: our private data placed at an offset must be found.
const AT_OFFSET: &str = "rfc8797/5.2/private-data-at-offset";

#[test]
fn an_unknown_choice_exits_2_listing_the_valid_ones() {
    let d = tmp("unknown");
    let repro = d.join("r.json");
    std::fs::write(&repro, "{}").unwrap();
    let commands: [&[&str]; 5] = [
        &["run"],
        &["serve", "--self-test"],
        &["fuzz", "--seconds", "1"],
        &["replay", repro.to_str().unwrap()],
        &["decode", "00000001"],
    ];
    for args in commands {
        let out =
            harness().args(args).args(["--profile", "rfc5666-error-arm", "--profile", "no-such"]).assert().code(2);
        let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
        assert!(err.contains("\"no-such\""), "{args:?}: {err}");
        for known in ["rfc5666-error-arm", "msgp-above", "pd-offset-zero", "v2-errors-04", "subset-msb"] {
            assert!(err.contains(known), "{args:?} does not list {known}: {err}");
        }
    }
    // `run` still writes its report, saying why it ended.
    let out = harness().args(["run", "-q", "--json", "-", "--profile", "no-such"]).assert().code(2);
    let v = stdout_json(&out);
    assert_eq!(v["error"]["exit_status"], 2);
    assert!(v["error"]["message"].as_str().unwrap().contains("no-such"), "{v}");
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn run_reads_the_wire_under_the_choices_and_says_so() {
    // Told the format identifier is at offset 0 only (cm-pvt-data -00/-01, as Linux reads it),
    // the judge finds RFC 8797 5.2's search not in that draft: unsupported; by default it passes.
    let plain = harness().args(["run", AT_OFFSET, "--json", "-"]).assert().code(0);
    let v = stdout_json(&plain);
    assert_eq!(v["checks"][0]["status"], "pass");
    assert_eq!(v["wire_profile"], serde_json::json!([]));
    let err = String::from_utf8_lossy(&plain.get_output().stderr).to_string();
    assert!(!err.contains("wire profile"), "the default names no choice: {err}");

    // (The one check selected unsupported, nothing was judged: exit 1.)
    let chosen = harness().args(["run", AT_OFFSET, "--json", "-", "--profile", "pd-offset-zero"]).assert().code(1);
    let v = stdout_json(&chosen);
    assert_eq!(v["checks"][0]["status"], "unsupported", "{v}");
    assert!(v["checks"][0]["actual"].as_str().unwrap().contains("pd-offset-zero"), "{v}");
    assert_eq!(v["wire_profile"], serde_json::json!(["pd-offset-zero"]));
    let err = String::from_utf8_lossy(&chosen.get_output().stderr).to_string();
    assert!(err.lines().next().unwrap().contains("wire profile pd-offset-zero"), "{err}");
}

#[test]
fn of_two_choices_of_one_field_the_later_is_recorded() {
    let out = harness()
        .args(["run", AT_OFFSET, "-q", "--json", "-", "--profile", "v2-errors-02", "--profile", "v2-errors-04"])
        .args(["--profile", "msgp-above"])
        .assert()
        .code(0);
    assert_eq!(stdout_json(&out)["wire_profile"], serde_json::json!(["msgp-above", "v2-errors-04"]));
}

#[test]
fn serve_self_test_gives_both_reference_peers_the_choices() {
    // Our responder's private data sits at an offset; the reference requester, reading it at
    // offset 0 only, does not find it and sends a call it could have sent inline by read chunk.
    let check = "rfc8797/5.2/requester-finds-identifier-at-offset";
    let plain = harness().args(["serve", "--self-test", check, "-q", "--json", "-"]).assert().code(0);
    let v = stdout_json(&plain);
    assert_eq!(v["checks"][0]["status"], "pass", "{v}");
    assert_eq!(v["wire_profile"], serde_json::json!([]));
    let chosen =
        harness().args(["serve", "--self-test", check, "--json", "-", "--profile", "pd-offset-zero"]).assert().code(0);
    let v = stdout_json(&chosen);
    assert_eq!(v["checks"][0]["status"], "pass-lax", "{v}");
    assert_eq!(v["wire_profile"], serde_json::json!(["pd-offset-zero"]));
    let err = String::from_utf8_lossy(&chosen.get_output().stderr).to_string();
    assert!(err.lines().next().unwrap().contains("wire profile pd-offset-zero"), "{err}");
}

#[test]
fn a_reproducer_records_its_choices_and_replay_uses_them_unless_overridden() {
    let d = tmp("repro");
    let fuzz = |profile: &[&str], out: &str| {
        let mut c = harness();
        c.args(["fuzz", "--seconds", "20", "--max-messages", "300", "--seed", "1", "--timeout", "0.3"])
            .args(["--fault", "write-past-segment", "--json", "-", "--out"])
            .arg(d.join(out));
        for p in profile {
            c.args(["--profile", p]);
        }
        let v = stdout_json(&c.assert().code(1));
        let file = PathBuf::from(v["findings"][0]["reproducer"].as_str().expect("a reproducer"));
        let r: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
        (v, file, r)
    };
    // The default is recorded as nothing: reproducers read as before.
    let (v, _, r) = fuzz(&[], "plain");
    assert_eq!(v["wire_profile"], serde_json::json!([]));
    assert!(r.get("profile").is_none(), "{r}");

    let (v, file, r) = fuzz(&["pd-offset-zero"], "chosen");
    assert_eq!(v["wire_profile"], serde_json::json!(["pd-offset-zero"]));
    assert_eq!(r["profile"], serde_json::json!(["pd-offset-zero"]));
    let replay = |extra: &[&str]| {
        let out = harness()
            .arg("replay")
            .arg(&file)
            .args(["--timeout", "0.3", "--fault", "write-past-segment"])
            .args(extra)
            .assert()
            .code(1);
        String::from_utf8_lossy(&out.get_output().stdout).lines().next().unwrap().to_string()
    };
    assert!(replay(&[]).ends_with(", wire profile pd-offset-zero"), "{}", replay(&[]));
    let over = replay(&["--profile", "v2-00"]);
    assert!(over.ends_with(", wire profile pd-offset-zero, v2-00"), "{over}");

    // A recorded choice this version does not know is refused, naming it.
    let mut bad = r.clone();
    bad["profile"] = serde_json::json!(["pd-offset-zero", "no-such"]);
    let bad_file = d.join("bad.json");
    std::fs::write(&bad_file, bad.to_string()).unwrap();
    let out = harness().arg("replay").arg(&bad_file).assert().code(2);
    assert!(String::from_utf8_lossy(&out.get_output().stderr).contains("\"no-such\""));
    std::fs::remove_dir_all(&d).unwrap();
}

/// The checks that are not a plain pass under `choice`, with their status: `run` against the
/// embedded responder, then `serve --self-test` against the reference requester. Every other
/// check passes. A statement a choice's revision lacks is unsupported, never a failure.
fn not_passed(choice: &str) -> [Vec<(&'static str, &'static str)>; 2] {
    const U: &str = "unsupported";
    let run: Vec<(&str, &str)> = match choice {
        "pd-offset-zero" => vec![(AT_OFFSET, U)],
        "v2-00" => vec![("v2-01/4.2.2/reply-direction", U)],
        "rtrext-literal" => [
            "v2-01/5.2/optional-first-message",
            "v2-01/5.2/threshold-change",
            "xcharext-02/4.1/initxch-silent",
            "xcharext-02/3.2/initxch-reqreminv-false",
            "xcharext-02/4.4/updxch-reqreminv-false",
            "xcharext-02/4.3/respxch-xid",
            "xcharext-02/4.3/respxch-cover",
            "xcharext-02/2.1/unknown-ids-skipped",
            "xcharext-02/2.1/invalid-known-value",
            "xcharext-02/2.1/xchv-data-overrun",
        ]
        .map(|id| (id, U))
        .to_vec(),
        "props-v2-03" => {
            vec![("xcharext-02/3.2/initxch-reqreminv-false", U), ("xcharext-02/4.4/updxch-reqreminv-false", U)]
        }
        _ => vec![],
    };
    // The ord reading of RFC 5666 6.2's maxrdmaread is judged by another check.
    let mut serve = vec![("rfc5666/6.2/requester-no-reads-at-zero", U)];
    match choice {
        "pd-offset-zero" => serve.push(("rfc8797/5.2/requester-finds-identifier-at-offset", "pass-lax")),
        "v2-00" => serve.extend(
            [
                "v2-01/4.2.2/requester-direction",
                "v2-01/4.2.2/requester-optdir-call",
                "v2-01/4.2.2/requester-optdir-payload",
            ]
            .map(|id| (id, U)),
        ),
        "rtrext-literal" => serve.push(("v2-01/4.2.2/requester-optdir-call", U)),
        _ => {}
    }
    [run, serve]
}

#[test]
fn every_choice_holds_on_both_sides() {
    let mut choices = vec![None];
    choices.extend(rpcrdma_codec::Profile::NAMES.iter().map(|n| Some(*n)));
    let mut wrong = Vec::new();
    for choice in choices {
        let name = choice.unwrap_or("default");
        let want = not_passed(name);
        for (side, args) in [["run", ""], ["serve", "--self-test"]].iter().enumerate() {
            let mut c = harness();
            c.args(args.iter().filter(|a| !a.is_empty())).args(["-q", "--json", "-"]);
            if let Some(p) = choice {
                c.args(["--profile", p]);
            }
            let out = c.assert();
            let code = out.get_output().status.code();
            let v = stdout_json(&out);
            let mut got: Vec<(String, String)> = v["checks"]
                .as_array()
                .expect("checks")
                .iter()
                .filter(|c| c["status"] != "pass")
                .map(|c| (c["id"].as_str().unwrap().to_string(), c["status"].as_str().unwrap().to_string()))
                .collect();
            let mut expected: Vec<(String, String)> =
                want[side].iter().map(|(id, s)| (id.to_string(), s.to_string())).collect();
            got.sort();
            expected.sort();
            let s = &v["summary"];
            let unsupported = want[side].iter().filter(|(_, st)| *st == "unsupported").count();
            if code != Some(0)
                || got != expected
                || s["failed"] != 0
                || s["errors"] != 0
                || s["unsupported"] != unsupported
            {
                wrong.push(format!("{} {name}: exit {code:?}, not passed {got:?}, want {expected:?}", args[0]));
            }
            // The whole catalogue ran: the embedded responder's and the client checks.
            if s["total"].as_u64().unwrap_or(0) < [100, 50][side] {
                wrong.push(format!("{} {name}: only {} checks", args[0], s["total"]));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
