//! `serve --fuzz`: the responder answers a real requester (or the embedded one) and replaces
//! one reply in N with a mutated copy (`rpcrdma_peers::responder::reply_fuzz`), while the
//! requester's kernel log is followed. What it finds: a kernel bug report (WARN, BUG, oops,
//! KASAN, hung task) after a mutated reply, kept with that reply and the call it answered.
//! The client catalogue is not judged meanwhile: its checks assume faithful replies.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Args;
use rpcrdma_codec::hex::Hex;
use rpcrdma_conformance::expectations::Expectations;
use rpcrdma_conformance::fuzz::kernel_log::{report_signatures, CONTEXT_LINES};
use rpcrdma_peers::observe::{Observed, ObservedConnection};
use rpcrdma_peers::responder::{ReplyFuzz, ReverseMutation};
use serde_json::json;

use crate::exit::{usage, Ending, HarnessError, Outcome};
use crate::kernel_log::KernelLog;
use crate::textln;

#[derive(Debug, Clone, Default, Args)]
pub struct FuzzArgs {
    /// Mutate replies (one in `--fuzz-one-in`) instead of judging the client catalogue:
    /// truncated, wrong version, procedure, credit or XID, chunk lists broken, bits flipped;
    /// and reverse-direction calls (`reverse-*`: transport header, RPC header, CB_COMPOUND).
    #[arg(long)]
    pub fuzz: bool,
    /// The seed of the mutations; from the clock by default, and printed.
    #[arg(long, value_name = "S", requires = "fuzz")]
    pub seed: Option<u64>,
    /// Mutate one reply in N (at least 1); reverse-direction calls (NFSv4.1 callbacks, RFC
    /// 8167) likewise.
    #[arg(long, value_name = "N", default_value_t = 3, requires = "fuzz")]
    pub fuzz_one_in: u32,
    /// Mutate only reverse-direction calls (NFSv4.1 callbacks toward the client's back
    /// channel), never replies, so the client gets as far as its back channel every time.
    #[arg(long, requires = "fuzz")]
    pub fuzz_reverse_only: bool,
    /// Follow the requester's kernel log (`/dev/kmsg` on the client's machine): with --fuzz a
    /// bug report after a mutated reply is a finding; judging the catalogue, the lines logged
    /// while a scenario was played join its checks, and a bug report among them fails them.
    #[arg(long, value_name = "FILE")]
    pub kernel_log: Option<PathBuf>,
    /// Where finding files go.
    #[arg(long, value_name = "DIR", default_value = "serve-fuzz-findings", requires = "fuzz")]
    pub out: PathBuf,
}

/// A fuzzing session under way: the mutator the responders share and the kernel log.
pub struct Session {
    pub seed: u64,
    pub mutator: Arc<ReplyFuzz>,
    /// `--fuzz-reverse-only`.
    pub reverse_only: bool,
    log: Option<KernelLog>,
    started: Instant,
}

impl Session {
    /// Sets up the session; an error says why not.
    pub fn start(args: &FuzzArgs) -> Result<Session, HarnessError> {
        let seed = crate::fuzz_target::seed_or_clock(args.seed);
        let log = match &args.kernel_log {
            None => None,
            Some(p) => Some(KernelLog::follow(p).map_err(|e| usage(format!("--kernel-log {}: {e}", p.display())))?),
        };
        std::fs::create_dir_all(&args.out)
            .map_err(|e| HarnessError::Environment(format!("--out {}: {e}", args.out.display())))?;
        let mutator = Arc::new(if args.fuzz_reverse_only {
            ReplyFuzz::reverse_only(seed, args.fuzz_one_in)
        } else {
            ReplyFuzz::new(seed, args.fuzz_one_in)
        });
        Ok(Session { seed, mutator, reverse_only: args.fuzz_reverse_only, log, started: Instant::now() })
    }

    /// Time since the session started (the clock of findings).
    pub fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }
}

