//! Where users already are (issue 24): the installed binary outside the repository, the
//! reference export tree, draft profiles from a report, KCIDB output.

mod common;

use std::path::Path;

use common::{harness, tmp};

/// The `.vec` files of the repository's vectors/ tree, counted here (not by the binary).
fn vec_files(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| {
            let p = e.path();
            if p.is_dir() {
                vec_files(&p)
            } else {
                usize::from(p.extension().is_some_and(|x| x == "vec"))
            }
        })
        .sum()
}

#[test]
fn vectors_verify_in_an_empty_directory_uses_the_embedded_vectors() {
    let empty = tmp("vectors-empty");
    let out = harness().current_dir(&empty).args(["vectors", "verify"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}{}", String::from_utf8_lossy(&out.stderr));
    let want = vec_files(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../vectors"));
    assert!(want > 100, "{want} vectors in the repository");
    assert_eq!(text.lines().last().unwrap(), format!("{want} passed, 0 failed, 0 skipped"), "{text}");
    assert!(text.contains("v1/msg-no-chunks-null-call"), "{text}");
    // A DIR that is not one is still an error, not the embedded vectors.
    let out = harness().current_dir(&empty).args(["vectors", "verify", "vectors"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a directory of golden vectors"));
}

/// Every object under `dir` as (relative path, what it is: file bytes or link target).
fn snapshot(dir: &Path) -> Vec<(String, String)> {
    fn walk(root: &Path, at: &Path, out: &mut Vec<(String, String)>) {
        for e in std::fs::read_dir(at).unwrap().flatten() {
            let p = e.path();
            let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
            let t = e.file_type().unwrap();
            if t.is_symlink() {
                out.push((rel, format!("-> {}", std::fs::read_link(&p).unwrap().display())));
            } else if t.is_dir() {
                out.push((rel.clone(), "dir".into()));
                walk(root, &p, out);
            } else {
                out.push((rel, format!("{:?}", std::fs::read(&p).unwrap())));
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

#[test]
fn export_tree_is_documented_idempotent_and_restores_what_a_run_changed() {
    let help = harness().arg("--help").output().unwrap();
    assert!(String::from_utf8_lossy(&help.stdout).contains("export-tree"), "listed in --help");
    let d = tmp("export-tree").join("export");
    let first = harness().args(["export-tree"]).arg(&d).output().unwrap();
    assert_eq!(first.status.code(), Some(0), "{}", String::from_utf8_lossy(&first.stderr));
    let text = String::from_utf8_lossy(&first.stdout);
    assert!(
        text.lines().any(|l| l.starts_with("created") && l.ends_with("/export/dir/entry-19-of-twenty-in-dir")),
        "{text}"
    );
    let tree = snapshot(&d);
    // The reference tree (peers/src/ulp/tree.rs's documentation): 7 files, 2 symlinks and
    // `dir` with 20 files in the root; byte i of a file of n bytes is (i * 7 + n) % 251.
    assert_eq!(tree.len(), 30, "{tree:?}");
    let five: Vec<u8> = (0..5u32).map(|i| ((i * 7 + 5) % 251) as u8).collect();
    assert!(tree.contains(&("five".into(), format!("{five:?}"))), "{tree:?}");
    assert!(tree.contains(&("link".into(), "-> five".into())), "{tree:?}");
    assert_eq!(std::fs::metadata(d.join("big")).unwrap().len(), 70000);

    let second = harness().args(["export-tree"]).arg(&d).output().unwrap();
    assert_eq!(second.status.code(), Some(0));
    let text = String::from_utf8_lossy(&second.stdout);
    assert!(
        text.lines().all(|l| l.starts_with("unchanged") || l.contains("0 created, 0 replaced, 31 unchanged")),
        "{text}"
    );
    assert_eq!(snapshot(&d), tree, "a second run changes nothing");

    // A check WRITEs scratch and someone leaves a file: the first is put back, the second named.
    std::fs::write(d.join("scratch"), b"written by a check").unwrap();
    std::fs::remove_file(d.join("link")).unwrap();
    std::fs::write(d.join("stray"), b"").unwrap();
    let third = harness().args(["export-tree"]).arg(&d).output().unwrap();
    assert_eq!(third.status.code(), Some(0));
    let text = String::from_utf8_lossy(&third.stdout);
    assert!(text.lines().any(|l| l.starts_with("replaced") && l.ends_with("/scratch")), "{text}");
    assert!(text.lines().any(|l| l.starts_with("created") && l.ends_with("/link")), "{text}");
    assert!(String::from_utf8_lossy(&third.stderr).contains("stray is not in the reference tree"));
    std::fs::remove_file(d.join("stray")).unwrap();
    assert_eq!(snapshot(&d), tree);

    // A file where the tree has a directory is an error, exit 2.
    let bad = tmp("export-tree-bad");
    std::fs::write(bad.join("dir"), b"").unwrap();
    let out = harness().args(["export-tree"]).arg(&bad).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a directory"));
}

/// Replaces every `TODO: ...` string of a draft with what a reviewer would write.
fn fill_in(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::String(s) if s.starts_with("TODO:") => *s = "reviewed: the fault switch".into(),
        serde_json::Value::Array(a) => a.iter_mut().for_each(fill_in),
        serde_json::Value::Object(o) => o.values_mut().for_each(fill_in),
        _ => {}
    }
}

#[test]
fn profile_init_drafts_a_profile_that_expect_takes_once_its_todos_are_filled() {
    let d = tmp("profile-init");
    let report = d.join("faulty.json");
    // The reference responder with a fault: a real divergence to draft from.
    let out = harness()
        .args(["run", "write-chunks", "--fault", "pad-write-chunk", "--peer-version", "9.9-1", "-q", "--json"])
        .arg(&report)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let r: serde_json::Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    let failed: Vec<&str> = r["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["outcome"] == "fail")
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    assert!(!failed.is_empty());

    let draft = d.join("vendor-x.json");
    let out = harness().args(["profile", "init", "--from"]).arg(&report).arg("-o").arg(&draft).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let mut p: serde_json::Value = serde_json::from_slice(&std::fs::read(&draft).unwrap()).unwrap();
    assert_eq!(p["peer"], "vendor-x");
    assert_eq!(p["measured"], serde_json::json!(["9.9-1"]));
    let entries = p["divergences"].as_array().unwrap();
    let ids: Vec<&str> = entries.iter().map(|e| e["id"].as_str().unwrap()).collect();
    assert_eq!(ids, failed, "one entry per failed check, in run order");
    for e in entries {
        assert_eq!(e["outcome"], "fail");
        assert!(e["reason"].as_str().unwrap().starts_with("TODO:"));
        let actual =
            r["checks"].as_array().unwrap().iter().find(|c| c["id"] == e["id"]).unwrap()["actual"].as_str().unwrap();
        assert!(e["evidence"]["observed"].as_str().unwrap().ends_with(actual), "{e}");
        assert_eq!(e["evidence"]["version"], "9.9-1");
    }
    // Never over a file that exists.
    let again = harness().args(["profile", "init", "--from"]).arg(&report).arg("-o").arg(&draft).output().unwrap();
    assert_eq!(again.status.code(), Some(2));

    // The unreviewed draft is refused, naming what to fill in.
    let run = |profile: &Path| {
        harness()
            .args(["run", "write-chunks", "--fault", "pad-write-chunk", "-q", "--expect"])
            .arg(profile)
            .output()
            .unwrap()
    };
    let out = run(&draft);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("placeholder") && err.contains("TODO:"), "{err}");

    // Reviewed, it covers the faulty run exactly: exit 0, every failure expected.
    fill_in(&mut p);
    let reviewed = d.join("reviewed.json");
    std::fs::write(&reviewed, serde_json::to_vec_pretty(&p).unwrap()).unwrap();
    let out = run(&reviewed);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stdout));
    // And it is no blanket pass: the responder without the fault now passes what it lists.
    let out = harness().args(["run", "write-chunks", "-q", "--expect"]).arg(&reviewed).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "unexpected passes fail");
}

#[test]
fn profile_init_drafts_a_crash_as_a_peer_entry() {
    let d = tmp("profile-init-crash");
    let report = d.join("crash.json");
    let out = harness()
        .args(["run", "rfc8166/4.5.2/huge-segment-count", "--fault", "crash-on-huge-segment-count", "-q", "--json"])
        .arg(&report)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let out = harness().args(["profile", "init", "--peer", "crashy", "--from"]).arg(&report).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let mut p: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let e = &p["divergences"][0];
    assert_eq!(e["id"], "rfc8166/4.5.2/huge-segment-count");
    assert_eq!(e["peer"], "crashed");
    // No --peer-version in the report: the measured version is a placeholder too.
    assert!(p["measured"][0].as_str().unwrap().starts_with("TODO:"));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no peer_version"));
    fill_in(&mut p);
    let reviewed = d.join("crashy.json");
    std::fs::write(&reviewed, serde_json::to_vec_pretty(&p).unwrap()).unwrap();
    let out = harness()
        .args(["run", "rfc8166/4.5.2/huge-segment-count", "--fault", "crash-on-huge-segment-count", "-q", "--expect"])
        .arg(&reviewed)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stdout));
}

/// The CI recipe's script (docs/ci.md, contrib/ci/conformance.sh) as a job runs it: every
/// artefact written and the harness's exit status passed through, explained.
#[test]
fn the_ci_recipe_script_keeps_every_artefact_and_the_exit_status() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../contrib/ci/conformance.sh");
    let d = tmp("ci-recipe");
    let job = |out: &str, env: &[(&str, &str)], args: &[&str]| {
        let mut c = std::process::Command::new("bash");
        c.arg(&script).args(args).current_dir(&d).env("RPCRDMA_HARNESS", common::bin()).env("OUT", out);
        for (k, v) in env {
            c.env(k, v);
        }
        c.output().unwrap()
    };
    let ok = job("ok", &[("PEER_VERSION", "6.12.118-1")], &["write-chunks"]);
    assert_eq!(ok.status.code(), Some(0), "{}", String::from_utf8_lossy(&ok.stderr));
    assert!(String::from_utf8_lossy(&ok.stdout).contains("conformance: exit 0:"));
    for f in ["report.json", "junit.xml", "kcidb.json", "summary.txt"] {
        assert!(d.join("ok").join(f).metadata().unwrap().len() > 0, "{f}");
    }
    assert!(std::fs::read_dir(d.join("ok/pcap")).unwrap().count() > 0);
    let k: serde_json::Value = serde_json::from_slice(&std::fs::read(d.join("ok/kcidb.json")).unwrap()).unwrap();
    assert_eq!(k["checkouts"][0]["id"], "rpcrdma:6.12.118-1");

    let failed = job("failed", &[], &["write-chunks", "--fault", "pad-write-chunk"]);
    assert_eq!(failed.status.code(), Some(1));
    let r: serde_json::Value = serde_json::from_slice(&std::fs::read(d.join("failed/report.json")).unwrap()).unwrap();
    assert!(r["summary"]["failed"].as_u64().unwrap() > 0);

    let bad = job("bad", &[("PROFILE", "no-such-profile.json")], &[]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stdout).contains("conformance: exit 2: usage or environment error"));
}
