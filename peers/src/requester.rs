//! The reference requester: a conformant RPC-over-RDMA client workload (RFC 8166, RFC 8797)
//! that exercises every chunk type against a responder, or (`RequesterOptions::nfs4_minor`)
//! an NFSv4.1 client whose back channel rides the connection (RFC 8167: `requester/nfs41.rs`,
//! `requester/reverse.rs`). It stands in for a real client when the client catalogue is
//! tested, and with [`RequesterFaults`] it misbehaves on purpose so tests can prove each
//! client check notices.

use std::time::{Duration, Instant};

use rpcrdma_codec::private_data::PrivateData;
use rpcrdma_codec::rpc::RpcMessage;
use rpcrdma_codec::v1::{field, ErrorCode, FixedFields, Message, Proc, MIN_HEADER_LEN, VERSION};
use rpcrdma_codec::xdr::Encode;
use rpcrdma_codec::Profile;

use crate::proto::nfs3::{self, NFSPROC3_LOOKUP, ROOT_FH};
use crate::proto::Call;
use crate::transport::{Access, Connection, Connector, Event, Region, TransportError, WcStatus};

mod nfs41;
mod reverse;
mod stages;
mod v2;

mod faults;
pub use faults::RequesterFaults;

/// The requester's own settings.
#[derive(Debug, Clone)]
pub struct RequesterOptions {
    /// How long to wait for each reply.
    pub timeout: Duration,
    /// Receive size and send size advertised in RFC 8797 private data; receives posted at
    /// the receive size.
    pub receive_size: u32,
    pub send_size: u32,
    /// Credits requested in every call, and receives posted for replies.
    pub credits: u32,
    /// How many times a call with no reply before the timeout is sent again (the same XID).
    pub retransmits: u32,
    /// The version each connection begins with: 1, or 2 (Version Two: `requester/v2.rs`).
    pub version: u32,
    /// End the workload after its first READ, as a workload that reads one small file and
    /// stops: a scenario's reply to that READ is followed by no call, so the checks that need
    /// one (their precondition) have nothing to judge.
    pub stop_after_first_read: bool,
    /// The most calls the credit window keeps outstanding at once (none: the lower of the
    /// grant and the receives posted); 1 is a single-threaded application's one call at a time.
    pub window: Option<u32>,
    /// Speak NFSv4 of this minor version (1 or 2) with a session whose back channel rides the
    /// connection (`requester/nfs41.rs`), instead of the NFSv3 workload.
    pub nfs4_minor: Option<u32>,
    /// The back channel's ca_maxrequests: the reverse-direction credits advertised and the
    /// receives posted for them (RFC 8167 4.1, 4.3.1).
    pub back_channel_slots: u32,
    /// The callback program number offered in CREATE_SESSION (csa_cb_program).
    pub cb_program: u32,
    /// The run's spec choices (the readings the specs leave open): every message the
    /// requester decodes or builds follows them.
    pub profile: Profile,
}

impl Default for RequesterOptions {
    fn default() -> Self {
        RequesterOptions {
            timeout: Duration::from_secs(2),
            receive_size: 4096,
            send_size: 4096,
            credits: 32,
            retransmits: 2,
            version: 1,
            stop_after_first_read: false,
            window: None,
            nfs4_minor: None,
            back_channel_slots: 4,
            cb_program: 0x4000_0000,
            profile: Profile::default(),
        }
    }
}

mod failure;
mod inline;
mod observed;

use failure::{at, Step};
pub use failure::{Failure, WorkloadError};
pub use observed::{observed_workloads, observed_workloads_into};

