//! A bounded, deterministic fuzz of the command line (issue 13): a few hundred random
//! argument vectors and inputs to every subcommand, each run as a user would run the binary.
//! None may panic (exit 101), die of a signal, hang, or use more than 64 MiB of memory
//! (the child's peak RSS from wait4). Exit codes must be among the documented ones.
//!
//! `RPCRDMA_FUZZ_SEED` and `RPCRDMA_FUZZ_CASES` change the seed (default fixed) and the count.

mod common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use common::{End, Finished};

/// xorshift64*: small, deterministic, good enough to pick from lists.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.below(xs.len())]
    }
    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
    fn hex(&mut self, words: usize) -> String {
        let mut s = String::new();
        for i in 0..words {
            // Mostly small values, as real headers have, some arbitrary.
            let w = match self.below(4) {
                0 => self.next() as u32,
                1 => self.below(8) as u32,
                _ => self.below(40) as u32,
            };
            if i > 0 {
                s.push(' ');
            }
            s.push_str(&format!("{w:08x}"));
        }
        s
    }
}

/// Checks that finish in milliseconds against the embedded responder.
const FAST: [&str; 6] = [
    "rfc8166/4.2.4/null-call",
    "rfc5666/6.2/conf-rdma",
    "rfc8166/3.4.5/position-unaligned",
    "rfc8166/3.4.6.2/write-chunk-no-pad",
    "rfc8166/3.4.5/read-chunk-split",
    "rfc8166/3.5.3/position-zero-long-call",
];
const JUNK: [&str; 14] =
    ["", "-", "--", "x", "é", "\u{7f}", "--nope", "-z", "💥", "0", "a/b/c", "rfc9999/", "/", "--="];
/// Values for the run's --timeout: none valid and long, so no check waits long.
const RUN_SECS: [&str; 12] = ["0", "-1", "0.5", "2", "nan", "inf", "1e20", "1.8e19", "", "x", "0.001", "3601"];
const SERVE_SECS: [&str; 11] = ["0", "-1", "0.2", "nan", "inf", "-inf", "1e300", "604801", "", "x", "1e-300"];
const NUMBERS: [&str; 12] =
    ["0", "1", "32", "65536", "65537", "4294967295", "4294967296", "18446744073709551616", "-1", "", "x", "1e3"];
const PATHS: [&str; 9] = ["r.json", "-", "nodir/x/y", "", "afile", ".", "/dev/full", "/dev/null", "out/r.xml"];
const ADDRS: [&str; 8] = ["127.0.0.1", "[::1]:1", "localhost:0", "[::1", ":1", "h:x", "127.0.0.1:99999", ""];
const FAULTS: [&str; 5] = ["pad-write-chunk", "no-err-chunk", "zero-credit", "nope", ""];
const KINDS: [&str; 8] = ["header", "rpc", "private-data", "ccp-call", "ccp-reply", "msgp-payload", "bogus", ""];
const PROFILES: [&str; 4] = ["rfc5666-error-arm", "msgp-above", "v2-00", "nonsense"];

fn options(rng: &mut Rng, args: &mut Vec<String>, common: &[(&str, &[&str])], flags: &[&str]) {
    for _ in 0..rng.below(5) {
        if rng.chance(25) {
            args.push(rng.pick(flags).to_string());
        } else if rng.chance(8) {
            args.push(rng.pick(&JUNK).to_string());
        } else {
            let (name, values) = common[rng.below(common.len())];
            args.push(name.to_string());
            args.push(rng.pick(values).to_string());
        }
    }
}

/// The golden vectors' texts: real messages to mutate.
fn seeds() -> Vec<String> {
    fn walk(d: &Path, out: &mut Vec<String>) {
        for e in std::fs::read_dir(d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "vec") {
                out.push(std::fs::read_to_string(&p).unwrap());
            }
        }
    }
    let mut out = Vec::new();
    walk(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../vectors"), &mut out);
    out.sort();
    out
}

