//! `rpcrdma-harness decode`: decode one message and print it readably or as JSON.

use std::io::Read;

use clap::{Args, ValueEnum};
use rpcrdma_codec::check::Role;
use rpcrdma_codec::rpc::RpcMessage;
use rpcrdma_codec::v1::Message;
use rpcrdma_codec::{DecodeError, Profile};
use serde_json::{json, Value};

use crate::{describe, input, text};

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
    /// The message as hex (spaces, ':' and '|' allowed); '-' reads standard input.
    #[arg(value_name = "HEX")]
    hex: Option<String>,
    /// Read the message from a file: hex text, a golden-vector .vec file, or raw bytes.
    #[arg(long, value_name = "F", conflicts_with = "hex")]
    file: Option<std::path::PathBuf>,
    /// What the bytes are.
    #[arg(long, value_enum, default_value_t = Kind::Header)]
    kind: Kind,
    /// Also run the RFC 8166 semantic check, judging the message as sent by this role.
    #[arg(long, value_enum)]
    role: Option<RoleArg>,
    /// A profile choice (repeatable): rfc5666-error-arm, msgp-above, ...
    #[arg(long = "profile", value_name = "NAME")]
    profiles: Vec<String>,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
}

/// Runs the subcommand; returns the process exit code.
pub fn run(args: DecodeArgs) -> i32 {
    let bytes = match read_input(&args) {
        Ok(b) => b,
        Err(msg) => {
            eprintln!("error: {msg}");
            return 2;
        }
    };
    let mut profile = Profile::default();
    for p in &args.profiles {
        if !profile.apply(p) {
            eprintln!("error: unknown profile {p:?}; known: {}", Profile::NAMES.join(", "));
            return 2;
        }
    }
    let role = args.role.map(|r| match r {
        RoleArg::Call => Role::Call,
        RoleArg::Reply => Role::Reply,
    });
    match describe_bytes(&bytes, args.kind, role, &profile) {
        Ok((title, v)) => {
            if args.json {
                println!("{}", serde_json::to_string_pretty(&v).expect("JSON values serialize"));
            } else {
                print!("{}", text::render(title, &v));
            }
            0
        }
        Err(e) => {
            if args.json {
                println!("{}", json!({ "error": describe::error(&e) }));
            } else {
                eprintln!("error: {e}");
            }
            1
        }
    }
}

fn read_input(args: &DecodeArgs) -> Result<Vec<u8>, String> {
    let contents = match (&args.hex, &args.file) {
        (_, Some(path)) => std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?,
        (Some(h), None) if h == "-" => {
            let mut buf = Vec::new();
            std::io::stdin().read_to_end(&mut buf).map_err(|e| format!("stdin: {e}"))?;
            buf
        }
        (Some(h), None) => return input::parse_hex(h).map_err(|e| e.to_string()),
        (None, None) => return Err("give the message as HEX, --file F, or - for standard input".into()),
    };
    input::from_contents(contents).map_err(|e| e.to_string())
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
        let v = match value.parse::<u64>() {
            Ok(n) => json!(n),
            Err(_) if value == "true" || value == "false" => json!(value == "true"),
            Err(_) => json!(value),
        };
        o.insert(name, v);
    }
    if let Some(vs) = d.violations {
        o.insert("violations".into(), json!(vs));
    }
    Ok(Value::Object(o))
}
