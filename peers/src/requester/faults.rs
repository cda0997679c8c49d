//! The reference requester's deliberate misbehaviours, each breaking one requirement a client
//! check judges (`broken_by` of the client catalogue). The faults that bend a stage's plan
//! are the small functions after the switches, and the calls only a fault sends are
//! [`faulty_calls`]: the stages (`requester/stages.rs`) meet none of them.

use std::time::{Duration, Instant};

use rpcrdma_codec::chunk::ReadSegment;
use rpcrdma_codec::private_data::PrivateData;
use rpcrdma_codec::v1::{HeaderBuilder, Proc, MIN_HEADER_LEN};
use rpcrdma_codec::xdr::Encode;

use super::failure::Step;
use super::stages::LongCall;
use super::{Answer, Session};
use crate::proto::nfs3::{self, NFSPROC3_LOOKUP, NFSPROC3_WRITE, ROOT_FH};
use crate::proto::nfs41::SessionId;
use crate::proto::Call;

crate::fault_switches! {
    /// Deliberate misbehaviours of the reference requester; all off by default.
    pub struct RequesterFaults {
        /// Advertise private data with version 2.
        bad_private_data = "bad-private-data",
        /// Send an RDMA_DONE (RFC 8166 4.6.2: MUST NOT).
        send_rdma_done = "send-rdma-done",
        /// A NULL call whose RPC xid differs from rdma_xid.
        xid_mismatch = "xid-mismatch",
        /// WRITE data in a read chunk at a position 2 bytes past the item.
        unaligned_position = "unaligned-position",
        /// Keep one call more outstanding than the grant.
        exceed_grant = "exceed-grant",
        /// Add a 4-byte segment for the XDR pad to write chunks (as Linux clients before 4.9).
        write_chunk_pad_segment = "write-chunk-pad-segment",
        /// A READ's write chunk one byte shorter than the count (RFC 8166 3.4.6: MUST cover it).
        short_write_chunk = "short-write-chunk",
        /// WRITE data in a read chunk padded to a multiple of four (RFC 8166 3.4.5.2: SHOULD NOT).
        read_chunk_roundup = "read-chunk-roundup",
        /// WRITE data in a read chunk five bytes longer than the data (RFC 8166 3.4.5.2: MUST
        /// be the data, or the data and its pad).
        read_chunk_extra = "read-chunk-extra",
        /// A second call sent before the first reply on a new connection (RFC 8166 3.3.3:
        /// one credit until then).
        burst_at_start = "burst-at-start",
        /// READDIR with a large count and no reply chunk.
        no_reply_chunk = "no-reply-chunk",
        /// An RDMA_NOMSG call with no position-zero read chunk (only a reply chunk).
        nomsg_without_payload = "nomsg-without-payload",
        /// A WRITE larger than the responder's receive size sent inline.
        oversized_inline = "oversized-inline",
        /// Take a reply shorter than 28 bytes whose first word is the call's XID as its reply
        /// (RFC 8166 4.5: MUST discard).
        accept_short_reply = "accept-short-reply",
        /// Take a reply with an rdma_vers other than 1 as the reply (RFC 8166 4.5: MUST discard).
        accept_bad_version_reply = "accept-bad-version-reply",
        /// Take a reply with an rdma_proc Version One does not define as the reply (RFC 8166
        /// 4.5: MUST discard).
        accept_unknown_proc_reply = "accept-unknown-proc-reply",
        /// Take an RDMA_MSGP as the reply (RFC 8166 4.6.1: MUST discard).
        accept_msgp_reply = "accept-msgp-reply",
        /// Take an RDMA_DONE as the reply (RFC 8166 4.6.2: MUST discard).
        accept_done_reply = "accept-done-reply",
        /// Take an RDMA_ERROR with an unknown rdma_err as the call's error (RFC 8166 4.5: MUST
        /// discard an RDMA_ERROR it cannot decode).
        accept_undecodable_error = "accept-undecodable-error",
        /// Size the credit window by the grant of the first reply, ignoring later grants
        /// (RFC 8166 3.3.1: the current grant is the one to respect).
        ignore_grant_changes = "ignore-grant-changes",
        /// Version Two with 1024-byte receives (v2-01 2.3: MUST support 4096 bytes).
        v2_receive_1024 = "v2-receive-1024",
        /// An RDMA2_MSG with no payload (v2-01 4.2.1: MUST follow).
        v2_msg_without_payload = "v2-msg-without-payload",
        /// An RDMA2_ERROR followed by a payload (v2-01 4.2.1: MUST NOT follow).
        v2_error_with_payload = "v2-error-with-payload",
        /// An RDMA2_MSG call with rdma_direction REPLY (v2-01 4.2.2: MUST be the msg_type).
        v2_call_direction_reply = "v2-call-direction-reply",
        /// ROPT_INITXCH (no payload) with rdma_optdir REPLY (v2-01 4.2.2: a Requester MUST set CALL).
        v2_initxch_optdir_reply = "v2-initxch-optdir-reply",
        /// Reconnect once right after Version Two is agreed (v2-01 5.2: MUST NOT).
        v2_reconnect_after_negotiation = "v2-reconnect-after-negotiation",
        /// A NULL call in a ROPT_XMTREQ with rdma_optdir REPLY (v2-01 4.2.2: MUST be CALL).
        v2_xmtreq_optdir_reply = "v2-xmtreq-optdir-reply",
        /// Discard backward-direction calls (v2-01 4.2.2: backward direction is REQUIRED).
        v2_ignore_backward_calls = "v2-ignore-backward-calls",
        /// After a grant of 0, go on sending one call at a time on the connection (RFC 8166
        /// 3.3.1: nothing may be sent beyond the grant; reconnecting starts afresh).
        zero_grant_as_one = "zero-grant-as-one",
        /// Fill the credit window to the grant even beyond the receives posted for replies, and
        /// be slow to take them (RFC 8166 3.3.1: MUST maintain enough receive resources for the
        /// replies expected).
        window_beyond_receives = "window-beyond-receives",
        /// Without usable private data from the responder (none, or no format identifier),
        /// assume it receives 4096 bytes (RFC 8797 5.1, 5.2: MUST behave as if it sent zeros).
        assume_large_responder_receive = "assume-large-responder-receive",
        /// Refuse a connection whose private data has reserved bits set (RFC 8797 4: receivers
        /// MUST ignore their value).
        reject_reserved_bits = "reject-reserved-bits",
        /// Keep the first connection's call inline threshold on later connections (RFC 8797 4:
        /// MUST be prepared for the settings to change upon a reconnection).
        keep_first_thresholds = "keep-first-thresholds",
        /// Advertise private data with a reserved bit set (RFC 8797 4: senders MUST set them
        /// to zero).
        own_reserved_bits = "own-reserved-bits",
        /// Discard a reply of exactly 1024 bytes, as if the threshold were exclusive (RFC 8166
        /// 3.3.3: receivers MUST support inline thresholds of 1024 bytes).
        discard_1024_reply = "discard-1024-reply",
        /// A WRITE whose data length word travels in the read chunk with the data (RFC 8166
        /// 3.4.4.1: the count MUST remain in the Payload stream).
        count_in_chunk = "count-in-chunk",
        /// A WRITE whose reduced data leaves its 1-byte XDR pad in the Payload stream (RFC 8166
        /// 3.4.4.4: MUST remove it).
        pad_left_inline = "pad-left-inline",
        /// A LOOKUP whose name is moved to a read chunk (RFC 8166 3.4.2, 6.1: only DDP-eligible
        /// items may be reduced; RFC 8267 4 names none in LOOKUP).
        reduce_ineligible = "reduce-ineligible",
        /// A long LOOKUP whose position-zero chunk leaves out the name's XDR pad (RFC 8166
        /// 3.5.3: such chunks MUST include it).
        long_call_unpadded = "long-call-unpadded",
        /// A NULL call with rdma_vers 7 (RFC 8166 4.2.2: MUST be 1).
        bad_version_call = "bad-version-call",
        /// Ignore the limits a CONF_RDMA reply returns (RFC 5666 6.2: no inline call larger
        /// than its maxcall_sendsize; with maxrdmaread 0, no call needing RDMA Read).
        ignore_ccp_limits = "ignore-ccp-limits",
        /// Take a reply returning chunks the call did not offer (a longer write segment, more
        /// write chunks, a reply chunk) as the reply (RFC 8166 4.5: MUST discard).
        accept_chunk_misuse = "accept-chunk-misuse",
        /// Look for the responder's private data at offset 0 only (RFC 8797 5.2: it is searched
        /// for at any offset).
        private_data_offset_zero_only = "private-data-offset-zero-only",
        /// Post receives only for the forward calls outstanding, none for the back channel
        /// (RFC 8167 4.3.1: enough additional receives to match the reverse-direction credits).
        no_reverse_receives = "no-reverse-receives",
        /// Post the receives for the back channel on the first connection only: on a later
        /// one, one per forward call as it is sent (RFC 8167 4.3.1: on a fresh connection, the
        /// client posts enough receives to handle reverse-direction calls).
        no_reverse_receives_after_reconnect = "no-reverse-receives-after-reconnect",
        /// Offer a back channel whose ca_maxrequestsize is four times the receive size while
        /// taking no chunks in the reverse direction (RFC 8267 6.5.2: a larger value says Long
        /// Calls are supported).
        oversized_back_channel = "oversized-back-channel",
        /// Leave reverse-direction calls unanswered.
        ignore_reverse_calls = "ignore-reverse-calls",
        /// A reverse-direction reply with rdma_vers 2 (RFC 8167 5.2: the call's rdma_vers).
        reverse_reply_bad_version = "reverse-reply-bad-version",
        /// A reverse-direction reply whose rdma_xid is the call's XID plus one (RFC 8167 5.2:
        /// a copy of the call's XID, and the RPC reply starts with the same).
        reverse_reply_xid_mismatch = "reverse-reply-xid-mismatch",
        /// A reverse-direction reply whose RPC msg_type is CALL (RFC 8167 5.2: REPLY).
        reverse_reply_as_call = "reverse-reply-as-call",
        /// Reverse-direction replies granting 0 credits, as if the field were a request the
        /// reply has none to make (RFC 8167 4.1: it is the reverse-direction credits granted,
        /// which work as in the forward direction, where RFC 8166 3.3.1 forbids 0).
        reverse_zero_credit = "reverse-zero-credit",
        /// Answer a reverse-direction call that carries chunks as if it had none (RFC 8167 5.3:
        /// a responder that supports no chunks MUST reply ERR_CHUNK).
        reverse_chunks_accepted = "reverse-chunks-accepted",
        /// Close the connection while holding a delegation, and reconnect only to return it
        /// (RFC 8167 5.4: SHOULD maintain a connection while the server may send callbacks).
        drop_with_delegation = "drop-with-delegation",
        /// Send an NFS version 4 call refused with RDMA_ERROR or GARBAGE_ARGS again, the same
        /// XID, once (RFC 8267 6.4.2: SHOULD NOT retransmit; 6.7.2 and RFC 8166 4.5: an
        /// RDMA_ERROR completes the transaction).
        resend_refused_call = "resend-refused-call",
        /// The NFSv4.1 READ COMPOUND's write chunk in seventeen segments (RFC 8267 6.4.2: up to
        /// sixteen, absent knowledge of the server's limits).
        seventeen_segment_chunk = "seventeen-segment-chunk",
        /// The NFSv4.1 COMPOUND of two READs offers its one write chunk sized for the second
        /// READ (RFC 8267 6.4.1: the first chunk MUST be used by the first READ).
        write_chunk_for_second_read = "write-chunk-for-second-read",
        /// Take the rdma_credit of an RDMA_ERROR or RDMA_DONE whose XID matches no outstanding
        /// call as the grant (RFC 8167 4.1: the receiver MUST ignore the credit value of a
        /// message whose direction is not determined).
        apply_undetermined_credit = "apply-undetermined-credit",
    }
}

