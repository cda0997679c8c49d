//! Fault switches of the reference responder: each makes it break one requirement, so tests
//! can prove the check for that requirement notices. All off by default; used only by tests
//! and the hidden `--fault` option.

use rpcrdma_codec::check::{rules, Rule};
use rpcrdma_codec::chunk::{ChunkLists, ReadChunk, Segment};
use rpcrdma_codec::xdr::pad4;

use crate::ulp::{UlpOutcome, UlpResults};

crate::fault_switches! {
    /// Deliberate misbehaviours of the reference responder.
    pub struct Faults {
        /// Grant zero credits in every reply (RFC 8166 3.3.1).
        zero_credit = "zero-credit",
        /// ERR_VERS with the wrong rdma_xid (RFC 8166 4.5).
        err_vers_wrong_xid = "err-vers-wrong-xid",
        /// ERR_VERS with rdma_vers_low > rdma_vers_high.
        err_vers_bad_range = "err-vers-bad-range",
        /// Ignore an unsupported version instead of sending ERR_VERS (RFC 8166 4.5.1).
        ignore_bad_version = "ignore-bad-version",
        /// Never send ERR_CHUNK (RFC 8166 4.5.2).
        no_err_chunk = "no-err-chunk",
        /// Answer RDMA_ERROR and RDMA_DONE from a requester instead of discarding them.
        answer_error_and_done = "answer-error-and-done",
        /// Answer messages shorter than 28 bytes (RFC 8166 4.5: MUST discard).
        answer_short_messages = "answer-short-messages",
        /// Process calls whose rdma_xid differs from the RPC xid.
        accept_xid_mismatch = "accept-xid-mismatch",
        /// Skip the read-list position rules (alignment, bounds, overlap, split) and answer a
        /// stream that does not reassemble with GARBAGE_ARGS instead of ERR_CHUNK.
        lenient_read_list = "lenient-read-list",
        /// Write the XDR pad into write chunks (RFC 8166 3.4.6.2: MUST NOT).
        pad_write_chunk = "pad-write-chunk",
        /// Report write-chunk lengths rounded up to four.
        write_chunk_length_padded = "write-chunk-length-padded",
        /// Send replies inline even when they exceed the requester's receive size.
        ignore_reply_chunk = "ignore-reply-chunk",
        /// Use Send With Invalidate even when the requester did not set R.
        invalidate_without_r = "invalidate-without-r",
        /// Invalidate an R_key that is not from the request.
        invalidate_foreign_key = "invalidate-foreign-key",
        /// Send With Invalidate of the previous request's R_key (stale per-request state;
        /// RFC 8797 4.1: only an STag of the XID the reply carries).
        invalidate_previous_key = "invalidate-previous-key",
        /// Advertise private data with version 2 (not RFC 8797's 1).
        private_data_bad_version = "private-data-bad-version",
        /// Post receives for only half the credits granted, and replenish them slowly
        /// (RFC 8166 3.3.1).
        short_receive_window = "short-receive-window",
        /// Read each read segment rounded up to a multiple of four (past the advertised length).
        read_chunk_roundup = "read-chunk-roundup",
        /// Return an empty write list instead of unused write chunks (RFC 8166 4.3.2.2).
        drop_unused_write_chunks = "drop-unused-write-chunks",
        /// Refuse position-zero read chunks with ERR_CHUNK.
        no_position_zero = "no-position-zero",
        /// Pull only the first segment of each read chunk.
        first_segment_only = "first-segment-only",
        /// Echo an offered reply chunk with its full lengths in an inline reply.
        echo_reply_chunk_lengths = "echo-reply-chunk-lengths",
        /// Without valid requester private data, assume a 4096-byte receive size (RFC 8797 5.1: 1024).
        assume_large_peer_receive = "assume-large-peer-receive",
        /// Append four bytes to every ERR_CHUNK.
        err_chunk_trailing = "err-chunk-trailing",
        /// Answer CONF_RDMA with SUCCESS but no config_rdma_reply.
        ccp_empty_reply = "ccp-empty-reply",
        /// Pull read chunks with RDMA Read although the requester's CONF_RDMA said maxrdmaread 0
        /// (RFC 5666 6.2: MUST NOT).
        ccp_maxrdmaread_ignored = "ccp-maxrdmaread-ignored",
        /// Advertise R = 0 in our private data, yet use Send With Invalidate whenever the
        /// requester set R (RFC 8797 4.1: either peer clearing R forbids it).
        invalidate_despite_own_r0 = "invalidate-despite-own-r0",
        /// ERR_VERS carries rdma_vers 1 instead of the failing request's version (RFC 8166 4.5).
        err_vers_no_echo = "err-vers-no-echo",
        /// A reply too long for the offered reply chunk: write what fits into the chunk and
        /// send RDMA_NOMSG, a truncated reply, keeping the connection (RFC 8166 4.5.4).
        reply_chunk_truncated = "reply-chunk-truncated",
        /// A reply too long for the offered reply chunk: send nothing and keep the connection
        /// (RFC 8166 4.5.4: MUST close when no reply or error can be sent).
        drop_unsendable_reply = "drop-unsendable-reply",
        /// Ignore the requester's private data and keep the 1024-byte default reply inline
        /// threshold (RFC 8797 4.2: the server uses the requester's receive size).
        ignore_peer_receive_size = "ignore-peer-receive-size",
        /// An inline reply to a call that offered a reply chunk leaves the reply chunk out
        /// (RFC 8166 4.3.3: MUST copy it).
        omit_reply_chunk_echo = "omit-reply-chunk-echo",
        /// Grant twice the credits we keep receives posted for, and replenish them slowly
        /// (RFC 8166 3.3.1).
        overgrant = "overgrant",
        /// Look for the requester's private data only at offset zero (RFC 8797 5.2: the
        /// buffer is searched, at any alignment).
        private_data_offset_zero_only = "private-data-offset-zero-only",
        /// Treat requester private data with reserved bits set as absent (RFC 8797 4:
        /// receivers MUST ignore them).
        private_data_reserved_rejected = "private-data-reserved-rejected",
        /// Return write-chunk segments with the offset advanced past the bytes written.
        write_chunk_offset_advanced = "write-chunk-offset-advanced",
        /// Put the DDP-eligible result into the last write chunk instead of the first
        /// (RFC 8166 4.3.2.1).
        ddp_into_last_write_chunk = "ddp-into-last-write-chunk",
        /// Treat a reply exactly the size of the reply inline threshold as too long for inline
        /// (RFC 8166 3.3.2: the threshold is the largest message size that can be conveyed).
        exclusive_reply_threshold = "exclusive-reply-threshold",
        /// Post receive buffers of 1020 bytes, whatever the advertised receive size: a call of
        /// exactly the 1024-byte minimum inline threshold fails (RFC 8166 3.3.3).
        receive_buffers_1020 = "receive-buffers-1020",
        /// Drop calls whose arguments do not decode instead of answering GARBAGE_ARGS.
        drop_garbage_args = "drop-garbage-args",
        /// Process calls whose read chunks reduce arguments that are not DDP-eligible
        /// (RFC 8166 6.1: MUST NOT process, report per 4.5.2).
        process_ineligible_chunks = "process-ineligible-chunks",
        /// Return the call's read list in the reply (RFC 8166 4.3.1: MUST leave it empty).
        echo_read_list = "echo-read-list",
        /// RPC replies carry rdma_vers 0 (RFC 8166 4.2.2: MUST be 1).
        reply_wrong_version = "reply-wrong-version",
        /// Each connection uses the private data of the connection before it (RFC 8797 4:
        /// MUST be prepared for the settings to change upon a reconnection).
        previous_private_data = "previous-private-data",
        /// Refuse (ERR_CHUNK) a read chunk whose last segment holds only XDR roundup padding
        /// (RFC 8166 3.4.5.2 allows a requester to add one).
        reject_read_pad_segment = "reject-read-pad-segment",
        /// Write a long reply from the start of the reply chunk's first segment, ignoring the
        /// segment boundaries (RFC 8166 3.4.6: fill the segments in array order).
        reply_chunk_first_segment = "reply-chunk-first-segment",
        /// When a reply chunk is offered too, leave the write list unused and send the whole
        /// reply, READ data included, through the reply chunk (RFC 8166 4.3.2: MUST push
        /// DDP-eligible results into the write list).
        write_list_ignored_with_reply_chunk = "write-list-ignored-with-reply-chunk",
        /// A result too long for its write chunk: write what fits and send the reply as if
        /// all of it had been written (RFC 8166 4.5.4: reply, report, or close).
        write_chunk_truncated = "write-chunk-truncated",
        /// Strip the XDR pad of an odd-length item from a reply sent through the reply chunk
        /// (RFC 8166 3.5.3: such chunks MUST include XDR roundup).
        reply_chunk_unpadded = "reply-chunk-unpadded",
        /// Drop a reduced item's length word from the Payload stream along with the item
        /// (RFC 8166 3.4.4.1: the count MUST remain in the Payload stream).
        reduced_count_omitted = "reduced-count-omitted",
        /// Leave a reduced item's XDR roundup in the Payload stream (RFC 8166 3.4.4.4: MUST remove it).
        reduced_pad_left_inline = "reduced-pad-left-inline",
        /// Reduce the results of a reply with no DDP-eligible item (all after the status word)
        /// into the first offered write chunk (RFC 8166 6.1: MUST NOT reduce them).
        reduce_ineligible_results = "reduce-ineligible-results",
        /// Return a long reply's reply-chunk segments with the offset advanced past the bytes
        /// written (RFC 8166 3.5.3: the Requester-provided Reply chunk).
        reply_chunk_offset_advanced = "reply-chunk-offset-advanced",
        /// Without valid requester private data, assume the requester set R and use Send With
        /// Invalidate (RFC 8797 5.1: behave as if R were zero).
        assume_peer_remote_invalidation = "assume-peer-remote-invalidation",
        /// Advertise our private data with a reserved bit set (RFC 8797 4: senders MUST zero them).
        private_data_reserved_set = "private-data-reserved-set",
        /// Write the XDR item before a reduced item (READ3's eof) into the write chunk ahead of
        /// it (RFC 8166 3.4.4.4: a chunk MUST contain exactly one XDR data item).
        write_chunk_preceding_item = "write-chunk-preceding-item",
        /// Send inline Version One replies as RDMA_MSGP (RFC 8166 4.6.1: senders MUST NOT).
        reply_msgp = "reply-msgp",
        /// Send an RDMA_DONE after each reply sent through a reply chunk (RFC 8166 4.6.2:
        /// senders MUST NOT).
        done_after_reply_chunk = "done-after-reply-chunk",
        /// Version Two replies say rdma_direction / rdma_optdir CALL (v2-01 4.2.2).
        v2_wrong_direction = "v2-wrong-direction",
        /// Answer Version Two calls with Version One headers (v2-01 5.3).
        v2_reply_v1 = "v2-reply-v1",
        /// ERR_VERS reports only version 1 although Version Two is served.
        v2_err_vers_v1_only = "v2-err-vers-v1-only",
        /// Never send RDMA2_ERR_BAD_HEADER (v2-01 4.2.3).
        v2_no_bad_header = "v2-no-bad-header",
        /// Drop RDMA2_OPTIONAL with an unknown opttype instead of RDMA2_ERR_INVAL_OPTION (v2-01 3.1).
        v2_no_inval_option = "v2-no-inval-option",
        /// Answer RDMA2_ERROR from a requester with RDMA2_ERR_BAD_HEADER.
        v2_answer_error = "v2-answer-error",
        /// Answer ROPT_INITXCH and ROPT_UPDXCH (one-way, xcharext-02 2.3) with a ROPT_RESPXCH.
        v2_initxch_answered = "v2-initxch-answered",
        /// Do not apply the requester's characteristics from ROPT_INITXCH / ROPT_UPDXCH.
        v2_ignore_xchars = "v2-ignore-xchars",
        /// ROPT_RESPXCH with an rdma_xid other than the ROPT_REQXCH's (xcharext-02 4.3).
        v2_respxch_wrong_xid = "v2-respxch-wrong-xid",
        /// ROPT_RESPXCH whose rej subset overlaps done (xcharext-02 4.3: should not).
        v2_respxch_overlap = "v2-respxch-overlap",
        /// RDMA2_ERR_BAD_HEADER for unknown characteristic ids (xcharext-02 2.1: no error).
        v2_reject_unknown_xchar = "v2-reject-unknown-xchar",
        /// Answer an RDMA2_OPTIONAL that does not decode (such as an xcharval whose xchv_data runs
        /// past the message) with an empty ROPT_RESPXCH (xcharext-02 2.1: MUST report an XDR error).
        v2_undecodable_optional_answered = "v2-undecodable-optional-answered",
        /// Drop Version Two messages longer than 1024 bytes (v2-01 2.3: receivers MUST support a
        /// 4096-byte inline threshold).
        v2_inline_1024 = "v2-inline-1024",
        /// Serve a ROPT_XMTREQ at once, ignoring optxrq_count (rtrext-03 9.4).
        v2_no_continuation = "v2-no-continuation",
        /// Drop broken transmission groups silently instead of ROPT_REPTERR (rtrext-03 9.5).
        v2_no_repterr = "v2-no-repterr",
        /// Report every broken transmission group as OPTRERR_BADCONT.
        v2_repterr_badcont_only = "v2-repterr-badcont-only",
        /// Version Two replies keep the Version One inline threshold (RFC 8797's, 1024 bytes
        /// without private data) instead of v2-01's 4096-byte default (2.3: senders MUST assume it).
        v2_v1_inline_threshold = "v2-v1-inline-threshold",
        /// Send a multi-transmission reply's ROPT_XMTCONTs last first (rtrext-03 4.2: in order).
        v2_group_out_of_order = "v2-group-out-of-order",
        /// Send a multi-transmission reply's ROPT_XMTCONTs only after answering the next message
        /// (rtrext-03 4.2: without any intervening message).
        v2_group_interleaved = "v2-group-interleaved",
        /// ROPT_XMTCONTs of a multi-transmission reply carry the group's rdma_xid plus one
        /// (rtrext-03 9.4: must match the initial transmission's).
        v2_cont_wrong_xid = "v2-cont-wrong-xid",
        /// Close the connection when Version Two's default inline threshold takes over from
        /// Version One's (v2-01 5.2: MUST allow the change without a connection loss).
        v2_negotiation_closes = "v2-negotiation-closes",
        /// Close the connection when the requester reports a new Receive Buffer Size (v2-01 5.2:
        /// MUST allow inline thresholds to change without a connection loss).
        v2_rbsiz_change_closes = "v2-rbsiz-change-closes",
        /// Crash-like: on a Version One call with more than four write chunks, drop the
        /// connection and refuse every later connection (a crashed or wedged server).
        crash_on_many_write_chunks = "crash-on-many-write-chunks",
        /// Crash-like: on a Version One read segment whose position is beyond 65536, drop the
        /// connection and refuse every later connection.
        crash_on_far_read_position = "crash-on-far-read-position",
        /// Crash-like: on a Version One call whose first write chunk claims more than 4096
        /// segments (however few follow), drop the connection and refuse every later connection.
        crash_on_huge_segment_count = "crash-on-huge-segment-count",
        /// With exactly three write chunks, RDMA-Write eight bytes just past the end of the
        /// third chunk's first segment (an out-of-bounds write into the requester's memory).
        write_past_segment = "write-past-segment",
        /// Stop answering on this connection (but keep it up, and accept new ones) after two
        /// messages in a row with rdma_credit zero.
        hang_on_zero_credit_pair = "hang-on-zero-credit-pair",
        /// Reduce only a reply's first DDP-eligible item: later ones (the second READ of an
        /// NFSv4 COMPOUND) stay inline and their write chunks come back unused (RFC 8166
        /// 4.3.2.2: a subsequent item MUST be placed in the unconsumed write chunk).
        later_items_inline = "later-items-inline",
        /// Reduce the DDP-eligible items that have no write chunk (the READs of an NFSv4
        /// COMPOUND beyond a non-empty write list) as though placed: their data leaves the
        /// inline results and is written nowhere (RFC 8267 6.4.1: they MUST return inline).
        surplus_items_reduced = "surplus-items-reduced",
        /// Refuse with ERR_CHUNK a call whose write list holds a chunk of more than eight
        /// segments (RFC 8267 6.4.2: an NFSv4 server MUST accept sixteen).
        write_chunk_over_eight_segments = "write-chunk-over-eight-segments",
        /// Refuse with ERR_CHUNK a call whose write list holds an empty chunk (RFC 8166
        /// 4.3.2.3, RFC 8267 6.4.1: its item MUST be returned inline), as Linux svcrdma does.
        empty_write_chunk_refused = "empty-write-chunk-refused",
        /// Reverse-direction calls carry rdma_vers 2 on a Version One connection (RFC 8167
        /// 5.1: the same value as forward-direction calls).
        reverse_call_vers_2 = "reverse-call-vers-2",
        /// Reverse-direction calls carry the RPC XID with its low bit flipped in rdma_xid
        /// (RFC 8167 5.1: the RPC call header MUST start with the same XID).
        reverse_call_xid_mismatch = "reverse-call-xid-mismatch",
        /// Reverse-direction calls say msg_type REPLY in their RPC header (RFC 8167 5.1:
        /// MUST contain CALL).
        reverse_call_reply_type = "reverse-call-reply-type",
        /// Send every queued reverse-direction call at once, ignoring the reverse-direction
        /// credits the requester granted (RFC 8167 4.1; RFC 8166 3.3.1).
        reverse_call_over_credits = "reverse-call-over-credits",
        /// Send every reverse-direction call as a Long call (RDMA_NOMSG, position-zero read
        /// chunk) although it fits inline (RFC 8267 6.5.2: only Short messages unless the back
        /// channel's ca_maxrequestsize exceeds the inline threshold).
        reverse_call_long = "reverse-call-long",
        /// Treat a reverse-direction reply as a forward call: it gets ERR_CHUNK (RFC 8167 4.1,
        /// 5.2: msg_type REPLY marks a reply, which no one answers).
        reverse_reply_answered = "reverse-reply-answered",
        /// The NFSv4.1 server sends CB_NULL at EXCHANGE_ID, on a connection no back channel
        /// was offered on (RFC 8881 2.10.3.1; RFC 8167 6: only after CREATE_SESSION or
        /// BIND_CONN_TO_SESSION offered one).
        cb_before_back_channel = "cb-before-back-channel",
        /// The NFSv4.1 server sends, once the back channel is granted, a CB_COMPOUND larger
        /// than its ca_maxrequestsize (RFC 8881 18.36.3; RFC 8267 6.5.2).
        cb_large_call = "cb-large-call",
        /// Crash-like: on a reverse-direction reply whose XID matches no call of ours, drop the
        /// connection and refuse every later connection (RFC 8167 5.2 lets such a reply be
        /// discarded, nothing more: a server that falls over on one is what `fuzz --reverse`
        /// finds).
        crash_on_unknown_reverse_xid = "crash-on-unknown-reverse-xid",
        /// The NFSv4.1 server gives up the callbacks outstanding when their back channel
        /// connection is lost: a CB_RECALL is not sent again once the client binds a new
        /// connection to the session's back channel (RFC 8167 5.4, RFC 8881 2.10.6.2).
        cb_abandoned_on_reconnect = "cb-abandoned-on-reconnect",
        /// Refuse with ERR_CHUNK a call whose read list holds a chunk of more than eight
        /// segments (RFC 8267 6.4.2: an NFSv4 server MUST accept sixteen).
        read_chunk_over_eight_segments = "read-chunk-over-eight-segments",
        /// Send nothing (and keep the connection) for a call whose read list holds a chunk of
        /// more than sixteen segments (RFC 8267 6.4.2: SHOULD answer ERR_CHUNK or
        /// GARBAGE_ARGS for chunk lists beyond its prescriptions it cannot process).
        drop_excess_chunk_lists = "drop-excess-chunk-lists",
        /// Refuse with ERR_CHUNK a call whose read list holds a chunk at a non-zero position
        /// while its write list holds a chunk (RFC 8267 6.4.2: an NFSv4 server MUST accept
        /// one Read chunk and one Write chunk in one call).
        read_and_write_lists_refused = "read-and-write-lists-refused",
        /// On the emulated fabric, listen at port 20050, not NFS's well-known RPC-over-RDMA
        /// port 20049 (RFC 8267 6.3: an NFSv4 server MUST use it).
        not_well_known_port = "not-well-known-port",
        /// The NFSv4.1 server answers a READ whose result would go into a write chunk of
        /// sixteen segments or more with NFS4ERR_SERVERFAULT, having accepted the write list
        /// (RFC 8267 6.4.2: an NFSv4 server MUST process a Write chunk of sixteen; 6.4.1:
        /// the k-th write chunk is the k-th READ's).
        read_fails_in_sixteen_segment_chunk = "read-fails-in-sixteen-segment-chunk",
        /// Close the connection over every Long Call (RDMA_NOMSG, the call in a position-zero
        /// read chunk) it is about to serve (RFC 8166 3.5.3: a responder pulls it and answers),
        /// accepting new connections.
        disconnect_on_long_call = "disconnect-on-long-call",
        /// Close the connection over the first call carrying chunks it is about to serve after
        /// a Version One transport header on this connection did not decode or broke a call
        /// rule (RFC 8166 4.5.2: ERR_CHUNK answers that message alone), accepting new
        /// connections: a drop earlier messages on the connection cause, which the call alone
        /// does not show (a chunkless call, such as a liveness NULL, is served as usual).
        disconnect_after_bad_header = "disconnect-after-bad-header",
    }
}

