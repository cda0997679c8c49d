//! Scenarios of `serve`: deliberate test scripts, not defects. A responder playing one replaces
//! its reply to one chosen call (the first NFSv3 READ sent inline that `targets` picks) with a
//! message the requester must react to as the specs require, once per responder, and records
//! the injection in the observation tap; or it accepts connections with altered CM private
//! data, or answers CCP with small limits. With no scenario the responder's path is untouched.
//! A Version Two scenario ([`Scenario::version_two`]) plays on a Version Two call instead.

use rpcrdma_codec::chunk::{ChunkLists, Segment};
use rpcrdma_codec::private_data;
use rpcrdma_codec::rpc::CallHeader;
use rpcrdma_codec::rpc::{AcceptStat, ReplyHeader, RpcHeader, RpcMessage};
use rpcrdma_codec::v1::{FixedFields, HeaderBuilder, HeaderMut, Message, Proc, MIN_HEADER_LEN};
use rpcrdma_codec::v2::{self, MsgType};
use rpcrdma_codec::xdr::{Encode, Reader};
use rpcrdma_codec::Profile;

use crate::proto::nfs3::{self, NFSPROC3_READ, NFS_PROGRAM};
use crate::ulp::CcpServer;

/// Declares the scenarios once each: a variant, its command-line name and its doc.
macro_rules! scenarios {
    ($(#[$meta:meta])* pub enum $name:ident { $($(#[doc = $doc:literal])* $variant:ident = $label:literal,)* }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name {
            $($(#[doc = $doc])* $variant,)*
        }

        impl $name {
            /// Every scenario, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),*];

            /// Its name (the `serve` selectors and the observation tap use it).
            pub fn name(self) -> &'static str {
                match self {
                    $($name::$variant => $label,)*
                }
            }

            /// The scenario of that name.
            pub fn named(name: &str) -> Option<Self> {
                Self::ALL.iter().copied().find(|s| s.name() == name)
            }
        }
    };
}

scenarios! {
    /// What the responder injects in place of its reply to the chosen call.
    pub enum Scenario {
        /// The reply cut to 24 bytes, shorter than a minimal header (RFC 8166 4.5).
        ShortReply = "short-reply",
        /// The reply with rdma_vers 0 (RFC 8166 4.5: an error in a reply's header).
        ReplyBadVersion = "reply-bad-version",
        /// The reply with rdma_proc 5, which Version One does not define (RFC 8166 4.5: an
        /// error in a reply's header).
        ReplyUnknownProc = "reply-unknown-proc",
        /// The reply with rdma_proc RDMA_MSGP (RFC 8166 4.6.1).
        ReplyMsgp = "reply-msgp",
        /// An RDMA_DONE, padded to 28 bytes, instead of the reply (RFC 8166 4.6.2).
        ReplyDone = "reply-done",
        /// An RDMA_ERROR with rdma_err 3 (no such error), padded to 28 bytes, instead of the
        /// reply (RFC 8166 4.5: an RDMA_ERROR that cannot be decoded).
        UndecodableError = "undecodable-error",
        /// The reply grants 1 credit, and so does every later reply on the connection
        /// (RFC 8166 3.3.1: the granted value may be reduced).
        ShrinkGrant = "shrink-grant",
        /// Version Two: before the reply, a backward-direction call to the requester (CB_NULL
        /// of the NFSv4 callback program, RDMA2_MSG with rdma_direction CALL; v2-01 4.2.2:
        /// backward direction is REQUIRED).
        BackwardCall = "v2-backward-call",
        /// The reply grants 0 credits, and so does every later reply on the connection
        /// (RFC 8166 3.3.1: a grant the requester cannot go beyond; MUST NOT be zero).
        ZeroGrant = "zero-grant",
        /// The reply grants [`HUGE_GRANT`] credits, and so does every later reply on the
        /// connection, with receives posted for them (RFC 8166 3.3.1: the requester still keeps
        /// to its own receive resources).
        HugeGrant = "huge-grant",
        /// The responder accepts every connection with no private data (RFC 8797 5.1, RFC 8166
        /// 3.3.3: the requester assumes 1024-byte inline thresholds). No reply is replaced.
        CmNoPrivateData = "cm-no-private-data",
        /// Our private data with its format identifier one bit off (RFC 8797 5.2: as if none
        /// had been provided). No reply is replaced.
        CmBadIdentifier = "cm-bad-identifier",
        /// Our private data with every reserved bit set (RFC 8797 4: receivers ignore them).
        /// No reply is replaced.
        CmReservedBits = "cm-reserved-bits",
        /// Our private data on the connection the chosen call comes on; the connection is closed
        /// after its reply (unchanged), and later ones are accepted with none (RFC 8797 4: the
        /// settings may change upon a reconnection).
        CmChangeOnReconnect = "cm-change-on-reconnect",
        /// The reply to an NFSv3 READ of 1024 bytes or more asked without a write chunk, cut to
        /// exactly 1024 bytes as a short read (RFC 8166 3.3.3: receivers MUST support inline
        /// thresholds of 1024 bytes).
        Reply1024 = "reply-1024",
        /// CONF_RDMA (RFC 5666 6.2) answered with maxcall_sendsize 1024 and maxrdmaread 0: no
        /// inline call over 1024 bytes, and no call needing RDMA Read, may follow. No reply is
        /// replaced.
        CcpLimits = "ccp-limits",
        /// The reply to a READ offered a write chunk (and no reply chunk) returns its first
        /// write segment 4096 bytes longer than offered (RFC 8166 4.5: a header error).
        ReplyLongerWriteChunk = "reply-longer-write-chunk",
        /// The same reply with its write chunk returned twice: more write chunks than the call
        /// carried (RFC 8166 4.5).
        ReplyExtraWriteChunk = "reply-extra-write-chunk",
        /// The same reply returning a reply chunk (the write chunk's segments) the call did not
        /// offer (RFC 8166 4.5).
        ReplyUnofferedReplyChunk = "reply-unoffered-reply-chunk",
        /// Our private data after [`OTHER_PRIVATE_DATA`], 5 octets of another layer's (RFC
        /// 8797 5.2: the identifier is searched for at any offset). No reply is replaced.
        CmIdentifierAtOffset = "cm-identifier-at-offset",
        /// Reverse direction (RFC 8167 4.3.1): once the requester's first reverse-direction
        /// reply on the connection granted N reverse-direction credits (4.1), N CB_NULL calls
        /// at once ([`Scenario::reverse_calls`]). No reply is replaced.
        ReverseBurst = "reverse-burst",
        /// Reverse direction (RFC 8167 5.3): after the requester's first reverse-direction
        /// reply on the connection, one CB_NULL call carrying a write list
        /// ([`Scenario::reverse_calls`]): a requester that takes no chunks in the reverse
        /// direction answers ERR_CHUNK. No reply is replaced.
        ReverseChunks = "reverse-chunks",
        /// Reverse direction after a reconnect (RFC 8167 4.3.1: a fresh connection gets its
        /// receives for reverse-direction calls again): the requester's first
        /// reverse-direction reply on the first connection is followed by our closing that
        /// connection; on a later one, once the requester bound its back channel to it again
        /// (BIND_CONN_TO_SESSION, RFC 8881 18.34) and answered a call there, the burst of
        /// `reverse-burst` ([`Scenario::reverse_calls`]). No reply is replaced.
        ReverseBurstReconnect = "reverse-burst-reconnect",
        /// NFS version 4 (RFC 8267 6.4.2, 6.7.2): the first NFSv4 COMPOUND with a READ
        /// operation, sent inline, refused unprocessed with RDMA_ERROR ERR_CHUNK, as a server
        /// whose chunk list limits it exceeds answers it (RFC 8166 4.5: an RDMA_ERROR completes
        /// the transaction).
        Nfs4ErrChunk = "nfs4-err-chunk",
        /// The same COMPOUND refused unprocessed with an RPC reply MSG_ACCEPTED GARBAGE_ARGS in
        /// an RDMA_MSG (RFC 8267 6.4.2: the other answer to chunk lists too complex).
        Nfs4GarbageArgs = "nfs4-garbage-args",
        /// RFC 8167 4.1 (a message whose direction is not determined): the reply to the first
        /// NFSv4 COMPOUND with a READ, sent inline, grants [`AMBIGUOUS_GRANT`] credits, and so
        /// does every later reply on the connection; once the requester has that many calls
        /// outstanding, an RDMA_ERROR ERR_CHUNK with the XID of that answered READ and an
        /// rdma_credit far above the grant ([`Scenario::undetermined_message`]), then
        /// [`AMBIGUOUS_HOLD`] before the next reply, which and every later one grants
        /// [`AMBIGUOUS_RAISED_GRANT`].
        AmbiguousCredit = "ambiguous-credit",
    }
}

/// The grant of every reply from `shrink-grant`'s on.
pub const SHRUNK_GRANT: u32 = 1;

/// The grant of every reply from `huge-grant`'s on: far more than any requester asks for.
pub const HUGE_GRANT: u32 = 1024;

/// The grant of every reply from `ambiguous-credit`'s on: below the calls its workloads have
/// outstanding at once (sixteen READs; the reference requester's window of twelve NULLs).
pub const AMBIGUOUS_GRANT: u32 = 4;

/// The grant of every reply after `ambiguous-credit`'s hold: above [`AMBIGUOUS_GRANT`], so a
/// requester with more calls waiting shows it then (its demand to go beyond the grant during
/// the hold, where it kept to [`AMBIGUOUS_GRANT`] or not).
pub const AMBIGUOUS_RAISED_GRANT: u32 = 8;

/// How long `ambiguous-credit` holds its next reply after the message of undetermined
/// direction: time for a requester that took its credit value to send beyond the grant.
pub const AMBIGUOUS_HOLD: std::time::Duration = std::time::Duration::from_millis(500);

/// How long `ambiguous-credit` waits before answering each call until the message went: calls
/// sent together arrive together, so the grant's worth of calls outstanding is seen.
pub const AMBIGUOUS_GATHER: std::time::Duration = std::time::Duration::from_millis(50);

/// The inline threshold every receiver supports (RFC 8166 3.3.3): `reply-1024`'s reply size.
pub const INLINE_1024: usize = 1024;

/// What `cm-identifier-at-offset` puts before our private data: another layer's octets.
pub const OTHER_PRIVATE_DATA: [u8; 5] = [0x4d, 0x50, 0x41, 0x02, 0x00];

/// The rdma_proc value Version One does not define (RDMA_MSG to RDMA_ERROR are 0 to 4,
/// RFC 8166 4.2.4).
pub const UNKNOWN_PROC: u32 = 5;

/// The rdma_err value no version defines (ERR_VERS is 1, ERR_CHUNK 2).
pub const UNKNOWN_ERR: u32 = 3;

/// The most reverse-direction calls `reverse-burst` sends at once, whatever the grant.
pub const MAX_REVERSE_BURST: u32 = 64;

/// The write chunk `reverse-chunks` offers with its CB_NULL: one 64-byte segment of memory
/// the responder never registered (a requester that supports no chunks never touches it).
pub const REVERSE_CHUNK: Segment = Segment::new(0x0bad_c0de, 64, 0x7e00_0000_0000);

/// The NFSv4 callback program (RFC 8881 20) and CB_NULL: a backward call any requester that
/// supports the backward direction can answer (PROG_UNAVAIL, if it serves no callback).
const CB_PROGRAM: u32 = 0x4000_0000;

/// Whether an inline RPC call is an NFS version 4 COMPOUND (RFC 8881 16.2) with a READ among
/// the operations that decode before the first one that does not.
fn is_nfs4_read(inline_payload: &[u8]) -> bool {
    use crate::proto::nfs41::Op;
    let Ok(RpcMessage { header: RpcHeader::Call(c), body, .. }) = RpcMessage::decode(inline_payload) else {
        return false;
    };
    if c.prog != NFS_PROGRAM || c.vers != 4 || c.proc_ != crate::proto::nfs4::NFSPROC4_COMPOUND {
        return false;
    }
    let mut r = Reader::new(body);
    let (Ok(_), Ok(_), Ok(n)) = (r.opaque("tag", u32::MAX), r.u32("minorversion"), r.u32("argarray")) else {
        return false;
    };
    (0..n).map_while(|_| Op::decode(&mut r).ok()).any(|op| matches!(op, Op::Read { .. }))
}

fn is_nfs3_read(inline_payload: &[u8]) -> bool {
    match RpcMessage::decode(inline_payload) {
        Ok(RpcMessage { header: RpcHeader::Call(c), .. }) => {
            c.prog == NFS_PROGRAM && c.vers == 3 && c.proc_ == NFSPROC3_READ
        }
        _ => false,
    }
}

impl Scenario {
    /// The XID of `v2-backward-call`'s call, from the responder's own XID space (v2-01 4.2.2).
    pub const BACKWARD_XID: u32 = 0xb0c0_0001;

    /// The XID of the first call a reverse-direction scenario sends, from the responder's own
    /// XID space (RFC 8167 2.4); the others follow it.
    pub const REVERSE_XID: u32 = 0xb0c1_0000;

    /// Whether the scenario plays in the reverse direction (RFC 8167): it sends calls of its
    /// own ([`Scenario::reverse_calls`]) after the requester's first reverse-direction reply on
    /// the connection, and replaces no reply.
    pub fn reverse_direction(self) -> bool {
        matches!(self, Scenario::ReverseBurst | Scenario::ReverseChunks | Scenario::ReverseBurstReconnect)
    }

    /// Whether the reverse-direction scenario first closes the connection its first
    /// reverse-direction reply came on, and plays on a later connection
    /// (`reverse-burst-reconnect`).
    pub fn reconnects_first(self) -> bool {
        self == Scenario::ReverseBurstReconnect
    }

    /// Whether `xid` is one of a reverse-direction scenario's calls (their replies belong to
    /// no upper layer).
    pub fn is_reverse_xid(xid: u32) -> bool {
        (Self::REVERSE_XID..Self::REVERSE_XID + MAX_REVERSE_BURST).contains(&xid)
    }

    /// What a reverse-direction scenario sends at once after the requester's first
    /// reverse-direction reply on the connection: `first` is the reverse-direction call that
    /// reply answered (the whole message, as sent), `granted` the reply's rdma_credit (the
    /// reverse-direction credits the requester granted, RFC 8167 4.1). Each is a CB_NULL of
    /// `first`'s program in an RDMA_MSG of `first`'s rdma_vers (5.1), requesting `granted`
    /// credits: `reverse-burst` (and `reverse-burst-reconnect`, on its later connection) sends
    /// `granted` of them (at most [`MAX_REVERSE_BURST`]),
    /// `reverse-chunks` one with [`REVERSE_CHUNK`] as its write list (5.3). Nothing for the
    /// other scenarios, or when `first` carries no RPC call inline (decoded as `profile`
    /// says).
    pub fn reverse_calls(self, first: &[u8], granted: u32, profile: &Profile) -> Vec<Vec<u8>> {
        let Ok(m) = Message::decode(first, profile) else { return Vec::new() };
        let Ok(RpcMessage { header: RpcHeader::Call(c), .. }) = RpcMessage::decode(m.payload) else {
            return Vec::new();
        };
        let call = |xid: u32| {
            let rpc = CallHeader::new(xid, c.prog, c.vers, 0).encode_to_vec();
            (rpc, HeaderBuilder::msg(xid, granted).raw_vers(m.header.vers))
        };
        match self {
            Scenario::ReverseBurst | Scenario::ReverseBurstReconnect => (0..granted.clamp(1, MAX_REVERSE_BURST))
                .map(|i| {
                    let (rpc, b) = call(Self::REVERSE_XID + i);
                    [b.encode_to_vec(), rpc].concat()
                })
                .collect(),
            Scenario::ReverseChunks => {
                let (rpc, b) = call(Self::REVERSE_XID);
                let chunk = [REVERSE_CHUNK];
                let writes: [&[Segment]; 1] = [&chunk];
                vec![[b.write_list(&writes).encode_to_vec(), rpc].concat()]
            }
            _ => Vec::new(),
        }
    }

    /// `ambiguous-credit`'s message of undetermined direction (RFC 8167 4.1): an RDMA_ERROR
    /// ERR_CHUNK with `xid`, the answered call's, and rdma_vers `vers`. Neither context nor a
    /// payload tells its direction: an RDMA_ERROR comes from a Responder, which in
    /// bidirectional operation both peers are, and its XID matches no outstanding call, so
    /// nothing says whether its rdma_credit is a grant or a request, and the receiver MUST
    /// ignore it. `requested` is the credits the requester's calls ask for: a grant it would
    /// take in full from any reply (a larger value might be clamped or refused as insane, and
    /// show nothing), so a requester that applies it opens its window as far as it goes; at
    /// least [`HUGE_GRANT`] when it asks for no more than [`AMBIGUOUS_GRANT`]. No low value
    /// is sent: a requester that applied one would only hold itself back, which breaks
    /// nothing a server sees.
    pub fn undetermined_message(xid: u32, vers: u32, requested: u32) -> Vec<u8> {
        let credit = if requested > AMBIGUOUS_GRANT { requested } else { HUGE_GRANT };
        HeaderBuilder::err_chunk(xid, credit).raw_vers(vers).encode_to_vec()
    }

    /// Whether the scenario plays on a Version Two call (the others play on Version One).
    pub fn version_two(self) -> bool {
        matches!(self, Scenario::BackwardCall)
    }

    /// Whether a Version Two call's inline payload is the one this Version Two scenario plays
    /// on: an NFSv3 READ whose RPC call travels inline.
    pub fn targets_v2(self, inline_payload: &[u8]) -> bool {
        self.version_two() && is_nfs3_read(inline_payload)
    }

    /// `v2-backward-call`'s call: RDMA2_MSG, rdma_direction CALL (none in the -00 envelope),
    /// CB_NULL, one credit.
    pub fn backward_call(envelope: rpcrdma_codec::profile::V2Envelope) -> Vec<u8> {
        let rpc = CallHeader::new(Self::BACKWARD_XID, CB_PROGRAM, 1, 0).encode_to_vec();
        v2::HeaderBuilder::msg(Self::BACKWARD_XID, 1, MsgType::CALL).envelope(envelope).payload(&rpc).encode_to_vec()
    }

    /// Whether a Version One call (its rdma_xid-bearing inline payload) is the one whose reply
    /// this scenario replaces: an NFSv3 READ whose RPC call travels inline.
    /// `reply-1024` chooses a READ of at least [`INLINE_1024`] bytes with no write chunk.
    pub fn targets(self, inline_payload: &[u8], chunks: &ChunkLists<'_>) -> bool {
        if self.version_two() || !self.replaces_reply() {
            return false;
        }
        if self.refuses_call() || self == Scenario::AmbiguousCredit {
            return is_nfs4_read(inline_payload);
        }
        match RpcMessage::decode(inline_payload) {
            Ok(RpcMessage { header: RpcHeader::Call(c), body, .. })
                if c.prog == NFS_PROGRAM && c.vers == 3 && c.proc_ == NFSPROC3_READ =>
            {
                let mut r = Reader::new(body);
                let count = r.opaque("file", 64).and_then(|_| r.u64("offset")).and_then(|_| r.u32("count"));
                match self {
                    Scenario::Reply1024 => chunks.writes.is_empty() && count.is_ok_and(|n| n as usize >= INLINE_1024),
                    _ if self.misuses_chunks() => !chunks.writes.is_empty() && chunks.reply.is_none(),
                    _ => true,
                }
            }
            _ => false,
        }
    }

    /// The grant of every later reply on the connection, when the scenario changes it.
    pub fn grant_after(self) -> Option<u32> {
        match self {
            Scenario::ShrinkGrant => Some(SHRUNK_GRANT),
            Scenario::ZeroGrant => Some(0),
            Scenario::HugeGrant => Some(HUGE_GRANT),
            Scenario::AmbiguousCredit => Some(AMBIGUOUS_GRANT),
            _ => None,
        }
    }

    /// Whether the scenario replaces a reply (the others play on the CM exchange or CCP).
    pub fn replaces_reply(self) -> bool {
        self.private_data([0; 8], false).is_none() && self != Scenario::CcpLimits && !self.reverse_direction()
    }

    /// Whether the scenario refuses its NFS version 4 call unprocessed (RFC 8267 6.4.2):
    /// the responder answers it with [`Scenario::rewrite`] of a bare RDMA_MSG header of the
    /// call's XID instead of serving it.
    pub fn refuses_call(self) -> bool {
        matches!(self, Scenario::Nfs4ErrChunk | Scenario::Nfs4GarbageArgs)
    }

    /// Whether the scenario returns the call's write chunk misused (see `misuse.rs`).
    pub fn misuses_chunks(self) -> bool {
        matches!(
            self,
            Scenario::ReplyLongerWriteChunk | Scenario::ReplyExtraWriteChunk | Scenario::ReplyUnofferedReplyChunk
        )
    }

    /// The CCP server's limits for this scenario.
    pub fn ccp(self, server: CcpServer) -> CcpServer {
        match self {
            Scenario::CcpLimits => CcpServer { maxcall_sendsize: 1024, maxrdmaread: 0, ..server },
            _ => server,
        }
    }

    /// Whether the message sent for the chosen call is a reply to it (it invalidates what the
    /// reply would have); otherwise one the requester must discard.
    pub fn is_reply(self) -> bool {
        self.grant_after().is_some() || matches!(self, Scenario::CmChangeOnReconnect | Scenario::Reply1024)
    }

    /// Whether the connection is closed after the message sent for the chosen call.
    pub fn closes_after(self) -> bool {
        self == Scenario::CmChangeOnReconnect
    }

    /// The private data to accept a connection with instead of `ours`, for the scenarios
    /// played on the CM exchange; `played`: the chosen call came on an earlier connection.
    pub fn private_data(self, ours: [u8; 8], played: bool) -> Option<Vec<u8>> {
        let mut b = ours.to_vec();
        match self {
            Scenario::CmNoPrivateData => return Some(Vec::new()),
            Scenario::CmBadIdentifier => b[3] ^= 1,
            Scenario::CmReservedBits => b[5] |= private_data::RESERVED_MASK,
            Scenario::CmChangeOnReconnect if played => return Some(Vec::new()),
            Scenario::CmIdentifierAtOffset => return Some([&OTHER_PRIVATE_DATA[..], &ours[..]].concat()),
            _ => return None,
        }
        Some(b)
    }

    /// The message sent instead of `reply` (the reply as the responder would have sent it,
    /// decoded as `profile` says).
    pub fn rewrite(self, reply: &[u8], profile: &Profile) -> Vec<u8> {
        let (xid, credit) = FixedFields::decode(reply).map_or((0, 0), |f| (f.xid, f.credit));
        // The reply with one fixed field edited (RFC 8166 4.2); too short a reply as it is.
        let edit = |how: fn(&mut HeaderMut<'_>)| {
            let mut b = reply.to_vec();
            if let Ok(mut h) = HeaderMut::new(&mut b) {
                how(&mut h);
            }
            b
        };
        let padded = |mut b: Vec<u8>| {
            b.resize(b.len().max(MIN_HEADER_LEN), 0);
            b
        };
        match self {
            Scenario::ShortReply => reply[..reply.len().min(MIN_HEADER_LEN - 4)].to_vec(),
            Scenario::ReplyBadVersion => edit(|h| h.set_vers(0)),
            Scenario::ReplyUnknownProc => edit(|h| h.set_proc(Proc(UNKNOWN_PROC))),
            Scenario::ReplyMsgp => edit(|h| h.set_proc(Proc::RDMA_MSGP)),
            Scenario::ReplyDone => padded(HeaderBuilder::done(xid, credit).encode_to_vec()),
            Scenario::UndecodableError => {
                padded(HeaderBuilder::err_chunk(xid, credit).raw_error_code(UNKNOWN_ERR).encode_to_vec())
            }
            Scenario::ShrinkGrant => edit(|h| h.set_credit(SHRUNK_GRANT)),
            // Replaces no reply: the backward call goes before it.
            Scenario::BackwardCall => reply.to_vec(),
            Scenario::ZeroGrant => edit(|h| h.set_credit(0)),
            Scenario::HugeGrant => edit(|h| h.set_credit(HUGE_GRANT)),
            Scenario::AmbiguousCredit => edit(|h| h.set_credit(AMBIGUOUS_GRANT)),
            Scenario::CmNoPrivateData
            | Scenario::CmBadIdentifier
            | Scenario::CmReservedBits
            | Scenario::CmChangeOnReconnect
            | Scenario::CmIdentifierAtOffset => reply.to_vec(),
            Scenario::Reply1024 => cut_to_1024(reply, profile).unwrap_or_else(|| reply.to_vec()),
            Scenario::CcpLimits
            | Scenario::ReverseBurst
            | Scenario::ReverseChunks
            | Scenario::ReverseBurstReconnect => reply.to_vec(),
            Scenario::ReplyLongerWriteChunk | Scenario::ReplyExtraWriteChunk | Scenario::ReplyUnofferedReplyChunk => {
                super::misuse::rewrite(self, reply, profile).unwrap_or_else(|| reply.to_vec())
            }
            // RFC 8166 4.5: the call's rdma_xid and rdma_vers; ERR_CHUNK (4.5.2).
            Scenario::Nfs4ErrChunk => {
                let vers = FixedFields::decode(reply).map_or(1, |f| f.vers);
                HeaderBuilder::err_chunk(xid, credit).raw_vers(vers).encode_to_vec()
            }
            // RFC 5531 9: MSG_ACCEPTED, an AUTH_NONE verifier, GARBAGE_ARGS; RFC 8166 4.5.2.
            Scenario::Nfs4GarbageArgs => {
                let rpc = RpcHeader::Reply(ReplyHeader::accepted(xid, AcceptStat::GarbageArgs)).encode_to_vec();
                [HeaderBuilder::msg(xid, credit).encode_to_vec(), rpc].concat()
            }
        }
    }
}

/// A READ reply carrying its data inline, cut to exactly [`INLINE_1024`] bytes: the data
/// shortened to what fits, count and length with it, eof false (a short read, RFC 1813
/// 3.3.6). None when the data does not end the reply or is too short to cut.
fn cut_to_1024(reply: &[u8], profile: &Profile) -> Option<Vec<u8>> {
    let m = Message::decode(reply, profile).ok()?;
    let rpc = RpcMessage::decode(m.payload).ok()?;
    let r = nfs3::read_result(rpc.body)?;
    let data_at = m.payload_offset + rpc.body_offset + r.data_at;
    let padded = (r.data_len as usize).next_multiple_of(4);
    let excess = reply.len().checked_sub(INLINE_1024)?;
    if r.status != 0 || data_at + padded != reply.len() || excess >= padded {
        return None;
    }
    // Every XDR item is a multiple of four long: so are the excess and what is kept.
    let keep = ((padded - excess) as u32).min(r.data_len);
    let mut b = reply[..INLINE_1024].to_vec();
    b[data_at - 12..data_at - 8].copy_from_slice(&keep.to_be_bytes());
    b[data_at - 8..data_at - 4].copy_from_slice(&0u32.to_be_bytes());
    b[data_at - 4..data_at].copy_from_slice(&keep.to_be_bytes());
    Some(b)
}

/// How the kernel NFS client mounts `serve` to meet a scenario (harness/linux-peer/
/// client-scenarios): NFSv3 of the export, or NFSv4.1 of the root (`serve`'s NFSv4.1 server
/// has no pseudo file system) for the reverse-direction scenarios, whose calls ride the
/// session's back channel (RFC 8167, RFC 8267 6.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientMount {
    Nfs3,
    Nfs41,
}

