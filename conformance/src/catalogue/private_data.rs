//! RDMA-CM private data (RFC 8797): the peer's message parsed and validated, our advertised
//! receive size honoured, Send With Invalidate only when both sides set R and only for an
//! R_key of the request.

use rpcrdma_codec::check::KeyWord;
use rpcrdma_codec::private_data::{self, Lookup, PrivateData};
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
    read_into_fresh_chunk(ctx)
}

/// READ of `five` into a write chunk of a newly registered region; the reply and its R_key.
fn read_into_fresh_chunk(ctx: &mut Ctx) -> Result<(Frame, u32), Verdict> {
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

/// The R bit the peer advertised in its own private data, and how it was found.
fn peer_r_bit(ctx: &Ctx) -> (bool, String) {
    match private_data::find(ctx.peer_private_data(), &rpcrdma_codec::Profile::default()) {
        Ok(Lookup::Found { at, data }) => {
            (data.remote_invalidation, format!("R = {} at offset {at}", data.remote_invalidation as u8))
        }
        Ok(Lookup::Absent) => (false, "no RFC 8797 private data (R = 0, RFC 8797 5.1)".into()),
        Ok(Lookup::UnrecognisedVersion { version, .. }) => {
            (false, format!("private data of unrecognised version {version} (treated as absent: R = 0)"))
        }
        Err(e) => (false, format!("private data that does not decode ({e}): R = 0")),
    }
}

fn invalidate_request_rkey(ctx: &mut Ctx) -> Judged {
    // Two READs in turn, each with a write chunk of its own region: each reply may only
    // invalidate its own request's R_key.
    let first = read_with_r(ctx, true)?;
    let (peer_r, said) = peer_r_bit(ctx);
    let want = if peer_r {
        "plain Sends, or Send With Invalidate of the R_key each request advertised (both peers set R)"
    } else {
        "plain Sends only: the responder's own private data clears R"
    };
    let second = read_into_fresh_chunk(ctx)?;
    let mut seen = Vec::new();
    for (i, (reply, key)) in [first, second].into_iter().enumerate() {
        let nth = ["first", "second"][i];
        match reply.invalidated {
            None => seen.push(format!("{nth}: plain Send")),
            Some(h) if !peer_r => {
                let got = format!(
                    "{nth} reply: Send With Invalidate of {h:#x} although the peer advertised {said} (MUST use only RDMA Send)"
                );
                return Err(Verdict::fail(want, got));
            }
            Some(h) if h == key => seen.push(format!("{nth}: Send With Invalidate of its R_key {h:#x}")),
            Some(h) => {
                return Err(Verdict::fail(want, format!("{nth} reply: invalidated {h:#x}, not its request's {key:#x}")))
            }
        }
    }
    Ok(Verdict::pass(want, format!("{}; the peer advertised {said}", seen.join(", "))))
}

/// The receive size receive-size-honoured advertises: above the 1024-byte default, so a peer
/// that honours it can be told from one that falls back to the default.
const HONOURED_RECEIVE: u32 = 2048;

fn receive_size_honoured(ctx: &mut Ctx) -> Judged {
    let size = HONOURED_RECEIVE;
    ctx.options.receive_size = size;
    start(ctx)?;
    // The peer's own send size bounds its inline threshold (RFC 8797 4.2): it must exceed ours.
    let peer_send = match private_data::find(ctx.peer_private_data(), &rpcrdma_codec::Profile::default()) {
        Ok(Lookup::Found { data, .. }) => data.send_size(),
        _ => 1024,
    };
    let want = format!(
        "no Send over our advertised {size}-byte receive size while a longer reply is needed; a reply that fits {size} bytes sent inline"
    );
    if peer_send <= size {
        let got = format!("the peer's send size is {peer_send}: it cannot send more than {size} bytes inline anyway");
        return Err(Verdict::unsupported(want, got));
    }
    let fh = lookup(ctx, nfs3::FILE_BIG)?;
    // About 3100 bytes of reply: more than our receive size, less than the peer's send size.
    let call = ctx.nfs3(NFSPROC3_READ, nfs3::read_args(&fh, 0, 3000));
    let got = ctx.call(&call.msg());
    let long = match &got {
        Received::Message(f) if f.len() <= size as usize => format!("a {}-byte reply to a 3000-byte READ", f.len()),
        Received::Nothing(NoMessage::RecvFailed(s)) => {
            let got = format!("our {size}-byte receive failed ({}): the peer sent more", s.name());
            return Err(Verdict::fail(want, got));
        }
        other => return Err(Verdict::fail(want, other.describe())),
    };
    // About 1600 bytes of reply, no chunks: within the threshold RFC 8797 4.2 gives
    // (min(its send size, our receive size)), so a requester need not offer a reply chunk
    // (RFC 8166 4.3.3). A peer that keeps the 1024-byte default cannot send it.
    ctx.ensure_connected().or_fail("a connection")?;
    let call = ctx.nfs3(NFSPROC3_READ, nfs3::read_args(&fh, 0, 1500));
    let got = ctx.call(&call.msg());
    match expect::rpc_accepted(&got, call.xid, AcceptStat::Success) {
        Ok((f, _)) if f.len() > 1024 => {
            Ok(Verdict::pass(want, format!("{long}; a {}-byte inline reply to a 1500-byte READ", f.len())))
        }
        Ok((f, _)) => Ok(Verdict::pass(want, format!("{long}; a {}-byte reply to a 1500-byte READ", f.len()))),
        Err(m) => Ok(Verdict::lax(
            want,
            format!("{long}; but a 1500-byte READ that fits {size} bytes was not answered inline ({m}): the peer keeps the 1024-byte default instead of our receive size (RFC 8797 4.2)"),
        )),
    }
}

/// Connects with `private_data` and checks the peer falls back to 1024-byte thresholds:
/// a 2000-byte READ without chunks must not come back in one Send over 1024 bytes.
fn falls_back_to_1024(ctx: &mut Ctx, private_data: &[u8]) -> Judged {
    ctx.options.receive_size = 1024;
    ctx.connect_with(private_data).or_fail("a connection")?;
    no_send_over_1024(ctx, "the peer assumes 1024-byte inline thresholds: no Send over 1024 bytes")
}

/// On a connection with a 1024-byte receive size: a 2000-byte READ without chunks must not
/// come back in one Send over 1024 bytes.
fn no_send_over_1024(ctx: &mut Ctx, want: &str) -> Judged {
    let fh = lookup(ctx, nfs3::FILE_BIG)?;
    let call = ctx.nfs3(NFSPROC3_READ, nfs3::read_args(&fh, 0, 2000));
    match ctx.call(&call.msg()) {
        Received::Message(f) if f.len() <= 1024 => Ok(Verdict::pass(want, format!("a {}-byte reply", f.len()))),
        Received::Nothing(NoMessage::RecvFailed(s)) => {
            let got = format!("our 1024-byte receive failed ({}): the peer assumed a larger size", s.name());
            Err(Verdict::fail(want, got))
        }
        other => Err(Verdict::fail(want, other.describe())),
    }
}

/// What a peer showed it took from our private data on one connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Used {
    /// A reply between 1024 bytes and our advertised receive size came inline.
    receive_size: bool,
    /// The peer used Send With Invalidate (it read our R bit).
    r_bit: bool,
}

