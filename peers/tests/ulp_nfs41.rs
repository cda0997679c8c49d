//! The reference NFSv4.1/4.2 server through its upper-layer interface: a session, a read
//! through OPEN/READ/CLOSE, a WRITE, READDIR, and the delegation and recall path of two
//! clients, each checked against the outcomes RFC 8881 prescribes. Expected contents come from
//! the tree's documented formula, expected callback words from RFC 8881 20 and RFC 5531.

use rpcrdma_codec::rpc::{AcceptStat, ReplyHeader, RpcHeader, RpcMessage};
use rpcrdma_codec::xdr::Encode;
use rpcrdma_peers::proto::callback::{CbCompoundArgs, CbCompoundRes, CbOp, CbOpResult, CB_COMPOUND, CB_NULL};
use rpcrdma_peers::proto::nfs3::file_contents;
use rpcrdma_peers::proto::nfs41::*;
use rpcrdma_peers::ulp::nfs41::{Faults, Shared};
use rpcrdma_peers::ulp::tree::{dir_entry_name, handle_for, FILES};
use rpcrdma_peers::ulp::{NfsServer, UlpOutcome, UlpResults, UpperLayer};

const CB_PROG: u32 = 0x4000_0123;

fn attrs(maxrequests: u32, maxrequestsize: u32) -> ChannelAttrs {
    ChannelAttrs {
        headerpadsize: 0,
        maxrequestsize,
        maxresponsesize: maxrequestsize,
        maxresponsesize_cached: 2048,
        maxoperations: 8,
        maxrequests,
        rdma_ird: None,
    }
}

/// A client on its own connection to `state`.
struct Client {
    conn: NfsServer,
    clientid: u64,
    session: SessionId,
    seq: u32,
    minor: u32,
}

fn raw(conn: &mut NfsServer, minor: u32, ops: &[Op]) -> UlpResults {
    match conn.call(NFS_PROGRAM, NFS_V4, NFSPROC4_COMPOUND, &compound_args("t", minor, ops)) {
        UlpOutcome::Success(r) => r,
        other => panic!("{other:?}"),
    }
}

fn send(conn: &mut NfsServer, minor: u32, ops: &[Op]) -> CompoundRes {
    compound_res(&raw(conn, minor, ops).inline(), |_| false).expect("a COMPOUND4res")
}

impl Client {
    /// EXCHANGE_ID and CREATE_SESSION, asking for a back channel when `back`.
    fn new(state: &Shared, owner: &[u8], minor: u32, back: bool) -> Client {
        let mut conn = NfsServer::new().with_v41(state);
        let ex = Op::ExchangeId {
            verifier: *b"verifier",
            owner: owner.to_vec(),
            flags: 0,
            state_protect: SP4_NONE,
            impl_id: None,
        };
        let res = send(&mut conn, minor, &[ex]);
        let Some(Res::ExchangeId { clientid, sequenceid, flags, .. }) = res.find(OP_EXCHANGE_ID).cloned() else {
            panic!("{res:?}")
        };
        assert_eq!(flags & EXCHGID4_FLAG_CONFIRMED_R, 0, "a new client ID is unconfirmed (RFC 8881 18.35.3)");
        let res = send(&mut conn, minor, &[create_session(clientid, sequenceid, back)]);
        let Some(Res::CreateSession { sessionid, .. }) = res.find(OP_CREATE_SESSION).cloned() else {
            panic!("{res:?}")
        };
        Client { conn, clientid, session: sessionid, seq: 0, minor }
    }

    /// SEQUENCE on slot 0, then `ops`.
    fn call(&mut self, ops: &[Op]) -> CompoundRes {
        compound_res(&self.call_raw(ops).inline(), |_| false).expect("a COMPOUND4res")
    }

    fn call_raw(&mut self, ops: &[Op]) -> UlpResults {
        self.seq += 1;
        let seq = Op::Sequence {
            sessionid: self.session,
            sequenceid: self.seq,
            slotid: 0,
            highest_slotid: 0,
            cachethis: true,
        };
        let all: Vec<Op> = std::iter::once(seq).chain(ops.iter().cloned()).collect();
        raw(&mut self.conn, self.minor, &all)
    }

