//! Mutations of a case (a list of specs): field-aware changes to counts, positions, lengths,
//! handles, offsets, discriminators, orderings and overlaps, procedures and versions, the
//! RPC call, raw byte and word edits, and changes to the message list itself.

use super::generate;
use super::input::{Edit, Form, ReadSeg, Seg, Spec};
use super::rng::Rng;

/// The most messages a case holds (well under the credits we are granted).
pub const MAX_MESSAGES: usize = 4;

/// Applies 1..=3 mutations to `case`; `donor` is another corpus case to splice from.
pub fn mutate(rng: &mut Rng, case: &mut Vec<Spec>, donor: Option<&[Spec]>, next_xid: &mut impl FnMut() -> u32) {
    for _ in 0..1 + rng.below(3) {
        match rng.below(13) {
            // A credit pattern across the case: every message asks for the same odd value.
            12 => {
                let c = rng.pick(&[0, 0, 1, 2, 0xffff_ffff, 0x8000_0000]);
                for m in case.iter_mut() {
                    m.credit = c;
                }
            }
            0 if case.len() < MAX_MESSAGES => {
                let i = rng.below(case.len() + 1);
                let m = match donor {
                    Some(d) if !d.is_empty() && rng.chance(1, 2) => d[rng.below(d.len())].clone(),
                    _ => generate::message(rng, next_xid()),
                };
                case.insert(i, m);
            }
            1 if case.len() > 1 => {
                let i = rng.below(case.len());
                case.remove(i);
            }
            2 if case.len() < MAX_MESSAGES && !case.is_empty() => {
                let i = rng.below(case.len());
                let m = case[i].clone();
                case.insert(i, m);
            }
            _ if !case.is_empty() => {
                let i = rng.below(case.len());
                message(rng, &mut case[i]);
            }
            _ => case.push(generate::message(rng, next_xid())),
        }
    }
}

