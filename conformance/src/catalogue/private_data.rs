//! RDMA-CM private data (RFC 8797): the peer's message parsed and validated, our advertised
//! receive size honoured, Send With Invalidate only when both sides set R and only for an
//! R_key of the request.

use rpcrdma_codec::check::KeyWord;
use rpcrdma_codec::private_data::{self, Lookup};
use rpcrdma_codec::rpc::AcceptStat;

use rpcrdma_peers::proto::nfs3::{self, NFSPROC3_READ};
use rpcrdma_peers::transport::Access;

use super::{lookup, start};
use crate::engine::{expect, Check, CheckInfo, Ctx, Judged, NoMessage, OrFail, Outcome, Received, Verdict};
use crate::frame::Frame;

fn private_data_valid(ctx: &mut Ctx) -> Judged {
    start(ctx)?;
    let want = "RFC 8797 private data: format identifier 0xf6ab0e18, version 1, reserved bits zero";
    let raw = ctx.peer_private_data().to_vec();
    match private_data::find(&raw, &rpcrdma_codec::Profile::default()) {
        Ok(Lookup::UnrecognisedVersion { at, version }) => {
            Err(Verdict::fail(want, format!("version {version} at offset {at}")))
        }
        Ok(Lookup::Found { at, data: pd }) => {
            let (send, receive, r) = (pd.send_size(), pd.receive_size(), pd.remote_invalidation as u8);
            let summary = format!("found at offset {at}: send size {send}, receive size {receive}, R {r}");
            if pd.reserved != 0 {
                // Senders MUST zero them; receivers MUST ignore them: a sender defect.
                return Err(Verdict::fail(want, format!("{summary}; reserved bits {:#04x} set", pd.reserved)));
            }
            Ok(Verdict::pass(want, summary))
        }
        Ok(Lookup::Absent) => Err(Verdict::unsupported(want, "no RFC 8797 private data (the peer predates RFC 8797)")),
        Err(e) => Err(Verdict::fail(want, format!("private data that does not decode: {e}"))),
    }
}

/// READ of `five` into a write chunk, connected with the given R bit; the reply and the
/// chunk's R_key.
fn read_with_r(ctx: &mut Ctx, r_bit: bool) -> Result<(Frame, u32), Verdict> {
    let pd = ctx.private_data(r_bit);
    ctx.connect_with(&pd).or_fail("a connection")?;
    let fh = lookup(ctx, nfs3::FILE_FIVE)?;
    let region = ctx.register(64, Access::WRITE);
    let mut call = ctx.nfs3(NFSPROC3_READ, nfs3::read_args(&fh, 0, 64));
    call.writes = vec![vec![region.segment()]];
    let got = ctx.call(&call.msg());
    let (f, _) = expect::rpc_accepted(&got, call.xid, AcceptStat::Success).or_fail("a READ3 reply")?;
    Ok((f.clone(), region.handle))
}

fn no_invalidate_without_r(ctx: &mut Ctx) -> Judged {
    let want = "a plain Send (we did not set R, so Send With Invalidate is not allowed)";
    match read_with_r(ctx, false)?.0.invalidated {
        None => Ok(Verdict::pass(want, "plain Send")),
        Some(h) => Err(Verdict::fail(want, format!("Send With Invalidate of {h:#x}"))),
    }
}

fn invalidate_request_rkey(ctx: &mut Ctx) -> Judged {
    let want = "a plain Send, or Send With Invalidate of the R_key this request advertised";
    match read_with_r(ctx, true)? {
        (Frame { invalidated: None, .. }, _) => Ok(Verdict::pass(want, "plain Send (invalidation is optional)")),
        (Frame { invalidated: Some(h), .. }, key) if h == key => {
            Ok(Verdict::pass(want, format!("Send With Invalidate of the request's R_key {h:#x}")))
        }
        (Frame { invalidated: Some(h), .. }, key) => {
            Err(Verdict::fail(want, format!("invalidated {h:#x}, not the request's {key:#x}")))
        }
    }
}

