//! Consistency (issue 13): one JSON type per decoded field, vector files decoded as they say,
//! hex dumps read back, typos in profiles refused, JUnit a schema accepts, empty selections
//! refused, and messages that name what went wrong.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use common::{harness, tmp};
use serde_json::Value;

fn vectors_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../vectors")
}

fn vec_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            vec_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "vec") {
            out.push(p);
        }
    }
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn collect(v: &Value, path: &str, types: &mut BTreeMap<String, BTreeSet<&'static str>>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                let p = format!("{path}/{k}");
                types.entry(p.clone()).or_default().insert(json_type(x));
                collect(x, &p, types);
            }
        }
        Value::Array(a) => {
            for x in a {
                collect(x, &format!("{path}[]"), types);
            }
        }
        _ => {}
    }
}

#[test]
fn every_decoded_field_has_one_json_type_across_all_kinds_and_versions() {
    let mut files = Vec::new();
    vec_files(&vectors_dir(), &mut files);
    assert!(files.len() > 200, "{} vectors", files.len());
    let mut types = BTreeMap::new();
    let mut kinds = BTreeSet::new();
    for f in &files {
        let out = harness().args(["decode", "--json", "--file"]).arg(f).output().unwrap();
        // 0 decoded, 1 a decode error reported as JSON; never a usage error for our own vectors.
        assert!(matches!(out.status.code(), Some(0 | 1)), "{}: {}", f.display(), String::from_utf8_lossy(&out.stderr));
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        if out.status.code() == Some(0) {
            kinds.insert(
                std::fs::read_to_string(f).unwrap().lines().find(|l| l.starts_with("kind:")).unwrap().to_string(),
            );
        }
        collect(&v, "", &mut types);
    }
    assert!(kinds.len() >= 6, "{kinds:?}");
    let mixed: Vec<_> = types
        .iter()
        .filter(|(_, t)| t.iter().filter(|t| **t != "null").count() > 1)
        .map(|(p, t)| format!("{p}: {t:?}"))
        .collect();
    assert!(mixed.is_empty(), "fields with more than one JSON type: {mixed:#?}");
    // The XIDs in particular: numbers in Version One and Version Two alike.
    assert_eq!(types["/rdma_xid"], BTreeSet::from(["number"]));
}

#[test]
fn xid_is_a_number_in_both_versions() {
    let v1 = harness()
        .args(["decode", "--json", "00000011 00000001 00000001 00000001 00000000 00000000 00000000"])
        .output()
        .unwrap();
    let v2 = harness()
        .args(["decode", "--json", "00000011 00000002 00000001 00000005 00000000 0000002a 00000000"])
        .output()
        .unwrap();
    for out in [v1, v2] {
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["rdma_xid"], 0x11, "{v}");
    }
}

#[test]
fn a_vector_file_is_decoded_as_its_own_kind_profile_and_role() {
    let d = tmp("vecmeta");
    // RFC 8797 private data, version 1, 4 KiB both ways.
    let pd = d.join("pd.vec");
    std::fs::write(&pd, "name: pd\nkind: private-data\nexpect: ok\nhex:\nf6ab0e18 01 01 03 03\n").unwrap();
    let out = harness().args(["decode", "--json", "--file"]).arg(&pd).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["pd.send_size"], 4096);
    // An RDMA_ERROR with rdma_err 9: only the RFC 5666 profile has an arm for it.
    let prof = d.join("prof.vec");
    let mut hex = String::from("00000001 00000001 00000001 00000004 00000009");
    hex.push_str(&" 00000000".repeat(8));
    std::fs::write(&prof, format!("name: p\nkind: header\nprofile: rfc5666-error-arm\nexpect: ok\nhex:\n{hex}\n"))
        .unwrap();
    let out = harness().args(["decode", "--json", "--file"]).arg(&prof).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    // An RDMA_NOMSG call without chunks, with role: call: the violation is reported.
    let role = d.join("role.vec");
    std::fs::write(
        &role,
        "name: r\nkind: header\nrole: call\nexpect: ok\nhex:\n00000001 00000001 00000001 00000001 00000000 00000000 00000000\n",
    )
    .unwrap();
    let out = harness().args(["decode", "--json", "--file"]).arg(&role).output().unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["violations"][0]["id"], "rfc8166/4.2.4/nomsg-without-chunks", "{v}");
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn the_hex_dump_format_is_accepted_as_input() {
    // 28 bytes as the harness dumps them: an offset column, two spaces, 4-byte words.
    let dump = "    0000  0000002a 00000001 00000010 00000001\n    0010  00000000 00000000 00000000\n";
    let out = harness().args(["decode", "--json", "-"]).write_stdin(dump).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["rdma_xid"], 42);
    assert_eq!(v["rdma_credit"], 16);
    assert_eq!(v["rdma_proc"], "RDMA_NOMSG");
}

