//! Active client checks on the responder's CM private data (RFC 8797): the responder accepts
//! with none, with a wrong format identifier, with reserved bits set, or with its private data
//! on a first connection and none on the next, and the requester's calls show which inline
//! threshold it took: without usable private data, 1024 bytes (RFC 8797 5.1, 5.2; RFC 8166
//! 3.3.3), and a call larger than that sent inline shows it used our sizes.

use rpcrdma_codec::private_data::{self, Lookup};
use rpcrdma_codec::v1::Proc;
use rpcrdma_peers::responder::Scenario;

use super::calls::plural;
use super::served::{ClientCheck, Seen, Served};
use crate::engine::{CheckInfo, Judged, Outcome, Verdict};

/// RFC 8166 3.3.3: the inline threshold assumed without a mechanism to learn it.
const DEFAULT_THRESHOLD: usize = 1024;

/// What gives a requester the chance to send beyond the 1024-byte default threshold: a call
/// larger than that in all ([`within_default`]).
const LARGE_CALL: &str =
    "a call over 1024 bytes in all (its Send and its read chunks): the workload writes more than 1024 bytes";

/// The calls of `served`, in order, with the size of each Send.
fn sends<'a>(served: &'a [&'a Served<'a>]) -> impl Iterator<Item = (usize, &'a crate::frame::Frame)> {
    served.iter().flat_map(|s| {
        s.events.iter().filter_map(|(_, e)| match e {
            Seen::Call(f) => Some((f.bytes().len(), f)),
            _ => None,
        })
    })
}

