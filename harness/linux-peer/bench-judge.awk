# Judges bench.txt's ratio lines (bench-ratio.awk's) against a floor: awk -v min=0.9 -f
# bench-judge.awk bench.txt. Prints each depth under it; exits 1 when any is, 2 when the file
# has no ratio line (no bench ran, or the C client's figures are missing), 0 otherwise.
BEGIN { if (min == "" || min !~ /^[0-9]+(\.[0-9]+)?$/) { print "bench-judge.awk: give -v min=RATIO (a number such as 0.9)" > "/dev/stderr"; bad = 2; exit 2 } }
/^ratio depth=[0-9]+: harness [0-9.]+ x the C client/ {
  n++; d = $2; sub(/^depth=/, "", d); sub(/:$/, "", d)
  if ($4 + 0 < min + 0) { printf "bench: the harness at depth %s is %s x the C client, under %s\n", d, $4, min; under++ }
}
END {
  if (bad) exit bad
  if (n == 0) { print "bench-judge.awk: no ratio line in " FILENAME > "/dev/stderr"; exit 2 }
  if (under) exit 1
  printf "bench: the harness at least %s x the C client at each of %d depths\n", min, n
}
