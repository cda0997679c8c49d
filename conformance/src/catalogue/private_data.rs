//! RDMA-CM private data (RFC 8797): the peer's message parsed and validated, our advertised
//! receive size honoured, Send With Invalidate only when both sides set R and only for an
//! R_key of the request.

use rpcrdma_codec::check::KeyWord;
use rpcrdma_codec::private_data::{self, Lookup};
use rpcrdma_codec::rpc::AcceptStat;

use super::nfs;
use super::{lookup, start, CallMsg};
use crate::engine::{expect, Check, Ctx, Received, Verdict};
use crate::transport::Access;

fn private_data_valid(ctx: &mut Ctx) -> Verdict {
    if let Err(v) = start(ctx) {
        return v;
    }
    let want = "RFC 8797 private data: format identifier 0xf6ab0e18, version 1, reserved bits zero";
    let raw = ctx.peer_private_data().to_vec();
    match private_data::find(&raw, &rpcrdma_codec::Profile::default()) {
        Ok(Lookup::UnrecognisedVersion { at, version }) => {
            Verdict::fail(want, format!("version {version} at offset {at}"))
        }
        Ok(Lookup::Found { at, data: pd }) => {
            let summary = format!(
                "found at offset {at}: send size {}, receive size {}, R {}",
                pd.send_size(),
                pd.receive_size(),
                pd.remote_invalidation as u8
            );
            if pd.reserved != 0 {
                // Senders MUST zero them; receivers MUST ignore them: a sender defect.
                return Verdict::fail(want, format!("{summary}; reserved bits {:#04x} set", pd.reserved));
            }
            Verdict::pass(want, summary)
        }
        Ok(Lookup::Absent) => Verdict::unsupported(want, "no RFC 8797 private data (the peer predates RFC 8797)"),
        Err(e) => Verdict::fail(want, format!("private data that does not decode: {e}")),
    }
}

/// READ of `five` into a write chunk, connected with the given R bit; the reply and the
/// chunk's R_key.
fn read_with_r(ctx: &mut Ctx, r_bit: bool) -> Result<(Received, u32), Verdict> {
    let pd = ctx.private_data(r_bit);
    ctx.connect_with(&pd).map_err(|e| Verdict::fail("a connection", e))?;
    let fh = lookup(ctx, nfs::FILE_FIVE)?;
    let region = ctx.register(64, Access::WRITE);
    let mut call = CallMsg::nfs3(ctx, nfs::PROC_READ, nfs::read_args(&fh, 0, 64));
    call.writes = vec![vec![region.segment()]];
    let ex = ctx.call(call.xid, &call.msg());
    expect::rpc_accepted(&ex.received, call.xid, AcceptStat::Success).map_err(|g| Verdict::fail("a READ3 reply", g))?;
    Ok((ex.received, region.handle))
}

fn no_invalidate_without_r(ctx: &mut Ctx) -> Verdict {
    let want = "a plain Send (we did not set R, so Send With Invalidate is not allowed)";
    match read_with_r(ctx, false) {
        Ok((Received::Message { invalidated: None, .. }, _)) => Verdict::pass(want, "plain Send"),
        Ok((Received::Message { invalidated: Some(h), .. }, _)) => {
            Verdict::fail(want, format!("Send With Invalidate of {h:#x}"))
        }
        Ok((other, _)) => Verdict::fail(want, other.describe()),
        Err(v) => v,
    }
}

fn invalidate_request_rkey(ctx: &mut Ctx) -> Verdict {
    let want = "a plain Send, or Send With Invalidate of the R_key this request advertised";
    match read_with_r(ctx, true) {
        Ok((Received::Message { invalidated: None, .. }, _)) => {
            Verdict::pass(want, "plain Send (invalidation is optional)")
        }
        Ok((Received::Message { invalidated: Some(h), .. }, key)) if h == key => {
            Verdict::pass(want, format!("Send With Invalidate of the request's R_key {h:#x}"))
        }
        Ok((Received::Message { invalidated: Some(h), .. }, key)) => {
            Verdict::fail(want, format!("invalidated {h:#x}, not the request's {key:#x}"))
        }
        Ok((other, _)) => Verdict::fail(want, other.describe()),
        Err(v) => v,
    }
}

fn receive_size_honoured(ctx: &mut Ctx) -> Verdict {
    ctx.options.receive_size = 1024;
    if let Err(v) = start(ctx) {
        return v;
    }
    let fh = match lookup(ctx, nfs::FILE_BIG) {
        Ok(fh) => fh,
        Err(v) => return v,
    };
    // 2000 bytes of READ data inline would need a ~2100-byte Send; we offer no chunks.
    let call = CallMsg::nfs3(ctx, nfs::PROC_READ, nfs::read_args(&fh, 0, 2000));
    let want = "no Send larger than our advertised 1024-byte receive size (an error reply or a short read instead)";
    let ex = ctx.call(call.xid, &call.msg());
    match &ex.received {
        Received::Message { bytes, .. } if bytes.len() <= 1024 => {
            Verdict::pass(want, format!("a {}-byte reply: {}", bytes.len(), ex.received.describe()))
        }
        Received::RecvFailed(s) => {
            Verdict::fail(want, format!("our 1024-byte receive failed ({}): the peer sent more", s.name()))
        }
        other => Verdict::fail(want, other.describe()),
    }
}