impl std::fmt::Display for Used {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let yes = |b: bool| if b { "used" } else { "not used" };
        write!(f, "receive size {}, R {}", yes(self.receive_size), yes(self.r_bit))
    }
}

/// Our private data (send size ours, receive size 2048, R set) after `before` bytes of other
/// data, with the reserved bits `reserved`.
fn honoured_private_data(ctx: &Ctx, before: &[u8], reserved: u8) -> Vec<u8> {
    let pd = PrivateData::new(ctx.options.send_size, HONOURED_RECEIVE, true).expect("sizes of at least 1024");
    let mut b = [0u8; 8];
    pd.with_reserved(reserved).encode_into(&mut b).expect("8 bytes");
    [before, &b[..]].concat()
}

/// Connects with `pd` (advertising a 2048-byte receive size and R) and observes what the
/// peer takes from it: a 1500-byte READ without chunks answered inline (the size), and
/// Send With Invalidate of a READ's write chunk (R).
fn observe_private_data(ctx: &mut Ctx, pd: &[u8]) -> Result<Used, Verdict> {
    ctx.options.receive_size = HONOURED_RECEIVE;
    ctx.connect_with(pd).or_fail("a connection")?;
    let fh = lookup(ctx, nfs3::FILE_BIG)?;
    let call = ctx.nfs3(NFSPROC3_READ, nfs3::read_args(&fh, 0, 1500));
    let got = ctx.call(&call.msg());
    let receive_size = match expect::rpc_accepted(&got, call.xid, AcceptStat::Success) {
        Ok((f, _)) => f.len() > 1024,
        Err(_) => false,
    };
    ctx.ensure_connected().or_fail("a connection")?;
    let fh = lookup(ctx, nfs3::FILE_FIVE)?;
    let region = ctx.register(64, Access::WRITE);
    let mut call = ctx.nfs3(NFSPROC3_READ, nfs3::read_args(&fh, 0, 64));
    call.writes = vec![vec![region.segment()]];
    let got = ctx.call(&call.msg());
    let (f, _) = expect::rpc_accepted(&got, call.xid, AcceptStat::Success).or_fail("a READ3 reply")?;
    Ok(Used { receive_size, r_bit: f.invalidated.is_some() })
}