impl RequesterFaults {
    /// The statements of the requirements matrix (`spec/section#n`) each fault breaks: what
    /// proves that a client check failing under the fault judges the statement (conformance's
    /// `proof`). A fault not listed proves no statement.
    pub const BREAKS: &'static [(&'static str, &'static [&'static str])] = &[
        ("window-beyond-receives", &["rfc8166/3.3.1#5", "rfc5666/6#2"]),
        ("burst-at-start", &["rfc8166/3.3.3#1", "rfc5666/6.1#2", "v2-01/5#1"]),
        ("ignore-ccp-limits", &["rfc5666/6.2#3", "rfc5666/6.2#5"]),
        ("exceed-grant", &["rfc8166/3.3.1#1"]),
        ("ignore-grant-changes", &["rfc8166/3.3.1#1"]),
        ("zero-grant-as-one", &["rfc8166/3.3.1#1"]),
        ("discard-1024-reply", &["rfc8166/3.3.3#2"]),
        ("assume-large-responder-receive", &["rfc8166/3.3.3#3", "rfc8797/5.1#1", "rfc8797/5.2#1"]),
        ("reduce-ineligible", &["rfc8166/3.4.2#2", "rfc8166/6.1#1"]),
        ("count-in-chunk", &["rfc8166/3.4.4.1#1"]),
        ("read-chunk-extra", &["rfc8166/3.4.4.4#1", "rfc8166/3.4.5.2#2", "rfc8166/3.4.5.2#3"]),
        ("read-chunk-roundup", &["rfc8166/3.4.5.2#1"]),
        ("pad-left-inline", &["rfc8166/3.4.4.4#2"]),
        ("unaligned-position", &["rfc8166/3.4.5#1", "rfc8166/3.4.5#2"]),
        ("short-write-chunk", &["rfc8166/3.4.6#1", "rfc8166/4.3.2.2#2"]),
        ("write-chunk-pad-segment", &["rfc8166/3.4.6.2#1"]),
        ("oversized-inline", &["rfc8166/3.5.3#1", "rfc8797/3.1#1", "v2-01/2.3#2"]),
        ("long-call-unpadded", &["rfc8166/3.5.3#5"]),
        ("xid-mismatch", &["rfc8166/4.2.1#1"]),
        ("bad-version-call", &["rfc8166/4.2.2#1"]),
        ("nomsg-without-payload", &["rfc8166/4.2.4#2"]),
        ("send-rdma-done", &["rfc8166/4.6.2#1"]),
        ("no-reply-chunk", &["rfc8166/4.3.3#1"]),
        ("accept-short-reply", &["rfc8166/4.5#1"]),
        ("accept-bad-version-reply", &["rfc8166/4.5#3"]),
        ("accept-unknown-proc-reply", &["rfc8166/4.5#3"]),
        ("accept-chunk-misuse", &["rfc8166/4.5#3"]),
        ("accept-undecodable-error", &["rfc8166/4.5#7"]),
        ("accept-msgp-reply", &["rfc8166/4.6.1#2"]),
        ("accept-done-reply", &["rfc8166/4.6.2#2"]),
        ("keep-first-thresholds", &["rfc8797/4#1"]),
        ("reject-reserved-bits", &["rfc8797/4#2"]),
        ("own-reserved-bits", &["rfc8797/4#2"]),
        ("v2-receive-1024", &["v2-01/2.3#1"]),
        ("v2-msg-without-payload", &["v2-01/4.2.1#1"]),
        ("v2-error-with-payload", &["v2-01/4.2.1#2"]),
        ("v2-ignore-backward-calls", &["v2-01/4.2.2#1"]),
        ("v2-call-direction-reply", &["v2-01/4.2.2#2"]),
        ("v2-xmtreq-optdir-reply", &["v2-01/4.2.2#3"]),
        ("v2-initxch-optdir-reply", &["v2-01/4.2.2#4"]),
        ("v2-reconnect-after-negotiation", &["v2-01/5.2#1"]),
        ("no-reverse-receives", &["rfc8267/6.5.2#1"]),
        ("no-reverse-receives-after-reconnect", &["rfc8267/6.5.2#1"]),
        ("oversized-back-channel", &["rfc8267/6.5.2#1"]),
        ("ignore-reverse-calls", &["rfc8267/6.5.2#1"]),
        ("reverse-reply-bad-version", &["rfc8167/5.2#1"]),
        ("reverse-reply-xid-mismatch", &["rfc8167/5.2#2"]),
        ("reverse-reply-as-call", &["rfc8167/5.2#2"]),
        ("reverse-zero-credit", &["rfc8267/6.5.2#1"]),
        ("reverse-chunks-accepted", &["rfc8167/5.3#2"]),
        ("drop-with-delegation", &["rfc8167/5.4#1"]),
        ("resend-refused-call", &["rfc8267/6.4.2#4", "rfc8267/6.7.2#2"]),
        ("seventeen-segment-chunk", &["rfc8267/6.4.2#1"]),
        ("write-chunk-for-second-read", &["rfc8267/6.4.1#1"]),
        ("apply-undetermined-credit", &["rfc8167/4.1#2"]),
    ];
}