    fn open(&mut self, name: &str, access: u32, how: OpenHow) -> CompoundRes {
        let open = Op::Open {
            seqid: 0,
            share_access: access,
            share_deny: OPEN4_SHARE_DENY_NONE,
            clientid: self.clientid,
            owner: b"owner".to_vec(),
            how,
            claim: Claim::Null(name.as_bytes().to_vec()),
        };
        self.call(&[Op::PutRootFh, open, Op::GetFh])
    }
}

fn create_session(clientid: u64, sequence: u32, back: bool) -> Op {
    Op::CreateSession {
        clientid,
        sequence,
        flags: if back { CREATE_SESSION4_FLAG_CONN_BACK_CHAN } else { 0 },
        fore: attrs(64, 1 << 20),
        back: attrs(2, 4096),
        cb_program: CB_PROG,
        sec: vec![CbSec::None],
    }
}

fn open_result(res: &CompoundRes) -> (Stateid, Delegation) {
    match res.find(OP_OPEN) {
        Some(Res::Open { stateid, delegation, .. }) => (*stateid, delegation.clone()),
        _ => panic!("{res:?}"),
    }
}

/// An RPC reply accepted with SUCCESS and `body` (RFC 5531 9).
fn reply(xid: u32, body: &[u8]) -> Vec<u8> {
    let mut m = ReplyHeader::accepted(xid, AcceptStat::Success).encode_to_vec();
    m.extend_from_slice(body);
    m
}

/// The callback calls in `msgs`: (xid, program, version, procedure, arguments).
fn calls(msgs: &[Vec<u8>]) -> Vec<(u32, u32, u32, u32, Vec<u8>)> {
    msgs.iter()
        .map(|m| {
            let d = RpcMessage::decode(m).expect("an RPC message");
            let RpcHeader::Call(c) = d.header else { panic!("a reverse-direction call, not a reply") };
            (c.xid, c.prog, c.vers, c.proc_, d.body.to_vec())
        })
        .collect()
}

#[test]
fn a_session_with_a_back_channel() {
    let state = Shared::default();
    let mut other = NfsServer::new().with_v41(&state);
    let mut a = Client::new(&state, b"client-a", MINOR_V1, true);

    // The back channel is probed with CB_NULL on the connection that offered it, only there
    // (RFC 8881 2.10.3.1; CB_NULL is procedure 0 of version 1 of the client's cb_program).
    let cbs = calls(&a.conn.take_reverse_calls());
    assert_eq!(cbs.len(), 1);
    assert_eq!((cbs[0].1, cbs[0].2, cbs[0].3), (CB_PROG, 1, CB_NULL));
    assert!(cbs[0].4.is_empty());
    assert!(other.take_reverse_calls().is_empty());
    assert!(a.conn.take_reverse_calls().is_empty(), "taken once");

    // SEQUENCE: the slot's next sequence id runs the request; the same one replays the cached
    // reply; any other is misordered; an unknown slot is BADSLOT (RFC 8881 2.10.6.1).
    let first = a.call_raw(&[Op::PutRootFh, Op::GetFh]);
    let res = compound_res(&first.inline(), |_| false).unwrap();
    assert_eq!(res.status, NFS4_OK);
    assert_eq!(res.find(OP_GETFH), Some(&Res::GetFh(handle_for(1))));
    match res.find(OP_SEQUENCE) {
        Some(Res::Sequence { sequenceid: 1, slotid: 0, status_flags: 0, .. }) => {}
        other => panic!("{other:?}"),
    }
    a.seq -= 1;
    assert_eq!(a.call_raw(&[Op::PutRootFh, Op::GetFh]), first, "the replay is the cached reply");
    a.seq += 1;
    assert_eq!(a.call(&[]).status, NFS4ERR_SEQ_MISORDERED);
    a.seq = 1;
    let bad_slot =
        Op::Sequence { sessionid: a.session, sequenceid: 1, slotid: 999, highest_slotid: 0, cachethis: false };
    assert_eq!(send(&mut a.conn, MINOR_V1, &[bad_slot]).status, NFS4ERR_BADSLOT);

    // Operations need SEQUENCE first; SEQUENCE elsewhere is misplaced (RFC 8881 18.46.3).
    assert_eq!(send(&mut other, MINOR_V1, &[Op::PutRootFh]).status, NFS4ERR_OP_NOT_IN_SESSION);
    let seq =
        Op::Sequence { sessionid: a.session, sequenceid: a.seq + 1, slotid: 0, highest_slotid: 0, cachethis: false };
    a.seq += 1;
    assert_eq!(send(&mut other, MINOR_V1, &[seq.clone(), seq]).status, NFS4ERR_SEQUENCE_POS);

    // RECLAIM_COMPLETE once (RFC 8881 18.51.3).
    assert_eq!(a.call(&[Op::ReclaimComplete { one_fs: false }]).status, NFS4_OK);
    assert_eq!(a.call(&[Op::ReclaimComplete { one_fs: false }]).status, NFS4ERR_COMPLETE_ALREADY);

    // DESTROY_CLIENTID of a client with a session is busy; after DESTROY_SESSION it goes.
    assert_eq!(send(&mut other, MINOR_V1, &[Op::DestroyClientId(a.clientid)]).status, NFS4ERR_CLIENTID_BUSY);
    assert_eq!(send(&mut other, MINOR_V1, &[Op::DestroySession(a.session)]).status, NFS4_OK);
    assert_eq!(a.call(&[]).status, NFS4ERR_BADSESSION);
    assert_eq!(send(&mut other, MINOR_V1, &[Op::DestroyClientId(a.clientid)]).status, NFS4_OK);
    assert_eq!(send(&mut other, MINOR_V1, &[Op::DestroyClientId(a.clientid)]).status, NFS4ERR_STALE_CLIENTID);
}

