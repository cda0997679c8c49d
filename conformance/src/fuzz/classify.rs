//! What a case's observation means: the outcome class that is counted, the finding (if the
//! peer did something no faithful peer does) and the coverage signatures that steer
//! mutation (a reply's version, procedure, error code, RPC accept_stat and chunk shape).

use std::collections::hash_map::DefaultHasher;
use std::fmt;
use std::hash::{Hash, Hasher};

use rpcrdma_codec::check::{rules, Role};
use rpcrdma_codec::v2;
use rpcrdma_codec::Profile;

use super::execute::{Liveness, Observation};
use crate::frame::{rpc::RpcKind, v1, Frame, Header};

/// The kinds of findings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Class {
    /// The peer's kernel reported a bug of its own (WARN, BUG, oops, KASAN, hung task).
    KernelReport,
    /// The peer refused new connections (or never answered one) after the case, or logged a
    /// crash backtrace during it; the detail is the crash site ([`super::backtrace`]) when a
    /// backtrace was read, else empty (the site is unknown).
    Crash,
    /// The peer stopped answering a live connection.
    Hang,
    /// The peer dropped the connection after only well-formed messages.
    Disconnect,
    /// The peer wrote outside the segments it was given.
    OobWrite,
    /// The peer RDMA-Read outside the read segments it was given (seen only where the
    /// transport records one-sided operations: the emulated fabric).
    OobRead,
    /// A well-formed call got no reply while the connection lived on.
    NoReply,
    /// A reply broke a rule of RFC 8166 or Version Two, or did not decode.
    Violation,
    /// The peer's machine died while this case ran; recorded from the journal (`fuzz
    /// --journal`), its detail the panic's signature once `fuzz-panic` has read the console.
    KernelPanic,
    /// The peer process kept memory for every connection after it was closed (`fuzz
    /// --peer-pid-file`, [`super::resources`]); the detail names what grew (`VmPin`, `VmRSS`).
    ResourceLeak,
}

impl Class {
    pub const ALL: [Class; 10] = [
        Class::KernelReport,
        Class::Crash,
        Class::Hang,
        Class::Disconnect,
        Class::OobWrite,
        Class::OobRead,
        Class::NoReply,
        Class::Violation,
        Class::KernelPanic,
        Class::ResourceLeak,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Class::KernelReport => "kernel-report",
            Class::Crash => "crash",
            Class::Hang => "hang",
            Class::Disconnect => "disconnect",
            Class::OobWrite => "oob-write",
            Class::OobRead => "oob-read",
            Class::NoReply => "no-reply",
            Class::Violation => "violation",
            Class::KernelPanic => "kernel-panic",
            Class::ResourceLeak => "resource-leak",
        }
    }

    pub fn from_name(s: &str) -> Option<Class> {
        Class::ALL.into_iter().find(|c| c.name() == s)
    }

    /// The classes one case's observation shows, most severe first: the order [`finding`]
    /// looks for them in (not the declaration order, which `Ord` follows). `kernel-panic` (from
    /// the journal) and `resource-leak` (over many connections) are no one case's observation
    /// and have no rank.
    pub const BY_SEVERITY: [Class; 8] = [
        Class::KernelReport,
        Class::Crash,
        Class::OobWrite,
        Class::OobRead,
        Class::Hang,
        Class::Disconnect,
        Class::NoReply,
        Class::Violation,
    ];

    /// Whether this class is more severe than `other` ([`Class::BY_SEVERITY`]); false where
    /// either has no rank.
    pub fn outranks(self, other: Class) -> bool {
        let rank = |c: Class| Class::BY_SEVERITY.iter().position(|x| *x == c);
        matches!((rank(self), rank(other)), (Some(a), Some(b)) if a < b)
    }
}

/// A finding's kind: its class and, for violations, the rule (findings are kept once per kind).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Kind {
    pub class: Class,
    pub detail: String,
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.detail.is_empty() {
            f.write_str(self.class.name())
        } else {
            write!(f, "{}: {}", self.class.name(), self.detail)
        }
    }
}