/// Messages a connection takes, with rdma_credit zero in a row, before
/// `hang-on-zero-credit-pair` stops it answering.
pub const HANG_ZERO_CREDIT_RUN: u32 = 2;
/// More write chunks than this crash a responder with `crash-on-many-write-chunks`.
pub const CRASH_WRITE_CHUNKS: usize = 4;
/// Write chunks claiming more segments than this crash a responder with
/// `crash-on-huge-segment-count`.
pub const CRASH_SEGMENT_COUNT: u32 = 4096;
/// Read positions beyond this crash a responder with `crash-on-far-read-position`.
pub const CRASH_READ_POSITION: u32 = 65536;

impl Faults {
    /// The crash-like faults, and the others only the fuzzer finds: they take the whole
    /// responder or a connection down (or write out of bounds), not one requirement a check
    /// judges.
    pub const CRASH_LIKE: &'static [&'static str] = &[
        "crash-on-many-write-chunks",
        "crash-on-far-read-position",
        "crash-on-huge-segment-count",
        "write-past-segment",
        "hang-on-zero-credit-pair",
        "crash-on-unknown-reverse-xid",
        "disconnect-on-long-call",
        "disconnect-after-bad-header",
    ];

    /// Whether these faults let a call that breaks `rule` through (the responder otherwise
    /// answers ERR_CHUNK, RFC 8166 4.5.2).
    pub fn tolerates(&self, rule: &Rule) -> bool {
        const READ_LIST: [Rule; 4] = [
            rules::POSITION_ALIGNMENT,
            rules::POSITION_BEYOND_PAYLOAD,
            rules::READ_CHUNKS_OVERLAP,
            rules::READ_CHUNK_SPLIT,
        ];
        self.accept_xid_mismatch && *rule == rules::XID_MISMATCH || self.lenient_read_list && READ_LIST.contains(rule)
    }
}

