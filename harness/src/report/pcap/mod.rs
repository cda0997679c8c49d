//! Each check's conversation as a Wireshark-readable capture, framed as RoCEv2 (Ethernet /
//! IPv4 / UDP 4791 / InfiniBand BTH / extension headers / payload / ICRC), the way it would
//! look on the wire:
//!
//! - the RDMA-CM exchange (CM REQ, REP and RTU, or REQ and REJ) as MADs on QP1, with the
//!   RDMA-CM IP header and each side's private data (RFC 8797 4);
//! - every message as a Send (SEND ONLY, or SEND FIRST / MIDDLE / LAST beyond the path MTU),
//!   with an IETH naming the R_key when it was a Send With Invalidate;
//! - every RDMA Read as a READ REQUEST and its READ RESPONSE ONLY or FIRST / MIDDLE / LAST,
//!   and every RDMA Write as WRITE ONLY or FIRST / MIDDLE / LAST, split at the path MTU.
//!
//! With the CM exchange in the capture, Wireshark ties both directions of the queue pair
//! into one conversation: it matches replies to calls and reassembles chunk data.
//!
//! Over verbs our side cannot see the peer's one-sided operations on our memory; those frames
//! are reconstructed from what our side knows (see `rpcrdma_conformance::engine::RdmaOp`):
//! the segments we advertised, the lengths the reply reports, and what our regions held when
//! the reply came. Acknowledgements are not shown.

use std::time::Duration;

use rpcrdma_codec::Profile;
use rpcrdma_conformance::catalogue::client::{self, Served};
use rpcrdma_conformance::engine::ctx::{CmExchange, Direction, RdmaOp, TranscriptEntry, Wire};
use rpcrdma_peers::observe::ObservedConnection;
use rpcrdma_peers::transport::RemoteOp;

mod cm;
mod rocev2;

pub use rocev2::rocev2_frame;
use rocev2::{aeth, op, reth, rocev2_packet, OUR_QPN, PEER_QPN};

/// The path MTU captures are written with unless told otherwise (soft-RoCE's default).
pub const DEFAULT_MTU: usize = 1024;

/// Writes a capture: pcap framing, and the PSN and message counters of both sides.
struct Writer {
    out: Vec<u8>,
    start_unix: u64,
    mtu: usize,
    /// Next PSN and MSN of each side's send queue: [ours, the peer's].
    psn: [u32; 2],
    msn: [u32; 2],
    /// Connections set up so far (for CM communication IDs and transaction IDs).
    connections: u32,
}

impl Writer {
    fn new(start_unix: u64, mtu: usize) -> Writer {
        let mut out = Vec::new();
        out.extend_from_slice(&0xa1b2_c3d4u32.to_le_bytes());
        out.extend_from_slice(&2u16.to_le_bytes());
        out.extend_from_slice(&4u16.to_le_bytes());
        out.extend_from_slice(&0i32.to_le_bytes());
        out.extend_from_slice(&0u32.to_le_bytes());
        out.extend_from_slice(&262_144u32.to_le_bytes());
        out.extend_from_slice(&1u32.to_le_bytes());
        Writer { out, start_unix, mtu: mtu.max(256), psn: [0, 0], msn: [0, 0], connections: 0 }
    }

    fn record(&mut self, at: Duration, frame: &[u8]) {
        let ts = self.start_unix * 1_000_000 + at.as_micros() as u64;
        self.out.extend_from_slice(&((ts / 1_000_000) as u32).to_le_bytes());
        self.out.extend_from_slice(&((ts % 1_000_000) as u32).to_le_bytes());
        self.out.extend_from_slice(&(frame.len() as u32).to_le_bytes());
        self.out.extend_from_slice(&(frame.len() as u32).to_le_bytes());
        self.out.extend_from_slice(frame);
    }

    fn next_psn(&mut self, from_us: bool) -> u32 {
        let p = &mut self.psn[usize::from(!from_us)];
        let psn = *p;
        *p = (*p + 1) & 0xff_ffff;
        psn
    }

