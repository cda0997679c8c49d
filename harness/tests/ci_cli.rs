//! What CI users expect (issue 13): --quiet, list --json / --groups with the client checks,
//! colour and ASCII marks, completions and a man page, report metadata.

mod common;

use common::{harness, tmp};
use serde_json::Value;

const ONE: &str = "rfc8166/4.2.4/null-call";

#[test]
fn quiet_prints_the_recap_and_the_closing_line_only() {
    let out = harness().args(["run", ONE, "--quiet"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "1 passed, 0 failed, 0 skipped\n");
    let out = harness().args(["run", "write-chunks", "--fault", "pad-write-chunk", "-q"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    // The recap of the failed IDs, then the closing line (issue 24, edge 1).
    assert_eq!(text.lines().count(), 2, "{text}");
    assert!(text.lines().next().unwrap().starts_with("failed: rfc8166/"), "{text}");
    assert!(text.lines().last().unwrap().contains(" failed, "), "{text}");
    let out = harness().args(["serve", "--self-test", "--quiet"]).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 1);
}

#[test]
fn list_json_groups_and_client_checks() {
    let out = harness().args(["list", "--json"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let checks = v["checks"].as_array().unwrap();
    let client: Vec<&Value> = checks.iter().filter(|c| c["client"] == true).collect();
    assert!(!client.is_empty(), "the client checks are listed");
    assert!(client.iter().any(|c| c["id"] == "rfc8797/4/requester-private-data"));
    assert!(checks.iter().any(|c| c["id"] == ONE && c["client"] == false));
    for c in checks {
        for k in ["id", "key_word", "requirement", "acceptable", "rationale", "groups"] {
            assert!(!c[k].is_null(), "{k} in {c}");
        }
    }
    // The text marks client checks.
    let out = harness().args(["list"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text.lines().find(|l| l.starts_with("rfc8797/4/requester-private-data ")).expect("listed");
    assert!(line.contains("client"), "{line}");
    assert!(!text.lines().find(|l| l.starts_with(ONE)).unwrap().contains("client"));
    // Groups: each with its count; every one is a working selector.
    let out = harness().args(["list", "--groups"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let credits = text.lines().find(|l| l.starts_with("credits ")).expect("the credits group");
    // "(N checks run by `run`, M judged by `serve`)": the server and client counts apart.
    let inside = credits.split('(').nth(1).unwrap();
    let n: usize = inside.split(|c: char| !c.is_ascii_digit()).filter_map(|w| w.parse::<usize>().ok()).sum();
    let in_json = checks.iter().filter(|c| c["groups"].as_array().unwrap().iter().any(|g| g == "credits")).count();
    assert_eq!(n, in_json);
    let client = checks
        .iter()
        .filter(|c| c["client"] == true && c["groups"].as_array().unwrap().iter().any(|g| g == "credits"))
        .count();
    assert!(client == 0 || credits.contains(&format!("{client} judged by `serve`")), "{credits}");
}

#[test]
fn colour_and_ascii_marks() {
    let plain = harness().args(["run", ONE]).env_remove("NO_COLOR").env("LANG", "en_US.UTF-8").output().unwrap();
    let text = String::from_utf8_lossy(&plain.stdout);
    assert!(!text.contains('\x1b'), "no colour into a pipe: {text:?}");
    assert!(text.contains("✔ rfc8166/4.2.4/null-call"), "{text}");
    let always = harness().args(["run", ONE, "--color", "always"]).env("NO_COLOR", "1").output().unwrap();
    let text = String::from_utf8_lossy(&always.stdout);
    assert!(text.contains("\x1b[32m"), "{text:?}");
    assert!(text.lines().last() == Some("1 passed, 0 failed, 0 skipped"), "the closing line stays plain: {text:?}");
    let never = harness().args(["--color", "never", "run", ONE]).output().unwrap();
    let text = String::from_utf8_lossy(&never.stdout);
    assert!(text.is_ascii() && text.contains("+ rfc8166/4.2.4/null-call (pass)"), "{text}");
    let c_locale =
        harness().args(["run", "write-chunks", "--fault", "pad-write-chunk"]).env("LC_ALL", "C").output().unwrap();
    let text = String::from_utf8_lossy(&c_locale.stdout);
    assert!(text.contains("x rfc8166/3.4.6.2/write-chunk-no-pad (FAIL)"), "{text}");
    assert!(!text.contains('✔') && !text.contains('×'), "{text}");
    let bad = harness().args(["run", ONE, "--color", "sometimes"]).output().unwrap();
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn completions_and_man_page_from_the_cli_definition() {
    for (shell, marker) in
        [("bash", "complete "), ("zsh", "#compdef rpcrdma-harness"), ("fish", "complete -c rpcrdma-harness")]
    {
        let out = harness().args(["completions", shell]).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{shell}");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains(marker), "{shell}: {text}");
        for sub in ["run", "serve", "decode", "list"] {
            assert!(text.contains(sub), "{shell} completes {sub}");
        }
        assert!(text.contains("--timeout") || text.contains("timeout"), "{shell}");
    }
    assert_eq!(harness().args(["completions", "tcsh"]).output().unwrap().status.code(), Some(2));
    let out = harness().arg("man").output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with(".ie") || text.contains(".TH rpcrdma-harness"), "{text}");
    assert!(text.contains(".TH rpcrdma-harness"), "{text}");
    assert!(text.contains("serve"), "{text}");
}

#[test]
fn reports_carry_the_command_line_selection_profile_and_revision() {
    let d = tmp("meta");
    let profile = d.join("p.json");
    std::fs::write(&profile, r#"{"peer": "t", "divergences": []}"#).unwrap();
    let json = d.join("r.json");
    let args: Vec<String> = ["run", "rfc8166/4.5", "--exclude", "rfc8166/4.5.2", "--expect"]
        .iter()
        .map(|s| s.to_string())
        .chain([profile.display().to_string(), "--json".into(), json.display().to_string()])
        .collect();
    let out = harness().args(&args).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let line: Vec<String> =
        v["command_line"].as_array().unwrap().iter().map(|a| a.as_str().unwrap().to_string()).collect();
    assert_eq!(line, args);
    assert_eq!(v["selection"]["select"], serde_json::json!(["rfc8166/4.5"]));
    assert_eq!(v["selection"]["exclude"], serde_json::json!(["rfc8166/4.5.2"]));
    assert_eq!(v["profile_path"], profile.display().to_string());
    assert_eq!(v["tool"]["version"], env!("CARGO_PKG_VERSION"));
    // The revision is the checkout's HEAD when git is there (as it is for this test), else "unknown".
    let rev = v["tool"]["revision"].as_str().unwrap();
    let head = std::process::Command::new("git")
        .args(["rev-parse", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    match head {
        Some(h) => assert_eq!(rev, h),
        None => assert_eq!(rev, "unknown"),
    }
    // --version says it too, for bug reports.
    let out = harness().arg("--version").output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        format!("rpcrdma-harness {} ({rev})", env!("CARGO_PKG_VERSION"))
    );
    std::fs::remove_dir_all(&d).unwrap();
}
