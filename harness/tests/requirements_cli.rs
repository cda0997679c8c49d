//! `list --requirements` and the requirement IDs in the JSON report, held against the
//! matrix's TSV files and the checks' `judges` declarations, both read here as text,
//! independently of the library that loads them.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

mod common;
use common::harness;

/// Every row of every matrix table: requirement ID -> the checks that declare they judge it
/// in full (`judges: &["rfc8166/4.5#1", "~..."]` after a check's `id:` in the catalogue's
/// sources; a `~` prefix marks a statement judged in part, which does not count).
fn matrix() -> BTreeMap<String, BTreeSet<String>> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../conformance/requirements");
    let mut rows: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("tsv") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let mut lines = text.lines();
        let header: Vec<&str> = lines.next().unwrap().split('\t').collect();
        let id = header.iter().position(|h| *h == "id").unwrap();
        for line in lines.filter(|l| !l.trim().is_empty()) {
            rows.insert(line.split('\t').nth(id).unwrap().to_string(), BTreeSet::new());
        }
    }
    let mut sources =
        vec![std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../conformance/src/catalogue"))];
    while let Some(p) = sources.pop() {
        if p.is_dir() {
            sources.extend(std::fs::read_dir(&p).unwrap().map(|e| e.unwrap().path()));
            continue;
        }
        let text = std::fs::read_to_string(&p).unwrap();
        let mut check = None;
        for line in text.lines().map(str::trim) {
            if let Some(rest) = line.strip_prefix("id: \"") {
                check = rest.split('"').next().map(str::to_string);
            } else if let (Some(rest), Some(c)) = (line.strip_prefix("judges: &["), &check) {
                for j in rest.trim_end_matches("],").split(',').map(|j| j.trim().trim_matches('"')) {
                    if !j.is_empty() && !j.starts_with('~') {
                        rows.get_mut(j).unwrap_or_else(|| panic!("{c} judges {j}, no row")).insert(c.clone());
                    }
                }
            }
        }
    }
    rows
}

#[test]
fn list_requirements_prints_every_statement() {
    let rows = matrix();
    assert!(rows.len() > 100, "{} rows", rows.len());
    let out = harness().args(["list", "--requirements"]).assert().success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(text.contains("server judged") && text.contains("client judged"));
    for id in rows.keys() {
        assert!(text.lines().any(|l| l.starts_with(&format!("{id}  ["))), "{id} is not listed");
    }
    assert!(text.trim_end().ends_with(&format!("{} requirements", rows.len())), "{}", text.lines().last().unwrap());

    let out = harness().args(["list", "--requirements", "--json", "rfc8797"]).assert().success();
    let v: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let listed: BTreeSet<&str> =
        v["requirements"].as_array().unwrap().iter().map(|r| r["id"].as_str().unwrap()).collect();
    let want: BTreeSet<&str> = rows.keys().filter(|k| k.starts_with("rfc8797/")).map(String::as_str).collect();
    assert_eq!(listed, want);
    harness().args(["list", "--requirements", "no-such-spec"]).assert().code(2);
}

#[test]
fn each_result_names_the_requirements_its_check_judges() {
    let rows = matrix();
    let dir = std::env::temp_dir().join(format!("rpcrdma-req-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let json = dir.join("r.json");
    harness().args(["run", "--quiet", "--json"]).arg(&json).assert().success();
    let v: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let mut named = 0;
    for c in v["checks"].as_array().unwrap() {
        let id = c["id"].as_str().unwrap();
        let got: BTreeSet<String> =
            c["requirements"].as_array().unwrap().iter().map(|r| r.as_str().unwrap().to_string()).collect();
        let want: BTreeSet<String> = rows.iter().filter(|(_, cs)| cs.contains(id)).map(|(r, _)| r.clone()).collect();
        assert_eq!(got, want, "{id}");
        named += got.len();
    }
    assert!(named > 30, "only {named} requirement references in the whole report");
}

/// The README's coverage table says what `list --requirements` computes, so it cannot go
/// stale as checks are added.
#[test]
fn the_readme_coverage_table_is_current() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md")).unwrap();
    let out = harness().args(["list", "--requirements"]).assert().success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    let names = [
        ("rfc8166", "RFC 8166"),
        ("rfc8797", "RFC 8797"),
        ("rfc5666", "RFC 5666"),
        ("v2-01", "v2-01"),
        ("xcharext-02", "xcharext-02"),
        ("rtrext-03", "rtrext-03"),
        ("rfc8167", "RFC 8167"),
        ("rfc8267", "RFC 8267 (6)"),
        ("all", "all"),
    ];
    for (spec, shown) in names {
        let line = text.lines().find(|l| l.split_whitespace().next() == Some(spec)).unwrap_or_else(|| panic!("{spec}"));
        // `rfc8166  45/47 (96%)  16/33 (48%)`: the two sides as the README writes them.
        let cells: Vec<String> = line
            .split_whitespace()
            .skip(1)
            .collect::<Vec<_>>()
            .chunks(2)
            .map(|c| if c[0] == "-" { "-".to_string() } else { c.join(" ") })
            .collect();
        let row = readme.lines().find(|l| l.starts_with(&format!("| {shown} "))).unwrap_or_else(|| panic!("{shown}"));
        let readme_cells: Vec<&str> = row.split('|').map(str::trim).filter(|c| !c.is_empty()).skip(1).collect();
        assert_eq!(readme_cells, cells, "README coverage row for {shown}");
    }
}
