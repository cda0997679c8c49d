//! `serve --fuzz`: the responder replaces some of its replies with mutated copies, to see what
//! a real requester's reply parser does with them. Each mutation breaks one thing a requester
//! must check (RFC 8166 4.5: a header it cannot parse is discarded; 3.3.1: credits; 4.2.1:
//! the XID) and keeps the rest of the reply, so the parser gets past the fields before it.

use std::sync::atomic::{AtomicU64, Ordering};

use rpcrdma_codec::v1::{field, HeaderMut, Proc, MIN_HEADER_LEN};

use crate::rng::Rng;

/// The ways a reply is mutated, each named for reports and reproducers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Mutation {
    /// Cut short, anywhere from 0 bytes to one word less than the reply.
    Truncate,
    /// rdma_vers other than 1.
    Version,
    /// rdma_proc RDMA_MSGP, RDMA_DONE, or one no version defines.
    Procedure,
    /// rdma_credit 0, a huge value, or any.
    Credit,
    /// rdma_xid of no outstanding call.
    Xid,
    /// A chunk-list discriminator or count (read list, write list, segment count, reply
    /// chunk) replaced by any value.
    ChunkWord,
    /// One random bit flipped anywhere in the transport header.
    BitFlip,
    /// Extra bytes after the reply.
    Trailing,
}

impl Mutation {
    pub const ALL: [Mutation; 8] = [
        Mutation::Truncate,
        Mutation::Version,
        Mutation::Procedure,
        Mutation::Credit,
        Mutation::Xid,
        Mutation::ChunkWord,
        Mutation::BitFlip,
        Mutation::Trailing,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Mutation::Truncate => "truncate",
            Mutation::Version => "version",
            Mutation::Procedure => "procedure",
            Mutation::Credit => "credit",
            Mutation::Xid => "xid",
            Mutation::ChunkWord => "chunk-word",
            Mutation::BitFlip => "bit-flip",
            Mutation::Trailing => "trailing",
        }
    }
}

/// Which message a mutation decision is for: its connection's ordinal among the responder's
/// connections ([`ReplyFuzz::connection`], from 1, in the order their sessions start: two
/// connections accepted at nearly the same moment may take each other's numbers) and its
/// own ordinal within its kind on that connection (the n-th reply, the n-th reverse-direction
/// call; from 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MessageId {
    pub connection: u64,
    pub n: u64,
}

/// The kinds of message, each its own draws.
const REPLY: u64 = 1;
const REVERSE_CALL: u64 = 2;

/// Mutates one reply in `one_in`. Whether and how a message is mutated is drawn from the seed
/// and the message's [`MessageId`] alone, never from a generator shared by every message: a
/// message that comes or not with the requester's timing (a call sent again, a callback raced
/// with a disconnection) shifts only the later messages of its kind on its own connection (and
/// a connection that comes or not, the later connections' numbers), not the whole session.
#[derive(Debug)]
pub struct ReplyFuzz {
    seed: u64,
    /// Connections numbered so far.
    connections: AtomicU64,
    one_in: u32,
    /// Whether replies are mutated too, not only reverse-direction calls.
    replies: bool,
    /// The mutations allowed (`serve --fuzz-only`); None: every one.
    only: Option<Only>,
}

/// The mutations a session is held to, each kind in [`Mutation::ALL`]'s and
/// [`ReverseMutation::ALL`]'s order: a message is still drawn as mutated or not as without the
/// restriction, then how from these alone (not at all when none applies to it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Only {
    pub replies: Vec<Mutation>,
    pub reverse: Vec<ReverseMutation>,
}

/// Every mutation's name: the replies' ([`Mutation::name`]), then the reverse-direction
/// calls' ([`ReverseMutation::name`]).
pub fn mutation_names() -> impl Iterator<Item = &'static str> {
    Mutation::ALL.iter().map(|m| m.name()).chain(ReverseMutation::ALL.iter().map(|m| m.name()))
}

