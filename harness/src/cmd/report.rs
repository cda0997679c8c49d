//! `rpcrdma-harness report kcidb REPORT.json... -o FILE`: JSON reports already written,
//! converted into one KCIDB I/O JSON file ([`crate::report::kcidb`]).

use std::path::PathBuf;

use clap::{Args, Subcommand};
use serde_json::Value;

use crate::exit::{usage, Ending, HarnessError, Outcome};
use crate::outln;
use crate::report::json::SCHEMA;
use crate::report::kcidb::{convert, origin, DEFAULT_ORIGIN, VERSION};

#[derive(Debug, Subcommand)]
pub enum ReportCommand {
    /// Convert JSON reports (`run --json`, `serve --json`) into one KCIDB I/O JSON file
    /// (schema v5.3): a checkout and a build per peer version, a test per check.
    Kcidb(KcidbArgs),
}

#[derive(Debug, Args)]
pub struct KcidbArgs {
    /// The JSON reports (schema rpcrdma-harness/report/v1).
    #[arg(value_name = "REPORT.json", required = true)]
    pub reports: Vec<PathBuf>,
    /// Write the KCIDB JSON here (`-`: standard output).
    #[arg(short, long, value_name = "FILE")]
    pub output: PathBuf,
    /// The KCIDB origin (the submitter's name, lower-case letters, digits and `_`).
    #[arg(long, value_name = "ORIGIN", default_value = DEFAULT_ORIGIN, value_parser = origin)]
    pub origin: String,
}

pub fn run(cmd: ReportCommand) -> Outcome {
    let ReportCommand::Kcidb(args) = cmd;
    let mut reports = Vec::new();
    for path in &args.reports {
        let text = crate::input::read_text(path, "report", crate::input::MAX_REPORT).map_err(HarnessError::Usage)?;
        match serde_json::from_str::<Value>(&text) {
            Ok(v) if v["schema"] == SCHEMA => reports.push(v),
            Ok(v) => {
                return Err(usage(format!(
                    "report {}: not an rpcrdma-harness report (schema {}, want {SCHEMA:?})",
                    path.display(),
                    v["schema"],
                )));
            }
            Err(e) => return Err(usage(format!("report {}: not JSON: {e}", path.display()))),
        }
    }
    let data = convert(&reports, &args.origin);
    let mut text = serde_json::to_string_pretty(&data).expect("JSON values serialize");
    text.push('\n');
    if args.output.as_os_str() == "-" {
        crate::output::stdout_str(&text);
        return Ok(Ending::AsExpected);
    }
    std::fs::write(&args.output, text)
        .map_err(|e| HarnessError::Environment(format!("-o {}: {e}", args.output.display())))?;
    let tests = data["tests"].as_array().map_or(0, Vec::len);
    outln!(
        "{}: {tests} tests from {} reports (KCIDB I/O v{}.{})",
        args.output.display(),
        reports.len(),
        VERSION.0,
        VERSION.1
    );
    Ok(Ending::AsExpected)
}
