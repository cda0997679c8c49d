//! One RC connection: its queue pair, buffers and registered regions, posting work requests,
//! and the [`Connection`] the engine drives.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rpcrdma_peers::transport::{Access, Connection, Event, Region, RemoteAccess, Result, TransportError, WcStatus};

use crate::{
    env_err, ffi, Fabric, CQ_ENTRIES, KIND_BIND, KIND_READ, KIND_RECV, KIND_SEND, KIND_SHIFT, KIND_WRITE, MAX_RECV_WR,
    MAX_SEND_WR, POOL_MAX,
};

pub(crate) struct RegionEntry {
    pub(crate) region: ffi::Region,
    pub(crate) length: u32,
    pub(crate) valid: bool,
}

/// One RC connection over verbs.
pub struct VerbsConnection {
    pub(crate) id: ffi::CmId,
    pub(crate) pd: Arc<ffi::Pd>,
    pub(crate) peer_private_data: Vec<u8>,
    /// Regions by the R_key the peer uses.
    pub(crate) regions: HashMap<u32, RegionEntry>,
    /// Regions whose window bind did not complete in time: kept until the connection goes.
    pub(crate) stuck: Vec<ffi::Region>,
    /// Registered buffers by size, smallest first: a Send or Receive takes the smallest that fits.
    pub(crate) pool: std::collections::BTreeMap<usize, Vec<ffi::Mr>>,
    pub(crate) pooled: usize,
    pub(crate) events: VecDeque<Event>,
    /// Completions of our RDMA Reads, Writes and window binds, by work-request id.
    pub(crate) done: HashMap<u64, (WcStatus, Option<ffi::Mr>)>,
    pub(crate) next_wr: u64,
    pub(crate) up: bool,
    /// Receives posted and not yet completed.
    pub(crate) recvs_posted: usize,
    /// The connection went down; [`Event::Disconnected`] is reported once the receives
    /// posted before that are taken off the CQ.
    pub(crate) down_pending: bool,
    pub(crate) told_down: bool,
    /// Whether regions are memory windows (None: not tried yet).
    pub(crate) windows: Option<bool>,
    /// `RPCRDMA_VERBS_TRACE=1`: every completion and CM event on stderr.
    pub(crate) trace: bool,
    pub(crate) fabric: Fabric,
    /// Completions taken off the CQ and not yet absorbed (kept for its allocation).
    pub(crate) polled: Vec<ffi::Completion>,
    /// Times [`VerbsConnection::take_messages`] found nothing ready and waited.
    pub(crate) waits: u64,
}

impl VerbsConnection {
    /// PD, completion channel, CQ and RC queue pair on a resolved (or requested) id.
    pub(crate) fn setup(mut id: ffi::CmId) -> Result<VerbsConnection> {
        let ctx = id
            .context()
            .ok_or_else(|| TransportError::Environment("the CM id has no device after resolution".into()))?;
        let (node, transport) = ctx.device_types();
        let pd = ffi::Pd::new(ctx).map_err(|e| env_err("ibv_alloc_pd", e))?;
        let cc = ffi::CompChannel::new(ctx).map_err(|e| env_err("ibv_create_comp_channel", e))?;
        let cq = ffi::Cq::new(ctx, CQ_ENTRIES, &cc).map_err(|e| env_err("ibv_create_cq", e))?;
        id.create_qp(&pd, &cq, ffi::QpCaps { max_send_wr: MAX_SEND_WR, max_recv_wr: MAX_RECV_WR })
            .map_err(|e| env_err("rdma_create_qp", e))?;
        let windows = std::env::var("RPCRDMA_VERBS_NO_MW").is_ok_and(|v| v == "1").then_some(false);
        Ok(VerbsConnection {
            id,
            pd,
            peer_private_data: Vec::new(),
            regions: HashMap::new(),
            stuck: Vec::new(),
            pool: std::collections::BTreeMap::new(),
            pooled: 0,
            events: VecDeque::new(),
            done: HashMap::new(),
            next_wr: 0,
            up: false,
            recvs_posted: 0,
            down_pending: false,
            told_down: false,
            windows,
            trace: std::env::var("RPCRDMA_VERBS_TRACE").is_ok_and(|v| v == "1"),
            fabric: Fabric::from_device(node, transport),
            polled: Vec::with_capacity(ffi::POLL_BATCH),
            waits: 0,
        })
    }

    /// The fabric of the connection's device: what its completions guarantee.
    pub fn fabric(&self) -> Fabric {
        self.fabric
    }

    pub(crate) fn wr_id(&mut self, kind: u64) -> u64 {
        self.next_wr += 1;
        (kind << KIND_SHIFT) | (self.next_wr & ((1 << KIND_SHIFT) - 1))
    }

    /// A local buffer of at least `len` bytes.
    pub(crate) fn buffer(&mut self, len: usize) -> Result<ffi::Mr> {
        if let Some((_, free)) = self.pool.range_mut(len..).find(|(_, v)| !v.is_empty()) {
            if let Some(mr) = free.pop() {
                self.pooled -= 1;
                return Ok(mr);
            }
        }
        ffi::Mr::new(&self.pd, len.max(64), ffi::IBV_ACCESS_LOCAL_WRITE).map_err(|e| env_err("ibv_reg_mr", e))
    }

