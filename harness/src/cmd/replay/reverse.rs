//! `replay` of a `fuzz --reverse` finding: the case alone (a session with its back channel on
//! a fresh connection, the server's call awaited or provoked, the finding's mutated reply,
//! the liveness NULL) against the embedded reference responder or `--peer`; exit 1 when the
//! finding shows again, 0 when it does not.

use std::path::Path;
use std::time::Duration;

use rpcrdma_conformance::engine::RunOptions;
use rpcrdma_conformance::fuzz::reverse::{self, Finding};
use rpcrdma_conformance::fuzz::{self, Target};

use crate::exit::{Ending, HarnessError, Outcome};

pub fn run(
    file: &Path,
    f: &Finding,
    target: &mut dyn Target,
    reply: Duration,
    wire: rpcrdma_codec::Profile,
) -> Outcome {
    let options = RunOptions {
        timeout: reply.max(Duration::from_secs(2)),
        silence: reply.max(Duration::from_millis(300)),
        profile: wire,
        ..RunOptions::default()
    };
    // The peer must be up first: a crash finding would otherwise "reproduce" against a peer
    // that was never there.
    let probe = RunOptions { timeout: reply * 2, ..options.clone() };
    if fuzz::execute::run(target.connector(), &probe, fuzz::Timing { reply }, &[]).connect_failed.is_some() {
        return Err(HarnessError::Unreachable(format!("cannot reach {}", target.describe())));
    }
    let (hit, run) = reverse::replay(target, f, &options, reply);
    println!(
        "replaying {} (seed {} case {}: {}, found against {}) against {}{}",
        file.display(),
        f.seed,
        f.case,
        f.mutated.mutation.name(),
        f.peer,
        target.describe(),
        crate::wire_profile::clause(&wire)
    );
    println!("observed: {}", run.describe());
    if hit {
        println!("REPRODUCED: {}", f.kind);
        Ok(Ending::Failed)
    } else {
        let now = run.finding().map_or("no finding".to_string(), |k| k.to_string());
        println!("NOT REPRODUCED: expected {}, got {now}", f.kind);
        Ok(Ending::AsExpected)
    }
}
