//! What the engine's tests against the embedded reference responder share: the responder
//! over the emulated transport, the run options, and a check by its id.

use std::time::Duration;

use rpcrdma_conformance::catalogue;
use rpcrdma_conformance::engine::{Check, RunOptions};
use rpcrdma_peers::responder::{Config, Faults, Responder};
use rpcrdma_peers::transport::emulated::EmulatedConnector;

/// The reference responder with `faults` switched on, over the emulated transport.
pub fn responder(faults: Faults) -> EmulatedConnector<Responder> {
    EmulatedConnector::new(Responder::reference(Config { faults, ..Config::default() }))
}

/// Short waits: the embedded responder answers at once.
pub fn options() -> RunOptions {
    RunOptions { timeout: Duration::from_secs(2), silence: Duration::from_millis(150), ..RunOptions::default() }
}

/// The catalogue's check `id` (a test naming a check that does not exist fails).
pub fn check(id: &str) -> &'static Check {
    catalogue::all().into_iter().find(|c| c.info.id == id).unwrap_or_else(|| panic!("no check {id}"))
}
