//! Crashes, hangs and unbounded memory (issue 13): each input an adversary or a careless
//! pipeline gives ends with a clear error and a known exit status, in bounded memory.

mod common;

use std::time::Duration;

use common::{assert_no_crash, run, run_into_closed_pipe, tmp, End};

const MIB: i64 = 1024;

#[test]
fn decode_of_an_endless_stdin_stops_with_an_error_in_bounded_memory() {
    let f = run(&["decode", "-"], Some(std::path::Path::new("/dev/zero")), Duration::from_secs(30));
    assert_eq!(f.end, End::Exit(2), "{}", f.stderr());
    assert!(f.stderr().contains("KiB"), "says what the bound is: {}", f.stderr());
    assert!(f.max_rss_kib < 64 * MIB, "{} KiB", f.max_rss_kib);
    let f = run(&["decode", "--file", "/dev/zero"], None, Duration::from_secs(30));
    assert_eq!(f.end, End::Exit(2), "{}", f.stderr());
    assert!(f.max_rss_kib < 64 * MIB, "{} KiB", f.max_rss_kib);
}

/// An RDMA_MSG call whose read list holds `n` segments (RFC 8166 4.3: each is 1, position,
/// handle, length, offset hi, offset lo: 24 bytes), then empty write list and no reply chunk.
fn header_with_reads(n: usize) -> Vec<u8> {
    let mut b = Vec::with_capacity(16 + n * 24 + 12);
    for w in [1u32, 1, 32, 0] {
        b.extend(w.to_be_bytes());
    }
    for i in 0..n as u32 {
        for w in [1u32, 0, i, 8, 0, 0x1000] {
            b.extend(w.to_be_bytes());
        }
    }
    for w in [0u32, 0, 0] {
        b.extend(w.to_be_bytes());
    }
    b
}

