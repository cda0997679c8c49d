//! Each check's conversation as a Wireshark-readable capture: every message an RDMA Send,
//! framed as RoCEv2 (Ethernet / IPv4 / UDP 4791 / InfiniBand BTH SEND_ONLY / payload / ICRC).

use rpcrdma_conformance::engine::ctx::{Direction, TranscriptEntry};

/// The requester (us) and the responder, as the capture shows them.
const OUR_IP: [u8; 4] = [10, 55, 0, 2];
const PEER_IP: [u8; 4] = [10, 55, 0, 1];
const OUR_MAC: [u8; 6] = [0x02, 0, 0, 0, 0, 2];
const PEER_MAC: [u8; 6] = [0x02, 0, 0, 0, 0, 1];
const OUR_QPN: u32 = 0x11;
const PEER_QPN: u32 = 0x12;
const ROCEV2_PORT: u16 = 4791;
/// BTH opcode: RC SEND Only (IBA 9.2).
const RC_SEND_ONLY: u8 = 0x04;

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

/// One RoCEv2 frame carrying `payload` as an RC SEND Only.
pub fn rocev2_frame(from_us: bool, psn: u32, payload: &[u8]) -> Vec<u8> {
    let (src_mac, dst_mac, src_ip, dst_ip, dst_qp) = if from_us {
        (OUR_MAC, PEER_MAC, OUR_IP, PEER_IP, PEER_QPN)
    } else {
        (PEER_MAC, OUR_MAC, PEER_IP, OUR_IP, OUR_QPN)
    };
    let pad = (4 - payload.len() % 4) % 4;
    let ib_len = 12 + payload.len() + pad + 4;
    let udp_len = 8 + ib_len;
    let ip_len = 20 + udp_len;

    let mut ip = vec![0x45, 0, (ip_len >> 8) as u8, ip_len as u8, 0, 0, 0x40, 0, 64, 17, 0, 0];
    ip.extend_from_slice(&src_ip);
    ip.extend_from_slice(&dst_ip);
    let c = ip_checksum(&ip);
    ip[10..12].copy_from_slice(&c.to_be_bytes());

    let src_port: u16 = 0xc000 | (dst_qp as u16 & 0x3fff);
    let mut udp = Vec::with_capacity(8);
    udp.extend_from_slice(&src_port.to_be_bytes());
    udp.extend_from_slice(&ROCEV2_PORT.to_be_bytes());
    udp.extend_from_slice(&(udp_len as u16).to_be_bytes());
    udp.extend_from_slice(&[0, 0]);

    // BTH: opcode, SE/M/PadCnt/TVer, P_Key, resv8, DestQP, A/resv7, PSN.
    let mut bth = vec![RC_SEND_ONLY, (pad as u8) << 4, 0xff, 0xff, 0];
    bth.extend_from_slice(&dst_qp.to_be_bytes()[1..]);
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
    f.extend_from_slice(payload);
    f.extend(std::iter::repeat_n(0, pad));
    f.extend_from_slice(&icrc.to_le_bytes());
    f
}

/// A classic pcap file (LINKTYPE_ETHERNET) of the messages in a transcript.
pub fn capture(transcript: &[TranscriptEntry], start_unix: u64) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(&0xa1b2_c3d4u32.to_le_bytes());
    out.extend_from_slice(&2u16.to_le_bytes());
    out.extend_from_slice(&4u16.to_le_bytes());
    out.extend_from_slice(&0i32.to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes());
    out.extend_from_slice(&262_144u32.to_le_bytes());
    out.extend_from_slice(&1u32.to_le_bytes());
    let (mut our_psn, mut peer_psn) = (0u32, 0u32);
    for e in transcript {
        let from_us = match e.direction {
            Direction::Sent => true,
            Direction::Received => false,
            Direction::Event => continue,
        };
        let psn = if from_us { &mut our_psn } else { &mut peer_psn };
        let frame = rocev2_frame(from_us, *psn, &e.bytes);
        *psn += 1;
        let ts = start_unix * 1_000_000 + e.at.as_micros() as u64;
        out.extend_from_slice(&((ts / 1_000_000) as u32).to_le_bytes());
        out.extend_from_slice(&((ts % 1_000_000) as u32).to_le_bytes());
        out.extend_from_slice(&(frame.len() as u32).to_le_bytes());
        out.extend_from_slice(&(frame.len() as u32).to_le_bytes());
        out.extend_from_slice(&frame);
    }
    out
}

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
        assert_eq!(f[42], RC_SEND_ONLY);
        assert_eq!(f[43] >> 4 & 3, 3, "pad count");
        assert_eq!(&f[51..54], &[0, 0, 7], "PSN");
        assert_eq!(ip_checksum(&f[14..34]), 0, "a valid header sums to zero");
    }
}
