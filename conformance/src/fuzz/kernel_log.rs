//! The peer's kernel log, where the harness can read it (in the VM the harness runs beside the
//! Linux peer and reads `/dev/kmsg`): which lines are the kernel reporting a bug of its own,
//! and the stable signature a finding is kept under, so the same WARN at the same place is
//! one finding however often it fires and whatever CPU, task or address it names. A signature
//! names files and functions, never line numbers: a point release that moves a line (6.12.117's
//! `svc.h:520` is 6.12.118's `svc.h:523`) must not turn a known finding into a new one. The
//! line stays in the finding's text (its kernel lines), not in its identity.

/// Lines kept after a report line (its registers and call trace), per case.
pub const CONTEXT_LINES: usize = 40;

/// The signature of a kernel report line, or None for an ordinary line. The signature drops
/// what changes from one occurrence to the next: CPU and PID, addresses, offsets into functions,
/// task names and times, and line numbers (which change from one point release to the next).
pub fn report_signature(line: &str) -> Option<String> {
    let line = line.trim();
    // Until Linux 6.x: "WARNING: CPU: 0 PID: 42 at net/x.c:123 svc_rdma_foo+0x1c/0x80 [rpcrdma]";
    // since 7.x: "WARNING: include/linux/sunrpc/svc.h:539 at svc_process+0x21e/0x250 [sunrpc], CPU#0: nfsd/476".
    if let Some(rest) = line.strip_prefix("WARNING:") {
        return Some(match rest.split_once(" at ") {
            // The 7.x form puts the place (and, where the kernel prints it, the condition text)
            // before " at ".
            Some((before, after)) if !before.trim_start().starts_with("CPU:") => {
                format!("WARNING at {} {}", without_lines(before.trim()), function(after))
            }
            Some((_, place)) => format!("WARNING at {}", place_and_function(place)),
            None => format!("WARNING:{}", without_numbers(rest)),
        });
    }
    // "kernel BUG at net/sunrpc/svc_xprt.c:1010!"
    if let Some(place) = line.strip_prefix("kernel BUG at ") {
        return Some(format!("kernel BUG at {}", without_lines(place.trim_end_matches('!'))));
    }
    // "BUG: KASAN: slab-out-of-bounds in svc_rdma_foo+0x1c/0x80 [rpcrdma]",
    // "BUG: kernel NULL pointer dereference, address: 0000000000000008",
    // "BUG: unable to handle page fault for address: ffff8880deadbeef"
    if let Some(rest) = line.strip_prefix("BUG: ") {
        let what = rest.split(", address").next().unwrap_or(rest);
        let what = what.split(" for address").next().unwrap_or(what);
        return Some(format!("BUG: {}", function_names(what)));
    }
    if line.starts_with("Oops:") || line.starts_with("general protection fault") {
        return Some(line.split([',', ':']).next().unwrap_or(line).trim().to_string());
    }
    // "UBSAN: array-index-out-of-bounds in net/sunrpc/xprtrdma/svc_rdma_recvfrom.c:500:7"
    if let Some(rest) = line.strip_prefix("UBSAN: ") {
        return Some(format!("UBSAN: {}", without_lines(rest)));
    }
    // "INFO: task nfsd:1234 blocked for more than 120 seconds." A kernel worker's pool
    // ("kworker/u4:3": unbound, pool 4) depends on the machine's CPUs: "kworker".
    if line.starts_with("INFO: task ") && line.contains(" blocked for more than ") {
        let task = line["INFO: task ".len()..].split(':').next().unwrap_or("");
        let task = if task.starts_with("kworker/") { "kworker" } else { task };
        return Some(format!("hung task {task}"));
    }
    // "refcount_t: underflow; use-after-free.", "list_add corruption. ..."
    for prefix in CORRUPTIONS {
        if line.starts_with(prefix) {
            return Some(without_numbers(line.split(['.', ',']).next().unwrap_or(line)));
        }
    }
    None
}

