# Judges bench.txt's ratio lines (bench-ratio.awk's: per depth, the median of the rounds'
# ratios) against a floor: awk -v min=0.9 -f bench-judge.awk bench.txt. Prints each depth
# under it; exits 1 when any is, 2 when the file has no ratio line (no bench ran, or the C
# client's figures are missing), 0 otherwise.
# bench-read's 4 KiB READ rates (read-4k lines) have no C baseline: reported, never judged.
BEGIN { if (min == "" || min !~ /^[0-9]+(\.[0-9]+)?$/) { print "bench-judge.awk: give -v min=RATIO (a number such as 0.9)" > "/dev/stderr"; bad = 2; exit 2 } }
/^ratio depth=[0-9]+: harness [0-9.]+ x the C client/ {
  n++; d = $2; sub(/^depth=/, "", d); sub(/:$/, "", d)
  if ($4 + 0 < min + 0) { printf "bench: the harness at depth %s is %s x the C client, under %s\n", d, $4, min; under++ }
}
/^read-4k depth=[0-9]+: [0-9]+ READs\/s/ { d = $2; sub(/^depth=/, "", d); sub(/:$/, "", d); reads = reads (reads == "" ? "" : ", ") $3 " at depth " d }
/^bench-read: status [0-9]+$/ { readrc = $3 }
END {
  if (bad) exit bad
  if (reads != "") printf "bench: 4 KiB NFSv3 READs/s %s (no C baseline: not judged)\n", reads
  if (readrc != "") printf "bench: bench-read ended with status %s (its error is in bench.txt): no READ rate\n", readrc
  if (n == 0) { print "bench-judge.awk: no ratio line in " FILENAME > "/dev/stderr"; exit 2 }
  if (under) exit 1
  printf "bench: the harness at least %s x the C client at each of %d depths\n", min, n
}
