//! The RDMA-CM exchange as CM MADs (IBA 16.7 / 12.6) on QP1: REQ with the RDMA-CM IP header
//! and the active side's private data, then REP and RTU, or REJ (RFC 8797 4).

use rpcrdma_conformance::engine::ctx::CmExchange;

use super::rocev2::{op, rocev2_packet, OUR_IP, OUR_QPN, PEER_IP, PEER_QPN};

/// The NFS-over-RDMA port (RFC 8267), in the RDMA-CM service ID.
const SERVICE_PORT: u16 = 20049;

/// CM attribute IDs (IBA 16.7.5 / 12.6).
pub(super) const CM_REQ: u16 = 0x0010;
pub(super) const CM_REJ: u16 = 0x0012;
const CM_REP: u16 = 0x0013;
const CM_RTU: u16 = 0x0014;

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

/// A CM MAD from one side's QP1 to the other's: UD SEND Only with a DETH, the MAD common
/// header, and the CM message `data` (232 bytes).
fn mad(from_us: bool, attribute: u16, tid: u64, data: &[u8; 232]) -> Vec<u8> {
    let mut deth = 0x8001_0000u32.to_be_bytes().to_vec(); // the GSI Q_Key
    deth.extend_from_slice(&[0, 0, 0, 1]); // source QP1
    let mut mad = vec![1, 0x07, 2, 0x03, 0, 0, 0, 0]; // base version, CM class v2, Send
    mad.extend_from_slice(&tid.to_be_bytes());
    mad.extend_from_slice(&attribute.to_be_bytes());
    mad.extend_from_slice(&[0, 0, 0, 0, 0, 0]);
    mad.extend_from_slice(data);
    rocev2_packet(from_us, op::UD_SEND_ONLY, 1, 0, &deth, &mad)
}

/// The frames of the `connection`th exchange (counting from 1: it makes the communication
/// and transaction IDs) at path MTU `mtu`: REQ, then REP and RTU, or REJ.
pub(super) fn exchange(cm: &CmExchange, connection: u32, mtu: usize) -> Vec<Vec<u8>> {
    let active_us = cm.we_are_active;
    let (active_ip, passive_ip) = if active_us { (OUR_IP, PEER_IP) } else { (PEER_IP, OUR_IP) };
    let (active_qpn, passive_qpn) = if active_us { (OUR_QPN, PEER_QPN) } else { (PEER_QPN, OUR_QPN) };
    let active_id = 0x1000_0000 | connection;
    let passive_id = 0x2000_0000 | connection;
    let tid = 0x0000_0001_0000_0000 | connection as u64;
    let mtu = mtu_code(mtu);

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

    let mut frames = vec![mad(active_us, CM_REQ, tid, &req)];
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
            frames.push(mad(!active_us, CM_REP, tid, &rep));
            let mut rtu = [0u8; 232];
            rtu[0..4].copy_from_slice(&active_id.to_be_bytes());
            rtu[4..8].copy_from_slice(&passive_id.to_be_bytes());
            frames.push(mad(active_us, CM_RTU, tid, &rtu));
        }
        None => {
            let mut rej = [0u8; 232];
            rej[4..8].copy_from_slice(&active_id.to_be_bytes());
            rej[10..12].copy_from_slice(&28u16.to_be_bytes()); // consumer reject
            frames.push(mad(!active_us, CM_REJ, tid, &rej));
        }
    }
    frames
}
