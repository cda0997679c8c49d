//! NFSv4.1 (RFC 8881) and NFSv4.2 (RFC 7862) over an in-memory [`Tree`]: minor versions 1
//! and 2 of the COMPOUND procedure, behind [`super::NfsServer`] (minor version 0 stays in
//! [`super::nfs4`]). Enough for the Linux client to mount, list, stat, read, write and create
//! files and unmount: EXCHANGE_ID, CREATE_SESSION (fore and back channel), SEQUENCE (a slot
//! table, the last reply of each slot cached), BIND_CONN_TO_SESSION, DESTROY_SESSION,
//! DESTROY_CLIENTID, RECLAIM_COMPLETE, PUTROOTFH, PUTFH, GETFH, SAVEFH, RESTOREFH, LOOKUP,
//! LOOKUPP, SECINFO_NO_NAME, GETATTR, ACCESS, OPEN (CLAIM_NULL and CLAIM_FH; UNCHECKED4,
//! GUARDED4, EXCLUSIVE4 and EXCLUSIVE4_1), CLOSE, READ, READLINK, WRITE, COMMIT, SETATTR,
//! READDIR, TEST_STATEID, FREE_STATEID and DELEGRETURN. Any other operation of the minor
//! version is NFS4ERR_NOTSUPP, any other number OP_ILLEGAL; either ends the COMPOUND.
//!
//! The back channel (RFC 8881 2.10.3.1, RFC 8167): once CREATE_SESSION grants
//! CREATE_SESSION4_FLAG_CONN_BACK_CHAN, or BIND_CONN_TO_SESSION binds a connection for the
//! back channel, a CB_NULL is queued for that connection (as Linux nfsd probes it,
//! nfsd4_probe_callback). A read-only OPEN by a client whose session has a back channel gets
//! an OPEN_DELEGATE_READ; an OPEN for writing by another client queues CB_RECALL (a
//! CB_COMPOUND of CB_SEQUENCE on back channel slot 0 and CB_RECALL) to the holder and is
//! answered NFS4ERR_DELAY until DELEGRETURN (RFC 8881 10.4.1). The calls leave through
//! [`UpperLayer::take_reverse_calls`](super::UpperLayer::take_reverse_calls) of the
//! connection that carries the back channel; their replies come back through
//! `reverse_reply`. A back channel connection that goes away keeps its unanswered calls, which
//! are sent again once a connection is bound to the back channel (RFC 8167 5.4).
//!
//! Choices RFC 8881 leaves open: state is shared by every connection of one responder
//! ([`Shared`]), with its own tree (the NFSv3 and NFSv4.0 servers keep one per connection);
//! nothing persists (no CREATE_SESSION4_FLAG_PERSIST) and there is no grace period; the
//! server owner and scope are fixed; AUTH_SYS is the only security flavour offered; the
//! replay cache holds every slot's last reply whatever sa_cachethis says; SETATTR applies
//! a size and accepts a mode, owner and times without applying them (attributes are fixed,
//! as over NFSv3); WRITE is always FILE_SYNC4; at most [`FORE_MAX_SLOTS`] fore-channel slots
//! and [`BACK_MAX_SLOTS`] back-channel slots.

mod attrs;
mod ops;
mod state;

use std::sync::{Arc, Mutex, Weak};

use rpcrdma_codec::xdr::Reader;

use super::tree::Tree;
use super::UlpOutcome;
use crate::proto::nfs41::{Op, OP_WRITE, STATEID_LEN};
pub use state::{CbEvent, Faults};

/// Fore-channel slots granted at most (ca_maxrequests).
pub const FORE_MAX_SLOTS: u32 = 16;
/// Back-channel slots accepted at most.
pub const BACK_MAX_SLOTS: u32 = 4;
/// The lease time, seconds (FATTR4_LEASE_TIME).
pub const LEASE_TIME: u32 = 90;
/// Largest request and reply granted on the fore channel: a 64 KiB WRITE or READ and room
/// for the rest of its COMPOUND.
pub const FORE_MAX_SIZE: u32 = (64 << 10) + 4096;
/// Operations granted per COMPOUND at most (ca_maxoperations).
pub const FORE_MAX_OPS: u32 = 32;
/// The callback program Linux clients choose (RFC 8881 18.36: csa_cb_program), used by the
/// `cb-before-back-channel` fault, when no client has chosen one yet.
pub const DEFAULT_CB_PROGRAM: u32 = 0x4000_0000;