/// The reports in `lines`: each report's first line (its index) and its signature. A report's
/// later lines (the `Oops` after a `BUG:`, its registers and trace) are part of it, not reports
/// of their own; a signature that names no place (a NULL dereference, an oops, a page fault,
/// a general protection fault) gets the function of the report's `RIP:` line.
pub fn report_signatures(lines: &[String]) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut until = 0;
    for (i, line) in lines.iter().enumerate() {
        if i < until {
            continue;
        }
        let Some(mut sig) = report_signature(line) else { continue };
        until = i + 1 + CONTEXT_LINES;
        // "kernel BUG at FILE" names the file only: its RIP names the function.
        let placeless = [
            "BUG: kernel NULL pointer dereference",
            "BUG: unable to handle",
            "Oops",
            "general protection fault",
            "kernel BUG at",
        ];
        let report = &lines[i + 1..lines.len().min(until)];
        if placeless.iter().any(|p| sig.starts_with(p)) {
            let rip = report.iter().find_map(|l| l.trim().strip_prefix("RIP: "));
            if let Some(rip) = rip {
                // "0010:frwr_unmap_sync+0xb1/0x240 [rpcrdma]"
                let at = rip.split_once(':').map_or(rip, |(_, f)| f);
                sig = format!("{sig} in {}", function(at));
            }
        }
        // A hung task names the function it waits in; a warning in the page or slab
        // allocator (an allocation too large for it, say) the function that asked: the first
        // reliable frame of the trace past the scheduler's waits or the allocator's own.
        if sig.starts_with("hung task ") {
            if let Some(f) = first_frame(report, WAITS) {
                sig = format!("{sig} in {f}");
            }
        } else if CORRUPTIONS.iter().any(|c| sig.starts_with(c)) {
            // A list or refcount check names no place of its own: the function whose list or
            // count it was, past the list, refcount and wait helpers it went through.
            let skip: Vec<&str> = CORRUPTION_HELPERS.iter().chain(WAITS).copied().collect();
            if let Some(f) = first_frame(report, &skip) {
                sig = format!("{sig} from {f}");
            }
        } else if sig.starts_with("WARNING at mm/")
            && sig.rsplit(' ').next().is_some_and(|f| ALLOCATORS.iter().any(|a| f.starts_with(a)))
        {
            if let Some(f) = first_frame(report, ALLOCATORS) {
                sig = format!("{sig} from {f}");
            }
        }
        out.push((i, sig));
    }
    out
}

/// The reports of a corrupted list or reference count (lib/list_debug.c, lib/refcount.c).
const CORRUPTIONS: &[&str] = &["list_add corruption", "list_del corruption", "refcount_t: "];

/// Prefixes of the functions that check lists and reference counts, and report them.
const CORRUPTION_HELPERS: &[&str] =
    &["__list_", "list_", "__hlist_", "hlist_", "refcount_", "__refcount_", "kref_", "__kref_"];

/// Prefixes of the functions a blocked task waits in (kernel/sched/core.c, kernel/time/timer.c,
/// kernel/sched/completion.c, kernel/locking/, kernel/sched/wait_bit.c).
const WAITS: &[&str] = &[
    "__schedule",
    "schedule",
    "io_schedule",
    "__wait_for_common",
    "wait_for_common",
    "wait_for_completion",
    "__mutex_lock",
    "mutex_lock",
    "rwsem_down",
    "down_",
    "__down",
    "rt_mutex",
    "__wait_on_bit",
    "out_of_line_wait_on_bit",
    "bit_wait",
    "wait_on_page",
    "folio_wait",
];

/// Prefixes of the page and slab allocator's functions (mm/page_alloc.c, mm/mempolicy.c,
/// mm/slub.c, mm/util.c, mm/vmalloc.c).
const ALLOCATORS: &[&str] = &[
    "__alloc_pages",
    "alloc_pages",
    "__alloc_frozen_pages",
    "alloc_frozen_pages",
    "___kmalloc",
    "__kmalloc",
    "kmalloc",
    "__kvmalloc",
    "kvmalloc",
    "krealloc",
    "__vmalloc",
    "vmalloc",
    "__folio_alloc",
    "folio_alloc",
    "kmem_cache_alloc",
    "__kmem_cache_alloc",
];

/// The function of the first reliable frame of a report's call trace (frames the unwinder
/// marks "?" are guesses) whose name does not begin with one of `skip`.
fn first_frame<'a>(report: &'a [String], skip: &[&str]) -> Option<&'a str> {
    report
        .iter()
        .skip_while(|l| !l.trim().starts_with("Call Trace:"))
        .skip(1)
        .map(|l| l.trim())
        .filter(|l| !l.starts_with('?') && !l.starts_with('<') && l.contains("+0x"))
        .map(function)
        .find(|f| !skip.iter().any(|s| f.starts_with(s)))
}

