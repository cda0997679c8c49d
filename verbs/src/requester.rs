//! A requester's lean path beside the [`Connection`] API (`bench-null` drives it): calls
//! copied into send slots of one registered region, one Send in `SIGNAL_EVERY` asking for a
//! completion, and messages handed over in place from receive slots of another, reposted as
//! one chain (ffi/slots.rs). Per call that saves a send completion, a copy and an allocation
//! per message, and the buffer moves and work-request table of the [`Connection`] API.
//!
//! [`Connection`]: rpcrdma_peers::transport::Connection

use std::time::{Duration, Instant};

use rpcrdma_peers::transport::{Result, TransportError, WcStatus};

use crate::{env_err, ffi, wc_status, VerbsConnection, KIND_SHIFT, KIND_SLOT_RECV, KIND_SLOT_SEND, SIGNAL_EVERY, SPIN};

impl VerbsConnection {
    /// Opens the requester's slots: `receives` receive slots of `size` bytes, all posted, and
    /// `sends` send slots of `send_size` bytes. From then on the connection is used through
    /// [`VerbsConnection::send_in_slot`] and [`VerbsConnection::take_messages`] alone (their
    /// completions are not the [`Connection`] API's events), and closed with
    /// [`Connection::disconnect`] or by dropping it.
    ///
    /// [`Connection`]: rpcrdma_peers::transport::Connection
    /// [`Connection::disconnect`]: rpcrdma_peers::transport::Connection::disconnect
    pub fn open_slots(&mut self, receives: usize, size: usize, sends: usize, send_size: usize) -> Result<()> {
        let n = |v: usize| u32::try_from(v).map_err(|_| TransportError::Invalid("slots over 4 GiB".into()));
        self.id
            .open_slots(
                (n(receives)?, n(size)?),
                (n(sends)?, n(send_size)?),
                (KIND_SLOT_RECV << KIND_SHIFT, KIND_SLOT_SEND << KIND_SHIFT),
                SIGNAL_EVERY,
            )
            .map_err(|e| self.post_error("open_slots (ibv_reg_mr, ibv_post_recv)", e))
    }

    /// Copies `msg` into the next free send slot and posts it as a Send; false when every send
    /// slot is still in use (the Sends' completions come with [`VerbsConnection::take_messages`]).
    /// A failed Send is the error of a later [`VerbsConnection::take_messages`].
    pub fn send_in_slot(&mut self, msg: &[u8]) -> Result<bool> {
        if !self.up {
            return Err(TransportError::Disconnected);
        }
        self.id.send_in_slot(msg).map_err(|e| match e.kind() {
            std::io::ErrorKind::InvalidInput => TransportError::Invalid(e.to_string()),
            _ => self.post_error("ibv_post_send", e),
        })
    }

    /// Waits up to `wait` for messages from the peer; hands each one's bytes to `each` in
    /// place, in order, and reposts its slot; how many (0 when none came but a send slot came
    /// free after [`VerbsConnection::send_in_slot`] found them all in use). The CQ is polled, yielding the CPU
    /// between polls, for up to `SPIN`, then slept on (the completion channel and the CM
    /// channel). A failed completion takes the connection down and is the error
    /// ([`TransportError::Completion`] with its status; a flushed one, as a disconnection
    /// flushes the posted receives, [`TransportError::Disconnected`]), after the messages
    /// that arrived before it are handed to `each`. The clock is read only when no message is
    /// ready at once.
    pub fn take_messages(&mut self, wait: Duration, mut each: impl FnMut(&[u8])) -> Result<usize> {
        if !self.up {
            return Err(TransportError::Disconnected);
        }
        let (mut deadline, mut spin_end, mut armed) = (None, None, false);
        loop {
            let polled = self.id.poll_slots(&mut each).map_err(|e| env_err("ibv_poll_cq", e))?;
            if let Some((_, status)) = polled.failed {
                self.go_down();
                self.told_down = true;
                return Err(match wc_status(status) {
                    WcStatus::Flushed => TransportError::Disconnected,
                    s => TransportError::Completion(s),
                });
            }
            if polled.messages > 0 || polled.unblocked {
                return Ok(polled.messages);
            }
            if !self.up {
                // Gone (a DISCONNECTED event below) with no receive slot left to flush: the
                // messages that came before it were on the CQ ahead of this poll.
                self.told_down = true;
                return Err(TransportError::Disconnected);
            }
            let now = Instant::now();
            let d = *deadline.get_or_insert_with(|| {
                self.waits += 1;
                now + wait
            });
            if now >= d {
                return Err(TransportError::Timeout);
            }
            if now < *spin_end.get_or_insert(now + SPIN) {
                std::thread::yield_now();
                continue;
            }
            if !armed {
                // Armed, then polled once more before sleeping: no completion is missed.
                self.id.arm().map_err(|e| env_err("ibv_req_notify_cq", e))?;
                armed = true;
                continue;
            }
            let mut fds = vec![self.id.channel().fd()];
            fds.extend(self.id.completion_fd());
            ffi::wait_readable(&fds, d).map_err(|e| env_err("poll", e))?;
            self.id.drain_completion_events();
            armed = false;
            // A DISCONNECTED event: go_down moves the QP to the error state, which flushes
            // the posted slots, so the next poll reports it.
            self.take_cm_events()?;
        }
    }

    /// How many times [`VerbsConnection::take_messages`] found no message ready at once and
    /// waited (polling, then asleep).
    pub fn waits(&self) -> u64 {
        self.waits
    }
}
