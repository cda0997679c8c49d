//! The NFSv4.1 callback program (RFC 8881 16.1 and 20): what a server sends over the back
//! channel and a client answers. Its program number is the `csa_cb_program` the client chose
//! in CREATE_SESSION (RFC 8881 18.36); version 1 has CB_NULL (procedure 0) and CB_COMPOUND
//! (procedure 1). Here: CB_COMPOUND's arguments with CB_SEQUENCE and CB_RECALL (encoded by a
//! server, decoded by a client) and its results (encoded by a client, decoded by a server),
//! and the whole RPC call a server sends ([`call_message`]).

use rpcrdma_codec::rpc::{AuthFlavor, CallHeader, OpaqueAuth};
use rpcrdma_codec::xdr::{Encode, Reader};

use super::nfs41::{CbSec, SessionId, Stateid, Xdr, NFS4_FHSIZE, NFS4_OK, NFS4_SESSIONID_SIZE, STATEID_LEN};

/// The callback program's version (RFC 8881 16.1: NFS_CB version 1).
pub const NFS_CB_VERSION: u32 = 1;
pub const CB_NULL: u32 = 0;
pub const CB_COMPOUND: u32 = 1;

// nfs_cb_opnum4 (RFC 8881 20).
pub const OP_CB_GETATTR: u32 = 3;
pub const OP_CB_RECALL: u32 = 4;
pub const OP_CB_LAYOUTRECALL: u32 = 5;
pub const OP_CB_NOTIFY: u32 = 6;
pub const OP_CB_RECALL_ANY: u32 = 8;
pub const OP_CB_RECALL_SLOT: u32 = 10;
pub const OP_CB_SEQUENCE: u32 = 11;
pub const OP_CB_ILLEGAL: u32 = 10044;

/// referring_call_list4 (RFC 8881 20.9): a session and its (sequenceid, slotid) calls.
pub type ReferringCalls = (SessionId, Vec<(u32, u32)>);

/// One operation of CB_COMPOUND4args (nfs_cb_argop4).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CbOp {
    /// CB_SEQUENCE4args (RFC 8881 20.9).
    Sequence {
        sessionid: SessionId,
        sequenceid: u32,
        slotid: u32,
        highest_slotid: u32,
        cachethis: bool,
        referring: Vec<ReferringCalls>,
    },
    /// CB_RECALL4args (RFC 8881 20.2).
    Recall { stateid: Stateid, truncate: bool, fh: Vec<u8> },
    /// Any other operation, by number (its arguments not decoded).
    Other(u32),
}

type R<T> = Result<T, rpcrdma_codec::error::DecodeError>;

fn fixed<const N: usize>(r: &mut Reader<'_>, field: &'static str) -> R<[u8; N]> {
    let mut a = [0u8; N];
    a.copy_from_slice(r.opaque_fixed(N, field)?);
    Ok(a)
}

impl CbOp {
    pub fn opnum(&self) -> u32 {
        match self {
            CbOp::Sequence { .. } => OP_CB_SEQUENCE,
            CbOp::Recall { .. } => OP_CB_RECALL,
            CbOp::Other(n) => *n,
        }
    }

    pub fn encode(&self, x: &mut Xdr) {
        x.u32(self.opnum());
        match self {
            CbOp::Sequence { sessionid, sequenceid, slotid, highest_slotid, cachethis, referring } => {
                x.fixed(sessionid).u32(*sequenceid).u32(*slotid).u32(*highest_slotid).bool(*cachethis);
                x.u32(referring.len() as u32);
                for (sid, calls) in referring {
                    x.fixed(sid).u32(calls.len() as u32);
                    calls.iter().for_each(|(seq, slot)| _ = x.u32(*seq).u32(*slot));
                }
            }
            CbOp::Recall { stateid, truncate, fh } => _ = x.fixed(stateid).bool(*truncate).opaque(fh),
            CbOp::Other(_) => {}
        }
    }

