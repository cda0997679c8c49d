# The harness's NULL rate as a share of the C client's, per depth, from bench.txt: rounds of
# the C client's figures then bench-null's (harness/linux-peer/guest/phases.sh, phase_bench).
# Each round's ratio is the harness's rate over the C client's just before it; the judged
# figure is the median of a depth's rounds (one run swings by up to half under TCG).
/^# the C NULL client/ { s = "c"; split("", c) }
/^# rpcrdma-harness bench-null/ { s = "h" }
/^# rpcrdma-harness bench-read/ { s = "" }
/^null-calls depth=/ && s != "" {
  split($2, a, "="); d = a[2]; sub(":", "", d)
  if (s == "c") c[d] = $3
  else {
    if (!(d in seen)) { seen[d] = 1; ds[++n] = d }
    if (c[d] > 0) { k = ++m[d]; q[d, k] = $3 / c[d] }
  }
}
END {
  for (i = 1; i <= n; i++) {
    d = ds[i]; k = m[d]
    if (k == 0) continue
    for (j = 2; j <= k; j++) {
      v = q[d, j]
      for (l = j - 1; l >= 1 && q[d, l] > v; l--) q[d, l + 1] = q[d, l]
      q[d, l + 1] = v
    }
    med = k % 2 ? q[d, (k + 1) / 2] : (q[d, k / 2] + q[d, k / 2 + 1]) / 2
    list = ""; for (j = 1; j <= k; j++) list = list sprintf(" %.2f", q[d, j])
    printf "ratio depth=%s: harness %.2f x the C client (median of %d round%s:%s)\n", d, med, k, k == 1 ? "" : "s", list
  }
}