    pub(crate) fn recycle(&mut self, buf: Option<ffi::Mr>) {
        if let Some(b) = buf {
            if self.pooled < POOL_MAX {
                self.pooled += 1;
                self.pool.entry(b.size()).or_default().push(b);
            }
        }
    }
}

impl VerbsConnection {
    pub(crate) fn post_error(&mut self, what: &str, e: std::io::Error) -> TransportError {
        if !self.up {
            TransportError::Disconnected
        } else {
            env_err(what, e)
        }
    }

    pub(crate) fn post_recv_inner(&mut self, size: usize, count: usize) -> Result<()> {
        let len = u32::try_from(size).map_err(|_| TransportError::Invalid("receive over 4 GiB".into()))?;
        for _ in 0..count {
            let buf = self.buffer(size)?;
            let wr = self.wr_id(KIND_RECV);
            if let Err(e) = self.id.post_recv(wr, buf, len) {
                return Err(self.post_error("ibv_post_recv", e));
            }
            self.recvs_posted += 1;
        }
        Ok(())
    }

    pub(crate) fn post_send(&mut self, msg: &[u8], invalidate: Option<u32>) -> Result<()> {
        if !self.up {
            return Err(TransportError::Disconnected);
        }
        let len = u32::try_from(msg.len()).map_err(|_| TransportError::Invalid("send over 4 GiB".into()))?;
        let mut buf = self.buffer(msg.len())?;
        buf.write(0, msg);
        let wr_id = self.wr_id(KIND_SEND);
        self.id
            .post_send(ffi::Post::Send { wr_id, buf, len, invalidate })
            .map_err(|e| self.post_error("ibv_post_send", e))
    }

    pub(crate) fn one_sided(
        &mut self,
        read: bool,
        handle: u32,
        offset: u64,
        data: &[u8],
        length: u32,
        deadline: Instant,
    ) -> Result<Vec<u8>> {
        if !self.up {
            return Err(TransportError::Disconnected);
        }
        let mut buf = self.buffer(length as usize)?;
        let wr_id;
        let post = if read {
            wr_id = self.wr_id(KIND_READ);
            ffi::Post::Read { wr_id, buf, len: length, rkey: handle, remote_addr: offset }
        } else {
            buf.write(0, data);
            wr_id = self.wr_id(KIND_WRITE);
            ffi::Post::Write { wr_id, buf, len: length, rkey: handle, remote_addr: offset }
        };
        self.id.post_send(post).map_err(|e| self.post_error("ibv_post_send", e))?;
        let (status, buf) = self.wait_done(wr_id, deadline)?;
        let out = match status {
            WcStatus::Success => {
                Ok(if read { buf.as_ref().map(|b| b.read(0, length as usize)).unwrap_or_default() } else { Vec::new() })
            }
            WcStatus::Flushed => Err(TransportError::Disconnected),
            s => Err(TransportError::Completion(s)),
        };
        self.recycle(buf);
        out
    }

    pub(crate) fn mw_access(access: Access) -> i32 {
        let mut a = 0;
        if access.remote_read {
            a |= ffi::IBV_ACCESS_REMOTE_READ;
        }
        if access.remote_write {
            a |= ffi::IBV_ACCESS_REMOTE_WRITE;
        }
        a
    }

    /// A region behind a type 2 memory window; Ok(None) when the provider has no windows.
    pub(crate) fn register_window(&mut self, length: u32, access: Access) -> Result<Option<(u32, ffi::Region)>> {
        let mw = match ffi::Mw::new(&self.pd) {
            Ok(mw) => mw,
            Err(_) => return Ok(None),
        };
        let mr = ffi::Mr::new(&self.pd, length as usize, ffi::IBV_ACCESS_LOCAL_WRITE | ffi::IBV_ACCESS_MW_BIND)
            .map_err(|e| env_err("ibv_reg_mr", e))?;
        // ibv_inc_rkey: a new key (low 8 bits) for every bind of a type 2 window.
        let old = mw.rkey();
        let rkey = (old & !0xff) | (old.wrapping_add(1) & 0xff);
        let region = ffi::Region { mw: Some(mw), mr };
        let wr_id = self.wr_id(KIND_BIND);
        self.id
            .post_send(ffi::Post::Bind { wr_id, region: &region, rkey, access: Self::mw_access(access) })
            .map_err(|e| self.post_error("ibv_post_send (bind window)", e))?;
        match self.wait_done(wr_id, Instant::now() + Duration::from_secs(5)) {
            Ok((WcStatus::Success, _)) => Ok(Some((rkey, region))),
            Ok((s, _)) => Err(TransportError::Environment(format!("binding a memory window failed: {}", s.name()))),
            Err(e) => {
                self.stuck.push(region);
                Err(e)
            }
        }
    }
}

impl Connection for VerbsConnection {
    fn peer_private_data(&self) -> &[u8] {
        &self.peer_private_data
    }