/// Connects with `private_data` and checks the peer falls back to 1024-byte thresholds:
/// a 2000-byte READ without chunks must not come back in one Send over 1024 bytes.
fn falls_back_to_1024(ctx: &mut Ctx, private_data: &[u8]) -> Verdict {
    ctx.options.receive_size = 1024;
    if let Err(e) = ctx.connect_with(private_data) {
        return Verdict::fail("a connection", e);
    }
    let fh = match lookup(ctx, nfs::FILE_BIG) {
        Ok(fh) => fh,
        Err(v) => return v,
    };
    let call = CallMsg::nfs3(ctx, nfs::PROC_READ, nfs::read_args(&fh, 0, 2000));
    let want = "the peer assumes 1024-byte inline thresholds: no Send over 1024 bytes";
    let ex = ctx.call(call.xid, &call.msg());
    match &ex.received {
        Received::Message { bytes, .. } if bytes.len() <= 1024 => {
            Verdict::pass(want, format!("a {}-byte reply", bytes.len()))
        }
        Received::RecvFailed(s) => {
            Verdict::fail(want, format!("our 1024-byte receive failed ({}): the peer assumed a larger size", s.name()))
        }
        other => Verdict::fail(want, other.describe()),
    }
}

fn no_private_data(ctx: &mut Ctx) -> Verdict {
    falls_back_to_1024(ctx, &[])
}

fn bad_format_identifier(ctx: &mut Ctx) -> Verdict {
    // Our usual private data with the identifier's last octet changed: not RFC 8797 data.
    let mut pd = ctx.private_data(true);
    pd[3] ^= 0xff;
    falls_back_to_1024(ctx, &pd)
}

pub static CHECKS: [Check; 6] = [
    Check {
        id: "rfc8797/4/private-data-valid",
        requirement: "Format Identifier: ... the value of this field is always 0xf6ab0e18 ... Reserved: This 7-bit field is unused. Senders MUST set these bits to zero, and receivers MUST ignore their value.",
        key_word: KeyWord::Must,
        acceptable: "RFC 8797 private data of version 1 with the reserved bits zero; no private data at all is unsupported",
        rationale: "Without valid private data both sides fall back to 1024-byte inline thresholds.",
        groups: &["private-data", "cm"],
        run: private_data_valid,
    },
    Check {
        id: "rfc8797/4/no-invalidate-without-r",
        requirement: "A responder therefore must not employ remote invalidation unless it is aware of support for it in its own RDMA stack, and on the requester.",
        key_word: KeyWord::MustNot,
        acceptable: "a plain Send when we did not set R",
        rationale: "Invalidating memory of a requester that does not expect it breaks its registration cache.",
        groups: &["private-data", "invalidation"],
        run: no_invalidate_without_r,
    },
    Check {
        id: "rfc8797/4/invalidate-request-rkey",
        requirement: "R: This 1-bit field indicates that the sender supports remote invalidation. ... On one connection ... an RPC-over-RDMA requester can expose a mixture of STags that may be invalidated remotely and some that must not be.",
        key_word: KeyWord::May,
        acceptable: "a plain Send, or Send With Invalidate of an R_key advertised by that request",
        rationale: "Invalidating any other R_key tears down memory another RPC is using.",
        groups: &["private-data", "invalidation"],
        run: invalidate_request_rkey,
    },
    Check {
        id: "rfc8797/4.2/receive-size-honoured",
        requirement: "If an incoming RDMA message exceeds the size of a receiver's inline threshold, the Receive operation fails and the RDMA provider typically terminates the connection. To convey an RPC message larger than the receiver's inline threshold without risking receive failure, a sender must use explicit RDMA data transfer operations.",
        key_word: KeyWord::Must,
        acceptable: "any reply that fits 1024 bytes (ERR_CHUNK, an RPC error, or a short read)",
        rationale: "A Send longer than the posted receive kills the connection (local length error).",
        groups: &["private-data", "inline"],
        run: receive_size_honoured,
    },
    Check {
        id: "rfc8797/5.1/no-private-data",
        requirement: "When a peer does not receive a CM Private Data message that conforms to Section 4, it needs to act as if the remote peer supports only the default RPC-over-RDMA version 1 settings, as defined in [RFC8166]. In other words, the peer MUST behave as if a Private Data message was received in which (1) bit 15 of the Flags field is zero and (2) both Size fields contain the value zero.",
        key_word: KeyWord::Must,
        acceptable: "no Send over 1024 bytes to a requester that sent no private data",
        rationale: "Pre-RFC 8797 requesters send nothing; assuming larger buffers kills their connections.",
        groups: &["private-data", "inline"],
        run: no_private_data,
    },
    Check {
        id: "rfc8797/5.2/bad-format-identifier",
        requirement: "If the RPC-over-RDMA version 1 CM Private Data Format Identifier is not present, an RPC-over-RDMA version 1 receiver MUST behave as if no RPC-over-RDMA version 1 CM Private Data has been provided.",
        key_word: KeyWord::Must,
        acceptable: "no Send over 1024 bytes when our private data has a wrong identifier",
        rationale: "Another protocol's private data must not be read as RFC 8797 sizes.",
        groups: &["private-data", "inline"],
        run: bad_format_identifier,
    },
];
