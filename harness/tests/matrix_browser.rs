//! The matrix page in a real browser: Debian's Chromium, headless, loads the page the
//! `matrix` subcommand wrote from two real runs' reports, and every cell is in the rendered
//! document. Ignored by default; `.ci/run` installs Chromium and runs it.

use std::path::Path;
use std::process::Command;

use assert_cmd::Command as Harness;

fn chromium(args: &[&str], page: &Path) -> std::process::Output {
    let profile = tempfile_dir("chromium-profile");
    Command::new("chromium")
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run"])
        .args(["--disable-background-networking", "--disable-component-update", "--disable-sync"])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("chromium runs (apt-get install chromium)")
}

fn tempfile_dir(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("rpcrdma-matrix-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
#[ignore = "needs Chromium; run by .ci/run"]
fn the_matrix_page_renders_every_cell_in_a_browser() {
    let d = tempfile_dir("out");
    let (a, b) = (d.join("a.json"), d.join("b.json"));
    // Two configurations: the whole catalogue, and its credit checks alone.
    Harness::cargo_bin("rpcrdma-harness").unwrap().args(["run", "--json"]).arg(&a).assert().success();
    Harness::cargo_bin("rpcrdma-harness").unwrap().args(["run", "credits", "--json"]).arg(&b).assert().success();
    let page = d.join("matrix.html");
    Harness::cargo_bin("rpcrdma-harness")
        .unwrap()
        .arg("matrix")
        .arg(format!("{}=all", a.display()))
        .arg(format!("{}=credits", b.display()))
        .arg("--html")
        .arg(&page)
        .assert()
        .success();

    let report: serde_json::Value = serde_json::from_slice(&std::fs::read(&a).unwrap()).unwrap();
    let ids: Vec<String> =
        report["checks"].as_array().unwrap().iter().map(|c| c["id"].as_str().unwrap().to_string()).collect();
    assert!(ids.len() >= 60);
    let credits: serde_json::Value = serde_json::from_slice(&std::fs::read(&b).unwrap()).unwrap();
    let in_both = credits["checks"].as_array().unwrap().len();
    assert!(in_both >= 2 && in_both < ids.len());

    let dom = chromium(&["--dump-dom"], &page);
    assert!(dom.status.success(), "{}", String::from_utf8_lossy(&dom.stderr));
    let dom = String::from_utf8(dom.stdout).unwrap();
    // One cell per check and configuration: the credit-only report's missing checks show
    // as absent cells, not as holes in the table.
    assert_eq!(dom.matches("<td class=\"cell").count(), ids.len() * 2, "cells in the rendered page");
    assert_eq!(dom.matches("class=\"cell absent\"").count(), ids.len() - in_both);
    for id in &ids {
        assert!(dom.contains(&format!("<td class=\"id\">{id}</td>")), "{id} is not a row of the rendered page");
    }

    let shot = d.join("matrix.png");
    let out = chromium(&["--window-size=1200,800", &format!("--screenshot={}", shot.display())], &page);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let png = std::fs::read(&shot).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "a PNG screenshot");
    assert!(png.len() > 10_000, "the screenshot is {} bytes: nothing rendered?", png.len());
}