impl RequesterFaults {
    /// Our private data as advertised: `bad-private-data` with version 2, `own-reserved-bits`
    /// with a reserved bit set.
    pub(super) fn bend_private_data(&self, mut pd: PrivateData) -> PrivateData {
        if self.bad_private_data {
            pd = pd.with_version(2);
        }
        if self.own_reserved_bits {
            pd = pd.with_reserved(0x80);
        }
        pd
    }

    /// Whether a received message of `len` bytes is discarded before its header is read;
    /// `faithful`: it is shorter than a minimal header (RFC 8166 4.5). `accept-short-reply`
    /// keeps it, `discard-1024-reply` discards one of exactly 1024 bytes.
    pub(super) fn bend_too_short(&self, len: usize, faithful: bool) -> bool {
        faithful && !self.accept_short_reply || len == 1024 && self.discard_1024_reply
    }

    /// Whether a reply's rdma_vers is taken; `faithful`: it is 1 (RFC 8166 4.5).
    /// `accept-bad-version-reply` takes any.
    pub(super) fn bend_version_ok(&self, faithful: bool) -> bool {
        faithful || self.accept_bad_version_reply
    }

    /// What the call takes a message of its XID with rdma_proc `proc_` (and `rdma_err`, the
    /// word after the fixed fields) for: the `accept-*` faults take as the reply or the call's
    /// error what the faithful answer discards (RFC 8166 4.5, 4.6.1, 4.6.2).
    pub(super) fn bend_answer(&self, proc_: Proc, rdma_err: Option<u32>, faithful: Answer) -> Answer {
        let Answer::Discard = faithful else { return faithful };
        match proc_ {
            Proc::RDMA_MSGP if self.accept_msgp_reply => Answer::Reply,
            Proc::RDMA_DONE if self.accept_done_reply => Answer::Reply,
            Proc(5..) if self.accept_unknown_proc_reply => Answer::Reply,
            Proc::RDMA_ERROR => match rdma_err {
                Some(e) if self.accept_undecodable_error => Answer::Error(e),
                _ => Answer::Discard,
            },
            _ => Answer::Discard,
        }
    }