    /// A message as one Send, or as SEND FIRST / MIDDLE / LAST beyond the path MTU; with an
    /// IETH on the only or last packet for Send With Invalidate.
    fn send(&mut self, at: Duration, from_us: bool, payload: &[u8], invalidate: Option<u32>) {
        let dest = if from_us { PEER_QPN } else { OUR_QPN };
        let parts: Vec<&[u8]> = if payload.is_empty() { vec![payload] } else { payload.chunks(self.mtu).collect() };
        let n = parts.len();
        for (i, part) in parts.into_iter().enumerate() {
            let last = i + 1 == n;
            let (opcode, ieth) = match (n, i, invalidate) {
                (1, _, None) => (op::SEND_ONLY, None),
                (1, _, Some(k)) => (op::SEND_ONLY_INVALIDATE, Some(k)),
                (_, 0, _) => (op::SEND_FIRST, None),
                (_, _, None) if last => (op::SEND_LAST, None),
                (_, _, Some(k)) if last => (op::SEND_LAST_INVALIDATE, Some(k)),
                _ => (op::SEND_MIDDLE, None),
            };
            let headers = ieth.map(|k| k.to_be_bytes().to_vec()).unwrap_or_default();
            let psn = self.next_psn(from_us);
            let frame = rocev2_packet(from_us, opcode, dest, psn, &headers, part);
            self.record(at, &frame);
        }
        // The receiver counts the message (its MSN, which its acknowledgements carry).
        self.msn[usize::from(from_us)] += 1;
    }

    /// An RDMA Write (WRITE ONLY, or FIRST / MIDDLE / LAST) or an RDMA Read (READ REQUEST,
    /// then the target's READ RESPONSE ONLY, or FIRST / MIDDLE / LAST, in the PSNs of the
    /// request).
    fn rdma(&mut self, at: Duration, o: &RdmaOp) {
        let from_us = o.by_us;
        let (dest, back) = if from_us { (PEER_QPN, OUR_QPN) } else { (OUR_QPN, PEER_QPN) };
        let parts: Vec<&[u8]> = if o.data.is_empty() { vec![&o.data[..]] } else { o.data.chunks(self.mtu).collect() };
        let n = parts.len();
        let reth = reth(o.offset, o.handle, o.data.len() as u32);
        match o.op {
            RemoteOp::Write => {
                for (i, part) in parts.into_iter().enumerate() {
                    let (opcode, headers) = match (n, i) {
                        (1, _) => (op::WRITE_ONLY, &reth[..]),
                        (_, 0) => (op::WRITE_FIRST, &reth[..]),
                        _ if i + 1 == n => (op::WRITE_LAST, &[][..]),
                        _ => (op::WRITE_MIDDLE, &[][..]),
                    };
                    let psn = self.next_psn(from_us);
                    let frame = rocev2_packet(from_us, opcode, dest, psn, headers, part);
                    self.record(at, &frame);
                }
            }
            RemoteOp::Read => {
                let first = self.next_psn(from_us);
                let frame = rocev2_packet(from_us, op::READ_REQUEST, dest, first, &reth, &[]);
                self.record(at, &frame);
                // The responses use the request's PSNs; the requester skips past them.
                let side = usize::from(!from_us);
                self.psn[side] = (first + n as u32) & 0xff_ffff;
                let target = usize::from(from_us);
                self.msn[target] += 1;
                let msn = self.msn[target];
                for (i, part) in parts.into_iter().enumerate() {
                    let (opcode, headers) = match (n, i) {
                        (1, _) => (op::READ_RESPONSE_ONLY, aeth(msn)),
                        (_, 0) => (op::READ_RESPONSE_FIRST, aeth(msn)),
                        _ if i + 1 == n => (op::READ_RESPONSE_LAST, aeth(msn)),
                        _ => (op::READ_RESPONSE_MIDDLE, Vec::new()),
                    };
                    let psn = (first + i as u32) & 0xff_ffff;
                    let frame = rocev2_packet(!from_us, opcode, back, psn, &headers, part);
                    self.record(at, &frame);
                }
            }
        }
    }

