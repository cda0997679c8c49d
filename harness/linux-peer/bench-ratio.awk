# The harness's NULL rate as a share of the C client's, per depth, from bench.txt (the C
# client's figures first, then bench-null's; harness/linux-peer/run appends these lines).
/^# the C NULL client/ {s = "c"} /^# rpcrdma-harness bench-null/ {s = "h"}
/^null-calls depth=/ {split($2, a, "="); d = a[2]; sub(":", "", d); r[s, d] = $3; if (s == "h") ds[++n] = d}
END {for (i = 1; i <= n; i++) { d = ds[i]; if (r["c", d] > 0) printf "ratio depth=%s: harness %.2f x the C client\n", d, r["h", d] / r["c", d] }}