impl ClientMount {
    /// The `vers=` mount option.
    pub fn vers(self) -> &'static str {
        match self {
            ClientMount::Nfs3 => "3",
            ClientMount::Nfs41 => "4.1",
        }
    }

    /// The path mounted.
    pub fn path(self) -> &'static str {
        match self {
            ClientMount::Nfs3 => "/export",
            ClientMount::Nfs41 => "/",
        }
    }
}

/// A step of a client workload after its first READ (a shell function `step_NAME`, with `-`
/// as `_`, in harness/linux-peer/client-scenarios): the calls a scenario's checks need as
/// their precondition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientStep {
    /// A direct READ of 1024 bytes: small enough to come back inline (no write chunk).
    Read1024,
    /// A WRITE of 2000 bytes, over the 1024-byte threshold, synced.
    Write2000,
    /// A READDIR with no attributes (`ls`).
    List,
    /// A READDIR with attributes (`ls -l`).
    ListLong,
    /// Two direct READs of 4 KiB.
    Read8k,
    /// Sixteen direct READs at once: more than one call outstanding.
    Reads16,
    /// Ninety-six direct READs at once: three times the default grant of 32, so the
    /// requester holds calls back at the grant (RFC 8166 3.3.1).
    Reads96,
    /// A SETACL (NFSACL, program 100227, on the NFS connection) of a 404-entry ACL, over 4800
    /// bytes with nothing DDP-eligible in it (RFC 8267 5.2): a long call, sent as RDMA_NOMSG
    /// with a position-zero read chunk (RFC 8166 3.5.3; xprtrdma's rpcrdma_marshal_req()).
    SetaclLong,
    /// Two seconds' wait: time for the reverse-direction calls that follow the client's
    /// first callback reply.
    AwaitCallbacks,
}