    fn post_recv(&mut self, size: usize, count: usize) -> Result<()> {
        if !self.up {
            return Err(TransportError::Disconnected);
        }
        self.post_recv_inner(size, count)
    }

    fn send(&mut self, msg: &[u8]) -> Result<()> {
        self.post_send(msg, None)
    }

    fn send_with_invalidate(&mut self, msg: &[u8], handle: u32) -> Result<()> {
        self.post_send(msg, Some(handle))
    }

    fn register(&mut self, length: u32, access: Access) -> Result<Region> {
        if !self.up {
            return Err(TransportError::Disconnected);
        }
        if self.windows != Some(false) {
            match self.register_window(length, access)? {
                Some((rkey, region)) => {
                    self.windows = Some(true);
                    let offset = region.mr.addr();
                    self.regions.insert(rkey, RegionEntry { region, length, valid: true });
                    return Ok(Region { handle: rkey, offset, length });
                }
                None => self.windows = Some(false),
            }
        }
        let mut flags = ffi::IBV_ACCESS_LOCAL_WRITE;
        if access.remote_read {
            flags |= ffi::IBV_ACCESS_REMOTE_READ;
        }
        if access.remote_write {
            flags |= ffi::IBV_ACCESS_REMOTE_WRITE;
        }
        let mr = ffi::Mr::new(&self.pd, length as usize, flags).map_err(|e| env_err("ibv_reg_mr", e))?;
        let (handle, offset) = (mr.rkey(), mr.addr());
        self.regions.insert(handle, RegionEntry { region: ffi::Region { mw: None, mr }, length, valid: true });
        Ok(Region { handle, offset, length })
    }

    fn write_local(&mut self, region: &Region, at: u32, data: &[u8]) -> Result<()> {
        let e = self
            .regions
            .get_mut(&region.handle)
            .ok_or_else(|| TransportError::Invalid(format!("no region with handle {:#x}", region.handle)))?;
        let end = at as usize + data.len();
        if end > e.length as usize || !e.region.mr.write(at as usize, data) {
            return Err(TransportError::Invalid(format!("write of {end} bytes past a {}-byte region", e.length)));
        }
        Ok(())
    }

    fn read_local(&self, region: &Region) -> Result<Vec<u8>> {
        let e = self
            .regions
            .get(&region.handle)
            .ok_or_else(|| TransportError::Invalid(format!("no region with handle {:#x}", region.handle)))?;
        Ok(e.region.mr.read(0, e.length as usize))
    }

    /// Verbs gives the target of an RDMA Read or Write no completion: the peer's accesses to
    /// our memory cannot be observed.
    fn accesses(&self, _region: &Region) -> Result<Vec<RemoteAccess>> {
        Err(TransportError::Environment(
            "the peer's RDMA Reads and Writes of our memory cannot be observed over verbs".into(),
        ))
    }

    fn observes_invalidation(&self) -> bool {
        self.fabric.names_invalidated_rkey()
    }

    fn is_valid(&self, region: &Region) -> bool {
        self.regions.get(&region.handle).is_some_and(|e| e.valid)
    }

    fn deregister(&mut self, region: &Region) -> Result<()> {
        self.regions.remove(&region.handle);
        Ok(())
    }

    fn rdma_read(&mut self, handle: u32, offset: u64, length: u32, deadline: Instant) -> Result<Vec<u8>> {
        self.one_sided(true, handle, offset, &[], length, deadline)
    }

    fn rdma_write(&mut self, handle: u32, offset: u64, data: &[u8], deadline: Instant) -> Result<()> {
        let len = u32::try_from(data.len()).map_err(|_| TransportError::Invalid("write over 4 GiB".into()))?;
        self.one_sided(false, handle, offset, data, len, deadline).map(|_| ())
    }

    fn poll(&mut self, deadline: Instant) -> Result<Event> {
        loop {
            if let Some(e) = self.events.pop_front() {
                return Ok(e);
            }
            if self.told_down {
                return Err(TransportError::Disconnected);
            }
            if self.down_pending {
                // The messages that arrived before the connection went down come first.
                self.drain()?;
                if self.events.is_empty() {
                    self.told_down = true;
                    return Ok(Event::Disconnected);
                }
                continue;
            }
            if !self.pump(deadline)? {
                return Err(TransportError::Timeout);
            }
        }
    }

    fn disconnect(&mut self) {
        self.go_down();
    }

    fn is_connected(&self) -> bool {
        // A pending CM event on an established connection is a disconnection (or device
        // removal) not yet taken by poll.
        self.up && !ffi::readable_now(self.id.channel().fd())
    }
}

impl Drop for VerbsConnection {
    fn drop(&mut self) {
        if self.up {
            self.up = false;
            let _ = self.id.disconnect();
        }
        // Windows first: a bound type 2 window holds a reference on the QP, and rxe waits
        // (and warns) when a QP is destroyed with references left. The id (and so the QP)
        // drops with the fields, after this.
        self.regions.clear();
        self.stuck.clear();
    }
}
