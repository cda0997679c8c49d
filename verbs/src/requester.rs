//! A requester's lean path beside the [`Connection`] API (`bench-null` drives it): Sends that
//! ask for a completion only now and then, and messages handed over in place, a batch at a
//! time, their receives reposted as one chain. Per call that saves a send completion (the
//! provider's work to make it and ours to take it), a copy and an allocation per message,
//! and an ibv_post_recv per message.
//!
//! [`Connection`]: rpcrdma_peers::transport::Connection

use std::time::{Duration, Instant};

use rpcrdma_peers::transport::{Event, Result, TransportError, WcStatus};

use crate::{ffi, VerbsConnection, KIND_QUIET, KIND_RECV, KIND_SHIFT, SIGNAL_EVERY};

impl VerbsConnection {
    /// Posts a Send that gives no [`Event::SendDone`]: one in `SIGNAL_EVERY` (16) asks for a
    /// completion (IBV_SEND_SIGNALED), which also shows the unsignaled ones before it done (a
    /// send queue completes in order) and frees their buffers and send-queue slots. A failed
    /// Send still completes, signaled or not (ibv_post_send(3)): it is reported as
    /// [`Event::SendDone`] with its status by [`Connection::poll`], or as the error of
    /// [`VerbsConnection::take_messages`].
    ///
    /// [`Connection::poll`]: rpcrdma_peers::transport::Connection::poll
    pub fn send_unsignaled(&mut self, msg: &[u8]) -> Result<()> {
        if !self.up {
            return Err(TransportError::Disconnected);
        }
        let len = u32::try_from(msg.len()).map_err(|_| TransportError::Invalid("send over 4 GiB".into()))?;
        let mut buf = self.buffer(msg.len())?;
        buf.write(0, msg);
        self.quiet_sent += 1;
        let signaled = self.quiet_sent % SIGNAL_EVERY == 0;
        let wr_id = self.wr_id(KIND_QUIET);
        self.id
            .post_send(ffi::Post::QuietSend { wr_id, buf, len, signaled })
            .map_err(|e| self.post_error("ibv_post_send", e))
    }

    /// Waits up to `wait` for messages from the peer; hands each one's bytes to `each` in
    /// place, in order, and reposts its receive (of `size` bytes); how many. Successful Send
    /// completions are taken silently. A failed completion is the error
    /// ([`TransportError::Completion`] with its status), a disconnection
    /// [`TransportError::Disconnected`] once the messages that arrived before it are handed.
    /// The clock is read only when no message is ready at once.
    pub fn take_messages(&mut self, size: usize, wait: Duration, mut each: impl FnMut(&[u8])) -> Result<usize> {
        let mut deadline = None;
        loop {
            let n = self.messages_ready(size, &mut each)?;
            if n > 0 {
                return Ok(n);
            }
            if self.down_pending || self.told_down {
                self.told_down = true;
                return Err(TransportError::Disconnected);
            }
            self.waits += 1;
            let d = *deadline.get_or_insert_with(|| Instant::now() + wait);
            if !self.pump(d)? {
                return Err(TransportError::Timeout);
            }
        }
    }

    /// How many times [`VerbsConnection::take_messages`] found no message ready at once and
    /// waited (polling, then asleep).
    pub fn waits(&self) -> u64 {
        self.waits
    }

    /// The messages ready now: those [`VerbsConnection::pump`] queued as events, then those on
    /// the CQ.
    fn messages_ready(&mut self, size: usize, each: &mut impl FnMut(&[u8])) -> Result<usize> {
        let mut n = self.queued_messages(size, each)?;
        let len = u32::try_from(size).map_err(|_| TransportError::Invalid("receive over 4 GiB".into()))?;
        let mut got = std::mem::take(&mut self.polled);
        let mut repost = std::mem::take(&mut self.repost);
        let mut polled = Ok(());
        loop {
            let k = match self.id.poll_completions(&mut got, &mut self.freed) {
                Ok(k) => k,
                Err(e) => {
                    polled = Err(crate::env_err("ibv_poll_cq", e));
                    0
                }
            };
            for c in got.drain(..) {
                let lent = c.wr_id >> KIND_SHIFT == KIND_RECV
                    && c.status == ffi::wc_status::SUCCESS
                    && c.buf.as_ref().is_some_and(|b| b.received(0).is_some());
                if !lent {
                    self.absorb(c);
                    continue;
                }
                let buf = c.buf.expect("checked above");
                self.recvs_posted = self.recvs_posted.saturating_sub(1);
                self.note_invalidated(c.invalidated);
                each(buf.received(c.byte_len as usize).expect("checked above"));
                n += 1;
                if buf.size() >= size {
                    let wr = self.wr_id(KIND_RECV);
                    repost.push((wr, buf, len));
                } else {
                    self.recycle(Some(buf));
                    let (wr, fresh) = (self.wr_id(KIND_RECV), self.buffer(size)?);
                    repost.push((wr, fresh, len));
                }
            }
            if k < ffi::POLL_BATCH {
                break;
            }
        }
        self.release_quiet();
        let before = repost.len();
        let posted = self.id.post_recvs(&mut repost);
        self.recvs_posted += before - repost.len();
        for (_, b, _) in repost.drain(..) {
            self.recycle(Some(b));
        }
        self.polled = got;
        self.repost = repost;
        polled?;
        posted.map_err(|e| self.post_error("ibv_post_recv", e))?;
        // What absorb queued: Send completions, failures.
        n += self.queued_messages(size, each)?;
        Ok(n)
    }