impl ClientStep {
    /// Every step.
    pub const ALL: &'static [ClientStep] = &[
        ClientStep::Read1024,
        ClientStep::Write2000,
        ClientStep::List,
        ClientStep::ListLong,
        ClientStep::Read8k,
        ClientStep::Reads16,
        ClientStep::Reads96,
        ClientStep::SetaclLong,
        ClientStep::AwaitCallbacks,
    ];

    /// Its name, as `serve` prints it and client-scenarios knows it.
    pub fn name(self) -> &'static str {
        match self {
            ClientStep::Read1024 => "read-1024",
            ClientStep::Write2000 => "write-2000",
            ClientStep::List => "list",
            ClientStep::ListLong => "list-long",
            ClientStep::Read8k => "read-8k",
            ClientStep::Reads16 => "reads-16",
            ClientStep::Reads96 => "reads-96",
            ClientStep::SetaclLong => "setacl-long",
            ClientStep::AwaitCallbacks => "await-callbacks",
        }
    }
}

/// What the kernel NFS client runs against a scenario: one mount, one READ of a small file,
/// then the steps, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientWorkload {
    pub mount: ClientMount,
    pub steps: &'static [ClientStep],
}

/// `vers=3 path=/export steps=list-long,read-8k` (`steps=` when there are none), the form
/// client-scenarios reads from `serve`'s "playing scenario" line.
impl core::fmt::Display for ClientWorkload {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "vers={} path={} steps=", self.mount.vers(), self.mount.path())?;
        for (i, s) in self.steps.iter().enumerate() {
            write!(f, "{}{}", if i == 0 { "" } else { "," }, s.name())?;
        }
        Ok(())
    }
}

