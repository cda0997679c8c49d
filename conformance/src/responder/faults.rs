//! Fault switches: each makes the reference responder break one requirement, so tests can
//! prove the check for that requirement notices. All off by default; used only by tests.

/// Deliberate misbehaviours of the reference responder.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Faults {
    /// Grant zero credits in every reply (RFC 8166 3.3.1).
    pub zero_credit: bool,
    /// ERR_VERS with the wrong rdma_xid (RFC 8166 4.5).
    pub err_vers_wrong_xid: bool,
    /// ERR_VERS with rdma_vers_low > rdma_vers_high.
    pub err_vers_bad_range: bool,
    /// Ignore an unsupported version instead of sending ERR_VERS (RFC 8166 4.5.1).
    pub ignore_bad_version: bool,
    /// Never send ERR_CHUNK (RFC 8166 4.5.2).
    pub no_err_chunk: bool,
    /// Answer RDMA_ERROR and RDMA_DONE from a requester instead of discarding them.
    pub answer_error_and_done: bool,
    /// Answer messages shorter than 28 bytes (RFC 8166 4.5: MUST discard).
    pub answer_short_messages: bool,
    /// Process calls whose rdma_xid differs from the RPC xid.
    pub accept_xid_mismatch: bool,
    /// Skip the read-list position rules (alignment, bounds, overlap, split) and answer a
    /// stream that does not reassemble with GARBAGE_ARGS instead of ERR_CHUNK.
    pub lenient_read_list: bool,
    /// Write the XDR pad into write chunks (RFC 8166 3.4.6.2: MUST NOT).
    pub pad_write_chunk: bool,
    /// Report write-chunk lengths rounded up to four.
    pub write_chunk_length_padded: bool,
    /// Send replies inline even when they exceed the requester's receive size.
    pub ignore_reply_chunk: bool,
    /// Use Send With Invalidate even when the requester did not set R.
    pub invalidate_without_r: bool,
    /// Invalidate an R_key that is not from the request.
    pub invalidate_foreign_key: bool,
    /// Advertise private data with version 2 (not RFC 8797's 1).
    pub private_data_bad_version: bool,
    /// Post receives for only half the credits granted, and replenish them slowly
    /// (RFC 8166 3.3.1).
    pub short_receive_window: bool,
    /// Read each read segment rounded up to a multiple of four (past the advertised length).
    pub read_chunk_roundup: bool,
    /// Return an empty write list instead of unused write chunks (RFC 8166 4.3.2.2).
    pub drop_unused_write_chunks: bool,
    /// Refuse position-zero read chunks with ERR_CHUNK.
    pub no_position_zero: bool,
    /// Pull only the first segment of each read chunk.
    pub first_segment_only: bool,
    /// Echo an offered reply chunk with its full lengths in an inline reply.
    pub echo_reply_chunk_lengths: bool,
    /// Without valid requester private data, assume a 4096-byte receive size (RFC 8797 5.1: 1024).
    pub assume_large_peer_receive: bool,
    /// Append four bytes to every ERR_CHUNK.
    pub err_chunk_trailing: bool,
    /// Answer CONF_RDMA with SUCCESS but no config_rdma_reply.
    pub ccp_empty_reply: bool,
    /// Version Two replies say rdma_direction / rdma_optdir CALL (v2-01 4.2.2).
    pub v2_wrong_direction: bool,
    /// Answer Version Two calls with Version One headers (v2-01 5.3).
    pub v2_reply_v1: bool,
    /// ERR_VERS reports only version 1 although Version Two is served.
    pub v2_err_vers_v1_only: bool,
    /// Never send RDMA2_ERR_BAD_HEADER (v2-01 4.2.3).
    pub v2_no_bad_header: bool,
    /// Drop RDMA2_OPTIONAL with an unknown opttype instead of RDMA2_ERR_INVAL_OPTION (v2-01 3.1).
    pub v2_no_inval_option: bool,
    /// Answer RDMA2_ERROR from a requester with RDMA2_ERR_BAD_HEADER.
    pub v2_answer_error: bool,
    /// Answer ROPT_INITXCH and ROPT_UPDXCH (one-way, xcharext-02 2.3) with a ROPT_RESPXCH.
    pub v2_initxch_answered: bool,
    /// Do not apply the requester's characteristics from ROPT_INITXCH / ROPT_UPDXCH.
    pub v2_ignore_xchars: bool,
    /// ROPT_RESPXCH with an rdma_xid other than the ROPT_REQXCH's (xcharext-02 4.3).
    pub v2_respxch_wrong_xid: bool,
    /// ROPT_RESPXCH whose rej subset overlaps done (xcharext-02 4.3: should not).
    pub v2_respxch_overlap: bool,
    /// RDMA2_ERR_BAD_HEADER for unknown characteristic ids (xcharext-02 2.1: no error).
    pub v2_reject_unknown_xchar: bool,
    /// Serve a ROPT_XMTREQ at once, ignoring optxrq_count (rtrext-03 9.4).
    pub v2_no_continuation: bool,
    /// Drop broken transmission groups silently instead of ROPT_REPTERR (rtrext-03 9.5).
    pub v2_no_repterr: bool,
    /// Report every broken transmission group as OPTRERR_BADCONT.
    pub v2_repterr_badcont_only: bool,
}