impl Faults {
    /// The statements of the requirements matrix (`spec/section#n`) each fault breaks: what
    /// proves that a check failing under the fault judges the statement (conformance's
    /// `proof`), rather than a neighbouring rule. A fault not listed proves no statement.
    pub const BREAKS: &'static [(&'static str, &'static [&'static str])] = &[
        ("zero-credit", &["rfc8166/3.3.1#2"]),
        ("short-receive-window", &["rfc8166/3.3.1#4", "rfc5666/6#2"]),
        ("overgrant", &["rfc8166/3.3.1#4", "rfc5666/6#2"]),
        ("receive-buffers-1020", &["rfc8166/3.3.3#2"]),
        ("assume-large-peer-receive", &["rfc8166/3.3.3#3", "rfc8797/5.1#1", "rfc8797/5.2#1"]),
        ("assume-peer-remote-invalidation", &["rfc8797/5.1#1", "rfc8797/5.2#1"]),
        ("reduce-ineligible-results", &["rfc8166/3.4.2#2", "rfc8166/6.1#1"]),
        // A requester MAY segment a chunk as it likes: a responder that reads only the first
        // segment does not cope with that.
        ("first-segment-only", &["rfc8166/3.4.4#1"]),
        ("reduced-count-omitted", &["rfc8166/3.4.4.1#1"]),
        ("write-chunk-preceding-item", &["rfc8166/3.4.4.4#1"]),
        ("reduced-pad-left-inline", &["rfc8166/3.4.4.4#2"]),
        ("write-chunk-offset-advanced", &["rfc8166/3.4.6#2"]),
        ("drop-unused-write-chunks", &["rfc8166/3.4.6#2", "rfc8166/4.3.2.2#3", "rfc8166/4.3.2.3#1", "rfc8267/6.4.1#4"]),
        ("pad-write-chunk", &["rfc8166/3.4.6.2#2", "rfc8166/3.4.6.2#3"]),
        ("write-chunk-length-padded", &["rfc8166/3.4.6.2#3"]),
        ("ignore-reply-chunk", &["rfc8166/3.5.3#1", "rfc8166/3.5.3#4", "rfc8797/3.1#1", "v2-01/2.3#2"]),
        ("reply-chunk-unpadded", &["rfc8166/3.5.3#5"]),
        ("reply-chunk-offset-advanced", &["rfc8166/4.3.3#3"]),
        ("echo-reply-chunk-lengths", &["rfc8166/4.3.3#3"]),
        ("omit-reply-chunk-echo", &["rfc8166/4.3.3#3"]),
        // A Long Message, RDMA_NOMSG and a position-zero chunk are the requester's to choose:
        // a responder refusing them does not cope.
        ("no-position-zero", &["rfc8166/3.5.3#3", "rfc8166/4#2", "rfc8166/6.1#2"]),
        ("reply-wrong-version", &["rfc8166/4.2.2#1"]),
        ("answer-error-and-done", &["rfc8166/4.2.4#4", "rfc8166/4.6.2#2"]),
        ("echo-read-list", &["rfc8166/4.3.1#1"]),
        ("write-list-ignored-with-reply-chunk", &["rfc8166/4.3.2#1"]),
        ("later-items-inline", &["rfc8166/4.3.2#1", "rfc8267/6.4.1#2"]),
        // The first READ's data in the last write chunk: the first chunk is not the first
        // READ's, and a READ whose chunk is empty does not return inline (RFC 8267 6.4.1).
        ("ddp-into-last-write-chunk", &["rfc8267/6.4.1#1", "rfc8267/6.4.1#3"]),
        ("surplus-items-reduced", &["rfc8267/6.4.1#5"]),
        ("write-chunk-over-eight-segments", &["rfc8267/6.4.2#2"]),
        ("empty-write-chunk-refused", &["rfc8267/6.4.1#3"]),
        ("answer-short-messages", &["rfc8166/4.5#1"]),
        ("lenient-read-list", &["rfc8166/4.5#2"]),
        ("no-err-chunk", &["rfc8166/4.5#2", "rfc8166/4.5.2#1", "rfc8166/4.6.1#2"]),
        ("err-vers-wrong-xid", &["rfc8166/4.5#4"]),
        ("err-vers-no-echo", &["rfc8166/4.5#5"]),
        ("err-vers-bad-range", &["rfc8166/4.5.1#1"]),
        ("ignore-bad-version", &["rfc8166/4.5.1#1"]),
        ("v2-err-vers-v1-only", &["rfc8166/4.5.1#1"]),
        ("accept-xid-mismatch", &["rfc8166/4.5.2#1"]),
        ("drop-garbage-args", &["rfc8166/4.5.2#2"]),
        ("drop-unsendable-reply", &["rfc8166/4.5.4#2"]),
        ("reply-chunk-truncated", &["rfc8166/4.5.4#2"]),
        ("write-chunk-truncated", &["rfc8166/4.5.4#2"]),
        ("reply-msgp", &["rfc8166/4.6.1#1"]),
        ("done-after-reply-chunk", &["rfc8166/4.6.2#1"]),
        ("process-ineligible-chunks", &["rfc8166/6.1#3"]),
        ("ccp-maxrdmaread-ignored", &["rfc5666/6.2#5"]),
        // CCP is the requester's option: a responder answering CONF_RDMA without its reply does
        // not cope with it.
        ("ccp-empty-reply", &["rfc5666/6#3"]),
        ("invalidate-without-r", &["rfc8797/3.2#2", "rfc8797/4.1#3"]),
        ("invalidate-despite-own-r0", &["rfc8797/4.1#3"]),
        ("invalidate-foreign-key", &["rfc8797/3.2#1", "rfc8797/4.1#2"]),
        ("invalidate-previous-key", &["rfc8797/3.2#1", "rfc8797/4.1#2"]),
        ("previous-private-data", &["rfc8797/4#1"]),
        ("private-data-reserved-set", &["rfc8797/4#2"]),
        ("private-data-reserved-rejected", &["rfc8797/4#2"]),
        ("v2-inline-1024", &["v2-01/2.3#1"]),
        ("v2-v1-inline-threshold", &["v2-01/2.3#2"]),
        ("v2-no-inval-option", &["v2-01/3.1#3"]),
        ("v2-wrong-direction", &["v2-01/4.2.2#2", "v2-01/4.2.2#3"]),
        ("v2-reply-v1", &["v2-01/5.3#1"]),
        ("v2-negotiation-closes", &["v2-01/5.2#1"]),
        ("v2-rbsiz-change-closes", &["v2-01/5.2#1"]),
        ("v2-no-bad-header", &["xcharext-02/2.1#2"]),
        ("v2-undecodable-optional-answered", &["xcharext-02/2.1#1"]),
        ("v2-ignore-xchars", &["xcharext-02/3.2#1"]),
        ("v2-respxch-wrong-xid", &["xcharext-02/4.3#1"]),
        ("v2-respxch-overlap", &["xcharext-02/4.3#2"]),
        ("v2-group-out-of-order", &["rtrext-03/4.2#1"]),
        ("v2-group-interleaved", &["rtrext-03/4.2#1"]),
        ("v2-cont-wrong-xid", &["rtrext-03/9.4#1"]),
        ("reverse-call-vers-2", &["rfc8167/5.1#1"]),
        ("reverse-call-xid-mismatch", &["rfc8167/5.1#2"]),
        ("reverse-call-reply-type", &["rfc8167/5.1#2"]),
        ("reverse-call-over-credits", &["rfc8167/4.1#1"]),
        ("reverse-call-long", &["rfc8267/6.5.2#2"]),
        // Answering a reverse-direction reply takes it for a call: not RFC 8167's approach,
        // which tells the two apart by msg_type (4.1, 5.2).
        ("reverse-reply-answered", &["rfc8267/6.5.2#1"]),
        ("cb-before-back-channel", &["rfc8167/6#1"]),
        ("cb-abandoned-on-reconnect", &["rfc8167/5.4#2"]),
        ("read-chunk-over-eight-segments", &["rfc8267/6.4.2#2"]),
        ("drop-excess-chunk-lists", &["rfc8267/6.4.2#3"]),
        ("read-and-write-lists-refused", &["rfc8267/6.4.2#2"]),
        ("not-well-known-port", &["rfc8267/6.3#1"]),
        ("read-fails-in-sixteen-segment-chunk", &["rfc8267/6.4.2#2"]),
    ];
}