/// A golden vector with a few of its hex digits changed, lines dropped or repeated.
fn mutate(rng: &mut Rng, text: &str) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    for _ in 0..1 + rng.below(4) {
        let i = rng.below(lines.len());
        match rng.below(4) {
            0 => {
                let hexdigits: Vec<usize> =
                    lines[i].char_indices().filter(|(_, c)| c.is_ascii_hexdigit()).map(|(i, _)| i).collect();
                if !hexdigits.is_empty() {
                    let at = hexdigits[rng.below(hexdigits.len())];
                    let digit = b"0123456789abcdef"[rng.below(16)] as char;
                    lines[i].replace_range(at..at + 1, &digit.to_string());
                }
            }
            1 => {
                lines.remove(i);
                if lines.is_empty() {
                    lines.push(String::new());
                }
            }
            2 => {
                let l = lines[i].clone();
                lines.insert(i, l);
            }
            _ => lines[i] = "ffffffff 00000000 7fffffff 00000001".into(),
        }
    }
    lines.join("\n") + "\n"
}

/// One random invocation: the arguments and, for `decode -`, what standard input is.
fn invocation(rng: &mut Rng, dir: &Path, seeds: &[String]) -> (Vec<String>, Option<String>) {
    let mut a: Vec<String> = Vec::new();
    let mut stdin = None;
    let outputs: [(&str, &[&str]); 4] =
        [("--json", &PATHS), ("--junit", &PATHS), ("--pcap", &PATHS), ("--color", &["auto", "always", "never", "x"])];
    match rng.below(20) {
        0..=3 => {
            a.push("run".into());
            a.push(rng.pick(&FAST).into());
            if rng.chance(20) {
                a.push(rng.pick(&JUNK).into());
            }
            let mut opts: Vec<(&str, &[&str])> = outputs.to_vec();
            opts.extend([
                ("--timeout", &RUN_SECS[..]),
                ("--exclude", &FAST[..]),
                ("--fault", &FAULTS[..]),
                ("--peer", &ADDRS[..]),
                ("--expect", &["p1.json", "p2.json", "nofile", "afile"][..]),
            ]);
            options(rng, &mut a, &opts, &["--strict", "--quiet", "-q"]);
        }
        4..=5 => {
            a.push("serve".into());
            let mut opts: Vec<(&str, &[&str])> = outputs.to_vec();
            opts.extend([
                ("--grant", &NUMBERS[..]),
                ("--idle", &SERVE_SECS[..]),
                ("--max-time", &SERVE_SECS[..]),
                ("--listen", &ADDRS[..]),
                ("--expect", &["p1.json", "p2.json", "nofile"][..]),
            ]);
            options(rng, &mut a, &opts, &["--self-test", "--strict", "--quiet"]);
            if rng.chance(60) {
                a.push("--self-test".into());
            }
        }
        6..=8 => {
            a.push("list".into());
            if rng.chance(50) {
                a.push(rng.pick(&["credits", "client", "rfc8166/4", "nothing", "rfc8797", ""]).into());
            }
            options(rng, &mut a, &[("--color", &["never", "always"])], &["-v", "--json", "--groups", "--verbose"]);
        }
        9..=16 => {
            a.push("decode".into());
            match rng.below(4) {
                0 => {
                    a.push("-".into());
                    stdin = Some(
                        rng.pick(&["in.bin", "in.hex", "in.vec", "/dev/zero", "/dev/urandom", "/dev/null"]).into(),
                    );
                }
                1 => {
                    a.push("--file".into());
                    a.push(
                        rng.pick(&[
                            "in.bin",
                            "in.hex",
                            "in.vec",
                            "mutated.vec",
                            "mutated.vec",
                            "/dev/zero",
                            "nofile",
                            ".",
                            "/dev/null",
                        ])
                        .into(),
                    );
                }
                _ => {
                    let words = rng.below(40);
                    a.push(rng.hex(words));
                }
            }
            options(
                rng,
                &mut a,
                &[("--kind", &KINDS), ("--role", &["call", "reply", "x"]), ("--profile", &PROFILES)],
                &["--json"],
            );
        }
        17 => {
            a.extend(["vectors".into(), "verify".into()]);
            a.push(rng.pick(&["vecs", "nofile", "afile", "."]).into());
            if rng.chance(30) {
                a.push("-v".into());
            }
        }
        18 => {
            a.push("completions".into());
            a.push(rng.pick(&["bash", "zsh", "fish", "elvish", "powershell", "tcsh", ""]).into());
        }
        _ => {
            for _ in 0..rng.below(4) {
                a.push(rng.pick(&["man", "--help", "--version", "-h", "help", "run", "decode", "--color"]).into());
                if rng.chance(30) {
                    a.push(rng.pick(&JUNK).into());
                }
            }
        }
    }
    // The inputs the invocations refer to, new for each one.
    let n = rng.below(4096);
    std::fs::write(dir.join("in.bin"), rng.bytes(n)).unwrap();
    let words = rng.below(64);
    std::fs::write(dir.join("in.hex"), rng.hex(words)).unwrap();
    let words = rng.below(32);
    let vec_text = format!(
        "name: f\nkind: {}\n{}expect: ok\nhex:\n{}\n",
        rng.pick(&KINDS),
        if rng.chance(30) { format!("profile: {}\n", rng.pick(&PROFILES)) } else { String::new() },
        rng.hex(words)
    );
    std::fs::write(dir.join("in.vec"), &vec_text).unwrap();
    std::fs::write(dir.join("vecs/f.vec"), &vec_text).unwrap();
    let seed = &seeds[rng.below(seeds.len())];
    let mutated = mutate(rng, seed);
    std::fs::write(dir.join("mutated.vec"), &mutated).unwrap();
    std::fs::write(dir.join("vecs/m.vec"), &mutated).unwrap();
    let id = rng.pick(&FAST);
    std::fs::write(
        dir.join("p1.json"),
        format!(
            r#"{{"peer": "x", "divergences": [{{"id": "{id}", "outcome": "{}", "reason": "r"}}]}}"#,
            rng.pick(&["fail", "pass-lax", "unsupported", "pass"])
        ),
    )
    .unwrap();
    let n = rng.below(64);
    std::fs::write(dir.join("p2.json"), rng.bytes(n)).unwrap();
    (a, stdin)
}