/// One connection of the workload.
struct Session<'c> {
    connector: &'c mut dyn Connector,
    options: &'c RequesterOptions,
    conn: Option<Box<dyn Connection>>,
    private_data: Vec<u8>,
    next_xid: u32,
    faults: &'c RequesterFaults,
    /// The grant of the latest reply (RFC 8166 3.3.1: the current granted credit limit).
    grant: Option<u32>,
    /// The version spoken on this connection.
    v2: v2::Conn,
    /// The call inline threshold of the connection (RFC 8797 4.2), once connected.
    call_inline: Option<usize>,
    /// The limits CONF_RDMA returned (RFC 5666 6.2), kept for the rest of the workload.
    ccp: Option<rpcrdma_codec::ccp::ConfigRdmaReply>,
    /// What the callback program learnt (NFSv4.1: `requester/nfs41.rs`).
    callbacks: nfs41::Callbacks,
    /// Connections made so far (the current one included).
    connections: u32,
}

/// What a received message is to the call waiting for it.
enum Answer {
    /// Its reply.
    Reply,
    /// An RDMA_ERROR for it, with this rdma_err.
    Error(u32),
    /// Nothing: a message to discard silently (RFC 8166 4.5, 4.6.1, 4.6.2), or one for
    /// another call.
    Discard,
    /// RDMA2_ERR_VERS to the first Version Two call: send it again in Version One.
    Fallback,
    /// A Version Two backward-direction call, to answer.
    Backward,
    /// A reverse-direction call (RFC 8167 5.1), to answer.
    Reverse(reverse::ReverseCall),
}

impl<'c> Session<'c> {
    /// A session not yet connected, advertising `private_data` (RFC 8797).
    fn new(
        connector: &'c mut dyn Connector,
        options: &'c RequesterOptions,
        faults: &'c RequesterFaults,
        private_data: PrivateData,
    ) -> Self {
        Session {
            connector,
            options,
            conn: None,
            private_data: private_data.encode_to_vec(),
            next_xid: 0x5000_0000,
            faults,
            grant: None,
            v2: v2::Conn::default(),
            call_inline: None,
            ccp: None,
            callbacks: nfs41::Callbacks::default(),
            connections: 0,
        }
    }
}

