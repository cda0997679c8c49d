//! The embedded reference responder: an RPC-over-RDMA Version One responder that follows
//! RFC 8166 and RFC 8797 to the letter, serving an upper layer (NFSv3 subset, NULL) on any
//! [`Connection`]. It is the default peer of the harness, and with [`Faults`] switched on it
//! misbehaves on purpose so tests can prove each check notices.

mod call;
mod config;
pub mod faults;
mod misuse;
pub mod recorded;
pub mod reply_fuzz;
pub mod reverse;
pub mod script;
mod stop;
mod undetermined;
pub mod v2;

use crate::observe;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rpcrdma_codec::check::{Role, Violations};
use rpcrdma_codec::private_data::{self, PrivateData};
use rpcrdma_codec::v1::{Body, FixedFields, HeaderBuilder, Message, MIN_HEADER_LEN};
use rpcrdma_codec::xdr::Encode;
use rpcrdma_codec::Profile;

use config::receive_buffer;
pub use config::Config;
pub use faults::Faults;
pub use recorded::RecordedReply;
pub use reply_fuzz::{MessageId, ReplyFuzz, ReverseMutation};
pub use script::Scenario;
pub(crate) use stop::Stop;

use crate::transport::emulated::{EmulatedConnection, Listener};
use crate::transport::{Connection, Event, WcStatus};
use crate::ulp::UpperLayer;

/// Makes a fresh upper layer for each connection.
pub type UlpFactory = Arc<dyn Fn() -> Box<dyn UpperLayer> + Send + Sync>;

/// The reference responder; also an emulated-fabric [`Listener`].
#[derive(Clone)]
pub struct Responder {
    pub config: Config,
    ulp: UlpFactory,
    /// Threads serving connections, joined on drop of the last clone's owner.
    threads: Arc<Mutex<Vec<std::thread::JoinHandle<()>>>>,
    /// The private data of the last connection (used only by the `previous-private-data` fault).
    previous_private_data: Arc<Mutex<Option<Vec<u8>>>>,
    /// Set when a crash-like fault took this responder down: it refuses new connections.
    down: Arc<AtomicBool>,
    /// Set once the scenario has played (replaced a reply, or closed the first connection of
    /// `reverse-burst-reconnect`): it is played once per responder.
    played: Arc<AtomicBool>,
}

impl std::fmt::Debug for Responder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Responder").field("config", &self.config).finish()
    }
}

impl Responder {
    pub fn new(config: Config, ulp: UlpFactory) -> Self {
        Responder {
            config,
            ulp,
            threads: Arc::default(),
            previous_private_data: Arc::default(),
            down: Arc::default(),
            played: Arc::default(),
        }
    }

    /// The embedded reference peer: NFSv3 and NFSv4.0 over a fresh in-memory tree and CCP, per
    /// connection; NFSv4.1/4.2 over state all its connections share.
    pub fn reference(config: Config) -> Self {
        let ccp = crate::ulp::CcpServer { empty_reply: config.faults.ccp_empty_reply, ..Default::default() };
        let ccp = config.scenario.map_or(ccp, |s| s.ccp(ccp));
        // NFSv4.1/4.2 state spans the connections (a back channel, a second client's OPEN).
        let f = &config.faults;
        let v41 = crate::ulp::nfs41::Shared::new(crate::ulp::nfs41::Faults {
            cb_before_back_channel: f.cb_before_back_channel,
            cb_large_call: f.cb_large_call,
            cb_abandoned_on_reconnect: f.cb_abandoned_on_reconnect,
            read_fails_in_sixteen_segment_chunk: f.read_fails_in_sixteen_segment_chunk,
        });
        let ulp: UlpFactory = Arc::new(move || {
            let nfs = crate::ulp::NfsServer::new().with_v41(&v41);
            Box::new(crate::ulp::Programs::reference_with(ccp, nfs)) as Box<dyn UpperLayer>
        });
        Self::new(config, ulp)
    }