/// How the faults bend a reply's plan (`call.rs`: the write list, the inline payload, the
/// choice of carrier, the echoed chunks). Each is the identity with its switch off.
impl Faults {
    /// `reduce-ineligible-results`: a reply with no DDP-eligible item has all its results
    /// after the status word reduced into the first write chunk.
    /// `drop-garbage-args`: no reply at all to a call whose arguments did not decode.
    pub(super) fn drops_reply(&self, outcome: Option<&UlpOutcome>) -> bool {
        matches!(outcome, Some(UlpOutcome::GarbageArgs)) && self.drop_garbage_args
    }

    /// Whether a read chunk is refused with ERR_CHUNK: `no-position-zero` refuses a
    /// position-zero chunk, `reject-read-pad-segment` one whose last segment (of several) is
    /// shorter than four bytes, a separate XDR pad,
    /// `read-chunk-over-eight-segments` one of more than eight segments.
    pub(super) fn refuses_read_chunk(&self, c: &ReadChunk<'_>) -> bool {
        let last_is_pad = c.segment_count() > 1 && c.segments().last().is_some_and(|s| s.length < 4);
        c.position == 0 && self.no_position_zero
            || c.position != 0 && last_is_pad && self.reject_read_pad_segment
            || self.read_chunk_over_eight_segments && c.segment_count() > 8
    }