#[test]
fn role_with_a_kind_that_has_no_roles_is_refused() {
    let out = harness()
        .args(["decode", "--kind", "rpc", "--role", "call", "00000009 00000000 00000002 000186a3 00000003 00000000"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--role"));
}

#[test]
fn profile_typos_are_refused_with_the_entry_named() {
    let d = tmp("typos");
    let p = d.join("p.json");
    let cases = [
        (
            r#"{"peer": "x", "divergences": [{"id": "rfc8166/3.4.6.2/write-chunk-no-pads", "outcome": "fail", "reason": "r"}]}"#,
            "write-chunk-no-pads",
        ),
        (
            r#"{"peer": "x", "divergences": [{"id": "rfc8166/3.4.6.2/write-chunk-no-pad", "outcome": "fail", "reason": "r", "outcom": "x"}]}"#,
            "outcom",
        ),
        (r#"{"peer": "x", "divergence": []}"#, "divergence"),
        (
            r#"{"peer": "x", "divergences": [{"id": "rfc8166/3.4.6.2/write-chunk-no-pad", "outcome": "explode", "reason": "r"}]}"#,
            "explode",
        ),
    ];
    for (text, named) in cases {
        std::fs::write(&p, text).unwrap();
        let out = harness().args(["run", "rfc8166/4.2.4/null-call", "--expect"]).arg(&p).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{text}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(named) && !err.contains("Some("), "{err}");
        assert!(out.stdout.is_empty(), "ran checks: {}", String::from_utf8_lossy(&out.stdout));
    }
    // serve loads profiles the same way, and accepts its client checks' IDs.
    std::fs::write(
        &p,
        r#"{"peer": "x", "divergences": [{"id": "rfc8797/4/requester-private-data", "outcome": "fail", "reason": "r"}]}"#,
    )
    .unwrap();
    let out = harness().args(["serve", "--self-test", "--quiet", "--expect"]).arg(&p).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "the stale entry is an unexpected pass: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn the_shipped_profiles_load() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../conformance/profiles");
    let mut n = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "json") {
            n += 1;
            let out =
                harness().args(["run", "rfc8166/4.2.4/null-call", "--quiet", "--expect"]).arg(&p).output().unwrap();
            assert_ne!(out.status.code(), Some(2), "{}: {}", p.display(), String::from_utf8_lossy(&out.stderr));
        }
    }
    assert!(n > 0);
}

/// The attributes the Jenkins xunit (JUnit) schema allows on `testsuites`.
const TESTSUITES_ATTRIBUTES: [&str; 6] = ["name", "time", "tests", "failures", "disabled", "errors"];