#[test]
fn a_crafted_header_with_a_million_read_segments_is_refused_in_bounded_memory() {
    let d = tmp("million");
    let path = d.join("big.bin");
    let bytes = header_with_reads(1_000_000);
    assert!(bytes.len() > 20_000_000);
    std::fs::write(&path, &bytes).unwrap();
    let f = run(&["decode", "--json", "--file", path.to_str().unwrap()], None, Duration::from_secs(30));
    assert_eq!(f.end, End::Exit(2), "{}", f.stderr());
    assert!(f.max_rss_kib < 64 * MIB, "{} KiB", f.max_rss_kib);
    // The largest message that is still accepted decodes, in memory proportional to it.
    let n = (256 * 1024 - 28) / 24;
    std::fs::write(&path, header_with_reads(n)).unwrap();
    let f = run(&["decode", "--json", "--file", path.to_str().unwrap()], None, Duration::from_secs(60));
    assert_eq!(f.end, End::Exit(0), "{}", f.stderr());
    let v: serde_json::Value = serde_json::from_slice(&f.stdout).unwrap();
    assert_eq!(v["rdma_reads"].as_array().unwrap().len(), n);
    assert!(f.max_rss_kib < 64 * MIB, "{} KiB", f.max_rss_kib);
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_huge_grant_is_refused_not_allocated() {
    for grant in ["4294967295", "1000000000", "65537"] {
        let f = run(&["serve", "--self-test", "--grant", grant], None, Duration::from_secs(30));
        assert_eq!(f.end, End::Exit(2), "--grant {grant}: {}", f.stderr());
        assert!(f.stderr().contains("--grant"), "{}", f.stderr());
        assert!(f.max_rss_kib < 64 * MIB, "{} KiB", f.max_rss_kib);
    }
    // The largest grant allowed runs, in bounded memory.
    let f = run(&["serve", "--self-test", "--quiet", "--grant", "65536"], None, Duration::from_secs(60));
    assert_eq!(f.end, End::Exit(0), "{}", f.stderr());
    assert!(f.max_rss_kib < 64 * MIB, "{} KiB", f.max_rss_kib);
}

#[test]
fn every_duration_is_validated_before_anything_runs() {
    let cases: &[&[&str]] = &[
        &["run", "--timeout", "1.8e19", "rfc8166/4.2.4/null-call"],
        &["run", "--timeout", "1e20", "rfc8166/4.2.4/null-call"],
        &["run", "--timeout", "nan", "rfc8166/4.2.4/null-call"],
        &["run", "--timeout", "inf", "rfc8166/4.2.4/null-call"],
        &["run", "--timeout", "-1", "rfc8166/4.2.4/null-call"],
        &["run", "--timeout", "0", "rfc8166/4.2.4/null-call"],
        &["serve", "--self-test", "--idle", "nan"],
        &["serve", "--self-test", "--idle", "1e300"],
        &["serve", "--self-test", "--max-time", "inf"],
        &["serve", "--self-test", "--max-time", "-5"],
    ];
    for args in cases {
        let f = run(args, None, Duration::from_secs(30));
        assert_eq!(f.end, End::Exit(2), "{args:?}: {}", f.stderr());
        assert!(f.stdout.is_empty(), "{args:?} ran something: {}", f.stdout());
        let option = args.iter().find(|a| ["--timeout", "--idle", "--max-time"].contains(a)).unwrap();
        assert!(f.stderr().contains(option), "{args:?}: names the option: {}", f.stderr());
    }
    // The largest timeout allowed still works (no overflow inside the check).
    let f = run(&["run", "--timeout", "3600", "rfc8166/4.2.4/null-call"], None, Duration::from_secs(30));
    assert_eq!(f.end, End::Exit(0), "{}", f.stderr());
}

#[test]
fn a_reader_that_goes_away_ends_quietly_and_reports_are_still_written() {
    let d = tmp("epipe");
    let cases: &[&[&str]] = &[
        &["run", "--json", "r.json"],
        &["list", "-v"],
        &["list", "--json"],
        &["decode", "--json", "00000001 00000001 00000001 00000000 00000000 00000000 00000000"],
        &["serve", "--self-test"],
        &["vectors", "verify", concat!(env!("CARGO_MANIFEST_DIR"), "/../vectors")],
        &["man"],
        &["completions", "bash"],
    ];
    for args in cases {
        let f = run_into_closed_pipe(args, &d);
        assert_no_crash(&f, &format!("{args:?}"));
        assert!(f.stderr().is_empty() || !f.stderr().contains("Broken pipe"), "{args:?}: {}", f.stderr());
        assert_eq!(f.code(), Some(0), "{args:?}: {}", f.stderr());
    }
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(d.join("r.json")).unwrap()).unwrap();
    assert_eq!(v["summary"]["failed"], 0);
    assert!(v["summary"]["passed"].as_u64().unwrap() >= 60);
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_full_disk_is_an_error() {
    for args in [
        &["run", "rfc8166/4.2.4/null-call"][..],
        &["list"],
        &["decode", "00000001 00000001 00000001 00000001 00000000 00000000 00000000"],
    ] {
        let child = std::process::Command::new(common::bin())
            .args(args)
            .stdout(std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let f = common::wait(child, Duration::from_secs(30));
        assert_no_crash(&f, &format!("{args:?}"));
        assert_eq!(f.code(), Some(2), "{args:?}: {}", f.stderr());
        assert!(f.stderr().contains("standard output"), "{args:?}: {}", f.stderr());
    }
}

#[test]
fn a_closed_standard_error_is_not_a_crash() {
    // `2>&1 | head -1`: both streams into a pipe nobody reads, errors included.
    let cases: &[&[&str]] = &[
        &["run", "--json", "nodir/x/r.json"],
        &["run", "no/such/check"],
        &["decode", "zz"],
        &["run", "--peer", "no.such.host.invalid"],
        &["serve"],
        &["run", "rfc8166/4.2.4/null-call", "--json", "-"],
    ];
    for args in cases {
        let child = std::process::Command::new(common::bin())
            .args(*args)
            .stdin(std::process::Stdio::null())
            .stdout(common::reader_gone())
            .stderr(common::reader_gone())
            .spawn()
            .unwrap();
        let f = common::wait(child, Duration::from_secs(60));
        assert!(matches!(f.end, End::Exit(0..=3)), "{args:?}: {:?}", f.end);
    }
}

/// `--expect /dev/urandom`, `matrix /dev/urandom` and `replay /dev/urandom` each grew to
/// 24 GB before (issue 24): every file the harness reads is bounded, and the error names it.
#[test]
fn endless_profiles_reports_and_reproducers_stop_with_an_error_in_bounded_memory() {
    for args in [
        &["run", "--expect", "/dev/urandom", "rfc8166/4.2.4/null-call"][..],
        &["matrix", "/dev/urandom"][..],
        &["replay", "/dev/urandom"][..],
        &["fuzz-panic", "--journal", "/dev/zero", "--console", "/dev/zero", "--out", "/nonexistent"][..],
    ] {
        let f = run(args, None, Duration::from_secs(60));
        assert_eq!(f.end, End::Exit(2), "{args:?}: {}", f.stderr());
        assert!(f.stderr().contains("/dev/"), "{args:?} names the file: {}", f.stderr());
        assert!(f.stderr().contains("MiB"), "{args:?} says the bound: {}", f.stderr());
        assert!(f.max_rss_kib < 600 * MIB, "{args:?}: {} KiB", f.max_rss_kib);
    }
}