    /// Hands over the messages queued as events (reposting a receive for each), drops
    /// successful Send completions; a failure or disconnection is the error.
    fn queued_messages(&mut self, size: usize, each: &mut impl FnMut(&[u8])) -> Result<usize> {
        let mut n = 0;
        while let Some(e) = self.events.pop_front() {
            match e {
                Event::SendDone { status: WcStatus::Success } => {}
                Event::Recv { status: WcStatus::Success, data, .. } => {
                    each(&data);
                    n += 1;
                    self.post_recv_inner(size, 1)?;
                }
                Event::Recv { status, .. } | Event::SendDone { status } => {
                    return Err(TransportError::Completion(status));
                }
                Event::Disconnected => {
                    self.told_down = true;
                    return Err(TransportError::Disconnected);
                }
            }
        }
        Ok(n)
    }

    /// Puts the buffers of unsignaled Sends found done back in the pool.
    pub(crate) fn release_quiet(&mut self) {
        let mut freed = std::mem::take(&mut self.freed);
        for b in freed.drain(..) {
            self.recycle(Some(b));
        }
        self.freed = freed;
    }
}

/// On a real device only: `RPCRDMA_VERBS_TEST_ADDR=10.55.0.1` (a local address on an RDMA
/// netdev, as harness/tests/verbs_loopback.rs has it); elsewhere each test returns at once.
#[cfg(test)]
mod tests {
    use std::net::{IpAddr, SocketAddr};
    use std::time::{Duration, Instant};

    use rpcrdma_peers::transport::{Connection, Event, TransportError, WcStatus};

    use crate::{VerbsConnection, VerbsConnector, VerbsListener, SIGNAL_EVERY};

    fn soon() -> Instant {
        Instant::now() + Duration::from_secs(5)
    }

    /// (active, passive) over the device at `port`; the passive side posts `recvs` receives
    /// of `size` bytes before accepting. None without a device.
    fn pair(port: u16, size: usize, recvs: usize) -> Option<(VerbsConnection, VerbsConnection)> {
        let ip: IpAddr = std::env::var("RPCRDMA_VERBS_TEST_ADDR").ok()?.parse().ok()?;
        let mut l = VerbsListener::bind(SocketAddr::new(ip, port)).expect("listen");
        Some(std::thread::scope(|s| {
            let h = s.spawn(|| {
                let mut p = l.next_request(soon()).expect("connect request");
                p.post_recv(size, recvs).unwrap();
                p.accept(&[2; 8], soon()).expect("accept")
            });
            let mut c = VerbsConnector::new(&ip.to_string(), port).expect("verbs environment");
            let a = c.connect_verbs(&[1; 8], soon()).expect("connect");
            (a, h.join().unwrap())
        }))
    }

    fn message(i: usize) -> Vec<u8> {
        format!("message {i}").into_bytes()
    }

    #[test]
    fn unsignaled_sends_arrive_in_order_and_replies_come_in_place() {
        const ROUNDS: usize = 5;
        const WINDOW: usize = 8;
        // Three signals' worth and more: the buffers of the unsignaled Sends come back.
        let sends = 3 * SIGNAL_EVERY as usize + 5;
        let Some((mut a, mut b)) = pair(7491, 64, sends) else { return };
        a.post_recv(64, WINDOW).unwrap();
        for i in 0..sends {
            a.send_unsignaled(&message(i)).unwrap();
        }
        for i in 0..sends {
            match b.poll(soon()).unwrap() {
                Event::Recv { status: WcStatus::Success, data, invalidated: None } => assert_eq!(data, message(i)),
                other => panic!("message {i}: {other:?}"),
            }
        }
        // Replies in rounds of WINDOW: each round needs the receives the last one reposted (a
        // Send with none posted fails RNR, rnr_retry_count 0).
        let mut got = Vec::new();
        for round in 0..ROUNDS {
            for i in 0..WINDOW {
                b.send(&message(1000 + round * WINDOW + i)).unwrap();
            }
            let want = (round + 1) * WINDOW;
            while got.len() < want {
                let n = a.take_messages(64, Duration::from_secs(5), |m| got.push(m.to_vec())).unwrap();
                assert!(n > 0);
            }
            assert_eq!(got.len(), want, "round {round}");
        }
        assert_eq!(got, (0..ROUNDS * WINDOW).map(|i| message(1000 + i)).collect::<Vec<_>>());
        for _ in 0..ROUNDS * WINDOW {
            assert_eq!(b.poll(soon()).unwrap(), Event::SendDone { status: WcStatus::Success });
        }
        // The unsignaled Sends gave no SendDone; the signaled ones freed all but the last few.
        assert_eq!(a.poll(Instant::now() + Duration::from_millis(50)), Err(TransportError::Timeout));
        assert!(a.id.quiet_outstanding() < SIGNAL_EVERY as usize, "{} held", a.id.quiet_outstanding());
        assert_eq!(a.recvs_posted, WINDOW);
    }

    #[test]
    fn a_failed_unsignaled_send_is_reported() {
        // No receive posted at the passive side.
        let Some((mut a, b)) = pair(7492, 64, 0) else { return };
        a.post_recv(64, 1).unwrap();
        a.send_unsignaled(b"x").unwrap();
        let r = a.take_messages(64, Duration::from_secs(5), |m| panic!("a message: {m:?}"));
        if b.fabric().reports_receiver_not_ready() {
            assert_eq!(r, Err(TransportError::Completion(WcStatus::ReceiverNotReady)));
        } else {
            // iWARP has no RNR: the receiver terminates the connection.
            assert_eq!(r, Err(TransportError::Disconnected));
        }
        assert_eq!(a.send_unsignaled(b"y"), Err(TransportError::Disconnected));
    }
}
