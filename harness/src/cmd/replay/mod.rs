//! `rpcrdma-harness replay FILE`: runs a fuzz reproducer again (against the embedded reference
//! responder, or `--peer`) and says whether its finding reproduces: exit 1 when it does, 0
//! when it does not. A `serve --fuzz` finding is replayed toward a requester (`--listen`,
//! [`client`]).

use std::path::PathBuf;

use clap::Args;
use rpcrdma_conformance::engine::RunOptions;
use rpcrdma_conformance::fuzz::{self, Reproducer, Timing};

use crate::client_finding::{ClientFinding, FORMAT};
use crate::exit::{usage, Ending, HarnessError, Outcome};
use crate::fuzz_target::{default_timeout, seconds, target, WatchArgs};

pub mod client;
mod reverse;

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
    pub watch: WatchArgs,
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
    // The file's own profile choices apply, then these.
    #[command(flatten)]
    pub wire: crate::wire_profile::WireArgs,
}

pub fn run(args: ReplayArgs) -> Outcome {
    let reply = seconds(default_timeout(args.timeout, args.peer.is_some()), "--timeout")?;
    args.wire.profile()?;
    let text =
        crate::input::read_text(&args.file, "reproducer", crate::input::MAX_REPRODUCER).map_err(HarnessError::Usage)?;
    let value: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| usage(format!("{}: not JSON: {e}", args.file.display())))?;
    // The spec choices the file was found under (`"profile"`), then the command line's.
    let recorded = crate::wire_profile::recorded(&value).map_err(|e| usage(format!("{}: {e}", args.file.display())))?;
    let wire = args.wire.over(&recorded)?;
    if value.get("format").and_then(|f| f.as_str()) == Some(FORMAT) {
        let Some(listen) = &args.listen else {
            return Err(usage(format!(
                "{} is a `serve --fuzz` finding: replay it toward a requester with --listen ADDR",
                args.file.display()
            )));
        };
        let f = ClientFinding::from_json(&value)
            .map_err(|e| usage(format!("{}: not a serve --fuzz finding: {e}", args.file.display())))?;
        return client::run(
            &args.file,
            f,
            listen,
            args.watch.kernel_log.as_deref(),
            std::time::Duration::from_secs(args.idle),
            std::time::Duration::from_secs(args.max_time),
            wire,
        );
    }
    if value.get("format").and_then(|f| f.as_str()) == Some(fuzz::reverse::FORMAT) && args.listen.is_none() {
        let f = fuzz::reverse::Finding::from_json(&value)
            .map_err(|e| usage(format!("{}: not a fuzz --reverse finding: {e}", args.file.display())))?;
        let mut target = target(args.peer.as_deref(), &args.fault, &args.watch, wire)?;
        return reverse::run(&args.file, &f, target.as_mut(), reply, wire);
    }
    if args.listen.is_some() {
        return Err(usage(format!(
            "--listen replays a `serve --fuzz` finding; {} is a fuzz reproducer (use --peer)",
            args.file.display()
        )));
    }
    let repro =
        Reproducer::from_json(&value).map_err(|e| usage(format!("{}: not a reproducer: {e}", args.file.display())))?;
    let repro = Reproducer { profile: wire, ..repro };
    let mut target = target(args.peer.as_deref(), &args.fault, &args.watch, wire)?;
    // The peer must be up before replaying (a crash reproducer would otherwise "reproduce"
    // against a peer that was never there).
    let probe = RunOptions { timeout: reply * 2, ..repro.options() };
    if fuzz::execute::run(target.connector(), &probe, Timing { reply }, &[]).connect_failed.is_some() {
        return Err(HarnessError::Unreachable(format!("cannot reach {}", target.describe())));
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
        "replaying {} ({} message(s), found by seed {} against {}) against {}{}",
        args.file.display(),
        repro.messages.len(),
        repro.seed,
        repro.peer,
        target.describe(),
        crate::wire_profile::clause(&wire)
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
        Ok(Ending::Failed)
    } else {
        let now = got.map_or("no finding".to_string(), |k| k.to_string());
        println!("NOT REPRODUCED: expected {}, got {now}", repro.kind);
        Ok(Ending::AsExpected)
    }
}
