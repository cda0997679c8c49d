//! `rpcrdma-harness replay FILE`: runs a fuzz reproducer again (against the embedded reference
//! responder, or `--peer`) and says whether its finding reproduces: exit 1 when it does, 0
//! when it does not. A `serve --fuzz` finding is replayed toward a requester (`--listen`,
//! [`crate::replay_client`]).

use std::path::PathBuf;

use clap::Args;
use rpcrdma_conformance::engine::RunOptions;
use rpcrdma_conformance::fuzz::{self, Reproducer, Timing};

use crate::fuzz::{default_timeout, seconds, target};
use crate::run::{EXIT_FAILED, EXIT_OK, EXIT_UNREACHABLE, EXIT_USAGE};

#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// A reproducer file written by `fuzz`.
    pub file: PathBuf,
    /// Replay against a peer over verbs instead of the embedded reference responder.
    #[arg(long, value_name = "HOST[:PORT]")]
    pub peer: Option<String>,
    /// Seconds to wait for the liveness NULL's reply; 0.3 for the embedded responder, 1 for
    /// a peer by default.
    #[arg(long, value_name = "SECS")]
    pub timeout: Option<f64>,
    #[command(flatten)]
    pub watch: crate::fuzz::WatchArgs,
    /// Make the embedded responder misbehave (for testing the fuzzer itself).
    #[arg(long, value_name = "FAULT", hide = true)]
    pub fault: Vec<String>,
    /// A `serve --fuzz` finding: serve on this address, answer the first call of the finding's
    /// procedure with its recorded reply, and watch the requester's `--kernel-log`.
    #[arg(long, value_name = "ADDR[:PORT]", conflicts_with_all = ["peer", "fault"])]
    pub listen: Option<String>,
    /// With --listen: stop when no requester has been connected for this many seconds.
    #[arg(long, value_name = "SECS", default_value_t = 15, requires = "listen")]
    pub idle: u64,
    /// With --listen: stop after this many seconds in any case.
    #[arg(long, value_name = "SECS", default_value_t = 300, requires = "listen")]
    pub max_time: u64,
}

pub fn run(args: ReplayArgs) -> i32 {
    let reply = match seconds(default_timeout(args.timeout, args.peer.is_some()), "--timeout") {
        Ok(d) => d,
        Err(code) => return code,
    };
    let text = match crate::input::read_text(&args.file, "reproducer", crate::input::MAX_REPRODUCER) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_USAGE;
        }
    };
    let value: serde_json::Value = match serde_json::from_str(&text) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("error: {}: not JSON: {e}", args.file.display());
            return EXIT_USAGE;
        }
    };
    if value.get("format").and_then(|f| f.as_str()) == Some(crate::replay_client::FORMAT) {
        let Some(listen) = &args.listen else {
            eprintln!(
                "error: {} is a `serve --fuzz` finding: replay it toward a requester with --listen ADDR",
                args.file.display()
            );
            return EXIT_USAGE;
        };
        return match crate::replay_client::ClientFinding::from_json(&value) {
            Ok(f) => crate::replay_client::run(
                &args.file,
                f,
                listen,
                args.watch.kernel_log.as_deref(),
                std::time::Duration::from_secs(args.idle),
                std::time::Duration::from_secs(args.max_time),
            ),
            Err(e) => {
                eprintln!("error: {}: not a serve --fuzz finding: {e}", args.file.display());
                EXIT_USAGE
            }
        };
    }
    if args.listen.is_some() {
        eprintln!(
            "error: --listen replays a `serve --fuzz` finding; {} is a fuzz reproducer (use --peer)",
            args.file.display()
        );
        return EXIT_USAGE;
    }
    let repro = match Reproducer::from_json(&value) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {}: not a reproducer: {e}", args.file.display());
            return EXIT_USAGE;
        }
    };
    let mut target = match target(args.peer.as_deref(), &args.fault, &args.watch) {
        Ok(t) => t,
        Err(code) => return code,
    };
    // The peer must be up before replaying (a crash reproducer would otherwise "reproduce"
    // against a peer that was never there).
    let probe = RunOptions { timeout: reply * 2, ..repro.options() };
    if fuzz::execute::run(target.connector(), &probe, Timing { reply }, &[]).connect_failed.is_some() {
        eprintln!("error: cannot reach {}", target.describe());
        return EXIT_UNREACHABLE;
    }
    let (mut hit, mut got, obs) = fuzz::replay(target.as_mut(), &repro, Timing { reply });
    // A peer can die slowly: NFS-Ganesha logs a backtrace from its SIGSEGV handler while its
    // other threads still answer, so the liveness NULL sent right after the case is answered.
    // For a crash reproducer, look again once the peer had time to die.
    let mut late = false;
    if !hit && repro.kind.class == fuzz::Class::Crash && obs.liveness == fuzz::Liveness::Answered {
        std::thread::sleep(reply * 3);
        if fuzz::execute::run(target.connector(), &probe, Timing { reply }, &[]).connect_failed.is_some() {
            (hit, got, late) = (true, Some(repro.kind.clone()), true);
        }
    }
    println!(
        "replaying {} ({} message(s), found by seed {} against {}) against {}",
        args.file.display(),
        repro.messages.len(),
        repro.seed,
        repro.peer,
        target.describe()
    );
    println!("observed: {}", fuzz::describe(&obs));
    if late {
        println!(
            "then: a new connection refused {:.1} s later (the peer went down after answering)",
            (reply * 3).as_secs_f64()
        );
    }
    if hit {
        println!("REPRODUCED: {}", repro.kind);
        EXIT_FAILED
    } else {
        let now = got.map_or("no finding".to_string(), |k| k.to_string());
        println!("NOT REPRODUCED: expected {}, got {now}", repro.kind);
        EXIT_OK
    }
}
