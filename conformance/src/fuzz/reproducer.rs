//! Reproducer files (documented in docs/fuzzing.md): JSON holding the tool version, the
//! seed, our connection parameters, the exact messages in hex with the regions each points
//! into (size, full contents with guards, writable ranges) and where their real handles and
//! addresses go, and the classification the replay must find again.

use serde_json::{json, Value};

use super::classify::{Class, Kind};
use super::input::{Fixup, Wire, WireRegion};
use crate::engine::RunOptions;
use rpcrdma_codec::Profile;

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
    /// The cases (number and messages) that went over the finding's connection before it,
    /// when it does not show without them (docs/fuzzing.md, "Cases and connections"): replay
    /// sends them first, each followed by its liveness probe, on the same connection. Empty:
    /// the messages alone on a fresh connection show it.
    pub preceding: Vec<(u64, Vec<Wire>)>,
    /// The run went on over kept connections and proved a case's liveness by the reply to its
    /// own last call where it could (`fuzz --reuse-connections`): replay probes the same way.
    /// Files written before this field existed read it as whether they have `preceding`.
    pub reuse_connections: bool,
    /// The spec choices the run read and wrote the wire under (`"profile"`: their names, absent
    /// for the default); replay uses them.
    pub profile: Profile,
    /// Minimising was cut short because the peer could not be brought back for the next trial
    /// (`"minimisation_cut_short"`: why, absent when minimising ran its course): `messages` are
    /// the smallest case that showed the finding so far, not fully minimised.
    pub cut_short: Option<String>,
}

fn hex(b: &[u8]) -> String {
    rpcrdma_codec::hex::Hex(b).to_string()
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
            profile: self.profile,
            ..RunOptions::default()
        }
    }

    pub fn to_json(&self) -> Value {
        self.json(false)
    }

    /// As [`Reproducer::to_json`], each region's contents as runs ([`runs`]) and no fixups
    /// when `compact` (a journal line: the placeholders in the bytes give the fixups back).
    pub(crate) fn json(&self, compact: bool) -> Value {
        let wire_json = |w: &Wire| wire_json(w, compact);
        let pd = rpcrdma_codec::private_data::PrivateData::new(self.send_size, self.receive_size, true)
            .map(|p| {
                let mut b = [0u8; 8];
                let _ = p.encode_into(&mut b);
                hex(&b)
            })
            .unwrap_or_default();
        let messages: Vec<Value> = self.messages.iter().map(wire_json).collect();
        let mut v = json!({
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
            "reuse_connections": self.reuse_connections,
        });
        if self.profile != Profile::default() {
            v["profile"] = self.profile.choices().collect::<Vec<_>>().into();
        }
        if let Some(why) = &self.cut_short {
            v["minimisation_cut_short"] = json!(why);
        }
        if !self.preceding.is_empty() {
            v["preceding"] = self
                .preceding
                .iter()
                .map(|(n, c)| json!({"case": n, "messages": c.iter().map(wire_json).collect::<Vec<_>>()}))
                .collect();
        }
        v
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
        let messages = wires_from_json(v.get("messages"))?;
        let mut profile = Profile::default();
        for name in v.get("profile").and_then(Value::as_array).into_iter().flatten() {
            let name = name.as_str().ok_or("\"profile\": not a list of choice names")?;
            if !profile.apply(name) {
                return Err(format!("\"profile\": unknown choice {name:?}"));
            }
        }
        let mut preceding = Vec::new();
        for p in v.get("preceding").and_then(Value::as_array).into_iter().flatten() {
            preceding.push((n(p, "case")?, wires_from_json(p.get("messages"))?));
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
            reuse_connections: match v.get("reuse_connections") {
                None => !preceding.is_empty(),
                Some(b) => b.as_bool().ok_or("\"reuse_connections\": not true or false")?,
            },
            preceding,
            profile,
            cut_short: match v.get("minimisation_cut_short") {
                None => None,
                Some(w) => Some(w.as_str().ok_or("\"minimisation_cut_short\": not a string")?.to_string()),
            },
        })
    }
}

/// One message as JSON: its bytes, regions and fixups.
fn wire_json(w: &Wire, compact: bool) -> Value {
    let regions: Vec<Value> = w
        .regions
        .iter()
        .map(|r| {
            let mut v = json!({
                "size": r.contents.len(),
                "writable": r.writable.iter().map(|&(lo, hi)| json!([lo, hi])).collect::<Vec<_>>(),
                "readable": r.readable.iter().map(|&(lo, hi)| json!([lo, hi])).collect::<Vec<_>>(),
            });
            if compact {
                v["runs"] = json!(runs(&r.contents));
            } else {
                v["contents"] = json!(hex(&r.contents));
            }
            v
        })
        .collect();
    if compact {
        return json!({"hex": hex(&w.bytes), "length": w.bytes.len(), "regions": regions});
    }
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
}

/// Bytes as runs, for journal lines (a serial port carries them before every case): items
/// separated by spaces, `HH*N` for N bytes HH (runs of 8 or more), hex for the bytes between.
/// A region is mostly guard bytes and zeros: 4 KiB of them is 4 bytes here, 8 KiB as hex.
pub fn runs(b: &[u8]) -> String {
    let mut items = Vec::new();
    let mut literal = String::new();
    let mut i = 0;
    while i < b.len() {
        let n = b[i..].iter().take_while(|&&x| x == b[i]).count();
        if n >= 8 {
            if !literal.is_empty() {
                items.push(std::mem::take(&mut literal));
            }
            items.push(format!("{:02x}*{n}", b[i]));
            i += n;
        } else {
            literal += &hex(&b[i..i + n]);
            i += n;
        }
    }
    if !literal.is_empty() {
        items.push(literal);
    }
    items.join(" ")
}