    /// Whether a call waits for a new connection; `faithful`: the grant is 0 (RFC 8166
    /// 3.3.1). `zero-grant-as-one` goes on sending.
    pub(super) fn bend_zero_grant(&self, faithful: bool) -> bool {
        faithful && !self.zero_grant_as_one
    }

    /// The grant kept after a reply (`faithful`: its rdma_credit, RFC 8166 3.3.1);
    /// `ignore-grant-changes` keeps the first one.
    pub(super) fn bend_grant(&self, previous: Option<u32>, faithful: Option<u32>) -> Option<u32> {
        if previous.is_some() && self.ignore_grant_changes {
            previous
        } else {
            faithful
        }
    }

    /// The grant after an RDMA_ERROR or RDMA_DONE (`proc_`) whose XID matches no outstanding
    /// call, with rdma_credit `credit`: neither context nor a payload tells its direction, so
    /// its credit value is ignored and the grant stays `current` (RFC 8167 4.1).
    /// `apply-undetermined-credit` takes the credit value as the grant.
    pub(super) fn bend_undetermined_credit(&self, proc_: Proc, credit: u32, current: Option<u32>) -> Option<u32> {
        let undetermined = matches!(proc_, Proc::RDMA_ERROR | Proc::RDMA_DONE);
        if undetermined && self.apply_undetermined_credit {
            Some(credit)
        } else {
            current
        }
    }