    /// The private data we accept with.
    pub fn private_data(&self) -> Vec<u8> {
        let mut pd = self.our_private_data();
        if self.config.faults.invalidate_despite_own_r0 {
            // Advertise R = 0; the session still invalidates (it reads the configured R).
            pd = PrivateData::new(self.config.send_size, self.config.receive_size, false).expect("configured sizes");
        }
        if self.config.faults.private_data_bad_version {
            pd = pd.with_version(2);
        }
        if self.config.faults.private_data_reserved_set {
            pd = pd.with_reserved(0x80);
        }
        let b = pd.to_bytes();
        let played = self.played.load(Ordering::SeqCst);
        self.config.scenario.and_then(|s| s.private_data(b, played)).unwrap_or_else(|| b.to_vec())
    }

    fn our_private_data(&self) -> PrivateData {
        PrivateData::new(self.config.send_size, self.config.receive_size, self.config.remote_invalidation)
            .expect("configured sizes are at least 1024")
    }

    /// Posts the receive window, as a passive side does before accepting (RFC 8166 3.3.1:
    /// receives for every credit granted are posted before a reply grants them).
    pub fn prepare(&self, conn: &mut dyn Connection) -> bool {
        let (size, count) = self.receive_window();
        conn.post_recv(size, count).is_ok()
    }

    /// The receives to post before accepting: (buffer size, how many).
    pub fn receive_window(&self) -> (usize, usize) {
        let c = &self.config;
        let window = if c.faults.short_receive_window { c.credits / 2 } else { c.receive_window.unwrap_or(c.credits) };
        // A scenario's larger grant is backed by receives (RFC 8166 3.3.1).
        let window = window.max(c.scenario.and_then(Scenario::grant_after).unwrap_or(0));
        (self.receive_buffer(), window.max(1) as usize)
    }

    /// The size of each receive buffer posted: the advertised receive size.
    pub(crate) fn receive_buffer(&self) -> usize {
        receive_buffer(&self.config)
    }

    /// Serves one prepared connection until it closes.
    pub fn serve(&self, conn: &mut dyn Connection) {
        let own = conn.peer_private_data().to_vec();
        let peer_private_data = if self.config.faults.previous_private_data {
            let mut previous = self.previous_private_data.lock().unwrap_or_else(|e| e.into_inner());
            previous.replace(own.clone()).unwrap_or(own)
        } else {
            own
        };
        let mut s = Session::new(&self.config, conn, (self.ulp)(), &peer_private_data);
        s.down = self.down.clone();
        s.played = self.played.clone();
        if let Some((log, i)) = &s.observed {
            log.responder_private_data(*i, &self.private_data());
        }
        s.run();
    }

    /// Whether a crash-like fault took this responder down (it refuses new connections).
    pub fn is_down(&self) -> bool {
        self.down.load(Ordering::SeqCst)
    }
}

impl Listener for Responder {
    fn on_request(&mut self, _private_data: &[u8]) -> Result<Vec<u8>, String> {
        if self.is_down() {
            return Err("connection refused: the responder is down (crash-like fault)".into());
        }
        Ok(self.private_data())
    }

    /// NFS's well-known port (RFC 8267 6.3), or another under `not-well-known-port`.
    fn port(&self) -> u16 {
        self.config.faults.listening_port()
    }

    fn on_established(&mut self, mut conn: EmulatedConnection) {
        if !self.prepare(&mut conn) {
            return;
        }
        let me = self.clone();
        let h = std::thread::spawn(move || me.serve(&mut conn));
        let mut threads = self.threads.lock().unwrap_or_else(|e| e.into_inner());
        threads.retain(|t| !t.is_finished());
        threads.push(h);
    }
}

/// The transport header a call's reply (and its errors) is framed in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Framing {
    /// RFC 8166 RDMA_MSG / RDMA_NOMSG, errors ERR_CHUNK.
    V1,
    /// RDMA2_MSG / RDMA2_NOMSG with rdma_direction REPLY, errors RDMA2_ERR_BAD_HEADER.
    V2,
    /// The call came in a ROPT_XMTREQ group: the reply is a ROPT_XMTRESP (rtrext-03 9.3).
    V2Xmt,
}

