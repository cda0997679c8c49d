//! `rpcrdma-harness`: the RPC-over-RDMA conformance toolkit's command line.

mod decode;
mod describe;
mod input;
mod text;

use clap::{Parser, Subcommand};

/// RPC-over-RDMA conformance toolkit.
#[derive(Debug, Parser)]
#[command(name = "rpcrdma-harness", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Decode an RPC-over-RDMA transport header (and the RPC header after it) or an RPC message.
    Decode(decode::DecodeArgs),
}

fn main() {
    let cli = Cli::parse();
    let code = match cli.command {
        Command::Decode(args) => decode::run(args),
    };
    std::process::exit(code);
}
