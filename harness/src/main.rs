//! `rpcrdma-harness`: the RPC-over-RDMA conformance toolkit's command line.

use rpcrdma_harness::{
    bench_null, decode, export_tree, fuzz, fuzz_panic, matrix, output, replay, run, serve, signals, vectors_cmd,
};

use clap::{CommandFactory, Parser, Subcommand};

/// RPC-over-RDMA conformance toolkit.
#[derive(Debug, Parser)]
#[command(name = "rpcrdma-harness", about, long_about = None)]
#[command(version = concat!(env!("CARGO_PKG_VERSION"), " (", env!("RPCRDMA_HARNESS_REVISION"), ")"))]
#[command(after_help = "Exit status: 0 all as expected, 1 a check failed, 2 usage or environment error, \
3 peer unreachable, 130/143 interrupted by SIGINT/SIGTERM.")]
struct Cli {
    /// Colour the text: auto (on a terminal, unless NO_COLOR is set or TERM=dumb), always, or
    /// never. never also prints ASCII marks (+ x) for ✔ and ×, as does a non-UTF-8 locale.
    #[arg(long, global = true, value_enum, value_name = "WHEN", default_value_t = output::ColorChoice::Auto)]
    color: output::ColorChoice,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the conformance catalogue (against the embedded reference responder by default).
    Run(run::RunArgs),
    /// Act as the responder and judge the requester that connects (the client catalogue).
    Serve(serve::ServeArgs),
    /// List the checks with their requirements (client checks, judged by serve, are marked).
    List(run::ListArgs),
    /// Fuzz a responder (the embedded reference responder by default) with generated and mutated messages.
    Fuzz(fuzz::FuzzArgs),
    /// Replay a fuzz reproducer: exit 1 when its finding reproduces, 0 when it does not.
    Replay(replay::ReplayArgs),
    /// Decode a transport header (v1 or v2), an RPC message, CM private data, or a CCP message.
    Decode(decode::DecodeArgs),
    /// Every check against every peer configuration, from JSON reports (Markdown and HTML).
    Matrix(matrix::MatrixArgs),
    /// Golden vectors.
    #[command(subcommand)]
    Vectors(vectors_cmd::VectorsCommand),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell) to standard output.
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the manual page (roff) to standard output.
    Man,
    /// NULL calls per second against a peer at queue depth 1 and at the full credit window.
    #[command(hide = true)]
    BenchNull(bench_null::BenchArgs),
    /// After the peer's machine died fuzzing: the journal's last case and the console's panic as
    /// a `kernel-panic` finding in DIR; exit 1 unless the profile lists it, 2 on bad input.
    #[command(hide = true)]
    FuzzPanic(fuzz_panic::FuzzPanicArgs),
    /// Write the reference responder's file tree into DIR (for a real server's export).
    #[command(hide = true)]
    ExportTree { dir: std::path::PathBuf },
}

fn man() -> i32 {
    let mut buf = Vec::new();
    match clap_mangen::Man::new(Cli::command()).render(&mut buf) {
        Ok(()) => {
            output::stdout_str(&String::from_utf8_lossy(&buf));
            0
        }
        Err(e) => {
            rpcrdma_harness::errln!("error: {e}");
            2
        }
    }
}

fn completions(shell: clap_complete::Shell) -> i32 {
    let mut buf = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "rpcrdma-harness", &mut buf);
    output::stdout_str(&String::from_utf8_lossy(&buf));
    0
}

fn main() {
    // SIGINT/SIGTERM: finish the current step, write the reports, exit 130/143; twice: abort.
    signals::install();
    let cli = Cli::parse();
    output::configure(cli.color);
    let code = match cli.command {
        Command::Run(args) => run::run(args),
        Command::Serve(args) => serve::run(args),
        Command::List(args) => run::list(args),
        Command::Fuzz(args) => fuzz::run(args),
        Command::Replay(args) => replay::run(args),
        Command::Decode(args) => decode::run(args),
        Command::Matrix(args) => matrix::run(args),
        Command::Vectors(cmd) => vectors_cmd::run(cmd),
        Command::Completions { shell } => completions(shell),
        Command::Man => man(),
        Command::ExportTree { dir } => export_tree::run(&dir),
        Command::BenchNull(args) => bench_null::run(args),
        Command::FuzzPanic(args) => fuzz_panic::run(args),
    };
    let code = match output::finish() {
        Some(e) => {
            rpcrdma_harness::errln!("error: cannot write standard output: {e}");
            2
        }
        // A run the signal cut short never reads as complete, whatever the subcommand.
        None if code != 2 => signals::exit_code().unwrap_or(code),
        None => code,
    };
    std::process::exit(code);
}