    /// The back channel's ca_maxrequestsize offered in CREATE_SESSION (`faithful`: a
    /// receive less the smallest transport header); `oversized-back-channel` offers four
    /// receives' worth.
    pub(super) fn bend_back_channel_request_size(&self, receive: u32, faithful: u32) -> u32 {
        if self.oversized_back_channel {
            receive * 4
        } else {
            faithful
        }
    }

    /// Whether a call refused with RDMA_ERROR or GARBAGE_ARGS is sent again (`faithful`:
    /// never, RFC 8166 4.5, RFC 8267 6.4.2); `resent`: it was already. `resend-refused-call`
    /// sends it once more.
    pub(super) fn bend_resend_refused(&self, resent: bool) -> bool {
        self.resend_refused_call && !resent
    }

    /// The segment lengths of a write chunk for `count` bytes (`faithful`: one segment);
    /// `seventeen-segment-chunk` splits it into seventeen of a byte or more.
    pub(super) fn bend_nfs4_write_chunk(&self, count: u32) -> Vec<u32> {
        if self.seventeen_segment_chunk {
            vec![count.div_ceil(17).max(1); 17]
        } else {
            vec![count]
        }
    }

    /// The count the NFSv4.1 COMPOUND's one write chunk is sized for, of its two READs'
    /// counts (`faithful`: the first's, RFC 8267 6.4.1); `write-chunk-for-second-read` the
    /// second's.
    pub(super) fn bend_chunked_read(&self, first: u32, second: u32) -> u32 {
        if self.write_chunk_for_second_read {
            second
        } else {
            first
        }
    }