/// The rules a reply breaks: the Version One check the frame carries, or the Version Two
/// check under the run's wire profile (a -00 envelope has no rdma_direction), or `malformed`
/// when the header did not decode.
pub fn reply_violations(f: &Frame, profile: &Profile) -> Vec<String> {
    match &f.header {
        Ok(Header::V1(h)) => h.violations.iter().map(|v| v.id().to_string()).collect(),
        Ok(Header::V2(_)) => match v2::Message::decode(f.bytes(), profile) {
            Ok(m) => v2::check(&m, Role::Reply).iter().map(|v| v.id().to_string()).collect(),
            Err(e) => vec![format!("malformed-reply ({e})")],
        },
        // An ERR_VERS echoes the requester's unsupported rdma_vers (RFC 8166 4.5), so it
        // decodes under no version; RFC 8166 7 fixes its layout for all of them.
        Err(_) if f.err_vers.is_some() => {
            let e = f.err_vers.expect("checked");
            let mut v = Vec::new();
            if e.low > e.high {
                v.push(rules::VERS_RANGE.id.to_string());
            }
            if e.fixed.credit == 0 {
                v.push(rules::ZERO_CREDIT_GRANT.id.to_string());
            }
            v
        }
        Err(m) => vec![format!("malformed-reply ({})", m.error)],
    }
}

/// The finding an observation shows, if any, most severe first ([`Class::BY_SEVERITY`] is
/// this order).
pub fn finding(obs: &Observation) -> Option<Kind> {
    let kind = |class: Class, detail: &str| Some(Kind { class, detail: detail.to_string() });
    if let Some((_, signature)) = super::kernel_log::report_signatures(&obs.kernel).into_iter().next() {
        return kind(Class::KernelReport, &signature);
    }
    // A backtrace in the peer's log: it crashed there, whether or not its other threads still
    // answered the liveness NULL while the crash handler ran.
    if let Some(site) = &obs.crash_site {
        return kind(Class::Crash, &site.signature);
    }
    if obs.connect_failed.is_some() || obs.liveness == Liveness::Refused {
        return kind(Class::Crash, "");
    }
    if obs.oob.iter().any(|o| !o.read) {
        return kind(Class::OobWrite, "");
    }
    if !obs.oob.is_empty() {
        return kind(Class::OobRead, "");
    }
    if obs.liveness == Liveness::Silent {
        return kind(Class::Hang, "");
    }
    // On a kept connection only when nothing before the case on it could have caused it.
    if obs.liveness == Liveness::Disconnected && obs.sent > 0 && obs.well_formed.iter().all(|w| *w) && obs.earlier_clean
    {
        return kind(Class::Disconnect, "");
    }
    if !obs.unanswered.is_empty() {
        return kind(Class::NoReply, "");
    }
    let rule = obs.replies.iter().flat_map(|f| reply_violations(f, &obs.profile)).next()?;
    let rule = rule.split(" (").next().unwrap_or(&rule).to_string();
    kind(Class::Violation, &rule)
}

/// Whether `obs` would be a `disconnect` finding were it not for the earlier cases on its kept
/// connection ([`Observation::earlier_clean`]): the case, then, is sent again alone on a
/// fresh connection, and its drop is a finding only when it repeats there.
pub fn disconnect_but_for_earlier(obs: &Observation) -> bool {
    obs.liveness == Liveness::Disconnected
        && !obs.earlier_clean
        && finding(&Observation { earlier_clean: true, ..obs.clone() }).is_some_and(|k| k.class == Class::Disconnect)
}

/// The finding the re-check alone (`alone`) of a [`disconnect_but_for_earlier`] case gives
/// that case: a `disconnect` (the drop repeated), or one that outranks it (alone, the case did
/// worse: the peer crashed, say); None when the drop did not repeat and nothing worse showed.
pub fn recheck_finding(alone: &Observation) -> Option<Kind> {
    finding(alone).filter(|k| k.class == Class::Disconnect || k.class.outranks(Class::Disconnect))
}

/// One reply's shape: version, procedure, error code, RPC accept_stat, chunk shape.
fn shape(f: &Frame) -> impl Hash {
    let fixed = f.fixed().map(|x| (x.vers, x.proc_));
    let (err, chunks) = match &f.header {
        Ok(Header::V1(h)) => match &h.body {
            v1::Body::Error { code, .. } => (Some(code.0), None),
            b => (None, b.chunks().map(|c| (c.reads.len(), c.writes.len(), c.reply.is_some()))),
        },
        Ok(Header::V2(h)) => match &h.body {
            crate::frame::v2::Body::Error(e) => (Some(e.code), None),
            _ => (None, None),
        },
        Err(_) => (Some(u32::MAX), None),
    };
    let rpc = match &f.rpc {
        Some(Ok(r)) => match &r.kind {
            RpcKind::Accepted(s) => format!("accepted {}", s.name()),
            RpcKind::Denied(d) => format!("denied {d}"),
            RpcKind::Call { .. } => "call".into(),
        },
        Some(Err(_)) => "undecodable".into(),
        None => String::new(),
    };
    (fixed, err, chunks, rpc, f.invalidated.is_some())
}