    /// The RDMA-CM exchange; the new connection's PSNs and MSNs start at zero.
    fn connect(&mut self, at: Duration, cm: &CmExchange) {
        self.connections += 1;
        self.psn = [0, 0];
        self.msn = [0, 0];
        for frame in cm::exchange(cm, self.connections, self.mtu) {
            self.record(at, &frame);
        }
    }

    fn entry(&mut self, e: &TranscriptEntry) {
        let from_us = match e.direction {
            Direction::Sent => true,
            Direction::Received => false,
            Direction::Event => match &e.wire {
                Wire::Connect(cm) => return self.connect(e.at, cm),
                Wire::Rdma(o) => return self.rdma(e.at, o),
                _ => return,
            },
        };
        let invalidate = match e.wire {
            Wire::SendWithInvalidate(k) => Some(k),
            _ => None,
        };
        self.send(e.at, from_us, &e.bytes, invalidate);
    }
}

/// A classic pcap file (LINKTYPE_ETHERNET) of a transcript at the default path MTU.
pub fn capture(transcript: &[TranscriptEntry], start_unix: u64) -> Vec<u8> {
    capture_with_mtu(transcript, start_unix, DEFAULT_MTU)
}

/// A classic pcap file (LINKTYPE_ETHERNET) of a transcript: the CM exchange, the Sends and
/// the one-sided operations, split into packets of at most `mtu` payload bytes.
pub fn capture_with_mtu(transcript: &[TranscriptEntry], start_unix: u64, mtu: usize) -> Vec<u8> {
    let mut w = Writer::new(start_unix, mtu);
    for e in transcript {
        w.entry(e);
    }
    w.out
}

/// The conversation `serve` observed, one connection after another, as a capture from the
/// responder's side (ours): the transcript the client catalogue builds from the observation
/// (its CM exchanges, the requester's calls, our RDMA Reads and Writes, our replies), decoded
/// under the run's `profile`.
pub fn observed(conns: &[ObservedConnection], profile: &Profile, start_unix: u64) -> Vec<u8> {
    let served: Vec<Served<'_>> = conns.iter().map(|c| Served::of(c, profile)).collect();
    capture(&client::transcript(&served), start_unix)
}

/// The file `serve --pcap DIR` writes the observed conversation to.
pub const OBSERVED_FILE: &str = "observed-conversation.pcap";

/// A file name for a check's capture: its ID with `/` as `_`.
pub fn file_name(id: &str) -> String {
    format!("{}.pcap", id.replace('/', "_"))
}

#[cfg(test)]
mod tests {
    use super::cm::{CM_REJ, CM_REQ};
    use super::rocev2::PEER_IP;
    use super::*;

    /// (opcode, PSN, payload length) of each frame of a capture.
    fn packets(pcap: &[u8]) -> Vec<(u8, u32, usize)> {
        let mut out = Vec::new();
        let mut at = 24;
        while at < pcap.len() {
            let len = u32::from_le_bytes(pcap[at + 8..at + 12].try_into().unwrap()) as usize;
            let f = &pcap[at + 16..at + 16 + len];
            let psn = u32::from_be_bytes([0, f[51], f[52], f[53]]);
            let pad = (f[43] >> 4 & 3) as usize;
            let headers = match f[42] {
                op::WRITE_FIRST | op::WRITE_ONLY | op::READ_REQUEST => 16,
                op::READ_RESPONSE_FIRST | op::READ_RESPONSE_LAST | op::READ_RESPONSE_ONLY => 4,
                op::SEND_ONLY_INVALIDATE | op::SEND_LAST_INVALIDATE => 4,
                op::UD_SEND_ONLY => 8,
                _ => 0,
            };
            out.push((f[42], psn, len - 54 - headers - pad - 4));
            at += 16 + len;
        }
        out
    }