/// "net/x.c:123 func+0x1c/0x80 [mod]" -> "net/x.c func".
fn place_and_function(place: &str) -> String {
    let mut words = place.split_whitespace();
    let file = without_line(words.next().unwrap_or(""));
    match words.next() {
        Some(f) => format!("{file} {}", function(f)),
        None => file.to_string(),
    }
}

/// A finding's detail as this release signs it: a kernel report's or panic's signature an
/// earlier release wrote with line numbers ("WARNING at include/linux/sunrpc/svc.h:520
/// svc_process") loses them, so profiles and reproducers written before keep matching; any
/// other class's detail is kept as it is.
pub fn stable_detail(class: super::Class, detail: &str) -> String {
    match class {
        super::Class::KernelReport | super::Class::KernelPanic => without_lines(detail),
        _ => detail.to_string(),
    }
}

/// "net/x.c:123" or "net/x.c:123:7" -> "net/x.c"; a word that is not a place with a line is
/// kept as it is.
fn without_line(word: &str) -> &str {
    let mut w = word;
    while let Some((head, tail)) = w.rsplit_once(':') {
        if head.is_empty() || tail.is_empty() || !tail.bytes().all(|b| b.is_ascii_digit()) {
            break;
        }
        w = head;
    }
    w
}

/// Every place in `s` without its line (and column) number: "cond in net/x.c:12:7" ->
/// "cond in net/x.c".
fn without_lines(s: &str) -> String {
    s.split_whitespace().map(without_line).collect::<Vec<_>>().join(" ")
}

/// "func+0x1c/0x80 [mod], CPU#0: task/1" -> "func"; a part the compiler split off or cloned
/// ("func.cold", "func.isra.0", "func.constprop.0") is the function's: which parts a build
/// makes is the compiler's choice, not the kernel's.
fn function(s: &str) -> &str {
    let first = s.split_whitespace().next().unwrap_or("");
    let f = first.split('+').next().unwrap_or(first).trim_end_matches(',');
    f.split('.').next().unwrap_or(f)
}

/// "slab-out-of-bounds in svc_rdma_foo+0x1c/0x80 [rpcrdma]" -> "slab-out-of-bounds in svc_rdma_foo".
fn function_names(s: &str) -> String {
    s.split_whitespace()
        .filter(|w| !w.starts_with('['))
        .map(|w| w.split('+').next().unwrap_or(w))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Every run of digits replaced by `N` (CPU and PID numbers, sizes).
fn without_numbers(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut in_number = false;
    for c in s.chars() {
        if c.is_ascii_digit() {
            if !in_number {
                out.push('N');
            }
            in_number = true;
        } else {
            in_number = false;
            out.push(c);
        }
    }
    out.trim().to_string()
}

/// Whether every report in `lines` is a warning (`__warn()`, kernel/panic.c: the task that
/// warned goes on), not an oops or a `BUG` (which kill it) nor any other report.
pub fn only_warnings(lines: &[String]) -> bool {
    // Line by line: an oops soon after a warning is no part of the warning's report.
    lines.iter().filter_map(|l| report_signature(l)).all(|s| s.starts_with("WARNING"))
}

/// The report lines in `lines` with their context: each report line and up to
/// [`CONTEXT_LINES`] after it.
pub fn reports(lines: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut context = 0;
    for line in lines {
        if report_signature(line).is_some() {
            context = CONTEXT_LINES;
            out.push(line.clone());
        } else if context > 0 {
            context -= 1;
            out.push(line.clone());
        }
    }
    out
}

/// The line of kernel/panic.c's panic(): "Kernel panic - not syncing: Fatal exception".
pub const PANIC: &str = "Kernel panic - not syncing:";

/// Lines before a panic searched for the report that led to it (an oops with its registers
/// and two call traces runs to about a hundred).
pub const PANIC_WINDOW: usize = 300;

/// Lines between a report's first line and a later line of the same report ("BUG: ..." and
/// its "Oops: ..." have the "#PF" and page table lines between them).
const REPORT_HEAD: usize = 8;

/// A panic read from a console log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Panic {
    /// The signature of the report that led to the panic (as a kernel report's), or of the
    /// panic line itself when no report precedes it.
    pub signature: String,
    /// The text from the report's first line to the panic line (and to its `---[ end` line).
    pub lines: Vec<String>,
    /// The panic is the one `oops_end()` (arch/x86/kernel/dumpstack.c) makes of an oops
    /// outside interrupt context when `panic_on_oops` is set (reason "Fatal exception"), and
    /// `signature` is that oops's report: the machine died by that setting, not by the bug.
    pub oops_made_fatal: bool,
}

