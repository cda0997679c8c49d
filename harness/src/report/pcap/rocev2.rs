//! RoCEv2 framing (IBA Annex A17): Ethernet / IPv4 / UDP 4791 / BTH / extension headers /
//! payload / pad / ICRC, between our side and the peer.

/// Our side and the peer, as the capture shows them.
pub(super) const OUR_IP: [u8; 4] = [10, 55, 0, 2];
pub(super) const PEER_IP: [u8; 4] = [10, 55, 0, 1];
const OUR_MAC: [u8; 6] = [0x02, 0, 0, 0, 0, 2];
const PEER_MAC: [u8; 6] = [0x02, 0, 0, 0, 0, 1];
pub(super) const OUR_QPN: u32 = 0x11;
pub(super) const PEER_QPN: u32 = 0x12;
const ROCEV2_PORT: u16 = 4791;

/// BTH opcodes (IBA 9.2, table 38): Reliable Connection, and UD SEND Only for MADs.
pub(super) mod op {
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
pub(super) fn rocev2_packet(
    from_us: bool,
    opcode: u8,
    dest_qp: u32,
    psn: u32,
    headers: &[u8],
    payload: &[u8],
) -> Vec<u8> {
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
pub(super) fn reth(va: u64, rkey: u32, len: u32) -> Vec<u8> {
    let mut h = va.to_be_bytes().to_vec();
    h.extend_from_slice(&rkey.to_be_bytes());
    h.extend_from_slice(&len.to_be_bytes());
    h
}

/// AETH: an ACK syndrome (no credit limit) and the MSN.
pub(super) fn aeth(msn: u32) -> Vec<u8> {
    let mut h = vec![0x1f];
    h.extend_from_slice(&(msn & 0xff_ffff).to_be_bytes()[1..]);
    h
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
}
