//! `bench-read` (issue 25): 4 KiB NFSv3 READs per second against the embedded reference
//! responder, a line per depth; a responder whose READ replies are not 4096 bytes of the file
//! (garbage by its fault switches, or short: a file of 4095 bytes) ends it with exit 1 and
//! what came instead. `bench-null` likewise gives a line per depth. No figure is judged: only
//! that there is one.

mod common;

use common::harness;

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The rate on a `read-4k depth=N:` line.
fn rate(line: &str) -> f64 {
    let after = line.split_once(": ").expect("depth: rate").1;
    after.split_once(' ').expect("rate unit").0.parse().expect("a number")
}

#[test]
fn a_line_per_depth_with_a_positive_rate_and_every_reply_4096_bytes() {
    let out = harness()
        .args(["bench-read", "--calls", "40", "--warmup", "3"])
        .args(["--depth", "1", "--depth", "4", "--depth", "16", "--depth", "64"])
        .output()
        .unwrap();
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
    let lines: Vec<&str> = stdout.lines().filter(|l| l.starts_with("read-4k depth=")).collect();
    // The embedded responder grants 32 credits: depth 64 is held to them (RFC 8166 3.3.1).
    let depths: Vec<&str> = lines.iter().map(|l| l.split(':').next().unwrap()).collect();
    assert_eq!(depths, ["read-4k depth=1", "read-4k depth=4", "read-4k depth=16", "read-4k depth=32"], "{stdout}");
    for l in &lines {
        assert!(rate(l) > 0.0, "{l}");
        assert!(l.contains(" READs/s (") && l.contains(" MiB/s)"), "{l}");
    }
    assert!(stdout.contains("grants 32 credits; 40 READs of 4096 bytes of /export/big"), "{stdout}");
    // 4 depths of 40 and 3 warm-up READs, every one READ3resok with its 4096 bytes in the chunk.
    assert!(
        stdout.contains("read-4k: 163 READ3resok replies, each with the file's 4096 bytes in the write chunk"),
        "{stdout}"
    );
}

#[test]
fn garbage_or_misplaced_read_replies_end_it_with_exit_1_and_what_came() {
    for (fault, says) in [
        // The data length word dropped from the Payload stream: READ3resok does not decode.
        ("reduced-count-omitted", "READ3res does not decode"),
        // The segment echoed with its offset moved past the data: not where we offered it.
        ("write-chunk-offset-advanced", "not the one segment offered"),
        // eof and the data, 4100 bytes, for a 4096-byte chunk: the responder gives up.
        ("write-chunk-preceding-item", "outstanding READs: the peer disconnected"),
    ] {
        let out = harness().args(["bench-read", "--calls", "10", "--warmup", "0", "--fault", fault]).output().unwrap();
        let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
        assert_eq!(out.status.code(), Some(1), "{fault}: {stdout}{stderr}");
        assert!(stderr.contains("error: ") && stderr.contains(says), "{fault}: {stderr}");
        assert!(!stdout.contains("read-4k depth="), "{fault}: no rate from refused replies: {stdout}");
    }
}

#[test]
fn a_short_read_ends_it_with_exit_1_and_says_so() {
    // The reference tree's 4095-byte file: the READ of 4096 bytes at offset 0 returns 4095.
    let out = harness().args(["bench-read", "--calls", "5", "--file", "page-minus-1"]).output().unwrap();
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    assert!(stderr.contains("count 4095 and data length 4095, not 4096: a short or inconsistent READ"), "{stderr}");
    assert!(!stdout.contains("read-4k depth="), "{stdout}");
}

#[test]
fn bad_options_are_usage_errors() {
    for args in [
        &["bench-read", "--fault", "nosuch"][..],
        &["bench-read", "--peer", "192.0.2.1", "--fault", "zero-credit"],
        &["bench-read", "--depth", "0"],
        &["bench-read", "--depth", "65"],
        &["bench-read", "--calls", "0"],
        &["bench-read", "--root-fh", "xyz"],
        &["bench-read", "--file", "nosuch"],
    ] {
        let out = harness().args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out.stderr));
    }
}

#[test]
fn bench_null_gives_a_line_per_depth_with_a_positive_rate() {
    let out = harness()
        .args(["bench-null", "--calls", "40", "--warmup", "3", "--depth", "1", "--depth", "64"])
        .output()
        .unwrap();
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
    let lines: Vec<&str> = stdout.lines().filter(|l| l.starts_with("null-calls depth=")).collect();
    let depths: Vec<&str> = lines.iter().map(|l| l.split(':').next().unwrap()).collect();
    assert_eq!(depths, ["null-calls depth=1", "null-calls depth=32"], "{stdout}");
    assert!(lines.iter().all(|l| rate(l) > 0.0), "{stdout}");
}

#[test]
fn both_benches_are_listed_in_help() {
    let help = text(&harness().arg("--help").output().unwrap().stdout);
    assert!(help.contains("bench-read") && help.contains("bench-null"), "{help}");
}