/// A console line without its printk prefixes ("[   12.345678] ", "[    T1] ") and carriage return.
pub fn console_line(line: &str) -> &str {
    let mut l = line.trim_end_matches(['\r', '\n']);
    while let Some(rest) = l.strip_prefix('[') {
        match rest.split_once(']') {
            Some((inside, after)) if inside.trim().chars().all(|c| c.is_ascii_alphanumeric() || c == '.') => {
                l = after.strip_prefix(' ').unwrap_or(after)
            }
            _ => break,
        }
    }
    l
}

/// The last panic in a console log, with the report that led to it: the last report among
/// the lines before the panic line (back to the previous panic or boot, at most
/// [`PANIC_WINDOW`] lines), from its first line, signed as [`report_signatures`] signs it.
/// None when the console holds no "Kernel panic - not syncing:" line after its last boot.
pub fn panic_report(console: &str) -> Option<Panic> {
    let lines: Vec<String> = console.lines().map(|l| console_line(l).to_string()).collect();
    let at = lines.iter().rposition(|l| l.trim_start().starts_with(PANIC))?;
    // A panic of an earlier boot is not this one's.
    if lines[at..].iter().any(|l| l.starts_with("Linux version ")) {
        return None;
    }
    let mut from = at.saturating_sub(PANIC_WINDOW);
    if let Some(b) =
        lines[from..at].iter().rposition(|l| l.contains("---[ end Kernel panic") || l.starts_with("Linux version "))
    {
        from += b + 1;
    }
    // panic() prints "Kernel Offset: ..." and the like before its closing line.
    let end = (at + 1..lines.len().min(at + 6)).find(|&i| lines[i].contains("---[ end Kernel panic")).unwrap_or(at);
    let reason = lines[at].trim_start()[PANIC.len()..].trim();
    let window = &lines[from..at];
    let is_report = |l: &String| report_signature(l).is_some();
    let Some(mut start) = window.iter().rposition(is_report) else {
        let signature = format!("{PANIC} {}", without_numbers(reason));
        return Some(Panic { signature, lines: lines[at..=end].to_vec(), oops_made_fatal: false });
    };
    // An "Oops:" is part of the report a few lines before it ("BUG: ...", "kernel BUG at"),
    // and a "kernel BUG at" of the check a line before it ("list_add corruption. ...").
    if window[start].starts_with("Oops") || window[start].starts_with("kernel BUG at") {
        if let Some(k) = window[start.saturating_sub(REPORT_HEAD)..start].iter().rposition(is_report) {
            start = start.saturating_sub(REPORT_HEAD) + k;
        }
    }
    let signature = report_signatures(&window[start..]).swap_remove(0).1;
    // panic_on_oops never makes a warning fatal: a warning found here is an earlier report,
    // and the oops itself went unrecognised.
    let oops_made_fatal = reason == "Fatal exception" && !signature.starts_with("WARNING");
    Some(Panic { signature, lines: lines[from + start..=end].to_vec(), oops_made_fatal })
}

#[cfg(test)]
mod tests {
    use super::*;

    // Lines as the kernel prints them (formats of lib/bug.c, kernel/panic.c __warn(),
    // mm/kasan/report.c, arch/x86/mm/fault.c, kernel/hung_task.c, lib/refcount.c).
    #[test]
    fn only_warnings_leave_the_peer_running() {
        let lines = |l: &[&str]| l.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let warn = "WARNING: CPU: 0 PID: 476 at include/linux/sunrpc/svc.h:520 svc_process+0x1f8/0x230 [sunrpc]";
        let oops = "BUG: kernel NULL pointer dereference, address: 0000000000000008";
        let bug = "kernel BUG at lib/sg_pool.c:117!";
        assert!(only_warnings(&lines(&[warn, "Call Trace:", warn])));
        assert!(!only_warnings(&lines(&[warn, oops, "RIP: 0010:rdma_rw_ctx_init+0x1/0x2 [ib_core]"])));
        assert!(!only_warnings(&lines(&[bug])));
    }

