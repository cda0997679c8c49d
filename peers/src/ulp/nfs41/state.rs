//! The server's state (RFC 8881 2.4 client IDs, 2.10 sessions, 8 state management, 10
//! delegations) and the back channel's calls (RFC 8881 2.10.3.1, 20).

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::time::{Duration, Instant};

use rpcrdma_codec::rpc::{AcceptStat, ReplyBody, RpcHeader, RpcMessage};

use super::super::tree::{NodeId, Tree};
use super::super::UlpResults;
use super::{BACK_MAX_SLOTS, DEFAULT_CB_PROGRAM, FORE_MAX_OPS, FORE_MAX_SIZE, FORE_MAX_SLOTS, LEASE_TIME};

/// Replies to reverse-direction calls kept for [`super::Shared::callbacks`], the latest.
const EVENTS_KEPT: usize = 1024;
use crate::proto::callback::{call_message, CbCompoundArgs, CbCompoundRes, CbOp, CB_COMPOUND, CB_NULL};
use crate::proto::nfs41::*;

/// The server's fault switches at the upper layer's level (declared with the responder's in
/// `responder::faults`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Faults {
    /// Send a CB_NULL on a connection no back channel was offered on, at EXCHANGE_ID (RFC
    /// 8881 2.10.3.1: only a connection bound to the back channel carries callbacks).
    pub cb_before_back_channel: bool,
    /// Queue, when the back channel is granted, a CB_COMPOUND larger than its
    /// ca_maxrequestsize (RFC 8881 18.36.3).
    pub cb_large_call: bool,
    /// Give up the callbacks outstanding when their back channel connection is lost, rather
    /// than send them again on the next one bound to it (RFC 8167 5.4).
    pub cb_abandoned_on_reconnect: bool,
    /// Fail with NFS4ERR_SERVERFAULT a READ whose result would go into a write chunk of
    /// sixteen segments or more (RFC 8267 6.4.2: a server MUST process such a Write chunk).
    pub read_fails_in_sixteen_segment_chunk: bool,
}

/// CREATE_SESSION4args (RFC 8881 18.36.1): the fields of [`Op::CreateSession`] the server
/// takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CreateSessionArgs {
    /// csa_clientid.
    pub clientid: u64,
    /// csa_sequence.
    pub sequence: u32,
    /// csa_flags.
    pub flags: u32,
    /// csa_fore_chan_attrs.
    pub fore: ChannelAttrs,
    /// csa_back_chan_attrs.
    pub back: ChannelAttrs,
    /// csa_cb_program.
    pub cb_program: u32,
    /// csa_sec_parms.
    pub sec: Vec<CbSec>,
}

/// A reply to one of our reverse-direction calls.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CbEvent {
    pub xid: u32,
    /// CB_NULL or CB_COMPOUND.
    pub proc_: u32,
    /// accept_stat SUCCESS.
    pub accepted: bool,
    /// CB_COMPOUND4res's status, when it decoded (0 for an accepted CB_NULL).
    pub status: Option<u32>,
    /// The status of each operation of CB_COMPOUND4res, in order.
    pub results: Vec<(u32, u32)>,
}

pub(super) struct Client {
    pub owner: Vec<u8>,
    pub verifier: Verifier,
    pub confirmed: bool,
    /// The csa_sequence the next CREATE_SESSION must carry (RFC 8881 18.35.3 eir_sequenceid).
    pub seq: u32,
    /// The last CREATE_SESSION's sequence and results, for its replay (RFC 8881 18.36.4).
    pub cs_cache: Option<(u32, Res)>,
    pub reclaim_complete: bool,
    /// When the lease was last renewed (RFC 8881 8.3: any SEQUENCE of its sessions).
    pub renewed: Instant,
}

pub(super) struct Slot {
    pub seq: u32,
    pub cached: Option<UlpResults>,
}

/// Work for the back channel of one session.
#[derive(Debug, Clone)]
pub(super) enum CbWork {
    Null,
    Recall {
        stateid: Stateid,
        fh: Vec<u8>,
    },
    /// The `cb-large-call` fault's CB_COMPOUND: a tag making it `size` bytes or more.
    Large {
        size: usize,
    },
}