/// Compares what the peer takes from our plain private data with what it takes from the
/// `variant`: everything the plain one showed must show again.
fn same_as_plain(ctx: &mut Ctx, variant: &[u8], what: &str) -> Judged {
    let plain = honoured_private_data(ctx, &[], 0);
    let baseline = observe_private_data(ctx, &plain)?;
    let want = format!("the peer uses our private data {what} as it uses it plainly ({baseline})");
    if !baseline.receive_size && !baseline.r_bit {
        let got = "the peer uses neither our receive size nor our R bit even in plain private data: nothing to compare";
        return Err(Verdict::unsupported(want, got));
    }
    let seen = observe_private_data(ctx, variant)?;
    let lost = baseline.receive_size && !seen.receive_size || baseline.r_bit && !seen.r_bit;
    if lost {
        return Err(Verdict::fail(want, format!("{what}: {seen}")));
    }
    Ok(Verdict::pass(want, format!("{what}: {seen}")))
}

fn reserved_bits_ignored(ctx: &mut Ctx) -> Judged {
    let variant = honoured_private_data(ctx, &[], 0x7f);
    same_as_plain(ctx, &variant, "with all 7 reserved bits set")
}

fn private_data_at_offset(ctx: &mut Ctx) -> Judged {
    // Five octets of other data first: the identifier is at an odd, unaligned offset.
    let variant = honoured_private_data(ctx, &[0x00, 0x11, 0x22, 0x33, 0x44], 0);
    same_as_plain(ctx, &variant, "at offset 5")
}

/// Connects advertising `receive` bytes and READs 2000 bytes of `big` without chunks: the
/// reply's size, or why there is none (a receive that failed: the peer sent more).
fn read_2000_with_receive(ctx: &mut Ctx, receive: u32) -> Result<Result<usize, String>, Verdict> {
    ctx.options.receive_size = receive;
    let pd = ctx.private_data(true);
    ctx.connect_with(&pd).or_fail("a connection")?;
    let fh = lookup(ctx, nfs3::FILE_BIG)?;
    let call = ctx.nfs3(NFSPROC3_READ, nfs3::read_args(&fh, 0, 2000));
    Ok(match ctx.call(&call.msg()) {
        Received::Message(f) => Ok(f.len()),
        Received::Nothing(NoMessage::RecvFailed(s)) => Err(format!("our {receive}-byte receive failed ({})", s.name())),
        other => Err(other.describe()),
    })
}