impl Only {
    /// The mutations of these names ([`Mutation::name`], [`ReverseMutation::name`]); the first
    /// name that is neither is the error.
    pub fn named<'a>(names: impl IntoIterator<Item = &'a str>) -> Result<Only, String> {
        let names: Vec<&str> = names.into_iter().collect();
        if let Some(bad) = names.iter().find(|n| !mutation_names().any(|m| m == **n)) {
            return Err(format!("no mutation is named {bad}"));
        }
        Ok(Only {
            replies: Mutation::ALL.into_iter().filter(|m| names.contains(&m.name())).collect(),
            reverse: ReverseMutation::ALL.into_iter().filter(|m| names.contains(&m.name())).collect(),
        })
    }
}

impl ReplyFuzz {
    pub fn new(seed: u64, one_in: u32) -> Self {
        ReplyFuzz { seed, connections: AtomicU64::new(0), one_in: one_in.max(1), replies: true, only: None }
    }

    /// Held to `only`'s mutations (`serve --fuzz-only`).
    pub fn only(self, only: Only) -> Self {
        ReplyFuzz { only: Some(only), ..self }
    }

    /// The ordinal of a new connection (from 1): a responder numbers each connection it
    /// accepts, in order.
    pub fn connection(&self) -> u64 {
        self.connections.fetch_add(1, Ordering::SeqCst) + 1
    }

    /// The draws of the message `at` of kind `kind`: SplitMix64 chained over the seed, the
    /// kind, the connection and the ordinal.
    fn rng(&self, kind: u64, at: MessageId) -> Rng {
        let h =
            [kind, at.connection, at.n].iter().fold(Rng::new(self.seed).next_u64(), |h, w| Rng::new(h ^ w).next_u64());
        Rng::new(h)
    }

    /// Mutates reverse-direction calls only (`serve --fuzz --fuzz-reverse-only`): the forward
    /// replies stay faithful, so a requester gets as far as its back channel at any rate.
    pub fn reverse_only(seed: u64, one_in: u32) -> Self {
        ReplyFuzz { replies: false, ..ReplyFuzz::new(seed, one_in) }
    }

    /// A mutated copy of `reply` (the message `at`) and how it was mutated, or None to send
    /// it as it is.
    pub fn mutate(&self, at: MessageId, reply: &[u8]) -> Option<(Vec<u8>, Mutation)> {
        if !self.replies {
            return None;
        }
        let mut rng = self.rng(REPLY, at);
        if reply.len() < 16 || !rng.chance(1, self.one_in) {
            return None;
        }
        let m = match &self.only {
            None => rng.pick(&Mutation::ALL),
            Some(o) if o.replies.is_empty() => return None,
            Some(o) => rng.pick(&o.replies),
        };
        let mut b = reply.to_vec();
        // At least the fixed fields (checked above): every edit of them is named.
        let mut h = HeaderMut::new(&mut b).ok()?;
        match m {
            Mutation::Truncate => b.truncate(rng.below(reply.len() - 3)),
            Mutation::Version => h.set_vers(rng.pick(&[0, 2, 7, u32::MAX])),
            Mutation::Procedure => h.set_proc(Proc(rng.pick(&[2, 3, 5, 6, 0x8000_0000, u32::MAX]))),
            Mutation::Credit => {
                let v = [0, 1, 0xffff, 0x0001_0000, u32::MAX, rng.u32()];
                h.set_credit(rng.pick(&v))
            }
            Mutation::Xid => h.set_xid(h.fixed().xid ^ (1 + rng.u32() % 0xffff)),
            Mutation::ChunkWord => {
                // The body words of RDMA_MSG/NOMSG hold the chunk lists: one of the first 12.
                let words = (reply.len().min(64) - field::BODY) / 4;
                let index = rng.below(words.max(1));
                let any = rng.u32();
                // A reply with no body word is left as it is (and not counted as mutated).
                let _ = h.set_body_word(index, rng.pick(&[2, 0xffff, 0x7fff_ffff, u32::MAX, any]));
            }
            Mutation::BitFlip => {
                let at = rng.below(reply.len().min(64));
                b[at] ^= 1 << rng.below(8);
            }
            Mutation::Trailing => {
                let n = 4 * (1 + rng.below(8));
                b.extend((0..n).map(|_| rng.u32() as u8));
            }
        }
        (b != reply).then_some((b, m))
    }
}

