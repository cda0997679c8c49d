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
    /// Post receives for only half the credits granted (RFC 8166 3.3.1).
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
