//! `rpcrdma-harness decode`: decode one message and print it readably or as JSON.

use clap::{Args, ValueEnum};
use rpcrdma_codec::check::Role;
use rpcrdma_codec::rpc::RpcMessage;
use rpcrdma_codec::v1::Message;
use rpcrdma_codec::{DecodeError, Profile};
use serde_json::{json, Value};

use crate::exit::{usage, Ending, HarnessError, Outcome};
use crate::{describe, input, outln, text};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Kind {
    /// An RPC-over-RDMA transport header (Version One or Two, by rdma_vers) and the RPC header after it.
    Header,
    /// An ONC RPC message alone (no transport header, no record marking).
    Rpc,
    /// RDMA-CM private data (RFC 8797), as the CM delivered it (possibly zero-padded).
    PrivateData,
    /// A CCP CONF_RDMA call in an RDMA_MSG (RFC 5666 6).
    CcpCall,
    /// A CCP CONF_RDMA reply in an RDMA_MSG.
    CcpReply,
    /// An RDMA_MSGP message whose first argument or result is a padded opaque (RFC 5666 3.9).
    MsgpPayload,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RoleArg {
    /// Sent by a requester.
    Call,
    /// Sent by a responder.
    Reply,
}

#[derive(Debug, Args)]
pub struct DecodeArgs {
    /// The message as hex (spaces, ':' and '|' allowed) or the harness's hex dump; '-' reads
    /// standard input (at most 1 MiB).
    #[arg(value_name = "HEX")]
    hex: Option<String>,
    /// Read the message from a file (at most 1 MiB): hex text, the harness's hex dump, a
    /// golden-vector .vec file (its kind, profile and role apply), or raw bytes.
    #[arg(long, value_name = "F", conflicts_with = "hex")]
    file: Option<std::path::PathBuf>,
    /// What the bytes are [default: header, or a .vec file's kind].
    #[arg(long, value_enum)]
    kind: Option<Kind>,
    /// Also run the RFC 8166 semantic check, judging the message as sent by this role (with
    /// --kind header only).
    #[arg(long, value_enum)]
    role: Option<RoleArg>,
    // Profile choices, applied after a .vec file's own.
    #[command(flatten)]
    wire: crate::wire_profile::WireArgs,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
}

/// Runs the subcommand; returns the process exit code.
pub fn run(args: DecodeArgs) -> Outcome {
    if args.role.is_some() && args.kind.is_some_and(|k| k != Kind::Header) {
        return Err(usage("--role applies to --kind header only (the other kinds have no requester/responder rules)"));
    }
    let (bytes, meta) = read_input(&args).map_err(HarnessError::Usage)?;
    let meta = meta.unwrap_or_default();
    // A .vec file's own kind, profile and role apply unless the command line says otherwise.
    let kind = match (args.kind, meta.kind.as_deref()) {
        (Some(k), _) => k,
        (None, Some(k)) => Kind::from_str(k, false)
            .map_err(|_| usage(format!("the vector file's kind {k:?} is not one decode knows")))?,
        (None, None) => Kind::Header,
    };
    if args.role.is_some() && kind != Kind::Header {
        return Err(usage(format!("--role applies to --kind header only; this message is {}", kind_name(kind))));
    }
    // Empty CM private data is a message (RFC 8797 5.1: none sent); nothing else is.
    if bytes.is_empty() && kind != Kind::PrivateData {
        return Err(usage("empty input: nothing to decode"));
    }
    let profile = args.wire.over(&meta.profile)?;
    let role = match (args.role, meta.role.as_deref()) {
        (Some(RoleArg::Call), _) | (None, Some("call")) => Some(Role::Call),
        (Some(RoleArg::Reply), _) | (None, Some("reply")) => Some(Role::Reply),
        _ => None,
    };
    match describe_bytes(&bytes, kind, role, &profile) {
        Ok((title, v)) => {
            if args.json {
                outln!("{}", serde_json::to_string_pretty(&v).expect("JSON values serialize"));
            } else {
                crate::output::stdout_str(&text::render(title, &v));
            }
            // A message that breaks a rule of its role is not conforming: exit 1, as for a
            // malformed one. The IDs are the codec's rules (codec/src/check.rs), which the
            // catalogue's checks apply to what a peer sends; `list` names those checks.
            let broken = v["violations"].as_array().map_or(0, Vec::len);
            if broken > 0 {
                crate::errln!(
                    "{broken} rule(s) of RFC 8166 broken by this {} (the codec's rules, not catalogue checks)",
                    if role == Some(Role::Call) { "call" } else { "reply" }
                );
                return Ok(Ending::Failed);
            }
            Ok(Ending::AsExpected)
        }
        Err(e) => {
            if args.json {
                outln!("{}", json!({ "error": describe::error(&e) }));
            } else {
                crate::errln!("error: {e}");
            }
            // A message that does not decode is the finding, not a harness error.
            Ok(Ending::Failed)
        }
    }
}

fn kind_name(k: Kind) -> String {
    k.to_possible_value().map_or_else(|| format!("{k:?}"), |v| v.get_name().to_string())
}

fn read_input(args: &DecodeArgs) -> Result<(Vec<u8>, Option<input::VectorMeta>), String> {
    let contents = match (&args.hex, &args.file) {
        // A FIFO or a terminal may block: the first signal ends the wait (signals::interruptible).
        (_, Some(path)) => {
            let p = path.clone();
            crate::signals::interruptible(move || {
                let f = std::fs::File::open(&p).map_err(|e| format!("{}: {e}", p.display()))?;
                input::read_bounded(f, &p.display().to_string()).map_err(|e| e.to_string())
            })
            .unwrap_or_else(|| Err(format!("{}: interrupted by a signal while reading", path.display())))?
        }
        (Some(h), None) if h == "-" => crate::signals::interruptible(|| {
            input::read_bounded(std::io::stdin().lock(), "standard input").map_err(|e| e.to_string())
        })
        .unwrap_or_else(|| Err("standard input: interrupted by a signal while reading".into()))?,
        (Some(h), None) => {
            if h.len() > input::MAX_INPUT {
                return Err(format!("the argument is more than {} KiB of hex", input::MAX_INPUT >> 10));
            }
            return input::parse_hex(h).and_then(input::check_size).map(|b| (b, None)).map_err(|e| e.to_string());
        }
        (None, None) => return Err("give the message as HEX, --file F, or - for standard input".into()),
    };
    input::from_contents_meta(contents).map_err(|e| e.to_string())
}

/// Decodes `bytes` as `kind`: a title and the description tree.
pub fn describe_bytes(
    bytes: &[u8],
    kind: Kind,
    role: Option<Role>,
    profile: &Profile,
) -> Result<(&'static str, Value), DecodeError> {
    let version_two = bytes.len() >= 8 && bytes[4..8] == rpcrdma_codec::v2::VERSION.to_be_bytes();
    match kind {
        Kind::Header if !version_two => {
            let m = Message::decode(bytes, profile)?;
            Ok(("RPC-over-RDMA Version One header", describe::v1_message(&m, role)))
        }
        Kind::Rpc => Ok(("ONC RPC message", describe::rpc_message(&RpcMessage::decode(bytes)?))),
        Kind::Header => Ok(("RPC-over-RDMA Version Two header", facts(bytes, "header", role, profile)?)),
        Kind::PrivateData => Ok(("RDMA-CM private data", facts(bytes, "private-data", None, profile)?)),
        Kind::CcpCall => Ok(("CCP CONF_RDMA call", facts(bytes, "ccp-call", None, profile)?)),
        Kind::CcpReply => Ok(("CCP CONF_RDMA reply", facts(bytes, "ccp-reply", None, profile)?)),
        Kind::MsgpPayload => Ok(("RDMA_MSGP padded payload", facts(bytes, "msgp-payload", None, profile)?)),
    }
}

/// The decoding as the golden-vector summarizer states it: one field per fact, named with
/// the drafts' XDR names, in wire order.
fn facts(bytes: &[u8], kind: &str, role: Option<Role>, profile: &Profile) -> Result<Value, DecodeError> {
    let v = rpcrdma_vectors::Vector {
        name: "input".into(),
        kind: kind.into(),
        profile: Vec::new(),
        role: role.map(|r| if r == Role::Call { "call".into() } else { "reply".into() }),
        expect: rpcrdma_vectors::Expect::Ok,
        fields: Vec::new(),
        violations: None,
        bytes: bytes.to_vec(),
    };
    let d = rpcrdma_vectors::summarize(&v, profile)?;
    let mut o = serde_json::Map::new();
    for (name, value) in d.facts {
        let v = fact_value(&name, &value);
        // The Version One decoding's `read_chunks` lists the chunks; the summary's is a count.
        let name = if name == "read_chunks" { "read_chunk_count".to_string() } else { name };
        o.insert(name, v);
    }
    if let Some(vs) = d.violations {
        o.insert("violations".into(), json!(vs));
    }
    Ok(Value::Object(o))
}

/// Facts that are opaque bytes in hex, bit lists or names, whatever their digits look like.
const STRING_FACTS: [&str; 6] = [".data", ".bits", "rdma_optinfo", "rdma_extra", "rdma_err", "machinename"];

/// A fact's JSON value, typed as the Version One decoding types the same field: decimal and
/// `0x` hexadecimal numbers (XIDs, handles) are numbers, `true`/`false` booleans, opaque
/// bytes, bit lists and error names strings (one JSON type per field, whatever the value).
fn fact_value(name: &str, value: &str) -> Value {
    if STRING_FACTS.iter().any(|s| name.ends_with(s)) {
        return json!(value);
    }
    if let Ok(n) = value.parse::<u64>() {
        return json!(n);
    }
    if let Some(h) = value.strip_prefix("0x").filter(|h| !h.is_empty() && h.len() <= 16) {
        if let Ok(n) = u64::from_str_radix(h, 16) {
            return json!(n);
        }
    }
    match value {
        "true" | "false" => json!(value == "true"),
        _ => json!(value),
    }
}
