//! Test support: a [`Connection`] that forwards every operation to another connection, except
//! those its [`Hooks`] bend. The transports the tests play (one blind to the peer's one-sided
//! operations like verbs, one that cannot see Send With Invalidate like siw, one that loses
//! the peer's reverse-direction calls) are each a few hooks over this one wrapper. A double
//! that needs to bend another operation adds a hook here.

use std::time::Instant;

use super::{Access, Connection, Connector, Event, Region, RemoteAccess, Result};

/// What a [`Forward`] connection bends; every hook forwards to `inner` unless overridden.
pub trait Hooks: Send + 'static {
    /// Posts a Send.
    fn send(&mut self, inner: &mut dyn Connection, msg: &[u8]) -> Result<()> {
        inner.send(msg)
    }

    /// Posts a Send With Invalidate.
    fn send_with_invalidate(&mut self, inner: &mut dyn Connection, msg: &[u8], handle: u32) -> Result<()> {
        inner.send_with_invalidate(msg, handle)
    }

    /// What the peer did to our region.
    fn accesses(&self, inner: &dyn Connection, region: &Region) -> Result<Vec<RemoteAccess>> {
        inner.accesses(region)
    }

    /// Whether a Send With Invalidate from the peer is reported as one.
    fn observes_invalidation(&self, inner: &dyn Connection) -> bool {
        inner.observes_invalidation()
    }

    /// The next event.
    fn poll(&mut self, inner: &mut dyn Connection, deadline: Instant) -> Result<Event> {
        inner.poll(deadline)
    }
}

/// `inner`, bent by `hooks`.
pub struct Forward<H> {
    inner: Box<dyn Connection>,
    hooks: H,
}

impl<H> std::fmt::Debug for Forward<H> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Forward").finish_non_exhaustive()
    }
}

impl<H: Hooks> Forward<H> {
    /// `inner` bent by `hooks`, boxed as the connectors return it.
    pub fn boxed(inner: Box<dyn Connection>, hooks: H) -> Box<dyn Connection> {
        Box::new(Forward { inner, hooks })
    }
}

/// A connector whose every connection is `inner`'s, bent by its own copy of `hooks`, at
/// `inner`'s ports too (a check that connects elsewhere, RFC 8267 6.3, meets the same bent
/// transport there).
pub struct BentConnector<C, H> {
    inner: C,
    hooks: H,
    describe: String,
}

impl<C: Connector, H: Hooks + Clone> BentConnector<C, H> {
    /// `inner` bent by `hooks`; `describe` is what [`Connector::describe`] says of it.
    pub fn new(inner: C, hooks: H, describe: String) -> Self {
        BentConnector { inner, hooks, describe }
    }
}

impl<C: Connector, H: Hooks + Clone> Connector for BentConnector<C, H> {
    fn connect(&mut self, private_data: &[u8], deadline: Instant) -> Result<Box<dyn Connection>> {
        Ok(Forward::boxed(self.inner.connect(private_data, deadline)?, self.hooks.clone()))
    }

    fn describe(&self) -> String {
        self.describe.clone()
    }

    fn port(&self) -> Option<u16> {
        self.inner.port()
    }

    fn connect_at(&mut self, port: u16, private_data: &[u8], deadline: Instant) -> Option<Result<Box<dyn Connection>>> {
        let hooks = self.hooks.clone();
        Some(self.inner.connect_at(port, private_data, deadline)?.map(|c| Forward::boxed(c, hooks)))
    }
}

impl<H: Hooks> Connection for Forward<H> {
    fn peer_private_data(&self) -> &[u8] {
        self.inner.peer_private_data()
    }
    fn post_recv(&mut self, size: usize, count: usize) -> Result<()> {
        self.inner.post_recv(size, count)
    }
    fn send(&mut self, msg: &[u8]) -> Result<()> {
        self.hooks.send(&mut *self.inner, msg)
    }
    fn send_with_invalidate(&mut self, msg: &[u8], handle: u32) -> Result<()> {
        self.hooks.send_with_invalidate(&mut *self.inner, msg, handle)
    }
    fn register(&mut self, length: u32, access: Access) -> Result<Region> {
        self.inner.register(length, access)
    }
    fn write_local(&mut self, region: &Region, at: u32, data: &[u8]) -> Result<()> {
        self.inner.write_local(region, at, data)
    }
    fn read_local(&self, region: &Region) -> Result<Vec<u8>> {
        self.inner.read_local(region)
    }
    fn accesses(&self, region: &Region) -> Result<Vec<RemoteAccess>> {
        self.hooks.accesses(&*self.inner, region)
    }
    fn observes_invalidation(&self) -> bool {
        self.hooks.observes_invalidation(&*self.inner)
    }
    fn is_valid(&self, region: &Region) -> bool {
        self.inner.is_valid(region)
    }
    fn deregister(&mut self, region: &Region) -> Result<()> {
        self.inner.deregister(region)
    }
    fn rdma_read(&mut self, handle: u32, offset: u64, length: u32, deadline: Instant) -> Result<Vec<u8>> {
        self.inner.rdma_read(handle, offset, length, deadline)
    }
    fn rdma_write(&mut self, handle: u32, offset: u64, data: &[u8], deadline: Instant) -> Result<()> {
        self.inner.rdma_write(handle, offset, data, deadline)
    }
    fn poll(&mut self, deadline: Instant) -> Result<Event> {
        self.hooks.poll(&mut *self.inner, deadline)
    }
    fn disconnect(&mut self) {
        self.inner.disconnect()
    }
    fn is_connected(&self) -> bool {
        self.inner.is_connected()
    }
}

#[cfg(test)]
mod tests {
    use super::super::emulated::EmulatedConnector;
    use super::super::{Connector, TransportError};
    use super::*;
    use crate::responder::{Config, Responder};

    /// Counts Sends and hides one-sided operations; everything else passes through.
    struct Counting(usize);

    impl Hooks for Counting {
        fn send(&mut self, inner: &mut dyn Connection, msg: &[u8]) -> Result<()> {
            self.0 += 1;
            inner.send(msg)
        }
        fn accesses(&self, _: &dyn Connection, _: &Region) -> Result<Vec<RemoteAccess>> {
            Err(TransportError::Environment(format!("{} sends", self.0)))
        }
    }

    #[test]
    fn hooks_bend_and_the_rest_passes_through() {
        let deadline = Instant::now() + std::time::Duration::from_secs(2);
        let mut emulated = EmulatedConnector::new(Responder::reference(Config::default()));
        let mut c = Forward::boxed(emulated.connect(&[], deadline).unwrap(), Counting(0));
        let region = c.register(64, Access::READ).unwrap();
        c.write_local(&region, 0, b"abcd").unwrap();
        assert_eq!(&c.read_local(&region).unwrap()[..4], b"abcd", "register and write_local pass through");
        assert!(c.observes_invalidation(), "the emulated fabric's answer, not a hook's");
        c.post_recv(4096, 1).unwrap();
        c.send(&[0; 28]).unwrap();
        match c.accesses(&region) {
            Err(TransportError::Environment(e)) => assert_eq!(e, "1 sends"),
            other => panic!("the accesses hook was not used: {other:?}"),
        }
        assert!(c.is_connected());
        c.disconnect();
        assert!(!c.is_connected());
    }
}