    pub fn decode(r: &mut Reader<'_>) -> R<CbOp> {
        Ok(match r.u32("argop")? {
            OP_CB_SEQUENCE => {
                let sessionid = fixed(r, "csa_sessionid")?;
                let sequenceid = r.u32("csa_sequenceid")?;
                let slotid = r.u32("csa_slotid")?;
                let highest_slotid = r.u32("csa_highest_slotid")?;
                let cachethis = r.bool("csa_cachethis")?;
                let mut referring = Vec::new();
                for _ in 0..r.count("csa_referring_call_lists", NFS4_SESSIONID_SIZE + 4)? {
                    let sid = fixed(r, "rcl_sessionid")?;
                    let n = r.count("rcl_referring_calls", 8)?;
                    let calls = (0..n).map(|_| Ok((r.u32("rc_sequenceid")?, r.u32("rc_slotid")?))).collect::<R<_>>()?;
                    referring.push((sid, calls));
                }
                CbOp::Sequence { sessionid, sequenceid, slotid, highest_slotid, cachethis, referring }
            }
            OP_CB_RECALL => CbOp::Recall {
                stateid: fixed::<STATEID_LEN>(r, "stateid")?,
                truncate: r.bool("truncate")?,
                fh: r.opaque("fh", NFS4_FHSIZE)?.to_vec(),
            },
            n => CbOp::Other(n),
        })
    }
}

/// CB_COMPOUND4args (RFC 8881 20 / 16.2.3's callback form): tag, minorversion,
/// callback_ident (ignored in minor versions 1 and 2, RFC 8881 20.1), argarray.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CbCompoundArgs {
    pub tag: Vec<u8>,
    pub minorversion: u32,
    pub callback_ident: u32,
    pub ops: Vec<CbOp>,
}

impl CbCompoundArgs {
    pub fn encode(&self) -> Vec<u8> {
        let mut x = Xdr::new();
        x.opaque(&self.tag).u32(self.minorversion).u32(self.callback_ident).u32(self.ops.len() as u32);
        self.ops.iter().for_each(|op| op.encode(&mut x));
        x.into_inner()
    }

    /// The arguments; an operation that is not CB_SEQUENCE or CB_RECALL ends the list (its
    /// arguments cannot be skipped), as [`CbOp::Other`].
    pub fn decode(args: &[u8]) -> R<Self> {
        let mut r = Reader::new(args);
        let tag = r.opaque("tag", u32::MAX)?.to_vec();
        let minorversion = r.u32("minorversion")?;
        let callback_ident = r.u32("callback_ident")?;
        let n = r.count("argarray", 4)?;
        let mut ops = Vec::new();
        for _ in 0..n {
            let op = CbOp::decode(&mut r)?;
            let stop = matches!(op, CbOp::Other(_));
            ops.push(op);
            if stop {
                break;
            }
        }
        Ok(CbCompoundArgs { tag, minorversion, callback_ident, ops })
    }
}

/// One nfs_cb_resop4: the operation, its status, and CB_SEQUENCE4resok when it succeeded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CbOpResult {
    pub op: u32,
    pub status: u32,
    /// CB_SEQUENCE4resok: sessionid, sequenceid, slotid, highest_slotid, target_highest_slotid.
    pub sequence: Option<(SessionId, u32, u32, u32, u32)>,
}

/// CB_COMPOUND4res (RFC 8881 20): status, tag, resarray.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CbCompoundRes {
    pub status: u32,
    pub tag: Vec<u8>,
    pub results: Vec<CbOpResult>,
}

impl CbCompoundRes {
    pub fn encode(&self) -> Vec<u8> {
        let mut x = Xdr::new();
        x.u32(self.status).opaque(&self.tag).u32(self.results.len() as u32);
        for res in &self.results {
            x.u32(res.op).u32(res.status);
            if let (NFS4_OK, Some((sid, seq, slot, high, target))) = (res.status, res.sequence) {
                x.fixed(&sid).u32(seq).u32(slot).u32(high).u32(target);
            }
        }
        x.into_inner()
    }

    pub fn decode(results: &[u8]) -> R<Self> {
        let mut r = Reader::new(results);
        let status = r.u32("status")?;
        let tag = r.opaque("tag", u32::MAX)?.to_vec();
        let mut out = Vec::new();
        for _ in 0..r.count("resarray", 8)? {
            let op = r.u32("resop")?;
            let st = r.u32("status")?;
            let sequence = if op == OP_CB_SEQUENCE && st == NFS4_OK {
                Some((
                    fixed(&mut r, "csr_sessionid")?,
                    r.u32("csr_sequenceid")?,
                    r.u32("csr_slotid")?,
                    r.u32("csr_highest_slotid")?,
                    r.u32("csr_target_highest_slotid")?,
                ))
            } else {
                None
            };
            out.push(CbOpResult { op, status: st, sequence });
        }
        Ok(CbCompoundRes { status, tag, results: out })
    }
}

