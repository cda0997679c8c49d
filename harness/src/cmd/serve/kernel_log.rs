//! `serve --kernel-log FILE` judging the client catalogue (no `--fuzz`): the requester's kernel
//! log is followed while `serve` plays its scenarios, each line is attributed to the scenario
//! being played when it was logged (from that scenario's first connection until the next
//! scenario's), and joins the results of that scenario's checks. A bug report among them
//! (WARN, BUG, oops, KASAN, UBSAN, a hung task: `fuzz::kernel_log::report_signatures`) fails
//! the checks: a requester must survive any reply (RFC 8166 4.5).

use std::path::Path;
use std::time::{Duration, Instant};

use rpcrdma_conformance::catalogue::client::ClientCheck;
use rpcrdma_conformance::engine::CheckResult;
use rpcrdma_conformance::fuzz::kernel_log::report_signatures;
use rpcrdma_peers::observe::ObservedConnection;

use crate::kernel_log::KernelLog;

/// The requester's kernel log, followed from before the first connection.
pub struct ScenarioLog {
    log: KernelLog,
    /// Taken just before `serve` starts its observation log, whose clock the connections'
    /// events use (the two differ by the set-up of the listeners: milliseconds).
    started: Instant,
}

impl ScenarioLog {
    pub fn follow(path: &Path) -> std::io::Result<ScenarioLog> {
        Ok(ScenarioLog { log: KernelLog::follow(path)?, started: Instant::now() })
    }

    /// Adds each scenario's kernel lines to the results of its checks (`checks[i]` judged
    /// `results[i]`), failing those whose lines hold a bug report.
    pub fn attribute(
        &self,
        checks: &[&'static ClientCheck],
        observed: &[ObservedConnection],
        results: &mut [CheckResult],
    ) {
        let lines: Vec<(Duration, String)> =
            self.log.drain_timed().into_iter().map(|(at, l)| (at.saturating_duration_since(self.started), l)).collect();
        let windows = windows(observed);
        for (check, result) in checks.iter().zip(results.iter_mut()) {
            let Some(name) = check.scenario.map(|s| s.name()) else { continue };
            let Some(&(_, from, until)) = windows.iter().find(|w| w.0 == name) else { continue };
            let mine: Vec<String> = lines
                .iter()
                .filter(|(at, _)| *at >= from && until.is_none_or(|u| *at < u))
                .map(|(_, l)| l.clone())
                .collect();
            judge(result, &mine);
            result.peer.kernel_log = mine;
        }
    }
}

/// Each played scenario with when its first connection's first event came, and when the next
/// scenario's did (None for the last).
fn windows(observed: &[ObservedConnection]) -> Vec<(&'static str, Duration, Option<Duration>)> {
    let mut starts: Vec<(&'static str, Duration)> = Vec::new();
    for c in observed {
        let (Some(name), Some((at, _))) = (c.scenario, c.events.first()) else { continue };
        match starts.iter_mut().find(|(n, _)| *n == name) {
            Some((_, t)) => *t = (*t).min(*at),
            None => starts.push((name, *at)),
        }
    }
    starts.sort_by_key(|&(_, at)| at);
    (0..starts.len()).map(|i| (starts[i].0, starts[i].1, starts.get(i + 1).map(|s| s.1))).collect()
}

/// A bug report in the scenario's kernel lines fails the check, whatever the wire showed.
fn judge(result: &mut CheckResult, lines: &[String]) {
    let sigs: Vec<String> = report_signatures(lines).into_iter().map(|(_, s)| s).collect();
    if !sigs.is_empty() {
        result.fail_beside(&format!("the requester's kernel logged {}", sigs.join(", ")));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rpcrdma_conformance::engine::{Actual, Outcome};
    use rpcrdma_peers::observe::Observed;

    fn conn(scenario: Option<&'static str>, at_ms: u64) -> ObservedConnection {
        ObservedConnection {
            scenario,
            events: vec![(Duration::from_millis(at_ms), Observed::Closed)],
            ..ObservedConnection::default()
        }
    }

    #[test]
    fn each_scenario_runs_until_the_next_one_starts() {
        let observed =
            [conn(None, 5), conn(Some("b"), 900), conn(Some("a"), 100), conn(Some("a"), 400), conn(Some("b"), 950)];
        let w = windows(&observed);
        let ms = Duration::from_millis;
        assert_eq!(w, [("a", ms(100), Some(ms(900))), ("b", ms(900), None)]);
    }

    #[test]
    fn a_bug_report_fails_a_passing_check_and_keeps_a_failure_s_reason() {
        let info = &rpcrdma_conformance::catalogue::client::all().next().expect("a client check").info;
        let mut r = CheckResult::skipped(info, "x");
        let oops = [
            "BUG: kernel NULL pointer dereference, address: 0000000000000008".to_string(),
            "RIP: 0010:frwr_unmap_sync+0xb1/0x240 [rpcrdma]".to_string(),
        ];
        judge(&mut r, &oops);
        assert_eq!(r.outcome, Outcome::Skipped, "a check not run stays not run");
        r.outcome = Outcome::Pass;
        judge(&mut r, &["svcrdma: an ordinary line".to_string()]);
        assert_eq!(r.outcome, Outcome::Pass);
        judge(&mut r, &oops);
        assert_eq!(r.outcome, Outcome::Fail);
        assert_eq!(
            r.actual.to_string(),
            "the requester's kernel logged BUG: kernel NULL pointer dereference in frwr_unmap_sync"
        );
        r.actual = Actual::Note("the reply was used".into());
        judge(&mut r, &oops);
        assert!(r.actual.to_string().starts_with("the reply was used; the requester's kernel logged BUG"));
    }
}