/// The coverage signatures of a case: one per reply other than the liveness replies, and the
/// outcome.
pub fn signatures(obs: &Observation) -> Vec<u64> {
    let mut out = Vec::new();
    let h = |x: &dyn Fn(&mut DefaultHasher)| {
        let mut s = DefaultHasher::new();
        x(&mut s);
        s.finish()
    };
    for f in &obs.replies {
        out.push(h(&|s| shape(f).hash(s)));
    }
    out.push(h(&|s| (obs.liveness, obs.sent, obs.unanswered.len()).hash(s)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fuzz::backtrace::Site;

    fn observation(liveness: Liveness) -> Observation {
        Observation {
            liveness,
            replies: Vec::new(),
            well_formed: Vec::new(),
            unanswered: Vec::new(),
            oob: Vec::new(),
            connect_failed: None,
            sent: 1,
            null_xid: 0,
            kernel: Vec::new(),
            crash_site: None,
            after_cases: 0,
            earlier_clean: true,
            own_probe: false,
            connections: 1,
            spent: Default::default(),
            profile: Profile::default(),
            cut: false,
        }
    }

    #[test]
    fn a_disconnect_over_well_formed_messages_is_the_case_s_only_on_a_clean_connection() {
        let mut obs = observation(Liveness::Disconnected);
        obs.well_formed = vec![true];
        assert_eq!(finding(&obs).unwrap().to_string(), "disconnect");
        // A malformed message of the case: the peer may drop the connection over it.
        obs.well_formed = vec![true, false];
        obs.sent = 2;
        assert_eq!(finding(&obs), None);
        // Earlier cases on the kept connection sent something malformed or left a call
        // unanswered: the peer may have acted on it only now.
        obs.well_formed = vec![true, true];
        obs.after_cases = 3;
        assert_eq!(finding(&obs).unwrap().to_string(), "disconnect");
        obs.earlier_clean = false;
        assert_eq!(finding(&obs), None);
        // That one is sent again alone; one the case's own messages explain is not.
        assert!(disconnect_but_for_earlier(&obs));
        obs.earlier_clean = true;
        assert!(!disconnect_but_for_earlier(&obs), "a finding already");
        obs.earlier_clean = false;
        obs.well_formed = vec![true, false];
        assert!(!disconnect_but_for_earlier(&obs));
        obs.well_formed = vec![true, true];
        obs.oob = vec![super::super::execute::OobAccess { message: 0, region: 0, at: 0, bytes: 4, read: false }];
        assert!(!disconnect_but_for_earlier(&obs), "an oob-write, whatever came before");
    }

    /// The rank of the classes is the order `finding` looks for them in: with every sign at
    /// once, it gives each class in turn as the signs of the ones before it are taken away.
    #[test]
    fn the_classes_rank_as_finding_looks_for_them() {
        use super::super::execute::OobAccess;
        use rpcrdma_codec::v1::HeaderBuilder;
        use rpcrdma_codec::xdr::Encode;
        let oob = |read| OobAccess { message: 0, region: 0, at: 0, bytes: 4, read };
        let mut obs = observation(Liveness::Silent);
        obs.kernel = vec!["WARNING: CPU: 0 PID: 7 at net/a.c:1 f+0x1/0x2".into()];
        obs.crash_site = Some(Site { signature: "f < g".into(), trace: Vec::new() });
        obs.oob = vec![oob(false), oob(true)];
        obs.well_formed = vec![true];
        obs.unanswered = vec![0];
        // RFC 8166 3.3.1: a reply granting no credit.
        let zero_credit = HeaderBuilder::err_chunk(7, 0).encode_to_vec();
        obs.replies = vec![Frame::decode(zero_credit, None, Role::Reply, &Profile::default())];
        let mut seen = Vec::new();
        let take_away: [&dyn Fn(&mut Observation); 8] = [
            &|o| o.kernel.clear(),
            &|o| o.crash_site = None,
            &|o| o.oob.retain(|a| a.read),
            &|o| o.oob.clear(),
            &|o| o.liveness = Liveness::Disconnected,
            &|o| o.liveness = Liveness::Answered,
            &|o| o.unanswered.clear(),
            &|o| o.replies.clear(),
        ];
        for next in take_away {
            seen.push(finding(&obs).expect("a finding").class);
            next(&mut obs);
        }
        assert_eq!(finding(&obs), None);
        assert_eq!(seen, Class::BY_SEVERITY);
        assert!(Class::Crash.outranks(Class::Disconnect) && Class::Hang.outranks(Class::Disconnect));
        assert!(!Class::Violation.outranks(Class::Disconnect) && !Class::Disconnect.outranks(Class::Disconnect));
        assert!(!Class::KernelPanic.outranks(Class::Violation) && !Class::Violation.outranks(Class::ResourceLeak));
    }

    /// The re-check alone of a drop earlier cases may have caused: a drop again, or anything
    /// worse, is the case's finding; a lesser finding, or none, is not.
    #[test]
    fn a_re_check_alone_gives_a_disconnect_or_anything_worse() {
        let class = |o: &Observation| recheck_finding(o).map(|k| k.class);
        let mut alone = observation(Liveness::Disconnected);
        alone.well_formed = vec![true];
        assert_eq!(class(&alone), Some(Class::Disconnect));
        assert_eq!(class(&observation(Liveness::Refused)), Some(Class::Crash));
        assert_eq!(class(&observation(Liveness::Silent)), Some(Class::Hang));
        let mut alone = observation(Liveness::Answered);
        alone.oob = vec![super::super::execute::OobAccess { message: 0, region: 0, at: 0, bytes: 8, read: false }];
        assert_eq!(class(&alone), Some(Class::OobWrite));
        alone.oob.clear();
        assert_eq!(class(&alone), None, "nothing");
        alone.well_formed = vec![true];
        alone.unanswered = vec![0];
        assert_eq!(class(&alone), None, "a no-reply is less than a disconnect");
    }

    #[test]
    fn a_crash_is_signed_by_its_site_when_the_peer_logged_a_backtrace() {
        let site = Site { signature: "xdr_rdma_svc_recv < svc_rdma_decode < svc_request".into(), trace: Vec::new() };
        // The handler logs the backtrace while other threads still answer the liveness NULL.
        let mut obs = observation(Liveness::Answered);
        obs.crash_site = Some(site.clone());
        assert_eq!(finding(&obs).unwrap().to_string(), "crash: xdr_rdma_svc_recv < svc_rdma_decode < svc_request");
        let mut obs = observation(Liveness::Refused);
        obs.crash_site = Some(site);
        assert_eq!(finding(&obs).unwrap().to_string(), "crash: xdr_rdma_svc_recv < svc_rdma_decode < svc_request");
        // Without a backtrace the site is unknown: a kind of its own, which no site matches.
        assert_eq!(finding(&observation(Liveness::Refused)).unwrap().to_string(), "crash");
        assert_eq!(finding(&observation(Liveness::Answered)), None);
    }

    /// A well-formed draft-00 Version Two reply (no rdma_direction) breaks no rule under
    /// `v2-00`; read as draft-01 (its RPC XID taken for rdma_direction) it does.
    #[test]
    fn version_two_replies_are_judged_under_the_runs_profile() {
        use rpcrdma_codec::profile::V2Envelope;
        use rpcrdma_codec::rpc::MsgType;
        use rpcrdma_codec::v2::HeaderBuilder;
        use rpcrdma_codec::xdr::Encode;
        let draft00 = Profile { v2_envelope: V2Envelope::Draft00, ..Profile::default() };
        // The RPC reply's XID where draft-01 reads rdma_direction.
        let mut payload = [0u8; 24];
        payload[..8].copy_from_slice(&[0x12, 0x34, 0x56, 0x78, 0, 0, 0, 1]);
        let bytes = HeaderBuilder::msg(7, 8, MsgType::REPLY).payload(&payload).draft00().encode_to_vec();
        let f = Frame::decode(bytes.clone(), None, Role::Reply, &draft00);
        assert_eq!(reply_violations(&f, &draft00), Vec::<String>::new());
        let f = Frame::decode(bytes, None, Role::Reply, &draft00);
        let under_01 = reply_violations(&f, &Profile::default());
        assert!(!under_01.is_empty(), "draft-01 reads the XID as rdma_direction");
    }

    #[test]
    fn class_names_round_trip() {
        for c in Class::ALL {
            assert_eq!(Class::from_name(c.name()), Some(c));
        }
        assert_eq!(Class::from_name("resource-leak"), Some(Class::ResourceLeak));
    }
}
