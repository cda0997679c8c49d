//! Reproducer files (documented in docs/fuzzing.md): JSON holding the tool version, the
//! seed, our connection parameters, the exact messages in hex with the regions each points
//! into (size, full contents with guards, writable ranges) and where their real handles and
//! addresses go, and the classification the replay must find again.

use serde_json::{json, Value};

use super::classify::{Class, Kind};
use super::input::{Fixup, Wire, WireRegion};
use crate::engine::RunOptions;

/// The `format` field of every reproducer this version writes.
pub const FORMAT: &str = "rpcrdma-fuzz-reproducer/1";

/// A finding, ready to save and replay.
#[derive(Debug, Clone, PartialEq)]
pub struct Reproducer {
    pub tool_version: String,
    pub seed: u64,
    /// The case number in the run that found it.
    pub case: u64,
    pub peer: String,
    /// Our private data's sizes and the credits we request (and post receives for).
    pub receive_size: u32,
    pub send_size: u32,
    pub credits: u32,
    pub kind: Kind,
    /// A one-line account of what was observed.
    pub observed: String,
    /// How many messages the case had before minimising.
    pub original_messages: usize,
    pub messages: Vec<Wire>,
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn unhex(s: &str) -> Result<Vec<u8>, String> {
    if s.len() % 2 != 0 {
        return Err("odd-length hex".into());
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).map_err(|_| format!("bad hex at {i}")))
        .collect()
}

impl Reproducer {
    /// The run options a replay connects with.
    pub fn options(&self) -> RunOptions {
        RunOptions {
            receive_size: self.receive_size,
            send_size: self.send_size,
            credits_requested: self.credits,
            ..RunOptions::default()
        }
    }

    pub fn to_json(&self) -> Value {
        let pd = rpcrdma_codec::private_data::PrivateData::new(self.send_size, self.receive_size, true)
            .map(|p| {
                let mut b = [0u8; 8];
                let _ = p.encode_into(&mut b);
                hex(&b)
            })
            .unwrap_or_default();
        let messages: Vec<Value> = self
            .messages
            .iter()
            .map(|w| {
                let regions: Vec<Value> = w
                    .regions
                    .iter()
                    .map(|r| {
                        json!({
                            "size": r.contents.len(),
                            "contents": hex(&r.contents),
                            "writable": r.writable.iter().map(|&(lo, hi)| json!([lo, hi])).collect::<Vec<_>>(),
                            "readable": r.readable.iter().map(|&(lo, hi)| json!([lo, hi])).collect::<Vec<_>>(),
                        })
                    })
                    .collect();
                let fixups: Vec<Value> = w
                    .fixups
                    .iter()
                    .map(|f| match *f {
                        Fixup::Handle { at, region } => json!({"at": at, "field": "handle", "region": region}),
                        Fixup::Offset { at, region, delta } => {
                            json!({"at": at, "field": "offset", "region": region, "delta": delta})
                        }
                    })
                    .collect();
                json!({"hex": hex(&w.bytes), "length": w.bytes.len(), "regions": regions, "fixups": fixups})
            })
            .collect();
        json!({
            "format": FORMAT,
            "tool": format!("rpcrdma-harness {}", self.tool_version),
            "seed": self.seed,
            "case": self.case,
            "peer": self.peer,
            "connection": {
                "private_data": pd,
                "receive_size": self.receive_size,
                "send_size": self.send_size,
                "credits": self.credits,
            },
            "classification": {
                "class": self.kind.class.name(),
                "detail": self.kind.detail,
                "observed": self.observed,
            },
            "original_messages": self.original_messages,
            "messages": messages,
        })
    }