    /// `drop-excess-chunk-lists`: whether a call goes unanswered for a read chunk of more than
    /// sixteen segments (RFC 8267 6.4.2's prescription for NFS version 4).
    pub(super) fn drops_excess_chunks(&self, chunks: &ChunkLists<'_>) -> bool {
        self.drop_excess_chunk_lists && chunks.reads.chunks().any(|c| c.segment_count() > 16)
    }

    /// Whether a call is refused with ERR_CHUNK for its write list: faithfully never;
    /// `write-chunk-over-eight-segments` refuses a write chunk of more than eight segments,
    /// `empty-write-chunk-refused` an empty one, `read-and-write-lists-refused` any beside a
    /// Read chunk at a non-zero position.
    pub(super) fn refuses_write_list(&self, chunks: &ChunkLists<'_>) -> bool {
        let data_read = chunks.reads.chunks().any(|c| c.position != 0);
        chunks.writes.chunks().any(|c| {
            self.write_chunk_over_eight_segments && c.segment_count() > 8
                || self.empty_write_chunk_refused && c.segment_count() == 0
                || self.read_and_write_lists_refused && data_read
        })
    }

    /// The port the responder listens at on the emulated fabric: NFS's well-known
    /// RPC-over-RDMA port faithfully (RFC 8267 6.3), the next one under `not-well-known-port`.
    pub(super) fn listening_port(&self) -> u16 {
        crate::transport::NFS_RDMA_PORT + u16::from(self.not_well_known_port)
    }