pub(super) struct Session {
    pub clientid: u64,
    pub minor: u32,
    pub fore: ChannelAttrs,
    pub back: ChannelAttrs,
    pub slots: Vec<Slot>,
    pub cb_program: u32,
    pub cb_sec: CbSec,
    /// The connection the back channel is bound to.
    pub back_conn: Option<u64>,
    /// Whether a back channel was ever granted (so its loss is reported, SEQ4_STATUS_*).
    pub wants_back: bool,
    /// Back channel slot 0: its sequence id and whether a call on it awaits its reply.
    pub cb_seq: u32,
    pub cb_busy: bool,
    pub backlog: VecDeque<CbWork>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Kind {
    Open { access: u32, owner: Vec<u8> },
    Deleg { session: SessionId, recalled: bool },
}

/// An open or delegation stateid's state (RFC 8881 8.2).
#[derive(Debug, Clone)]
pub(super) struct StateEntry {
    pub clientid: u64,
    pub node: NodeId,
    pub seqid: u32,
    pub kind: Kind,
}

/// A reverse-direction call awaiting its reply.
struct Pending {
    session: Option<SessionId>,
    /// The connection it was last sent on.
    conn: u64,
    proc_: u32,
    msg: Vec<u8>,
    uses_slot: bool,
}

pub(super) struct State {
    pub tree: Tree,
    pub faults: Faults,
    next_id: u64,
    next_conn: u64,
    next_xid: u32,
    pub clients: HashMap<u64, Client>,
    pub sessions: HashMap<SessionId, Session>,
    /// Open and delegation stateids by their `other` field.
    pub states: HashMap<[u8; 12], StateEntry>,
    /// Change attribute of each object that changed (1 otherwise).
    change: HashMap<NodeId, u64>,
    queues: HashMap<u64, Vec<Vec<u8>>>,
    pending: BTreeMap<u32, Pending>,
    pub events: Vec<CbEvent>,
}

/// The stateid with `seqid` and `other`.
pub(super) fn stateid(seqid: u32, other: &[u8; 12]) -> Stateid {
    let mut s = [0u8; STATEID_LEN];
    s[..4].copy_from_slice(&seqid.to_be_bytes());
    s[4..].copy_from_slice(other);
    s
}

pub(super) fn other_of(s: &Stateid) -> [u8; 12] {
    let mut o = [0u8; 12];
    o.copy_from_slice(&s[4..]);
    o
}

impl State {
    pub fn new(faults: Faults) -> Self {
        State {
            tree: Tree::new(),
            faults,
            next_id: 1,
            next_conn: 1,
            next_xid: 0xcb00_0001,
            clients: HashMap::new(),
            sessions: HashMap::new(),
            states: HashMap::new(),
            change: HashMap::new(),
            queues: HashMap::new(),
            pending: BTreeMap::new(),
            events: Vec::new(),
        }
    }

    fn id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    pub fn connect(&mut self) -> u64 {
        self.next_conn += 1;
        self.next_conn
    }

    /// A connection went: its queue goes, and the back channels it carried lose it; their
    /// unanswered calls wait for a new one (RFC 8167 5.4), or go again at once on the one the
    /// client bound the back channel to meanwhile (RFC 8881 2.10.6.2).
    pub fn disconnect(&mut self, conn: u64) {
        self.queues.remove(&conn);
        for s in self.sessions.values_mut() {
            if s.back_conn == Some(conn) {
                s.back_conn = None;
            }
        }
        let moved: Vec<(SessionId, u64)> = self
            .pending
            .values()
            .filter(|p| p.conn == conn && p.uses_slot)
            .filter_map(|p| {
                let sid = p.session?;
                Some((sid, self.sessions.get(&sid)?.back_conn?))
            })
            .collect();
        for (sid, to) in moved {
            self.resend(sid, conn, to);
        }
    }

    /// The CB_COMPOUNDs of `sid` outstanding on the lost connection `from`, sent again on `to`
    /// (RFC 8167 5.4); `cb-abandoned-on-reconnect` gives them up, their slot freed.
    fn resend(&mut self, sid: SessionId, from: u64, to: u64) {
        let lost = |p: &Pending| p.session == Some(sid) && p.uses_slot && p.conn == from;
        if self.faults.cb_abandoned_on_reconnect {
            self.pending.retain(|_, p| !lost(p));
            if let Some(s) = self.sessions.get_mut(&sid) {
                s.cb_busy = false;
            }
            self.pump(sid);
            return;
        }
        let mut again = Vec::new();
        for p in self.pending.values_mut().filter(|p| lost(p)) {
            p.conn = to;
            again.push(p.msg.clone());
        }
        self.queues.entry(to).or_default().extend(again);
    }

    pub fn change_of(&self, id: NodeId) -> u64 {
        self.change.get(&id).copied().unwrap_or(1)
    }

    pub fn changed(&mut self, id: NodeId) {
        *self.change.entry(id).or_insert(1) += 1;
    }

