//! A transport that cannot see Send With Invalidate (rdma-core's siw provider reports every
//! receive as a plain Send): the checks that rest on seeing it are unsupported there, never
//! passed on a plain Send they cannot tell apart, and never failed.

use std::time::Instant;

use rpcrdma_conformance::engine::{run_check, Outcome};
use rpcrdma_peers::responder::Faults;
use rpcrdma_peers::transport::forward::{BentConnector, Hooks};
use rpcrdma_peers::transport::{Connection, Connector, Event, Result as TResult, WcStatus};

mod common;
use common::{check, options, responder};

/// Like siw through rdma-core: every receive arrives as a plain Send.
fn unseeing<C: Connector>(inner: C) -> BentConnector<C, UnseeingHooks> {
    let describe = format!("{} (blind to Send With Invalidate)", inner.describe());
    BentConnector::new(inner, UnseeingHooks, describe)
}

/// Reports every receive as a plain Send, and says it cannot tell.
#[derive(Clone)]
struct UnseeingHooks;

impl Hooks for UnseeingHooks {
    fn observes_invalidation(&self, _: &dyn Connection) -> bool {
        false
    }
    fn poll(&mut self, inner: &mut dyn Connection, deadline: Instant) -> TResult<Event> {
        match inner.poll(deadline)? {
            Event::Recv { status: WcStatus::Success, data, .. } => {
                Ok(Event::Recv { status: WcStatus::Success, data, invalidated: None })
            }
            e => Ok(e),
        }
    }
}

const RESTS_ON_INVALIDATION: [&str; 5] = [
    "rfc8797/4.1/invalidate-request-rkey",
    "rfc8797/4.1/no-invalidate-without-r",
    "rfc8797/5.2/private-data-at-offset",
    "rfc8797/4/reserved-bits-ignored",
    "rfc8797/4/reserved-bits-both-ways",
];

#[test]
fn checks_resting_on_send_with_invalidate_are_unsupported_where_it_cannot_be_seen() {
    for id in RESTS_ON_INVALIDATION {
        let seen = run_check(check(id), &mut responder(Faults::default()), &options());
        assert_eq!(seen.outcome, Outcome::Pass, "{id} seeing: {}", seen.actual);
        let unseen = run_check(check(id), &mut unseeing(responder(Faults::default())), &options());
        assert_eq!(unseen.outcome, Outcome::Unsupported, "{id} unseeing: {}", unseen.actual);
    }
}

#[test]
fn a_responder_that_invalidates_wrongly_fails_only_where_that_is_seen() {
    let faults = Faults { invalidate_without_r: true, ..Faults::default() };
    let id = "rfc8797/4.1/no-invalidate-without-r";
    let seen = run_check(check(id), &mut responder(faults.clone()), &options());
    assert_eq!(seen.outcome, Outcome::Fail, "{}", seen.actual);
    let unseen = run_check(check(id), &mut unseeing(responder(faults)), &options());
    assert_eq!(unseen.outcome, Outcome::Unsupported, "{}", unseen.actual);
}

#[test]
fn where_r_cannot_be_seen_the_sizes_can_still_fail_a_private_data_check_but_not_pass_it() {
    let id = "rfc8797/5.1/absent-as-zero-fields";
    let unseen = run_check(check(id), &mut unseeing(responder(Faults::default())), &options());
    assert_eq!(unseen.outcome, Outcome::Unsupported, "{}", unseen.actual);
    // A responder that assumes a large receive size without private data sends over 1024
    // bytes: seen on any transport.
    let faults = Faults { assume_large_peer_receive: true, ..Faults::default() };
    let unseen = run_check(check(id), &mut unseeing(responder(faults)), &options());
    assert_eq!(unseen.outcome, Outcome::Fail, "{}", unseen.actual);
    // One that takes R as set without private data is seen only where invalidation is.
    let faults = Faults { assume_peer_remote_invalidation: true, ..Faults::default() };
    let unseen = run_check(check(id), &mut unseeing(responder(faults)), &options());
    assert_eq!(unseen.outcome, Outcome::Unsupported, "{}", unseen.actual);
}