    /// `burst-at-start`: the XID of a NULL sent ahead of the first call (`first`), before any
    /// reply.
    pub(super) fn burst_xid(&self, first: u32) -> Option<u32> {
        self.burst_at_start.then(|| first.wrapping_add(0x100))
    }

    /// A READ's write chunk, as segment lengths: `short-write-chunk` one byte short of the
    /// count, `write-chunk-pad-segment` with a 4-byte segment more for the XDR pad.
    pub(super) fn bend_write_chunk(&self, lengths: &mut Vec<u32>) {
        if self.short_write_chunk {
            lengths[0] -= 1;
        }
        if self.write_chunk_pad_segment {
            lengths.push(4);
        }
    }

    /// A WRITE's read chunk: `read-chunk-roundup` with the data's XDR pad (one byte for the
    /// workload's seven), `read-chunk-extra` with five bytes more.
    pub(super) fn bend_read_chunk(&self, chunk: &mut Vec<u8>) {
        let extra = if self.read_chunk_roundup {
            1
        } else if self.read_chunk_extra {
            5
        } else {
            0
        };
        chunk.resize(chunk.len() + extra, 0);
    }

    /// A read chunk's position: `unaligned-position` two bytes past the item.
    pub(super) fn bend_position(&self, position: u32) -> u32 {
        position + if self.unaligned_position { 2 } else { 0 }
    }

    /// A READDIR's reply chunk length: none under `no-reply-chunk`.
    pub(super) fn bend_reply_chunk(&self, length: Option<u32>) -> Option<u32> {
        length.filter(|_| !self.no_reply_chunk)
    }

    /// How the long call travels: `nomsg-without-payload` with no position-zero read chunk,
    /// only a 1024-byte reply chunk.
    pub(super) fn bend_long_call(&self, plan: LongCall) -> LongCall {
        if self.nomsg_without_payload {
            LongCall { position_zero: false, reply_chunk: Some(1024) }
        } else {
            plan
        }
    }

    /// The credit window for `grant`: `exceed-grant` one call beyond it,
    /// `window-beyond-receives` the grant whatever our receives.
    pub(super) fn bend_window(&self, grant: u32, window: u32) -> u32 {
        if self.exceed_grant {
            grant + 1
        } else if self.window_beyond_receives {
            grant
        } else {
            window
        }
    }