    #[test]
    fn report_lines_get_stable_signatures() {
        let cases = [
            (
                "WARNING: CPU: 0 PID: 812 at net/sunrpc/xprtrdma/svc_rdma_rw.c:351 svc_rdma_post_chunk_ctxt+0x1a0/0x1f0 [rpcrdma]",
                "WARNING at net/sunrpc/xprtrdma/svc_rdma_rw.c svc_rdma_post_chunk_ctxt",
            ),
            (
                "WARNING: include/linux/sunrpc/svc.h:539 at svc_process+0x21e/0x250 [sunrpc], CPU#0: nfsd/476",
                "WARNING at include/linux/sunrpc/svc.h svc_process",
            ),
            (
                "WARNING: CPU: 0 PID: 476 at include/linux/sunrpc/svc.h:520 svc_process+0x1f8/0x230 [sunrpc]",
                "WARNING at include/linux/sunrpc/svc.h svc_process",
            ),
            ("kernel BUG at net/sunrpc/svc_xprt.c:1010!", "kernel BUG at net/sunrpc/svc_xprt.c"),
            (
                "BUG: KASAN: slab-out-of-bounds in svc_rdma_get_inv_rkey+0x9a/0x120 [rpcrdma]",
                "BUG: KASAN: slab-out-of-bounds in svc_rdma_get_inv_rkey",
            ),
            ("BUG: kernel NULL pointer dereference, address: 0000000000000008", "BUG: kernel NULL pointer dereference"),
            ("BUG: unable to handle page fault for address: ffff88810badf00d", "BUG: unable to handle page fault"),
            ("Oops: 0000 [#1] PREEMPT SMP NOPTI", "Oops"),
            (
                "general protection fault, probably for non-canonical address 0xdead000000000100: 0000 [#1] SMP",
                "general protection fault",
            ),
            (
                "UBSAN: array-index-out-of-bounds in net/sunrpc/xprtrdma/svc_rdma_recvfrom.c:500:7",
                "UBSAN: array-index-out-of-bounds in net/sunrpc/xprtrdma/svc_rdma_recvfrom.c",
            ),
            ("INFO: task nfsd:1234 blocked for more than 122 seconds.", "hung task nfsd"),
            ("INFO: task kworker/u4:3:48 blocked for more than 120 seconds.", "hung task kworker"),
            ("refcount_t: underflow; use-after-free.", "refcount_t: underflow; use-after-free"),
        ];
        for (line, want) in cases {
            assert_eq!(report_signature(line).as_deref(), Some(want), "{line}");
        }
    }

    #[test]
    fn the_same_warning_elsewhere_is_the_same_signature() {
        let a = report_signature("WARNING: CPU: 0 PID: 812 at net/a.c:1 f+0x1/0x2 [m]");
        let b = report_signature("WARNING: CPU: 3 PID: 9 at net/a.c:1 f+0x7/0x9");
        assert_eq!(a, b);
        assert_ne!(a, report_signature("WARNING: CPU: 0 PID: 812 at net/b.c:1 f+0x1/0x2"));
        assert_ne!(a, report_signature("WARNING: CPU: 0 PID: 812 at net/a.c:1 g+0x1/0x2"));
    }

    // The WARN of svc_process() as 6.12.117 and 6.12.118 print it (svc.h moved by three
    // lines between them), and as 7.3 prints it: one finding across point releases.
    #[test]
    fn a_point_release_that_moves_the_line_keeps_the_signature() {
        let old = "WARNING: CPU: 0 PID: 476 at include/linux/sunrpc/svc.h:520 svc_process+0x1f8/0x230 [sunrpc]";
        let new = "WARNING: CPU: 0 PID: 501 at include/linux/sunrpc/svc.h:523 svc_process+0x1f8/0x230 [sunrpc]";
        assert_eq!(report_signature(old), report_signature(new));
        let a = "WARNING: include/linux/sunrpc/svc.h:539 at svc_process+0x21e/0x250 [sunrpc], CPU#0: nfsd/476";
        let b = "WARNING: include/linux/sunrpc/svc.h:541 at svc_process+0x21e/0x250 [sunrpc], CPU#1: nfsd/9";
        assert_eq!(report_signature(a), report_signature(b));
        assert_eq!(report_signature(a), report_signature(old));
        // The condition text, where the kernel prints it, stays; only the line goes.
        assert_eq!(
            report_signature("WARNING: !list_empty(&q) include/x.h:12 at f+0x1/0x2, CPU#0: t/1").as_deref(),
            Some("WARNING at !list_empty(&q) include/x.h f")
        );
        assert_eq!(
            report_signature("UBSAN: shift-out-of-bounds in net/x.c:12:7"),
            report_signature("UBSAN: shift-out-of-bounds in net/x.c:15:3")
        );
        assert_eq!(report_signature("kernel BUG at a.c:1!"), report_signature("kernel BUG at a.c:9!"));
    }

