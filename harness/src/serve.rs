//! `rpcrdma-harness serve`: act as the responder and judge the requester that connects (the
//! client catalogue): its private data, its procedures, its chunks, its respect for the
//! credit grant and the inline threshold.

use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use clap::Args;
use rpcrdma_conformance::catalogue::client::judge_all;
use rpcrdma_conformance::expectations::judge;
use rpcrdma_peers::observe::{Log, ObservedConnection};
use rpcrdma_peers::requester::{workload, RequesterFaults, RequesterOptions};
use rpcrdma_peers::responder::{Config, Responder};
use rpcrdma_peers::transport::emulated::EmulatedConnector;

use crate::report::{self, Run};
use crate::run::{load_profile, EXIT_FAILED, EXIT_OK, EXIT_USAGE};

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Listen for requesters over RDMA verbs on ADDR[:PORT] (default port 20049).
    #[arg(long, value_name = "ADDR[:PORT]", conflicts_with = "self_test")]
    listen: Option<String>,
    /// Judge the embedded reference requester over the emulated transport instead.
    #[arg(long)]
    self_test: bool,
    /// Credits granted in every reply (1 tests requesters at the smallest window).
    #[arg(long, default_value_t = 32)]
    grant: u32,
    /// Stop when no requester has been connected for this many seconds.
    #[arg(long, value_name = "SECS", default_value_t = 5.0)]
    idle: f64,
    /// Stop after this many seconds in any case.
    #[arg(long, value_name = "SECS", default_value_t = 600.0)]
    max_time: f64,
    /// Count SHOULD and MAY deviations as failures.
    #[arg(long)]
    strict: bool,
    /// A reviewed expectation profile (JSON) for this requester.
    #[arg(long, value_name = "PROFILE")]
    expect: Option<PathBuf>,
    #[command(flatten)]
    outputs: report::Outputs,
}

fn self_test(grant: u32) -> Vec<ObservedConnection> {
    let log = Log::new();
    let config = Config {
        credits: grant,
        receive_window: Some(grant.max(64)),
        handle_delay: Duration::from_millis(20),
        observer: Some(log.clone()),
        ..Config::default()
    };
    let mut conn = EmulatedConnector::new(Responder::reference(config));
    if let Err(e) = workload(&mut conn, &RequesterOptions::default(), &RequesterFaults::default()) {
        eprintln!("note: the reference requester stopped early: {e}");
    }
    std::thread::sleep(Duration::from_millis(50));
    log.snapshot()
}

pub fn run(args: ServeArgs) -> i32 {
    if args.grant == 0 {
        eprintln!("error: --grant must be at least 1 (RFC 8166 3.3.1: a zero grant deadlocks)");
        return EXIT_USAGE;
    }
    let profile = match load_profile(args.expect.as_deref()) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let started = Instant::now();
    let started_unix = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let (observed, peer, transport) = if args.self_test {
        (self_test(args.grant), "embedded reference requester".to_string(), "emulated".to_string())
    } else if let Some(addr) = &args.listen {
        match crate::peer::serve(
            addr,
            args.grant,
            Duration::from_secs_f64(args.idle),
            Duration::from_secs_f64(args.max_time),
        ) {
            Ok((obs, desc)) => (obs, format!("requesters on {addr}"), desc),
            Err(crate::peer::PeerError::Usage(e)) | Err(crate::peer::PeerError::Environment(e)) => {
                eprintln!("error: {e}");
                return EXIT_USAGE;
            }
        }
    } else {
        eprintln!("error: give --listen ADDR[:PORT] or --self-test");
        return EXIT_USAGE;
    };
    println!(
        "rpcrdma-harness {} serving {peer}: {} connection(s), {} message(s) observed",
        env!("CARGO_PKG_VERSION"),
        observed.len(),
        observed.iter().map(|c| c.events.len()).sum::<usize>()
    );
    let results = judge_all(&observed);
    let judged: Vec<_> = results.iter().map(|r| judge(r, args.strict, profile.as_ref())).collect();
    for (r, j) in results.iter().zip(&judged) {
        println!("{}", report::text::line(r, j));
        if j.status.is_failure() {
            print!("{}", report::text::details(r, j));
        }
    }
    let run = Run {
        peer,
        transport,
        strict: args.strict,
        expectations: profile.as_ref().map(|p| p.peer.clone()),
        interrupted: false,
        started_unix,
        duration: started.elapsed(),
        results: &results,
        judged: &judged,
    };
    let wrote = report::write_files(&run, &args.outputs);
    let totals = run.totals();
    println!("{}", report::closing_line(totals));
    if !wrote {
        EXIT_USAGE
    } else if totals.failed > 0 {
        EXIT_FAILED
    } else {
        EXIT_OK
    }
}