#[test]
fn create_session_is_replayed_and_clamped() {
    let state = Shared::default();
    let mut conn = NfsServer::new().with_v41(&state);
    let ex =
        Op::ExchangeId { verifier: [1; 8], owner: b"c".to_vec(), flags: 0, state_protect: SP4_NONE, impl_id: None };
    let Some(Res::ExchangeId { clientid, sequenceid, .. }) =
        send(&mut conn, MINOR_V2, std::slice::from_ref(&ex)).find(OP_EXCHANGE_ID).cloned()
    else {
        panic!()
    };
    let one = send(&mut conn, MINOR_V2, &[create_session(clientid, sequenceid, false)]);
    // The same csa_sequence again is a replay: the same session (RFC 8881 18.36.4).
    assert_eq!(send(&mut conn, MINOR_V2, &[create_session(clientid, sequenceid, false)]), one);
    assert_eq!(
        send(&mut conn, MINOR_V2, &[create_session(clientid, sequenceid + 5, false)]).status,
        NFS4ERR_SEQ_MISORDERED
    );
    match one.find(OP_CREATE_SESSION) {
        Some(Res::CreateSession { flags, fore, .. }) => {
            assert_eq!(*flags, 0, "no back channel asked, none granted");
            assert!(fore.maxrequests <= 64 && fore.maxrequests >= 1);
            assert!(fore.maxrequestsize <= 1 << 20);
        }
        other => panic!("{other:?}"),
    }
    // No back channel asked: no callback.
    assert!(conn.take_reverse_calls().is_empty());
    // The client ID is now confirmed (RFC 8881 18.35.3: EXCHGID4_FLAG_CONFIRMED_R).
    match send(&mut conn, MINOR_V2, &[ex]).find(OP_EXCHANGE_ID) {
        Some(Res::ExchangeId { clientid: c, flags, .. }) => {
            assert_eq!(*c, clientid);
            assert_ne!(flags & EXCHGID4_FLAG_CONFIRMED_R, 0);
        }
        other => panic!("{other:?}"),
    }
    // Another minor version than 0, 1 or 2 is a mismatch.
    assert_eq!(send(&mut conn, 3, &[Op::PutRootFh]).status, NFS4ERR_MINOR_VERS_MISMATCH);
}

