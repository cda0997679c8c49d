//! RPC-over-RDMA Version Two (draft-cel-nfsv4-rpcrdma-version-two-01) and its extensions
//! xcharext-02 (transport characteristics) and rtrext-03 (message continuation). The envelope,
//! error codes, rtrext opttypes, xcharext ids and subset bits follow the run's profile (by
//! default the -01 envelope and error codes, rtrext opttypes 5..8, xcharext-02 ids, LSB-first
//! subsets). Every check first sends a Version Two NULL call: a peer that answers
//! ERR_VERS without 2 (or not at all, v2-01 5.2) speaks Version One only, and the check is
//! unsupported.
//!
//! [`messages`] builds the Version Two messages and reads the answers (as frames, decoded
//! once at receipt); the checks live beside their table in [`base`], [`xcharext`] and
//! [`rtrext`].

mod base;
mod messages;
mod rtrext;
mod xcharext;

use crate::engine::Check;

/// Every Version Two check, in run order: the base draft's, then xcharext's, then rtrext's.
pub static CHECKS: [Check; 26] = join(&base::CHECKS, &xcharext::CHECKS, &rtrext::CHECKS);

/// The three tables end to end.
const fn join<const A: usize, const B: usize, const C: usize, const N: usize>(
    a: &[Check; A],
    b: &[Check; B],
    c: &[Check; C],
) -> [Check; N] {
    assert!(A + B + C == N, "the table length is the sum of its parts");
    let mut all = [a[0]; N];
    let mut i = 0;
    while i < N {
        all[i] = if i < A {
            a[i]
        } else if i < A + B {
            b[i - A]
        } else {
            c[i - A - B]
        };
        i += 1;
    }
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_check_is_in_the_v2_group() {
        for c in CHECKS.iter().map(|c| &c.info) {
            assert!(c.groups.contains(&"v2"), "{}", c.id);
            let ext = c.id.starts_with("xcharext") || c.id.starts_with("rtrext");
            assert!(!ext || c.groups.iter().any(|g| *g == "xcharext" || *g == "rtrext"), "{}", c.id);
        }
    }

    #[test]
    fn the_table_keeps_its_order() {
        let ids: Vec<&str> = CHECKS.iter().map(|c| c.info.id).collect();
        assert_eq!(ids.first(), Some(&"v2-01/5.2/optional-first-message"));
        assert_eq!(ids[11], "xcharext-02/4.1/initxch-silent");
        assert_eq!(ids[19], "rtrext-03/9.3/xmtreq-answered");
        assert_eq!(ids.last(), Some(&"rtrext-03/9.4/reply-cont-xid"));
    }

    // Every Version Two choice of the wire profile, given to the judge and the reference
    // responder alike: each check passes or, where its statement is not in that revision, is
    // unsupported saying which; and every fault that breaks a check by default still breaks
    // it under the choice (a check passing under a choice proves something there too).
    #[test]
    fn every_v2_choice_holds_on_both_sides_and_the_faults_still_show() {
        use crate::engine::{run_check, Outcome, RunOptions};
        use rpcrdma_codec::Profile;
        use rpcrdma_peers::responder::{Config, Faults, Responder};
        use rpcrdma_peers::transport::emulated::EmulatedConnector;
        use std::time::Duration;
        // (choice, checks unsupported under it, a word of the reason)
        let rtrext_literal: &[&str] = &[
            "v2-01/5.2/optional-first-message",
            "v2-01/5.2/threshold-change",
            "xcharext-02/4.1/initxch-silent",
            "xcharext-02/3.2/initxch-reqreminv-false",
            "xcharext-02/4.4/updxch-reqreminv-false",
            "xcharext-02/4.3/respxch-xid",
            "xcharext-02/4.3/respxch-cover",
            "xcharext-02/2.1/unknown-ids-skipped",
            "xcharext-02/2.1/invalid-known-value",
            "xcharext-02/2.1/xchv-data-overrun",
        ];
        let choices: [(&str, &[&str], &str); 5] = [
            ("v2-00", &["v2-01/4.2.2/reply-direction"], "-00"),
            ("v2-errors-02", &[], ""),
            ("v2-errors-04", &[], ""),
            ("rtrext-literal", rtrext_literal, "rtrext-literal"),
            (
                "props-v2-03",
                &["xcharext-02/3.2/initxch-reqreminv-false", "xcharext-02/4.4/updxch-reqreminv-false"],
                "props-v2-03",
            ),
        ];
        // A fault that writes a field the choice's envelope does not have changes nothing.
        let inapplicable = [("v2-00", "v2-wrong-direction")];
        let opts = |profile| RunOptions {
            timeout: Duration::from_secs(2),
            silence: Duration::from_millis(100),
            profile,
            ..RunOptions::default()
        };
        let mut wrong = Vec::new();
        for (choice, unsupported, reason) in choices {
            let mut profile = Profile::default();
            assert!(profile.apply(choice), "{choice}");
            let responder =
                |faults| EmulatedConnector::new(Responder::reference(Config { faults, profile, ..Config::default() }));
            let mut conn = responder(Faults::default());
            for c in CHECKS.iter() {
                let r = run_check(c, &mut conn, &opts(profile));
                let skipped = unsupported.contains(&c.info.id);
                let want = if skipped { Outcome::Unsupported } else { Outcome::Pass };
                if r.outcome != want || (skipped && !r.actual.to_string().contains(reason)) {
                    wrong.push(format!(
                        "{choice}: {} {} (want {}): {}",
                        c.info.id,
                        r.outcome.name(),
                        want.name(),
                        r.actual
                    ));
                }
                if skipped {
                    continue;
                }
                for (fault, broken) in c.info.broken_by {
                    if inapplicable.contains(&(choice, fault)) {
                        continue;
                    }
                    let r = run_check(c, &mut responder(Faults::only(fault)), &opts(profile));
                    if r.outcome != *broken {
                        wrong.push(format!(
                            "{choice}: {} with fault {fault}: {} (want {}): {}",
                            c.info.id,
                            r.outcome.name(),
                            broken.name(),
                            r.actual
                        ));
                    }
                }
            }
        }
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }

    // Against a Version One responder the catalogue still makes sense: the probe check
    // passes on ERR_VERS and every other check is unsupported.
    #[test]
    fn a_version_one_peer_makes_the_checks_unsupported() {
        use crate::engine::{run_check, Outcome, RunOptions};
        use rpcrdma_peers::responder::{Config, Responder};
        use rpcrdma_peers::transport::emulated::EmulatedConnector;
        use std::time::Duration;
        let config = Config { version_two: false, ..Config::default() };
        let mut conn = EmulatedConnector::new(Responder::reference(config));
        let opts = RunOptions {
            timeout: Duration::from_secs(2),
            silence: Duration::from_millis(100),
            ..RunOptions::default()
        };
        for c in CHECKS.iter() {
            let r = run_check(c, &mut conn, &opts);
            let want =
                if c.info.id == "v2-01/5.2/optional-first-message" { Outcome::Pass } else { Outcome::Unsupported };
            assert_eq!(r.outcome, want, "{}: {}", c.info.id, r.actual);
        }
    }
}