/// The ways a reverse-direction call (RFC 8167 5.1: an NFSv4.1 callback sent toward the
/// requester) is mutated: the transport header's words, then the words of the RPC call
/// (RFC 5531 9) and of CB_COMPOUND (RFC 8881 19.2.1, 20.9.1, 20.2.1) that the requester's
/// backchannel receive path decodes. Each is recorded as `reverse-NAME`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ReverseMutation {
    /// Cut short, anywhere from 0 bytes to one word less than the call.
    Truncate,
    /// rdma_vers other than 1.
    Version,
    /// rdma_proc other than RDMA_MSG/RDMA_NOMSG.
    Procedure,
    /// rdma_credit (the requested reverse credits) 0 or huge.
    Credit,
    /// rdma_xid not the RPC call's (RFC 8167 5.1: they must be the same).
    Xid,
    /// The read list's discriminator (the first chunk-list word) replaced.
    ChunkWord,
    /// The RPC msg_type: REPLY or no direction at all.
    RpcMsgType,
    /// The RPC rpcvers other than 2.
    RpcVers,
    /// The RPC prog other than the callback program.
    Prog,
    /// The RPC vers other than the callback version.
    Vers,
    /// The RPC proc other than CB_NULL/CB_COMPOUND.
    Proc,
    /// The credential's opaque length beyond MAX_AUTH_BYTES (400) or the message.
    CredLength,
    /// CB_COMPOUND4args tag length huge.
    TagLength,
    /// CB_COMPOUND4args argarray count huge.
    OpCount,
    /// CB_SEQUENCE4args csa_slotid huge.
    SlotId,
    /// CB_SEQUENCE4args csa_highest_slotid huge.
    HighestSlotId,
    /// CB_SEQUENCE4args csa_referring_call_lists count huge.
    ReferringCallLists,
    /// CB_RECALL4args fh length beyond NFS4_FHSIZE (128).
    RecallFhLength,
}

impl ReverseMutation {
    pub const ALL: [ReverseMutation; 18] = [
        ReverseMutation::Truncate,
        ReverseMutation::Version,
        ReverseMutation::Procedure,
        ReverseMutation::Credit,
        ReverseMutation::Xid,
        ReverseMutation::ChunkWord,
        ReverseMutation::RpcMsgType,
        ReverseMutation::RpcVers,
        ReverseMutation::Prog,
        ReverseMutation::Vers,
        ReverseMutation::Proc,
        ReverseMutation::CredLength,
        ReverseMutation::TagLength,
        ReverseMutation::OpCount,
        ReverseMutation::SlotId,
        ReverseMutation::HighestSlotId,
        ReverseMutation::ReferringCallLists,
        ReverseMutation::RecallFhLength,
    ];