/// One connection's state.
pub(crate) struct Session<'a> {
    pub(crate) config: &'a Config,
    pub(crate) conn: &'a mut dyn Connection,
    pub(crate) ulp: Box<dyn UpperLayer>,
    /// Inline threshold for our replies: min(our send size, the requester's receive size).
    reply_inline: usize,
    /// Both sides set R (RFC 8797 4): Send With Invalidate is allowed.
    may_invalidate: bool,
    deadline_step: Duration,
    /// Version Two per-connection state (characteristics, a transmission group).
    v2: v2::State,
    /// The R_key the last reply could invalidate, kept only for the `invalidate-previous-key` fault.
    previous_key: Option<u32>,
    /// The read list of the call being answered, kept only for the `echo-read-list` fault.
    echoed_reads: Vec<rpcrdma_codec::chunk::ReadSegment>,
    /// Where to record this connection, when observing.
    observed: Option<(Arc<observe::Log>, usize)>,
    /// The responder's crashed flag (crash-like faults set it).
    down: Arc<AtomicBool>,
    /// Messages in a row with rdma_credit zero (`hang-on-zero-credit-pair`).
    zero_credit_run: u32,
    /// Set by `hang-on-zero-credit-pair`: messages are taken and never answered.
    wedged: bool,
    /// A transport header that did not decode or broke a call rule came on this connection,
    /// kept only for the `disconnect-after-bad-header` fault.
    bad_header_seen: bool,
    /// The responder's flag: its scenario has been played.
    played: Arc<AtomicBool>,
    /// The call whose reply the scenario replaces, once chosen.
    target: Option<u32>,
    /// The grant of every reply, once a scenario changed it.
    scripted_grant: Option<u32>,
    /// The reverse direction (RFC 8167): calls queued and outstanding, the reverse grant.
    reverse: reverse::State,
    /// `ambiguous-credit` (RFC 8167 4.1): its message of undetermined direction.
    undetermined: undetermined::State,
    /// While a call is answered, our messages held to go out as one batch: the reply and the
    /// reverse-direction calls answering it made ready (RFC 8167 5.1), so the requester
    /// cannot close the connection between them (see [`Session::answer_held`]).
    held: Option<Vec<(Vec<u8>, Option<u32>)>>,
    /// `serve --fuzz`: this connection's ordinal and the replies offered to the fuzzer so far
    /// (a mutation is drawn from the seed and the message's place, `reply_fuzz::MessageId`).
    fuzz_connection: u64,
    replies_offered: u64,
}

impl<'a> Session<'a> {
    /// A session on `conn`, sized by `peer_private_data` (what the CM delivered).
    fn new(
        config: &'a Config,
        conn: &'a mut dyn Connection,
        ulp: Box<dyn UpperLayer>,
        peer_private_data: &[u8],
    ) -> Self {
        let faults = &config.faults;
        let profile = if faults.private_data_offset_zero_only {
            Profile { private_data_locate: rpcrdma_codec::profile::PrivateDataLocate::OffsetZero, ..config.profile }
        } else {
            config.profile
        };
        let mut peer = private_data::effective(peer_private_data, &profile);
        if faults.private_data_reserved_rejected && peer.params.reserved != 0 {
            peer.params = PrivateData::DEFAULT;
        }
        if faults.assume_large_peer_receive && peer.status != private_data::Status::Ok {
            peer.params = PrivateData::new(4096, 4096, false).expect("4096");
        }
        if faults.assume_peer_remote_invalidation && peer.status != private_data::Status::Ok {
            peer.params = PrivateData { remote_invalidation: true, ..peer.params };
        }
        if faults.ignore_peer_receive_size {
            peer.params = PrivateData::new(1024, 1024, peer.params.remote_invalidation).expect("1024");
        }
        let ours = PrivateData::new(config.send_size, config.receive_size, config.remote_invalidation)
            .expect("configured sizes are at least 1024");
        let t = private_data::inline_thresholds(&peer.params, &ours);
        let reply_inline = t.server_to_client as usize;
        let may_invalidate = t.send_with_invalidate;
        let observed = config.observer.as_ref().map(|log| {
            let i = log.open(conn.peer_private_data(), config.credits, config.receive_size);
            if let Some(s) = config.scenario {
                log.scenario(i, s.name());
            }
            (log.clone(), i)
        });
        Session {
            config,
            conn,
            ulp,
            reply_inline,
            may_invalidate,
            deadline_step: Duration::from_secs(5),
            v2: v2::State::default(),
            echoed_reads: Vec::new(),
            previous_key: None,
            observed,
            down: Arc::default(),
            zero_credit_run: 0,
            wedged: false,
            bad_header_seen: false,
            played: Arc::default(),
            target: None,
            scripted_grant: None,
            reverse: reverse::State::default(),
            undetermined: undetermined::State::default(),
            held: None,
            fuzz_connection: config.reply_fuzz.as_ref().map_or(0, |f| f.connection()),
            replies_offered: 0,
        }
    }