#[test]
fn junit_fits_the_schema_and_shows_lax_passes_and_expected_divergences() {
    let d = tmp("junit");
    let profile = d.join("p.json");
    std::fs::write(
        &profile,
        r#"{"peer": "t", "divergences": [{"id": "rfc8166/3.4.6.2/write-chunk-no-pad", "outcome": "fail", "reason": "pads write chunks"}]}"#,
    )
    .unwrap();
    let xml_path = d.join("r.xml");
    let out = harness()
        .args([
            "run",
            "rfc8166/3.4.6.2/write-chunk-no-pad",
            "rfc8166/4.6.1/msgp-refused",
            "--fault",
            "pad-write-chunk",
            "--fault",
            "no-err-chunk",
            "--expect",
        ])
        .arg(&profile)
        .arg("--junit")
        .arg(&xml_path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let xml = std::fs::read_to_string(&xml_path).unwrap();
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "testsuites");
    for a in root.attributes() {
        assert!(TESTSUITES_ATTRIBUTES.contains(&a.name()), "testsuites has {}", a.name());
    }
    for n in doc.descendants().filter(|n| n.attribute("time").is_some()) {
        let t = n.attribute("time").unwrap();
        assert!(!t.starts_with('-') && t.parse::<f64>().unwrap() >= 0.0, "time={t}");
    }
    let out_of = |name: &str| -> String {
        let case = doc.descendants().find(|n| n.has_tag_name("testcase") && n.attribute("name") == Some(name)).unwrap();
        case.children().filter(|c| c.has_tag_name("system-out")).map(|c| c.text().unwrap_or("").to_string()).collect()
    };
    // The whole check ID is the testcase's name (issue 24, edge 6), and the conversation is
    // in its system-out, decoded and in hex.
    let div = out_of("rfc8166/3.4.6.2/write-chunk-no-pad");
    assert!(div.contains("expected-divergence") && div.contains("pads write chunks"), "{div}");
    let hex = div.lines().any(|l| l.trim_start().starts_with("0000  "));
    assert!(div.contains(" ms -> ") && div.contains(" ms <- ") && hex, "{div}");
    assert!(out_of("rfc8166/4.6.1/msgp-refused").contains("pass-lax"));
    // The run's metadata are properties of the testsuite.
    let props: Vec<_> =
        doc.descendants().filter(|n| n.has_tag_name("property")).map(|n| n.attribute("name").unwrap()).collect();
    for want in ["harness.version", "harness.revision", "command_line", "profile_path"] {
        assert!(props.contains(&want), "{props:?}");
    }
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn an_empty_selection_is_an_error() {
    let out = harness().args(["run", "credits", "--exclude", "credits"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("selection is empty"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn report_paths_are_checked_before_any_check_runs() {
    let d = tmp("paths");
    let afile = d.join("afile");
    std::fs::write(&afile, "x").unwrap();
    let cases: Vec<(Vec<String>, &str)> = vec![
        (vec!["--json".into(), d.join("nodir/sub/r.json").display().to_string()], "--json"),
        (vec!["--junit".into(), d.join("nodir/r.xml").display().to_string()], "--junit"),
        (vec!["--pcap".into(), afile.display().to_string()], "--pcap"),
        (vec!["--json".into(), d.display().to_string()], "--json"),
        (vec!["--json".into(), "same".into(), "--junit".into(), "same".into()], "--junit"),
    ];
    for (extra, option) in cases {
        let started = std::time::Instant::now();
        let out = harness().arg("run").args(&extra).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{extra:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(option), "{extra:?}: names the option: {err}");
        assert!(out.stdout.is_empty(), "{extra:?}: ran checks: {}", String::from_utf8_lossy(&out.stdout));
        assert!(started.elapsed() < std::time::Duration::from_secs(1), "{extra:?}: ran the catalogue first");
    }
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn dash_means_standard_output() {
    let d = tmp("dash");
    let out = harness().current_dir(&d).args(["run", "rfc8166/4.2.4/null-call", "--json", "-"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(!d.join("-").exists(), "a file named - was created");
    let v: Value = serde_json::from_slice(&out.stdout).expect("standard output is the JSON report alone");
    assert_eq!(v["summary"]["passed"], 1);
    // The text went to standard error, closing line included.
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().last(), Some("1 passed, 0 failed, 0 skipped"), "{err}");
    let out = harness().current_dir(&d).args(["run", "rfc8166/4.2.4/null-call", "--junit", "-"]).output().unwrap();
    roxmltree::Document::parse(&String::from_utf8_lossy(&out.stdout)).expect("standard output is the JUnit report");
    assert!(!d.join("-").exists());
    let out = harness().current_dir(&d).args(["run", "--json", "-", "--junit", "-"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    // Character devices work as report destinations too.
    let out = harness()
        .args(["run", "rfc8166/4.2.4/null-call", "--json", "/dev/null", "--junit", "/dev/null"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let out = harness().args(["run", "rfc8166/4.2.4/null-call", "--json", "/dev/full"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--json /dev/full"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn messages_name_the_problem() {
    // A name that does not resolve is a resolution error, whatever the RDMA devices.
    let out = harness().args(["run", "--peer", "no.such.host.invalid"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("resolve") && err.contains("no.such.host.invalid"), "{err}");
    assert!(!err.contains("RDMA device"), "{err}");
    // Plurals.
    let out = harness().args(["run", "rfc8166/4.2.4/null-call"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.lines().next().unwrap().ends_with("(1 check)"), "{text}");
    let out = harness().args(["list", "rfc8166/4.2.4/null-call"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.lines().last().unwrap().starts_with("1 check "), "{text}");
    // A passive check alone plays no scenario: one connection.
    let out = harness().args(["serve", "--self-test", "rfc8797/4/requester-private-data"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("observed 1 connection,"), "{text}");
    assert!(!text.contains("connection(s)") && !text.contains("1 connections"), "{text}");
}

#[test]
fn serve_selects_client_checks_and_plays_only_their_scenarios() {
    // One scenario check: only that scenario's run, on one connection.
    let out = harness().args(["serve", "--self-test", "rfc8166/4.6.2/requester-discards-done"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.contains("observed 1 connection,"), "{text}");
    assert!(text.contains("rfc8166/4.6.2/requester-discards-done (pass)"), "{text}");
    assert!(!text.contains("requester-private-data"), "{text}");
    assert!(text.lines().last().unwrap().starts_with("1 passed"), "{text}");
    // The scenario group: every active check, each passing.
    let out = harness().args(["serve", "--self-test", "scenario"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.contains("rfc8166/4.5/requester-discards-short-reply (pass)"), "{text}");
    assert!(!text.contains("requester-within-grant"), "{text}");
    // A selector naming no client check is a usage error.
    let out = harness().args(["serve", "--self-test", "rfc8166/4.2.4/null-call"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("matches no client check"));
}