impl Scenario {
    /// The kernel client's workload for this scenario: one place says, for every scenario,
    /// what makes its checks' preconditions happen.
    pub fn client_workload(self) -> ClientWorkload {
        use ClientStep::*;
        let (mount, steps): (_, &'static [ClientStep]) = match self {
            // Then, on this connection at the configured grant, the preconditions of passive
            // checks: a long call (requester-nomsg-payload, requester-long-call-padded) and
            // more calls at once than the grant (requester-within-grant).
            Scenario::Reply1024 => (ClientMount::Nfs3, &[Read1024, SetaclLong, Reads96]),
            // A WRITE over 1024 bytes (inline only if the requester assumed a larger
            // threshold), then a call after the first connection (cm-change-on-reconnect
            // closes it).
            Scenario::CmNoPrivateData
            | Scenario::CmBadIdentifier
            | Scenario::CmReservedBits
            | Scenario::CmChangeOnReconnect
            | Scenario::CmIdentifierAtOffset => (ClientMount::Nfs3, &[Write2000, List]),
            // Calls after the reply that granted 0: a client that goes on on the connection
            // breaks the grant, one that reconnects does not.
            Scenario::ZeroGrant => (ClientMount::Nfs3, &[ListLong, Read8k]),
            // Many calls at once after the grant changed: replies back to back.
            Scenario::HugeGrant | Scenario::ShrinkGrant => (ClientMount::Nfs3, &[Reads16]),
            // The burst (or the chunked call) follows the client's reply to the first callback
            // (CB_NULL after CREATE_SESSION).
            Scenario::ReverseBurst | Scenario::ReverseChunks => (ClientMount::Nfs41, &[AwaitCallbacks, ListLong]),
            // The first connection is closed after the client's reply to the first callback:
            // a call to make the client reconnect (its SEQUENCE reply says
            // SEQ4_STATUS_CB_PATH_DOWN_SESSION, and it binds the back channel again), time for
            // the CB_NULL on the new connection and the burst after it, and calls meanwhile.
            Scenario::ReverseBurstReconnect => {
                (ClientMount::Nfs41, &[AwaitCallbacks, ListLong, AwaitCallbacks, ListLong])
            }
            // The first READ is refused: other calls after it (a client that completed the
            // READ with its error goes on; one that did not sends it again first).
            Scenario::Nfs4ErrChunk | Scenario::Nfs4GarbageArgs => (ClientMount::Nfs41, &[ListLong]),
            // Sixteen READs at once on the NFSv4.1 mount (its session's sixteen slots): more
            // calls than the grant of 4, so the grant's worth is outstanding when the message of
            // undetermined direction comes, with more waiting behind it.
            Scenario::AmbiguousCredit => (ClientMount::Nfs41, &[Reads16]),
            // The unmount's calls after it are the check's precondition already.
            Scenario::ReplyDone | Scenario::CcpLimits | Scenario::BackwardCall => (ClientMount::Nfs3, &[]),
            // Another call after the injected message: a client that took it as the answer
            // goes on without sending the call again (the requester-discards-* checks).
            Scenario::ShortReply
            | Scenario::ReplyBadVersion
            | Scenario::ReplyUnknownProc
            | Scenario::ReplyMsgp
            | Scenario::UndecodableError
            | Scenario::ReplyLongerWriteChunk
            | Scenario::ReplyExtraWriteChunk
            | Scenario::ReplyUnofferedReplyChunk => (ClientMount::Nfs3, &[ListLong]),
        };
        ClientWorkload { mount, steps }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The VM's client-scenarios implements every step a workload names (a `step_NAME`
    /// function), and each scenario's workload prints as client-scenarios parses it.
    #[test]
    fn client_scenarios_knows_every_step() {
        let script = include_str!("../../../harness/linux-peer/client-scenarios");
        for s in ClientStep::ALL {
            let f = format!("\nstep_{}() {{", s.name().replace('-', "_"));
            assert!(script.contains(&f), "client-scenarios has no {f:?}");
        }
        let mut used: Vec<ClientStep> = Scenario::ALL.iter().flat_map(|s| s.client_workload().steps.to_vec()).collect();
        used.dedup();
        assert!(ClientStep::ALL.iter().all(|s| used.contains(s)), "a step no scenario uses");
        let w = Scenario::ZeroGrant.client_workload().to_string();
        assert_eq!(w, "vers=3 path=/export steps=list-long,read-8k");
        assert_eq!(
            Scenario::ReverseBurst.client_workload().to_string(),
            "vers=4.1 path=/ steps=await-callbacks,list-long"
        );
        assert_eq!(Scenario::ReplyDone.client_workload().to_string(), "vers=3 path=/export steps=");
    }

    #[test]
    fn names_are_distinct_and_found() {
        for (i, s) in Scenario::ALL.iter().enumerate() {
            assert_eq!(Scenario::named(s.name()), Some(*s));
            assert!(Scenario::ALL[i + 1..].iter().all(|t| t.name() != s.name()));
        }
    }

    #[test]
    fn each_rewrite_keeps_the_xid_and_breaks_the_reply() {
        let reply = HeaderBuilder::msg(0x1234_5678, 8).encode_to_vec();
        let replays = [Scenario::CmChangeOnReconnect, Scenario::Reply1024];
        let rewrites = Scenario::ALL.iter().filter(|s| !s.version_two() && !replays.contains(s));
        for s in rewrites.filter(|s| s.replaces_reply() && !s.misuses_chunks()) {
            let b = s.rewrite(&reply, &Profile::default());
            assert_eq!(&b[..4], &0x1234_5678u32.to_be_bytes(), "{}", s.name());
            assert_ne!(b, reply, "{}", s.name());
        }
        assert!(Scenario::ShortReply.rewrite(&reply, &Profile::default()).len() < MIN_HEADER_LEN);
        assert_eq!(&Scenario::ReplyBadVersion.rewrite(&reply, &Profile::default())[4..8], &[0, 0, 0, 0]);
        assert_eq!(&Scenario::ReplyUnknownProc.rewrite(&reply, &Profile::default())[12..16], &[0, 0, 0, 5]);
        assert_eq!(&Scenario::ReplyMsgp.rewrite(&reply, &Profile::default())[12..16], &[0, 0, 0, 2]);
        assert_eq!(&Scenario::ReplyDone.rewrite(&reply, &Profile::default())[12..16], &[0, 0, 0, 3]);
        assert_eq!(&Scenario::ShrinkGrant.rewrite(&reply, &Profile::default())[8..12], &SHRUNK_GRANT.to_be_bytes());
        assert_eq!(&Scenario::ZeroGrant.rewrite(&reply, &Profile::default())[8..12], &[0, 0, 0, 0]);
        assert_eq!(&Scenario::HugeGrant.rewrite(&reply, &Profile::default())[8..12], &HUGE_GRANT.to_be_bytes());
        let e = Scenario::UndecodableError.rewrite(&reply, &Profile::default());
        assert_eq!((&e[12..16], &e[16..20], e.len()), (&[0, 0, 0, 4][..], &[0, 0, 0, 3][..], MIN_HEADER_LEN));
    }

    #[test]
    fn cm_scenarios_alter_the_private_data_and_replace_no_reply() {
        let ours = private_data::PrivateData::new(4096, 4096, true).unwrap().to_bytes();
        let none = Scenario::CmNoPrivateData.private_data(ours, false).unwrap();
        let bad = Scenario::CmBadIdentifier.private_data(ours, false).unwrap();
        let reserved = Scenario::CmReservedBits.private_data(ours, false).unwrap();
        assert!(none.is_empty());
        assert_eq!((&bad[..4], &bad[4..]), (&0xf6ab_0e19u32.to_be_bytes()[..], &ours[4..]));
        assert_eq!((reserved[5], &reserved[..5], &reserved[6..]), (0xff, &ours[..5], &ours[6..]));
        assert_eq!(Scenario::CmChangeOnReconnect.private_data(ours, false), None);
        assert_eq!(Scenario::CmChangeOnReconnect.private_data(ours, true), Some(Vec::new()));
        let shifted = Scenario::CmIdentifierAtOffset.private_data(ours, false).unwrap();
        let found = private_data::find(&shifted, &Profile::default());
        assert!(matches!(found, Ok(private_data::Lookup::Found { at: 5, .. })), "{found:?}");
        let read = crate::proto::Call::nfs3(1, 1, NFSPROC3_READ, nfs3::read_args(&[7; 8], 0, 5)).rpc_bytes();
        let none = ChunkLists::NONE;
        assert!(Scenario::ShortReply.targets(&read, &none) && Scenario::CmChangeOnReconnect.targets(&read, &none));
        assert!(!Scenario::CmNoPrivateData.targets(&read, &none) && !Scenario::CmReservedBits.targets(&read, &none));
        assert!(!Scenario::Reply1024.targets(&read, &none));
        let big = crate::proto::Call::nfs3(1, 1, NFSPROC3_READ, nfs3::read_args(&[7; 8], 0, 1024)).rpc_bytes();
        assert!(Scenario::Reply1024.targets(&big, &none));
    }

    #[test]
    fn reverse_scenarios_send_cb_nulls_after_the_first_reverse_reply() {
        // The first reverse-direction call: rdma_vers 1, CB_NULL of program 0x40000123.
        let rpc = CallHeader::new(7, 0x4000_0123, 1, 0).encode_to_vec();
        let first = [HeaderBuilder::msg(7, 8).encode_to_vec(), rpc].concat();
        let burst = Scenario::ReverseBurst.reverse_calls(&first, 3, &Profile::default());
        assert_eq!(burst.len(), 3);
        for (i, m) in burst.iter().enumerate() {
            let msg = Message::decode(m, &Profile::default()).unwrap();
            let xid = Scenario::REVERSE_XID + i as u32;
            assert_eq!((msg.header.xid, msg.header.vers, msg.header.credit), (xid, 1, 3));
            assert!(msg.header.body.chunks().unwrap().is_empty());
            let RpcMessage { header: RpcHeader::Call(c), .. } = RpcMessage::decode(msg.payload).unwrap() else {
                panic!("not a call")
            };
            assert_eq!((c.xid, c.prog, c.vers, c.proc_), (xid, 0x4000_0123, 1, 0));
            assert!(Scenario::is_reverse_xid(xid));
        }
        assert_eq!(
            Scenario::ReverseBurst.reverse_calls(&first, 1000, &Profile::default()).len(),
            MAX_REVERSE_BURST as usize
        );
        let chunked = Scenario::ReverseChunks.reverse_calls(&first, 3, &Profile::default());
        let msg = Message::decode(&chunked[0], &Profile::default()).unwrap();
        let lists = msg.header.body.chunks().unwrap();
        assert_eq!((chunked.len(), lists.writes.chunks().count(), lists.reads.is_empty()), (1, 1, true));
        assert!(Scenario::ShortReply.reverse_calls(&first, 3, &Profile::default()).is_empty());
        assert!(!Scenario::ReverseBurst.replaces_reply() && !Scenario::ReverseChunks.replaces_reply());
        // `reverse-burst-reconnect`: the same burst (on its later connection), no reply replaced,
        // and the only scenario that closes its first connection first.
        let again = Scenario::ReverseBurstReconnect;
        assert_eq!(again.reverse_calls(&first, 3, &Profile::default()), burst);
        assert!(again.reverse_direction() && !again.replaces_reply() && again.reconnects_first());
        assert_eq!(Scenario::ALL.iter().filter(|s| s.reconnects_first()).count(), 1);
        // A forward reply as `first`: nothing to imitate.
        assert!(Scenario::ReverseBurst
            .reverse_calls(&HeaderBuilder::msg(7, 8).encode_to_vec(), 3, &Profile::default())
            .is_empty());
    }

    #[test]
    fn nfs4_refusals_take_a_read_compound_and_answer_err_chunk_or_garbage_args() {
        use crate::proto::nfs41::{compound_args, Op};
        let compound = |ops: &[Op]| crate::proto::Call::new(9, 1, NFS_PROGRAM, 4, 1, compound_args("t", 1, ops));
        let read = compound(&[Op::PutRootFh, Op::Read { stateid: [0; 16], offset: 0, count: 5 }]).rpc_bytes();
        let lookup = compound(&[Op::PutRootFh, Op::Lookup(b"five".to_vec()), Op::GetFh]).rpc_bytes();
        let nfs3_read = crate::proto::Call::nfs3(1, 1, NFSPROC3_READ, nfs3::read_args(&[7; 8], 0, 5)).rpc_bytes();
        let none = ChunkLists::NONE;
        for s in [Scenario::Nfs4ErrChunk, Scenario::Nfs4GarbageArgs] {
            assert!(s.refuses_call() && s.replaces_reply(), "{}", s.name());
            assert!(s.targets(&read, &none), "{}", s.name());
            assert!(!s.targets(&lookup, &none) && !s.targets(&nfs3_read, &none), "{}", s.name());
        }
        assert!(!Scenario::ShortReply.targets(&read, &none) && !Scenario::ShortReply.refuses_call());
        // The bare header the responder passes for the refused call: xid 0x12345678, credit 7.
        let bare = HeaderBuilder::msg(0x1234_5678, 7).encode_to_vec();
        let words = |b: &[u8]| b.chunks(4).map(|w| u32::from_be_bytes([w[0], w[1], w[2], w[3]])).collect::<Vec<_>>();
        // RDMA_ERROR (4), ERR_CHUNK (2): the whole rpcrdma_error, 20 bytes (RFC 8166 5.1).
        let e = Scenario::Nfs4ErrChunk.rewrite(&bare, &Profile::default());
        assert_eq!(words(&e), [0x1234_5678, 1, 7, 4, 2]);
        // RDMA_MSG with three empty lists, then xid, REPLY, MSG_ACCEPTED, AUTH_NONE with no
        // body, GARBAGE_ARGS (RFC 5531 9).
        let g = Scenario::Nfs4GarbageArgs.rewrite(&bare, &Profile::default());
        assert_eq!(words(&g), [0x1234_5678, 1, 7, 0, 0, 0, 0, 0x1234_5678, 1, 0, 0, 0, 4]);
    }

    #[test]
    fn ambiguous_credit_plays_on_an_nfs4_read_and_sends_err_chunk_with_the_requested_credits() {
        use crate::proto::nfs41::{compound_args, Op};
        let compound = |ops: &[Op]| crate::proto::Call::new(9, 1, NFS_PROGRAM, 4, 1, compound_args("t", 1, ops));
        let read = compound(&[Op::PutRootFh, Op::Read { stateid: [0; 16], offset: 0, count: 5 }]).rpc_bytes();
        let nfs3_read = crate::proto::Call::nfs3(1, 1, NFSPROC3_READ, nfs3::read_args(&[7; 8], 0, 5)).rpc_bytes();
        let s = Scenario::AmbiguousCredit;
        assert!(s.targets(&read, &ChunkLists::NONE) && !s.targets(&nfs3_read, &ChunkLists::NONE));
        assert!(s.replaces_reply() && s.is_reply() && !s.refuses_call() && !s.reverse_direction());
        assert_eq!(s.grant_after(), Some(4));
        let words = |b: &[u8]| b.chunks(4).map(|w| u32::from_be_bytes([w[0], w[1], w[2], w[3]])).collect::<Vec<_>>();
        // RDMA_ERROR (4) ERR_CHUNK (2): the whole rpcrdma_error (RFC 8166 5.1), the requester's
        // own credit request as its credit value.
        assert_eq!(words(&Scenario::undetermined_message(0x1234_5678, 1, 128)), [0x1234_5678, 1, 128, 4, 2]);
        // A requester asking for no more than the grant: 1024, far above it.
        assert_eq!(words(&Scenario::undetermined_message(7, 1, 4)), [7, 1, 1024, 4, 2]);
        let w = s.client_workload().to_string();
        assert_eq!(w, "vers=4.1 path=/ steps=reads-16");
    }

    #[test]
    fn reply_1024_cuts_a_read_reply_to_a_short_read_of_1024_bytes() {
        // RPC reply header (accepted, AUTH_NONE verifier, SUCCESS), then READ3resok with no
        // attributes, count 1100, eof true, and 1100 bytes of data.
        let mut rpc = Vec::new();
        for w in [0x1234_5678u32, 1, 0, 0, 0, 0, 0, 0, 1100, 1, 1100] {
            rpc.extend_from_slice(&w.to_be_bytes());
        }
        rpc.extend_from_slice(&[0x5a; 1100]);
        let mut reply = HeaderBuilder::msg(0x1234_5678, 8).encode_to_vec();
        let header = reply.len();
        reply.extend_from_slice(&rpc);
        let b = Scenario::Reply1024.rewrite(&reply, &Profile::default());
        assert_eq!(b.len(), INLINE_1024);
        // 28 + 24 + 4 + 4 + 12 bytes before the data: 1024 - 72 = 952 bytes of it kept.
        let word = |at: usize| u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]]);
        let at = header + 24 + 8;
        assert_eq!((word(at), word(at + 4), word(at + 8)), (952, 0, 952));
        assert_eq!(&b[..at], &reply[..at]);
        // A reply whose data went by write chunk (none inline) is left as it is.
        let short = HeaderBuilder::msg(1, 8).encode_to_vec();
        assert_eq!(Scenario::Reply1024.rewrite(&short, &Profile::default()), short);
    }
}