/// No Send of the requester over 1024 bytes on `served` (connections where we gave no usable
/// private data). Judged only when some call was over 1024 bytes in all (its Send and its read
/// chunks): with none, a requester assuming a larger threshold would have sent the same.
fn within_default(served: &[&Served<'_>], want: &str) -> Judged {
    let (mut n, mut largest, mut whole) = (0usize, 0usize, 0u64);
    for (len, f) in sends(served) {
        if len > DEFAULT_THRESHOLD {
            let got = format!("a {len}-byte Send where the inline threshold is {DEFAULT_THRESHOLD} bytes: {f}");
            return Err(Verdict::fail(want, got));
        }
        n += 1;
        largest = largest.max(len);
        let reads =
            f.v1().and_then(|h| h.body.chunks()).map_or(0, |c| c.reads.iter().map(|r| r.target.length as u64).sum());
        whole = whole.max(len as u64 + reads);
    }
    if n == 0 {
        return Err(Verdict::unsupported(want, "no call was observed"));
    }
    if whole <= DEFAULT_THRESHOLD as u64 {
        let got = format!("{n} {}, none over {DEFAULT_THRESHOLD} bytes in all (the largest {whole}): the requester had nothing it could have sent inline beyond the threshold", plural(n, "call"));
        return Err(Verdict::inconclusive(want, got));
    }
    let got =
        format!("{n} {}, the largest Send {largest} bytes (the largest call {whole} bytes in all)", plural(n, "call"));
    Ok(Verdict::pass(want, got))
}

fn no_private_data(served: &[Served<'_>]) -> Judged {
    let want = "with no private data from the responder, no Send over 1024 bytes";
    within_default(&served.iter().collect::<Vec<_>>(), want)
}

fn bad_identifier(served: &[Served<'_>]) -> Judged {
    let want = "with private data lacking the format identifier, no Send over 1024 bytes";
    within_default(&served.iter().collect::<Vec<_>>(), want)
}

/// After a reconnection whose private data gave no sizes, the 1024-byte default, whatever the
/// connection before allowed.
fn settings_on_reconnect(served: &[Served<'_>]) -> Judged {
    let want = "on a new connection accepted without private data, no Send over 1024 bytes (the earlier connection's 4096 forgotten)";
    let later: Vec<&Served<'_>> = served.iter().filter(|s| s.conn.responder_private_data.is_empty()).collect();
    if later.is_empty() {
        return Err(Verdict::inconclusive(want, "the requester did not reconnect after we closed the connection"));
    }
    within_default(&later, want)
}

/// Our reserved bits ignored (a call larger than 1024 bytes inline shows our sizes were used;
/// a connection closed before any call shows them refused), and the requester's own zero.
fn reserved_bits_ignored(served: &[Served<'_>]) -> Judged {
    let want =
        "with our reserved bits set, our sizes used as if they were clear, and the requester's own reserved bits zero";
    for (i, s) in served.iter().enumerate() {
        if let Ok(Lookup::Found { data, .. }) = private_data::find(&s.conn.private_data, &s.profile) {
            if data.reserved != 0 {
                let got = format!("connection {i}: the requester's own reserved bits {:#04x}", data.reserved);
                return Err(Verdict::fail(want, got));
            }
        }
        let called = s.events.iter().any(|(_, e)| matches!(e, Seen::Call(_)));
        if !called && s.events.iter().any(|(_, e)| matches!(e, Seen::Closed)) {
            let got = format!("connection {i} was closed before any call: our private data refused");
            return Err(Verdict::fail(want, got));
        }
    }
    let all: Vec<&Served<'_>> = served.iter().collect();
    let inline = sends(&all)
        .filter(|(_, f)| f.fixed().is_some_and(|h| Proc(h.proc_) == Proc::RDMA_MSG))
        .map(|(len, _)| len)
        .max();
    match inline {
        None => Err(Verdict::unsupported(want, "no call was observed")),
        Some(len) if len > DEFAULT_THRESHOLD => {
            Ok(Verdict::pass(want, format!("a {len}-byte call sent inline: our receive size used")))
        }
        Some(len) => Err(Verdict::unsupported(
            want,
            format!("no call over {DEFAULT_THRESHOLD} bytes was sent inline (the largest {len}): whether our sizes were used cannot be told"),
        )),
    }
}

/// Our private data after 5 octets of another layer's: found and used (a call over 1024 bytes
/// inline), or not found (1024 assumed: a call over 1024 bytes reduced or long), pass-lax: the
/// search at any offset is described without a key word.
fn identifier_at_offset(served: &[Served<'_>]) -> Judged {
    let want = "our private data found after 5 octets of other data, and its sizes used";
    let all: Vec<&Served<'_>> = served.iter().collect();
    let (mut inline, mut chunked) = (0usize, 0u64);
    for (len, f) in sends(&all) {
        let Some(c) = f.v1().and_then(|h| h.body.chunks()) else { continue };
        let reads: u64 = c.reads.iter().map(|r| r.target.length as u64).sum();
        if c.reads.is_empty() {
            inline = inline.max(len);
        } else if len as u64 + reads > DEFAULT_THRESHOLD as u64 && len as u64 + reads <= 4096 {
            chunked = chunked.max(len as u64 + reads);
        }
    }
    if inline > DEFAULT_THRESHOLD {
        return Ok(Verdict::pass(want, format!("a {inline}-byte call sent inline: our private data found and used")));
    }
    if chunked > 0 {
        let got = format!("a call of {chunked} bytes in all went by read chunk though it fit our 4096-byte receives: our private data not found, 1024 bytes assumed");
        return Ok(Verdict::lax(want, got));
    }
    Err(Verdict::unsupported(
        want,
        "no call over 1024 bytes was sent: whether our private data was found cannot be told",
    ))
}

pub static CHECKS: [ClientCheck; 5] = [
    ClientCheck {
        info: CheckInfo {
            id: "rfc8797/5.1/requester-no-private-data",
            judges: &["rfc8166/3.3.3#3", "rfc8797/5.1#1"],
            acceptable: "on connections we accept without private data, no Send over 1024 bytes",
            rationale: "A responder that sends no private data may post 1024-byte receives: a larger Send fails, and the connection with it.",
            groups: &["client", "scenario", "private-data", "inline"],
            broken_by: &[("assume-large-responder-receive", Outcome::Fail)],
            precondition: Some(LARGE_CALL),
        },
        scenario: Some(Scenario::CmNoPrivateData),
        judge: no_private_data,
    },
    ClientCheck {
        info: CheckInfo {
            id: "rfc8797/5.2/requester-bad-identifier",
            judges: &["rfc8797/5.2#1"],
            acceptable: "on connections whose private data has the format identifier one bit off, no Send over 1024 bytes",
            rationale: "Private data without the identifier belongs to another layer: sizes read from it are noise.",
            groups: &["client", "scenario", "private-data", "inline"],
            broken_by: &[("assume-large-responder-receive", Outcome::Fail)],
            precondition: Some(LARGE_CALL),
        },
        scenario: Some(Scenario::CmBadIdentifier),
        judge: bad_identifier,
    },
    ClientCheck {
        info: CheckInfo {
            id: "rfc8797/4/requester-ignores-reserved-bits",
            judges: &["rfc8797/4#2"],
            acceptable: "with our reserved bits all set, the connection used (a call over 1024 bytes sent inline shows our receive size used), and the requester's own reserved bits zero; no such call is unsupported",
            rationale: "Reserved bits are for a later format: a receiver that refuses them, or drops the sizes beside them, cannot talk to the next implementation.",
            groups: &["client", "scenario", "private-data"],
            broken_by: &[("reject-reserved-bits", Outcome::Fail), ("own-reserved-bits", Outcome::Fail)],
            precondition: None,
        },
        scenario: Some(Scenario::CmReservedBits),
        judge: reserved_bits_ignored,
    },
    ClientCheck {
        info: CheckInfo {
            id: "rfc8797/4/requester-settings-on-reconnect",
            judges: &["rfc8797/4#1"],
            acceptable: "after we close a connection accepted with a 4096-byte receive size, the next, accepted without private data, carries no Send over 1024 bytes",
            rationale: "A responder restarted with other settings, or another server behind the same address, may post smaller receives than the connection before.",
            groups: &["client", "scenario", "private-data", "inline"],
            broken_by: &[("keep-first-thresholds", Outcome::Fail)],
            precondition: Some("a new connection after we closed the one the scenario's call came on, with a call over 1024 bytes in all on it (its Send and its read chunks)"),
        },
        scenario: Some(Scenario::CmChangeOnReconnect),
        judge: settings_on_reconnect,
    },
    ClientCheck {
        info: CheckInfo {
            id: "rfc8797/5.2/requester-finds-identifier-at-offset",
            judges: &["~rfc8797/5.2#1"],
            acceptable: "our private data after 5 octets of other data found: a call over 1024 bytes sent inline; not found (1024 assumed) is pass-lax, the search being described without a key word",
            rationale: "Other layers (MPA on iWARP) put private data of their own first; a requester that looks at offset 0 only loses our sizes, safely but needlessly.",
            groups: &["client", "scenario", "private-data", "inline"],
            broken_by: &[("private-data-offset-zero-only", Outcome::PassLax)],
            precondition: None,
        },
        scenario: Some(Scenario::CmIdentifierAtOffset),
        judge: identifier_at_offset,
    },
];
