//! A requester whose conversation with `serve` did not progress: it reconnected without end, or
//! sent one call again and again. Seen over soft-iWARP, where a Send With Invalidate the
//! client's fabric refused made the Linux client reconnect and retransmit about 1400 times in
//! two minutes while the passive checks, judging what little it sent, passed. Whoever is at
//! fault, checks judged on such a conversation are not a verdict on a working requester: they
//! fail, with the storm named. A scenario's storm fails that scenario's checks; a storm on the
//! plain responder fails the passive checks.

use std::collections::HashMap;

use rpcrdma_conformance::catalogue::client::ClientCheck;
use rpcrdma_conformance::engine::CheckResult;
use rpcrdma_peers::observe::{Observed, ObservedConnection};

/// More connections than this from one group (a scenario's port, or the plain one) is a storm:
/// the Linux client's whole workload opens fewer than twenty.
pub const MAX_CONNECTIONS: usize = 50;
/// More sends of one rdma_xid than this is a storm (a retransmission loop): a soft mount with
/// `retrans=2` sends a call three times.
pub const MAX_SENDS_OF_ONE_CALL: usize = 10;

/// Fails the checks whose conversation was a storm (`checks[i]` judged `results[i]`).
pub fn judge(checks: &[&'static ClientCheck], observed: &[ObservedConnection], results: &mut [CheckResult]) {
    let mut groups: HashMap<Option<&'static str>, Vec<&ObservedConnection>> = HashMap::new();
    for c in observed {
        groups.entry(c.scenario).or_default().push(c);
    }
    let storms: HashMap<Option<&'static str>, String> =
        groups.iter().filter_map(|(g, conns)| storm(conns).map(|s| (*g, s))).collect();
    for (check, result) in checks.iter().zip(results.iter_mut()) {
        let group = check.scenario.map(|s| s.name());
        let Some(what) = storms.get(&group) else { continue };
        let on = group.map_or("the plain responder".to_string(), |g| format!("scenario {g}"));
        result.fail_beside(&format!("the conversation with {on} did not progress: {what}"));
    }
}

/// What makes a group's connections a storm, if anything.
fn storm(conns: &[&ObservedConnection]) -> Option<String> {
    let mut sends: HashMap<u32, usize> = HashMap::new();
    for c in conns {
        for (_, e) in &c.events {
            if let Observed::FromRequester(m) = e {
                if let Some(x) = m.get(..4) {
                    *sends.entry(u32::from_be_bytes([x[0], x[1], x[2], x[3]])).or_default() += 1;
                }
            }
        }
    }
    let worst = sends.iter().max_by_key(|&(x, n)| (*n, std::cmp::Reverse(*x)));
    if conns.len() > MAX_CONNECTIONS {
        return Some(format!("{} connections (more than {MAX_CONNECTIONS}: a reconnect storm)", conns.len()));
    }
    match worst {
        Some((x, &n)) if n > MAX_SENDS_OF_ONE_CALL => Some(format!(
            "the call {x:#010x} sent {n} times (more than {MAX_SENDS_OF_ONE_CALL}: retransmitted without end)"
        )),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rpcrdma_conformance::engine::Outcome;
    use std::time::Duration;

    fn conn(scenario: Option<&'static str>, xids: &[u32]) -> ObservedConnection {
        let events = xids
            .iter()
            .map(|x| (Duration::ZERO, Observed::FromRequester([x.to_be_bytes(), [0, 0, 0, 1]].concat())))
            .collect();
        ObservedConnection { scenario, events, ..ObservedConnection::default() }
    }

    #[test]
    fn reconnects_and_retransmissions_beyond_the_bounds_are_storms() {
        // 50 connections, each with a call of its own, and one call sent 10 times over five.
        let calm: Vec<ObservedConnection> = (0..MAX_CONNECTIONS)
            .map(|i| conn(None, &if i < 5 { vec![7, 7, 1000] } else { vec![1000 + i as u32] }))
            .collect();
        assert_eq!(storm(&calm.iter().collect::<Vec<_>>()), None);
        let many: Vec<ObservedConnection> = (0..=MAX_CONNECTIONS).map(|i| conn(None, &[i as u32])).collect();
        assert_eq!(
            storm(&many.iter().collect::<Vec<_>>()).as_deref(),
            Some("51 connections (more than 50: a reconnect storm)")
        );
        let again = [conn(None, &[5; 11]), conn(None, &[6; 3])];
        assert_eq!(
            storm(&again.iter().collect::<Vec<_>>()).as_deref(),
            Some("the call 0x00000005 sent 11 times (more than 10: retransmitted without end)")
        );
    }

    #[test]
    fn a_storm_fails_the_checks_of_its_group_only() {
        let checks: Vec<&'static ClientCheck> = rpcrdma_conformance::catalogue::client::all().collect();
        let passive = checks.iter().position(|c| c.scenario.is_none()).expect("a passive check");
        let scenario = checks.iter().position(|c| c.scenario.is_some()).expect("a scenario check");
        let pass =
            |c: &'static ClientCheck| CheckResult { outcome: Outcome::Pass, ..CheckResult::skipped(&c.info, "") };
        let mut results: Vec<CheckResult> = checks.iter().map(|c| pass(c)).collect();
        let storm_on_plain: Vec<ObservedConnection> = (0..=MAX_CONNECTIONS).map(|i| conn(None, &[i as u32])).collect();
        judge(&checks, &storm_on_plain, &mut results);
        assert_eq!(results[passive].outcome, Outcome::Fail);
        assert!(results[passive].actual.to_string().contains("plain responder did not progress: 51 connections"));
        assert_eq!(results[scenario].outcome, Outcome::Pass, "another group's storm");
    }
}