#[test]
fn a_file_read_through_open_read_close() {
    let state = Shared::default();
    for minor in [MINOR_V1, MINOR_V2] {
        let mut a = Client::new(&state, format!("reader-{minor}").as_bytes(), minor, false);
        let res = a.open("big", OPEN4_SHARE_ACCESS_READ, OpenHow::NoCreate);
        assert_eq!(res.status, NFS4_OK);
        let (sid, deleg) = open_result(&res);
        assert_eq!(deleg, Delegation::None, "no back channel, no delegation");
        assert_eq!(res.find(OP_GETFH), state.with_tree(|t| t.handle_of("big")).map(Res::GetFh).as_ref());
        let fh = state.with_tree(|t| t.handle_of("big")).unwrap();

        // READ data is the COMPOUND's DDP-eligible item (RFC 8267 6.1).
        let r = a.call_raw(&[Op::PutFh(fh.clone()), Op::Read { stateid: sid, offset: 100, count: 1000 }]);
        assert_eq!(r.ddp.as_deref(), Some(&file_contents(70000)[100..1100]));
        let res = compound_res(&r.inline(), |_| false).unwrap();
        assert!(matches!(res.find(OP_READ), Some(Res::Read { eof: false, .. })));
        let r = a.call_raw(&[Op::PutFh(fh.clone()), Op::Read { stateid: sid, offset: 69990, count: 1000 }]);
        assert_eq!(r.ddp.as_deref(), Some(&file_contents(70000)[69990..]));
        assert!(matches!(
            compound_res(&r.inline(), |_| false).unwrap().find(OP_READ),
            Some(Res::Read { eof: true, .. })
        ));

        // CLOSE ends the stateid (RFC 8881 18.2); READ with it then is BAD_STATEID.
        let res = a.call(&[Op::PutFh(fh.clone()), Op::Close { seqid: 0, stateid: sid }]);
        assert_eq!(res.status, NFS4_OK);
        let res = a.call(&[Op::PutFh(fh.clone()), Op::Read { stateid: sid, offset: 0, count: 1 }]);
        assert_eq!(res.status, NFS4ERR_BAD_STATEID);
        let res = a.call(&[Op::TestStateid(vec![sid])]);
        assert_eq!(res.find(OP_TEST_STATEID), Some(&Res::TestStateid(vec![NFS4ERR_BAD_STATEID])));

        // OPEN of a directory or of a missing name fails.
        assert_eq!(a.open("dir", OPEN4_SHARE_ACCESS_READ, OpenHow::NoCreate).status, NFS4ERR_ISDIR);
        assert_eq!(a.open("nothing", OPEN4_SHARE_ACCESS_READ, OpenHow::NoCreate).status, NFS4ERR_NOENT);
        // An operation not served ends the COMPOUND: NOTSUPP within the minor version.
        assert_eq!(a.call(&[Op::PutRootFh, Op::Other(OP_LOCK)]).status, NFS4ERR_NOTSUPP);
        assert_eq!(a.call(&[Op::Other(9999)]).status, NFS4ERR_OP_ILLEGAL);
    }
}

#[test]
fn getattr_answers_only_what_it_supports() {
    let state = Shared::default();
    let mut a = Client::new(&state, b"attrs", MINOR_V2, false);
    // type, size, fileid, and acl (12): not supported, so not in the result's bitmap.
    let req = bitmap_of(&[FATTR4_TYPE, FATTR4_SIZE, 12, FATTR4_FILEID]);
    let res = a.call(&[Op::PutRootFh, Op::Lookup(b"five".to_vec()), Op::GetAttr(req)]);
    let Some(Res::GetAttr(f)) = res.find(OP_GETATTR) else { panic!("{res:?}") };
    assert_eq!(f.mask, bitmap_of(&[FATTR4_TYPE, FATTR4_SIZE, FATTR4_FILEID]));
    // NF4REG, size 5 (hyper), fileid 4 (the fourth object: root, empty, one, five).
    assert_eq!(f.vals, [0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 4]);
}