    /// `window-beyond-receives`: busy elsewhere while the window's replies come back to back.
    pub(super) fn linger_before_replies(&self) {
        if self.window_beyond_receives {
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

/// `drop-with-delegation`: the connection closed while a delegation is held (RFC 8167 5.4:
/// SHOULD NOT); a new one, its back channel bound again, comes only after `away`.
pub(super) fn drop_with_delegation(
    s: &mut Session<'_>,
    sessionid: SessionId,
    delegated: bool,
    away: Duration,
) -> Step<()> {
    if !(delegated && s.faults.drop_with_delegation) {
        return Ok(());
    }
    if let Some(mut conn) = s.conn.take() {
        conn.disconnect();
    }
    std::thread::sleep(away);
    s.connect()?;
    s.bind_back_channel(sessionid)
}

/// The calls only faults send, each on its own: those that break a rule of reduction or
/// framing, an inline call over the responder's receive size, a mismatched XID, RDMA_DONE.
pub(super) fn faulty_calls(s: &mut Session<'_>) -> Step<()> {
    misreduced_calls(s)?;
    oversized_inline_call(s)?;
    xid_mismatch_call(s)?;
    rdma_done(s)
}

/// `count-in-chunk`, `pad-left-inline`, `reduce-ineligible`, `long-call-unpadded`,
/// `bad-version-call`: their calls built first, then sent one after the other.
fn misreduced_calls(s: &mut Session<'_>) -> Step<()> {
    let f = s.faults;
    let data = [1u8, 2, 3, 4, 5, 6, 7];
    let name = nfs3::FILE_SCRATCH;
    let mut calls = Vec::new();
    if f.count_in_chunk || f.pad_left_inline {
        let fh = s.lookup(nfs3::FILE_SCRATCH)?;
        let mut call = s.call_for(NFSPROC3_WRITE, nfs3::write_args_split(&fh, 0, &data));
        let chunk = if f.count_in_chunk {
            // The data length word leaves the payload with the data.
            let word = call.args.split_off(call.args.len() - 4);
            [&word[..], &data[..]].concat()
        } else {
            // The data's pad stays behind.
            call.args.push(0);
            data.to_vec()
        };
        let position = call.end_position() - u32::from(f.pad_left_inline);
        call.reads = vec![ReadSegment { position, target: s.source(&chunk)?.segment() }];
        calls.push(("misreduced WRITE", call.msg(), call.xid));
    }
    if f.reduce_ineligible {
        // LOOKUP3args with the name's bytes (and pad) in a read chunk, its length inline.
        let mut call = s.call_for(NFSPROC3_LOOKUP, nfs3::lookup_args(&ROOT_FH, name));
        call.args.truncate(call.args.len() - name.len().next_multiple_of(4));
        let position = call.end_position();
        call.reads = vec![ReadSegment { position, target: s.source(name.as_bytes())?.segment() }];
        calls.push(("LOOKUP with its name reduced", call.msg(), call.xid));
    }
    if f.long_call_unpadded {
        let call = s.call_for(NFSPROC3_LOOKUP, nfs3::lookup_args(&ROOT_FH, name));
        let mut rpc = call.rpc_bytes();
        rpc.truncate(rpc.len() - (name.len().next_multiple_of(4) - name.len()));
        let mut long = Call::null(call.xid, call.credit);
        long.reads = vec![ReadSegment { position: 0, target: s.source(&rpc)?.segment() }];
        calls.push(("long LOOKUP without its pad", long.nomsg(), call.xid));
    }
    if f.bad_version_call {
        let call = Call::null(s.xid(), s.options.credits);
        calls.push(("NULL with rdma_vers 7", call.msg_with(|b| b.raw_vers(7)), call.xid));
    }
    for (step, msg, xid) in calls {
        let _ = s.call(step, xid, &msg);
        s.ensure_connected()?;
    }
    Ok(())
}

/// `oversized-inline`: a 5000-byte WRITE sent inline.
fn oversized_inline_call(s: &mut Session<'_>) -> Step<()> {
    if !s.faults.oversized_inline {
        return Ok(());
    }
    let fh = s.lookup(nfs3::FILE_SCRATCH)?;
    let big = vec![0x5au8; 5000];
    let mut call = s.call_for(NFSPROC3_WRITE, nfs3::write_args_split(&fh, 0, &big));
    call.args.extend_from_slice(&big);
    let _ = s.call("oversized WRITE", call.xid, &call.msg());
    s.ensure_connected()
}

/// `xid-mismatch`: a NULL whose RPC xid is not its rdma_xid.
fn xid_mismatch_call(s: &mut Session<'_>) -> Step<()> {
    if !s.faults.xid_mismatch {
        return Ok(());
    }
    let xid = s.xid();
    let msg = Call::null(xid.wrapping_add(7), s.options.credits).msg_with_rdma_xid(xid);
    let _ = s.call("NULL with a mismatched xid", xid, &msg);
    s.ensure_connected()
}

/// `send-rdma-done`: an RDMA_DONE, padded to the minimal header (RFC 8166 4.5) so only
/// RDMA_DONE itself is wrong.
fn rdma_done(s: &mut Session<'_>) -> Step<()> {
    if !s.faults.send_rdma_done {
        return Ok(());
    }
    let xid = s.xid();
    let mut b = HeaderBuilder::done(xid, 1).encode_to_vec();
    b.resize(MIN_HEADER_LEN, 0);
    s.send("RDMA_DONE", &b)?;
    let _ = s.recv_until("RDMA_DONE", Instant::now() + Duration::from_millis(100));
    Ok(())
}