    /// How many bytes of a read segment of `length` are RDMA Read: `read-chunk-roundup`
    /// rounds it up to a multiple of four.
    pub(super) fn bend_read_length(&self, length: u32) -> u32 {
        if self.read_chunk_roundup {
            (length + 3) & !3
        } else {
            length
        }
    }

    pub(super) fn reduce_ineligible(&self, results: &mut UlpResults, chunks: &ChunkLists<'_>) {
        if self.reduce_ineligible_results
            && results.ddp.is_none()
            && results.head.len() > 4
            && !chunks.writes.is_empty()
        {
            let rest = results.head.split_off(4);
            results.ddp = Some(rest);
        }
    }

    /// Which DDP-eligible item the `i`-th of `count` write chunks carries: the `i`-th
    /// faithfully; `ddp-into-last-write-chunk` shifts the first item to the last chunk,
    /// `later-items-inline` keeps every item after the first inline, and
    /// `write-list-ignored-with-reply-chunk` leaves the write list unused when a reply chunk
    /// is offered.
    pub(super) fn write_list_item(&self, i: usize, count: usize, reply_offered: bool) -> Option<usize> {
        if self.write_list_ignored_with_reply_chunk && reply_offered {
            return None;
        }
        let first = if self.ddp_into_last_write_chunk { count.saturating_sub(1) } else { 0 };
        i.checked_sub(first).filter(|&k| !(k > 0 && self.later_items_inline))
    }