const DOCUMENTED: [i32; 6] = [0, 1, 2, 3, 130, 143];

#[test]
fn random_command_lines_never_crash_hang_or_grow() {
    let seed: u64 = std::env::var("RPCRDMA_FUZZ_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(0x5eed_1313);
    let cases: usize = std::env::var("RPCRDMA_FUZZ_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(300);
    let dir = common::tmp("fuzz");
    std::fs::create_dir_all(dir.join("vecs")).unwrap();
    std::fs::create_dir_all(dir.join("out")).unwrap();
    std::fs::write(dir.join("afile"), "not a directory").unwrap();
    let mut rng = Rng(seed | 1);
    let seeds = seeds();
    assert!(!seeds.is_empty());
    let started = std::time::Instant::now();
    let mut seen = std::collections::BTreeMap::new();
    let mut peak = 0;
    for i in 0..cases {
        let (args, stdin) = invocation(&mut rng, &dir, &seeds);
        let child = Command::new(common::bin())
            .args(&args)
            .current_dir(&dir)
            .env("NO_COLOR", "1")
            .stdin(match &stdin {
                Some(p) => Stdio::from(std::fs::File::open(dir.join(p)).unwrap()),
                None => Stdio::null(),
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let f: Finished = common::wait(child, Duration::from_secs(30));
        let what = format!("case {i} (seed {seed}): {args:?} stdin {stdin:?}");
        common::assert_no_crash(&f, &what);
        assert!(f.max_rss_kib < 64 * 1024, "{what}: {} KiB", f.max_rss_kib);
        let code = match f.end {
            End::Exit(c) => c,
            other => panic!("{what}: {other:?}"),
        };
        assert!(DOCUMENTED.contains(&code), "{what}: exit {code}\n{}", f.stderr());
        peak = peak.max(f.max_rss_kib);
        *seen.entry(args.first().cloned().unwrap_or_default()).or_insert(0) += 1;
    }
    eprintln!("{cases} invocations in {:?}, peak RSS {peak} KiB, by subcommand {seen:?}", started.elapsed());
    for sub in ["run", "serve", "list", "decode", "vectors", "completions"] {
        assert!(seen.get(sub).copied().unwrap_or(0) > 0, "{sub} was never fuzzed: {seen:?}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
