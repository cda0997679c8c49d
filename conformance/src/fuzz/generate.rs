//! Fresh messages: mostly well-formed calls of every shape the protocol has (short and long
//! calls, read chunks at the call's end, write lists, reply chunks, Version Two envelopes,
//! the forbidden procedures), so mutation starts from inputs a peer takes seriously.

use rpcrdma_peers::proto::nfs3::{NFSPROC3_NULL, NFS_PROGRAM, NFS_V3};

use super::input::{Form, ReadSeg, RpcSpec, Seg, Spec};
use super::rng::Rng;

/// A well-formed NFSv3 NULL call, RDMA_MSG, no chunks.
pub fn null_call(xid: u32, credit: u32) -> Spec {
    Spec {
        xid,
        vers: 1,
        credit,
        proc_override: None,
        form: Form::Msg,
        direction: Some(0),
        reads: Vec::new(),
        writes: Vec::new(),
        reply: None,
        rpc: Some(RpcSpec {
            xid_xor: 0,
            rpcvers: 2,
            prog: NFS_PROGRAM,
            vers: NFS_V3,
            proc_: NFSPROC3_NULL,
            args: Vec::new(),
        }),
        long_call: false,
        edits: Vec::new(),
        truncate: None,
    }
}

/// A segment length: small and word-sized mostly.
pub fn seg_len(rng: &mut Rng) -> u32 {
    match rng.below(4) {
        0 => 4 * (1 + rng.below(8) as u32),
        1 => 64,
        2 => 1 + rng.below(512) as u32,
        _ => 4096,
    }
}

/// A chunk of 1..=3 well-formed segments.
pub fn chunk(rng: &mut Rng) -> Vec<Seg> {
    (0..1 + rng.below(3)).map(|_| Seg::exact(seg_len(rng))).collect()
}

/// A fresh message with rdma_xid `xid`.
pub fn message(rng: &mut Rng, xid: u32) -> Spec {
    let mut s = null_call(xid, rng.pick(&[0, 1, 8, 32, 32, 32, 32, 128]));
    if let Some(r) = &mut s.rpc {
        // NFSv3 procedures the reference peer serves (NULL, GETATTR, READ, READDIR...) and
        // programs or procedures it does not.
        r.proc_ = rng.pick(&[0, 0, 0, 1, 3, 6, 16, 17, 21, 22]);
        if rng.chance(1, 8) {
            r.prog = rng.pick(&[100005, 100227, 400122, 0x4000_0000]);
        }
        let n = rng.pick(&[0usize, 0, 4, 8, 32, 64, 200]);
        r.args = (0..n).map(|i| if rng.chance(1, 2) { 0 } else { i as u8 }).collect();
    }
    // Write chunks and a reply chunk, independently.
    if rng.chance(1, 3) {
        // Mostly the one to four chunks requesters send; sometimes more.
        let n = 1 + if rng.chance(1, 4) { rng.below(8) } else { rng.below(4) };
        s.writes = (0..n).map(|_| chunk(rng)).collect();
    }
    if rng.chance(1, 4) {
        s.reply = Some(chunk(rng));
    }
    match rng.below(10) {
        // A Long Call: RDMA_NOMSG with the call in position-zero read segments.
        0 | 1 => {
            let len = s.rpc_bytes().map_or(0, |b| b.len()) as u32;
            let cut =
                if len > 8 && rng.chance(1, 2) { 4 * (1 + rng.below((len / 4 - 1) as usize) as u32) } else { len };
            s.reads.push(ReadSeg { position: 0, seg: Seg::exact(cut) });
            if cut < len {
                s.reads.push(ReadSeg { position: 0, seg: Seg::exact(len - cut) });
            }
            s.long_call = true;
            s.form = Form::NoMsg;
        }
        // A data item at the end of the call (a WRITE's data).
        2 => {
            let pos = s.rpc_bytes().map_or(0, |b| b.len()) as u32;
            s.reads.push(ReadSeg { position: pos, seg: Seg::exact(seg_len(rng)) });
        }
        // Version Two.
        3 => {
            s.vers = 2;
            if rng.chance(1, 4) {
                s.form = Form::Optional { opttype: rng.pick(&[1, 2, 3, 4, 9, 99, 0xffff]) };
            }
        }
        // The procedures a requester must not send.
        4 => {
            s.form = match rng.below(3) {
                0 => Form::MsgP { align: rng.pick(&[0, 4, 8, 4096]), thresh: rng.pick(&[0, 1024, 4096]) },
                1 => Form::Done,
                _ => Form::Error { code: rng.pick(&[1, 2, 3]) },
            };
        }
        _ => {}
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use rpcrdma_codec::check::{Role, Violations};
    use rpcrdma_codec::v1::Message;
    use rpcrdma_codec::Profile;

    #[test]
    fn the_null_call_is_well_formed() {
        let w = null_call(9, 32).encode();
        let m = Message::decode(&w.bytes, &Profile::default()).unwrap();
        assert!(Violations::of(&m, Role::Call).is_empty());
        assert_eq!(m.payload.len(), 40, "an RPC call header with AUTH_NONE and no arguments");
    }

    #[test]
    fn generated_version_one_messages_mostly_decode() {
        let mut rng = Rng::new(3);
        let (mut v1, mut ok) = (0, 0);
        for i in 0..300 {
            let s = message(&mut rng, i);
            if s.vers == 1 {
                v1 += 1;
                ok += usize::from(Message::decode(&s.encode().bytes, &Profile::default()).is_ok());
            }
        }
        assert!(v1 > 150 && ok * 10 >= v1 * 9, "{ok} of {v1} decode");
    }
}