#[test]
fn a_write_creates_and_changes_a_file() {
    let state = Shared::default();
    let mut a = Client::new(&state, b"writer", MINOR_V2, true);
    let res = a.open("new-file", OPEN4_SHARE_ACCESS_BOTH, OpenHow::Unchecked(Fattr::default()));
    assert_eq!(res.status, NFS4_OK);
    let (sid, deleg) = open_result(&res);
    assert_eq!(deleg, Delegation::None, "no read delegation for an open for writing");
    let Some(Res::GetFh(fh)) = res.find(OP_GETFH).cloned() else { panic!() };
    // GUARDED4 of an existing name is EXIST (RFC 8881 18.16.3).
    assert_eq!(a.open("new-file", OPEN4_SHARE_ACCESS_BOTH, OpenHow::Guarded(Fattr::default())).status, NFS4ERR_EXIST);

    let write = Op::Write { stateid: sid, offset: 3, stable: UNSTABLE4, data: b"hello".to_vec() };
    let res = a.call(&[Op::PutFh(fh.clone()), write.clone()]);
    assert_eq!(res.find(OP_WRITE), Some(&Res::Write { count: 5, committed: FILE_SYNC4, verifier: *b"WRITEVF1" }));
    let res = a.call(&[Op::PutFh(fh.clone()), Op::GetAttr(bitmap_of(&[FATTR4_SIZE]))]);
    assert_eq!(
        res.find(OP_GETATTR),
        Some(&Res::GetAttr(Fattr { mask: bitmap_of(&[FATTR4_SIZE]), vals: vec![0, 0, 0, 0, 0, 0, 0, 8] }))
    );
    let r = a.call_raw(&[Op::PutFh(fh.clone()), Op::Read { stateid: sid, offset: 0, count: 100 }]);
    assert_eq!(r.ddp.as_deref(), Some(&b"\0\0\0hello"[..]));

    // SETATTR of the size truncates (RFC 8881 18.30); attrsset names it.
    let size = Fattr { mask: bitmap_of(&[FATTR4_SIZE]), vals: vec![0, 0, 0, 0, 0, 0, 0, 4] };
    let res = a.call(&[Op::PutFh(fh.clone()), Op::SetAttr { stateid: sid, attrs: size }]);
    assert_eq!(res.find(OP_SETATTR), Some(&Res::SetAttr(bitmap_of(&[FATTR4_SIZE]))));
    // An attribute not supported: ATTRNOTSUPP, and SETATTR4res still has its attrsset.
    let acl = Fattr { mask: bitmap_of(&[12]), vals: vec![0, 0, 0, 0] };
    let res = a.call(&[Op::PutFh(fh.clone()), Op::SetAttr { stateid: sid, attrs: acl }]);
    assert_eq!((res.status, res.results[2].res.clone()), (NFS4ERR_ATTRNOTSUPP, Some(Res::SetAttr(vec![]))));
    let res = a.call(&[Op::PutFh(fh.clone()), Op::Commit { offset: 0, count: 0 }]);
    assert_eq!(res.find(OP_COMMIT), Some(&Res::Commit(*b"WRITEVF1")));

    // The WRITE's data is where a read chunk may go (RFC 8267 6.1): after the length word.
    let args = compound_args(
        "",
        MINOR_V1,
        &[
            Op::Sequence { sessionid: a.session, sequenceid: 1, slotid: 0, highest_slotid: 0, cachethis: false },
            Op::PutFh(fh),
            write,
        ],
    );
    let data_at = args.len() - 8;
    assert!(a.conn.ddp_eligible_arg(NFS_PROGRAM, 4, 1, &args, data_at));
    assert!(!a.conn.ddp_eligible_arg(NFS_PROGRAM, 4, 1, &args, data_at - 4));
}

