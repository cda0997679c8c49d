//! `serve --fuzz`: the responder replaces some of its replies with mutated copies, to see what
//! a real requester's reply parser does with them. Each mutation breaks one thing a requester
//! must check (RFC 8166 4.5: a header it cannot parse is discarded; 3.3.1: credits; 4.2.1:
//! the XID) and keeps the rest of the reply, so the parser gets past the fields before it.

use std::sync::Mutex;

use crate::rng::Rng;

/// The ways a reply is mutated, each named for reports and reproducers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Mutation {
    /// Cut short, anywhere from 0 bytes to one word less than the reply.
    Truncate,
    /// rdma_vers other than 1.
    Version,
    /// rdma_proc RDMA_MSGP, RDMA_DONE, or one no version defines.
    Procedure,
    /// rdma_credit 0, a huge value, or any.
    Credit,
    /// rdma_xid of no outstanding call.
    Xid,
    /// A chunk-list discriminator or count (read list, write list, segment count, reply
    /// chunk) replaced by any value.
    ChunkWord,
    /// One random bit flipped anywhere in the transport header.
    BitFlip,
    /// Extra bytes after the reply.
    Trailing,
}

impl Mutation {
    pub const ALL: [Mutation; 8] = [
        Mutation::Truncate,
        Mutation::Version,
        Mutation::Procedure,
        Mutation::Credit,
        Mutation::Xid,
        Mutation::ChunkWord,
        Mutation::BitFlip,
        Mutation::Trailing,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Mutation::Truncate => "truncate",
            Mutation::Version => "version",
            Mutation::Procedure => "procedure",
            Mutation::Credit => "credit",
            Mutation::Xid => "xid",
            Mutation::ChunkWord => "chunk-word",
            Mutation::BitFlip => "bit-flip",
            Mutation::Trailing => "trailing",
        }
    }
}

/// Mutates one reply in `one_in`, from a seeded generator shared by every connection of the
/// responder (so a seed names the sequence of mutations).
#[derive(Debug)]
pub struct ReplyFuzz {
    rng: Mutex<Rng>,
    one_in: u32,
}

impl ReplyFuzz {
    pub fn new(seed: u64, one_in: u32) -> Self {
        ReplyFuzz { rng: Mutex::new(Rng::new(seed)), one_in: one_in.max(1) }
    }

    /// A mutated copy of `reply` and how it was mutated, or None to send it as it is.
    pub fn mutate(&self, reply: &[u8]) -> Option<(Vec<u8>, Mutation)> {
        let mut rng = self.rng.lock().unwrap_or_else(|e| e.into_inner());
        if reply.len() < 16 || !rng.chance(1, self.one_in) {
            return None;
        }
        let m = rng.pick(&Mutation::ALL);
        let mut b = reply.to_vec();
        fn put(b: &mut [u8], at: usize, v: u32) {
            if b.len() >= at + 4 {
                b[at..at + 4].copy_from_slice(&v.to_be_bytes());
            }
        }
        match m {
            Mutation::Truncate => b.truncate(rng.below(reply.len() - 3)),
            Mutation::Version => put(&mut b, 4, rng.pick(&[0, 2, 7, u32::MAX])),
            Mutation::Procedure => put(&mut b, 12, rng.pick(&[2, 3, 5, 6, 0x8000_0000, u32::MAX])),
            Mutation::Credit => {
                let v = [0, 1, 0xffff, 0x0001_0000, u32::MAX, rng.u32()];
                put(&mut b, 8, rng.pick(&v))
            }
            Mutation::Xid => {
                let x = u32::from_be_bytes([b[0], b[1], b[2], b[3]]) ^ (1 + rng.u32() % 0xffff);
                put(&mut b, 0, x)
            }
            Mutation::ChunkWord => {
                // The words after the fixed header hold the chunk lists of RDMA_MSG/NOMSG.
                let words = (reply.len().min(64) - 16) / 4;
                let at = 16 + 4 * rng.below(words.max(1));
                let any = rng.u32();
                put(&mut b, at, rng.pick(&[2, 0xffff, 0x7fff_ffff, u32::MAX, any]))
            }
            Mutation::BitFlip => {
                let at = rng.below(reply.len().min(64));
                b[at] ^= 1 << rng.below(8);
            }
            Mutation::Trailing => {
                let n = 4 * (1 + rng.below(8));
                b.extend((0..n).map(|_| rng.u32() as u8));
            }
        }
        (b != reply).then_some((b, m))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply() -> Vec<u8> {
        let mut r = Vec::new();
        for w in [0x1234_5678u32, 1, 32, 0, 0, 0, 0, 0x1234_5678, 1, 0] {
            r.extend_from_slice(&w.to_be_bytes());
        }
        r
    }

    #[test]
    fn every_mutation_comes_up_and_changes_what_it_names() {
        let f = ReplyFuzz::new(7, 1);
        let r = reply();
        let mut seen = std::collections::BTreeSet::new();
        for _ in 0..2000 {
            let Some((b, m)) = f.mutate(&r) else { continue };
            seen.insert(m);
            let word = |b: &[u8], at: usize| b.get(at..at + 4).map(|x| u32::from_be_bytes([x[0], x[1], x[2], x[3]]));
            match m {
                Mutation::Truncate => assert!(b.len() < r.len()),
                Mutation::Version => assert_ne!(word(&b, 4), Some(1)),
                Mutation::Procedure => assert!(word(&b, 12).is_some_and(|p| p > 1 && p != 4)),
                Mutation::Credit => assert_ne!(word(&b, 8), Some(32)),
                Mutation::Xid => assert_ne!(word(&b, 0), Some(0x1234_5678)),
                Mutation::ChunkWord => assert_eq!(b[..16], r[..16]),
                Mutation::BitFlip => assert_eq!(b.iter().zip(&r).filter(|(x, y)| x != y).count(), 1),
                Mutation::Trailing => assert!(b.len() > r.len() && b.starts_with(&r)),
            }
        }
        assert_eq!(seen.len(), Mutation::ALL.len(), "{seen:?}");
    }

    #[test]
    fn the_rate_and_the_seed_hold() {
        let f = ReplyFuzz::new(3, 4);
        let n = (0..4000).filter(|_| f.mutate(&reply()).is_some()).count();
        assert!((800..1200).contains(&n), "{n} of 4000 mutated at one in 4");
        let (a, b) = (ReplyFuzz::new(9, 1), ReplyFuzz::new(9, 1));
        for _ in 0..50 {
            assert_eq!(a.mutate(&reply()), b.mutate(&reply()));
        }
    }
}
