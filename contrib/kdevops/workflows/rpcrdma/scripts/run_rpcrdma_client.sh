#!/bin/bash
# Judges this node's kernel NFS client (xprtrdma) with the client catalogue: `rpcrdma-harness
# serve` listens on this node's RDMA address, the kernel mounts from it (NFSv3, NFSv4.1 and
# NFSv4.2 over RDMA, a plain workload), then each active scenario on its own port (client-scenarios, from
# the toolkit's harness/linux-peer/), while serve follows the kernel log. As the toolkit's own
# VM run does (harness/linux-peer/run).
#
# Environment: OUT (results directory), IP (this node's address on the RDMA link), SCENARIOS
# (the client-scenarios script), PROFILE (optional), PEER_VERSION (this node's `uname -r`),
# KCIDB_ORIGIN. Exits with serve's status (0 as expected, 1 a divergence, 2 setup error, ...).
set -u
: "${OUT:?}" "${IP:?}" "${SCENARIOS:?}"
args=(serve --listen "$IP:20050" --idle 20 --max-time 600 --kernel-log /dev/kmsg
      --json "$OUT/client-report.json" --junit "$OUT/client-junit.xml" --pcap "$OUT/client-pcap"
      --kcidb "$OUT/client-kcidb.json" --kcidb-origin "${KCIDB_ORIGIN:-rpcrdma}")
[ -z "${PROFILE:-}" ] || args+=(--expect "$PROFILE")
[ -z "${PEER_VERSION:-}" ] || args+=(--peer-version "$PEER_VERSION")
rpcrdma-harness "${args[@]}" > "$OUT/client-summary.txt" 2>&1 &
spid=$!
sleep 2
mnt=$(mktemp -d)
log=$OUT/client-mount.txt
# The workload of the toolkit's VM (harness/linux-peer/guest/phases.sh, phase_client): NFSv3 of
# /export, NFSv4.1 and 4.2 of serve's root (its NFSv4 server has no pseudo file system: the
# export is the root PUTROOTFH names).
# shellcheck disable=SC2012 # listings for client-mount.txt
for v in 3 4.1 4.2; do
  p=/export; [ $v = 3 ] || p=/
  timeout 60 mount -t nfs -o "vers=$v,proto=rdma,port=20050,retrans=1,timeo=30" "$IP:$p" "$mnt" >> "$log" 2>&1
  echo "mount vers=$v rc=$?" >> "$log"
  if grep -q " $mnt " /proc/mounts; then
    {
      ls -l "$mnt/dir" | head -3
      od -An -tx1 "$mnt/five"
      dd if="$mnt/big" of=/dev/null bs=64k
      dd if="$mnt/big" of="$mnt/scratch" bs=64k conv=fsync
      echo new > "$mnt/newfile"
      ls -l "$mnt"
      umount "$mnt"
      mount -t nfs -o "vers=3,proto=rdma,port=20050,nordirplus" "$IP:/export" "$mnt" && ls -l "$mnt/dir" | wc -l
    } >> "$log" 2>&1
  fi
  umount "$mnt" 2>/dev/null
done
rmdir "$mnt"
"$SCENARIOS" "$OUT/client-summary.txt" "$IP" >> "$log" 2>&1
wait "$spid"
rc=$?
echo "serve exit $rc" >> "$log"
exit "$rc"
