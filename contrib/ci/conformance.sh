#!/usr/bin/env bash
# One conformance run for a CI job (docs/ci.md): judges the server at $PEER against its
# expectation profile and leaves every artefact in $OUT, whatever the outcome: report.json,
# junit.xml, kcidb.json, pcap/ (one capture per check) and summary.txt. Exits with the
# harness's own status, explained in one line:
#   0 all as expected   1 a check failed (or a listed divergence went away)   2 setup error
#   3 peer unreachable  4 harness defect (report it to us)   130/143 cancelled
#
# Environment: PEER (HOST[:PORT]; empty: the embedded reference responder, to try the job
# out), PROFILE (an expectation profile; empty: none), PEER_VERSION (the exact version under
# test, e.g. the server's `uname -r` or package version; recorded in every report and used
# as the KCIDB checkout), EXPORT (the export path, default /export), OUT (default
# rpcrdma-results), KCIDB_ORIGIN (default rpcrdma), RPCRDMA_HARNESS (the binary, default
# rpcrdma-harness on PATH). Further arguments go to `rpcrdma-harness run` (selectors,
# --exclude, --strict, --timeout, ...).
set -uo pipefail

harness=${RPCRDMA_HARNESS:-rpcrdma-harness}
out=${OUT:-rpcrdma-results}
command -v "$harness" >/dev/null 2>&1 || { echo "conformance: $harness not found (cargo install --locked --path harness)" >&2; exit 2; }
mkdir -p "$out" || exit 2

args=(run --json "$out/report.json" --junit "$out/junit.xml" --pcap "$out/pcap"
      --kcidb "$out/kcidb.json" --kcidb-origin "${KCIDB_ORIGIN:-rpcrdma}")
[ -z "${PEER:-}" ] || args+=(--peer "$PEER" --export "${EXPORT:-/export}")
[ -z "${PROFILE:-}" ] || args+=(--expect "$PROFILE")
[ -z "${PEER_VERSION:-}" ] || args+=(--peer-version "$PEER_VERSION")

echo "conformance: $harness ${args[*]} $*"
"$harness" "${args[@]}" "$@" | tee "$out/summary.txt"
rc=${PIPESTATUS[0]}
case $rc in
  0) why="every check passed or diverged as the profile lists" ;;
  1) why="a check failed, a listed divergence did not happen, or the peer went down: see junit.xml and report.json" ;;
  2) why="usage or environment error (arguments, profile, RDMA device, MOUNT): the first line of the output says which" ;;
  3) why="the peer could not be reached (address, port 20049, RDMA link)" ;;
  4) why="a check broke: a harness defect; please report it with report.json" ;;
  130|143) why="cancelled; the reports say how far the run got" ;;
  *) why="unexpected exit status" ;;
esac
echo "conformance: exit $rc: $why (artefacts in $out/)"
exit "$rc"