    /// A new stateid for `entry`.
    pub fn new_state(&mut self, entry: StateEntry) -> Stateid {
        let mut other = [0u8; 12];
        other[0] = if matches!(entry.kind, Kind::Open { .. }) { b'O' } else { b'D' };
        other[4..].copy_from_slice(&self.id().to_be_bytes());
        let s = stateid(entry.seqid, &other);
        self.states.insert(other, entry);
        s
    }

    /// Forgets a client and everything it holds.
    pub fn purge_client(&mut self, clientid: u64) {
        self.clients.remove(&clientid);
        self.sessions.retain(|_, s| s.clientid != clientid);
        self.states.retain(|_, e| e.clientid != clientid);
        let sessions = &self.sessions;
        self.pending.retain(|_, p| p.session.is_none_or(|sid| sessions.contains_key(&sid)));
    }

    /// Forgets the clients whose lease ran out twice over by `now` (RFC 8881 8.3: the server
    /// may release their state), so a long `serve` does not grow with clients that vanished.
    pub fn expire(&mut self, now: Instant) {
        let lease = Duration::from_secs(2 * LEASE_TIME as u64);
        let gone: Vec<u64> = self
            .clients
            .iter()
            .filter(|(_, c)| now.saturating_duration_since(c.renewed) > lease)
            .map(|(id, _)| *id)
            .collect();
        gone.into_iter().for_each(|id| self.purge_client(id));
    }

    /// Renews the lease of the client of session `sid`.
    pub fn renew(&mut self, sid: &SessionId) {
        if let Some(c) = self.sessions.get(sid).and_then(|s| self.clients.get_mut(&s.clientid)) {
            c.renewed = Instant::now();
        }
    }

    /// EXCHANGE_ID (RFC 8881 18.35.4, the cases of a client owner's record simplified: an
    /// unknown owner or a new verifier gets a new client ID; the same owner and verifier get
    /// theirs back).
    pub fn exchange_id(&mut self, conn: u64, verifier: Verifier, owner: Vec<u8>, flags: u32) -> Result<Res, u32> {
        self.expire(Instant::now());
        if self.faults.cb_before_back_channel {
            self.queue_call(conn, None, CB_NULL, DEFAULT_CB_PROGRAM, &CbSec::None, Vec::new(), false);
        }
        let known = self.clients.iter().find(|(_, c)| c.owner == owner).map(|(id, c)| (*id, c.verifier, c.confirmed));
        let clientid = match known {
            Some((id, v, _)) if v == verifier => id,
            _ if flags & EXCHGID4_FLAG_UPD_CONFIRMED_REC_A != 0 => return Err(NFS4ERR_NOENT),
            found => {
                if let Some((old, ..)) = found {
                    self.purge_client(old);
                }
                let id = self.id();
                self.clients.insert(
                    id,
                    Client {
                        owner,
                        verifier,
                        confirmed: false,
                        seq: 1,
                        cs_cache: None,
                        reclaim_complete: false,
                        renewed: Instant::now(),
                    },
                );
                id
            }
        };
        let c = &self.clients[&clientid];
        let confirmed = if c.confirmed { EXCHGID4_FLAG_CONFIRMED_R } else { 0 };
        Ok(Res::ExchangeId {
            clientid,
            sequenceid: c.seq,
            flags: EXCHGID4_FLAG_USE_NON_PNFS | confirmed,
            minor_id: 0,
            major_id: b"rpcrdma-reference".to_vec(),
            scope: b"rpcrdma-reference".to_vec(),
        })
    }