    /// The name in the tap (`Observed::Mutated`), reports and findings.
    pub fn name(self) -> &'static str {
        match self {
            ReverseMutation::Truncate => "reverse-truncate",
            ReverseMutation::Version => "reverse-version",
            ReverseMutation::Procedure => "reverse-procedure",
            ReverseMutation::Credit => "reverse-credit",
            ReverseMutation::Xid => "reverse-xid",
            ReverseMutation::ChunkWord => "reverse-chunk-word",
            ReverseMutation::RpcMsgType => "reverse-msg-type",
            ReverseMutation::RpcVers => "reverse-rpcvers",
            ReverseMutation::Prog => "reverse-prog",
            ReverseMutation::Vers => "reverse-vers",
            ReverseMutation::Proc => "reverse-proc",
            ReverseMutation::CredLength => "reverse-cred-length",
            ReverseMutation::TagLength => "reverse-cb-tag-length",
            ReverseMutation::OpCount => "reverse-cb-op-count",
            ReverseMutation::SlotId => "reverse-csa-slotid",
            ReverseMutation::HighestSlotId => "reverse-csa-highest-slotid",
            ReverseMutation::ReferringCallLists => "reverse-csa-referring-call-lists",
            ReverseMutation::RecallFhLength => "reverse-cb-recall-fh-length",
        }
    }

    /// The values the word takes (the original is never kept: see `mutate_call`).
    fn values(self) -> &'static [u32] {
        const HUGE: &[u32] = &[0x1_0000, 0x7fff_ffff, u32::MAX];
        match self {
            ReverseMutation::Version => &[0, 2, 7, u32::MAX],
            ReverseMutation::Procedure => &[2, 3, 4, 5, u32::MAX],
            ReverseMutation::Credit => &[0, 0xffff, u32::MAX],
            ReverseMutation::ChunkWord => &[1, 2, u32::MAX],
            ReverseMutation::RpcMsgType => &[1, 2, u32::MAX],
            ReverseMutation::RpcVers => &[0, 1, 3, u32::MAX],
            ReverseMutation::Prog => &[0, 100003, u32::MAX],
            ReverseMutation::Vers => &[0, 5, u32::MAX],
            ReverseMutation::Proc => &[2, 3, u32::MAX],
            ReverseMutation::CredLength => &[401, 0x7fff_ffff, u32::MAX],
            ReverseMutation::RecallFhLength => &[129, 0x7fff_ffff, u32::MAX],
            ReverseMutation::Truncate | ReverseMutation::Xid => &[],
            _ => HUGE,
        }
    }
}

/// The big-endian word at `at`.
fn word_at(b: &[u8], at: usize) -> Option<u32> {
    b.get(at..at + 4).map(|x| u32::from_be_bytes([x[0], x[1], x[2], x[3]]))
}

/// Where each word a reverse mutation replaces sits in `call` (an RDMA_MSG or RDMA_NOMSG
/// reverse-direction call as RFC 8167 5.1 frames it); a field not present (a Long call's RPC
/// message is in a read chunk, CB_NULL has no arguments) is absent.
pub fn reverse_fields(call: &[u8]) -> Vec<(ReverseMutation, usize)> {
    use ReverseMutation as R;
    let mut out = vec![
        (R::Xid, field::XID),
        (R::Version, field::VERS),
        (R::Credit, field::CREDIT),
        (R::Procedure, field::PROC),
        (R::ChunkWord, field::BODY),
    ];
    // RFC 8166 4.2: an RDMA_MSG with three empty chunk lists carries the RPC call at word 7.
    let empty_lists = (field::BODY..MIN_HEADER_LEN).step_by(4).all(|at| word_at(call, at) == Some(0));
    if word_at(call, field::PROC) != Some(Proc::RDMA_MSG.0) || !empty_lists {
        return out;
    }
    let rpc = MIN_HEADER_LEN;
    // RFC 5531 9: xid, msg_type, rpcvers, prog, vers, proc, cred (flavor, opaque), verf.
    out.extend([(R::RpcMsgType, rpc + 4), (R::RpcVers, rpc + 8), (R::Prog, rpc + 12), (R::Vers, rpc + 16)]);
    out.extend([(R::Proc, rpc + 20), (R::CredLength, rpc + 28)]);
    let pad = |n: u32| (n as usize).div_ceil(4) * 4;
    let walk = || -> Option<Vec<(ReverseMutation, usize)>> {
        let mut fields = Vec::new();
        let verf = rpc + 32 + pad(word_at(call, rpc + 28)?);
        let mut at = verf + 8 + pad(word_at(call, verf + 4)?);
        // RFC 8881 19.2: CB_COMPOUND is procedure 1.
        if word_at(call, rpc + 20)? != 1 {
            return Some(fields);
        }
        // CB_COMPOUND4args: tag, minorversion, callback_ident, argarray.
        fields.push((R::TagLength, at));
        at += 4 + pad(word_at(call, at)?) + 8;
        let count = word_at(call, at)?;
        fields.push((R::OpCount, at));
        at += 4;
        for _ in 0..count.min(16) {
            match word_at(call, at)? {
                // OP_CB_SEQUENCE (RFC 8881 20.9.1): sessionid[16], sequenceid, slotid,
                // highest_slotid, cachethis, referring_call_lists<>.
                11 => {
                    fields.extend([
                        (R::SlotId, at + 24),
                        (R::HighestSlotId, at + 28),
                        (R::ReferringCallLists, at + 36),
                    ]);
                    if word_at(call, at + 36)? != 0 {
                        break;
                    }
                    at += 40;
                }
                // OP_CB_RECALL (RFC 8881 20.2.1): stateid (16), truncate, fh<NFS4_FHSIZE>.
                4 => {
                    fields.push((R::RecallFhLength, at + 24));
                    at += 28 + pad(word_at(call, at + 24)?);
                }
                _ => break,
            }
        }
        Some(fields)
    };
    out.extend(walk().unwrap_or_default().into_iter().filter(|(_, at)| at + 4 <= call.len()));
    out
}

