//! The private data message itself (RFC 8797 4, 5.2): the peer's well formed, with its
//! reserved bits zero; ours found at any offset, its reserved bits ignored.

use rpcrdma_codec::private_data::{self, Lookup, PrivateData};
use rpcrdma_codec::profile::PrivateDataLocate;
use rpcrdma_codec::rpc::AcceptStat;

use rpcrdma_peers::proto::nfs3::{self, NFSPROC3_READ};

use super::invalidation::read_into_fresh_chunk;
use super::sizes::HONOURED_RECEIVE;
use crate::catalogue::steps::{lookup, start};
use crate::engine::{expect, Ctx, Judged, OrFail, Verdict};

pub(super) fn private_data_valid(ctx: &mut Ctx) -> Judged {
    start(ctx)?;
    let want = "RFC 8797 private data: format identifier 0xf6ab0e18, version 1, reserved bits zero";
    let raw = ctx.peer_private_data().to_vec();
    match private_data::find(&raw, ctx.profile()) {
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

/// What a peer showed it took from our private data on one connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Used {
    /// A reply between 1024 bytes and our advertised receive size came inline.
    receive_size: bool,
    /// The peer used Send With Invalidate (it read our R bit).
    r_bit: bool,
    /// Whether Send With Invalidate can be seen on this transport at all.
    r_seen: bool,
}

impl std::fmt::Display for Used {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let yes = |b: bool| if b { "used" } else { "not used" };
        let r = if self.r_seen { yes(self.r_bit) } else { "not observable on this transport" };
        write!(f, "receive size {}, R {r}", yes(self.receive_size))
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
    let (f, _) = read_into_fresh_chunk(ctx)?;
    let r_seen = ctx.conn().observes_invalidation();
    Ok(Used { receive_size, r_bit: f.invalidated.is_some(), r_seen })
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
    if !seen.r_seen {
        // The sizes can fail the check, but without R it cannot pass.
        return Err(Verdict::unsupported(want, format!("{what}: {seen}")));
    }
    Ok(Verdict::pass(want, format!("{what}: {seen}")))
}

pub(super) fn reserved_bits_ignored(ctx: &mut Ctx) -> Judged {
    let variant = honoured_private_data(ctx, &[], 0x7f);
    same_as_plain(ctx, &variant, "with all 7 reserved bits set")
}

pub(super) fn private_data_at_offset(ctx: &mut Ctx) -> Judged {
    // cm-pvt-data -00/-01 keep the format identifier in the first four octets: RFC 8797 5.2's
    // search is not in them.
    if ctx.profile().private_data_locate == PrivateDataLocate::OffsetZero {
        let why = "under pd-offset-zero (cm-pvt-data -00/-01) the format identifier is in the first four octets only";
        return Err(Verdict::unsupported("the peer uses our private data at offset 5 as it uses it plainly", why));
    }
    // Five octets of other data first: the identifier is at an odd, unaligned offset.
    let variant = honoured_private_data(ctx, &[0x00, 0x11, 0x22, 0x33, 0x44], 0);
    same_as_plain(ctx, &variant, "at offset 5")
}

pub(super) fn reserved_bits_both_ways(ctx: &mut Ctx) -> Judged {
    let want = "the peer's own private data with its reserved bits zero, and ours with all 7 reserved bits set used as plainly";
    // The sender half: what the peer sent us.
    start(ctx)?;
    let sent = match private_data::find(ctx.peer_private_data(), ctx.profile()) {
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