/// One field-aware mutation of a message.
pub fn message(rng: &mut Rng, s: &mut Spec) {
    match rng.below(21) {
        0 => s.vers = rng.pick(&[0, 1, 1, 2, 3, 0xffff_ffff]),
        1 => s.credit = if rng.chance(1, 2) { rng.pick(&[0, 1, 2, 0xffff_ffff]) } else { rng.interesting_u32() },
        2 => s.proc_override = Some(if rng.chance(1, 2) { rng.below(6) as u32 } else { rng.interesting_u32() }),
        3 => {
            s.form = match rng.below(6) {
                0 => Form::Msg,
                1 => Form::NoMsg,
                2 => Form::MsgP { align: rng.interesting_u32(), thresh: rng.interesting_u32() },
                3 => Form::Done,
                4 => Form::Error { code: rng.interesting_u32() },
                _ => Form::Optional { opttype: rng.interesting_u32() },
            }
        }
        4 => s.direction = if rng.chance(1, 4) { None } else { Some(rng.pick(&[0, 1, 2, 0xffff_ffff])) },
        // Read list: add, drop, move, reorder.
        5 => {
            let pos = match rng.below(5) {
                0 => 0,
                1 => s.rpc_bytes().map_or(0, |b| b.len()) as u32,
                2 => 4 * rng.below(64) as u32 + rng.pick(&[0, 0, 1, 2]),
                3 => rng.interesting_u32(),
                _ => rng.u32() >> rng.below(28),
            };
            let at = rng.below(s.reads.len() + 1);
            s.reads.insert(at, ReadSeg { position: pos, seg: Seg::exact(generate::seg_len(rng)) });
        }
        6 if !s.reads.is_empty() => {
            let i = rng.below(s.reads.len());
            match rng.below(3) {
                0 => {
                    s.reads.remove(i);
                }
                1 => {
                    s.reads[i].position =
                        if rng.chance(1, 2) { rng.interesting_u32() } else { rng.u32() >> rng.below(24) }
                }
                _ => {
                    let j = rng.below(s.reads.len());
                    s.reads.swap(i, j);
                }
            }
        }
        // Write list: chunk counts, segment counts, orderings.
        7 => {
            let at = rng.below(s.writes.len() + 1);
            s.writes.insert(at, generate::chunk(rng));
        }
        8 if !s.writes.is_empty() => {
            let i = rng.below(s.writes.len());
            match rng.below(4) {
                0 => {
                    s.writes.remove(i);
                }
                1 => s.writes[i].push(Seg::exact(generate::seg_len(rng))),
                2 => s.writes[i].clear(),
                _ => {
                    let j = rng.below(s.writes.len());
                    s.writes.swap(i, j);
                }
            }
        }
        9 => {
            s.reply = match s.reply.take() {
                Some(_) if rng.chance(1, 2) => None,
                Some(mut c) => {
                    c.push(Seg::exact(generate::seg_len(rng)));
                    Some(c)
                }
                None => Some(generate::chunk(rng)),
            }
        }
        // One segment's fields.
        10..=12 => {
            if let Some(seg) = any_segment(rng, s) {
                match rng.below(7) {
                    6 => seg.share = Some(rng.below(6) as u8),
                    0 => seg.length = rng.interesting_u32(),
                    1 => seg.length = seg.length.wrapping_add(rng.pick(&[1, 3, 4, 0xffff_ffff])),
                    2 => seg.at = rng.pick(&[-(super::input::GUARD as i32), -8, -1, 1, 4, 8]),
                    3 => seg.handle_xor = rng.u32() | 1,
                    4 => {
                        let n = generate::seg_len(rng);
                        *seg = Seg::exact(n);
                    }
                    _ => seg.region_len = seg.region_len.saturating_add(rng.pick(&[4, 16, 64])),
                }
            }
        }
        // The RPC call.
        13 => {
            if let Some(r) = &mut s.rpc {
                match rng.below(6) {
                    0 => r.xid_xor = rng.u32() | 1,
                    1 => r.rpcvers = rng.pick(&[0, 1, 3, 0xffff_ffff]),
                    2 => r.prog = rng.interesting_u32(),
                    3 => r.vers = rng.interesting_u32(),
                    4 => r.proc_ = rng.pick(&[0, 1, 3, 6, 16, 17, 21, 22, 23, 0xffff_ffff]),
                    _ => {
                        let n = rng.below(r.args.len() + 1);
                        r.args.truncate(n);
                        r.args.extend((0..rng.below(16)).map(|_| rng.u32() as u8));
                    }
                }
            }
        }
        14 => s.rpc = None,
        15 => s.long_call = !s.long_call,
        16 => s.edits.push(Edit::Byte { at: rng.below(512) as u16, xor: (rng.u32() as u8) | 1 }),
        17 => s.edits.push(Edit::Word { index: rng.below(32) as u16, value: rng.interesting_u32() }),
        18 => s.truncate = Some(rng.below(160) as u16),
        19 if !s.writes.is_empty() || s.reply.is_some() => {
            let value = if rng.chance(2, 3) { rng.interesting_u32() } else { rng.below(8) as u32 };
            let chunk = if rng.chance(1, 2) { 0 } else { rng.below(4) as u8 };
            s.edits.push(Edit::SegmentCount { chunk, value });
        }
        _ => s.xid = s.xid.wrapping_add(1),
    }
}

fn any_segment<'a>(rng: &mut Rng, s: &'a mut Spec) -> Option<&'a mut Seg> {
    let mut all: Vec<&'a mut Seg> = Vec::new();
    all.extend(s.reads.iter_mut().map(|r| &mut r.seg));
    all.extend(s.writes.iter_mut().flatten());
    if let Some(c) = &mut s.reply {
        all.extend(c.iter_mut());
    }
    if all.is_empty() {
        return None;
    }
    let i = rng.below(all.len());
    Some(all.swap_remove(i))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mutation_changes_cases_and_keeps_them_small() {
        let mut rng = Rng::new(11);
        let mut xid = 100;
        let mut next = || {
            xid += 1;
            xid
        };
        let base = vec![generate::null_call(1, 32)];
        let mut changed = 0;
        for _ in 0..200 {
            let mut c = base.clone();
            mutate(&mut rng, &mut c, None, &mut next);
            assert!(!c.is_empty() && c.len() <= MAX_MESSAGES);
            changed += usize::from(c != base);
            for m in &c {
                let _ = m.encode();
            }
        }
        assert!(changed > 150, "only {changed} of 200 mutations changed the case");
    }
}
