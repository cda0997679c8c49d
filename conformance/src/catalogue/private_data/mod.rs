//! RDMA-CM private data (RFC 8797): the peer's message parsed and validated, our advertised
//! receive size honoured, Send With Invalidate only when both sides set R and only for an
//! R_key of the request.
//!
//! The scenarios live by concern: [`format`] (the message), [`sizes`] (the receive size and
//! the 1024-byte fallback), [`invalidation`] (the R bit); the table of checks is here.

mod format;
mod invalidation;
mod sizes;

use rpcrdma_codec::check::KeyWord;

use crate::engine::{Check, CheckInfo, Outcome};
use format::*;
pub(crate) use invalidation::unobservable;
use invalidation::*;
use sizes::*;

pub static CHECKS: [Check; 12] = [
    Check {
        info: CheckInfo {
            id: "rfc8797/4/private-data-valid",
            requirement: "Format Identifier: ... the value of this field is always 0xf6ab0e18 ... Reserved: This 7-bit field is unused. Senders MUST set these bits to zero, and receivers MUST ignore their value.",
            key_word: KeyWord::Must,
            acceptable: "RFC 8797 private data of version 1 with the reserved bits zero; no private data at all is unsupported",
            rationale: "Without valid private data both sides fall back to 1024-byte inline thresholds.",
            groups: &["private-data", "cm"],
            broken_by: &[("private-data-bad-version", Outcome::Fail)],
        },
        run: private_data_valid,
    },
    Check {
        info: CheckInfo {
            id: "rfc8797/4.1/no-invalidate-without-r",
            requirement: "When either peer on a connection clears this flag, the responder MUST use only RDMA Send when transmitting RPC Replies.",
            key_word: KeyWord::Must,
            acceptable: "a plain Send when we did not set R",
            rationale: "Invalidating memory of a requester that does not expect it breaks its registration cache.",
            groups: &["private-data", "invalidation"],
            broken_by: &[("invalidate-without-r", Outcome::Fail)],
        },
        run: no_invalidate_without_r,
    },
    Check {
        info: CheckInfo {
            id: "rfc8797/4.1/invalidate-request-rkey",
            requirement: "When both connection peers have set this bit flag in their CM Private Data, the responder MAY use RDMA Send with Invalidate operations when transmitting RPC Replies. Each RDMA Send with Invalidate MUST invalidate an STag associated only with the Transaction ID (XID) in the rdma_xid field of the RPC-over-RDMA Transport Header it carries. When either peer on a connection clears this flag, the responder MUST use only RDMA Send when transmitting RPC Replies.",
            key_word: KeyWord::Must,
            acceptable: "we set R; for each of two READs in turn, a plain Send, or, when the responder's own private data also sets R, Send With Invalidate of the R_key that READ advertised",
            rationale: "Invalidating any other R_key tears down memory another RPC is using; a responder that clears R in its own private data tells the requester no invalidation will happen.",
            groups: &["private-data", "invalidation"],
            broken_by: &[
                ("invalidate-foreign-key", Outcome::Fail),
                ("invalidate-despite-own-r0", Outcome::Fail),
                ("invalidate-previous-key", Outcome::Fail),
            ],
        },
        run: invalidate_request_rkey,
    },
    Check {
        info: CheckInfo {
            id: "rfc8797/3.1/receive-size-honoured",
            requirement: "To convey an RPC message larger than the receiver's inline threshold without risking receive failure, a sender must use explicit RDMA data transfer operations, which are more expensive than an RDMA Send. ... (4.2) The server uses the smaller of its own send size and the client's reported receive size as the server-to-client inline threshold. ... (RFC 8166 3.5.3) If there are no DDP-eligible data items in the Payload stream, or the Payload stream is still too large after it has been reduced, the RDMA transport MUST use RDMA Read or Write operations to convey the Payload stream itself.",
            key_word: KeyWord::Must,
            acceptable: "we advertise 2048 bytes: a ~3100-byte READ reply without chunks comes as any reply that fits 2048 bytes (ERR_CHUNK, an RPC error, or a short read); a ~1600-byte one comes inline (an error instead is pass-lax: the peer keeps the 1024-byte default, not RFC 8797 4.2's threshold); unsupported when the peer's own send size is 2048 or less",
            rationale: "A Send longer than the posted receive kills the connection (local length error); a size above the 1024-byte default tells a peer that honours it from one that ignores private data.",
            groups: &["private-data", "inline"],
            broken_by: &[("ignore-reply-chunk", Outcome::Fail), ("ignore-peer-receive-size", Outcome::PassLax)],
        },
        run: receive_size_honoured,
    },
    Check {
        info: CheckInfo {
            id: "rfc8797/4/reserved-bits-ignored",
            requirement: "Reserved: This 7-bit field is unused. Senders MUST set these bits to zero, and receivers MUST ignore their value.",
            key_word: KeyWord::Must,
            acceptable: "with the reserved bits of our private data set, the peer uses our receive size and R bit as it does when they are clear; unsupported when it uses neither",
            rationale: "A receiver that rejects private data with reserved bits set cannot interoperate with a future format that assigns them.",
            groups: &["private-data", "cm"],
            broken_by: &[("private-data-reserved-rejected", Outcome::Fail)],
        },
        run: reserved_bits_ignored,
    },
    Check {
        info: CheckInfo {
            id: "rfc8797/5.2/private-data-at-offset",
            requirement: "As part of connection establishment, the buffer containing the received Private Data is searched for the Format Identifier word. The offset of the Format Identifier is not restricted to any alignment. If the RPC-over-RDMA version 1 CM Private Data Format Identifier is not present, an RPC-over-RDMA version 1 receiver MUST behave as if no RPC-over-RDMA version 1 CM Private Data has been provided.",
            key_word: KeyWord::Must,
            acceptable: "with our private data at offset 5 (after other data), the peer uses our receive size and R bit as it does at offset 0; unsupported when it uses neither",
            rationale: "Other layers (MPAv2, RFC 6581) put their own private data first; a receiver that looks only at offset 0 loses the sizes and the R bit.",
            groups: &["private-data", "cm"],
            broken_by: &[("private-data-offset-zero-only", Outcome::Fail)],
        },
        run: private_data_at_offset,
    },
    Check {
        info: CheckInfo {
            id: "rfc8797/4/settings-change-on-reconnect",
            requirement: "The transport properties exchanged via this mechanism are fixed for the life of the connection. Each new connection presents an opportunity for a fresh exchange. An implementation of the extension described in this document MUST be prepared for the settings to change upon a reconnection.",
            key_word: KeyWord::Must,
            acceptable: "after connections advertising 1024 and then 4096 bytes, a third advertising 1024 gets no Send over 1024 bytes; unsupported when the first already gets more",
            rationale: "A responder that keeps the sizes of an earlier connection overruns the receive buffers of a requester that restarted with smaller ones.",
            groups: &["private-data", "inline"],
            broken_by: &[("previous-private-data", Outcome::Fail)],
        },
        run: settings_change_on_reconnect,
    },
    Check {
        info: CheckInfo {
            id: "rfc8797/5.1/no-private-data",
            requirement: "When a peer does not receive a CM Private Data message that conforms to Section 4, it needs to act as if the remote peer supports only the default RPC-over-RDMA version 1 settings, as defined in [RFC8166]. In other words, the peer MUST behave as if a Private Data message was received in which (1) bit 15 of the Flags field is zero and (2) both Size fields contain the value zero.",
            key_word: KeyWord::Must,
            acceptable: "no Send over 1024 bytes to a requester that sent no private data",
            rationale: "Pre-RFC 8797 requesters send nothing; assuming larger buffers kills their connections.",
            groups: &["private-data", "inline"],
            broken_by: &[("assume-large-peer-receive", Outcome::Fail)],
        },
        run: no_private_data,
    },
    Check {
        info: CheckInfo {
            id: "rfc8797/5.2/bad-format-identifier",
            requirement: "If the RPC-over-RDMA version 1 CM Private Data Format Identifier is not present, an RPC-over-RDMA version 1 receiver MUST behave as if no RPC-over-RDMA version 1 CM Private Data has been provided.",
            key_word: KeyWord::Must,
            acceptable: "no Send over 1024 bytes when our private data has a wrong identifier",
            rationale: "Another protocol's private data must not be read as RFC 8797 sizes.",
            groups: &["private-data", "inline"],
            broken_by: &[("assume-large-peer-receive", Outcome::Fail)],
        },
        run: bad_format_identifier,
    },
    Check {
        info: CheckInfo {
            id: "rfc8797/5.1/absent-as-zero-fields",
            requirement: "In other words, the peer MUST behave as if a Private Data message was received in which (1) bit 15 of the Flags field is zero and (2) both Size fields contain the value zero.",
            key_word: KeyWord::Must,
            acceptable: "without our private data: a plain Send for a READ offering a write chunk, and no Send over 1024 bytes",
            rationale: "A requester that sent no private data expects neither Send With Invalidate nor Sends larger than 1024 bytes.",
            groups: &["private-data", "inline", "invalidation"],
            broken_by: &[
                ("assume-peer-remote-invalidation", Outcome::Fail),
                ("assume-large-peer-receive", Outcome::Fail),
            ],
        },
        run: absent_as_zero_fields,
    },
    Check {
        info: CheckInfo {
            id: "rfc8797/5.2/bad-identifier-as-absent",
            requirement: "If the RPC-over-RDMA version 1 CM Private Data Format Identifier is not present, an RPC-over-RDMA version 1 receiver MUST behave as if no RPC-over-RDMA version 1 CM Private Data has been provided.",
            key_word: KeyWord::Must,
            acceptable: "with our private data (R set) under a wrong format identifier: a plain Send for a READ offering a write chunk, and no Send over 1024 bytes",
            rationale: "Another protocol's private data must not be read as RFC 8797 sizes or as the R bit.",
            groups: &["private-data", "inline", "invalidation"],
            broken_by: &[
                ("assume-peer-remote-invalidation", Outcome::Fail),
                ("assume-large-peer-receive", Outcome::Fail),
            ],
        },
        run: bad_identifier_as_absent,
    },
    Check {
        info: CheckInfo {
            id: "rfc8797/4/reserved-bits-both-ways",
            requirement: "Reserved: This 7-bit field is unused. Senders MUST set these bits to zero, and receivers MUST ignore their value.",
            key_word: KeyWord::Must,
            acceptable: "the peer's own reserved bits zero (or no private data of its own), and our private data with all reserved bits set used as it is with them clear; unsupported when the peer uses neither our receive size nor our R bit",
            rationale: "Both halves make the bits assignable later: a sender that sets them, or a receiver that rejects them, breaks a future format.",
            groups: &["private-data", "cm"],
            broken_by: &[
                ("private-data-reserved-set", Outcome::Fail),
                ("private-data-reserved-rejected", Outcome::Fail),
            ],
        },
        run: reserved_bits_both_ways,
    },
];
