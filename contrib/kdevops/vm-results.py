#!/usr/bin/env python3
"""Checks the rpcrdma workflow's results tree after a real run (contrib/kdevops/vm-run).

    vm-results.py RESULTS KERNEL CLIENT(y|n) PLAY-OUTPUT [PROFILE]

RESULTS is kdevops's workflows/rpcrdma/results: the role must have archived, per kernel and
node (RESULTS/KERNEL/NODE/), each side's JSON report, JUnit, KCIDB, summary and packed captures,
and the profile it chose: PROFILE when given (the workflow's RPCRDMA_PROFILE), else the kernel
line's own (conformance/profiles/linux-MAJOR.MINOR-*.json), byte for byte. Each report must be judged against that profile, and say the same as its run's
exit status in the play's output: exit 0 when no check failed, broke or passed against a listed
divergence, exit 1 otherwise. Prints what it checked; exits 1 on the first kind of mismatch
found (all are listed), 0 when the tree is whole and consistent.
"""
import json
import os
import re
import sys

BAD_STATUSES = {"fail", "unexpected-pass", "error"}


def main():
    if len(sys.argv) not in (5, 6) or sys.argv[3] not in ("y", "n"):
        sys.exit(__doc__)
    results, kernel, client, play_output = sys.argv[1], sys.argv[2], sys.argv[3] == "y", sys.argv[4]
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    problems = []
    kdir = os.path.join(results, kernel)
    # A node's directory each (the kernel's directory also holds rpcrdma-visualize's pages).
    nodes = sorted(n for n in os.listdir(kdir) if os.path.isdir(os.path.join(kdir, n))) if kernel and os.path.isdir(kdir) else []
    if not nodes:
        problems.append(f"no node directory under {kdir}")
    with open(play_output, encoding="utf-8", errors="replace") as f:
        play = f.read()
    # The role's own summary of each run's status: "... (server run exit N, client run exit M)".
    exits = {}
    for side in ("server", "client"):
        m = re.findall(rf"{side} run exit (\d+|not run)", play)
        exits[side] = m[-1] if m else "0"
    sides = ["server"] + (["client"] if client else [])
    for node in nodes:
        d = os.path.join(kdir, node)
        for side in sides:
            files = [f"{side}-report.json", f"{side}-junit.xml", f"{side}-kcidb.json", f"{side}-summary.txt",
                     f"{side}-pcap.tar.gz", f"{side}-profile.json"]
            if side == "client":
                files.append("client-mount.txt")
            missing = [f for f in files if not os.path.isfile(os.path.join(d, f)) or os.path.getsize(os.path.join(d, f)) == 0]
            if missing:
                problems.append(f"{node}: {side}: missing or empty: {', '.join(missing)}")
                continue
            profile = os.path.join(d, f"{side}-profile.json")
            line = re.sub(r"^(\d+\.\d+).*$", r"\1", kernel)
            pdir = os.path.join(root, "conformance", "profiles")
            own = [p for p in os.listdir(pdir) if p.startswith(f"linux-{line}-") and not p.endswith("-siw.json")]
            if len(sys.argv) == 6:
                pdir, own = os.path.dirname(os.path.abspath(sys.argv[5])), [os.path.basename(sys.argv[5])]
            with open(profile, "rb") as f:
                chosen = f.read()
            same = [p for p in own if open(os.path.join(pdir, p), "rb").read() == chosen]
            if not same:
                names = " or ".join(own) or "the kernel line's (it has none)"
                problems.append(f"{node}: {side}: the profile the role chose is not {names}")
            with open(os.path.join(d, f"{side}-report.json"), encoding="utf-8") as f:
                report = json.load(f)
            peer = json.loads(chosen).get("peer")
            if report.get("expectations") != peer:
                problems.append(f"{node}: {side}: judged against {report.get('expectations')!r}, not the profile {peer!r}")
            if report.get("interrupted"):
                problems.append(f"{node}: {side}: the run was interrupted")
            bad = [c["id"] for c in report.get("checks", []) if c.get("status") in BAD_STATUSES]
            want = "1" if bad else "0"
            if exits[side] != want:
                problems.append(f"{node}: {side}: run exit {exits[side]}, but the report says {want} ({', '.join(bad) or 'all as expected'})")
            s = report.get("summary", {})
            print(f"{node}: {side}: {len(report.get('checks', []))} checks against {peer}: "
                  f"{s.get('passed')} passed, {s.get('expected_divergences')} expected divergences, "
                  f"{s.get('unsupported')} unsupported, {s.get('failed')} failed; run exit {exits[side]}")
            if bad:
                print(f"{node}: {side}: diverging from the profile: {', '.join(bad)}")
    for p in problems:
        print(f"results tree: {p}")
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
