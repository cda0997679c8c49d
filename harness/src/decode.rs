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
    /// An RPC-over-RDMA transport header and the RPC header after it.
    Header,
    /// An ONC RPC message alone (no transport header, no record marking).
    Rpc,
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
    match kind {
        Kind::Header => {
            let m = Message::decode(bytes, profile)?;
            Ok(("RPC-over-RDMA Version One header", describe::v1_message(&m, role)))
        }
        Kind::Rpc => Ok(("ONC RPC message", describe::rpc_message(&RpcMessage::decode(bytes)?))),
    }
}