/// Writes `value` into the word `m` names at `at`: the transport header's fields by name
/// (RFC 8166 4.2), the RPC call's and CB_COMPOUND's where [`reverse_fields`] found them.
fn set_word(b: &mut [u8], m: ReverseMutation, at: usize, value: u32) -> Option<()> {
    let mut h = HeaderMut::new(b).ok()?;
    match m {
        ReverseMutation::Xid => h.set_xid(value),
        ReverseMutation::Version => h.set_vers(value),
        ReverseMutation::Credit => h.set_credit(value),
        ReverseMutation::Procedure => h.set_proc(Proc(value)),
        ReverseMutation::ChunkWord => h.set_body_word(0, value).ok()?,
        _ => b.get_mut(at..at + 4)?.copy_from_slice(&value.to_be_bytes()),
    }
    Some(())
}

impl ReplyFuzz {
    /// A mutated copy of the reverse-direction call `call` (the message `at`) and how it was
    /// mutated, or None to send it as it is; one in `one_in`.
    pub fn mutate_call(&self, at: MessageId, call: &[u8]) -> Option<(Vec<u8>, ReverseMutation)> {
        let mut rng = self.rng(REVERSE_CALL, at);
        if call.len() < 16 || !rng.chance(1, self.one_in) {
            return None;
        }
        let mut fields = reverse_fields(call);
        fields.push((ReverseMutation::Truncate, 0));
        if let Some(o) = &self.only {
            fields.retain(|(m, _)| o.reverse.contains(m));
            if fields.is_empty() {
                return None;
            }
        }
        let (m, at) = rng.pick(&fields);
        let mut b = call.to_vec();
        match m {
            ReverseMutation::Truncate => b.truncate(rng.below(call.len() - 3)),
            ReverseMutation::Xid => {
                let mut h = HeaderMut::new(&mut b).ok()?;
                h.set_xid(h.fixed().xid ^ (1 + rng.u32() % 0xffff))
            }
            _ => {
                let old = word_at(call, at)?;
                let values: Vec<u32> = m.values().iter().copied().filter(|v| *v != old).collect();
                set_word(&mut b, m, at, rng.pick(&values))?
            }
        }
        (b != call).then_some((b, m))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rpcrdma_codec::v1::FixedFields;

    /// The `n`-th message of its kind on connection 1.
    fn id(n: u64) -> MessageId {
        MessageId { connection: 1, n }
    }

    fn reply() -> Vec<u8> {
        let mut r = Vec::new();
        for w in [0x1234_5678u32, 1, 32, 0, 0, 0, 0, 0x1234_5678, 1, 0] {
            r.extend_from_slice(&w.to_be_bytes());
        }
        r
    }

    #[test]
    fn every_mutation_comes_up_and_changes_what_it_names() {
        let f = ReplyFuzz::new(7, 1);
        let r = reply();
        let mut seen = std::collections::BTreeSet::new();
        for n in 1..=2000 {
            let Some((b, m)) = f.mutate(id(n), &r) else { continue };
            seen.insert(m);
            // The fixed fields (RFC 8166 4.2) before and after, each compared by name.
            let before = FixedFields::decode(&r).unwrap();
            let after = FixedFields::decode(&b);
            let only = |f: FixedFields| after.map(|a| (a, a != before)) == Ok((f, true));
            match m {
                Mutation::Truncate => assert!(b.len() < r.len()),
                Mutation::Version => {
                    assert!(after.is_ok_and(|a| a.vers != 1 && only(FixedFields { vers: a.vers, ..before })))
                }
                Mutation::Procedure => {
                    assert!(after
                        .is_ok_and(|a| a.proc_ > 1 && a.proc_ != 4 && only(FixedFields { proc_: a.proc_, ..before })))
                }
                Mutation::Credit => assert!(after.is_ok_and(|a| only(FixedFields { credit: a.credit, ..before }))),
                Mutation::Xid => assert!(after.is_ok_and(|a| only(FixedFields { xid: a.xid, ..before }))),
                Mutation::ChunkWord => assert_eq!((after, b.len()), (Ok(before), r.len())),
                Mutation::BitFlip => assert_eq!(b.iter().zip(&r).filter(|(x, y)| x != y).count(), 1),
                Mutation::Trailing => assert!(b.len() > r.len() && b.starts_with(&r)),
            }
        }
        assert_eq!(seen.len(), Mutation::ALL.len(), "{seen:?}");
    }

    #[test]
    fn the_rate_and_the_seed_hold() {
        let f = ReplyFuzz::new(3, 4);
        let n = (1..=4000).filter(|n| f.mutate(id(*n), &reply()).is_some()).count();
        assert!((800..1200).contains(&n), "{n} of 4000 mutated at one in 4");
        let (a, b) = (ReplyFuzz::new(9, 1), ReplyFuzz::new(9, 1));
        for n in 1..=50 {
            assert_eq!(a.mutate(id(n), &reply()), b.mutate(id(n), &reply()));
        }
    }

    #[test]
    fn a_message_that_comes_or_not_changes_nothing_about_the_others() {
        // Two sessions of one seed; in the second, reply 5 and reverse call 3 never come (the
        // requester closed the connection first) and the connections are asked in another
        // order: every other message gets the same mutation.
        let (a, b) = (ReplyFuzz::new(21, 2), ReplyFuzz::new(21, 2));
        let call = cb_compound();
        let mut seen_a = Vec::new();
        for connection in 1..=3 {
            for n in 1..=40 {
                let at = MessageId { connection, n };
                seen_a.push((at, a.mutate(at, &reply()), a.mutate_call(at, &call)));
            }
        }
        let mut seen_b = Vec::new();
        for connection in [3, 1, 2] {
            for n in 1..=40 {
                let at = MessageId { connection, n };
                let r = (n != 5).then(|| b.mutate(at, &reply())).flatten();
                let c = (n != 3).then(|| b.mutate_call(at, &call)).flatten();
                seen_b.push((at, r, c));
            }
        }
        for (at, r, c) in &seen_a {
            let (_, rb, cb) = seen_b.iter().find(|(x, _, _)| x == at).unwrap();
            if at.n != 5 {
                assert_eq!(r, rb, "{at:?}");
            }
            if at.n != 3 {
                assert_eq!(c, cb, "{at:?}");
            }
        }
        // Yet each message has draws of its own: connections and kinds are not copies.
        let fate = |c, n| a.mutate(MessageId { connection: c, n }, &reply()).map(|x| x.1);
        assert!((1..=40).any(|n| fate(1, n) != fate(2, n)));
        assert!((1..=40).any(|n| fate(1, n).is_some() != a.mutate_call(id(n), &call).is_some()));
        assert_eq!(a.connection(), 1);
        assert_eq!(a.connection(), 2);
    }

    /// A Short reverse-direction call written by hand: RFC 8166 4.2's RDMA_MSG with three
    /// empty lists, RFC 5531 9's call header (AUTH_NONE), and RFC 8881 19.2.1's CB_COMPOUND4args
    /// with CB_SEQUENCE4args (20.9.1) and CB_RECALL4args (20.2.1).
    fn cb_compound() -> Vec<u8> {
        // Bytes 0..28: transport header; 28..68: RPC call; 68..88: tag "tag", minorversion,
        // callback_ident, 2 ops; 88..128: OP_CB_SEQUENCE; 128..168: OP_CB_RECALL (fh of 8).
        let transport = [0xc000_0001, 1, 8, 0, 0, 0, 0];
        let rpc = [0xc000_0001, 0, 2, 0x4000_0000, 1, 1, 0, 0, 0, 0];
        let compound = [4, 0x7461_6700, 1, 0, 2];
        let sequence = [11, 0xa1, 0xa2, 0xa3, 0xa4, 7, 0, 3, 0, 0];
        let recall = [4, 1, 0xb1, 0xb2, 0xb3, 0, 8, 0xf1, 0xf2, 0];
        let w: Vec<u32> = [&transport[..], &rpc, &compound, &sequence, &recall].concat();
        w.iter().flat_map(|x| x.to_be_bytes()).collect()
    }

    #[test]
    fn every_reverse_mutation_changes_exactly_the_word_it_names() {
        use ReverseMutation as R;
        let at = |m| match m {
            R::Xid => 0,
            R::Version => 4,
            R::Credit => 8,
            R::Procedure => 12,
            R::ChunkWord => 16,
            R::RpcMsgType => 32,
            R::RpcVers => 36,
            R::Prog => 40,
            R::Vers => 44,
            R::Proc => 48,
            R::CredLength => 56,
            R::TagLength => 68,
            R::OpCount => 84,
            R::SlotId => 112,
            R::HighestSlotId => 116,
            R::ReferringCallLists => 124,
            R::RecallFhLength => 152,
            R::Truncate => usize::MAX,
        };
        let c = cb_compound();
        let f = ReplyFuzz::new(11, 1);
        let mut seen = std::collections::BTreeSet::new();
        for n in 1..=3000 {
            let Some((b, m)) = f.mutate_call(id(n), &c) else { continue };
            seen.insert(m);
            if m == R::Truncate {
                assert!(b.len() < c.len() && c.starts_with(&b));
                continue;
            }
            assert_eq!(b.len(), c.len(), "{m:?}");
            let changed: Vec<usize> = (0..c.len() / 4).filter(|i| b[4 * i..4 * i + 4] != c[4 * i..4 * i + 4]).collect();
            assert_eq!(changed, [at(m) / 4], "{m:?}");
            let v = u32::from_be_bytes(b[at(m)..at(m) + 4].try_into().unwrap());
            match m {
                R::Version => assert_ne!(v, 1),
                R::RpcMsgType => assert_ne!(v, 0, "still CALL"),
                R::RpcVers => assert_ne!(v, 2),
                R::CredLength => assert!(v > 400, "MAX_AUTH_BYTES"),
                R::RecallFhLength => assert!(v > 128, "NFS4_FHSIZE"),
                R::TagLength | R::OpCount | R::SlotId | R::HighestSlotId | R::ReferringCallLists => {
                    assert!(v >= 0x1_0000, "{m:?} {v:#x}")
                }
                _ => {}
            }
        }
        assert_eq!(seen.len(), ReverseMutation::ALL.len(), "{seen:?}");
    }

    #[test]
    fn a_cb_null_or_long_call_offers_only_the_fields_it_has() {
        use ReverseMutation as R;
        // CB_NULL (procedure 0): the RPC header's words, no CB_COMPOUND ones.
        let null: Vec<u8> = [1u32, 1, 8, 0, 0, 0, 0, 1, 0, 2, 0x4000_0000, 1, 0, 0, 0, 0, 0]
            .iter()
            .flat_map(|x| x.to_be_bytes())
            .collect();
        let f: Vec<R> = reverse_fields(&null).into_iter().map(|(m, _)| m).collect();
        assert!(f.contains(&R::Proc) && f.contains(&R::CredLength) && !f.contains(&R::OpCount), "{f:?}");
        // RDMA_NOMSG (1) with a read list: the RPC call is in the chunk, not here.
        let long: Vec<u8> = [1u32, 1, 8, 1, 1, 0, 7, 64, 0, 0, 0, 0].iter().flat_map(|x| x.to_be_bytes()).collect();
        let f: Vec<R> = reverse_fields(&long).into_iter().map(|(m, _)| m).collect();
        assert_eq!(f, [R::Xid, R::Version, R::Credit, R::Procedure, R::ChunkWord]);
    }

    #[test]
    fn reverse_mutations_follow_the_seed_and_the_rate() {
        let (a, b) = (ReplyFuzz::new(5, 2), ReplyFuzz::new(5, 2));
        let mut n = 0;
        for i in 1..=400 {
            let x = a.mutate_call(id(i), &cb_compound());
            n += usize::from(x.is_some());
            assert_eq!(x, b.mutate_call(id(i), &cb_compound()));
        }
        assert!((150..250).contains(&n), "{n} of 400 at one in 2");
    }

    #[test]
    fn a_session_held_to_some_mutations_makes_those_alone_at_the_same_rate() {
        let only = Only::named(["xid", "reverse-csa-referring-call-lists"]).unwrap();
        assert_eq!(
            (&only.replies[..], &only.reverse[..]),
            (&[Mutation::Xid][..], &[ReverseMutation::ReferringCallLists][..])
        );
        let f = ReplyFuzz::new(13, 2).only(only);
        let (mut replies, mut calls) = (0, 0);
        for n in 1..=400 {
            if let Some((_, m)) = f.mutate(id(n), &reply()) {
                assert_eq!(m, Mutation::Xid);
                replies += 1;
            }
            if let Some((_, m)) = f.mutate_call(id(n), &cb_compound()) {
                assert_eq!(m, ReverseMutation::ReferringCallLists);
                calls += 1;
            }
        }
        assert!((150..250).contains(&replies) && (150..250).contains(&calls), "{replies} {calls} of 400");
        // A call without the field named (CB_NULL has no CB_SEQUENCE) is left as it is.
        let null: Vec<u8> = [1u32, 1, 8, 0, 0, 0, 0, 1, 0, 2, 0x4000_0000, 1, 0, 0, 0, 0, 0]
            .iter()
            .flat_map(|x| x.to_be_bytes())
            .collect();
        assert!((1..=200).all(|n| f.mutate_call(id(n), &null).is_none()));
        // Reverse mutations named alone: no reply is mutated.
        let f = ReplyFuzz::new(13, 1).only(Only::named(["reverse-xid"]).unwrap());
        assert!((1..=200).all(|n| f.mutate(id(n), &reply()).is_none()));
        assert!((1..=200).all(|n| f.mutate_call(id(n), &cb_compound()).map(|x| x.1) == Some(ReverseMutation::Xid)));
    }

    #[test]
    fn every_mutation_named_is_the_session_without_the_restriction() {
        let (a, b) = (ReplyFuzz::new(17, 2), ReplyFuzz::new(17, 2).only(Only::named(mutation_names()).unwrap()));
        for n in 1..=300 {
            assert_eq!(a.mutate(id(n), &reply()), b.mutate(id(n), &reply()), "reply {n}");
            assert_eq!(a.mutate_call(id(n), &cb_compound()), b.mutate_call(id(n), &cb_compound()), "call {n}");
        }
    }

    #[test]
    fn a_name_that_is_no_mutation_is_refused() {
        assert_eq!(Only::named(["xid", "rdma-xid"]), Err("no mutation is named rdma-xid".into()));
    }
}