    /// `surplus-items-reduced`: the items after the `count` write chunks of a non-empty
    /// write list marked reduced, with nothing written (faithfully they stay inline).
    pub(super) fn reduce_surplus_items(&self, reduced: &mut [Option<usize>], items: &[&[u8]], count: usize) {
        if self.surplus_items_reduced && count > 0 {
            for (r, d) in reduced.iter_mut().zip(items).skip(count) {
                *r = Some(d.len());
            }
        }
    }

    /// The bytes written into a write chunk for item `k`: the item itself faithfully;
    /// `write-chunk-preceding-item` puts the XDR item before it (READ3's eof) ahead of it,
    /// and `pad-write-chunk` writes its XDR pad too.
    pub(super) fn write_chunk_bytes(&self, k: usize, data: &[u8], head: &[u8]) -> Vec<u8> {
        let mut item = data.to_vec();
        if self.write_chunk_preceding_item && k == 0 && head.len() >= 8 {
            let at = head.len() - 8;
            item = [&head[at..at + 4], data].concat();
        }
        if self.pad_write_chunk {
            item.resize(data.len() + pad4(data.len()), 0);
        }
        item
    }

    /// `write-chunk-offset-advanced`: the echoed segments' offsets moved past what was written.
    pub(super) fn bend_write_chunk_echo(&self, segs: &mut [Segment]) {
        if self.write_chunk_offset_advanced {
            advance_offsets(segs);
        }
    }

    /// Whether a write chunk's echo goes into the reply's write list: always faithfully;
    /// `drop-unused-write-chunks` leaves unused ones out.
    pub(super) fn keeps_write_chunk_echo(&self, segs: &[Segment]) -> bool {
        !(self.drop_unused_write_chunks && segs.iter().all(|s| s.length == 0))
    }