#[test]
fn readdir_pages_through_a_directory() {
    let state = Shared::default();
    let mut a = Client::new(&state, b"lister", MINOR_V1, false);
    let dir = state.with_tree(|t| t.handle_of("dir")).unwrap();
    let mut names = Vec::new();
    let (mut cookie, mut verifier) = (0, [0u8; 8]);
    let mut rounds = 0;
    loop {
        let rd = Op::Readdir { cookie, verifier, dircount: 0, maxcount: 512, attrs: bitmap_of(&[FATTR4_FILEID]) };
        let res = a.call(&[Op::PutFh(dir.clone()), rd]);
        let Some(Res::Readdir { verifier: v, entries, eof }) = res.find(OP_READDIR).cloned() else { panic!("{res:?}") };
        assert!(!entries.is_empty());
        for e in &entries {
            assert!(e.cookie > 2, "cookies 0, 1 and 2 are reserved (RFC 8881 18.23.3)");
            assert_eq!(e.attrs.mask, bitmap_of(&[FATTR4_FILEID]));
            names.push(String::from_utf8(e.name.clone()).unwrap());
        }
        rounds += 1;
        if eof {
            break;
        }
        cookie = entries.last().unwrap().cookie;
        verifier = v;
    }
    assert!(rounds > 1, "512 bytes do not hold twenty entries");
    let want: Vec<String> = (0..20).map(dir_entry_name).collect();
    assert_eq!(names, want);
    // Too small for one entry (RFC 8881 18.23.3).
    let rd = Op::Readdir { cookie: 0, verifier: [0; 8], dircount: 0, maxcount: 20, attrs: vec![] };
    assert_eq!(a.call(&[Op::PutFh(dir), rd]).status, NFS4ERR_TOOSMALL);
    // The root lists the tree's files first.
    let rd = Op::Readdir { cookie: 0, verifier: [0; 8], dircount: 0, maxcount: 8192, attrs: vec![] };
    let res = a.call(&[Op::PutRootFh, rd]);
    let Some(Res::Readdir { entries, eof: true, .. }) = res.find(OP_READDIR) else { panic!("{res:?}") };
    let first: Vec<&[u8]> = entries.iter().take(FILES.len()).map(|e| e.name.as_slice()).collect();
    assert_eq!(first, FILES.iter().map(|(n, _)| n.as_bytes()).collect::<Vec<_>>());
}

#[test]
fn a_conflicting_open_recalls_the_read_delegation() {
    let state = Shared::default();
    let mut a = Client::new(&state, b"holder", MINOR_V1, true);
    let mut b = Client::new(&state, b"writer", MINOR_V2, true);
    a.conn.take_reverse_calls();
    b.conn.take_reverse_calls();
    let fh = state.with_tree(|t| t.handle_of("five")).unwrap();

    // A read-only OPEN with a back channel gets a read delegation (RFC 8881 10.4).
    let res = a.open("five", OPEN4_SHARE_ACCESS_READ, OpenHow::NoCreate);
    let (_, deleg) = open_result(&res);
    let Delegation::Read { stateid: deleg, recall: false } = deleg else { panic!("{deleg:?}") };

    // Another client's OPEN for writing waits (NFS4ERR_DELAY) while the holder is recalled.
    let res = b.open("five", OPEN4_SHARE_ACCESS_WRITE, OpenHow::NoCreate);
    assert_eq!(res.status, NFS4ERR_DELAY);
    assert!(b.conn.take_reverse_calls().is_empty(), "the recall goes to the holder only");
    let cbs = calls(&a.conn.take_reverse_calls());
    assert_eq!(cbs.len(), 1);
    let (xid, prog, vers, proc_, args) = cbs[0].clone();
    assert_eq!((prog, vers, proc_), (CB_PROG, 1, CB_COMPOUND));
    // CB_COMPOUND: CB_SEQUENCE on back channel slot 0, sequence 1, then CB_RECALL of the
    // delegation's stateid and the file's handle (RFC 8881 20.9, 20.2).
    let cb = CbCompoundArgs::decode(&args).unwrap();
    assert_eq!(cb.minorversion, MINOR_V1);
    assert_eq!(
        cb.ops,
        [
            CbOp::Sequence {
                sessionid: a.session,
                sequenceid: 1,
                slotid: 0,
                highest_slotid: 0,
                cachethis: false,
                referring: vec![]
            },
            CbOp::Recall { stateid: deleg, truncate: false, fh: fh.clone() }
        ]
    );
    // Asked again, the writer still waits; the holder is not recalled twice.
    assert_eq!(b.open("five", OPEN4_SHARE_ACCESS_WRITE, OpenHow::NoCreate).status, NFS4ERR_DELAY);
    assert!(a.conn.take_reverse_calls().is_empty());

    // The holder answers and returns the delegation; the writer's OPEN then succeeds.
    let ok = CbCompoundRes {
        status: NFS4_OK,
        tag: vec![],
        results: vec![
            CbOpResult { op: 11, status: NFS4_OK, sequence: Some((a.session, 1, 0, 0, 0)) },
            CbOpResult { op: 4, status: NFS4_OK, sequence: None },
        ],
    };
    a.conn.reverse_reply(&reply(xid, &ok.encode()));
    let events = state.callbacks();
    assert_eq!(events.last().map(|e| (e.xid, e.status)), Some((xid, Some(NFS4_OK))));
    let res = a.call(&[Op::PutFh(fh.clone()), Op::DelegReturn(deleg)]);
    assert_eq!(res.status, NFS4_OK);
    assert_eq!(a.call(&[Op::PutFh(fh.clone()), Op::DelegReturn(deleg)]).status, NFS4ERR_BAD_STATEID);
    let res = b.open("five", OPEN4_SHARE_ACCESS_WRITE, OpenHow::NoCreate);
    assert_eq!(res.status, NFS4_OK);
    // With the file open for writing, no read delegation is granted.
    assert_eq!(open_result(&a.open("five", OPEN4_SHARE_ACCESS_READ, OpenHow::NoCreate)).1, Delegation::None);
}