/// One mutated reply: when, how, the call it answered and what was sent instead; or one
/// mutated reverse-direction call (`reverse_call`: the n-th on its connection, from 1; `call`
/// what was sent, `reply` empty).
#[derive(Debug, Clone)]
struct Mutation {
    at: Duration,
    how: &'static str,
    xid: u32,
    call: Vec<u8>,
    reply: Vec<u8>,
    reverse_call: Option<usize>,
}

fn mutations(observed: &[ObservedConnection]) -> Vec<Mutation> {
    let mut out = Vec::new();
    for c in observed {
        for (i, (at, e)) in c.events.iter().enumerate() {
            let Observed::Mutated { how, xid } = e else { continue };
            let reply = c.events[i + 1..].iter().find_map(|(_, e)| match e {
                Observed::ToRequester(b) => Some(b.clone()),
                _ => None,
            });
            if ReverseMutation::ALL.iter().any(|m| m.name() == *how) {
                let n = c.events[..i].iter().filter(|(_, e)| matches!(e, Observed::ReverseCall { .. })).count();
                out.push(Mutation {
                    at: *at,
                    how,
                    xid: *xid,
                    call: reply.unwrap_or_default(),
                    reply: Vec::new(),
                    reverse_call: Some(n),
                });
                continue;
            }
            let call = c.events[..i].iter().rev().find_map(|(_, e)| match e {
                Observed::FromRequester(b) if b.get(..4) == Some(&xid.to_be_bytes()[..]) => Some(b.clone()),
                _ => None,
            });
            out.push(Mutation {
                at: *at,
                how,
                xid: *xid,
                call: call.unwrap_or_default(),
                reply: reply.unwrap_or_default(),
                reverse_call: None,
            });
        }
    }
    out.sort_by_key(|m| m.at);
    out
}

/// A kernel report: its signature, the lines, and the mutation that came last before it.
struct Finding {
    kind: String,
    lines: Vec<String>,
    after: Option<Mutation>,
    known: Option<String>,
}

fn findings(lines: &[(Duration, String)], muts: &[Mutation], profile: Option<&Expectations>) -> Vec<Finding> {
    let text: Vec<String> = lines.iter().map(|(_, l)| l.clone()).collect();
    let mut out: Vec<Finding> = Vec::new();
    for (i, sig) in report_signatures(&text) {
        let kind = format!("kernel-report: {sig}");
        if out.iter().any(|f| f.kind == kind) {
            continue;
        }
        let at = lines[i].0;
        let end = (i + 1 + CONTEXT_LINES).min(lines.len());
        let after = muts.iter().rev().find(|m| m.at <= at).cloned();
        let known = profile.and_then(|p| p.known_finding(&kind)).map(|k| k.reason.clone());
        out.push(Finding { kind, lines: text[i..end].to_vec(), after, known });
    }
    out
}

/// A finding file; `"profile"` names the wire profile's choices it was found under (none for
/// the default), which `replay --listen` serves under again.
fn save(dir: &Path, n: usize, f: &Finding, seed: u64, wire: &[&str]) -> Result<PathBuf, String> {
    let v = json!({
        "format": crate::client_finding::FORMAT,
        "tool": format!("rpcrdma-harness {}", env!("CARGO_PKG_VERSION")),
        "seed": seed,
        "profile": wire,
        "kind": f.kind,
        "kernel_log": f.lines,
        "after_mutation": f.after.as_ref().map(|m| match m.reverse_call {
            None => json!({
                "how": m.how, "xid": format!("{:#010x}", m.xid), "call": Hex(&m.call).to_string(), "reply": Hex(&m.reply).to_string(),
            }),
            // The mutated reverse-direction call as sent, and which of the connection's it was.
            Some(n) => json!({
                "how": m.how, "xid": format!("{:#010x}", m.xid), "reverse_call": n, "call": Hex(&m.call).to_string(),
            }),
        }),
    });
    let name = crate::fuzz_target::finding_name(n + 1, &crate::fuzz_target::file_safe(&f.kind), "");
    crate::fuzz_target::save_finding(dir, &name, &v)
}

