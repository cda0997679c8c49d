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

use rpcrdma_conformance::catalogue::client::{self, Served};
use rpcrdma_conformance::engine::ctx::{CmExchange, Direction, RdmaOp, TranscriptEntry, Wire};
use rpcrdma_peers::observe::ObservedConnection;
use rpcrdma_peers::transport::RemoteOp;

/// Our side and the peer, as the capture shows them.
const OUR_IP: [u8; 4] = [10, 55, 0, 2];
const PEER_IP: [u8; 4] = [10, 55, 0, 1];
const OUR_MAC: [u8; 6] = [0x02, 0, 0, 0, 0, 2];
const PEER_MAC: [u8; 6] = [0x02, 0, 0, 0, 0, 1];
const OUR_QPN: u32 = 0x11;
const PEER_QPN: u32 = 0x12;
const ROCEV2_PORT: u16 = 4791;
/// The NFS-over-RDMA port (RFC 8267), in the RDMA-CM service ID.
const SERVICE_PORT: u16 = 20049;

/// The path MTU captures are written with unless told otherwise (soft-RoCE's default).
pub const DEFAULT_MTU: usize = 1024;

/// BTH opcodes (IBA 9.2, table 38): Reliable Connection, and UD SEND Only for MADs.
mod op {
    pub const SEND_FIRST: u8 = 0x00;
    pub const SEND_MIDDLE: u8 = 0x01;
    pub const SEND_LAST: u8 = 0x02;
    pub const SEND_ONLY: u8 = 0x04;
    pub const WRITE_FIRST: u8 = 0x06;
    pub const WRITE_MIDDLE: u8 = 0x07;
    pub const WRITE_LAST: u8 = 0x08;
    pub const WRITE_ONLY: u8 = 0x0a;
    pub const READ_REQUEST: u8 = 0x0c;
    pub const READ_RESPONSE_FIRST: u8 = 0x0d;
    pub const READ_RESPONSE_MIDDLE: u8 = 0x0e;
    pub const READ_RESPONSE_LAST: u8 = 0x0f;
    pub const READ_RESPONSE_ONLY: u8 = 0x10;
    pub const SEND_LAST_INVALIDATE: u8 = 0x16;
    pub const SEND_ONLY_INVALIDATE: u8 = 0x17;
    pub const UD_SEND_ONLY: u8 = 0x64;
}

/// CM attribute IDs (IBA 16.7.5 / 12.6).
const CM_REQ: u16 = 0x0010;
const CM_REJ: u16 = 0x0012;
const CM_REP: u16 = 0x0013;
const CM_RTU: u16 = 0x0014;