impl Session<'_> {
    fn connect(&mut self) -> Step<()> {
        if let Some(mut c) = self.conn.take() {
            c.disconnect();
        }
        let deadline = Instant::now() + self.options.timeout;
        let mut conn = at("connect", self.connector.connect(&self.private_data, deadline))?;
        self.connections += 1;
        self.v2 = v2::Conn::new(self.options, &self.v2);
        self.learn_thresholds(conn.as_mut())?;
        // Receives for the forward calls and, above them, for the reverse-direction credits,
        // on every connection (RFC 8167 4.3.1); under `no-reverse-receives` (on a later
        // connection, `no-reverse-receives-after-reconnect`), one per call as it is sent.
        if !self.receives_per_call() {
            let n = self.options.credits + self.reverse_credits();
            at("connect", conn.post_recv(self.receive_buffer(), n as usize))?;
        }
        self.conn = Some(conn);
        // A new connection has one credit until its first reply (RFC 8166 3.3.3).
        self.grant = None;
        Ok(())
    }

    /// Reconnects when an earlier step cost the connection.
    fn ensure_connected(&mut self) -> Step<()> {
        match &self.conn {
            Some(c) if c.is_connected() => Ok(()),
            _ => self.connect(),
        }
    }

    fn conn(&mut self, step: &'static str) -> Step<&mut (dyn Connection + 'static)> {
        self.conn.as_deref_mut().ok_or(WorkloadError { step, failure: Failure::Disconnected })
    }

    fn xid(&mut self) -> u32 {
        self.next_xid = self.next_xid.wrapping_add(1);
        self.next_xid
    }

    fn call_for(&mut self, proc_: u32, args: Vec<u8>) -> Call {
        let xid = self.xid();
        Call::nfs3(xid, self.options.credits, proc_, args)
    }

    fn register(&mut self, length: u32, access: Access) -> Step<Region> {
        let r = self.conn("register")?.register(length, access);
        at("register", r)
    }

    /// A registered region holding `data`, for the responder to RDMA Read.
    fn source(&mut self, data: &[u8]) -> Step<Region> {
        let region = self.register(data.len() as u32, Access::READ)?;
        let r = self.conn("register")?.write_local(&region, 0, data);
        at("register", r)?;
        Ok(region)
    }

    fn send(&mut self, step: &'static str, msg: &[u8]) -> Step<()> {
        let msg = self.v2.frame(msg, self.options.profile.v2_envelope);
        let size = self.receive_buffer();
        let per_call = self.receives_per_call();
        let conn = self.conn(step)?;
        if per_call {
            at(step, conn.post_recv(size, 1))?;
        }
        let r = conn.send(&msg);
        at(step, r)
    }

    /// The next message before `deadline`; a receive is reposted for each one (none under
    /// `no-reverse-receives`, whose receives go one per call sent).
    fn recv_until(&mut self, step: &'static str, deadline: Instant) -> Step<Vec<u8>> {
        let size = self.receive_buffer();
        let repost = !self.receives_per_call();
        let conn = self.conn(step)?;
        let failure = loop {
            match conn.poll(deadline) {
                Ok(Event::SendDone { status: WcStatus::Success }) => continue,
                Ok(Event::SendDone { status }) => break Failure::SendFailed(status),
                Ok(Event::Recv { status: WcStatus::Success, data, .. }) => {
                    if repost {
                        let _ = conn.post_recv(size, 1);
                    }
                    return Ok(data);
                }
                Ok(Event::Recv { status, .. }) => break Failure::ReceiveFailed(status),
                Ok(Event::Disconnected) | Err(TransportError::Disconnected) => break Failure::Disconnected,
                Err(TransportError::Timeout) => break Failure::NoReply,
                Err(e) => break Failure::Transport(e),
            }
        };
        Err(WorkloadError { step, failure })
    }

    /// What `msg` is to the call `xid`. Messages shorter than a minimal header, with an
    /// unknown version, procedure or error, and RDMA_MSGP and RDMA_DONE are discarded
    /// (RFC 8166 4.5, 4.6.1, 4.6.2), as are replies to other calls.
    fn answer(&self, msg: &[u8], xid: u32) -> Answer {
        // RFC 8166 4.5's 28-byte floor; an ERR_CHUNK is the whole rpcrdma_error in 20 bytes
        // (5.1's XDR), so the floor cannot apply to it (as the responder reads one: its
        // reverse::on_error).
        let word = |at: usize| msg.get(at..at + 4).map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]));
        let err_chunk = word(12) == Some(Proc::RDMA_ERROR.0) && word(16) == Some(ErrorCode::ERR_CHUNK.get());
        if self.faults.bend_too_short(msg.len(), msg.len() < MIN_HEADER_LEN && !err_chunk) {
            return Answer::Discard;
        }
        let Ok(h) = FixedFields::decode(msg) else { return Answer::Discard };
        if self.v2.speaking {
            return self.v2.answer(msg, xid, &self.options.profile);
        }
        if self.back_channel() {
            if let Some(c) = reverse::call(msg, &self.options.profile) {
                return Answer::Reverse(c);
            }
        }
        if h.xid != xid || !self.faults.bend_version_ok(h.vers == VERSION) {
            return Answer::Discard;
        }
        let rdma_err = msg.get(field::BODY..field::BODY + 4).map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]));
        let answer = match Proc(h.proc_) {
            Proc::RDMA_MSG | Proc::RDMA_NOMSG => Answer::Reply,
            Proc::RDMA_ERROR => match rdma_err.map(ErrorCode) {
                Some(e @ (ErrorCode::ERR_VERS | ErrorCode::ERR_CHUNK)) => Answer::Error(e.get()),
                _ => Answer::Discard,
            },
            _ => Answer::Discard,
        };
        self.faults.bend_answer(Proc(h.proc_), rdma_err, answer)
    }

    /// Sends `msg` and waits for the reply to `xid`, discarding what does not answer it;
    /// with no reply before the timeout, sends it again, up to `retransmits` times.
    fn call(&mut self, step: &'static str, xid: u32, msg: &[u8]) -> Step<Vec<u8>> {
        if let Some(why) = inline::forbidden(self, msg) {
            return Err(WorkloadError { step, failure: Failure::Refused(why) });
        }
        // Nothing may be sent beyond a grant of 0 (RFC 8166 3.3.1): a new connection starts
        // with one credit (3.3.3).
        if self.faults.bend_zero_grant(self.grant == Some(0)) {
            self.connect()?;
        }
        let mut resent = false;
        for attempt in 0..=self.options.retransmits {
            // A call the connection was lost under is sent again on a new one.
            self.ensure_connected()?;
            self.send(step, msg)?;
            let deadline = Instant::now() + self.options.timeout;
            loop {
                let reply = match self.recv_until(step, deadline) {
                    Ok(r) => r,
                    Err(WorkloadError { failure: Failure::NoReply | Failure::Disconnected, .. })
                        if attempt < self.options.retransmits =>
                    {
                        break
                    }
                    Err(e) => return Err(e),
                };
                match self.answer(&reply, xid) {
                    Answer::Reply if inline::misused(self, msg, &reply) => {}
                    Answer::Reply => {
                        if let Ok(h) = FixedFields::decode(&reply) {
                            self.grant = self.faults.bend_grant(self.grant, Some(h.credit));
                        }
                        return self.agreed(step, reply);
                    }
                    Answer::Backward => self.backward(step, &reply)?,
                    Answer::Reverse(c) => self.answer_reverse(step, c)?,
                    Answer::Fallback => {
                        self.v2.speaking = false;
                        self.send(step, msg)?;
                    }
                    Answer::Error(_) if self.faults.bend_resend_refused(resent) => {
                        resent = true;
                        self.send(step, msg)?;
                    }
                    Answer::Error(e) => return Err(WorkloadError { step, failure: Failure::RdmaError(e) }),
                    Answer::Discard => {}
                }
            }
        }
        Err(WorkloadError { step, failure: Failure::NoReply })
    }

    /// Looks up `name` in the export root; the file handle.
    fn lookup(&mut self, name: &str) -> Step<Vec<u8>> {
        let call = self.call_for(NFSPROC3_LOOKUP, nfs3::lookup_args(&ROOT_FH, name));
        let reply = self.call("LOOKUP", call.xid, &call.msg())?;
        let m = at("LOOKUP", Message::decode(&reply, &self.options.profile))?;
        let rpc = at("LOOKUP", RpcMessage::decode(m.payload))?;
        let status = nfs3::status(rpc.body);
        nfs3::lookup_fh(rpc.body).ok_or(WorkloadError { step: "LOOKUP", failure: Failure::Status(status) })
    }
}