/// The whole RPC call message of callback procedure `proc_` (CB_NULL or CB_COMPOUND) to
/// program `cb_program`, carrying the credential of `sec` (AUTH_NONE or AUTH_SYS; RPCSEC_GSS
/// handles are not used here: AUTH_NONE then).
pub fn call_message(xid: u32, cb_program: u32, proc_: u32, sec: &CbSec, args: &[u8]) -> Vec<u8> {
    let mut header = CallHeader::new(xid, cb_program, NFS_CB_VERSION, proc_);
    if let CbSec::Sys(parms) = sec {
        header.cred = OpaqueAuth { flavor: AuthFlavor::AUTH_SYS, body: parms };
    }
    let mut m = header.encode_to_vec();
    m.extend_from_slice(args);
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(w: &[u32]) -> Vec<u8> {
        w.iter().flat_map(|x| x.to_be_bytes()).collect()
    }

    #[test]
    fn cb_compound_with_sequence_and_recall_layout() {
        let sid = [7u8; 16];
        let stateid = [3u8; 16];
        let args = CbCompoundArgs {
            tag: Vec::new(),
            minorversion: 1,
            callback_ident: 0,
            ops: vec![
                CbOp::Sequence {
                    sessionid: sid,
                    sequenceid: 1,
                    slotid: 0,
                    highest_slotid: 0,
                    cachethis: false,
                    referring: vec![(sid, vec![(4, 2)])],
                },
                CbOp::Recall { stateid, truncate: false, fh: vec![1, 2, 3, 4, 5] },
            ],
        };
        // tag<>, minorversion, callback_ident, 2 ops; CB_SEQUENCE4args (RFC 8881 20.9.1):
        // sessionid, sequenceid, slotid, highest_slotid, cachethis, referring_call_list4<>;
        // CB_RECALL4args (20.2.1): stateid, truncate, nfs_fh4.
        let mut want = words(&[0, 1, 0, 2, 11]);
        want.extend_from_slice(&sid);
        want.extend(words(&[1, 0, 0, 0, 1]));
        want.extend_from_slice(&sid);
        want.extend(words(&[1, 4, 2, 4]));
        want.extend_from_slice(&stateid);
        want.extend(words(&[0, 5]));
        want.extend_from_slice(&[1, 2, 3, 4, 5, 0, 0, 0]);
        assert_eq!(args.encode(), want);
        assert_eq!(CbCompoundArgs::decode(&want).unwrap(), args);
    }

    #[test]
    fn cb_compound_results_layout() {
        let sid = [9u8; 16];
        // status OK, tag "", CB_SEQUENCE OK {sessionid, 1, 0, 0, 0}, CB_RECALL OK.
        let mut b = words(&[0, 0, 2, 11, 0]);
        b.extend_from_slice(&sid);
        b.extend(words(&[1, 0, 0, 0, 4, 0]));
        let res = CbCompoundRes::decode(&b).unwrap();
        assert_eq!(res.results[0].sequence, Some((sid, 1, 0, 0, 0)));
        assert_eq!(res.results[1], CbOpResult { op: OP_CB_RECALL, status: 0, sequence: None });
        assert_eq!(res.encode(), b);
        // A failed CB_SEQUENCE has no resok.
        let b = words(&[10052, 0, 1, 11, 10052]);
        assert_eq!(CbCompoundRes::decode(&b).unwrap().results[0].sequence, None);
    }

    #[test]
    fn call_message_header() {
        let m = call_message(0x99, 0x40000000, CB_NULL, &CbSec::None, &[]);
        // xid, CALL, rpcvers 2, prog, vers 1, proc 0, AUTH_NONE cred and verifier.
        assert_eq!(m, words(&[0x99, 0, 2, 0x40000000, 1, 0, 0, 0, 0, 0]));
    }
}