    #[test]
    fn one_oops_is_one_report_named_by_its_rip() {
        let lines: Vec<String> = [
            "before",
            "BUG: kernel NULL pointer dereference, address: 0000000000000068",
            "#PF: supervisor write access in kernel mode",
            "Oops: Oops: 0002 [#1] SMP NOPTI",
            "Workqueue: rpciod rpc_async_schedule [sunrpc]",
            "RIP: 0010:frwr_unmap_sync+0xb1/0x240 [rpcrdma]",
            "Call Trace:",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(
            report_signatures(&lines),
            [(1, "BUG: kernel NULL pointer dereference in frwr_unmap_sync".to_string())]
        );
        // A WARNING names its place already; nothing is added.
        let warn = vec!["WARNING: CPU: 0 PID: 1 at a.c:1 f+0x0/0x1".to_string(), "RIP: 0010:g+0x1/0x2".to_string()];
        assert_eq!(report_signatures(&warn), [(0, "WARNING at a.c f".to_string())]);
        // "kernel BUG at" names a file: its RIP adds the function.
        let bug = vec!["kernel BUG at net/a.c:12!".to_string(), "RIP: 0010:g+0x1/0x2 [m]".to_string()];
        assert_eq!(report_signatures(&bug), [(0, "kernel BUG at net/a.c in g".to_string())]);
    }

    /// Lines of Debian 6.12.118-1's log under `serve --fuzz` (the page allocator's
    /// WARN_ON_ONCE_GFP for an order above MAX_PAGE_ORDER; kernel/hung_task.c's report).
    #[test]
    fn an_allocator_warning_names_its_caller_and_a_hung_task_where_it_waits() {
        let lines = |l: &[&str]| l.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let warn = lines(&[
            "WARNING: CPU: 0 PID: 10663 at mm/page_alloc.c:4835 __alloc_pages_noprof+0x2a7/0x310",
            "RIP: 0010:__alloc_pages_noprof+0x2a7/0x310",
            "Call Trace:",
            " <TASK>",
            " ? decode_cb_sequence_args+0xec/0x230 [nfsv4]",
            " alloc_pages_mpol_noprof+0xd7/0x1c0",
            " ___kmalloc_large_node+0x87/0xa0",
            " __kmalloc_large_node_noprof+0x1d/0xa0",
            " __kmalloc_noprof+0x2e2/0x400",
            " ? update_curr+0x198/0x200",
            " decode_cb_sequence_args+0xec/0x230 [nfsv4]",
            " nfs4_callback_compound+0x26d/0x680 [nfsv4]",
        ]);
        assert_eq!(
            report_signatures(&warn),
            [(0, "WARNING at mm/page_alloc.c __alloc_pages_noprof from decode_cb_sequence_args".to_string())]
        );
        let hung = lines(&[
            "INFO: task kworker/u4:3:48 blocked for more than 120 seconds.",
            "      Tainted: G        W          6.12.118+deb13-amd64 #1 Debian 6.12.118-1",
            "task:kworker/u4:3    state:D stack:0     pid:48    tgid:48    ppid:2      flags:0x00004000",
            "Workqueue: rpciod rpc_async_schedule [sunrpc]",
            "Call Trace:",
            " <TASK>",
            " __schedule+0x4ea/0xbe0",
            " schedule+0x27/0xc0",
            " schedule_timeout+0x12f/0x160",
            " __wait_for_common+0x91/0x1e0",
            " ? __pfx_schedule_timeout+0x10/0x10",
            " frwr_unmap_sync+0x1cb/0x250 [rpcrdma]",
            " xprt_release+0xa2/0x190 [sunrpc]",
        ]);
        assert_eq!(report_signatures(&hung), [(0, "hung task kworker in frwr_unmap_sync".to_string())]);
        // A warning elsewhere in mm/ that is not the allocator's keeps its own name; one
        // without a trace, or a hung task without one, is named as before.
        let other =
            lines(&["WARNING: CPU: 0 PID: 1 at mm/gup.c:9 try_grab_folio+0x1/0x2", "Call Trace:", " f+0x1/0x2"]);
        assert_eq!(report_signatures(&other), [(0, "WARNING at mm/gup.c try_grab_folio".to_string())]);
        assert_eq!(report_signatures(&hung[..1]), [(0, "hung task kworker".to_string())]);
    }

    /// 6.1.192-2's client, 2026-11-28 (docs/findings/linux-xprtrdma-lost-replies-vs-close.md):
    /// a list check's report, then its BUG, as the console printed them.
    const LIST_CORRUPTION: &[&str] = &[
        "[  371.240105] list_add corruption. prev is NULL.",
        "[  371.240997] kernel BUG at lib/list_debug.c:23!",
        "[  371.241549] invalid opcode: 0000 [#1] PREEMPT SMP NOPTI",
        "[  371.241762] CPU: 0 PID: 315 Comm: kworker/u2:4 Not tainted 6.1.0-56-amd64 #1  Debian 6.1.192-2",
        "[  371.242236] Workqueue: rpciod rpc_async_schedule [sunrpc]",
        "[  371.243237] RIP: 0010:__list_add_valid.cold+0xc/0x5b",
        "[  371.245636] Call Trace:",
        "[  371.246202]  <TASK>",
        "[  371.246331]  __wait_for_common+0x10b/0x1e0",
        "[  371.246487]  ? usleep_range_state+0x90/0x90",
        "[  371.246786]  frwr_unmap_sync+0x1cf/0x260 [rpcrdma]",
        "[  371.247009]  xprt_release+0x9e/0x190 [sunrpc]",
        "[  371.248395]  </TASK>",
        "[  371.249467] ---[ end trace 0000000000000000 ]---",
        "[  371.249574] RIP: 0010:__list_add_valid.cold+0xc/0x5b",
        "[  371.251000] Kernel panic - not syncing: Fatal exception",
        "[  371.251100] ---[ end Kernel panic - not syncing: Fatal exception ]---",
    ];

    #[test]
    fn a_corrupted_list_names_whose_list_it_was_whether_followed_or_fatal() {
        let lines: Vec<String> = LIST_CORRUPTION.iter().map(|l| console_line(l).to_string()).collect();
        let want = "list_add corruption from frwr_unmap_sync";
        // Followed (serve --fuzz, fuzz --kernel-log): the check's line opens the report.
        assert_eq!(report_signatures(&lines), [(0, want.to_string())]);
        // Fatal (fuzz-panic on the console): the BUG after it is the same report, not another.
        let p = panic_report(&LIST_CORRUPTION.join("\n")).expect("a panic");
        assert_eq!(p.signature, want);
        assert!(p.lines[0].contains("list_add corruption"), "{:?}", p.lines[0]);
        // A check with no trace after it is named as before.
        assert_eq!(report_signatures(&lines[..1]), [(0, "list_add corruption".to_string())]);
    }

    #[test]
    fn a_part_the_compiler_split_off_is_its_function() {
        for (at, f) in [
            ("__list_add_valid.cold+0xc/0x5b", "__list_add_valid"),
            ("svc_rdma_foo.isra.0+0x1c/0x80 [rpcrdma]", "svc_rdma_foo"),
            ("xdr_bar.constprop.0.cold+0x1/0x2", "xdr_bar"),
            ("frwr_unmap_sync+0xb1/0x240 [rpcrdma]", "frwr_unmap_sync"),
        ] {
            assert_eq!(function(at), f, "{at}");
        }
    }

    #[test]
    fn ordinary_lines_are_not_reports() {
        for line in [
            "svcrdma: failed to send reply chunks, rc=-5",
            "rpcrdma: connection to 10.55.0.1:20049 closed (-104)",
            "nfsd: last server has exited, flushing export cache",
            "NFSD: Using nfsdcld client tracking operations.",
            "task blocked? no",
        ] {
            assert_eq!(report_signature(line), None, "{line}");
        }
    }

    #[test]
    fn reports_keep_the_trace_after_a_report_line_only() {
        let lines: Vec<String> = ["before", "WARNING: CPU: 0 PID: 1 at a.c:1 f+0x0/0x1", "Call Trace:", " <TASK>"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(reports(&lines), lines[1..].to_vec());
        assert!(reports(&lines[..1]).is_empty());
    }

    // A 6.x x86 oops (arch/x86/mm/fault.c, arch/x86/kernel/dumpstack.c) that panics
    // (panic_on_oops: "Fatal exception", kernel/panic.c), as the serial console shows it.
    const CONSOLE: &str = "\
[    0.000000] Linux version 6.12.0 (root@build) #1 SMP PREEMPT_DYNAMIC
[  799.100000] WARNING: CPU: 0 PID: 7 at net/a.c:1 old_warning+0x1/0x2 [m]
[  812.345678] BUG: kernel NULL pointer dereference, address: 0000000000000068
[  812.346001] #PF: supervisor write access in kernel mode
[  812.346210] #PF: error_code(0x0002) - not-present page
[  812.346555] Oops: Oops: 0002 [#1] PREEMPT SMP NOPTI
[  812.346800] CPU: 1 UID: 0 PID: 2417 Comm: kworker/u8:3 Not tainted 6.12.0 #1
[  812.347400] RIP: 0010:frwr_unmap_sync+0xb1/0x240 [rpcrdma]\r
[  812.349000] Call Trace:
[  812.349600]  ? frwr_unmap_sync+0xb1/0x240 [rpcrdma]
[  812.350200] ---[ end trace 0000000000000000 ]---
[  812.350400] Kernel panic - not syncing: Fatal exception
[  812.350500] Kernel Offset: disabled
[  812.350600] ---[ end Kernel panic - not syncing: Fatal exception ]---
";

    #[test]
    fn a_panic_is_read_back_to_the_oops_that_caused_it() {
        let p = panic_report(CONSOLE).unwrap();
        assert_eq!(p.signature, "BUG: kernel NULL pointer dereference in frwr_unmap_sync");
        assert_eq!(
            p.lines.first().map(String::as_str),
            Some("BUG: kernel NULL pointer dereference, address: 0000000000000068")
        );
        assert_eq!(
            p.lines.last().map(String::as_str),
            Some("---[ end Kernel panic - not syncing: Fatal exception ]---")
        );
        assert!(p.lines.iter().all(|l| !l.contains("old_warning") && !l.ends_with('\r')));
        assert!(p.oops_made_fatal);
        // In interrupt context oops_end() panics whatever panic_on_oops says: a panic of its own.
        let p = panic_report(&CONSOLE.replace("Fatal exception", "Fatal exception in interrupt")).unwrap();
        assert!(!p.oops_made_fatal && p.signature == "BUG: kernel NULL pointer dereference in frwr_unmap_sync");
        // An oops whose first line no signature knows, after an earlier warning: not the warning's.
        let unknown = CONSOLE
            .replace("BUG: kernel NULL pointer dereference, address: 0000000000000068", "stack segment: 0000 [#1]")
            .replace("Oops: Oops: 0002 [#1] PREEMPT SMP NOPTI", "CPU: 1 PID: 2417");
        let p = panic_report(&unknown).unwrap();
        assert!(p.signature.starts_with("WARNING") && !p.oops_made_fatal, "{p:?}");
    }

    #[test]
    fn a_panic_without_a_report_is_named_by_its_reason_and_no_panic_is_none() {
        let c = "[    1.0] WARNING: CPU: 0 PID: 7 at net/a.c:1 f+0x1/0x2\n[    2.000000] Linux version 6.12.0\n\
                 [    3.000000] Kernel panic - not syncing: VFS: Unable to mount root fs on unknown-block(0,0)\n";
        let p = panic_report(c).unwrap();
        assert_eq!(p.signature, "Kernel panic - not syncing: VFS: Unable to mount root fs on unknown-block(N,N)");
        assert_eq!(p.lines.len(), 1);
        assert!(!p.oops_made_fatal);
        assert_eq!(panic_report(&CONSOLE.replace("Kernel panic", "Kernel pan1c")), None);
        assert_eq!(panic_report(&format!("{CONSOLE}[    0.000000] Linux version 6.12.0\n")), None);
        assert_eq!(console_line("[  812.346555][    T1] Oops: 0002"), "Oops: 0002");
    }
}
