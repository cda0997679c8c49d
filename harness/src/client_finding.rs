//! A `serve --fuzz` finding file (a mutated reply after which the requester's kernel logged a
//! bug report): the format `serve --fuzz` writes and `replay --listen` reads.

use serde_json::Value;

pub const FORMAT: &str = "rpcrdma-serve-fuzz-finding/1";

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