fn ip_checksum(h: &[u8]) -> u16 {
    let mut sum: u32 = h.chunks(2).map(|w| u16::from_be_bytes([w[0], w[1]]) as u32).sum();
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

fn crc32(data: impl IntoIterator<Item = u8>) -> u32 {
    let mut crc = 0xffff_ffffu32;
    for b in data {
        crc ^= b as u32;
        for _ in 0..8 {
            crc = if crc & 1 != 0 { (crc >> 1) ^ 0xedb8_8320 } else { crc >> 1 };
        }
    }
    !crc
}

/// One RoCEv2 packet: BTH with `opcode`, `dest_qp` and `psn`, then `headers` (RETH, AETH,
/// IETH, DETH: whatever the opcode calls for), then `payload`, padded to 4 bytes, and ICRC.
fn rocev2_packet(from_us: bool, opcode: u8, dest_qp: u32, psn: u32, headers: &[u8], payload: &[u8]) -> Vec<u8> {
    let (src_mac, dst_mac, src_ip, dst_ip) =
        if from_us { (OUR_MAC, PEER_MAC, OUR_IP, PEER_IP) } else { (PEER_MAC, OUR_MAC, PEER_IP, OUR_IP) };
    let pad = (4 - payload.len() % 4) % 4;
    let ib_len = 12 + headers.len() + payload.len() + pad + 4;
    let udp_len = 8 + ib_len;
    let ip_len = 20 + udp_len;

    let mut ip = vec![0x45, 0, (ip_len >> 8) as u8, ip_len as u8, 0, 0, 0x40, 0, 64, 17, 0, 0];
    ip.extend_from_slice(&src_ip);
    ip.extend_from_slice(&dst_ip);
    let c = ip_checksum(&ip);
    ip[10..12].copy_from_slice(&c.to_be_bytes());

    // RoCEv2 source ports are an entropy value; one per queue pair keeps flows apart.
    let src_qp = if from_us { OUR_QPN } else { PEER_QPN };
    let src_port: u16 = 0xc000 | (src_qp as u16 & 0x3fff);
    let mut udp = Vec::with_capacity(8);
    udp.extend_from_slice(&src_port.to_be_bytes());
    udp.extend_from_slice(&ROCEV2_PORT.to_be_bytes());
    udp.extend_from_slice(&(udp_len as u16).to_be_bytes());
    udp.extend_from_slice(&[0, 0]);

    // BTH: opcode, SE/M/PadCnt/TVer, P_Key, resv8, DestQP, A/resv7, PSN.
    let mut bth = vec![opcode, (pad as u8) << 4, 0xff, 0xff, 0];
    bth.extend_from_slice(&dest_qp.to_be_bytes()[1..]);
    bth.push(0);
    bth.extend_from_slice(&(psn & 0xff_ffff).to_be_bytes()[1..]);

    // ICRC (IBA Annex A17): over the masked IP and UDP headers and the BTH (resv8a masked).
    let mut masked_ip = ip.clone();
    masked_ip[1] = 0xff; // TOS
    masked_ip[8] = 0xff; // TTL
    masked_ip[10] = 0xff;
    masked_ip[11] = 0xff;
    let mut masked_udp = udp.clone();
    masked_udp[6] = 0xff;
    masked_udp[7] = 0xff;
    let mut masked_bth = bth.clone();
    masked_bth[4] = 0xff;
    let icrc = crc32(
        [0xffu8; 8]
            .into_iter()
            .chain(masked_ip)
            .chain(masked_udp)
            .chain(masked_bth)
            .chain(headers.iter().copied())
            .chain(payload.iter().copied())
            .chain(std::iter::repeat_n(0, pad)),
    );

    let mut f = Vec::with_capacity(14 + ip_len);
    f.extend_from_slice(&dst_mac);
    f.extend_from_slice(&src_mac);
    f.extend_from_slice(&[0x08, 0x00]);
    f.extend_from_slice(&ip);
    f.extend_from_slice(&udp);
    f.extend_from_slice(&bth);
    f.extend_from_slice(headers);
    f.extend_from_slice(payload);
    f.extend(std::iter::repeat_n(0, pad));
    f.extend_from_slice(&icrc.to_le_bytes());
    f
}

/// One RoCEv2 frame carrying `payload` as an RC SEND Only.
pub fn rocev2_frame(from_us: bool, psn: u32, payload: &[u8]) -> Vec<u8> {
    let dest_qp = if from_us { PEER_QPN } else { OUR_QPN };
    rocev2_packet(from_us, op::SEND_ONLY, dest_qp, psn, &[], payload)
}

/// RETH: virtual address, R_key, DMA length.
fn reth(va: u64, rkey: u32, len: u32) -> Vec<u8> {
    let mut h = va.to_be_bytes().to_vec();
    h.extend_from_slice(&rkey.to_be_bytes());
    h.extend_from_slice(&len.to_be_bytes());
    h
}

/// AETH: an ACK syndrome (no credit limit) and the MSN.
fn aeth(msn: u32) -> Vec<u8> {
    let mut h = vec![0x1f];
    h.extend_from_slice(&(msn & 0xff_ffff).to_be_bytes()[1..]);
    h
}

/// The IPv4-mapped GID RoCEv2 uses for an address.
fn gid(ip: [u8; 4]) -> [u8; 16] {
    let mut g = [0u8; 16];
    g[10] = 0xff;
    g[11] = 0xff;
    g[12..].copy_from_slice(&ip);
    g
}

/// The IB MTU enumeration (IBA 9.7: 1 = 256 ... 5 = 4096) nearest below `mtu`.
fn mtu_code(mtu: usize) -> u8 {
    match mtu {
        0..=511 => 1,
        512..=1023 => 2,
        1024..=2047 => 3,
        2048..=4095 => 4,
        _ => 5,
    }
}

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

    /// A CM MAD (IBA 16.7 / 12.6) from one side's QP1 to the other's: UD SEND Only with a
    /// DETH, the MAD common header, and the CM message `data` (232 bytes).
    fn mad(&mut self, at: Duration, from_us: bool, attribute: u16, tid: u64, data: &[u8; 232]) {
        let mut deth = 0x8001_0000u32.to_be_bytes().to_vec(); // the GSI Q_Key
        deth.extend_from_slice(&[0, 0, 0, 1]); // source QP1
        let mut mad = vec![1, 0x07, 2, 0x03, 0, 0, 0, 0]; // base version, CM class v2, Send
        mad.extend_from_slice(&tid.to_be_bytes());
        mad.extend_from_slice(&attribute.to_be_bytes());
        mad.extend_from_slice(&[0, 0, 0, 0, 0, 0]);
        mad.extend_from_slice(data);
        let frame = rocev2_packet(from_us, op::UD_SEND_ONLY, 1, 0, &deth, &mad);
        self.record(at, &frame);
    }

    /// The RDMA-CM exchange: REQ (RDMA-CM IP header and the active side's private data),
    /// then REP (the passive side's private data) and RTU, or REJ.
    fn connect(&mut self, at: Duration, cm: &CmExchange) {
        self.connections += 1;
        self.psn = [0, 0];
        self.msn = [0, 0];
        let active_us = cm.we_are_active;
        let (active_ip, passive_ip) = if active_us { (OUR_IP, PEER_IP) } else { (PEER_IP, OUR_IP) };
        let (active_qpn, passive_qpn) = if active_us { (OUR_QPN, PEER_QPN) } else { (PEER_QPN, OUR_QPN) };
        let active_id = 0x1000_0000 | self.connections;
        let passive_id = 0x2000_0000 | self.connections;
        let tid = 0x0000_0001_0000_0000 | self.connections as u64;
        let mtu = mtu_code(self.mtu);

        let mut req = [0u8; 232];
        req[0..4].copy_from_slice(&active_id.to_be_bytes());
        // Service ID: RDMA-CM IP service, TCP port space (0x0106), the NFS-over-RDMA port.
        req[8..16].copy_from_slice(&(0x0000_0000_0106_0000u64 | SERVICE_PORT as u64).to_be_bytes());
        req[16..24].copy_from_slice(&[0x02, 0, 0, 0xff, 0xfe, 0, 0, active_ip[3]]); // CA GUID
        req[32..35].copy_from_slice(&active_qpn.to_be_bytes()[1..]);
        req[35] = 16; // responder resources
        req[39] = 16; // initiator depth
        req[43] = 0x10 << 3 | 0x01; // remote CM response timeout; RC; end-to-end flow control
        req[47] = 0x10 << 3 | 7; // starting PSN 0, local CM response timeout, retry count 7
        req[48..50].copy_from_slice(&0xffffu16.to_be_bytes());
        req[50] = mtu << 4 | 7; // path MTU, RNR retry count 7
        req[51] = 15 << 4; // max CM retries
                           // Routed (RoCEv2) paths carry the permissive LID, as Linux's CM sends them.
        req[52..56].copy_from_slice(&[0xff; 4]);
        req[56..72].copy_from_slice(&gid(active_ip));
        req[72..88].copy_from_slice(&gid(passive_ip));
        req[93] = 64; // hop limit
        req[95] = 18 << 3; // local ACK timeout

        // The alternate path (96..140) is unused. Private data (140..232): the RDMA-CM header
        // (version, IPv4, source port, addresses), then the consumer's 56 bytes.
        req[140] = 0;
        req[141] = 4 << 4;
        req[142..144].copy_from_slice(&0xc350u16.to_be_bytes());
        req[144..160].copy_from_slice(&gid(active_ip));
        req[160..176].copy_from_slice(&gid(passive_ip));
        let n = cm.req.len().min(56);
        req[176..176 + n].copy_from_slice(&cm.req[..n]);
        self.mad(at, active_us, CM_REQ, tid, &req);

        match &cm.rep {
            Some(pd) => {
                let mut rep = [0u8; 232];
                rep[0..4].copy_from_slice(&passive_id.to_be_bytes());
                rep[4..8].copy_from_slice(&active_id.to_be_bytes());
                rep[12..15].copy_from_slice(&passive_qpn.to_be_bytes()[1..]);
                rep[24] = 16; // responder resources
                rep[25] = 16; // initiator depth
                rep[26] = 0x10 << 3 | 1; // target ACK delay; end-to-end flow control
                rep[27] = 7 << 5; // RNR retry count
                rep[28..36].copy_from_slice(&[0x02, 0, 0, 0xff, 0xfe, 0, 0, passive_ip[3]]);
                let n = pd.len().min(196);
                rep[36..36 + n].copy_from_slice(&pd[..n]);
                self.mad(at, !active_us, CM_REP, tid, &rep);
                let mut rtu = [0u8; 232];
                rtu[0..4].copy_from_slice(&active_id.to_be_bytes());
                rtu[4..8].copy_from_slice(&passive_id.to_be_bytes());
                self.mad(at, active_us, CM_RTU, tid, &rtu);
            }
            None => {
                let mut rej = [0u8; 232];
                rej[4..8].copy_from_slice(&active_id.to_be_bytes());
                rej[10..12].copy_from_slice(&28u16.to_be_bytes()); // consumer reject
                self.mad(at, !active_us, CM_REJ, tid, &rej);
            }
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
/// (its CM exchanges, the requester's calls, our RDMA Reads and Writes, our replies).
pub fn observed(conns: &[ObservedConnection], start_unix: u64) -> Vec<u8> {
    let served: Vec<Served<'_>> = conns.iter().map(Served::of).collect();
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
    use super::*;

    #[test]
    fn crc32_check_value() {
        // The standard CRC-32 check value for "123456789".
        assert_eq!(crc32(*b"123456789"), 0xcbf4_3926);
    }

    #[test]
    fn frame_layout() {
        let f = rocev2_frame(true, 7, &[1, 2, 3, 4, 5]);
        // 14 Ethernet + 20 IPv4 + 8 UDP + 12 BTH + 5 payload + 3 pad + 4 ICRC
        assert_eq!(f.len(), 66);
        assert_eq!(&f[12..14], &[0x08, 0x00]);
        assert_eq!(&f[36..38], &4791u16.to_be_bytes());
        assert_eq!(f[42], op::SEND_ONLY);
        assert_eq!(f[43] >> 4 & 3, 3, "pad count");
        assert_eq!(&f[51..54], &[0, 0, 7], "PSN");
        assert_eq!(ip_checksum(&f[14..34]), 0, "a valid header sums to zero");
    }

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