    pub fn from_json(v: &Value) -> Result<Reproducer, String> {
        let s = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).map(str::to_string).ok_or(format!("no {k:?}"));
        let n = |v: &Value, k: &str| v.get(k).and_then(Value::as_u64).ok_or(format!("no number {k:?}"));
        let format = s(v, "format")?;
        if format != FORMAT {
            return Err(format!("unknown format {format:?} (this version reads {FORMAT})"));
        }
        let conn = v.get("connection").ok_or("no \"connection\"")?;
        let c = v.get("classification").ok_or("no \"classification\"")?;
        let class_name = s(c, "class")?;
        let class = Class::from_name(&class_name).ok_or(format!("unknown class {class_name:?}"))?;
        let mut messages = Vec::new();
        for m in v.get("messages").and_then(Value::as_array).ok_or("no \"messages\" array")? {
            let bytes = unhex(&s(m, "hex")?)?;
            let mut regions = Vec::new();
            for r in m.get("regions").and_then(Value::as_array).ok_or("no \"regions\" array")? {
                let contents = unhex(&s(r, "contents")?)?;
                let ranges = |k: &str| {
                    r.get(k)
                        .and_then(Value::as_array)
                        .ok_or(format!("no {k:?}"))?
                        .iter()
                        .map(|p| {
                            let lo = p.get(0).and_then(Value::as_u64).ok_or("bad range")?;
                            let hi = p.get(1).and_then(Value::as_u64).ok_or("bad range")?;
                            Ok((lo as u32, hi as u32))
                        })
                        .collect::<Result<Vec<_>, String>>()
                };
                regions.push(WireRegion { contents, writable: ranges("writable")?, readable: ranges("readable")? });
            }
            let mut fixups = Vec::new();
            for f in m.get("fixups").and_then(Value::as_array).ok_or("no \"fixups\" array")? {
                let at = n(f, "at")? as usize;
                let region = n(f, "region")? as usize;
                if region >= regions.len() {
                    return Err(format!("fixup names region {region} of {}", regions.len()));
                }
                let fixup = match s(f, "field")?.as_str() {
                    "handle" if at + 4 <= bytes.len() => Fixup::Handle { at, region },
                    "offset" if at + 8 <= bytes.len() => {
                        Fixup::Offset { at, region, delta: f.get("delta").and_then(Value::as_i64).ok_or("no delta")? }
                    }
                    other => return Err(format!("bad fixup {other:?} at {at}")),
                };
                fixups.push(fixup);
            }
            messages.push(Wire { bytes, regions, fixups });
        }
        Ok(Reproducer {
            tool_version: s(v, "tool")?.trim_start_matches("rpcrdma-harness ").to_string(),
            seed: n(v, "seed")?,
            case: n(v, "case")?,
            peer: s(v, "peer")?,
            receive_size: n(conn, "receive_size")? as u32,
            send_size: n(conn, "send_size")? as u32,
            credits: n(conn, "credits")? as u32,
            kind: Kind { class, detail: super::kernel_log::stable_detail(class, &s(c, "detail")?) },
            observed: s(c, "observed")?,
            original_messages: n(v, "original_messages")? as usize,
            messages,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fuzz::generate;

    #[test]
    fn round_trips_through_json() {
        let mut s = generate::null_call(5, 0);
        s.writes = vec![vec![super::super::input::Seg::exact(12)]];
        let r = Reproducer {
            tool_version: "0.1.0".into(),
            seed: 42,
            case: 7,
            peer: "embedded".into(),
            receive_size: 4096,
            send_size: 4096,
            credits: 32,
            kind: Kind { class: Class::Violation, detail: "rfc8166/3.3.1/zero-credit-grant".into() },
            observed: "a reply granted zero credits".into(),
            original_messages: 3,
            messages: vec![s.encode(), generate::null_call(6, 1).encode()],
        };
        let text = serde_json::to_string_pretty(&r.to_json()).unwrap();
        let back = Reproducer::from_json(&serde_json::from_str(&text).unwrap()).unwrap();
        assert_eq!(back, r);
        assert!(text.contains("\"hex\""));
        let mut bad: Value = serde_json::from_str(&text).unwrap();
        bad["format"] = json!("other/9");
        assert!(Reproducer::from_json(&bad).is_err());
    }
}
