//! The small edges a CI engineer hits first (issue 24, item 9), each as a user meets it.

mod common;

use common::harness;

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn decode_of_nothing_says_the_input_is_empty() {
    let out = harness().args(["decode", ""]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("empty input"), "{}", stderr(&out));
}

#[test]
fn decode_with_a_role_exits_1_when_the_message_breaks_a_rule_and_0_when_not() {
    // An RDMA_NOMSG call with no chunks at all (RFC 8166 4.2.4: one MUST be present).
    let nomsg = "00000001 00000001 00000001 00000001 00000000 00000000 00000000";
    let out = harness().args(["decode", "--role", "call", nomsg]).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("not catalogue checks"), "{}", stderr(&out));
    // The same header as RDMA_MSG with a NULL call after it breaks nothing.
    let msg = "00000001 00000001 00000001 00000000 00000000 00000000 00000000 \
               00000001 00000000 00000002 000186a3 00000003 00000000 00000000 00000000 00000000 00000000";
    let out = harness().args(["decode", "--role", "call", msg]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

#[test]
fn a_mistyped_selector_gets_the_nearest_name() {
    let out = harness().args(["run", "rfc8166/4.5/short-mesage-discarded"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("did you mean \"rfc8166/4.5/short-message-discarded\""), "{}", stderr(&out));
    let out = harness().args(["run", "credit"]).output().unwrap();
    assert!(stderr(&out).contains("did you mean \"credits\""), "{}", stderr(&out));
    // Nothing near: no guess.
    let out = harness().args(["run", "zzz"]).output().unwrap();
    assert!(!stderr(&out).contains("did you mean"), "{}", stderr(&out));
}

#[test]
fn list_requirements_speaks_the_tables_words_and_its_coverage_follows_the_filter() {
    let out = harness().args(["list", "--requirements"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!text.contains("RdmaProvider") && !text.contains("Ulb,"), "{text}");
    assert!(text.contains("binds rdma-provider"), "{text}");
    assert!(text.lines().any(|l| l.starts_with("all ")), "an `all` row: {text}");
    let out = harness().args(["list", "--requirements", "rfc8797"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let table: Vec<&str> = text.lines().take_while(|l| !l.is_empty()).collect();
    assert_eq!(table.len(), 2, "the heading and rfc8797 alone: {table:?}");
    assert!(table[1].starts_with("rfc8797"), "{table:?}");
}

/// 192.0.2.1 (TEST-NET-1) is no address of this machine: binding it fails with or without RDMA.
#[test]
fn serve_that_cannot_listen_prints_its_error_and_no_banner() {
    let out = harness().args(["serve", "--listen", "192.0.2.1:20050", "--idle", "1"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let all = format!("{}{}", String::from_utf8_lossy(&out.stdout), stderr(&out));
    assert!(!all.contains("serving"), "no banner before the listener is up: {all}");
    assert!(all.contains("error:"), "{all}");
}

/// Issue 24 item 8: a page per subcommand, each with EXIT STATUS (4 included), and every
/// `rpcrdma-harness-NAME(1)` the top page names exists.
#[test]
fn every_page_the_manual_names_exists_and_says_the_exit_status() {
    let dir = common::tmp("man-pages");
    let out = harness().args(["man", "--dir"]).arg(&dir).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let top = std::fs::read_to_string(dir.join("rpcrdma-harness.1")).unwrap();
    let named: Vec<String> = top
        .split("rpcrdma\\-harness\\-")
        .skip(1)
        .filter_map(|rest| rest.split_once("(1)").map(|(name, _)| name.replace("\\-", "-")))
        .collect();
    assert!(named.iter().any(|n| n == "run") && named.iter().any(|n| n == "serve"), "{named:?}");
    for name in named {
        let page = std::fs::read_to_string(dir.join(format!("rpcrdma-harness-{name}.1")))
            .unwrap_or_else(|e| panic!("rpcrdma-harness-{name}.1: {e}"));
        assert!(page.contains(".SH \"EXIT STATUS\""), "{name}");
        assert!(page.contains(".TP\n4\n"), "{name}: exit status 4");
    }
    let run = harness().args(["man", "run"]).output().unwrap();
    assert!(String::from_utf8_lossy(&run.stdout).contains(".TH rpcrdma-harness-run"));
    assert_eq!(harness().args(["man", "nosuch"]).output().unwrap().status.code(), Some(2));
    let help = harness().arg("--help").output().unwrap();
    assert!(String::from_utf8_lossy(&help.stdout).contains("4 a check broke"));
}

/// Issue 24 item 2: an early exit still writes its reports (saying what went wrong), so an
/// earlier run's report is never left standing; and the two reports cannot be one file
/// however the path is spelt.
#[test]
fn an_early_exit_replaces_stale_reports_with_the_reason() {
    let dir = common::tmp("stale-reports");
    let (json, junit) = (dir.join("report.json"), dir.join("junit.xml"));
    std::fs::write(&json, "{\"stale\": true}").unwrap();
    std::fs::write(&junit, "<stale/>").unwrap();
    // A profile that does not exist: exit 2 before any check.
    let out = harness()
        .args(["run", "--expect", "/nonexistent/profile.json", "--json"])
        .arg(&json)
        .arg("--junit")
        .arg(&junit)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["error"]["exit_status"], 2, "{v}");
    assert!(v["error"]["message"].as_str().unwrap().contains("/nonexistent/profile.json"), "{v}");
    assert_eq!(v["checks"].as_array().map(Vec::len), Some(0));
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(xml.contains("<error") && xml.contains("exit-status-2") && !xml.contains("stale"), "{xml}");
    // ./report.json is report.json.
    let out = harness()
        .current_dir(&dir)
        .args(["run", "rfc8166/4.2.4/null-call", "--json", "report.json", "--junit", "./report.json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("both name"), "{}", stderr(&out));
}