fn settings_change_on_reconnect(ctx: &mut Ctx) -> Judged {
    let want = "on a new connection advertising 1024 bytes after one advertising 4096, no Send over 1024 bytes";
    // Baseline: a peer that does not keep to 1024 bytes even on a first connection is judged
    // by receive-size-honoured, not here.
    match read_2000_with_receive(ctx, 1024)? {
        Ok(n) if n <= 1024 => {}
        other => {
            let got = format!("the peer does not keep to our 1024-byte receive size on a first connection ({other:?})");
            return Err(Verdict::unsupported(want, got));
        }
    }
    let large = read_2000_with_receive(ctx, 4096)?;
    match read_2000_with_receive(ctx, 1024)? {
        Ok(n) if n <= 1024 => {
            Ok(Verdict::pass(want, format!("{n} bytes after reconnecting (the 4096-byte connection gave {large:?})")))
        }
        Ok(n) => Err(Verdict::fail(want, format!("a {n}-byte Send: the settings of the previous connection kept"))),
        Err(why) => Err(Verdict::fail(want, format!("{why}: the settings of the previous connection kept"))),
    }
}

/// Connects with `private_data` (not valid RFC 8797 data, though R would be set in it) and
/// checks the peer behaves as if it had none (RFC 8797 5.1): R taken as zero (a plain Send
/// for a READ offering a write chunk), sizes as 1024 (no Send over 1024 bytes).
fn as_if_no_private_data(ctx: &mut Ctx, private_data: &[u8], what: &str) -> Judged {
    ctx.options.receive_size = 1024;
    ctx.connect_with(private_data).or_fail("a connection")?;
    let want = format!(
        "with {what}: a plain Send for a READ offering a write chunk (R taken as zero), and no Send over 1024 bytes (sizes taken as 1024)"
    );
    let (reply, _) = read_into_fresh_chunk(ctx)?;
    if let Some(h) = reply.invalidated {
        return Err(Verdict::fail(&want, format!("Send With Invalidate of {h:#x}: R taken as set")));
    }
    no_send_over_1024(ctx, &want)
}

fn absent_as_zero_fields(ctx: &mut Ctx) -> Judged {
    as_if_no_private_data(ctx, &[], "no private data")
}

fn bad_identifier_as_absent(ctx: &mut Ctx) -> Judged {
    // Our usual private data, R set, with the format identifier's last octet changed.
    let mut pd = ctx.private_data(true);
    pd[3] ^= 0xff;
    as_if_no_private_data(ctx, &pd, "our private data (R set) under a wrong format identifier")
}

fn reserved_bits_both_ways(ctx: &mut Ctx) -> Judged {
    let want = "the peer's own private data with its reserved bits zero, and ours with all 7 reserved bits set used as plainly";
    // The sender half: what the peer sent us.
    start(ctx)?;
    let sent = match private_data::find(ctx.peer_private_data(), &rpcrdma_codec::Profile::default()) {
        Ok(Lookup::Found { data, .. }) if data.reserved != 0 => {
            let got = format!("the peer's own private data has reserved bits {:#04x} set", data.reserved);
            return Err(Verdict::fail(want, got));
        }
        Ok(Lookup::Found { .. }) => "the peer's own reserved bits zero",
        _ => "no RFC 8797 private data of the peer's (no reserved bits sent)",
    };
    // The receiver half: our reserved bits set change nothing the peer takes from us.
    let variant = honoured_private_data(ctx, &[], 0x7f);
    let received = same_as_plain(ctx, &variant, "with all 7 reserved bits set")?;
    Ok(Verdict::pass(want, format!("{sent}; {}", received.actual)))
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
