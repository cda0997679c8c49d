//! `rpcrdma-harness`: the RPC-over-RDMA conformance toolkit's command line.

use rpcrdma_harness::cmd::{
    bench_null, bench_read, decode, export_tree, fuzz, fuzz_panic, list, matrix, profile, replay, report, run, serve,
    vectors,
};
use rpcrdma_harness::exit::{self, Ending, HarnessError, Outcome};
use rpcrdma_harness::{output, signals};

use clap::{CommandFactory, Parser, Subcommand};

/// RPC-over-RDMA conformance toolkit.
#[derive(Debug, Parser)]
#[command(name = "rpcrdma-harness", about, long_about = None)]
#[command(version = concat!(env!("CARGO_PKG_VERSION"), " (", env!("RPCRDMA_HARNESS_REVISION"), ")"))]
#[command(after_help = "Exit status: 0 all as expected, 1 a check failed, 2 usage or environment error, \
3 peer unreachable, 4 a check broke (a harness defect), 130/143 interrupted by SIGINT/SIGTERM.")]
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
    List(list::ListArgs),
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
    Vectors(vectors::VectorsCommand),
    /// Convert JSON reports: `report kcidb REPORT.json... -o FILE` writes KCIDB I/O JSON.
    #[command(subcommand)]
    Report(report::ReportCommand),
    /// Expectation profiles: `profile init --from REPORT.json` drafts one from a run.
    #[command(subcommand)]
    Profile(profile::ProfileCommand),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell) to standard output.
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print a manual page (roff) to standard output: the program's, or a subcommand's
    /// (`man run`); `--dir DIR` writes every page (rpcrdma-harness.1, rpcrdma-harness-run.1, ...).
    Man {
        /// The subcommand whose page to print.
        subcommand: Option<String>,
        /// Write every page into this directory instead.
        #[arg(long, value_name = "DIR", conflicts_with = "subcommand")]
        dir: Option<std::path::PathBuf>,
    },
    /// NFSv3 NULL calls per second against a peer (the embedded reference responder by
    /// default) at queue depth 1 and at the full credit window, or at each --depth.
    BenchNull(bench_null::BenchArgs),
    /// 4 KiB NFSv3 READs per second against a peer (the embedded reference responder by
    /// default), data offered a write chunk: exit 1 on any reply that is not 4096 bytes of the file.
    BenchRead(bench_read::BenchReadArgs),
    /// After the peer's machine died fuzzing: the journal's last case and the console's panic as
    /// a `kernel-panic` finding in DIR; exit 1 unless the profile lists it, 2 on bad input.
    #[command(hide = true)]
    FuzzPanic(fuzz_panic::FuzzPanicArgs),
    /// Write the reference file tree into DIR, the directory your server exports, so `run --peer`
    /// finds the files its checks read (idempotent; prints what it creates or puts back).
    ExportTree(export_tree::ExportTreeArgs),
}

/// One manual page: clap's sections, then EXIT STATUS.
fn page(cmd: clap::Command) -> std::io::Result<Vec<u8>> {
    let man = clap_mangen::Man::new(cmd.clone());
    let mut buf = Vec::new();
    man.render_title(&mut buf)?;
    man.render_name_section(&mut buf)?;
    man.render_synopsis_section(&mut buf)?;
    man.render_description_section(&mut buf)?;
    man.render_options_section(&mut buf)?;
    if cmd.get_subcommands().any(|s| !s.is_hide_set()) {
        man.render_subcommands_section(&mut buf)?;
    }
    buf.extend_from_slice(b".SH \"EXIT STATUS\"\n");
    for (code, meaning) in exit::MEANINGS {
        buf.extend_from_slice(format!(".TP\n{code}\n{meaning}\n").as_bytes());
    }
    if cmd.get_version().is_some() {
        man.render_version_section(&mut buf)?;
    }
    Ok(buf)
}

/// The program and each visible subcommand, named as their pages are
/// (`rpcrdma-harness-run`, as the top page's SEE ALSO-style list refers to them).
fn pages() -> Vec<(String, clap::Command)> {
    let mut cmd = Cli::command().disable_help_subcommand(true);
    cmd.build();
    let mut out = vec![("rpcrdma-harness".to_string(), cmd.clone())];
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        let name = sub.get_display_name().unwrap_or(sub.get_name()).to_string();
        out.push((name, sub.clone()));
    }
    out
}

fn man(subcommand: Option<String>, dir: Option<std::path::PathBuf>) -> Outcome {
    let mut all = pages();
    let result = match (subcommand, dir) {
        (_, Some(dir)) => all.into_iter().try_for_each(|(name, cmd)| {
            std::fs::write(dir.join(format!("{name}.1")), page(cmd)?)
                .map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", dir.join(format!("{name}.1")).display())))
        }),
        (Some(sub), None) => match all.into_iter().find(|(n, _)| n.strip_prefix("rpcrdma-harness-") == Some(&sub)) {
            Some((_, cmd)) => page(cmd).map(|b| output::stdout_str(&String::from_utf8_lossy(&b))),
            None => return Err(exit::usage(format!("no subcommand {sub:?} (see `rpcrdma-harness --help`)"))),
        },
        (None, None) => page(all.swap_remove(0).1).map(|b| output::stdout_str(&String::from_utf8_lossy(&b))),
    };
    result.map(|()| Ending::AsExpected).map_err(|e| HarnessError::Environment(e.to_string()))
}

fn completions(shell: clap_complete::Shell) -> Outcome {
    let mut buf = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "rpcrdma-harness", &mut buf);
    output::stdout_str(&String::from_utf8_lossy(&buf));
    Ok(Ending::AsExpected)
}

fn main() {
    // SIGINT/SIGTERM: finish the current step, write the reports, exit 130/143; twice: abort.
    signals::install();
    let cli = Cli::parse();
    output::configure(cli.color);
    let outcome = match cli.command {
        Command::Run(args) => run::run(args),
        Command::Serve(args) => serve::run(args),
        Command::List(args) => list::list(args),
        Command::Fuzz(args) => fuzz::run(args),
        Command::Replay(args) => replay::run(args),
        Command::Decode(args) => decode::run(args),
        Command::Matrix(args) => matrix::run(args),
        Command::Vectors(cmd) => vectors::run(cmd),
        Command::Profile(cmd) => profile::run(cmd),
        Command::Report(cmd) => report::run(cmd),
        Command::Completions { shell } => completions(shell),
        Command::Man { subcommand, dir } => man(subcommand, dir),
        Command::ExportTree(args) => export_tree::run(args),
        Command::BenchNull(args) => bench_null::run(args),
        Command::BenchRead(args) => bench_read::run(args),
        Command::FuzzPanic(args) => fuzz_panic::run(args),
    };
    // The one place an error is printed and an outcome becomes the exit status.
    if let Err(e) = &outcome {
        if let Some(message) = e.message() {
            rpcrdma_harness::errln!("error: {message}");
        }
    }
    let code = exit::code(&outcome);
    let code = match output::finish() {
        Some(e) => {
            rpcrdma_harness::errln!("error: cannot write standard output: {e}");
            2
        }
        // A run the signal cut short never reads as complete, whatever the subcommand.
        None if code != 2 || signals::input_cut() => signals::exit_code().unwrap_or(code),
        None => code,
    };
    std::process::exit(code);
}