    fn observe(&self, what: observe::Observed) {
        if let Some((log, i)) = &self.observed {
            log.push(*i, what);
        }
    }

    /// Records a one-sided operation or an invalidation, for captures.
    pub(crate) fn note(&self, what: observe::WireNote) {
        if let Some((log, i)) = &self.observed {
            log.note(*i, what);
        }
    }

    fn run(&mut self) {
        // Events already delivered, waiting behind the one being handled.
        let mut pending: std::collections::VecDeque<Event> = std::collections::VecDeque::new();
        loop {
            let event = match pending.pop_front() {
                Some(e) => e,
                None => match self.conn.poll(Instant::now() + self.config.idle_poll) {
                    Ok(e) => {
                        if matches!(e, Event::Recv { status: WcStatus::Success, .. }) {
                            if !self.config.handle_delay.is_zero() {
                                std::thread::sleep(self.config.handle_delay);
                            }
                            if self.config.faults.short_receive_window || self.config.faults.overgrant {
                                // Short of receives and slow to replenish them: calls sent
                                // back to back within the grant find no receive posted.
                                std::thread::sleep(Duration::from_millis(50));
                            }
                            undetermined::gather(self);
                            // Record every message that arrived before we answer this one:
                            // they are all outstanding at the requester.
                            self.observe_arrival(&e);
                            while let Ok(more) = self.conn.poll(Instant::now()) {
                                self.observe_arrival(&more);
                                pending.push_back(more);
                            }
                        }
                        e
                    }
                    Err(crate::transport::TransportError::Timeout) => {
                        if !self.conn.is_connected() {
                            return;
                        }
                        // Idle: the upper layer's reverse-direction calls go out now.
                        if let Err(stop) = reverse::pump(self) {
                            self.observe(observe::Observed::Stopped(stop.to_string()));
                            return;
                        }
                        continue;
                    }
                    Err(_) => return,
                },
            };
            match event {
                Event::Recv { status: WcStatus::Success, data, .. } => {
                    // Repost before replying, so the window stays at the grant.
                    if self.conn.post_recv(receive_buffer(self.config), 1).is_err() {
                        return self.record_failed_sends();
                    }
                    if self.wedged {
                        continue;
                    }
                    // The message of undetermined direction goes out before its hold, alone.
                    let ambiguous = undetermined::before_answering(self, &data, &mut pending);
                    let answered =
                        ambiguous.and_then(|()| self.answer_held(|s| s.handle(&data).and_then(|()| reverse::pump(s))));
                    if let Err(stop) = answered {
                        self.record_failed_sends();
                        self.observe(observe::Observed::Stopped(stop.to_string()));
                        return;
                    }
                }
                Event::Recv { status, .. } => {
                    self.observe(observe::Observed::ReceiveFailed(status));
                    self.observe(observe::Observed::Closed);
                    return;
                }
                Event::Disconnected => {
                    self.observe(observe::Observed::Closed);
                    return;
                }
                Event::SendDone { status: WcStatus::Success } => {}
                Event::SendDone { status } => return self.observe(observe::Observed::SendFailed(status)),
            }
        }
    }

    fn observe_arrival(&self, e: &Event) {
        if let Event::Recv { status: WcStatus::Success, data, .. } = e {
            self.observe(observe::Observed::FromRequester(data.clone()));
        }
    }

    pub(crate) fn grant(&self) -> u32 {
        if let Some(g) = self.scripted_grant {
            g
        } else if self.config.faults.zero_credit {
            0
        } else if self.config.faults.overgrant {
            self.config.credits * 2
        } else {
            self.config.credits
        }
    }