/// Ends the session: reads the kernel log, writes finding files and the report (`json`),
/// prints the summary; [`Ending::Failed`] on a finding the profile does not list.
pub fn finish(
    session: &Session,
    args: &FuzzArgs,
    observed: &[ObservedConnection],
    profile: Option<&Expectations>,
    wire: &rpcrdma_codec::Profile,
    json_out: Option<&mut crate::report::Sink>,
) -> Outcome {
    let wire = crate::wire_profile::names(wire);
    let lines: Vec<(Duration, String)> = session
        .log
        .as_ref()
        .map(|l| l.drain_timed().into_iter().map(|(t, s)| (t.saturating_duration_since(session.started), s)).collect())
        .unwrap_or_default();
    let muts = mutations(observed);
    let found = findings(&lines, &muts, profile);
    let mut by_how: BTreeMap<&str, usize> = BTreeMap::new();
    for m in &muts {
        *by_how.entry(m.how).or_default() += 1;
    }
    let replies: usize =
        observed.iter().flat_map(|c| c.events.iter()).filter(|(_, e)| matches!(e, Observed::ToRequester(_))).count();
    let calls: usize =
        observed.iter().flat_map(|c| c.events.iter()).filter(|(_, e)| matches!(e, Observed::FromRequester(_))).count();
    let mut failed_write = false;
    let mut files = Vec::new();
    for (n, f) in found.iter().enumerate() {
        match save(&args.out, n, f, session.seed, &wire) {
            Ok(p) => files.push(Some(p)),
            Err(e) => {
                crate::errln!("error: {e}");
                failed_write = true;
                files.push(None);
            }
        }
    }
    let how: Vec<String> = by_how.iter().map(|(k, v)| format!("{k} {v}")).collect();
    textln!(
        "fuzzed replies (seed {}): {} of {replies} replies mutated ({}), {calls} calls on {} connections",
        session.seed,
        muts.len(),
        if how.is_empty() { "none".to_string() } else { how.join(", ") },
        observed.len()
    );
    if session.log.is_none() {
        textln!("no kernel log followed (--kernel-log): only the transcript was kept");
    }
    for (i, f) in found.iter().enumerate() {
        textln!("finding {}: {}", i + 1, f.kind);
        match &f.after {
            Some(m @ Mutation { reverse_call: Some(n), .. }) => textln!(
                "    after our reverse-direction call {:#010x} (call {n} on its connection) was mutated ({}): {}",
                m.xid,
                m.how,
                Hex(&m.call)
            ),
            Some(m) => textln!("    after our reply to {:#010x} was mutated ({}): {}", m.xid, m.how, Hex(&m.reply)),
            None => {}
        }
        for l in f.lines.iter().take(8) {
            textln!("    {l}");
        }
        if let Some(Some(p)) = files.get(i) {
            textln!("    finding file: {}", p.display());
        }
        if let Some(reason) = &f.known {
            textln!("    known (the profile lists it): {reason}");
        }
    }
    if found.is_empty() {
        textln!("no findings");
    }
    if let Some(sink) = json_out {
        let v = json!({
            "schema": "rpcrdma-harness/serve-fuzz-report/v1",
            "tool": format!("rpcrdma-harness {}", env!("CARGO_PKG_VERSION")),
            "seed": session.seed,
            "wire_profile": wire,
            "one_in": args.fuzz_one_in,
            "connections": observed.len(),
            "calls": calls,
            "replies": replies,
            "mutated": by_how,
            "kernel_log_followed": session.log.is_some(),
            "findings": found.iter().enumerate().map(|(i, f)| json!({
                "kind": f.kind,
                "kernel_log": f.lines,
                "after_mutation": f.after.as_ref().map(|m| json!({
                    "how": m.how, "xid": format!("{:#010x}", m.xid), "reverse_call": m.reverse_call,
                })),
                "file": files.get(i).cloned().flatten().map(|p| p.display().to_string()),
                "known": f.known,
            })).collect::<Vec<_>>(),
        });
        let text = serde_json::to_string_pretty(&v).expect("JSON values serialize") + "\n";
        failed_write |= !crate::report::write_sink(sink, text.as_bytes());
    }
    if failed_write && crate::signals::exit_code().is_none() {
        return Err(HarnessError::Unwritten);
    }
    Ok(Ending::judged(found.iter().any(|f| f.known.is_none())))
}
