//! A `serve --fuzz` finding file (a mutated reply after which the requester's kernel logged a
//! bug report): the format `serve --fuzz` and `fuzz-panic` write and `replay --listen` reads;
//! and `serve --fuzz --journal`'s lines, which `fuzz-panic` reads after the requester's
//! machine died.

use rpcrdma_codec::hex::Hex;
use serde_json::{json, Value};

pub const FORMAT: &str = "rpcrdma-serve-fuzz-finding/1";

/// A mutated message as sent (a finding file's `"after_mutation"`): our reply to the call
/// `xid` (`call` that call, `reply` what we sent instead), or (`reverse_call`: the n-th on its
/// connection, from 1) our reverse-direction call `xid`, `call` what we sent.
pub fn after_mutation(how: &str, xid: u32, call: &[u8], reply: &[u8], reverse_call: Option<usize>) -> Value {
    match reverse_call {
        None => json!({
            "how": how, "xid": format!("{xid:#010x}"), "call": Hex(call).to_string(), "reply": Hex(reply).to_string(),
        }),
        Some(n) => json!({"how": how, "xid": format!("{xid:#010x}"), "reverse_call": n, "call": Hex(call).to_string()}),
    }
}

/// A finding file: the kernel's report (`kind`, its lines) after the mutated message `after`,
/// found under seed `seed` and the wire profile's choices `profile` (which `replay --listen`
/// serves under again).
pub fn finding(seed: u64, profile: &[String], kind: &str, kernel_log: &[String], after: Option<Value>) -> Value {
    json!({
        "format": FORMAT,
        "tool": format!("rpcrdma-harness {}", env!("CARGO_PKG_VERSION")),
        "seed": seed,
        "profile": profile,
        "kind": kind,
        "kernel_log": kernel_log,
        "after_mutation": after,
    })
}

/// `serve --fuzz --journal FILE`: before each mutated message is sent, a line holding it is
/// appended and flushed (`"journal": "serve-fuzz-mutation"`, with the seed and profile, so the
/// line stands alone); each finding, once its report is a second old, as a line holding its
/// finding file (`"serve-fuzz-finding"`). When the requester's kernel panics, the machine dies
/// with the harness on it; the journal, on a device the host keeps, then names the last
/// mutated message sent and the findings made before.
pub mod journal {
    use serde_json::{json, Value};

    pub const MUTATION: &str = "serve-fuzz-mutation";
    pub const FINDING: &str = "serve-fuzz-finding";

    /// The line of the `n`-th mutated message of the session (from 1), sent at `at_ms`
    /// (milliseconds since the UNIX epoch, the machine's clock: which of several journals'
    /// last lines came last).
    pub fn mutation_line(seed: u64, profile: &[String], n: u64, at_ms: u64, after: Value) -> String {
        json!({"journal": MUTATION, "seed": seed, "profile": profile, "n": n, "at_ms": at_ms, "after_mutation": after})
            .to_string()
    }

    /// The line of a finding: its finding file.
    pub fn finding_line(finding: &Value) -> String {
        json!({"journal": FINDING, "finding": finding}).to_string()
    }

    /// What a journal holds; torn lines (the machine died during a write) passed over.
    #[derive(Debug, Default)]
    pub struct Read {
        /// The mutation lines.
        pub mutations: u64,
        /// The last mutation line.
        pub last: Option<Value>,
        /// The finding lines' finding files, in order.
        pub findings: Vec<Value>,
    }

    impl Read {
        /// Two journals as one (two `serve` processes, each its own journal): the last
        /// mutation is the later by `at_ms`.
        pub fn merge(mut self, other: Read) -> Read {
            let at = |r: &Option<Value>| r.as_ref().and_then(|v| v["at_ms"].as_u64()).unwrap_or(0);
            if other.last.is_some() && at(&other.last) >= at(&self.last) {
                self.last = other.last;
            }
            self.mutations += other.mutations;
            self.findings.extend(other.findings);
            self
        }
    }

    /// The journal `text` as `serve --fuzz` wrote it; None when no line of it is one.
    pub fn read(text: &str) -> Option<Read> {
        let mut r = Read::default();
        let mut any = false;
        for v in text.lines().filter_map(|l| serde_json::from_str::<Value>(l.trim_matches(['\r', '\0', ' '])).ok()) {
            if v["journal"] == MUTATION && v["after_mutation"].is_object() {
                r.mutations += 1;
                r.last = Some(v);
                any = true;
            } else if v["journal"] == FINDING && v["finding"].is_object() {
                r.findings.push(v["finding"].clone());
                any = true;
            }
        }
        any.then_some(r)
    }
}

/// What a `serve --fuzz` finding file holds of use to a replay.
#[derive(Debug)]
pub struct ClientFinding {
    /// `kernel-report: SIGNATURE`.
    pub kind: String,
    pub how: String,
    pub call: Vec<u8>,
    pub reply: Vec<u8>,
    /// A mutated reverse-direction call instead (`reverse-*`): `call` is it as sent, the
    /// n-th (from 1) on its connection, its RPC XID `xid` then.
    pub reverse_call: Option<(usize, u32)>,
}

