//! RDMA-CM private data (RFC 8797): the peer's message parsed and validated, our advertised
//! receive size honoured, Send With Invalidate only when both sides set R and only for an
//! R_key of the request.
//!
//! The scenarios live by concern: [`format`] (the message), [`sizes`] (the receive size and
//! the 1024-byte fallback), [`invalidation`] (the R bit); the table of checks is here.

mod format;
mod invalidation;
mod sizes;

use crate::engine::{Check, CheckInfo, Outcome};
use format::*;
pub(crate) use invalidation::unobservable;
use invalidation::*;
use sizes::*;

pub static CHECKS: [Check; 12] = [
    Check {
        info: CheckInfo {
            id: "rfc8797/4/private-data-valid",
            judges: &["~rfc8797/1#1", "~rfc8797/4#2"],
            acceptable: "RFC 8797 private data of version 1 with the reserved bits zero; no private data at all is unsupported",
            rationale: "Without valid private data both sides fall back to 1024-byte inline thresholds.",
            groups: &["private-data", "cm"],
            broken_by: &[("private-data-bad-version", Outcome::Fail)],
            precondition: None,
        },
        run: private_data_valid,
    },
    Check {
        info: CheckInfo {
            id: "rfc8797/4.1/no-invalidate-without-r",
            judges: &["rfc8797/3.2#2", "rfc8797/4.1#3"],
            acceptable: "a plain Send when we did not set R",
            rationale: "Invalidating memory of a requester that does not expect it breaks its registration cache.",
            groups: &["private-data", "invalidation"],
            broken_by: &[("invalidate-without-r", Outcome::Fail)],
            precondition: None,
        },
        run: no_invalidate_without_r,
    },
    Check {
        info: CheckInfo {
            id: "rfc8797/4.1/invalidate-request-rkey",
            judges: &["rfc8797/3.2#1", "~rfc8797/4.1#1", "rfc8797/4.1#2", "rfc8797/4.1#3"],
            acceptable: "we set R; for each of two READs in turn, a plain Send, or, when the responder's own private data also sets R, Send With Invalidate of the R_key that READ advertised",
            rationale: "Invalidating any other R_key tears down memory another RPC is using; a responder that clears R in its own private data tells the requester no invalidation will happen.",
            groups: &["private-data", "invalidation"],
            broken_by: &[
                ("invalidate-foreign-key", Outcome::Fail),
                ("invalidate-despite-own-r0", Outcome::Fail),
                ("invalidate-previous-key", Outcome::Fail),
            ],
            precondition: None,
        },
        run: invalidate_request_rkey,
    },
    Check {
        info: CheckInfo {
            id: "rfc8797/3.1/receive-size-honoured",
            judges: &["rfc8797/3.1#1"],
            acceptable: "we advertise 2048 bytes: a ~3100-byte READ reply without chunks comes as any reply that fits 2048 bytes (ERR_CHUNK, an RPC error, or a short read); a ~1600-byte one comes inline (an error instead is pass-lax: the peer keeps the 1024-byte default, not RFC 8797 4.2's threshold); unsupported when the peer's own send size is 2048 or less",
            rationale: "A Send longer than the posted receive kills the connection (local length error); a size above the 1024-byte default tells a peer that honours it from one that ignores private data.",
            groups: &["private-data", "inline"],
            broken_by: &[("ignore-reply-chunk", Outcome::Fail), ("ignore-peer-receive-size", Outcome::PassLax)],
            precondition: None,
        },
        run: receive_size_honoured,
    },
    Check {
        info: CheckInfo {
            id: "rfc8797/4/reserved-bits-ignored",
            judges: &["~rfc8797/4#2"],
            acceptable: "with the reserved bits of our private data set, the peer uses our receive size and R bit as it does when they are clear; unsupported when it uses neither",
            rationale: "A receiver that rejects private data with reserved bits set cannot interoperate with a future format that assigns them.",
            groups: &["private-data", "cm"],
            broken_by: &[("private-data-reserved-rejected", Outcome::Fail)],
            precondition: None,
        },
        run: reserved_bits_ignored,
    },
    Check {
        info: CheckInfo {
            id: "rfc8797/5.2/private-data-at-offset",
            judges: &["~rfc8797/5.2#1"],
            acceptable: "with our private data at offset 5 (after other data), the peer uses our receive size and R bit as it does at offset 0; unsupported when it uses neither",
            rationale: "Other layers (MPAv2, RFC 6581) put their own private data first; a receiver that looks only at offset 0 loses the sizes and the R bit.",
            groups: &["private-data", "cm"],
            broken_by: &[("private-data-offset-zero-only", Outcome::Fail)],
            precondition: None,
        },
        run: private_data_at_offset,
    },
    Check {
        info: CheckInfo {
            id: "rfc8797/4/settings-change-on-reconnect",
            judges: &["rfc8797/4#1"],
            acceptable: "after connections advertising 1024 and then 4096 bytes, a third advertising 1024 gets no Send over 1024 bytes; unsupported when the first already gets more",
            rationale: "A responder that keeps the sizes of an earlier connection overruns the receive buffers of a requester that restarted with smaller ones.",
            groups: &["private-data", "inline"],
            broken_by: &[("previous-private-data", Outcome::Fail)],
            precondition: None,
        },
        run: settings_change_on_reconnect,
    },
    Check {
        info: CheckInfo {
            id: "rfc8797/5.1/no-private-data",
            judges: &["rfc8166/3.3.3#3", "~rfc8797/5.1#1"],
            acceptable: "no Send over 1024 bytes to a requester that sent no private data",
            rationale: "Pre-RFC 8797 requesters send nothing; assuming larger buffers kills their connections.",
            groups: &["private-data", "inline"],
            broken_by: &[("assume-large-peer-receive", Outcome::Fail)],
            precondition: None,
        },
        run: no_private_data,
    },
    Check {
        info: CheckInfo {
            id: "rfc8797/5.2/bad-format-identifier",
            judges: &["~rfc8797/5.2#1"],
            acceptable: "no Send over 1024 bytes when our private data has a wrong identifier",
            rationale: "Another protocol's private data must not be read as RFC 8797 sizes.",
            groups: &["private-data", "inline"],
            broken_by: &[("assume-large-peer-receive", Outcome::Fail)],
            precondition: None,
        },
        run: bad_format_identifier,
    },
    Check {
        info: CheckInfo {
            id: "rfc8797/5.1/absent-as-zero-fields",
            judges: &["rfc8797/5.1#1"],
            acceptable: "without our private data: a plain Send for a READ offering a write chunk, and no Send over 1024 bytes",
            rationale: "A requester that sent no private data expects neither Send With Invalidate nor Sends larger than 1024 bytes.",
            groups: &["private-data", "inline", "invalidation"],
            broken_by: &[
                ("assume-peer-remote-invalidation", Outcome::Fail),
                ("assume-large-peer-receive", Outcome::Fail),
            ],
            precondition: None,
        },
        run: absent_as_zero_fields,
    },
    Check {
        info: CheckInfo {
            id: "rfc8797/5.2/bad-identifier-as-absent",
            judges: &["rfc8797/5.2#1"],
            acceptable: "with our private data (R set) under a wrong format identifier: a plain Send for a READ offering a write chunk, and no Send over 1024 bytes",
            rationale: "Another protocol's private data must not be read as RFC 8797 sizes or as the R bit.",
            groups: &["private-data", "inline", "invalidation"],
            broken_by: &[
                ("assume-peer-remote-invalidation", Outcome::Fail),
                ("assume-large-peer-receive", Outcome::Fail),
            ],
            precondition: None,
        },
        run: bad_identifier_as_absent,
    },
    Check {
        info: CheckInfo {
            id: "rfc8797/4/reserved-bits-both-ways",
            judges: &["rfc8797/4#2"],
            acceptable: "the peer's own reserved bits zero (or no private data of its own), and our private data with all reserved bits set used as it is with them clear; unsupported when the peer uses neither our receive size nor our R bit",
            rationale: "Both halves make the bits assignable later: a sender that sets them, or a receiver that rejects them, breaks a future format.",
            groups: &["private-data", "cm"],
            broken_by: &[
                ("private-data-reserved-set", Outcome::Fail),
                ("private-data-reserved-rejected", Outcome::Fail),
            ],
            precondition: None,
        },
        run: reserved_bits_both_ways,
    },
];