#[test]
fn a_recall_is_sent_again_on_a_new_back_channel_connection() {
    let state = Shared::default();
    let mut a = Client::new(&state, b"holder", MINOR_V1, true);
    let mut b = Client::new(&state, b"writer", MINOR_V1, false);
    a.conn.take_reverse_calls();
    let (_, deleg) = open_result(&a.open("one", OPEN4_SHARE_ACCESS_READ, OpenHow::NoCreate));
    assert!(matches!(deleg, Delegation::Read { .. }));
    assert_eq!(b.open("one", OPEN4_SHARE_ACCESS_WRITE, OpenHow::NoCreate).status, NFS4ERR_DELAY);
    let first = calls(&a.conn.take_reverse_calls());
    assert_eq!(first.len(), 1);

    // The holder's connection goes unanswered; SEQUENCE on a new one reports the back
    // channel down (RFC 8881 18.46.3), BIND_CONN_TO_SESSION binds it, and the recall goes
    // again with its XID after a CB_NULL probe (RFC 8167 5.4).
    a.conn = NfsServer::new().with_v41(&state);
    let res = a.call(&[]);
    match res.find(OP_SEQUENCE) {
        Some(Res::Sequence { status_flags, .. }) => assert_ne!(status_flags & SEQ4_STATUS_CB_PATH_DOWN_SESSION, 0),
        other => panic!("{other:?}"),
    }
    let bind = Op::BindConnToSession { sessionid: a.session, dir: CDFC4_BACK_OR_BOTH, use_rdma: false };
    let res = send(&mut a.conn, MINOR_V1, &[bind]);
    assert_eq!(
        res.find(OP_BIND_CONN_TO_SESSION),
        Some(&Res::BindConnToSession { sessionid: a.session, dir: CDFS4_BOTH, use_rdma: false })
    );
    let again = calls(&a.conn.take_reverse_calls());
    assert_eq!(again.len(), 2);
    assert_eq!(again[0].3, CB_NULL);
    assert_eq!(again[1], first[0]);
    match a.call(&[]).find(OP_SEQUENCE) {
        Some(Res::Sequence { status_flags: 0, .. }) => {}
        other => panic!("{other:?}"),
    }
}

#[test]
fn faults_bend_the_back_channel() {
    // cb-before-back-channel: CB_NULL at EXCHANGE_ID, before any back channel.
    let state = Shared::new(Faults { cb_before_back_channel: true, ..Faults::default() });
    let mut conn = NfsServer::new().with_v41(&state);
    let ex =
        Op::ExchangeId { verifier: [1; 8], owner: b"c".to_vec(), flags: 0, state_protect: SP4_NONE, impl_id: None };
    send(&mut conn, MINOR_V1, &[ex]);
    let cbs = calls(&conn.take_reverse_calls());
    assert_eq!(cbs.len(), 1);
    assert_eq!(cbs[0].3, CB_NULL);

    // Without faults: the CB_NULL probe alone.
    let mut a = Client::new(&Shared::default(), b"c", MINOR_V1, true);
    assert_eq!(a.conn.take_reverse_calls().len(), 1);

    // cb-large-call: a CB_COMPOUND longer than the back channel's ca_maxrequestsize (4096).
    let state = Shared::new(Faults { cb_large_call: true, ..Faults::default() });
    let mut a = Client::new(&state, b"c", MINOR_V1, true);
    let msgs = a.conn.take_reverse_calls();
    assert!(msgs.iter().any(|m| m.len() > 4096), "{:?}", msgs.iter().map(Vec::len).collect::<Vec<_>>());
}