    fn event(wire: Wire) -> TranscriptEntry {
        TranscriptEntry { direction: Direction::Event, at: Duration::ZERO, summary: String::new(), bytes: vec![], wire }
    }

    #[test]
    fn one_sided_operations_respect_the_mtu() {
        let read = RdmaOp {
            op: RemoteOp::Read,
            by_us: false,
            handle: 7,
            offset: 0x1000,
            data: vec![1; 2500],
            reconstructed: false,
        };
        let write = RdmaOp { op: RemoteOp::Write, by_us: false, data: vec![2; 1024], ..read.clone() };
        let t = [
            event(Wire::Connect(CmExchange { we_are_active: true, req: vec![0xf6; 8], rep: Some(vec![0xf6; 8]) })),
            TranscriptEntry { direction: Direction::Sent, bytes: vec![9; 1500], ..event(Wire::Plain) },
            event(Wire::Rdma(read)),
            event(Wire::Rdma(write)),
            TranscriptEntry { direction: Direction::Received, bytes: vec![9; 8], ..event(Wire::SendWithInvalidate(7)) },
        ];
        let p = packets(&capture_with_mtu(&t, 0, 1024));
        assert_eq!(
            p,
            vec![
                (op::UD_SEND_ONLY, 0, 256),
                (op::UD_SEND_ONLY, 0, 256),
                (op::UD_SEND_ONLY, 0, 256),
                (op::SEND_FIRST, 0, 1024),
                (op::SEND_LAST, 1, 476),
                (op::READ_REQUEST, 0, 0),
                (op::READ_RESPONSE_FIRST, 0, 1024),
                (op::READ_RESPONSE_MIDDLE, 1, 1024),
                (op::READ_RESPONSE_LAST, 2, 452),
                (op::WRITE_ONLY, 3, 1024),
                (op::SEND_ONLY_INVALIDATE, 4, 8),
            ]
        );
        // At a 4096-byte path MTU every operation fits one packet.
        let p = packets(&capture_with_mtu(&t, 0, 4096));
        let ops: Vec<u8> = p.iter().skip(3).map(|(o, ..)| *o).collect();
        assert_eq!(
            ops,
            [op::SEND_ONLY, op::READ_REQUEST, op::READ_RESPONSE_ONLY, op::WRITE_ONLY, op::SEND_ONLY_INVALIDATE]
        );
        assert_eq!(
            p[4..6].iter().map(|(_, psn, _)| *psn).collect::<Vec<_>>(),
            [0, 0],
            "the peer's first PSN, and the response has its request's"
        );
    }

    #[test]
    fn a_rejected_connection_is_a_req_and_a_rej() {
        let cm = CmExchange { we_are_active: false, req: vec![1, 2, 3], rep: None };
        let pcap = capture(&[event(Wire::Connect(cm))], 0);
        let frames: Vec<&[u8]> = {
            let (mut v, mut at) = (Vec::new(), 24);
            while at < pcap.len() {
                let len = u32::from_le_bytes(pcap[at + 8..at + 12].try_into().unwrap()) as usize;
                v.push(&pcap[at + 16..at + 16 + len]);
                at += 16 + len;
            }
            v
        };
        assert_eq!(frames.len(), 2);
        // MAD attribute IDs after Ethernet, IP, UDP, BTH, DETH and 16 bytes of MAD header.
        let attr = |f: &[u8]| u16::from_be_bytes([f[62 + 16], f[62 + 17]]);
        assert_eq!((attr(frames[0]), attr(frames[1])), (CM_REQ, CM_REJ));
        assert_eq!(&frames[0][26..30], &PEER_IP, "the peer, active, sends the REQ");
        // The consumer's private data follows the RDMA-CM header in the REQ.
        assert_eq!(&frames[0][62 + 24 + 176..62 + 24 + 179], &[1, 2, 3]);
    }
}
