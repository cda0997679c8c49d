//! The reference requester's workload served by observing reference responders, as the
//! client catalogue's tests and `serve --self-test` run it.

use std::time::Duration;

use super::{workload, RequesterFaults, RequesterOptions, WorkloadError};

/// Serves the workload to embedded reference responders configured as `base`, all observed
/// into one log: once per entry of `scenarios` (none: the responder plays no scenario), each
/// on a responder of its own, concurrently. The connections observed, and each run's error.
pub fn observed_workloads(
    base: &crate::responder::Config,
    scenarios: &[Option<crate::responder::Scenario>],
    options: &RequesterOptions,
    faults: &RequesterFaults,
) -> (Vec<crate::observe::ObservedConnection>, Vec<WorkloadError>) {
    observed_workloads_into(&crate::observe::Log::new(), base, scenarios, options, faults)
}

/// As [`observed_workloads`], observed into `log` (a fresh one: its whole contents are
/// returned), whose listener is told of every event as it happens.
pub fn observed_workloads_into(
    log: &std::sync::Arc<crate::observe::Log>,
    base: &crate::responder::Config,
    scenarios: &[Option<crate::responder::Scenario>],
    options: &RequesterOptions,
    faults: &RequesterFaults,
) -> (Vec<crate::observe::ObservedConnection>, Vec<WorkloadError>) {
    use crate::responder::{Config, Responder};
    use crate::transport::emulated::EmulatedConnector;
    let errors = std::thread::scope(|scope| {
        let runs: Vec<_> = scenarios
            .iter()
            .map(|s| {
                let config = Config { scenario: *s, observer: Some(log.clone()), ..base.clone() };
                scope
                    .spawn(move || workload(&mut EmulatedConnector::new(Responder::reference(config)), options, faults))
            })
            .collect();
        runs.into_iter().filter_map(|r| r.join().ok().and_then(Result::err)).collect()
    });
    // Let the responders record the ends of their connections.
    std::thread::sleep(Duration::from_millis(50));
    (log.snapshot(), errors)
}
