//! A transport that cannot see Send With Invalidate (rdma-core's siw provider reports every
//! receive as a plain Send): the checks that rest on seeing it are unsupported there, never
//! passed on a plain Send they cannot tell apart, and never failed.

use std::time::{Duration, Instant};

use rpcrdma_conformance::catalogue;
use rpcrdma_conformance::engine::{run_check, Check, Outcome, RunOptions};
use rpcrdma_peers::responder::{Config, Faults, Responder};
use rpcrdma_peers::transport::emulated::EmulatedConnector;
use rpcrdma_peers::transport::{
    Access, Connection, Connector, Event, Region, RemoteAccess, Result as TResult, WcStatus,
};

/// Like siw through rdma-core: every receive arrives as a plain Send.
struct Unseeing<C>(C);

struct UnseeingConnection(Box<dyn Connection>);

impl<C: Connector> Connector for Unseeing<C> {
    fn connect(&mut self, private_data: &[u8], deadline: Instant) -> TResult<Box<dyn Connection>> {
        Ok(Box::new(UnseeingConnection(self.0.connect(private_data, deadline)?)))
    }
    fn describe(&self) -> String {
        format!("{} (blind to Send With Invalidate)", self.0.describe())
    }
}

impl Connection for UnseeingConnection {
    fn peer_private_data(&self) -> &[u8] {
        self.0.peer_private_data()
    }
    fn post_recv(&mut self, size: usize, count: usize) -> TResult<()> {
        self.0.post_recv(size, count)
    }
    fn send(&mut self, msg: &[u8]) -> TResult<()> {
        self.0.send(msg)
    }
    fn send_with_invalidate(&mut self, msg: &[u8], handle: u32) -> TResult<()> {
        self.0.send_with_invalidate(msg, handle)
    }
    fn register(&mut self, length: u32, access: Access) -> TResult<Region> {
        self.0.register(length, access)
    }
    fn write_local(&mut self, region: &Region, at: u32, data: &[u8]) -> TResult<()> {
        self.0.write_local(region, at, data)
    }
    fn read_local(&self, region: &Region) -> TResult<Vec<u8>> {
        self.0.read_local(region)
    }
    fn accesses(&self, region: &Region) -> TResult<Vec<RemoteAccess>> {
        self.0.accesses(region)
    }
    fn observes_invalidation(&self) -> bool {
        false
    }
    fn is_valid(&self, region: &Region) -> bool {
        self.0.is_valid(region)
    }
    fn deregister(&mut self, region: &Region) -> TResult<()> {
        self.0.deregister(region)
    }
    fn rdma_read(&mut self, handle: u32, offset: u64, length: u32, deadline: Instant) -> TResult<Vec<u8>> {
        self.0.rdma_read(handle, offset, length, deadline)
    }
    fn rdma_write(&mut self, handle: u32, offset: u64, data: &[u8], deadline: Instant) -> TResult<()> {
        self.0.rdma_write(handle, offset, data, deadline)
    }
    fn poll(&mut self, deadline: Instant) -> TResult<Event> {
        match self.0.poll(deadline)? {
            Event::Recv { status: WcStatus::Success, data, .. } => {
                Ok(Event::Recv { status: WcStatus::Success, data, invalidated: None })
            }
            e => Ok(e),
        }
    }
    fn disconnect(&mut self) {
        self.0.disconnect()
    }
    fn is_connected(&self) -> bool {
        self.0.is_connected()
    }
}

fn responder(faults: Faults) -> EmulatedConnector<Responder> {
    EmulatedConnector::new(Responder::reference(Config { faults, ..Config::default() }))
}

fn options() -> RunOptions {
    RunOptions { timeout: Duration::from_secs(2), silence: Duration::from_millis(150), ..RunOptions::default() }
}

fn check(id: &str) -> &'static Check {
    catalogue::all().into_iter().find(|c| c.info.id == id).unwrap_or_else(|| panic!("no check {id}"))
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
        let unseen = run_check(check(id), &mut Unseeing(responder(Faults::default())), &options());
        assert_eq!(unseen.outcome, Outcome::Unsupported, "{id} unseeing: {}", unseen.actual);
    }
}

#[test]
fn a_responder_that_invalidates_wrongly_fails_only_where_that_is_seen() {
    let faults = Faults { invalidate_without_r: true, ..Faults::default() };
    let id = "rfc8797/4.1/no-invalidate-without-r";
    let seen = run_check(check(id), &mut responder(faults.clone()), &options());
    assert_eq!(seen.outcome, Outcome::Fail, "{}", seen.actual);
    let unseen = run_check(check(id), &mut Unseeing(responder(faults)), &options());
    assert_eq!(unseen.outcome, Outcome::Unsupported, "{}", unseen.actual);
}

#[test]
fn where_r_cannot_be_seen_the_sizes_can_still_fail_a_private_data_check_but_not_pass_it() {
    let id = "rfc8797/5.1/absent-as-zero-fields";
    let unseen = run_check(check(id), &mut Unseeing(responder(Faults::default())), &options());
    assert_eq!(unseen.outcome, Outcome::Unsupported, "{}", unseen.actual);
    // A responder that assumes a large receive size without private data sends over 1024
    // bytes: seen on any transport.
    let faults = Faults { assume_large_peer_receive: true, ..Faults::default() };
    let unseen = run_check(check(id), &mut Unseeing(responder(faults)), &options());
    assert_eq!(unseen.outcome, Outcome::Fail, "{}", unseen.actual);
    // One that takes R as set without private data is seen only where invalidation is.
    let faults = Faults { assume_peer_remote_invalidation: true, ..Faults::default() };
    let unseen = run_check(check(id), &mut Unseeing(responder(faults)), &options());
    assert_eq!(unseen.outcome, Outcome::Unsupported, "{}", unseen.actual);
}
