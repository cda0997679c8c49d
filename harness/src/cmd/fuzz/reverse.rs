//! `fuzz --reverse`: mutated reverse-direction replies toward a server (RFC 8167 5.2), each
//! case an NFSv4.1 session whose back channel rides a fresh connection
//! ([`rpcrdma_conformance::fuzz::reverse`]); findings into `--out`, a text report and `--json`.
//! A server that makes no reverse-direction call (NFS-Ganesha: no RDMA back channel) is
//! unsupported and the run judged nothing.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rpcrdma_conformance::engine::RunOptions;
use rpcrdma_conformance::fuzz::reverse::{self, Config, Ended, Finding};

use super::{prelude, write_whole, FuzzArgs, Prelude};
use crate::exit::{usage, Ending, HarnessError, Outcome};
use crate::fuzz_target::{finding_name, save_finding};

fn save(dir: &Path, f: &Finding, n: usize) -> Result<PathBuf, String> {
    let name = finding_name(n + 1, &format!("reverse-{}", f.kind.class.name()), &f.kind.detail);
    save_finding(dir, &name, &f.to_json())
}

pub fn run(args: FuzzArgs) -> Outcome {
    if args.watch.peer_pid_file.is_some() {
        return Err(usage("--reverse watches no peer memory (--peer-pid-file): each case is one connection"));
    }
    let Prelude { json_to_stdout, duration, reply, expected, version, wire, mut target, seed } = prelude(&args)?;
    // A recall needs the server to answer a few COMPOUNDs and to call us within the timeout.
    let timeout = reply.max(Duration::from_secs(2));
    let config = Config {
        seed,
        duration,
        max_cases: args.max_cases,
        options: RunOptions {
            timeout,
            silence: reply.max(Duration::from_millis(300)),
            profile: wire,
            ..RunOptions::default()
        },
        reply_wait: reply,
        tool_version: env!("CARGO_PKG_VERSION").into(),
        stop_after_findings: None,
    };
    crate::textln!(
        "rpcrdma-harness {} fuzzing reverse-direction replies toward {} (seed {seed}{})",
        env!("CARGO_PKG_VERSION"),
        target.describe(),
        crate::wire_profile::clause(&wire)
    );
    let mut files: Vec<Option<PathBuf>> = Vec::new();
    let mut write_failed = false;
    let report =
        reverse::run(target.as_mut(), &config, &crate::signals::INTERRUPT, |f| match save(&args.out, f, files.len()) {
            Ok(p) => {
                crate::textln!("finding {}: {} (case {}) -> {}", files.len() + 1, f.kind, f.case, p.display());
                files.push(Some(p));
            }
            Err(e) => {
                eprintln!("error: {e}");
                write_failed = true;
                files.push(None);
            }
        });
    if report.ended == Ended::Unreachable {
        return Err(HarnessError::Unreachable(format!("cannot reach {}", report.peer)));
    }
    let known: Vec<Option<String>> = report
        .findings
        .iter()
        .map(|f| expected.iter().find(|k| k.kind == f.kind.to_string()).map(|k| k.reason.clone()))
        .collect();
    if let Some(line) = version.line() {
        crate::textln!("{line}");
    }
    let mut text = report.text();
    for (i, f) in report.findings.iter().enumerate() {
        if let Some(Some(p)) = files.get(i) {
            text += &format!("finding {} reproducer: {}\n", i + 1, p.display());
        }
        if let Some(Some(reason)) = known.get(i) {
            text += &format!("finding {} known (the profile lists {}): {reason}\n", i + 1, f.kind);
        }
    }
    if report.judged_nothing() {
        text += "nothing was judged: no reverse-direction call was answered\n";
    }
    crate::output::text_str(&text);
    if let Some(path) = &args.json {
        let mut value = report.to_json();
        value["tool"] = serde_json::json!(format!("rpcrdma-harness {}", env!("CARGO_PKG_VERSION")));
        value["wire_profile"] = serde_json::json!(crate::wire_profile::names(&wire));
        for (k, v) in version.json_fields() {
            value[k] = v;
        }
        for (i, f) in value["findings"].as_array_mut().into_iter().flatten().enumerate() {
            f["known"] = serde_json::json!(known.get(i).cloned().flatten());
            f["reproducer"] = serde_json::json!(files.get(i).cloned().flatten().map(|p| p.display().to_string()));
        }
        let t = serde_json::to_string_pretty(&value).expect("JSON values serialize") + "\n";
        if json_to_stdout {
            crate::output::stdout_str(&t);
        } else if let Err(e) = write_whole(path, &t) {
            eprintln!("error: {e}");
            write_failed = true;
        }
    }
    if write_failed && crate::signals::exit_code().is_none() {
        return Err(HarnessError::Unwritten);
    }
    // A run that judged nothing (unsupported) is not green, as `run`'s; nor is one whose peer
    // went down and stayed down, its findings listed or not (as the forward fuzzer's): the rest
    // of the budget went unfuzzed.
    Ok(Ending::judged(report.judged_nothing() || !known.iter().all(Option::is_some) || report.ended == Ended::PeerDown))
}