    pub(crate) fn send(&mut self, msg: &[u8], invalidate: Option<u32>) -> Result<(), Stop> {
        if let Some(sent) = self.send_recorded(msg) {
            return sent;
        }
        let config = self.config;
        if let Some(fuzz) = &config.reply_fuzz {
            self.replies_offered += 1;
            let at = reply_fuzz::MessageId { connection: self.fuzz_connection, n: self.replies_offered };
            if let Some((mutated, how)) = fuzz.mutate(at, msg) {
                let xid = msg.get(..4).map_or(0, |b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]));
                self.observe(observe::Observed::Mutated { how: how.name(), xid });
                return self.transmit(&mutated, None);
            }
        }
        if let (Some(scenario), Some(xid)) = (self.config.scenario, self.target) {
            if msg.get(..4) == Some(&xid.to_be_bytes()[..]) {
                self.target = None;
                self.scripted_grant = scenario.grant_after();
                self.undetermined.answered = Some(xid);
                self.observe(observe::Observed::Injected { scenario: scenario.name(), xid });
                // A message the requester must discard invalidates nothing: the call is still
                // outstanding, and its retransmission is served with the same chunks.
                let invalidate = invalidate.filter(|_| scenario.is_reply());
                self.transmit(&scenario.rewrite(msg, &self.config.profile), invalidate)?;
                return if scenario.closes_after() { Err(Stop::Scenario(scenario.name())) } else { Ok(()) };
            }
        }
        self.transmit(msg, invalidate)
    }

    /// Answers a call by `f`, whose messages go out as one batch once it is done (sent even
    /// when `f` stops the session: they were recorded as sent). The requester sees the reply
    /// and the reverse-direction calls its call made ready together, so which calls it gets
    /// does not hang on whether it closes the connection the moment the reply arrives (as it
    /// does on a grant of zero, RFC 8166 3.3.1): what `serve --fuzz` mutates is the same from
    /// run to run of the reference requester (docs/fuzzing.md).
    fn answer_held<T>(&mut self, f: impl FnOnce(&mut Self) -> Result<T, Stop>) -> Result<T, Stop> {
        self.held = Some(Vec::new());
        let r = f(self);
        let held = self.held.take().unwrap_or_default();
        let sent = if held.is_empty() { Ok(()) } else { self.conn.send_batch(&held).map_err(Stop::from) };
        r.and_then(|v| sent.map(|()| v))
    }

    fn transmit(&mut self, msg: &[u8], invalidate: Option<u32>) -> Result<(), Stop> {
        if let Some(h) = invalidate {
            self.note(observe::WireNote::Invalidate(h));
        }
        self.observe(observe::Observed::ToRequester(msg.to_vec()));
        if let Some(held) = &mut self.held {
            held.push((msg.to_vec(), invalidate));
            return Ok(());
        }
        let r = match invalidate {
            Some(h) => self.conn.send_with_invalidate(msg, h),
            None => self.conn.send(msg),
        };
        r.map_err(Stop::from)
    }

    fn send_err_vers(&mut self, f: &FixedFields) -> Result<(), Stop> {
        let faults = &self.config.faults;
        let xid = if faults.err_vers_wrong_xid { f.xid ^ 1 } else { f.xid };
        let high = if self.config.version_two && !faults.v2_err_vers_v1_only { 2 } else { 1 };
        let (low, high) = if faults.err_vers_bad_range { (high + 1, 1) } else { (1, high) };
        let vers = if faults.err_vers_no_echo { 1 } else { f.vers };
        self.send(&HeaderBuilder::err_vers(xid, vers, self.grant(), low, high).encode_to_vec(), None)
    }

    fn send_err_chunk(&mut self, xid: u32) -> Result<(), Stop> {
        if self.config.faults.no_err_chunk {
            return Ok(());
        }
        let mut msg = HeaderBuilder::err_chunk(xid, self.grant()).encode_to_vec();
        if self.config.faults.err_chunk_trailing {
            msg.extend_from_slice(&[0; 4]);
        }
        self.send(&msg, None)
    }

    /// Handles one received message; Err means the connection is unusable.
    fn handle(&mut self, data: &[u8]) -> Result<(), Stop> {
        // An RDMA_ERROR ends the reverse-direction call of ours it answers (RFC 8167 5.3).
        if reverse::on_error(self, data) {
            return reverse::pump(self);
        }
        // RFC 8166 4.5: shorter than a minimal header: the XID cannot be trusted; discard.
        if data.len() < MIN_HEADER_LEN && !self.config.faults.answer_short_messages {
            return Ok(());
        }
        let Ok(fixed) = FixedFields::decode(data) else { return Ok(()) };
        if self.config.faults.hang_on_zero_credit_pair {
            self.zero_credit_run = if fixed.credit == 0 { self.zero_credit_run + 1 } else { 0 };
            if self.zero_credit_run >= faults::HANG_ZERO_CREDIT_RUN {
                self.wedged = true;
                return Ok(());
            }
        }
        if fixed.vers == rpcrdma_codec::v2::VERSION && self.config.version_two {
            return v2::handle(self, data);
        }
        if fixed.vers != 1 {
            // RFC 8166 4.5.1.
            return if self.config.faults.ignore_bad_version { Ok(()) } else { self.send_err_vers(&fixed) };
        }
        if self.config.faults.crash_on_huge_segment_count && faults::claims_huge_segment_count(data) {
            self.down.store(true, Ordering::SeqCst);
            return Err(Stop::Unsupported("a segment count (crash-like fault)"));
        }
        let msg = match Message::decode(data, &self.config.profile) {
            Ok(m) => m,
            // RFC 8166 4.5.2: XDR errors get ERR_CHUNK.
            Err(_) => {
                self.note_bad_header();
                return self.send_err_chunk(fixed.xid);
            }
        };
        match msg.header.body {
            // RFC 8166 4.2.4 and 4.6.2: discard silently.
            Body::Error(_) | Body::Done => {
                return if self.config.faults.answer_error_and_done { self.send_err_chunk(fixed.xid) } else { Ok(()) };
            }
            // RFC 8166 4.6.1: Responders SHOULD reply ERR_CHUNK.
            Body::MsgP { .. } => return self.send_err_chunk(fixed.xid),
            Body::Msg(_) | Body::NoMsg(_) => {}
        }
        // RFC 8167 4.1, 5.2: msg_type REPLY marks a reverse-direction reply, never a call.
        if reverse::is_reply(&msg) && !reverse::routes_to_forward(self) {
            return reverse::on_reply(self, &fixed, &msg);
        }
        if self.crashes_on(msg.header.body.chunks().expect("MSG or NOMSG")) {
            self.down.store(true, Ordering::SeqCst);
            return Err(Stop::Unsupported("a chunk list (crash-like fault)"));
        }
        // Semantic violations of a call are XDR errors of the transport header (RFC 8166 4.5.2).
        let violations = Violations::of(&msg, Role::Call);
        if violations.iter().any(|v| !self.config.faults.tolerates(v.rule)) {
            self.note_bad_header();
            return self.send_err_chunk(fixed.xid);
        }
        let chunks = *msg.header.body.chunks().expect("MSG or NOMSG");
        let is_nomsg = matches!(msg.header.body, Body::NoMsg(_));
        if let Some(scenario) = self.config.scenario {
            if !is_nomsg && scenario.targets(msg.payload, &chunks) && !self.played.swap(true, Ordering::SeqCst) {
                self.target = Some(fixed.xid);
            }
        }
        // A scenario refusing its call answers it unprocessed (RFC 8267 6.4.2).
        if self.target == Some(fixed.xid) && self.config.scenario.is_some_and(Scenario::refuses_call) {
            return self.send(&HeaderBuilder::msg(fixed.xid, self.grant()).encode_to_vec(), None);
        }
        if let Some(why) = self.disconnects_on(&chunks, is_nomsg) {
            return Err(Stop::Unsupported(why));
        }
        self.note_recorded_target(fixed.xid, is_nomsg, msg.payload);
        self.serve_call(msg.header.xid, &chunks, is_nomsg, msg.payload, Framing::V1)
    }

    /// The error for a call that cannot be served: ERR_CHUNK, or RDMA2_ERR_BAD_HEADER (its
    /// Version Two equivalent, v2-01 4.2.3).
    fn call_error(&mut self, xid: u32, framing: Framing) -> Result<(), Stop> {
        match framing {
            Framing::V1 => self.send_err_chunk(xid),
            Framing::V2 | Framing::V2Xmt => v2::send_bad_header(self, xid),
        }
    }
}
