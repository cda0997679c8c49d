//! `rpcrdma-harness`: the RPC-over-RDMA conformance toolkit's command line.

use rpcrdma_harness::{bench_null, decode, export_tree, matrix, run, serve, vectors_cmd};

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

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
    /// Run the conformance catalogue (against the embedded reference responder by default).
    Run(run::RunArgs),
    /// Act as the responder and judge the requester that connects (the client catalogue).
    Serve(serve::ServeArgs),
    /// List the checks with their requirements.
    List {
        /// IDs, prefixes or groups to list.
        #[arg(value_name = "SELECTOR")]
        select: Vec<String>,
        /// Also print each requirement, the acceptable outcomes and the rationale.
        #[arg(short, long)]
        verbose: bool,
    },
    /// Decode a transport header (v1 or v2), an RPC message, CM private data, or a CCP message.
    Decode(decode::DecodeArgs),
    /// Every check against every peer configuration, from JSON reports (Markdown and HTML).
    Matrix(matrix::MatrixArgs),
    /// Golden vectors.
    #[command(subcommand)]
    Vectors(vectors_cmd::VectorsCommand),
    /// NULL calls per second against a peer at queue depth 1 and at the full credit window.
    #[command(hide = true)]
    BenchNull(bench_null::BenchArgs),
    /// Write the reference responder's file tree into DIR (for a real server's export).
    #[command(hide = true)]
    ExportTree { dir: std::path::PathBuf },
}

fn main() {
    let cli = Cli::parse();
    let code = match cli.command {
        Command::Run(args) => {
            let interrupt = Arc::new(AtomicBool::new(false));
            let flag = interrupt.clone();
            // Ctrl-C: finish the current check, skip the rest, write the reports.
            let _ = ctrlc::set_handler(move || {
                if flag.swap(true, Ordering::SeqCst) {
                    std::process::exit(130);
                }
            });
            run::run(args, interrupt)
        }
        Command::Serve(args) => serve::run(args),
        Command::List { select, verbose } => run::list(&select, verbose),
        Command::Decode(args) => decode::run(args),
        Command::Matrix(args) => matrix::run(args),
        Command::Vectors(cmd) => vectors_cmd::run(cmd),
        Command::ExportTree { dir } => export_tree::run(&dir),
        Command::BenchNull(args) => bench_null::run(args),
    };
    std::process::exit(code);
}