    /// A reduced item in the Payload stream: its length word stays and its pad goes
    /// faithfully (nothing to do); `reduced-count-omitted` drops the length word,
    /// `reduced-pad-left-inline` leaves its pad.
    pub(super) fn bend_reduced_item(&self, payload: &mut Vec<u8>, n: usize) {
        if self.reduced_count_omitted {
            payload.truncate(payload.len().saturating_sub(4));
        }
        if self.reduced_pad_left_inline {
            payload.resize(payload.len() + pad4(n), 0);
        }
    }

    /// Whether a reply of `len` bytes goes inline, given the faithful answer `fits`:
    /// `exclusive-reply-threshold` takes the threshold as exclusive, `ignore-reply-chunk`
    /// sends every reply inline.
    pub(super) fn bend_fits_inline(&self, fits: bool, len: usize, threshold: usize) -> bool {
        let fits = if self.exclusive_reply_threshold { len < threshold } else { fits };
        fits || self.ignore_reply_chunk
    }

    /// The reply chunk an inline reply echoes, where a fault decides it: none with
    /// `omit-reply-chunk-echo`, the offered lengths with `echo-reply-chunk-lengths`; None
    /// leaves the faithful echo (zero lengths).
    pub(super) fn inline_reply_chunk_echo(&self, offered: Option<&[Segment]>) -> Option<Option<Vec<Segment>>> {
        if self.omit_reply_chunk_echo {
            Some(None)
        } else if self.echo_reply_chunk_lengths {
            Some(offered.map(<[Segment]>::to_vec))
        } else {
            None
        }
    }

    /// `reply-chunk-unpadded`: the first inline item's XDR pad stripped from a long reply.
    pub(super) fn unpad_reply_chunk_payload(&self, payload: &mut Vec<u8>, pad_at: Option<(usize, usize)>) {
        if let (true, Some((at, n))) = (self.reply_chunk_unpadded, pad_at) {
            payload.drain(at..at + n);
        }
    }

    /// `reply-chunk-offset-advanced`: the echoed reply chunk's offsets moved past what was written.
    pub(super) fn bend_reply_chunk_echo(&self, echo: &mut [Segment]) {
        if self.reply_chunk_offset_advanced {
            advance_offsets(echo);
        }
    }
}

fn advance_offsets(segs: &mut [Segment]) {
    for s in segs.iter_mut() {
        s.offset += s.length as u64;
    }
}

/// Whether a Version One RDMA_MSG / RDMA_NOMSG's first write chunk claims more than
/// [`CRASH_SEGMENT_COUNT`] segments: the raw read a careless parser does before
/// checking the count against the bytes there are (`crash-on-huge-segment-count`).
pub(super) fn claims_huge_segment_count(data: &[u8]) -> bool {
    let word = |at: usize| data.get(at..at + 4).map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]));
    if !matches!(word(12), Some(0 | 1)) {
        return false;
    }
    let mut p = 16;
    while word(p) == Some(1) {
        p += 24;
    }
    p += 4;
    word(p) == Some(1) && word(p + 4).is_some_and(|count| count > CRASH_SEGMENT_COUNT)
}

impl super::Session<'_> {
    /// `echo-read-list`: the call's read list kept, for its reply to return it.
    pub(super) fn keep_read_list_to_echo(&mut self, chunks: &ChunkLists<'_>) {
        if self.config.faults.echo_read_list {
            self.echoed_reads = chunks.reads.segments().collect();
        }
    }

    /// A transport header that did not decode or broke a call rule came: remembered for
    /// `disconnect-after-bad-header` only.
    pub(super) fn note_bad_header(&mut self) {
        self.bad_header_seen |= self.config.faults.disconnect_after_bad_header;
    }

    /// Why a fault closes the connection over a Version One call about to be served
    /// (`disconnect-on-long-call`, `disconnect-after-bad-header`), if one does.
    pub(super) fn disconnects_on(&self, chunks: &ChunkLists<'_>, is_nomsg: bool) -> Option<&'static str> {
        let f = &self.config.faults;
        if f.disconnect_on_long_call && is_nomsg && chunks.reads.segments().any(|s| s.position == 0) {
            return Some("a Long Call (a fault closes the connection)");
        }
        if self.bad_header_seen && !chunks.is_empty() {
            return Some("a call after a bad header (a fault closes the connection)");
        }
        None
    }

    /// Whether a crash-like fault takes the responder down on these chunk lists.
    pub(super) fn crashes_on(&self, chunks: &rpcrdma_codec::chunk::ChunkLists<'_>) -> bool {
        let f = &self.config.faults;
        f.crash_on_many_write_chunks && chunks.writes.len() > CRASH_WRITE_CHUNKS
            || f.crash_on_far_read_position && chunks.reads.segments().any(|s| s.position > CRASH_READ_POSITION)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_sets_a_distinct_switch() {
        let all: Vec<Faults> = Faults::NAMES.iter().map(|n| Faults::only(n)).collect();
        for (i, f) in all.iter().enumerate() {
            assert_ne!(*f, Faults::default(), "{}", Faults::NAMES[i]);
            assert!(all[i + 1..].iter().all(|g| g != f), "{}", Faults::NAMES[i]);
        }
    }

    #[test]
    fn crash_like_faults_are_switches() {
        for n in Faults::CRASH_LIKE {
            assert!(Faults::NAMES.contains(n), "{n}");
        }
    }
}