/// The NFSv4.1/4.2 state every connection of one responder shares: clients, sessions, opens,
/// delegations, the tree and the reverse-direction calls queued per connection.
#[derive(Clone)]
pub struct Shared(Arc<Mutex<state::State>>);

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("nfs41::Shared").finish_non_exhaustive()
    }
}

impl Default for Shared {
    fn default() -> Self {
        Shared::new(Faults::default())
    }
}

impl Shared {
    /// Fresh state over the standard tree, with `faults` switched on.
    pub fn new(faults: Faults) -> Self {
        Shared(Arc::new(Mutex::new(state::State::new(faults))))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, state::State> {
        // The state is consistent between operations, so a poisoned lock is still usable.
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A new connection's handle on this state.
    pub fn connect(&self) -> Conn {
        let id = self.lock().connect();
        Conn { shared: self.clone(), token: Arc::new(Token { id, state: Arc::downgrade(&self.0) }) }
    }

    /// The replies to reverse-direction calls received so far, in order.
    pub fn callbacks(&self) -> Vec<CbEvent> {
        self.lock().events.clone()
    }

    /// Runs `f` on the tree.
    pub fn with_tree<T>(&self, f: impl FnOnce(&Tree) -> T) -> T {
        f(&self.lock().tree)
    }
}

/// Ends a connection's back channel when the last handle on the connection goes.
struct Token {
    id: u64,
    state: Weak<Mutex<state::State>>,
}

impl Drop for Token {
    fn drop(&mut self) {
        if let Some(s) = self.state.upgrade() {
            s.lock().unwrap_or_else(|e| e.into_inner()).disconnect(self.id);
        }
    }
}

/// One connection's handle on the [`Shared`] state (clones are the same connection).
#[derive(Clone)]
pub struct Conn {
    shared: Shared,
    token: Arc<Token>,
}

impl std::fmt::Debug for Conn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("nfs41::Conn").field("id", &self.token.id).finish()
    }
}

impl Default for Conn {
    fn default() -> Self {
        Shared::default().connect()
    }
}

impl Conn {
    /// This connection's number within its state.
    pub fn id(&self) -> u64 {
        self.token.id
    }

    /// The state this connection shares.
    pub fn shared(&self) -> &Shared {
        &self.shared
    }

    /// COMPOUND of minor version 1 or 2 (RFC 8881 16.2, 2.10.6), offered `write_list` (each
    /// write chunk's segment count; it matters only under a fault).
    pub fn compound(&self, args: &[u8], write_list: &[u32]) -> UlpOutcome {
        ops::compound(&mut self.shared.lock(), self.token.id, args, write_list)
    }

    /// The reverse-direction calls queued for this connection, taken.
    pub fn take_reverse_calls(&self) -> Vec<Vec<u8>> {
        self.shared.lock().take_calls(self.token.id)
    }

    /// A reverse-direction reply that arrived on this connection.
    pub fn reverse_reply(&self, msg: &[u8]) {
        self.shared.lock().reverse_reply(msg)
    }
}

/// Whether byte `offset` of a minor version 1 or 2 COMPOUND4args starts a WRITE's data
/// (RFC 8267 6.1), walking the operations before it. CREATE is not served (its NF4LNK
/// linkdata is never reached: the walk stops at the first operation it cannot skip).
pub fn eligible_arg_at(args: &[u8], offset: usize) -> Option<bool> {
    let mut r = Reader::new(args);
    r.opaque("tag", u32::MAX).ok()?;
    r.u32("minorversion").ok()?;
    for _ in 0..r.u32("argarray").ok()? {
        let at = r.position();
        if args.get(at..at + 4)? == OP_WRITE.to_be_bytes() {
            // argop, stateid, offset, stable, then the data's length word.
            r.take(4 + STATEID_LEN + 12, "WRITE4args").ok()?;
            r.u32("data").ok()?;
            return Some(r.position() == offset);
        }
        if let Op::Other(_) = Op::decode(&mut r).ok()? {
            return None;
        }
    }
    None
}
