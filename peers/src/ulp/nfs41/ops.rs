//! COMPOUND of minor versions 1 and 2 (RFC 8881 16.2, 2.10.6) and its operations.

use rpcrdma_codec::xdr::Reader;

use super::super::nfs3::{ACCESS_DIR, ACCESS_FILE, ACCESS_LINK, COOKIEVERF, MAX_READ, WRITE_VERF};
use super::super::tree::{Ftype, Kind as NodeKind, NodeId};
use super::super::xdr::{put, put_opaque, Builder};
use super::super::UlpOutcome;
use super::attrs;
use super::state::{other_of, stateid, CreateSessionArgs, Kind, State, StateEntry};
use crate::proto::nfs41::*;

/// The operations of a COMPOUND so far: where it runs and what it holds.
struct Cx {
    conn: u64,
    minor: u32,
    session: Option<(SessionId, usize)>,
    current: Option<NodeId>,
    saved: Option<NodeId>,
    /// The current stateid (RFC 8881 16.2.3.1.2).
    current_stateid: Option<Stateid>,
    /// The write list offered with the call (each chunk's segment count), and the
    /// DDP-eligible results so far: the next one's chunk (RFC 8267 6.4.1).
    write_list: Vec<u32>,
    items: usize,
}

/// The current stateid's special value: seqid 1, other all zeros (RFC 8881 8.2.3).
const CURRENT_STATEID: Stateid = [0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
/// The invalid special stateid CLOSE returns (RFC 8881 18.2.4).
const INVALID_STATEID: Stateid = [0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
const ANONYMOUS: Stateid = [0; STATEID_LEN];
const BYPASS: Stateid = [0xff; STATEID_LEN];

/// An operation's successful results: its resok, and a DDP-eligible item after it.
enum Done {
    Res(Res),
    Item(Res, Vec<u8>),
}

/// COMPOUND4args of minor version 1 or 2 to COMPOUND4res.
pub(super) fn compound(st: &mut State, conn: u64, args: &[u8], write_list: &[u32]) -> UlpOutcome {
    let mut r = Reader::new(args);
    let (Ok(tag), Ok(minor), Ok(count)) = (r.opaque("tag", u32::MAX), r.u32("minorversion"), r.u32("argarray")) else {
        return UlpOutcome::GarbageArgs;
    };
    let mut b = Builder::default();
    let (mut status, mut done) = (NFS4_OK, 0u32);
    let mut cx = Cx {
        conn,
        minor,
        session: None,
        current: None,
        saved: None,
        current_stateid: None,
        write_list: write_list.to_vec(),
        items: 0,
    };
    let last = if minor == MINOR_V1 { OP_LAST_V41 } else { OP_LAST_V42 };
    for i in 0..count {
        let at = r.position();
        let decoded = Op::decode(&mut r);
        let opnum = args.get(at..at + 4).map_or(OP_ILLEGAL, |w| u32::from_be_bytes([w[0], w[1], w[2], w[3]]));
        let resop = if (OP_ACCESS..=last).contains(&opnum) { opnum } else { OP_ILLEGAL };
        done += 1;
        let outcome = match decoded {
            Err(_) => Err(NFS4ERR_BADXDR),
            Ok(op) => match session_rule(&op, i, count, &cx) {
                Some(s) => Err(s),
                None => {
                    if let Op::Sequence { sessionid, sequenceid, slotid, highest_slotid, .. } = op {
                        match sequence(st, &mut cx, sessionid, sequenceid, slotid, highest_slotid, count) {
                            Ok(Seq::Replay(cached)) => return UlpOutcome::Success(cached),
                            Ok(Seq::New(res)) => Ok(Done::Res(res)),
                            Err(s) => Err(s),
                        }
                    } else {
                        operation(st, &mut cx, op, last)
                    }
                }
            },
        };
        status = match outcome {
            Ok(Done::Res(res)) => {
                let mut x = Xdr::new();
                x.u32(resop).u32(NFS4_OK);
                res.encode(&mut x);
                b.bytes().extend_from_slice(&x.0);
                NFS4_OK
            }
            Ok(Done::Item(res, data)) => {
                cx.items += 1;
                let mut x = Xdr::new();
                x.u32(resop).u32(NFS4_OK);
                res.encode(&mut x);
                b.bytes().extend_from_slice(&x.0);
                b.item(&data);
                NFS4_OK
            }
            Err(s) => {
                put(b.bytes(), resop);
                put(b.bytes(), s);
                if resop == OP_SETATTR {
                    // SETATTR4res: attrsset whatever the status (RFC 8881 18.30.2).
                    put(b.bytes(), 0);
                }
                s
            }
        };
        if status != NFS4_OK {
            break;
        }
    }
    let mut prefix = Vec::new();
    put(&mut prefix, status);
    put_opaque(&mut prefix, tag);
    put(&mut prefix, done);
    let results = b.finish(prefix);
    // The slot caches the reply (RFC 8881 2.10.6.1.3).
    if let Some((sid, slot)) = cx.session {
        if let Some(s) = st.sessions.get_mut(&sid) {
            s.slots[slot].cached = Some(results.clone());
        }
    }
    UlpOutcome::Success(results)
}

/// RFC 8881 2.10.6, 18.46.3: SEQUENCE first, or one of the operations that may go without it,
/// alone.
fn session_rule(op: &Op, i: u32, count: u32, cx: &Cx) -> Option<u32> {
    let sessionless = matches!(
        op,
        Op::ExchangeId { .. }
            | Op::CreateSession { .. }
            | Op::DestroySession(_)
            | Op::DestroyClientId(_)
            | Op::BindConnToSession { .. }
    );
    match (i, op) {
        (0, Op::Sequence { .. }) => None,
        (0, _) if sessionless && count == 1 => None,
        (0, _) if sessionless => Some(NFS4ERR_NOT_ONLY_OP),
        (0, _) => Some(NFS4ERR_OP_NOT_IN_SESSION),
        (_, Op::Sequence { .. }) => Some(NFS4ERR_SEQUENCE_POS),
        // Inside a session: EXCHANGE_ID and DESTROY_SESSION may follow SEQUENCE.
        _ if cx.session.is_some() => None,
        _ => Some(NFS4ERR_OP_NOT_IN_SESSION),
    }
}

enum Seq {
    New(Res),
    Replay(super::super::UlpResults),
}

/// SEQUENCE (RFC 8881 18.46.3, 2.10.6.1).
fn sequence(
    st: &mut State,
    cx: &mut Cx,
    sid: SessionId,
    seq: u32,
    slot: u32,
    _highest: u32,
    count: u32,
) -> Result<Seq, u32> {
    let s = st.sessions.get_mut(&sid).ok_or(NFS4ERR_BADSESSION)?;
    let n = s.slots.len();
    let sl = s.slots.get_mut(slot as usize).ok_or(NFS4ERR_BADSLOT)?;
    if seq == sl.seq && sl.seq != 0 {
        return match &sl.cached {
            Some(c) => Ok(Seq::Replay(c.clone())),
            None => Err(NFS4ERR_RETRY_UNCACHED_REP),
        };
    }
    if seq != sl.seq.wrapping_add(1) {
        return Err(NFS4ERR_SEQ_MISORDERED);
    }
    sl.seq = seq;
    sl.cached = None;
    cx.session = Some((sid, slot as usize));
    let (back_down, maxoperations) = (s.wants_back && s.back_conn.is_none(), s.fore.maxoperations);
    st.renew(&sid);
    if count > maxoperations {
        return Err(NFS4ERR_TOO_MANY_OPS);
    }
    // The back channel's state: lost once granted (RFC 8881 18.46.3).
    let flags = if back_down { SEQ4_STATUS_CB_PATH_DOWN_SESSION } else { 0 };
    let high = n as u32 - 1;
    Ok(Seq::New(Res::Sequence {
        sessionid: sid,
        sequenceid: seq,
        slotid: slot,
        highest_slotid: high,
        target_highest_slotid: high,
        status_flags: flags,
    }))
}

fn clientid_of(st: &State, cx: &Cx) -> Option<u64> {
    cx.session.and_then(|(sid, _)| st.sessions.get(&sid)).map(|s| s.clientid)
}

fn cur(cx: &Cx) -> Result<NodeId, u32> {
    cx.current.ok_or(NFS4ERR_NOFILEHANDLE)
}

/// A stateid an I/O operation names: special ones pass, the current stateid is substituted,
/// others must name an open or a delegation (RFC 8881 8.2.3, 8.2.4).
fn check_stateid(st: &State, cx: &Cx, s: &Stateid) -> Result<(), u32> {
    let s = if *s == CURRENT_STATEID { cx.current_stateid.ok_or(NFS4ERR_BAD_STATEID)? } else { *s };
    if s == ANONYMOUS || s == BYPASS || st.states.contains_key(&other_of(&s)) {
        Ok(())
    } else {
        Err(NFS4ERR_BAD_STATEID)
    }
}

fn operation(st: &mut State, cx: &mut Cx, op: Op, last: u32) -> Result<Done, u32> {
    let ok = |res| Ok(Done::Res(res));
    match op {
        Op::ExchangeId { verifier, owner, flags, .. } => ok(st.exchange_id(cx.conn, verifier, owner, flags)?),
        Op::CreateSession { clientid, sequence, flags, fore, back, cb_program, sec } => {
            let args = CreateSessionArgs { clientid, sequence, flags, fore, back, cb_program, sec };
            ok(st.create_session(cx.conn, cx.minor, args)?)
        }
        Op::BindConnToSession { sessionid, dir, .. } => {
            if !st.sessions.contains_key(&sessionid) {
                return Err(NFS4ERR_BADSESSION);
            }
            let back = matches!(dir, CDFC4_BACK | CDFC4_FORE_OR_BOTH | CDFC4_BACK_OR_BOTH);
            if back {
                st.bind_back(cx.conn, sessionid);
            }
            let dir = match dir {
                CDFC4_FORE => CDFS4_FORE,
                CDFC4_BACK => CDFS4_BACK,
                CDFC4_FORE_OR_BOTH | CDFC4_BACK_OR_BOTH => CDFS4_BOTH,
                _ => return Err(NFS4ERR_INVAL),
            };
            ok(Res::BindConnToSession { sessionid, dir, use_rdma: false })
        }
        Op::DestroySession(sid) => {
            st.sessions.remove(&sid).ok_or(NFS4ERR_BADSESSION)?;
            if cx.session.is_some_and(|(s, _)| s == sid) {
                cx.session = None;
            }
            ok(Res::Empty)
        }
        Op::DestroyClientId(id) => {
            if !st.clients.contains_key(&id) {
                return Err(NFS4ERR_STALE_CLIENTID);
            }
            if st.sessions.values().any(|s| s.clientid == id) {
                return Err(NFS4ERR_CLIENTID_BUSY);
            }
            st.purge_client(id);
            ok(Res::Empty)
        }
        Op::ReclaimComplete { one_fs } => {
            let id = clientid_of(st, cx).ok_or(NFS4ERR_OP_NOT_IN_SESSION)?;
            let c = st.clients.get_mut(&id).ok_or(NFS4ERR_STALE_CLIENTID)?;
            if !one_fs {
                if c.reclaim_complete {
                    return Err(NFS4ERR_COMPLETE_ALREADY);
                }
                c.reclaim_complete = true;
            }
            ok(Res::Empty)
        }
        Op::PutRootFh => {
            cx.current = Some(st.tree.root());
            ok(Res::Empty)
        }
        Op::PutFh(fh) => {
            cx.current = Some(st.tree.resolve(&fh)?);
            ok(Res::Empty)
        }
        Op::GetFh => ok(Res::GetFh(st.tree.handle(cur(cx)?))),
        Op::SaveFh => {
            cx.saved = Some(cur(cx)?);
            ok(Res::Empty)
        }
        Op::RestoreFh => {
            cx.current = Some(cx.saved.ok_or(NFS4ERR_RESTOREFH)?);
            ok(Res::Empty)
        }
        Op::Lookup(name) => {
            let dir = cur(cx)?;
            if name.is_empty() {
                return Err(NFS4ERR_INVAL);
            }
            if matches!(st.tree.node(dir).kind, NodeKind::Symlink(_)) {
                return Err(NFS4ERR_SYMLINK);
            }
            cx.current = Some(st.tree.lookup(dir, &name)?);
            ok(Res::Empty)
        }
        Op::LookupP => {
            let dir = cur(cx)?;
            st.tree.children(dir)?;
            if dir == st.tree.root() {
                return Err(NFS4ERR_NOENT);
            }
            cx.current = Some(st.tree.node(dir).parent);
            ok(Res::Empty)
        }
        Op::SecInfoNoName(style) => {
            let id = cur(cx)?;
            if style == SECINFO_STYLE4_PARENT && id == st.tree.root() {
                return Err(NFS4ERR_NOENT);
            }
            // SECINFO_NO_NAME consumes the current filehandle (RFC 8881 18.45.3).
            cx.current = None;
            ok(Res::SecInfo(vec![AUTH_SYS]))
        }
        Op::GetAttr(req) => {
            let id = cur(cx)?;
            ok(Res::GetAttr(attrs::encode(&st.tree, st.change_of(id), id, &req)))
        }
        Op::Access(want) => {
            let id = cur(cx)?;
            let granted = match st.tree.attrs(id).ftype {
                Ftype::Reg => ACCESS_FILE,
                Ftype::Dir => ACCESS_DIR,
                Ftype::Lnk => ACCESS_LINK,
            };
            let known =
                ACCESS4_READ | ACCESS4_LOOKUP | ACCESS4_MODIFY | ACCESS4_EXTEND | ACCESS4_DELETE | ACCESS4_EXECUTE;
            ok(Res::Access { supported: want & known, access: want & known & granted })
        }
        Op::Open { share_access, clientid: _, owner, how, claim, .. } => open(st, cx, share_access, owner, how, claim),
        Op::Close { stateid: s, .. } => {
            let s = if s == CURRENT_STATEID { cx.current_stateid.ok_or(NFS4ERR_BAD_STATEID)? } else { s };
            match st.states.get(&other_of(&s)) {
                Some(StateEntry { kind: Kind::Open { .. }, .. }) => {
                    st.states.remove(&other_of(&s));
                    ok(Res::Stateid(INVALID_STATEID))
                }
                _ => Err(NFS4ERR_BAD_STATEID),
            }
        }
        Op::Read { stateid: s, offset, count } => {
            let id = cur(cx)?;
            check_stateid(st, cx, &s)?;
            // `read-fails-in-sixteen-segment-chunk`: RFC 8267 6.4.2 lets a client send a
            // Write chunk of sixteen segments; this READ's is its (6.4.1).
            if st.faults.read_fails_in_sixteen_segment_chunk && cx.write_list.get(cx.items).is_some_and(|&n| n >= 16) {
                return Err(NFS4ERR_SERVERFAULT);
            }
            let (data, eof) = st.tree.read(id, offset, count.min(MAX_READ))?;
            let data = data.to_vec();
            Ok(Done::Item(Res::Read { eof, data: data.clone(), read: None }, data))
        }
        Op::Other(OP_READLINK) => {
            let id = cur(cx)?;
            let link = st.tree.readlink(id)?.to_vec();
            Ok(Done::Item(Res::Readlink(link.clone()), link))
        }
        Op::Write { stateid: s, offset, stable: _, data } => {
            let id = cur(cx)?;
            check_stateid(st, cx, &s)?;
            st.tree.write(id, offset, &data)?;
            st.changed(id);
            ok(Res::Write { count: data.len() as u32, committed: FILE_SYNC4, verifier: WRITE_VERF })
        }
        Op::Commit { .. } => {
            let id = cur(cx)?;
            if st.tree.attrs(id).ftype != Ftype::Reg {
                return Err(if st.tree.attrs(id).ftype == Ftype::Dir { NFS4ERR_ISDIR } else { NFS4ERR_SYMLINK });
            }
            ok(Res::Commit(WRITE_VERF))
        }
        Op::SetAttr { stateid: s, attrs: a } => {
            let id = cur(cx)?;
            check_stateid(st, cx, &s)?;
            let (size, set) = attrs::settable(&a)?;
            if let Some(size) = size {
                st.tree.set_size(id, size)?;
            }
            st.changed(id);
            ok(Res::SetAttr(set))
        }
        Op::Readdir { cookie, verifier, maxcount, attrs: req, .. } => readdir(st, cx, cookie, verifier, maxcount, &req),
        Op::TestStateid(ids) => {
            let codes = ids
                .iter()
                .map(|s| if st.states.contains_key(&other_of(s)) { NFS4_OK } else { NFS4ERR_BAD_STATEID })
                .collect();
            ok(Res::TestStateid(codes))
        }
        Op::FreeStateid(s) => match st.states.get(&other_of(&s)).map(|e| e.kind.clone()) {
            None => Err(NFS4ERR_BAD_STATEID),
            // An open stateid is freed by CLOSE (RFC 8881 18.38.3: NFS4ERR_LOCKS_HELD).
            Some(Kind::Open { .. }) => Err(NFS4ERR_LOCKS_HELD),
            Some(Kind::Deleg { .. }) => {
                st.states.remove(&other_of(&s));
                ok(Res::Empty)
            }
        },
        Op::DelegReturn(s) => match st.states.get(&other_of(&s)).map(|e| e.kind.clone()) {
            Some(Kind::Deleg { .. }) => {
                st.states.remove(&other_of(&s));
                ok(Res::Empty)
            }
            _ => Err(NFS4ERR_BAD_STATEID),
        },
        Op::Sequence { .. } => Err(NFS4ERR_SEQUENCE_POS),
        Op::Other(n) if (OP_ACCESS..=last).contains(&n) => Err(NFS4ERR_NOTSUPP),
        _ => Err(NFS4ERR_OP_ILLEGAL),
    }
}

/// OPEN (RFC 8881 18.16): CLAIM_NULL and CLAIM_FH; a read delegation when the client has a
/// back channel; an OPEN for writing of a file another client holds a delegation on recalls
/// it and is NFS4ERR_DELAY (RFC 8881 10.4.1).
fn open(st: &mut State, cx: &mut Cx, access: u32, owner: Vec<u8>, how: OpenHow, claim: Claim) -> Result<Done, u32> {
    let clientid = clientid_of(st, cx).ok_or(NFS4ERR_OP_NOT_IN_SESSION)?;
    let share = access & OPEN4_SHARE_ACCESS_BOTH;
    if share == 0 {
        return Err(NFS4ERR_INVAL);
    }
    let dir = cur(cx)?;
    let before = st.change_of(dir);
    let (id, attrset) = match claim {
        Claim::Fh => (dir, Vec::new()),
        Claim::Null(name) => {
            if matches!(st.tree.node(dir).kind, NodeKind::Symlink(_)) {
                return Err(NFS4ERR_SYMLINK);
            }
            st.tree.children(dir)?;
            if name.is_empty() {
                return Err(NFS4ERR_INVAL);
            }
            match how {
                OpenHow::NoCreate => (st.tree.lookup(dir, &name)?, Vec::new()),
                OpenHow::Unchecked(ref a) | OpenHow::Guarded(ref a) => {
                    let guarded = matches!(how, OpenHow::Guarded(_));
                    let (size, set) = attrs::settable(a)?;
                    let (id, existed) = st.tree.create(dir, &name, guarded, None)?;
                    if let Some(size) = size {
                        st.tree.set_size(id, size)?;
                    }
                    if !existed {
                        st.changed(dir);
                    }
                    (id, set)
                }
                OpenHow::Exclusive(verf) => create_exclusive(st, dir, &name, verf, Vec::new())?,
                OpenHow::Exclusive41(verf, a) => {
                    let (size, set) = attrs::settable(&a)?;
                    let (id, set) = create_exclusive(st, dir, &name, verf, set)?;
                    if let Some(size) = size {
                        st.tree.set_size(id, size)?;
                    }
                    (id, set)
                }
            }
        }
        Claim::Other(_) => return Err(NFS4ERR_NOTSUPP),
    };
    match st.tree.node(id).kind {
        NodeKind::Dir(_) => return Err(NFS4ERR_ISDIR),
        NodeKind::Symlink(_) => return Err(NFS4ERR_SYMLINK),
        NodeKind::File(_) => {}
    }
    // Delegations of other clients on the file: an open for writing recalls them.
    let others: Vec<[u8; 12]> = st
        .states
        .iter()
        .filter(|(_, e)| e.node == id && e.clientid != clientid && matches!(e.kind, Kind::Deleg { .. }))
        .map(|(o, _)| *o)
        .collect();
    if share & OPEN4_SHARE_ACCESS_WRITE != 0 && !others.is_empty() {
        for o in others {
            st.recall(o);
        }
        return Err(NFS4ERR_DELAY);
    }
    // One open stateid per open-owner and file (RFC 8881 9.1.4.1): a new OPEN bumps its seqid.
    let mine = st.states.iter_mut().find(|(_, e)| {
        e.node == id && e.clientid == clientid && matches!(&e.kind, Kind::Open { owner: o, .. } if *o == owner)
    });
    let open_sid = match mine {
        Some((other, e)) => {
            e.seqid = e.seqid.wrapping_add(1);
            if let Kind::Open { access: a, .. } = &mut e.kind {
                *a |= share;
            }
            stateid(e.seqid, other)
        }
        None => st.new_state(StateEntry { clientid, node: id, seqid: 1, kind: Kind::Open { access: share, owner } }),
    };
    cx.current_stateid = Some(open_sid);
    let delegation = delegation(st, cx, clientid, id, access);
    cx.current = Some(id);
    let cinfo = (true, before, st.change_of(dir));
    Ok(Done::Res(Res::Open { stateid: open_sid, cinfo, rflags: OPEN4_RESULT_LOCKTYPE_POSIX, attrset, delegation }))
}

fn create_exclusive(
    st: &mut State,
    dir: NodeId,
    name: &[u8],
    verf: Verifier,
    set: Vec<u32>,
) -> Result<(NodeId, Vec<u32>), u32> {
    let (id, existed) = st.tree.create(dir, name, true, Some(verf))?;
    if !existed {
        st.changed(dir);
    }
    Ok((id, set))
}

/// OPEN_DELEGATE_READ for a read-only open when the client's session has a back channel,
/// nobody else has the file open for writing, the client holds no delegation on it yet and
/// did not ask for none (RFC 8881 10.4, 18.16.3).
fn delegation(st: &mut State, cx: &Cx, clientid: u64, id: NodeId, access: u32) -> Delegation {
    let Some((sid, _)) = cx.session else { return Delegation::None };
    let back = st.sessions.get(&sid).is_some_and(|s| s.back_conn.is_some());
    let want = access & OPEN4_SHARE_ACCESS_WANT_DELEG_MASK;
    let conflict = st.states.values().any(|e| {
        e.node == id
            && match &e.kind {
                Kind::Open { access, .. } => access & OPEN4_SHARE_ACCESS_WRITE != 0,
                Kind::Deleg { .. } => e.clientid == clientid,
            }
    });
    if !back
        || access & OPEN4_SHARE_ACCESS_BOTH != OPEN4_SHARE_ACCESS_READ
        || want == OPEN4_SHARE_ACCESS_WANT_NO_DELEG
        || conflict
    {
        return Delegation::None;
    }
    let s =
        st.new_state(StateEntry { clientid, node: id, seqid: 1, kind: Kind::Deleg { session: sid, recalled: false } });
    Delegation::Read { stateid: s, recall: false }
}

/// READDIR (RFC 8881 18.23): entry k has cookie k + 3 (0, 1 and 2 are reserved, 18.23.3);
/// the reply stays within maxcount.
fn readdir(st: &State, cx: &Cx, cookie: u64, verifier: Verifier, maxcount: u32, req: &[u32]) -> Result<Done, u32> {
    let dir = cur(cx)?;
    let children = st.tree.children(dir)?;
    if cookie != 0 && verifier != COOKIEVERF {
        return Err(NFS4ERR_NOT_SAME);
    }
    let start = match cookie {
        0 => 0,
        1 | 2 => return Err(NFS4ERR_BAD_COOKIE),
        c => usize::try_from(c - 2).map_err(|_| NFS4ERR_BAD_COOKIE)?,
    };
    if start > children.len() {
        return Err(NFS4ERR_BAD_COOKIE);
    }
    // cookieverf, and the end of the list and eof.
    let mut size = 8 + 8;
    let mut entries = Vec::new();
    for (k, &c) in children.iter().enumerate().skip(start) {
        let attrs = attrs::encode(&st.tree, st.change_of(c), c, req);
        let name = st.tree.node(c).name.as_bytes().to_vec();
        let len =
            4 + 8 + 4 + name.len().div_ceil(4) * 4 + 4 + 4 * attrs.mask.len() + 4 + attrs.vals.len().div_ceil(4) * 4;
        if size + len > maxcount as usize {
            if entries.is_empty() {
                return Err(NFS4ERR_TOOSMALL);
            }
            return Ok(Done::Res(Res::Readdir { verifier: COOKIEVERF, entries, eof: false }));
        }
        size += len;
        entries.push(DirEntry { cookie: k as u64 + 3, name, attrs });
    }
    Ok(Done::Res(Res::Readdir { verifier: COOKIEVERF, entries, eof: true }))
}
