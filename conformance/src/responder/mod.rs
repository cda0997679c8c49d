//! The embedded reference responder: an RPC-over-RDMA Version One responder that follows
//! RFC 8166 and RFC 8797 to the letter, serving an upper layer (NFSv3 subset, NULL) on any
//! [`Connection`]. It is the default peer of the harness, and with [`Faults`] switched on it
//! misbehaves on purpose so tests can prove each check notices.

pub mod faults;
pub mod observe;
pub mod v2;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rpcrdma_codec::check::{Role, Violations};
use rpcrdma_codec::chunk::{ChunkLists, Segment, WriteChunk};
use rpcrdma_codec::private_data::{self, PrivateData};
use rpcrdma_codec::reassembly::{reassemble_call, write_placements};
use rpcrdma_codec::rpc::{AcceptStat, CallHeader, Rejected, ReplyHeader, RpcHeader, RpcMessage, RPC_VERSION};
use rpcrdma_codec::v1::{Body, FixedFields, HeaderBuilder, Message, MIN_HEADER_LEN};
use rpcrdma_codec::xdr::{pad4, Writer};
use rpcrdma_codec::Profile;

pub use faults::Faults;

use crate::transport::emulated::{EmulatedConnection, Listener};
use crate::transport::{Connection, Event, WcStatus};
use crate::ulp::{UlpOutcome, UlpResults, UpperLayer};

/// Settings of the reference responder.
#[derive(Debug, Clone)]
pub struct Config {
    /// Credits granted in every reply (RFC 8166 3.3.1: never zero).
    pub credits: u32,
    /// Our receive buffer size, advertised in private data (RFC 8797 Receive Size).
    pub receive_size: u32,
    /// Our largest Send, advertised in private data (RFC 8797 Send Size).
    pub send_size: u32,
    /// Whether we advertise support for remote invalidation (the R bit).
    pub remote_invalidation: bool,
    /// How long the serving loop waits on an idle connection before checking for shutdown.
    pub idle_poll: Duration,
    /// Serve RPC-over-RDMA Version Two (draft-cel-nfsv4-rpcrdma-version-two-01 with xcharext
    /// and rtrext) as well as Version One.
    pub version_two: bool,
    pub faults: Faults,
    /// Records what requesters do, for the client catalogue (`serve`).
    pub observer: Option<Arc<observe::Log>>,
    /// Receives kept posted, when more than the credits granted (RFC 8166 3.3.1 allows it).
    pub receive_window: Option<u32>,
    /// A pause before handling each message, so calls a requester sends back to back are all
    /// outstanding when observed.
    pub handle_delay: Duration,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            credits: 32,
            receive_size: 4096,
            send_size: 4096,
            remote_invalidation: true,
            idle_poll: Duration::from_millis(200),
            version_two: true,
            faults: Faults::default(),
            observer: None,
            receive_window: None,
            handle_delay: Duration::ZERO,
        }
    }
}

/// Makes a fresh upper layer for each connection.
pub type UlpFactory = Arc<dyn Fn() -> Box<dyn UpperLayer> + Send + Sync>;

/// The reference responder; also an emulated-fabric [`Listener`].
#[derive(Clone)]
pub struct Responder {
    pub config: Config,
    ulp: UlpFactory,
    /// Threads serving connections, joined on drop of the last clone's owner.
    threads: Arc<Mutex<Vec<std::thread::JoinHandle<()>>>>,
}

impl std::fmt::Debug for Responder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Responder").field("config", &self.config).finish()
    }
}

impl Responder {
    pub fn new(config: Config, ulp: UlpFactory) -> Self {
        Responder { config, ulp, threads: Arc::default() }
    }

    /// The embedded reference peer: NFSv3 over a fresh in-memory tree and CCP, per connection.
    pub fn reference(config: Config) -> Self {
        let ccp = crate::ulp::CcpServer { empty_reply: config.faults.ccp_empty_reply, ..Default::default() };
        let ulp: UlpFactory = Arc::new(move || Box::new(crate::ulp::Programs::reference(ccp)) as Box<dyn UpperLayer>);
        Self::new(config, ulp)
    }

    /// The private data we accept with.
    pub fn private_data(&self) -> [u8; 8] {
        let mut pd = self.our_private_data();
        if self.config.faults.private_data_bad_version {
            pd = pd.with_version(2);
        }
        let mut b = [0u8; 8];
        pd.encode_into(&mut b).expect("8 bytes");
        b
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
        (c.receive_size as usize, window.max(1) as usize)
    }