fn receive_size_honoured(ctx: &mut Ctx) -> Judged {
    ctx.options.receive_size = 1024;
    start(ctx)?;
    let fh = lookup(ctx, nfs3::FILE_BIG)?;
    // 2000 bytes of READ data inline would need a ~2100-byte Send; we offer no chunks.
    let call = ctx.nfs3(NFSPROC3_READ, nfs3::read_args(&fh, 0, 2000));
    let want = "no Send larger than our advertised 1024-byte receive size (an error reply or a short read instead)";
    let got = ctx.call(&call.msg());
    match &got {
        Received::Message(f) if f.len() <= 1024 => {
            Ok(Verdict::pass(want, format!("a {}-byte reply: {}", f.len(), got.describe())))
        }
        Received::Nothing(NoMessage::RecvFailed(s)) => {
            Err(Verdict::fail(want, format!("our 1024-byte receive failed ({}): the peer sent more", s.name())))
        }
        other => Err(Verdict::fail(want, other.describe())),
    }
}

/// Connects with `private_data` and checks the peer falls back to 1024-byte thresholds:
/// a 2000-byte READ without chunks must not come back in one Send over 1024 bytes.
fn falls_back_to_1024(ctx: &mut Ctx, private_data: &[u8]) -> Judged {
    ctx.options.receive_size = 1024;
    ctx.connect_with(private_data).or_fail("a connection")?;
    let fh = lookup(ctx, nfs3::FILE_BIG)?;
    let call = ctx.nfs3(NFSPROC3_READ, nfs3::read_args(&fh, 0, 2000));
    let want = "the peer assumes 1024-byte inline thresholds: no Send over 1024 bytes";
    match ctx.call(&call.msg()) {
        Received::Message(f) if f.len() <= 1024 => Ok(Verdict::pass(want, format!("a {}-byte reply", f.len()))),
        Received::Nothing(NoMessage::RecvFailed(s)) => {
            let got = format!("our 1024-byte receive failed ({}): the peer assumed a larger size", s.name());
            Err(Verdict::fail(want, got))
        }
        other => Err(Verdict::fail(want, other.describe())),
    }
}

fn no_private_data(ctx: &mut Ctx) -> Judged {
    falls_back_to_1024(ctx, &[])
}

fn bad_format_identifier(ctx: &mut Ctx) -> Judged {
    // Our usual private data with the format identifier's last octet changed (RFC 8797 4).
    let mut pd = ctx.private_data(true);
    pd[3] ^= 0xff;
    falls_back_to_1024(ctx, &pd)
}

pub static CHECKS: [Check; 6] = [
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
            id: "rfc8797/4/no-invalidate-without-r",
            requirement: "A responder therefore must not employ remote invalidation unless it is aware of support for it in its own RDMA stack, and on the requester.",
            key_word: KeyWord::MustNot,
            acceptable: "a plain Send when we did not set R",
            rationale: "Invalidating memory of a requester that does not expect it breaks its registration cache.",
            groups: &["private-data", "invalidation"],
            broken_by: &[("invalidate-without-r", Outcome::Fail)],
        },
        run: no_invalidate_without_r,
    },
    Check {
        info: CheckInfo {
            id: "rfc8797/4/invalidate-request-rkey",
            requirement: "R: This 1-bit field indicates that the sender supports remote invalidation. ... On one connection ... an RPC-over-RDMA requester can expose a mixture of STags that may be invalidated remotely and some that must not be.",
            key_word: KeyWord::May,
            acceptable: "a plain Send, or Send With Invalidate of an R_key advertised by that request",
            rationale: "Invalidating any other R_key tears down memory another RPC is using.",
            groups: &["private-data", "invalidation"],
            broken_by: &[("invalidate-foreign-key", Outcome::Fail)],
        },
        run: invalidate_request_rkey,
    },
    Check {
        info: CheckInfo {
            id: "rfc8797/4.2/receive-size-honoured",
            requirement: "If an incoming RDMA message exceeds the size of a receiver's inline threshold, the Receive operation fails and the RDMA provider typically terminates the connection. To convey an RPC message larger than the receiver's inline threshold without risking receive failure, a sender must use explicit RDMA data transfer operations.",
            key_word: KeyWord::Must,
            acceptable: "any reply that fits 1024 bytes (ERR_CHUNK, an RPC error, or a short read)",
            rationale: "A Send longer than the posted receive kills the connection (local length error).",
            groups: &["private-data", "inline"],
            broken_by: &[("ignore-reply-chunk", Outcome::Fail)],
        },
        run: receive_size_honoured,
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
];