    /// CREATE_SESSION (RFC 8881 18.36) on connection `conn` of a COMPOUND of minor version
    /// `minor`.
    pub fn create_session(&mut self, conn: u64, minor: u32, args: CreateSessionArgs) -> Result<Res, u32> {
        let CreateSessionArgs { clientid, sequence, flags, fore, back, cb_program, sec } = args;
        let client = self.clients.get_mut(&clientid).ok_or(NFS4ERR_STALE_CLIENTID)?;
        if let Some((seq, res)) = &client.cs_cache {
            if *seq == sequence {
                return Ok(res.clone());
            }
        }
        if sequence != client.seq {
            return Err(NFS4ERR_SEQ_MISORDERED);
        }
        if fore.maxrequests == 0 || fore.maxoperations == 0 {
            return Err(NFS4ERR_INVAL);
        }
        let fore = ChannelAttrs {
            headerpadsize: 0,
            maxrequestsize: fore.maxrequestsize.min(FORE_MAX_SIZE),
            maxresponsesize: fore.maxresponsesize.min(FORE_MAX_SIZE),
            maxresponsesize_cached: fore.maxresponsesize_cached.min(FORE_MAX_SIZE),
            maxoperations: fore.maxoperations.min(FORE_MAX_OPS),
            maxrequests: fore.maxrequests.min(FORE_MAX_SLOTS),
            rdma_ird: None,
        };
        // The back channel's attributes are the client's (its receive resources), its slot
        // count bounded (RFC 8881 18.36.3: the server may lower them).
        let back = ChannelAttrs {
            headerpadsize: 0,
            maxrequests: back.maxrequests.clamp(1, BACK_MAX_SLOTS),
            rdma_ird: None,
            ..back
        };
        let with_back = flags & CREATE_SESSION4_FLAG_CONN_BACK_CHAN != 0;
        let mut sessionid = [0u8; NFS4_SESSIONID_SIZE];
        sessionid[..8].copy_from_slice(&clientid.to_be_bytes());
        sessionid[8..].copy_from_slice(&self.id().to_be_bytes());
        let cb_sec = sec.into_iter().find(|s| !matches!(s, CbSec::Gss { .. })).unwrap_or(CbSec::None);
        let res = Res::CreateSession {
            sessionid,
            sequence,
            flags: if with_back { CREATE_SESSION4_FLAG_CONN_BACK_CHAN } else { 0 },
            fore,
            back,
        };
        let client = self.clients.get_mut(&clientid).expect("found above");
        client.confirmed = true;
        client.renewed = Instant::now();
        client.seq = sequence.wrapping_add(1);
        client.cs_cache = Some((sequence, res.clone()));
        let slots = (0..fore.maxrequests).map(|_| Slot { seq: 0, cached: None }).collect();
        self.sessions.insert(
            sessionid,
            Session {
                clientid,
                minor,
                fore,
                back,
                slots,
                cb_program,
                cb_sec,
                back_conn: None,
                wants_back: false,
                cb_seq: 0,
                cb_busy: false,
                backlog: VecDeque::new(),
            },
        );
        if with_back {
            self.bind_back(conn, sessionid);
        }
        Ok(res)
    }

    /// Binds the back channel of `sid` to `conn`: CB_NULL probes it (as nfsd4_probe_callback
    /// does), then the calls still unanswered go again (RFC 8167 5.4).
    pub fn bind_back(&mut self, conn: u64, sid: SessionId) {
        let Some(s) = self.sessions.get_mut(&sid) else { return };
        let (fresh, lost) = (!s.wants_back, s.wants_back && s.back_conn.is_none());
        s.back_conn = Some(conn);
        s.wants_back = true;
        let back = s.back;
        s.backlog.push_front(CbWork::Null);
        if fresh && self.faults.cb_large_call {
            s.backlog.push_back(CbWork::Large { size: back.maxrequestsize as usize + 4 });
        }
        self.pump(sid);
        if lost {
            // The CB_COMPOUNDs outstanding on the connections lost (a CB_NULL probe goes anyway).
            let from: Vec<u64> = self
                .pending
                .values()
                .filter(|p| p.session == Some(sid) && p.uses_slot && p.conn != conn)
                .map(|p| p.conn)
                .collect();
            for f in from {
                self.resend(sid, f, conn);
            }
        }
    }

    /// Sends what the back channel of `sid` can take now: every CB_NULL, and one
    /// CB_COMPOUND while slot 0 is free (RFC 8881 2.10.6.1: one call per slot at a time).
    pub fn pump(&mut self, sid: SessionId) {
        loop {
            let Some(s) = self.sessions.get_mut(&sid) else { return };
            let Some(conn) = s.back_conn else { return };
            let Some(work) = s.backlog.front().cloned() else { return };
            let (program, sec, minor) = (s.cb_program, s.cb_sec.clone(), s.minor);
            match work {
                CbWork::Null => {
                    s.backlog.pop_front();
                    self.queue_call(conn, Some(sid), CB_NULL, program, &sec, Vec::new(), false);
                }
                CbWork::Recall { .. } | CbWork::Large { .. } if s.cb_busy => return,
                CbWork::Recall { stateid, fh } => {
                    s.backlog.pop_front();
                    let args =
                        self.cb_compound(sid, minor, Vec::new(), vec![CbOp::Recall { stateid, truncate: false, fh }]);
                    self.queue_call(conn, Some(sid), CB_COMPOUND, program, &sec, args, true);
                }
                CbWork::Large { size } => {
                    s.backlog.pop_front();
                    let args = self.cb_compound(sid, minor, vec![b'x'; size], Vec::new());
                    self.queue_call(conn, Some(sid), CB_COMPOUND, program, &sec, args, true);
                }
            }
        }
    }

