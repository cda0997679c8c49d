//! `serve --fuzz` in the reverse direction (RFC 8167): the reference responder's NFSv4.1
//! callbacks (CB_NULL, CB_COMPOUND(CB_SEQUENCE, CB_RECALL)) mutated toward the embedded
//! reference requester, and a recorded mutated callback sent again by `replay`.

use std::sync::Arc;
use std::time::Duration;

use rpcrdma_peers::observe::{Observed, ObservedConnection};
use rpcrdma_peers::requester::{observed_workloads, RequesterFaults, RequesterOptions};
use rpcrdma_peers::responder::{Config, RecordedReply, ReplyFuzz, ReverseMutation};

fn nfs41() -> RequesterOptions {
    RequesterOptions { timeout: Duration::from_millis(700), nfs4_minor: Some(1), ..RequesterOptions::default() }
}

fn config() -> Config {
    Config { credits: 8, receive_window: Some(64), handle_delay: Duration::from_millis(20), ..Config::default() }
}

/// Each reverse-direction call replaced on a connection: (connection, n-th call from 1, how,
/// the RPC XID, what was sent), from the `Mutated` (reverse-*) and `Injected` (replay) events.
fn replaced(conns: &[ObservedConnection]) -> Vec<(usize, usize, &'static str, u32, Vec<u8>)> {
    let mut out = Vec::new();
    for (ci, c) in conns.iter().enumerate() {
        let mut n = 0;
        let mut pending = None;
        for (_, e) in &c.events {
            match e {
                Observed::ReverseCall { .. } => n += 1,
                Observed::Mutated { how, xid } if how.starts_with("reverse-") => pending = Some((*how, *xid)),
                Observed::Injected { scenario: "replay", xid } => pending = Some(("replay", *xid)),
                Observed::ToRequester(b) => {
                    if let Some((how, xid)) = pending.take() {
                        out.push((ci, n, how, xid, b.clone()));
                    }
                }
                _ => {}
            }
        }
    }
    out
}

/// The `n`-th reverse-direction call sent on connection `ci`, as the tap recorded it.
fn nth_call(conns: &[ObservedConnection], ci: usize, n: usize) -> Option<Vec<u8>> {
    let mut seen = 0;
    let mut next = false;
    for (_, e) in &conns.get(ci)?.events {
        match e {
            Observed::ReverseCall { .. } => {
                seen += 1;
                next = seen == n;
            }
            Observed::ToRequester(b) if next => return Some(b.clone()),
            _ => {}
        }
    }
    None
}

#[test]
fn every_callback_is_mutated_and_the_requester_survives() {
    let names: Vec<&str> = ReverseMutation::ALL.iter().map(|m| m.name()).collect();
    let mut kinds = std::collections::BTreeSet::new();
    for seed in 1..=12 {
        let fuzz = Arc::new(ReplyFuzz::reverse_only(seed, 1));
        let cfg = Config { reply_fuzz: Some(fuzz), ..config() };
        let (conns, errors) = observed_workloads(&cfg, &[None], &nfs41(), &RequesterFaults::default());
        // The reference requester drops or refuses what it cannot take and carries on: its
        // workload (CREATE_SESSION to the recalled delegation's second OPEN) completes.
        assert!(errors.is_empty(), "seed {seed}: {errors:?}");
        let got = replaced(&conns);
        assert!(!got.is_empty(), "seed {seed}: no reverse call mutated");
        for (_, _, how, xid, sent) in &got {
            assert!(names.contains(how), "{how}");
            kinds.insert(*how);
            // What was sent is not the call the upper layer made (its rdma_xid is `xid`
            // unless the mutation was of the XID or truncated it).
            if !matches!(*how, "reverse-xid" | "reverse-truncate") {
                assert_eq!(sent.get(..4), Some(&xid.to_be_bytes()[..]), "{how}");
            }
        }
        // No forward reply was mutated (reverse only).
        let forward = conns
            .iter()
            .flat_map(|c| &c.events)
            .filter(|(_, e)| matches!(e, Observed::Mutated { how, .. } if !how.starts_with("reverse-")));
        assert_eq!(forward.count(), 0);
    }
    // CB_NULL's RPC header and CB_COMPOUND's arguments were both reached.
    assert!(kinds.len() >= 8, "too few kinds of mutation over twelve seeds: {kinds:?}");
    let cb = ["reverse-cb-tag-length", "reverse-cb-op-count", "reverse-csa-slotid", "reverse-csa-highest-slotid"];
    let cb = [&cb[..], &["reverse-csa-referring-call-lists", "reverse-cb-recall-fh-length"]].concat();
    assert!(kinds.iter().any(|k| cb.contains(k)), "no CB_COMPOUND argument mutated: {kinds:?}");
}

#[test]
fn a_recorded_reverse_mutation_is_sent_again_byte_for_byte() {
    let fuzz = Arc::new(ReplyFuzz::reverse_only(4, 1));
    let cfg = Config { reply_fuzz: Some(fuzz), ..config() };
    let (conns, _) = observed_workloads(&cfg, &[None], &nfs41(), &RequesterFaults::default());
    let (ci, n, how, xid, sent) = replaced(&conns).into_iter().next().expect("a mutated reverse call");
    assert_eq!(nth_call(&conns, ci, n).as_ref(), Some(&sent));
    // Unfuzzed, the same call goes out unchanged: the mutation made the difference.
    let (plain, _) = observed_workloads(&config(), &[None], &nfs41(), &RequesterFaults::default());
    let original = nth_call(&plain, ci, n).expect("the same call unfuzzed");
    assert_ne!(original, sent, "{how}: the call was changed");
    assert_eq!(original[..4], xid.to_be_bytes(), "the call's XID was recorded");

    let recorded = Arc::new(RecordedReply::reverse(n, xid, sent.clone()).expect("a recorded call"));
    let cfg = Config { recorded_reply: Some(recorded.clone()), ..config() };
    let (again, _) = observed_workloads(&cfg, &[None], &nfs41(), &RequesterFaults::default());
    assert!(recorded.played());
    let replayed = replaced(&again);
    assert_eq!(replayed.len(), 1, "sent once: {replayed:?}");
    let (_, m, what, new_xid, bytes) = &replayed[0];
    assert_eq!((*m, *what), (n, "replay"));
    // The reference responder numbers its callbacks the same way on every run: the same XID,
    // so the same bytes.
    assert_eq!(*new_xid, xid);
    assert_eq!(bytes, &sent, "{how} replayed byte for byte");
}