/// The bytes [`runs`] wrote.
pub fn from_runs(s: &str) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    for item in s.split(' ').filter(|i| !i.is_empty()) {
        match item.split_once('*') {
            Some((byte, n)) => {
                let byte = u8::from_str_radix(byte, 16).map_err(|_| format!("bad run {item:?}"))?;
                let n: usize = n.parse().map_err(|_| format!("bad run {item:?}"))?;
                if n > 1 << 24 {
                    return Err(format!("run {item:?} too long"));
                }
                out.resize(out.len() + n, byte);
            }
            None => out.extend(unhex(item)?),
        }
    }
    Ok(out)
}

/// Messages from their JSON (an array of [`wire_json`]'s; a region's contents as hex, or as
/// [`runs`] in journal lines).
fn wires_from_json(messages: Option<&Value>) -> Result<Vec<Wire>, String> {
    let s = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).map(str::to_string).ok_or(format!("no {k:?}"));
    let n = |v: &Value, k: &str| v.get(k).and_then(Value::as_u64).ok_or(format!("no number {k:?}"));
    let mut out = Vec::new();
    for m in messages.and_then(Value::as_array).ok_or("no \"messages\" array")? {
        let bytes = unhex(&s(m, "hex")?)?;
        let mut regions = Vec::new();
        for r in m.get("regions").and_then(Value::as_array).ok_or("no \"regions\" array")? {
            let contents = match r.get("runs").and_then(Value::as_str) {
                Some(runs) => from_runs(runs)?,
                None => unhex(&s(r, "contents")?)?,
            };
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
        // Journal lines leave the fixups out: the placeholders in the bytes give them.
        let Some(listed) = m.get("fixups") else {
            out.push(Wire::new(bytes, regions));
            continue;
        };
        let mut fixups = Vec::new();
        for f in listed.as_array().ok_or("no \"fixups\" array")? {
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
        out.push(Wire { bytes, regions, fixups });
    }
    Ok(out)
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
            preceding: vec![(5, vec![generate::null_call(3, 32).encode()]), (6, Vec::new())],
            reuse_connections: true,
            profile: Profile { error_arm: rpcrdma_codec::profile::ErrorArm::Rfc5666, ..Profile::default() },
            cut_short: Some("the restart command failed (exit 1): false".into()),
        };
        let text = serde_json::to_string_pretty(&r.to_json()).unwrap();
        let back = Reproducer::from_json(&serde_json::from_str(&text).unwrap()).unwrap();
        assert_eq!(back, r);
        assert!(text.contains("\"hex\""));
        assert!(text.contains("\"minimisation_cut_short\": \"the restart command failed"), "{text}");
        let whole = Reproducer { cut_short: None, ..r.clone() };
        assert!(
            !whole.to_json().to_string().contains("minimisation_cut_short"),
            "absent when minimising ran its course"
        );
        assert!(text.contains("\"rfc5666-error-arm\""), "the profile's choices by name");
        assert_eq!(back.options().profile, r.profile, "replay connects under the recorded profile");
        let mut unknown: Value = serde_json::from_str(&text).unwrap();
        unknown["profile"] = json!(["no-such"]);
        assert!(Reproducer::from_json(&unknown).unwrap_err().contains("no-such"));
        assert!(!text.contains("\"runs\""), "files hold the contents as hex");
        // Journal lines hold them as runs; both read back the same.
        for b in [&[][..], &[7], &[0xc5; 32], &[1, 2, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9, 9]] {
            assert_eq!(from_runs(&runs(b)).unwrap(), b, "{}", runs(b));
        }
        let guarded = [vec![0xc5; 32], vec![0; 4096], vec![0xab, 0xcd], vec![0xc5; 32]].concat();
        assert_eq!(runs(&guarded), "c5*32 00*4096 abcd c5*32");
        assert!(from_runs("c5*x").is_err() && from_runs("c5*99999999999").is_err() && from_runs("abc").is_err());
        let mut bad: Value = serde_json::from_str(&text).unwrap();
        bad["format"] = json!("other/9");
        assert!(Reproducer::from_json(&bad).is_err());
        // Before the field: a reproducer with cases before it came from a run that reused
        // connections, one without from a run that did not.
        let mut old: Value = serde_json::from_str(&text).unwrap();
        old.as_object_mut().unwrap().remove("reuse_connections");
        assert!(Reproducer::from_json(&old).unwrap().reuse_connections);
        old.as_object_mut().unwrap().remove("preceding");
        assert!(!Reproducer::from_json(&old).unwrap().reuse_connections);
        // Recorded, it wins over the inference: a reused run's finding shown alone.
        let alone = Reproducer { preceding: Vec::new(), ..r.clone() };
        let back = Reproducer::from_json(&alone.to_json()).unwrap();
        assert!(back.reuse_connections && back.preceding.is_empty());
        old["reuse_connections"] = json!("yes");
        assert!(Reproducer::from_json(&old).unwrap_err().contains("reuse_connections"));
    }
}
