//! What the responder saw of a requester, decoded once for the client checks: each served
//! connection's events as frames ([`Served`]), and as a report's transcript ([`transcript`]).

use std::time::Duration;

use rpcrdma_codec::check::Role;
use rpcrdma_codec::Profile;
use rpcrdma_peers::observe::{Observed, ObservedConnection, WireNote};
use rpcrdma_peers::responder::Scenario;
use rpcrdma_peers::transport::{RemoteOp, WcStatus};

use crate::engine::ctx::hex;
use crate::engine::{CheckInfo, CmExchange, Direction, Judged, RdmaOp, TranscriptEntry, Wire};
use crate::frame::Frame;

/// A check over observed requester behaviour.
#[derive(Debug, Clone, Copy)]
pub struct ClientCheck {
    pub info: CheckInfo,
    /// The scenario the responder plays for it (none: it judges every connection as served).
    pub scenario: Option<Scenario>,
    pub judge: fn(&[Served<'_>]) -> Judged,
}

/// One thing that happened on a served connection, decoded.
#[derive(Debug, Clone)]
pub enum Seen {
    /// A message the requester sent.
    Call(Frame),
    /// A message we sent back.
    Reply(Frame),
    /// A receive failed (the requester's Send overran our buffer, ...).
    ReceiveFailed(WcStatus),
    /// The connection ended.
    Closed,
    /// The responder stopped serving the connection, and why.
    Stopped(String),
    /// The scenario replaced our reply to the call `xid` (with the next `Reply`).
    Injected { scenario: &'static str, xid: u32 },
    /// `serve --fuzz` mutated our reply to the call `xid` (the next `Reply`) `how`.
    Mutated { how: &'static str, xid: u32 },
    /// A Send of ours completed in error (receiver not ready: no receive posted).
    SendFailed(WcStatus),
    /// The next `Reply` is a reverse-direction call of ours (RFC 8167 5.1), RPC XID `xid`.
    ReverseCall { xid: u32 },
    /// An earlier `Call` was a reverse-direction reply (RFC 8167 5.2) with rdma_xid `xid`;
    /// `matched` when it answered an outstanding call of ours (otherwise discarded).
    ReverseReply { xid: u32, matched: bool },
}

/// A served connection as the client checks see it.
#[derive(Debug, Clone)]
pub struct Served<'o> {
    pub conn: &'o ObservedConnection,
    pub events: Vec<(Duration, Seen)>,
    /// The run's spec choices, under which the events were decoded and the private data is read.
    pub profile: Profile,
}

impl<'o> Served<'o> {
    /// Decodes every message of `conn` once, under the run's `profile`.
    pub fn of(conn: &'o ObservedConnection, profile: &Profile) -> Self {
        let events = conn
            .events
            .iter()
            .map(|(at, e)| {
                let seen = match e {
                    Observed::FromRequester(b) => Seen::Call(Frame::decode(b.clone(), None, Role::Call, profile)),
                    Observed::ToRequester(b) => Seen::Reply(Frame::decode(b.clone(), None, Role::Reply, profile)),
                    Observed::ReceiveFailed(s) => Seen::ReceiveFailed(*s),
                    Observed::Closed => Seen::Closed,
                    Observed::Stopped(why) => Seen::Stopped(why.clone()),
                    Observed::Injected { scenario, xid } => Seen::Injected { scenario, xid: *xid },
                    Observed::Mutated { how, xid } => Seen::Mutated { how, xid: *xid },
                    Observed::SendFailed(s) => Seen::SendFailed(*s),
                    Observed::ReverseCall { xid } => Seen::ReverseCall { xid: *xid },
                    Observed::ReverseReply { xid, matched } => Seen::ReverseReply { xid: *xid, matched: *matched },
                };
                (*at, seen)
            })
            .collect();
        Served { conn, events, profile: *profile }
    }
}

/// The whole observed conversation as a transcript, from the responder's side: each
/// connection's CM exchange with both private datas, the requester's calls, our RDMA Reads and
/// Writes, our replies (by Send With Invalidate where we invalidated), and what else happened.
pub fn transcript(served: &[Served<'_>]) -> Vec<TranscriptEntry> {
    let mut out = Vec::new();
    let entry = |direction, at, summary, bytes, wire| TranscriptEntry { direction, at, summary, bytes, wire };
    for s in served {
        let c = s.conn;
        let at = s.events.first().map_or(Duration::ZERO, |(at, _)| *at);
        let cm = CmExchange {
            we_are_active: false,
            req: c.private_data.clone(),
            rep: Some(c.responder_private_data.clone()),
        };
        let summary = format!("requester connected with private data {}", hex(&c.private_data));
        out.push(entry(Direction::Event, at, summary, Vec::new(), Wire::Connect(cm)));
        // A note is recorded before the message it precedes: on a tie it comes first.
        let mut notes = c.wire.iter().peekable();
        let mut invalidate = None;
        for (at, e) in &s.events {
            while let Some((t, note)) = notes.next_if(|(t, _)| t <= at) {
                let (op, handle, offset, data) = match note {
                    WireNote::Invalidate(k) => {
                        invalidate = Some(*k);
                        continue;
                    }
                    WireNote::Read { handle, offset, data } => (RemoteOp::Read, handle, offset, data),
                    WireNote::Write { handle, offset, data } => (RemoteOp::Write, handle, offset, data),
                };
                let o = RdmaOp {
                    op,
                    by_us: true,
                    handle: *handle,
                    offset: *offset,
                    data: data.clone(),
                    reconstructed: false,
                };
                out.push(entry(Direction::Event, *t, o.describe(), Vec::new(), Wire::Rdma(o)));
            }
            let (direction, summary, bytes, wire) = match e {
                Seen::Call(f) => (Direction::Received, f.to_string(), f.bytes().to_vec(), Wire::Plain),
                Seen::Reply(f) => {
                    let wire = invalidate.take().map_or(Wire::Plain, Wire::SendWithInvalidate);
                    (Direction::Sent, f.to_string(), f.bytes().to_vec(), wire)
                }
                Seen::ReceiveFailed(s) => {
                    (Direction::Event, format!("receive failed: {}", s.name()), Vec::new(), Wire::Plain)
                }
                Seen::Closed => (Direction::Event, "connection closed".into(), Vec::new(), Wire::Plain),
                Seen::Stopped(why) => {
                    (Direction::Event, format!("the responder stopped: {why}"), Vec::new(), Wire::Plain)
                }
                Seen::Injected { scenario, xid } => {
                    let named = rpcrdma_peers::responder::Scenario::named(scenario);
                    let backward = named.is_some_and(|s| s.version_two());
                    let what = if backward {
                        format!("scenario {scenario}: the next message is a backward-direction call, before our reply to {xid:#010x}")
                    } else if named.is_some_and(|s| s.reverse_direction()) {
                        format!("scenario {scenario}: plays after the reverse-direction reply to our call {xid:#010x}")
                    } else {
                        format!("scenario {scenario}: the next message replaces our reply to {xid:#010x}")
                    };
                    (Direction::Event, what, Vec::new(), Wire::Plain)
                }
                Seen::Mutated { how, xid } => {
                    let what = format!("fuzz: the next message is our reply to {xid:#010x}, mutated ({how})");
                    (Direction::Event, what, Vec::new(), Wire::Plain)
                }
                Seen::SendFailed(s) => {
                    (Direction::Event, format!("our Send failed: {}", s.name()), Vec::new(), Wire::Plain)
                }
                Seen::ReverseCall { xid } => {
                    let what = format!("the next message is a reverse-direction call of ours, XID {xid:#010x}");
                    (Direction::Event, what, Vec::new(), Wire::Plain)
                }
                Seen::ReverseReply { xid, matched } => {
                    let what = if *matched {
                        format!("reverse-direction reply to our call {xid:#010x} taken")
                    } else {
                        format!("reverse-direction reply {xid:#010x} discarded: it answers no outstanding call of ours")
                    };
                    (Direction::Event, what, Vec::new(), Wire::Plain)
                }
            };
            out.push(entry(direction, *at, summary, bytes, wire));
        }
    }
    out
}