impl ClientFinding {
    pub fn from_json(v: &Value) -> Result<ClientFinding, String> {
        let text =
            |v: &Value, k: &str| v.get(k).and_then(Value::as_str).map(str::to_string).ok_or(format!("no \"{k}\""));
        let after = v.get("after_mutation").filter(|a| a.is_object()).ok_or("no \"after_mutation\" (the reply)")?;
        let hex =
            |k: &str| text(after, k).and_then(|h| crate::input::parse_hex(&h).map_err(|e| format!("\"{k}\": {e}")));
        let (kind, how, call) = (text(v, "kind")?, text(after, "how")?, hex("call")?);
        if let Some(n) = after.get("reverse_call") {
            let n = n.as_u64().filter(|n| *n >= 1).ok_or("\"reverse_call\": not a count from 1")? as usize;
            let xid = text(after, "xid")?;
            let xid = xid
                .strip_prefix("0x")
                .and_then(|h| u32::from_str_radix(h, 16).ok())
                .ok_or(format!("\"xid\": {xid:?} is not 0x and hex digits"))?;
            return Ok(ClientFinding { kind, how, call, reply: Vec::new(), reverse_call: Some((n, xid)) });
        }
        Ok(ClientFinding { kind, how, call, reply: hex("reply")?, reverse_call: None })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_journal_gives_its_last_mutation_and_findings_and_passes_over_a_torn_line() {
        let profile = vec!["p".to_string()];
        let m1 = journal::mutation_line(7, &profile, 1, 1000, after_mutation("xid", 0x11, &[1, 2], &[3], None));
        let f = finding(7, &profile, "kernel-report: WARNING in f", &["WARNING: in f".into()], None);
        let m2 = journal::mutation_line(
            7,
            &profile,
            2,
            3000,
            after_mutation("reverse-cb-op-count", 0xcb, &[9], &[], Some(3)),
        );
        let torn = &m1[..m1.len() / 2];
        let text = format!("{m1}\n{}\n{m2}\r\n{torn}", journal::finding_line(&f));
        let r = journal::read(&text).expect("a serve --fuzz journal");
        assert_eq!(r.mutations, 2);
        let last = r.last.expect("the last mutation line");
        assert_eq!(last["seed"], 7);
        assert_eq!(last["after_mutation"]["reverse_call"], 3);
        assert_eq!(last["after_mutation"]["call"], "09");
        assert_eq!(r.findings.len(), 1);
        assert_eq!(r.findings[0]["kind"], "kernel-report: WARNING in f");
        // A finding file read back from a journal is one replay reads (it has no mutation: refused).
        assert!(ClientFinding::from_json(&r.findings[0]).unwrap_err().contains("after_mutation"));
        // Another process's journal: its last line the later one, whichever is read first.
        let other = journal::mutation_line(7, &profile, 1, 2000, after_mutation("xid", 0x22, &[4], &[5], None));
        let merged = journal::read(&other).unwrap().merge(journal::read(&text).unwrap());
        assert_eq!((merged.mutations, merged.findings.len()), (3, 1));
        assert_eq!(merged.last.unwrap()["at_ms"], 3000);
        let merged = journal::read(&text).unwrap().merge(journal::read(&other).unwrap());
        assert_eq!(merged.last.unwrap()["at_ms"], 3000);
        // The server fuzzer's journal is not this one.
        assert!(journal::read("{\"journal\":{\"sent\":\"case 1\"},\"case\":1}\n").is_none());
    }

    #[test]
    fn the_committed_client_finding_parses() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/findings/linux-xprtrdma-frwr-unmap-sync-oops.json");
        let v: Value = serde_json::from_str(&std::fs::read_to_string(path).expect("the finding")).expect("JSON");
        assert_eq!(v["format"], FORMAT);
        let f = ClientFinding::from_json(&v).expect("a client finding");
        assert_eq!(f.kind, "kernel-report: BUG: kernel NULL pointer dereference in frwr_unmap_sync");
        assert_eq!(f.how, "xid");
        let r = rpcrdma_peers::responder::RecordedReply::new(&f.call, f.reply, &rpcrdma_codec::Profile::default())
            .expect("the recorded call is an inline RPC call");
        assert_eq!(r.procedure, (100003, 3, 6), "an NFSv3 READ");
    }

    #[test]
    fn a_reverse_call_finding_parses_and_a_bad_one_is_refused() {
        let after =
            serde_json::json!({"how": "reverse-cb-op-count", "xid": "0xcb000002", "reverse_call": 2, "call": "0a0b"});
        let v = serde_json::json!({"format": FORMAT, "kind": "kernel-report: x", "after_mutation": after});
        let f = ClientFinding::from_json(&v).expect("a reverse-call finding");
        assert_eq!((f.reverse_call, f.call, f.reply), (Some((2, 0xcb00_0002)), vec![0x0a, 0x0b], Vec::new()));
        let mut v0 = v.clone();
        v0["after_mutation"]["reverse_call"] = 0.into();
        assert!(ClientFinding::from_json(&v0).unwrap_err().contains("reverse_call"));
        let mut vx = v;
        vx["after_mutation"]["xid"] = "cb000002".into();
        assert!(ClientFinding::from_json(&vx).unwrap_err().contains("xid"));
    }

    #[test]
    fn a_finding_without_its_reply_is_refused() {
        let v = serde_json::json!({"format": FORMAT, "kind": "kernel-report: x", "after_mutation": null});
        assert!(ClientFinding::from_json(&v).unwrap_err().contains("after_mutation"));
        let v = serde_json::json!({"kind": "k", "after_mutation": {"how": "xid", "call": "zz", "reply": ""}});
        assert!(ClientFinding::from_json(&v).unwrap_err().contains("\"call\""));
    }
}
