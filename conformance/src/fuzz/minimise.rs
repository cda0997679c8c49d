//! Minimising a finding: delta debugging over the message list, then over each message's
//! fields (segments, chunks, edits, arguments, lengths dropped or simplified one at a time),
//! keeping each change only while the finding still reproduces.

use super::input::{Form, Seg, Spec};

/// The simpler variants of one message, most drastic first.
fn simpler(s: &Spec) -> Vec<Spec> {
    let mut out = Vec::new();
    let mut push = |f: &dyn Fn(&mut Spec)| {
        let mut t = s.clone();
        f(&mut t);
        if t != *s {
            out.push(t);
        }
    };
    push(&|t| t.edits.clear());
    for i in 0..s.edits.len() {
        push(&|t| {
            t.edits.remove(i);
        });
    }
    push(&|t| t.truncate = None);
    push(&|t| t.reply = None);
    for i in 0..s.writes.len() {
        push(&|t| {
            t.writes.remove(i);
        });
    }
    for i in 0..s.reads.len() {
        push(&|t| {
            t.reads.remove(i);
        });
    }
    for (c, chunk) in s.writes.iter().enumerate() {
        for i in 0..chunk.len() {
            push(&|t| {
                t.writes[c].remove(i);
            });
        }
    }
    if let Some(r) = &s.reply {
        for i in 0..r.len() {
            push(&|t| {
                if let Some(r) = &mut t.reply {
                    r.remove(i);
                }
            });
        }
    }
    push(&|t| t.proc_override = None);
    // The plainest envelope: Version One RDMA_MSG.
    push(&|t| t.form = Form::Msg);
    push(&|t| t.vers = 1);
    if let Some(r) = &s.rpc {
        if !r.args.is_empty() {
            push(&|t| t.rpc.as_mut().expect("checked").args.clear());
            push(&|t| {
                let a = &mut t.rpc.as_mut().expect("checked").args;
                a.truncate(a.len() / 2);
            });
        }
        push(&|t| t.rpc.as_mut().expect("checked").xid_xor = 0);
        // The simplest procedure: NULL, with AUTH_NONE and no arguments.
        push(&|t| t.rpc.as_mut().expect("checked").proc_ = 0);
    }
    // Segment fields: the smallest well-formed segment, then each field made right.
    let segs = s.reads.len() + s.writes.iter().map(Vec::len).sum::<usize>() + s.reply.as_ref().map_or(0, Vec::len);
    for i in 0..segs {
        push(&|t| {
            let g = nth_segment(t, i);
            if g.length == g.region_len && g.at == 0 && g.handle_xor == 0 && g.share.is_none() && g.length > 4 {
                *g = Seg::exact(4);
            }
        });
        push(&|t| nth_segment(t, i).handle_xor = 0);
        push(&|t| nth_segment(t, i).share = None);
        push(&|t| nth_segment(t, i).at = 0);
    }
    push(&|t| t.credit = 32);
    out
}

fn nth_segment(s: &mut Spec, i: usize) -> &mut Seg {
    let mut all: Vec<&mut Seg> = Vec::new();
    all.extend(s.reads.iter_mut().map(|r| &mut r.seg));
    all.extend(s.writes.iter_mut().flatten());
    if let Some(c) = &mut s.reply {
        all.extend(c.iter_mut());
    }
    all.swap_remove(i)
}

/// Minimises `case` while `reproduces` holds, trying at most `budget` candidates. The result
/// reproduces (it is `case` itself when nothing smaller does).
pub fn minimise(case: &[Spec], budget: usize, mut reproduces: impl FnMut(&[Spec]) -> bool) -> Vec<Spec> {
    let mut best = case.to_vec();
    let mut tries = 0;
    // Delta debugging over the message list: drop halves, then quarters, ... then singles.
    let mut n = 2;
    while best.len() > 1 && tries < budget {
        let chunk = best.len().div_ceil(n);
        let mut reduced = false;
        for start in (0..best.len()).step_by(chunk) {
            let candidate: Vec<Spec> = best
                .iter()
                .enumerate()
                .filter(|(i, _)| *i < start || *i >= start + chunk)
                .map(|(_, m)| m.clone())
                .collect();
            if candidate.is_empty() {
                continue;
            }
            tries += 1;
            if reproduces(&candidate) {
                best = candidate;
                n = (n - 1).max(2);
                reduced = true;
                break;
            }
        }
        if !reduced {
            if chunk == 1 {
                break;
            }
            n = (n * 2).min(best.len());
        }
    }
    // Then each message's fields, to a fixpoint.
    let mut changed = true;
    while changed && tries < budget {
        changed = false;
        for m in 0..best.len() {
            for candidate in simpler(&best[m]) {
                if tries >= budget {
                    break;
                }
                let mut c = best.clone();
                c[m] = candidate;
                tries += 1;
                if reproduces(&c) {
                    best = c;
                    changed = true;
                    break;
                }
            }
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fuzz::generate;

    #[test]
    fn keeps_only_what_the_predicate_needs() {
        // The "bug": a message with exactly two write chunks, anywhere in the case.
        let bug = |c: &[Spec]| c.iter().any(|m| m.writes.len() == 2);
        let mut a = generate::null_call(1, 32);
        a.writes = vec![vec![Seg::exact(64), Seg::exact(8)], vec![Seg::exact(100)]];
        a.reply = Some(vec![Seg::exact(64)]);
        a.rpc.as_mut().unwrap().args = vec![1; 40];
        let case = vec![generate::null_call(2, 0), a, generate::null_call(3, 7)];
        let min = minimise(&case, 500, bug);
        assert_eq!(min.len(), 1);
        let m = &min[0];
        assert_eq!(m.writes.len(), 2);
        assert!(m.writes.iter().all(|c| c.is_empty()), "{:?}", m.writes);
        assert!(m.reply.is_none() && m.rpc.as_ref().unwrap().args.is_empty());
    }
}