impl Faults {
    /// Every switch by name, for tests and the hidden `--fault` option.
    pub const NAMES: &'static [&'static str] = &[
        "zero-credit",
        "err-vers-wrong-xid",
        "err-vers-bad-range",
        "ignore-bad-version",
        "no-err-chunk",
        "answer-error-and-done",
        "answer-short-messages",
        "accept-xid-mismatch",
        "lenient-read-list",
        "pad-write-chunk",
        "write-chunk-length-padded",
        "ignore-reply-chunk",
        "invalidate-without-r",
        "invalidate-foreign-key",
        "private-data-bad-version",
        "short-receive-window",
        "read-chunk-roundup",
        "drop-unused-write-chunks",
        "no-position-zero",
        "first-segment-only",
        "echo-reply-chunk-lengths",
        "assume-large-peer-receive",
        "err-chunk-trailing",
        "ccp-empty-reply",
        "v2-wrong-direction",
        "v2-reply-v1",
        "v2-err-vers-v1-only",
        "v2-no-bad-header",
        "v2-no-inval-option",
        "v2-answer-error",
        "v2-initxch-answered",
        "v2-ignore-xchars",
        "v2-respxch-wrong-xid",
        "v2-respxch-overlap",
        "v2-reject-unknown-xchar",
        "v2-no-continuation",
        "v2-no-repterr",
        "v2-repterr-badcont-only",
    ];

    /// Turns one switch on by name; false for an unknown name.
    pub fn set(&mut self, name: &str) -> bool {
        let f = match name {
            "zero-credit" => &mut self.zero_credit,
            "err-vers-wrong-xid" => &mut self.err_vers_wrong_xid,
            "err-vers-bad-range" => &mut self.err_vers_bad_range,
            "ignore-bad-version" => &mut self.ignore_bad_version,
            "no-err-chunk" => &mut self.no_err_chunk,
            "answer-error-and-done" => &mut self.answer_error_and_done,
            "answer-short-messages" => &mut self.answer_short_messages,
            "accept-xid-mismatch" => &mut self.accept_xid_mismatch,
            "lenient-read-list" => &mut self.lenient_read_list,
            "pad-write-chunk" => &mut self.pad_write_chunk,
            "write-chunk-length-padded" => &mut self.write_chunk_length_padded,
            "ignore-reply-chunk" => &mut self.ignore_reply_chunk,
            "invalidate-without-r" => &mut self.invalidate_without_r,
            "invalidate-foreign-key" => &mut self.invalidate_foreign_key,
            "private-data-bad-version" => &mut self.private_data_bad_version,
            "short-receive-window" => &mut self.short_receive_window,
            "read-chunk-roundup" => &mut self.read_chunk_roundup,
            "drop-unused-write-chunks" => &mut self.drop_unused_write_chunks,
            "no-position-zero" => &mut self.no_position_zero,
            "first-segment-only" => &mut self.first_segment_only,
            "echo-reply-chunk-lengths" => &mut self.echo_reply_chunk_lengths,
            "assume-large-peer-receive" => &mut self.assume_large_peer_receive,
            "err-chunk-trailing" => &mut self.err_chunk_trailing,
            "ccp-empty-reply" => &mut self.ccp_empty_reply,
            "v2-wrong-direction" => &mut self.v2_wrong_direction,
            "v2-reply-v1" => &mut self.v2_reply_v1,
            "v2-err-vers-v1-only" => &mut self.v2_err_vers_v1_only,
            "v2-no-bad-header" => &mut self.v2_no_bad_header,
            "v2-no-inval-option" => &mut self.v2_no_inval_option,
            "v2-answer-error" => &mut self.v2_answer_error,
            "v2-initxch-answered" => &mut self.v2_initxch_answered,
            "v2-ignore-xchars" => &mut self.v2_ignore_xchars,
            "v2-respxch-wrong-xid" => &mut self.v2_respxch_wrong_xid,
            "v2-respxch-overlap" => &mut self.v2_respxch_overlap,
            "v2-reject-unknown-xchar" => &mut self.v2_reject_unknown_xchar,
            "v2-no-continuation" => &mut self.v2_no_continuation,
            "v2-no-repterr" => &mut self.v2_no_repterr,
            "v2-repterr-badcont-only" => &mut self.v2_repterr_badcont_only,
            _ => return false,
        };
        *f = true;
        true
    }

    /// A value with exactly the named switch on.
    pub fn only(name: &str) -> Faults {
        let mut f = Faults::default();
        assert!(f.set(name), "unknown fault {name}");
        f
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
}
