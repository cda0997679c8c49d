//! The completion pump: completions and CM events taken off the CQ and the event channel,
//! in order, waiting on both file descriptors until the caller's deadline; and the one way a
//! connection goes down.

use std::time::{Duration, Instant};

use rpcrdma_peers::transport::{Event, Result, TransportError, WcStatus};

use crate::{env_err, ffi, wc_status, VerbsConnection, DRAIN, KIND_RECV, KIND_SEND, KIND_SHIFT, SPIN};

impl VerbsConnection {
    /// A receive that invalidated our region `key` (Send With Invalidate): no longer valid.
    pub(crate) fn note_invalidated(&mut self, key: Option<u32>) {
        if let Some(r) = key.and_then(|k| self.regions.get_mut(&k)) {
            r.valid = false;
        }
    }

    /// The connection is gone: tell the peer (rdma_disconnect also moves our QP to the error
    /// state, so the receives not used flush), and report it once, after the messages that
    /// arrived before ([`Connection::poll`]).
    pub(crate) fn go_down(&mut self) {
        if self.up {
            self.up = false;
            let _ = self.id.disconnect();
        }
        self.down_pending = true;
    }

    /// After the connection went down: takes completions until every receive posted has
    /// completed (a receive queue completes in order, so the messages that arrived come
    /// before the flushed rest), for at most [`DRAIN`].
    pub(crate) fn drain(&mut self) -> Result<()> {
        let end = Instant::now() + DRAIN;
        while self.recvs_posted > 0 && Instant::now() < end {
            if self.take_completions()? == 0 {
                std::thread::sleep(Duration::from_millis(1));
            }
        }
        if self.trace && self.recvs_posted > 0 {
            eprintln!("verbs: {} receives not completed {} ms after going down", self.recvs_posted, DRAIN.as_millis());
        }
        Ok(())
    }

    pub(crate) fn absorb(&mut self, c: ffi::Completion) {
        let kind = c.wr_id >> KIND_SHIFT;
        if kind == KIND_RECV {
            self.recvs_posted = self.recvs_posted.saturating_sub(1);
        }
        let status = if kind == KIND_RECV && c.status == ffi::wc_status::LOC_QP_OP_ERR {
            // rxe completes a receive overrun by a longer Send with IBV_WC_LOC_QP_OP_ERR (its
            // copy into the receive buffer fails as a malformed WQE); hardware reports
            // IBV_WC_LOC_LEN_ERR. Either way the receive was too small.
            WcStatus::LocalLengthError
        } else {
            wc_status(c.status)
        };
        if self.trace {
            eprintln!(
                "verbs: completion kind {kind} wr {:#x} status {} ({}) opcode {} flags {:#x} len {} invalidated {:?}",
                c.wr_id,
                c.status,
                status.name(),
                c.opcode,
                c.wc_flags,
                c.byte_len,
                c.invalidated
            );
        }
        match kind {
            KIND_RECV | KIND_SEND if status == WcStatus::Flushed => {
                self.recycle(c.buf);
                self.go_down();
            }
            KIND_RECV => {
                if status == WcStatus::Success {
                    let data = c.buf.as_ref().map(|b| b.read(0, c.byte_len as usize)).unwrap_or_default();
                    self.note_invalidated(c.invalidated);
                    self.recycle(c.buf);
                    self.events.push_back(Event::Recv { status, data, invalidated: c.invalidated });
                } else {
                    self.recycle(c.buf);
                    self.events.push_back(Event::Recv { status, data: Vec::new(), invalidated: None });
                    self.go_down();
                }
            }
            KIND_SEND => {
                self.recycle(c.buf);
                self.events.push_back(Event::SendDone { status });
                if status != WcStatus::Success {
                    self.go_down();
                }
            }
            _ => {
                self.done.insert(c.wr_id, (status, c.buf));
                if status != WcStatus::Success {
                    self.go_down();
                }
            }
        }
    }

    /// Takes what is ready now off the CQ and the CM channel; how many things it took.
    pub(crate) fn take_ready(&mut self) -> Result<usize> {
        let n = self.take_completions()?;
        if n > 0 {
            // The CM channel (a system call) is read when the CQ is idle: a disconnection
            // also flushes the posted receives, so it shows on the CQ first.
            return Ok(n);
        }
        self.take_cm_events()
    }

    /// Takes the completions ready now (no system call on providers with user-mapped CQs).
    pub(crate) fn take_completions(&mut self) -> Result<usize> {
        let mut n = 0;
        let mut got = std::mem::take(&mut self.polled);
        loop {
            let res = self.id.poll_completions(&mut got);
            let batch = got.len();
            for c in got.drain(..) {
                self.absorb(c);
            }
            let k = match res {
                Ok(k) => k,
                Err(e) => {
                    self.polled = got;
                    return Err(env_err("ibv_poll_cq", e));
                }
            };
            n += batch;
            // Fewer than a full batch: the CQ was empty when polled.
            if k < ffi::POLL_BATCH {
                self.polled = got;
                return Ok(n);
            }
        }
    }

    /// Takes the CM events ready now.
    pub(crate) fn take_cm_events(&mut self) -> Result<usize> {
        let mut n = 0;
        let ch = self.id.channel().clone();
        while let Some(ev) = ch.try_event().map_err(|e| env_err("rdma_get_cm_event", e))? {
            n += 1;
            if self.trace {
                eprintln!("verbs: CM event {} (status {})", ev.kind, ev.status);
            }
            match ev.kind {
                ffi::cm_event::DISCONNECTED | ffi::cm_event::DEVICE_REMOVAL => {
                    // Answer the peer's DREQ (rdma_disconnect in go_down), then report.
                    self.go_down();
                }
                _ => {}
            }
        }
        Ok(n)
    }

    /// Waits until something arrives (true) or the deadline passes (false): first polling the
    /// CQ for up to `SPIN`, yielding the CPU between polls (a peer on the same CPU runs), then
    /// armed and asleep until the completion channel or the CM channel is readable. A reply
    /// within the spin costs no wake-up (measured in BENCHMARKS.md against a C client).
    pub(crate) fn pump(&mut self, deadline: Instant) -> Result<bool> {
        if self.take_ready()? > 0 {
            return Ok(true);
        }
        let spin_end = (Instant::now() + SPIN).min(deadline);
        while Instant::now() < spin_end {
            std::thread::yield_now();
            if self.take_completions()? > 0 {
                return Ok(true);
            }
        }
        loop {
            if self.take_ready()? > 0 {
                return Ok(true);
            }
            if Instant::now() >= deadline {
                return Ok(false);
            }
            self.id.arm().map_err(|e| env_err("ibv_req_notify_cq", e))?;
            if self.take_ready()? > 0 {
                return Ok(true);
            }
            let mut fds = vec![self.id.channel().fd()];
            if let Some(fd) = self.id.completion_fd() {
                fds.push(fd);
            }
            ffi::wait_readable(&fds, deadline).map_err(|e| env_err("poll", e))?;
            self.id.drain_completion_events();
        }
    }

    /// Waits for the completion of our own work request `wr_id`.
    pub(crate) fn wait_done(&mut self, wr_id: u64, deadline: Instant) -> Result<(WcStatus, Option<ffi::Mr>)> {
        loop {
            if let Some(d) = self.done.remove(&wr_id) {
                return Ok(d);
            }
            if !self.pump(deadline)? {
                return Err(TransportError::Timeout);
            }
        }
    }
}