    /// Serves one prepared connection until it closes.
    pub fn serve(&self, conn: &mut dyn Connection) {
        let mut s = Session::new(&self.config, conn, (self.ulp)());
        s.run();
    }
}

impl Listener for Responder {
    fn on_request(&mut self, _private_data: &[u8]) -> Result<Vec<u8>, String> {
        Ok(self.private_data().to_vec())
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
    /// Where to record this connection, when observing.
    observed: Option<(Arc<observe::Log>, usize)>,
}

impl<'a> Session<'a> {
    fn new(config: &'a Config, conn: &'a mut dyn Connection, ulp: Box<dyn UpperLayer>) -> Self {
        let mut peer = private_data::effective(conn.peer_private_data(), &Profile::default());
        if config.faults.assume_large_peer_receive && peer.status != private_data::Status::Ok {
            peer.params = PrivateData::new(4096, 4096, false).expect("4096");
        }
        let ours = PrivateData::new(config.send_size, config.receive_size, config.remote_invalidation)
            .expect("configured sizes are at least 1024");
        let t = private_data::inline_thresholds(&peer.params, &ours);
        let reply_inline = t.server_to_client as usize;
        let may_invalidate = t.send_with_invalidate;
        let observed = config
            .observer
            .as_ref()
            .map(|log| (log.clone(), log.open(conn.peer_private_data(), config.credits, config.receive_size)));
        Session {
            config,
            conn,
            ulp,
            reply_inline,
            may_invalidate,
            deadline_step: Duration::from_secs(5),
            v2: v2::State::default(),
            observed,
        }
    }

    fn observe(&self, what: observe::Observed) {
        if let Some((log, i)) = &self.observed {
            log.push(*i, what);
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
                            if self.config.faults.short_receive_window {
                                // Short of receives and slow to replenish them: calls sent
                                // back to back within the grant find no receive posted.
                                std::thread::sleep(Duration::from_millis(50));
                            }
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
                        continue;
                    }
                    Err(_) => return,
                },
            };
            match event {
                Event::Recv { status: WcStatus::Success, data, .. } => {
                    // Repost before replying, so the window stays at the grant.
                    if self.conn.post_recv(self.config.receive_size as usize, 1).is_err() {
                        return;
                    }
                    if self.handle(&data).is_err() {
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
                Event::SendDone { .. } => return,
            }
        }
    }

    fn observe_arrival(&self, e: &Event) {
        if let Event::Recv { status: WcStatus::Success, data, .. } = e {
            self.observe(observe::Observed::FromRequester(data.clone()));
        }
    }

    pub(crate) fn grant(&self) -> u32 {
        if self.config.faults.zero_credit {
            0
        } else {
            self.config.credits
        }
    }

    pub(crate) fn send(&mut self, msg: &[u8], invalidate: Option<u32>) -> Result<(), ()> {
        self.observe(observe::Observed::ToRequester(msg.to_vec()));
        let r = match invalidate {
            Some(h) => self.conn.send_with_invalidate(msg, h),
            None => self.conn.send(msg),
        };
        r.map_err(|_| ())
    }

    fn send_err_vers(&mut self, f: &FixedFields) -> Result<(), ()> {
        let faults = &self.config.faults;
        let xid = if faults.err_vers_wrong_xid { f.xid ^ 1 } else { f.xid };
        let high = if self.config.version_two && !faults.v2_err_vers_v1_only { 2 } else { 1 };
        let (low, high) = if faults.err_vers_bad_range { (high + 1, 1) } else { (1, high) };
        let mut buf = [0u8; 28];
        let n = HeaderBuilder::err_vers(xid, f.vers, self.grant(), low, high).encode(&mut buf).expect("28 bytes");
        self.send(&buf[..n], None)
    }

    fn send_err_chunk(&mut self, xid: u32) -> Result<(), ()> {
        if self.config.faults.no_err_chunk {
            return Ok(());
        }
        let mut buf = [0u8; 24];
        let mut n = HeaderBuilder::err_chunk(xid, self.grant()).encode(&mut buf).expect("20 bytes");
        if self.config.faults.err_chunk_trailing {
            n += 4;
        }
        self.send(&buf[..n], None)
    }

