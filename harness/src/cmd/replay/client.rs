//! `replay FINDING --listen ADDR`: a `serve --fuzz` finding (a mutated reply after which the
//! requester's kernel logged a bug report) replayed toward a real requester. The reference
//! responder serves on ADDR; its reply to the first inline call of the finding's RPC procedure
//! is the recorded mutated reply (its XIDs made the new call's), once; the requester's kernel
//! log (`--kernel-log`, `/dev/kmsg` on its machine) says whether the same report comes back.
//! Mount and use the export from the requester while it runs.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use rpcrdma_conformance::fuzz::kernel_log::report_signatures;
use rpcrdma_peers::responder::RecordedReply;

use crate::client_finding::ClientFinding;
use crate::exit::{usage, Ending, Outcome};
use crate::kernel_log::KernelLog;

/// Replays `finding` toward requesters on `listen`, serving under `profile` (the finding's
/// choices and the command line's); exit 1 when its report comes back.
pub fn run(
    file: &Path,
    finding: ClientFinding,
    listen: &str,
    kernel_log: Option<&Path>,
    idle: Duration,
    max_time: Duration,
    profile: rpcrdma_codec::Profile,
) -> Outcome {
    let Some(want) = finding.kind.strip_prefix("kernel-report: ").map(str::to_string) else {
        return Err(usage(format!(
            "{}: a finding of kind {:?} cannot be replayed toward a requester",
            file.display(),
            finding.kind
        )));
    };
    let Some(log_path) = kernel_log else {
        return Err(usage(
            "the finding is a report of the requester's kernel: give --kernel-log (/dev/kmsg on its machine)",
        ));
    };
    let log = KernelLog::follow(log_path).map_err(|e| usage(format!("--kernel-log {}: {e}", log_path.display())))?;
    let recorded = match finding.reverse_call {
        Some((n, xid)) => RecordedReply::reverse(n, xid, finding.call),
        None => RecordedReply::new(&finding.call, finding.reply, &profile),
    };
    let recorded = Arc::new(recorded.map_err(|e| usage(format!("{}: {e}", file.display())))?);
    let (prog, vers, proc_) = recorded.procedure;
    let what = match recorded.reverse_call {
        Some(n) => {
            format!("reverse-direction call {n} on a connection (an NFSv4.1 callback; mount with vers=4.1 or 4.2)")
        }
        None => format!("the reply to the first call of RPC program {prog} version {vers} procedure {proc_}"),
    };
    println!(
        "replaying {} ({}) toward requesters on {listen}: {what}, mutated ({})",
        file.display(),
        finding.kind,
        finding.how
    );
    let options = crate::peer::ServeOptions {
        grant: 32,
        scenarios: &[],
        replacing: crate::peer::Replacing::Recorded(recorded.clone()),
        idle,
        max_time,
        profile,
        interrupt: &crate::signals::INTERRUPT,
        listener: None,
    };
    let served = crate::peer::serve(listen, options);
    let connections = served?.0.len();
    let lines = log.drain();
    let seen: Vec<String> = report_signatures(&lines).into_iter().map(|(_, s)| s).collect();
    if !recorded.played() {
        println!("NOT REPRODUCED: {what} was never sent ({connections} connection(s)); run the requester's workload while replay serves");
        return Ok(Ending::AsExpected);
    }
    if seen.contains(&want) {
        for l in &lines {
            println!("kernel: {l}");
        }
        println!("REPRODUCED: {}", finding.kind);
        Ok(Ending::Failed)
    } else {
        let got = if seen.is_empty() { "no kernel report".to_string() } else { seen.join(", ") };
        println!("NOT REPRODUCED: expected {}, got {got} ({connections} connection(s))", finding.kind);
        Ok(Ending::AsExpected)
    }
}
