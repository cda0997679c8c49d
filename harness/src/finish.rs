//! The tail `run` and `serve` share: after the checks are judged and the reports written,
//! the recap and the closing line, and how the command ends; and the reports of a run that
//! ended before judging anything.

use rpcrdma_conformance::engine::CheckResult;
use rpcrdma_conformance::expectations::{judge, Expectations};

use crate::exit::{Ending, HarnessError, Outcome};
use crate::report::{self, JudgedResult, Prepared, Run, Totals};
use crate::{signals, textln};

/// Each result judged (`--strict`, the profile) and kept with its judgement.
pub fn judge_all(results: Vec<CheckResult>, strict: bool, profile: Option<&Expectations>) -> Vec<JudgedResult> {
    results.into_iter().map(|result| JudgedResult { judged: judge(&result, strict, profile), result }).collect()
}

/// How a finished (or interrupted) run ends: a report that could not be written is
/// [`HarnessError::Unwritten`], an interrupted run 128 + the signal, any failure (or checks
/// not run because the peer went down, or under `--strict` a check left inconclusive, or a
/// run that judged nothing) [`Ending::Failed`], a check that broke [`Ending::HarnessDefect`].
pub fn exit_status(wrote: bool, totals: Totals) -> Outcome {
    if !wrote {
        Err(HarnessError::Unwritten)
    } else if let Some(code) = signals::exit_code() {
        Ok(Ending::Interrupted(code))
    } else if totals.failed > 0
        || totals.not_run > 0
        || (totals.strict && totals.inconclusive > 0)
        || totals.nothing_judged()
    {
        Ok(Ending::Failed)
    } else if totals.errors > 0 {
        Ok(Ending::HarnessDefect)
    } else {
        Ok(Ending::AsExpected)
    }
}

/// Prints the recap of the failed and diverging IDs, the closing line (and, for a run that
/// judged nothing, one line saying so), also under `--quiet`, and says how the run ends
/// ([`exit_status`]).
pub fn close(wrote: bool, run: &Run<'_>) -> Outcome {
    for line in report::recap(run) {
        textln!("{line}");
    }
    let totals = run.totals();
    textln!("{}", report::closing_line(totals));
    if totals.nothing_judged() && signals::exit_code().is_none() {
        textln!("{}", report::nothing_judged_line(totals));
    }
    exit_status(wrote, totals)
}

/// Ends a run that judged nothing: every report asked for says so, with the error and its
/// exit status (an earlier run's report is never left standing as this one's); `main` prints
/// the error.
pub fn failed(outputs: &mut Prepared, command: &'static str, error: HarnessError) -> HarnessError {
    report::write_failure(outputs, command, error.code(), &error.to_string());
    error
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exit::{code, EXIT_FAILED, EXIT_HARNESS_ERROR, EXIT_OK, EXIT_USAGE};

    #[test]
    fn a_broken_check_exits_4_unless_the_peer_also_failed() {
        let status = |wrote, t| code(&exit_status(wrote, t));
        let errors = Totals { errors: 1, ..Default::default() };
        assert_eq!(status(true, errors), EXIT_HARNESS_ERROR);
        assert_eq!(status(true, Totals { failed: 1, ..errors }), EXIT_FAILED);
        assert_eq!(status(true, Totals { passed: 3, ..Default::default() }), EXIT_OK);
        // A run that judged nothing is not green; an inconclusive check fails under --strict.
        assert_eq!(status(true, Totals { skipped: 2, inconclusive: 1, ..Default::default() }), EXIT_FAILED);
        let some = Totals { passed: 1, inconclusive: 1, ..Default::default() };
        assert_eq!(status(true, some), EXIT_OK);
        assert_eq!(status(true, Totals { strict: true, ..some }), EXIT_FAILED);
        assert_eq!(report::closing_line(some), "1 passed, 0 failed, 0 skipped, 1 inconclusive");
        assert!(!some.nothing_judged());
        assert!(Totals { skipped: 3, ..Default::default() }.nothing_judged());
        assert_eq!(status(false, errors), EXIT_USAGE);
    }
}