    /// Handles one received message; Err means the connection is unusable.
    fn handle(&mut self, data: &[u8]) -> Result<(), ()> {
        // RFC 8166 4.5: shorter than a minimal header: the XID cannot be trusted; discard.
        if data.len() < MIN_HEADER_LEN && !self.config.faults.answer_short_messages {
            return Ok(());
        }
        let Ok(fixed) = FixedFields::decode(data) else { return Ok(()) };
        if fixed.vers == rpcrdma_codec::v2::VERSION && self.config.version_two {
            return v2::handle(self, data);
        }
        if fixed.vers != 1 {
            // RFC 8166 4.5.1.
            return if self.config.faults.ignore_bad_version { Ok(()) } else { self.send_err_vers(&fixed) };
        }
        let msg = match Message::decode(data, &Profile::default()) {
            Ok(m) => m,
            // RFC 8166 4.5.2: XDR errors get ERR_CHUNK.
            Err(_) => return self.send_err_chunk(fixed.xid),
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
        // Semantic violations of a call are XDR errors of the transport header (RFC 8166 4.5.2).
        let violations = Violations::of(&msg, Role::Call);
        let tolerated = |id: &str| {
            self.config.faults.accept_xid_mismatch && id == "rfc8166/4.5.2/xid-mismatch"
                || self.config.faults.lenient_read_list && id.starts_with("rfc8166/3.4.5/")
        };
        if violations.iter().any(|v| !tolerated(v.rule.id)) {
            return self.send_err_chunk(fixed.xid);
        }
        let chunks = *msg.header.body.chunks().expect("MSG or NOMSG");
        let is_nomsg = matches!(msg.header.body, Body::NoMsg(_));
        self.serve_call(msg.header.xid, &chunks, is_nomsg, msg.payload, Framing::V1)
    }

    /// The error for a call that cannot be served: ERR_CHUNK, or RDMA2_ERR_BAD_HEADER (its
    /// Version Two equivalent, v2-01 4.2.3).
    fn call_error(&mut self, xid: u32, framing: Framing) -> Result<(), ()> {
        match framing {
            Framing::V1 => self.send_err_chunk(xid),
            Framing::V2 | Framing::V2Xmt => v2::send_bad_header(self, xid),
        }
    }

    /// Writes a reply's transport header in `framing` into `out`; its length.
    #[allow(clippy::too_many_arguments)]
    fn reply_header(
        &self,
        framing: Framing,
        nomsg: bool,
        xid: u32,
        credit: u32,
        writes: &[&[Segment]],
        reply: Option<&[Segment]>,
        payload_len: usize,
        out: &mut [u8],
    ) -> Result<usize, ()> {
        if framing != Framing::V1 && !self.config.faults.v2_reply_v1 {
            return v2::reply_header(self, framing, nomsg, xid, credit, writes, reply, payload_len, out);
        }
        let mut b = if nomsg { HeaderBuilder::nomsg(xid, credit) } else { HeaderBuilder::msg(xid, credit) };
        b = b.write_list(writes);
        if let Some(r) = reply {
            b = b.reply_chunk(r);
        }
        b.encode(out).map_err(|_| ())
    }

    /// Pulls read chunks, runs the call, and sends the reply.
    pub(crate) fn serve_call(
        &mut self,
        xid: u32,
        chunks: &ChunkLists<'_>,
        is_nomsg: bool,
        inline: &[u8],
        framing: Framing,
    ) -> Result<(), ()> {
        let deadline = Instant::now() + self.deadline_step;
        // Pull every read chunk with RDMA Read (RFC 8166 3.4.5).
        let mut pulled: Vec<(u32, Vec<u8>)> = Vec::new();
        let config = self.config;
        let faults = &config.faults;
        for c in chunks.reads.chunks() {
            if c.position == 0 && faults.no_position_zero {
                return self.call_error(xid, framing);
            }
            let mut data = Vec::new();
            for (i, s) in c.segments().enumerate() {
                if i > 0 && faults.first_segment_only {
                    break;
                }
                let len = if faults.read_chunk_roundup { (s.length + 3) & !3 } else { s.length };
                let part = self.conn.rdma_read(s.handle, s.offset, len, deadline).map_err(|_| ())?;
                data.extend_from_slice(&part[..s.length.min(len) as usize]);
            }
            pulled.push((c.position, data));
        }
        let (reduced, rest): (Vec<u8>, &[(u32, Vec<u8>)]) = match pulled.first() {
            Some((0, d)) => (d.clone(), &pulled[1..]),
            _ if is_nomsg => return self.call_error(xid, framing),
            _ => (inline.to_vec(), &pulled[..]),
        };
        let total: usize = reduced.len() + rest.iter().map(|(_, d)| d.len() + 3).sum::<usize>();
        let mut call = vec![0u8; total];
        let n = match reassemble_call(&reduced, rest.iter().map(|(p, d)| (*p, d.as_slice())), &mut call) {
            Ok(n) => n,
            Err(_) if self.config.faults.lenient_read_list => {
                let call = CallHeader::new(xid, 0, 0, 0);
                return self.reply(&call, Some(UlpOutcome::GarbageArgs), chunks, framing);
            }
            Err(_) => return self.call_error(xid, framing),
        };
        call.truncate(n);
        let rpc = match RpcMessage::decode(&call) {
            Ok(m) => m,
            Err(_) => return self.call_error(xid, framing),
        };
        let RpcHeader::Call(c) = rpc.header else { return self.call_error(xid, framing) };
        if c.xid != xid && !self.config.faults.accept_xid_mismatch {
            return self.call_error(xid, framing);
        }
        let outcome =
            if c.rpcvers != RPC_VERSION { None } else { Some(self.ulp.call(c.prog, c.vers, c.proc_, rpc.body)) };
        self.reply(&c, outcome, chunks, framing)
    }

    fn reply(
        &mut self,
        call: &CallHeader<'_>,
        outcome: Option<UlpOutcome>,
        chunks: &ChunkLists<'_>,
        framing: Framing,
    ) -> Result<(), ()> {
        let xid = call.xid;
        let faults = self.config.faults.clone();
        let (rpc_header, results) = match outcome {
            None => (ReplyHeader::denied(xid, Rejected::RpcMismatch { low: 2, high: 2 }), UlpResults::default()),
            Some(UlpOutcome::Success(r)) => (ReplyHeader::accepted(xid, AcceptStat::Success), r),
            Some(UlpOutcome::ProgUnavail) => {
                (ReplyHeader::accepted(xid, AcceptStat::ProgUnavail), UlpResults::default())
            }
            Some(UlpOutcome::ProgMismatch { low, high }) => {
                (ReplyHeader::accepted(xid, AcceptStat::ProgMismatch { low, high }), UlpResults::default())
            }
            Some(UlpOutcome::ProcUnavail) => {
                (ReplyHeader::accepted(xid, AcceptStat::ProcUnavail), UlpResults::default())
            }
            Some(UlpOutcome::GarbageArgs) => {
                (ReplyHeader::accepted(xid, AcceptStat::GarbageArgs), UlpResults::default())
            }
            Some(UlpOutcome::SystemErr) => (ReplyHeader::accepted(xid, AcceptStat::SystemErr), UlpResults::default()),
        };
        let deadline = Instant::now() + self.deadline_step;

        // Write list: the DDP-eligible item goes into the first write chunk (RFC 8166 4.3.2);
        // every chunk is echoed with the lengths actually written, unused ones with zeros.
        let mut write_echo: Vec<Vec<Segment>> = Vec::new();
        let mut ddp_inline = results.ddp.clone();
        for (i, wc) in chunks.writes.chunks().enumerate() {
            let mut segs: Vec<Segment> = wc.segments().map(|s| Segment { length: 0, ..s }).collect();
            if i == 0 && wc.segment_count() > 0 {
                if let Some(data) = ddp_inline.take() {
                    if (data.len() as u64) > wc.length() {
                        // RFC 8166 4.5.3: a write chunk too small; do not write past it.
                        return self.call_error(xid, framing);
                    }
                    let mut item = data.clone();
                    if faults.pad_write_chunk {
                        item.resize(data.len() + pad4(data.len()), 0);
                    }
                    self.rdma_write_item(&wc, &item, &mut segs, deadline, &faults)?;
                }
            }
            let unused = segs.iter().all(|s| s.length == 0);
            if !(unused && faults.drop_unused_write_chunks) {
                write_echo.push(segs);
            }
        }
        // The inline payload: RPC reply header, then the results (the DDP item removed when
        // it went through a write chunk).
        let mut payload = vec![0u8; 64 + results.head.len()];
        let mut w = Writer::new(&mut payload);
        rpc_header.encode(&mut w).map_err(|_| ())?;
        let n = w.len();
        payload.truncate(n);
        payload.extend_from_slice(&results.head);
        if let Some(d) = &ddp_inline {
            payload.extend_from_slice(d);
            payload.resize(payload.len() + pad4(d.len()), 0);
        }
        payload.extend_from_slice(&results.tail);

        let write_refs: Vec<&[Segment]> = write_echo.iter().map(|v| v.as_slice()).collect();
        let reply_offered: Option<Vec<Segment>> = chunks.reply.map(|c| c.segments().collect());
        let header_len = {
            let segs: usize =
                write_refs.iter().map(|c| c.len()).sum::<usize>() + reply_offered.as_ref().map_or(0, |s| s.len());
            let mut scratch = vec![0u8; 64 + 8 * write_refs.len() + 16 * segs];
            self.reply_header(
                framing,
                false,
                xid,
                0,
                &write_refs,
                reply_offered.as_deref(),
                payload.len(),
                &mut scratch,
            )?
        };
        let fits_inline = header_len + payload.len() <= self.reply_inline || faults.ignore_reply_chunk;
        let invalidate = self.invalidate_key(chunks);

        let mut out = vec![0u8; header_len + payload.len() + 64];
        if fits_inline || reply_offered.is_none() {
            if !fits_inline && !faults.ignore_reply_chunk {
                // Too long for inline and no reply chunk: nothing can carry the reply.
                return self.call_error(xid, framing);
            }
            // Inline reply; an offered reply chunk is echoed with zero lengths (RFC 8166 4.3.3).
            let zeroed: Option<Vec<Segment>> = if faults.echo_reply_chunk_lengths {
                reply_offered
            } else {
                reply_offered.map(|s| s.iter().map(|x| Segment { length: 0, ..*x }).collect())
            };
            let hl = self.reply_header(
                framing,
                false,
                xid,
                self.grant(),
                &write_refs,
                zeroed.as_deref(),
                payload.len(),
                &mut out,
            )?;
            out.truncate(hl);
            out.extend_from_slice(&payload);
            return self.send(&out, invalidate);
        }
        // Long reply: the whole payload through the reply chunk, RDMA_NOMSG (RFC 8166 3.5.3).
        let offered = reply_offered.expect("checked");
        let mut echo: Vec<Segment> = offered.iter().map(|s| Segment { length: 0, ..*s }).collect();
        let capacity: u64 = offered.iter().map(|s| s.length as u64).sum();
        if payload.len() as u64 > capacity {
            // RFC 8166 4.5.3: a reply chunk too small; do not write past it.
            return self.call_error(xid, framing);
        }
        let rc_bytes = {
            let mut b = vec![0u8; 4 + 16 * offered.len()];
            let mut w = Writer::new(&mut b);
            rpcrdma_codec::chunk::ChunkWriter::counted_segments(&mut w, &offered).map_err(|_| ())?;
            b
        };
        let rc = WriteChunk::decode(&mut rpcrdma_codec::xdr::Reader::new(&rc_bytes)).map_err(|_| ())?;
        self.rdma_write_item(&rc, &payload, &mut echo, deadline, &faults)?;
        let hl = self.reply_header(framing, true, xid, self.grant(), &write_refs, Some(&echo), 0, &mut out)?;
        out.truncate(hl);
        self.send(&out, invalidate)
    }

    /// RDMA-Writes `item` into `chunk`, recording the lengths written in `echo`.
    fn rdma_write_item(
        &mut self,
        chunk: &WriteChunk<'_>,
        item: &[u8],
        echo: &mut [Segment],
        deadline: Instant,
        faults: &Faults,
    ) -> Result<(), ()> {
        let Ok(places) = write_placements(chunk, item.len() as u64) else {
            return Err(());
        };
        for p in places {
            let from = p.item_offset as usize;
            let data = &item[from..from + p.length as usize];
            self.conn.rdma_write(p.segment.handle, p.segment.offset, data, deadline).map_err(|_| ())?;
            echo[p.segment_index].length =
                if faults.write_chunk_length_padded { p.length + pad4(p.length as usize) as u32 } else { p.length };
        }
        Ok(())
    }

    /// The R_key to invalidate with the reply (RFC 8797 4: only when both sides set R;
    /// only a handle from this request's chunks).
    fn invalidate_key(&self, chunks: &ChunkLists<'_>) -> Option<u32> {
        if self.config.faults.invalidate_foreign_key {
            return Some(0x0bad_0bad);
        }
        if !self.may_invalidate && !self.config.faults.invalidate_without_r {
            return None;
        }
        chunks
            .writes
            .chunks()
            .flat_map(|c| c.segments())
            .chain(chunks.reply.iter().flat_map(|c| c.segments()))
            .chain(chunks.reads.segments().map(|s| s.target))
            .map(|s| s.handle)
            .next()
    }
}