    /// CB_COMPOUND4args: CB_SEQUENCE on back channel slot 0, then `ops`; takes the slot.
    fn cb_compound(&mut self, sid: SessionId, minor: u32, tag: Vec<u8>, ops: Vec<CbOp>) -> Vec<u8> {
        let s = self.sessions.get_mut(&sid).expect("pumped session");
        s.cb_seq = s.cb_seq.wrapping_add(1);
        s.cb_busy = true;
        let sequence = CbOp::Sequence {
            sessionid: sid,
            sequenceid: s.cb_seq,
            slotid: 0,
            highest_slotid: 0,
            cachethis: false,
            referring: Vec::new(),
        };
        let ops = std::iter::once(sequence).chain(ops).collect();
        CbCompoundArgs { tag, minorversion: minor, callback_ident: 0, ops }.encode()
    }

    #[allow(clippy::too_many_arguments)]
    fn queue_call(
        &mut self,
        conn: u64,
        session: Option<SessionId>,
        proc_: u32,
        program: u32,
        sec: &CbSec,
        args: Vec<u8>,
        uses_slot: bool,
    ) {
        let xid = self.next_xid;
        self.next_xid = self.next_xid.wrapping_add(1);
        let msg = call_message(xid, program, proc_, sec, &args);
        self.queues.entry(conn).or_default().push(msg.clone());
        self.pending.insert(xid, Pending { session, conn, proc_, msg, uses_slot });
    }

    /// Queues the recall of delegation `other` to its holder's back channel (RFC 8881 10.4.1).
    pub fn recall(&mut self, other: [u8; 12]) {
        let Some(e) = self.states.get_mut(&other) else { return };
        let Kind::Deleg { session, recalled } = &mut e.kind else { return };
        if *recalled {
            return;
        }
        *recalled = true;
        let (sid, stateid, fh) = (*session, stateid(e.seqid, &other), self.tree.handle(e.node));
        if let Some(s) = self.sessions.get_mut(&sid) {
            s.backlog.push_back(CbWork::Recall { stateid, fh });
            self.pump(sid);
        }
    }

    pub fn take_calls(&mut self, conn: u64) -> Vec<Vec<u8>> {
        self.queues.get_mut(&conn).map(std::mem::take).unwrap_or_default()
    }

    /// A reverse-direction reply: ends its call, frees the back channel slot it held, and
    /// lets the next call go. Replies to no call of ours are ignored.
    pub fn reverse_reply(&mut self, msg: &[u8]) {
        let Ok(m) = RpcMessage::decode(msg) else { return };
        let RpcHeader::Reply(h) = m.header else { return };
        let Some(p) = self.pending.remove(&h.xid) else { return };
        let accepted = matches!(h.body, ReplyBody::Accepted { stat: AcceptStat::Success, .. });
        let (status, results) = match (accepted, p.proc_) {
            (true, CB_NULL) => (Some(NFS4_OK), Vec::new()),
            (true, _) => match CbCompoundRes::decode(m.body) {
                Ok(r) => (Some(r.status), r.results.iter().map(|o| (o.op, o.status)).collect()),
                Err(_) => (None, Vec::new()),
            },
            _ => (None, Vec::new()),
        };
        if self.events.len() == EVENTS_KEPT {
            self.events.remove(0);
        }
        self.events.push(CbEvent { xid: h.xid, proc_: p.proc_, accepted, status, results });
        if let Some(sid) = p.session {
            if p.uses_slot {
                if let Some(s) = self.sessions.get_mut(&sid) {
                    s.cb_busy = false;
                }
            }
            self.pump(sid);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_client_whose_lease_ran_out_is_forgotten() {
        let mut st = State::new(Faults::default());
        let Ok(Res::ExchangeId { clientid, .. }) = st.exchange_id(1, [0; 8], b"a".to_vec(), 0) else { panic!() };
        let fore = ChannelAttrs { maxrequests: 1, maxoperations: 4, maxrequestsize: 4096, ..Default::default() };
        let args = CreateSessionArgs { clientid, sequence: 1, flags: 0, fore, back: fore, cb_program: 1, sec: vec![] };
        st.create_session(1, 1, args).unwrap();
        st.expire(Instant::now() + Duration::from_secs(LEASE_TIME as u64));
        assert!(st.clients.contains_key(&clientid), "within two leases");
        st.expire(Instant::now() + Duration::from_secs(3 * LEASE_TIME as u64));
        assert!(!st.clients.contains_key(&clientid));
        assert!(st.sessions.is_empty());
    }
}