/// Runs the workload on one connection: NULL, LOOKUP, READ through a write chunk, WRITE
/// through a read chunk, READDIR through a reply chunk, a position-zero long call, and a
/// full credit window (`requester/stages.rs`), then the inline calls, the faults' own calls
/// and the Version Two extras. Errors say which step the responder did not answer.
pub fn workload(
    connector: &mut dyn Connector,
    options: &RequesterOptions,
    faults: &RequesterFaults,
) -> Result<(), WorkloadError> {
    let pd = PrivateData::new(options.send_size, options.receive_size, true)
        .map_err(|_| WorkloadError { step: "connect", failure: Failure::Settings })?;
    let mut s = Session::new(connector, options, faults, faults.bend_private_data(pd));
    if options.nfs4_minor.is_some() {
        return nfs41::workload(&mut s);
    }
    s.connect()?;
    s.null_for_the_grant()?;
    inline::configure(&mut s)?;
    s.read_through_write_chunk()?;
    if options.stop_after_first_read {
        return Ok(());
    }
    s.ensure_connected()?;
    s.write_through_read_chunk()?;
    s.readdir_with_reply_chunk()?;
    s.long_call()?;
    s.credit_window()?;
    inline::write_2000(&mut s)?;
    inline::read_1024(&mut s)?;
    faults::faulty_calls(&mut s)?;
    v2::extras(&mut s)?;
    s.closing_null()
}