/// The embedded reference responder over the emulated fabric: EXCHANGE_ID and CREATE_SESSION
/// with a back channel, then a CB_NULL arrives as a reverse-direction call on the same
/// connection (RFC 8167 5.1: RDMA_MSG whose rdma_xid is the RPC XID, msg_type CALL).
#[test]
fn the_reference_responder_probes_the_back_channel_over_rdma() {
    use std::time::{Duration, Instant};

    use rpcrdma_peers::proto::Call;
    use rpcrdma_peers::responder::{Config, Responder};
    use rpcrdma_peers::transport::emulated::EmulatedConnector;
    use rpcrdma_peers::transport::{Connector, Event, WcStatus};

    let config = Config { idle_poll: Duration::from_millis(20), ..Config::default() };
    let responder = Responder::reference(config);
    let deadline = || Instant::now() + Duration::from_secs(5);
    let mut conn = EmulatedConnector::new(responder.clone()).connect(&[], deadline()).expect("connect");
    conn.post_recv(4096, 16).unwrap();
    let received = |conn: &mut Box<dyn rpcrdma_peers::transport::Connection>, quiet: u64| {
        let mut out = Vec::new();
        while let Ok(e) = conn.poll(Instant::now() + Duration::from_millis(quiet)) {
            match e {
                Event::Recv { status: WcStatus::Success, data, .. } => out.push(data),
                Event::SendDone { .. } => {}
                e => panic!("unexpected {e:?}"),
            }
        }
        out
    };
    // RDMA_MSG with three empty chunk lists: 28 bytes of transport header (RFC 8166 4.2).
    let results = |m: &[u8]| {
        let d = RpcMessage::decode(&m[28..]).unwrap();
        compound_res(d.body, |_| false).unwrap()
    };
    let ex =
        Op::ExchangeId { verifier: [2; 8], owner: b"rdma".to_vec(), flags: 0, state_protect: SP4_NONE, impl_id: None };
    conn.send(&Call::new(1, 4, NFS_PROGRAM, NFS_V4, NFSPROC4_COMPOUND, compound_args("", 1, &[ex])).msg()).unwrap();
    let got = received(&mut conn, 300);
    assert_eq!(got.len(), 1, "only the reply: no callback before a back channel (RFC 8167 6)");
    let Some(Res::ExchangeId { clientid, sequenceid, .. }) = results(&got[0]).find(OP_EXCHANGE_ID).cloned() else {
        panic!()
    };
    let cs = compound_args("", 1, &[create_session(clientid, sequenceid, true)]);
    conn.send(&Call::new(2, 4, NFS_PROGRAM, NFS_V4, NFSPROC4_COMPOUND, cs).msg()).unwrap();
    let got = received(&mut conn, 500);
    let reply = got.iter().find(|m| m[..4] == [0, 0, 0, 2]).expect("the CREATE_SESSION reply");
    assert!(matches!(
        results(reply).find(OP_CREATE_SESSION),
        Some(Res::CreateSession { flags: CREATE_SESSION4_FLAG_CONN_BACK_CHAN, .. })
    ));
    let cbs: Vec<&Vec<u8>> = got.iter().filter(|m| m[..4] != [0, 0, 0, 2]).collect();
    assert_eq!(cbs.len(), 1, "{got:02x?}");
    let d = RpcMessage::decode(&cbs[0][28..]).unwrap();
    let RpcHeader::Call(c) = d.header else { panic!("a call") };
    assert_eq!((c.xid.to_be_bytes(), c.prog, c.vers, c.proc_), (cbs[0][..4].try_into().unwrap(), CB_PROG, 1, CB_NULL));
}
