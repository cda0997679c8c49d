//! Fresh messages: mostly well-formed calls of every shape the protocol has (short and long
//! calls, NFSv3 WRITEs whose data is in a read chunk, write lists, reply chunks, Version Two
//! envelopes, the forbidden procedures), so mutation starts from inputs a peer takes seriously.

use rpcrdma_peers::proto::nfs3::{self, NFSPROC3_NULL, NFSPROC3_WRITE, NFS_PROGRAM, NFS_V3, ROOT_FH};

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
        // An NFSv3 WRITE whose data, the one DDP-eligible argument (RFC 8267 4), is in a read
        // chunk: inline, the arguments up to the data's length word (RFC 8166 3.4.4.1); the
        // chunk at the data's position, right after that word (3.4.5), without the data's
        // roundup padding (3.4.5.2). Nothing more is drawn than the chunk's length, so every
        // other message of a seed stays as it was: the root's handle (a directory on every
        // peer: the call is decoded and its chunk pulled, then NFS3ERR_ISDIR, the export
        // untouched) and the discarded arguments' length as the offset.
        2 => {
            let len = seg_len(rng);
            if let Some(r) = &mut s.rpc {
                let offset = r.args.len() as u64;
                (r.prog, r.vers, r.proc_) = (NFS_PROGRAM, NFS_V3, NFSPROC3_WRITE);
                r.args = nfs3::write_args_split(&ROOT_FH, offset, &vec![0; len as usize]);
            }
            let pos = s.rpc_bytes().map_or(0, |b| b.len()) as u32;
            s.reads.push(ReadSeg { position: pos, seg: Seg::exact(len) });
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
    use crate::frame::rpc::RpcKind;
    use crate::fuzz::execute::well_formed;
    use crate::fuzz::input::Wire;
    use rpcrdma_codec::check::{Role, Violations};
    use rpcrdma_codec::rpc::{AcceptStat, RpcHeader, RpcMessage};
    use rpcrdma_codec::v1::{Body, Message};
    use rpcrdma_codec::xdr::Reader;
    use rpcrdma_codec::Profile;
    use rpcrdma_peers::transport::Region;

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

    /// FNV-1a (64 bits) of `bytes`, continued from `h`.
    fn fnv(mut h: u64, bytes: &[u8]) -> u64 {
        for b in bytes {
            h = (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3);
        }
        h
    }

    /// A message with a data chunk: the only kind [`message`] gives a read chunk at a
    /// non-zero position.
    fn carries_data(s: &Spec) -> bool {
        s.reads.iter().any(|r| r.position != 0)
    }

    /// The digest of `seed`'s first `n` messages: each one's encoding (a data-chunk message's
    /// without its RPC call and positions), and the generator's state after it.
    fn sequence_digest(seed: u64, n: u32) -> u64 {
        let mut rng = Rng::new(seed);
        let mut h = 0xcbf2_9ce4_8422_2325;
        for i in 0..n {
            let mut s = message(&mut rng, i);
            if carries_data(&s) {
                s.rpc = None;
                s.reads.iter_mut().for_each(|r| r.position = 0);
            }
            let w = s.encode();
            h = fnv(h, &w.bytes);
            for r in &w.regions {
                h = fnv(h, &r.contents);
            }
            h = fnv(h, &rng.clone().next_u64().to_be_bytes());
        }
        h
    }

    /// The change that made the data-chunk message a WRITE drew nothing new: every other
    /// message of a seed, and the generator's state after each message, are as before it. The
    /// digests were computed by [`sequence_digest`] over the generator before that change
    /// (commit 79fa429, whose data-chunk message was the drawn call with a chunk at its end).
    #[test]
    fn other_messages_and_the_draws_are_as_before_the_write() {
        let before = [(1, 0x69a5_61e7_55ad_d697), (2, 0xe4f1_6ca2_c59a_d967), (3, 0x15d1_6ea2_befe_cbe1)];
        for (seed, digest) in before {
            assert_eq!(sequence_digest(seed, 2000), digest, "seed {seed}");
        }
    }

    /// Each chunk's region and coordinates as a peer would see them: the bytes with made-up
    /// handles and addresses, the regions, their contents.
    fn bound(w: &Wire) -> (Vec<u8>, Vec<Region>, Vec<&[u8]>) {
        let regions: Vec<Region> = (0..w.regions.len())
            .map(|k| Region {
                handle: 0x100 + k as u32,
                offset: 0x10_0000 * (k as u64 + 1),
                length: w.regions[k].contents.len() as u32,
            })
            .collect();
        let coords: Vec<(u32, u64)> = regions.iter().map(|r| (r.handle, r.offset)).collect();
        (w.bind(&coords), regions, w.regions.iter().map(|r| r.contents.as_slice()).collect())
    }

    /// The data-chunk messages among `seed`'s first `n`.
    fn data_messages(seed: u64, n: u32) -> Vec<Spec> {
        let mut rng = Rng::new(seed);
        (0..n).map(|i| message(&mut rng, i)).filter(carries_data).collect()
    }

    /// RFC 1813 3.3.7 WRITE3args { file: nfs_fh3 (opaque<64>), offset: uint64, count: uint32,
    /// stable: stable_how, data: opaque<> }, its data reduced (RFC 8267 4): the data's length
    /// word stays inline, the bytes and their padding go (RFC 8166 3.4.4.1, 3.4.4.4), and the
    /// chunk's position is where they were, the chunk exactly the data (3.4.5, 3.4.5.2).
    #[test]
    fn a_data_chunk_is_a_write_s_data() {
        let mut seen = 0;
        for seed in 1..=3 {
            for s in data_messages(seed, 400) {
                let w = s.encode();
                let (bytes, regions, contents) = bound(&w);
                assert!(well_formed(&bytes, &regions, &contents, 4096, &Profile::default()), "{s:?}");
                let m = Message::decode(&bytes, &Profile::default()).unwrap();
                assert!(Violations::of(&m, Role::Call).is_empty(), "{s:?}");
                let Body::Msg(chunks) = m.header.body else { panic!("{s:?}") };
                let reads: Vec<_> = chunks.reads.segments().collect();
                let RpcMessage { header: RpcHeader::Call(c), body, body_offset } =
                    RpcMessage::decode(m.payload).unwrap()
                else {
                    panic!("{s:?}")
                };
                assert_eq!((c.prog, c.vers, c.proc_), (100003, 3, 7), "{s:?}");
                let mut r = Reader::new(body);
                let file = r.opaque("file", 64).unwrap();
                let (_offset, count, stable) =
                    (r.u64("offset").unwrap(), r.u32("count").unwrap(), r.u32("stable").unwrap());
                let data_len = r.u32("data length").unwrap();
                let data_at = body_offset + body.len() - r.remaining();
                // Nothing after the length word: the data and its padding are in the chunk.
                assert_eq!(r.remaining(), 0, "{s:?}");
                assert_eq!(file, ROOT_FH);
                assert!(stable <= 2 && count == data_len, "{s:?}");
                assert_eq!(reads.len(), 1, "{s:?}");
                assert_eq!((reads[0].position as usize, reads[0].target.length), (data_at, data_len), "{s:?}");
                seen += 1;
            }
        }
        assert!(seen > 60, "{seen} data-chunk messages");
    }

    /// The reference responder pulls the chunk and answers the call as a WRITE: NFS3ERR_ISDIR
    /// (the root is a directory), where the call it replaced drew ERR_CHUNK (RFC 8166 6.1).
    #[test]
    fn the_reference_responder_answers_a_data_chunk_message_as_a_write() {
        use crate::engine::RunOptions;
        use crate::fuzz::{Embedded, Target, Timing};
        use rpcrdma_peers::proto::nfs3::NFS3ERR_ISDIR;
        use rpcrdma_peers::responder::Faults;
        use std::time::Duration;
        let mut peer = Embedded::new(Faults::default());
        let options = RunOptions { timeout: Duration::from_secs(2), ..RunOptions::default() };
        let timing = Timing { reply: Duration::from_millis(400) };
        let data = data_messages(1, 200);
        assert!(data.len() >= 5, "{} data-chunk messages", data.len());
        for s in data.into_iter().take(5) {
            let obs = crate::fuzz::execute::run(peer.connector(), &options, timing, &[s.encode()]);
            assert_eq!(obs.well_formed, [true], "{s:?}");
            let reply = obs.replies.iter().find(|f| f.xid() == Some(s.xid)).expect("answered");
            let rpc = reply.rpc.as_ref().and_then(|r| r.as_ref().ok()).expect("an RPC reply inline");
            assert!(matches!(rpc.kind, RpcKind::Accepted(AcceptStat::Success)), "{}", rpc.summary);
            let results = &reply.bytes()[rpc.body.clone()];
            assert_eq!(nfs3::status(results), Some(NFS3ERR_ISDIR), "{}", rpc.summary);
        }
    }
}
