#!/bin/sh
# The guest's phases, run by /init once the peer is up (guest/peer.sh): the verbs loopback
# tests, the NULL-rate bench, the server catalogue, the racy checks traced, the client
# catalogue, GUEST_EXTRA's step, the client fuzzed, replays toward the client and the server,
# and the server fuzzed. harness/linux-peer/run copies this file into the VM unchanged and
# says what to run in /extra/phases.env: one KEY=value a line, keys from the list below,
# values of [A-Za-z0-9._,:/+@~= -] only (the host refuses anything else; so does this script),
# read as data, never run. The server catalogue's arguments, the user's among them, are in
# /extra/run.args, one a line. FUZZ_SKIP, FUZZ_LEFT and FUZZ_MESSAGES_LEFT come from the kernel
# command line (a boot after a kernel panic while fuzzing the server only fuzzes on, with what is
# left of the budget), and RESUME=client-fuzz (a boot after one while fuzzing the client goes on
# with the phases after that one). Each phase ships its files out on the console
# (ship) and ends with a "@@PHASE rc=N" line the host reads.
# (PHASES_ENV=FILE reads another file: to try the checks on a host, which exit 4 on a bad one.
# PHASES_LIB=1 defines the phases and runs none: a GUEST_EXTRA script sources it to run one.)
ENVFILE=${PHASES_ENV:-/extra/phases.env}
IP='' WATCHDOG='' SERVER=nfsd PV='' EXPECT=0 BENCH=1 CLIENT=1 FUZZ=0 FUZZ_SEED=1 FUZZ_CLIENT=60
FUZZ_MESSAGES='' FUZZ_REVERSE=0 PANIC_AFTER='' PANIC_CLIENT_AFTER='' RCOUNT=0 RCHECKS='' REPLAYS='' CREPLAYS='' EXTRA=0
CLIENT_READERS=16 FUZZ_CLIENT_ONLY=''
bad() { echo "@@PHASES error: $*"; exit 4; }
[ -r "$ENVFILE" ] || bad "no $ENVFILE"
while IFS= read -r line || [ -n "$line" ]; do
  k=${line%%=*} v=${line#*=}
  [ "$k" != "$line" ] || bad "$ENVFILE: not KEY=value: $line"
  case $k in
    IP | WATCHDOG | SERVER | PV | EXPECT | BENCH | CLIENT | FUZZ | FUZZ_SEED | FUZZ_CLIENT) ;;
    FUZZ_MESSAGES | FUZZ_REVERSE | PANIC_AFTER | PANIC_CLIENT_AFTER | RCOUNT | RCHECKS | REPLAYS | CREPLAYS | EXTRA) ;;
    CLIENT_READERS | FUZZ_CLIENT_ONLY) ;;
    *) bad "$ENVFILE: unknown key '$k'" ;;
  esac
  case $v in *[!A-Za-z0-9._,:/+@~=\ -]*) bad "$ENVFILE: $k has a character outside [A-Za-z0-9._,:/+@~= -]" ;; esac
  # $k is one of the names above; $v is assigned, never evaluated.
  eval "$k=\$v"
done < "$ENVFILE"
number() { case $2 in '' | *[!0-9]*) bad "$1 '$2' is not a number" ;; esac; }
for k in WATCHDOG FUZZ FUZZ_CLIENT FUZZ_REVERSE RCOUNT CLIENT_READERS; do eval "number $k \"\$$k\""; done
[ -z "$FUZZ_MESSAGES" ] || number FUZZ_MESSAGES "$FUZZ_MESSAGES"
[ -z "$PANIC_AFTER" ] || number PANIC_AFTER "$PANIC_AFTER"
[ -z "$PANIC_CLIENT_AFTER" ] || number PANIC_CLIENT_AFTER "$PANIC_CLIENT_AFTER"
case ${RESUME:-} in '' | client-fuzz) ;; *) bad "RESUME '$RESUME': client-fuzz or nothing" ;; esac
[ -z "${FUZZ_SKIP:-}" ] || number FUZZ_SKIP "$FUZZ_SKIP"
[ -z "${FUZZ_LEFT:-}" ] || number FUZZ_LEFT "$FUZZ_LEFT"
[ -z "${FUZZ_MESSAGES_LEFT:-}" ] || number FUZZ_MESSAGES_LEFT "$FUZZ_MESSAGES_LEFT"
[ -n "$IP" ] || bad "$ENVFILE names no IP"
case $SERVER in nfsd | ganesha) ;; *) bad "SERVER '$SERVER': nfsd or ganesha" ;; esac
H=/extra/rpcrdma-harness
EXPECT_ARGS=''
[ "$EXPECT" = 0 ] || EXPECT_ARGS='--expect /extra/expect.json'
# How the fuzzer and replay bring the server back after a crash or hang.
if [ "$SERVER" = ganesha ]; then RESTART=/ganesha/restart; else RESTART=/extra/restart-nfsd; fi
uptime_s() { cut -d. -f1 /proc/uptime; }

mkdir -p /tmp/out
# The harness is never what the guest's OOM killer takes, in any phase: every process of
# this program inherits oom_score_adj -1000 (a server it restarts puts its own back to 0).
echo -1000 > /proc/self/oom_score_adj
# ship NAME FILE...: the files, as a gzipped tar in base64 between marker lines on the console,
# with the console's kernel log level lowered meanwhile so no kernel line lands inside.
ship() {
  n=$1; shift; cd /tmp/out || return
  for f in "$@"; do [ -e "$f" ] && echo "$f"; done > /tmp/ship.list
  tar cf - -T /tmp/ship.list 2>/dev/null | gzip -1 | base64 > /tmp/ship.b64; cd /
  dmesg -n 1; echo "@@ARCHIVE-BEGIN $n"; cat /tmp/ship.b64; echo "@@ARCHIVE-END $n"; dmesg -n 4
}
# The watchdog: past the bound, the kernel log and every task's stack, then power off.
( sleep "$WATCHDOG"; echo "@@WATCHDOG fired after $WATCHDOG s"; ship watchdog .
  echo w > /proc/sysrq-trigger; echo t > /proc/sysrq-trigger; sleep 2
  dmesg -n 1; echo "@@DMESG-BEGIN"; dmesg --color=never; echo "@@DMESG-END"; sync; echo o > /proc/sysrq-trigger ) &
# The exact version under test, as the profiles' "measured" lists write it: a Debian kernel's
# package version (from /proc/version), or NFS-Ganesha's and ntirpc's (PV in phases.env).
[ "$SERVER" = ganesha ] || PV=$(sed -n 's/.* Debian \([^ ]*\) .*/\1/p' /proc/version)

phase_loopback() {
  RPCRDMA_VERBS_TEST_ADDR=$IP /extra/verbs-loopback --test-threads=1 --nocapture > /tmp/out/verbs-loopback.txt 2>&1
  vrc=$?
  echo "@@LOOPBACK rc=$vrc"; ship loopback verbs-loopback.txt
}

# Harness overhead: NULL calls per second at depth 1 and at the full credit window.
# The same depths, the same calls, in the same boot: the C client, then the harness, three
# rounds (one run's rate swings by up to half under TCG; bench-ratio.awk judges the median of
# each depth's per-round ratios). Then 4 KiB NFSv3 READs per second at the same depths (no C
# baseline: read-4k lines, not judged).
phase_bench() {
  { for bround in 1 2 3; do
      echo "# the C NULL client (harness/linux-peer/null-client.c), round $bround"
      /extra/null-client "$IP" --depth 1 --depth 4 --depth 16 --depth 64
      echo "# rpcrdma-harness bench-null, round $bround"
      "$H" bench-null --peer "$IP" --depth 1 --depth 4 --depth 16 --depth 64
    done
    echo '# rpcrdma-harness bench-read'
    "$H" bench-read --peer "$IP" --depth 1 --depth 4 --depth 16 --depth 64 || echo "bench-read: status $?"
  } > /tmp/out/bench.txt 2>&1
  awk -f /extra/bench-ratio.awk /tmp/out/bench.txt > /tmp/ratio.txt; cat /tmp/ratio.txt >> /tmp/out/bench.txt
  ship bench bench.txt
}

# The server catalogue: `run` with the arguments in /extra/run.args.
phase_server() {
  set --
  while IFS= read -r a || [ -n "$a" ]; do set -- "$@" "$a"; done < /extra/run.args
  t0=$(cut -d" " -f1 /proc/uptime)
  "$H" "$@" ${PV:+--peer-version "$PV"} > /tmp/out/run.txt 2>&1
  rc=$?
  echo "catalogue: started at uptime $t0 s, ended at $(cut -d" " -f1 /proc/uptime) s" >> /tmp/out/bench.txt
  echo "@@HARNESS rc=$rc"; ship server run.txt report.json junit.xml pcap bench.txt ganesha.log
}

# The racy checks again, RCOUNT times each, with the svcrdma tracepoints (and RDMA-CM's and
# the transport close) in the kernel's trace buffer, and the harness's own completions and
# CM events (RPCRDMA_VERBS_TRACE) in repeat.txt: trace.txt shows whether each ERR_CHUNK was
# posted, sent or flushed, beside when the transport closed.
phase_repeat() {
  T=/sys/kernel/tracing; [ -e $T/trace ] || mount -t tracefs tracefs $T 2>/dev/null
  ls $T/events/rpcrdma $T/events/rdma_cma > /tmp/out/trace-events.txt 2>&1
  echo 0 > $T/tracing_on; echo 16384 > $T/buffer_size_kb; echo > $T/trace
  for e in "$T"/events/rpcrdma/svcrdma_*/enable "$T"/events/rdma_cma/*/enable "$T"/events/sunrpc/svc_xprt_close/enable \
    "$T"/events/sunrpc/svc_xprt_detach/enable "$T"/events/sunrpc/svc_xprt_free/enable; do
    [ -e "$e" ] && echo 1 > "$e"
  done
  echo 1 > $T/tracing_on
  # RCHECKS: check names, comma-separated (no glob characters: phases.env's charset).
  set -f; oldifs=$IFS; IFS=,
  # shellcheck disable=SC2086 # split on commas on purpose
  set -- $RCHECKS
  IFS=$oldifs; set +f
  # shellcheck disable=SC2086 # EXPECT_ARGS is two words or none
  RPCRDMA_VERBS_TRACE=1 "$H" run --peer "$IP" --repeat "$RCOUNT" --json /tmp/out/repeat-report.json $EXPECT_ARGS "$@" \
    ${PV:+--peer-version "$PV"} > /tmp/out/repeat.txt 2>&1
  rrc=$?; echo 0 > $T/tracing_on; cat $T/trace > /tmp/out/trace.txt 2>&1
  echo "@@REPEAT rc=$rrc"; ship repeat repeat.txt repeat-report.json trace.txt trace-events.txt
}

# The client side: judge the kernel NFS client (xprtrdma) mounting against `serve`.
phase_client() {
  # Plain workloads on 20050; each active scenario on a port of its own after it.
  # shellcheck disable=SC2086 # EXPECT_ARGS is two words or none
  "$H" serve --listen "$IP:20050" --idle 20 --max-time 600 --kernel-log /dev/kmsg --json /tmp/out/client-report.json \
    --junit /tmp/out/client-junit.xml $EXPECT_ARGS ${PV:+--peer-version "$PV"} > /tmp/out/client.txt 2>&1 &
  spid=$!; sleep 2; mkdir -p /mnt/c
  # NFSv4 mounts `serve`'s root: its NFSv4.1/4.2 server has no pseudo file system, the
  # export is the root PUTROOTFH names.
  # shellcheck disable=SC2012,SC2129 # listings for mount.txt; each step appends as it ends
  for v in 3 4.1 4.2; do
    p=/export; [ $v = 3 ] || p=/
    timeout 60 mount -t nfs -o vers=$v,proto=rdma,port=20050,retrans=1,timeo=30 "$IP:$p" /mnt/c >> /tmp/out/mount.txt 2>&1
    echo "mount vers=$v rc=$?" >> /tmp/out/mount.txt
    ls /mnt/c >> /tmp/out/mount.txt 2>&1
    if grep -q " /mnt/c " /proc/mounts; then
      { ls -l /mnt/c/dir | head -3; od -An -tx1 /mnt/c/five; dd if=/mnt/c/big of=/dev/null bs=64k
        dd if=/mnt/c/big of=/mnt/c/scratch bs=64k conv=fsync; echo new > /mnt/c/newfile; ls -l /mnt/c; df /mnt/c
        cat /proc/net/rpc/nfs; umount /mnt/c
        mount -t nfs -o vers=3,proto=rdma,port=20050,nordirplus "$IP:/export" /mnt/c && ls -l /mnt/c/dir | wc -l
        cat /proc/net/rpc/nfs; } >> /tmp/out/mount.txt 2>&1
    fi
    umount /mnt/c 2>/dev/null
  done
  /extra/client-scenarios /tmp/out/client.txt "$IP" >> /tmp/out/mount.txt 2>&1
  wait $spid; crc=$?
  echo "@@CLIENT rc=$crc"; ship client client.txt client-report.json client-junit.xml mount.txt
}

# GUEST_EXTRA: the host's script, run with the peer up and the harness at $HARNESS (the files
# of GUEST_EXTRA_FILES in $EXTRA_FILES); what it writes into $OUT leaves the VM as extra/ (its
# output in extra/extra.txt).
phase_extra() {
  mkdir -p /tmp/out/extra
  PEER_IP=$IP HARNESS=$H OUT=/tmp/out/extra PEER_VERSION=$PV RESTART_COMMAND=$RESTART EXTRA_FILES=/extra/guest-extra.d \
    EXPECT_FILE=$([ "$EXPECT" = 0 ] || echo /extra/expect.json) /extra/guest-extra > /tmp/out/extra/extra.txt 2>&1
  erc=$?
  echo "@@EXTRA rc=$erc"; ship extra extra
}

# client_workload VERS PORT DIR: the kernel client's workload toward `serve --fuzz` or replay:
# a soft mount on DIR reading five, big and dir; vers=3, then CLIENT_READERS readers of big
# in 4 KiB direct reads for 20 s (each a READ past the page cache: many replies a mount to
# mutate, where a mount costs seconds under emulation; each reader stalls on a mutated reply
# for the soft mount's timeout, the others go on). vers=3 of /export, or vers=4.1 of the root
# (no pseudo file system) with a delegation recalled: the first read of five gets a read
# delegation (the session has a back channel); a vers=4.2 mount is another client to `serve`
# (the Linux client's co_ownerid names the minor version, "Linux NFSv4.2 HOST":
# nfs4_init_uniform_client_string() in fs/nfs/nfs4proc.c), and its OPEN of five for writing
# makes `serve` recall the delegation with CB_RECALL on the 4.1 client's back channel
# (RFC 8881 10.4.1), a reverse-direction call the fuzzer mutates (RFC 8167 4).
client_workload() {
  v=$1 port=$2 m=$3
  if [ "$v" = 4.1 ]; then p=/; else p=/export; fi
  o=proto=rdma,port=$port,soft,timeo=10,retrans=1
  timeout 60 mount -t nfs -o "vers=$v,$o" "$IP:$p" "$m" || return 0
  timeout 60 od -An -tx1 "$m/five"; timeout 60 md5sum "$m/big"; timeout 60 ls "$m/dir" | wc -l
  if [ "$v" = 3 ] && [ "$CLIENT_READERS" -gt 0 ]; then
    readers='' i=0
    while [ $i -lt "$CLIENT_READERS" ]; do
      i=$((i + 1))
      timeout 20 sh -c "while :; do dd if='$m/big' of=/dev/null bs=4k iflag=direct 2>/dev/null; done" &
      readers="$readers $!"
    done
    # shellcheck disable=SC2086 # the readers' PIDs, one a word
    wait $readers; echo "direct reads: $CLIENT_READERS readers for 20 s"
  fi
  if [ "$v" = 4.1 ] && timeout 20 mount -t nfs -o "vers=4.2,$o" "$IP:/" /mnt/g; then
    # Opened for writing, nothing written (five's bytes stay as the other reads expect);
    # NFS4ERR_DELAY until the delegation is returned, bounded (a mutated CB_RECALL may never be
    # answered).
    timeout 8 sh -c ': >> /mnt/g/five'; echo "recall: open for writing from vers=4.2 rc=$?"
    timeout 30 umount -f /mnt/g || umount -l /mnt/g
  fi
  timeout 30 umount -f "$m" || umount -l "$m"
}

# fuzz_serve PORT NAME [ARGS...]: `serve --fuzz` in the background (NAME.txt, NAME-report.json,
# findings in NAME/), its kernel log followed; with JOURNAL=1, each mutated message and finding
# journaled on the virtio-serial port rpcrdma.NAME (a port is opened by one process at a time:
# each serve its own). Idle 30 s: each ends once the loop has left it alone that long (a mount
# of the other takes less: every step is bounded).
fuzz_serve() {
  port=$1 name=$2; shift 2
  if [ "${JOURNAL:-0}" = 1 ]; then
    j=$(journal_device "rpcrdma.$name")
    if [ -n "$j" ]; then set -- "$@" --journal "$j"; else echo "@@FUZZCLIENT no journal port rpcrdma.$name"; fi
  fi
  # The harness is never what the OOM killer takes (oom_score_adj -1000; what it starts
  # inherits that, so a peer's start script puts its server back to 0).
  # shellcheck disable=SC2086 # EXPECT_ARGS is two words or none
  ( echo -1000 > /proc/self/oom_score_adj; exec "$H" serve --listen "$IP:$port" --fuzz "$@" --seed "$FUZZ_SEED" \
      --kernel-log /dev/kmsg --idle 30 --max-time $((FUZZ_CLIENT + 120)) --out "/tmp/out/$name" \
      --json "/tmp/out/$name-report.json" $EXPECT_ARGS ${PV:+--peer-version "$PV"} ) > "/tmp/out/$name.txt" 2>&1 &
}

# fuzz_status NAME STATUS: killed by a signal, the report says so (and stands in for a JSON
# report never written).
fuzz_status() {
  if [ "$2" -gt 128 ]; then
    echo "@@FUZZCLIENT $1 killed by signal $(($2 - 128))"
    echo "serve --fuzz ended with status $2: killed by signal $(($2 - 128))" >> "/tmp/out/$1.txt"
    [ -s "/tmp/out/$1-report.json" ] || echo "{\"killed_by_signal\": $(($2 - 128)), \"note\": \"serve --fuzz was killed before it wrote its report\"}" > "/tmp/out/$1-report.json"
  fi
}

# mount_loop VERS PORT DIR: client_workload over and over until $end (uptime seconds), in a
# subshell of its own; then how many mounts.
mount_loop() (
  n=0
  while [ "$(uptime_s)" -lt "$end" ]; do n=$((n + 1)); client_workload "$@"; done
  echo "$n vers=$1 mounts"
)

# client_fuzz NAME: serve --fuzz mutates one reply or reverse-direction call in three while the
# kernel client mounts vers=3, reads and unmounts, and a second serve --fuzz mutates one
# reverse-direction call in two (NFSv4.1 callbacks, recalls among them) while the client mounts
# vers=4.1, each in a loop of its own, side by side (in turns, the vers=3 readers took the
# minute from the 4.1 mounts), for FUZZ_CLIENT seconds; the kernel log is followed (NAME.txt,
# NAME-report.json, NAME/, NAME-reverse.*, NAME-workload.txt). The second mutates no reply:
# with replies mutated too, hardly a 4.1 mount gets through its EXCHANGE_ID, CREATE_SESSION,
# RECLAIM_COMPLETE and lookups (none of five did in a 60 s loop on 6.1), and the back channel
# is never reached. FUZZ_CLIENT_ONLY="NAME..." holds the first to the reply mutations named and
# the second to the reverse-* ones (serve --fuzz-only); a side left none is not run. Its status
# (fcrc) is the worse of the two.
client_fuzz() {
  fo='' ro='' fwd=1 rev=1 fcrc=0 frrc=0
  for m in $FUZZ_CLIENT_ONLY; do
    case $m in reverse-*) ro="$ro --fuzz-only $m" ;; *) fo="$fo --fuzz-only $m" ;; esac
  done
  if [ -n "$FUZZ_CLIENT_ONLY" ]; then
    [ -n "$fo" ] || fwd=0
    [ -n "$ro" ] || rev=0
    echo "@@FUZZCLIENT only $FUZZ_CLIENT_ONLY: the vers=3 side $([ $fwd = 1 ] && echo run || echo not run), the vers=4.1 side $([ $rev = 1 ] && echo run || echo not run)"
  fi
  # shellcheck disable=SC2086 # $fo and $ro are --fuzz-only NAME pairs
  {
    [ $fwd = 0 ] || { fuzz_serve 20060 "$1" $fo; fpid=$!; }
    [ $rev = 0 ] || { fuzz_serve 20061 "$1-reverse" --fuzz-reverse-only --fuzz-one-in 2 $ro; rpid=$!; }
  }
  sleep 2; mkdir -p /mnt/f /mnt/h /mnt/g; end=$(($(uptime_s) + FUZZ_CLIENT))
  : > "/tmp/out/$1-workload.txt"
  if [ $fwd = 1 ]; then
    mount_loop 3 20060 /mnt/f > "/tmp/out/$1-workload.txt" 2>&1 &
    lpid=$!
  fi
  if [ $rev = 1 ]; then mount_loop 4.1 20061 /mnt/h > "/tmp/out/$1-workload-4.1.txt" 2>&1; fi
  [ $fwd = 0 ] || wait "$lpid"
  [ $rev = 0 ] || cat "/tmp/out/$1-workload-4.1.txt" >> "/tmp/out/$1-workload.txt"
  [ $fwd = 0 ] || { wait "$fpid"; fcrc=$?; fuzz_status "$1" $fcrc; }
  [ $rev = 0 ] || { wait "$rpid"; frrc=$?; fuzz_status "$1-reverse" $frrc; }
  [ $frrc -le $fcrc ] || fcrc=$frrc
}

# The client fuzzed (client_fuzz).
phase_client_fuzz() {
  # An oops ends the boot (panic_on_oops), as in phase_fuzz: a client task it kills may hold
  # what every later mount and unmount waits on (7.3's frwr_unmap_sync oops hangs the workload
  # until the watchdog); the host judges the panic and boots again to go on after this phase.
  echo "@@FUZZCLIENTSTART up=$(cut -d" " -f1 /proc/uptime)"; echo 1 > /proc/sys/kernel/panic_on_oops
  # PANIC_CLIENT_AFTER=SECONDS (testing that): the phase panics that long in.
  pk=''; [ -z "$PANIC_CLIENT_AFTER" ] || { ( sleep "$PANIC_CLIENT_AFTER"; echo c > /proc/sysrq-trigger ) & pk=$!; }
  # Journaled (the ports the host reads after a panic, fuzz-panic --journal).
  JOURNAL=1 client_fuzz client-fuzz
  echo 0 > /proc/sys/kernel/panic_on_oops; [ -z "$pk" ] || kill "$pk" 2>/dev/null
  echo "@@FUZZCLIENT rc=$fcrc"
  ship fuzzclient client-fuzz.txt client-fuzz-report.json client-fuzz client-fuzz-workload.txt \
    client-fuzz-reverse.txt client-fuzz-reverse-report.json client-fuzz-reverse
}

# serve --fuzz findings replayed toward the kernel client: replay serves on 20070, answers the
# first call of the finding's procedure with the recorded reply, and follows /dev/kmsg while
# the client mounts and reads; each must reproduce (replay exits 1).
phase_replay_client() {
  crrc=0; mkdir -p /mnt/r /mnt/g
  for r in $CREPLAYS; do
    "$H" replay "/extra/replay-client/$r" --listen "$IP:20070" --kernel-log /dev/kmsg --idle 10 --max-time 180 >> /tmp/out/replay-client.txt 2>&1 &
    rpid=$!; sleep 2
    # A finding on a reverse-direction call (its "reverse_call") needs the NFSv4.1 workload,
    # recall included, to be sent that call again.
    v=3; ! grep -q '"reverse_call"' "/extra/replay-client/$r" || v=4.1
    client_workload $v 20070 /mnt/r >> /tmp/out/replay-client.txt 2>&1
    wait $rpid; [ $? = 1 ] || crrc=1
  done
  echo "@@REPLAYCLIENT rc=$crrc"; ship replayclient replay-client.txt
}

# Reproducers replayed against the server: each must reproduce (replay exits 1).
phase_replay() {
  rrc=0
  for r in $REPLAYS; do
    "$H" replay "/extra/replay/$r" --peer "$IP" --kernel-log /dev/kmsg --restart-command "$RESTART" >> /tmp/out/replay.txt 2>&1
    [ $? = 1 ] || rrc=1
  done
  echo "@@REPLAY rc=$rrc"; ship replay replay.txt
}

ganesha_up() { kill -0 "$(cat /run/ganesha.pid 2>/dev/null)" 2>/dev/null || /ganesha/restart; }

# journal_device [NAME]: where a journal goes, a host file either way: the virtio-serial port
# NAME (default rpcrdma.journal; its ports appear after virtio_console's probe, from a work
# queue), else (only for the default) the second serial port; nothing when there is neither.
journal_device() {
  modprobe virtio_pci 2>/dev/null; modprobe virtio_console 2>/dev/null
  for _ in 1 2 3 4 5 6 7 8 9 10; do
    for p in /sys/class/virtio-ports/*; do
      if [ "$(cat "$p/name" 2>/dev/null)" = "${1:-rpcrdma.journal}" ] && [ -c "/dev/${p##*/}" ]; then echo "/dev/${p##*/}"; return; fi
    done
    sleep 0.5
  done
  [ -n "${1:-}" ] && return
  stty -F /dev/ttyS1 raw -echo 2>/dev/null; echo /dev/ttyS1
}

# The live-peer fuzzer against the server; restarted after a crash or hang. Each case is
# journaled (journal_device) before it is sent: after a kernel panic the host names the
# case, and boots again to fuzz on from the next one.
phase_fuzz() {
  # The time: FUZZ seconds (a boot after a panic: the seconds left), or with FUZZ_MESSAGES (this
  # is the last phase) until the budget (after a panic: the messages left), for at most the time
  # left before the watchdog less a minute to ship the reports.
  fs=${FUZZ_LEFT:-$FUZZ} messages=${FUZZ_MESSAGES_LEFT:-$FUZZ_MESSAGES}
  if [ -n "$messages" ]; then
    room=$((WATCHDOG - $(uptime_s) - 60)); [ "$room" -le "$fs" ] || fs=$room
  fi
  journal=$(journal_device); echo "@@FUZZSTART up=$(cut -d" " -f1 /proc/uptime) seconds=$fs journal=$journal"
  # An oops ends the boot (panic_on_oops): the task it killed may hold what nfsd needs to
  # restart (a restart of 6.12's nfsd after the rdma_rw_ctx_init oops is killed after 120 s,
  # again and again), where a new boot fuzzes on after the case; fuzz-panic names the oops's
  # report as the finding, with the findings journaled before it.
  echo 1 > /proc/sys/kernel/panic_on_oops
  # PANIC_AFTER=SECONDS (testing this machinery): the first boot panics that long into fuzzing.
  if [ -n "$PANIC_AFTER" ] && [ -z "${FUZZ_SKIP:-}" ]; then ( sleep "$PANIC_AFTER"; echo c > /proc/sysrq-trigger ) & fi
  set --
  [ -z "$messages" ] || set -- "$@" --max-messages "$messages"
  [ "$EXPECT" = 0 ] || set -- "$@" --expect /extra/expect.json
  # NFS-Ganesha: its log signs a crash by its backtrace, and its memory is watched (it keeps
  # what every connection registered: restarted before the VM runs out).
  [ "$SERVER" != ganesha ] || set -- "$@" --peer-log /tmp/out/ganesha.log --peer-pid-file /run/ganesha.pid
  # The harness is never what the OOM killer takes (oom_score_adj -1000; the restart command
  # inherits that, so a peer's start script puts its server back to 0).
  ( echo -1000 > /proc/self/oom_score_adj; exec "$H" fuzz --peer "$IP" --seed "$FUZZ_SEED" --out /tmp/out/fuzz \
      --json /tmp/out/fuzz-report.json --kernel-log /dev/kmsg --restart-command "$RESTART" --journal "$journal" "$@" \
      --seconds "$fs" --skip-cases "${FUZZ_SKIP:-0}" ${PV:+--peer-version "$PV"} ) > /tmp/out/fuzz.txt 2>&1
  # Killed by a signal: fuzz-report.json (written as the run goes) says it did not end, and
  # fuzz.txt by what; a stub stands in for a report never written.
  frc=$?
  if [ $frc -gt 128 ]; then
    echo "@@FUZZ killed by signal $((frc - 128))"
    echo "fuzz ended with status $frc: killed by signal $((frc - 128))" >> /tmp/out/fuzz.txt
    [ -s /tmp/out/fuzz-report.json ] || echo "{\"killed_by_signal\": $((frc - 128)), \"note\": \"fuzz was killed before it wrote its report\"}" > /tmp/out/fuzz-report.json
  fi
  echo "@@FUZZ rc=$frc"; ship fuzz fuzz.txt fuzz-report.json fuzz ganesha.log
}

# The server's reverse direction fuzzed (RFC 8167): FUZZ_REVERSE cases of `fuzz --reverse`,
# each an NFSv4.1 session whose back channel rides its connection, a recall provoked, and the
# server's callback answered with a mutated reply; the kernel log followed, nfsd restarted
# after a crash or hang. Before the forward fuzzer, the last phase, which may end the boot.
phase_fuzz_reverse() {
  set --
  [ "$EXPECT" = 0 ] || set -- "$@" --expect /extra/expect.json
  ( echo -1000 > /proc/self/oom_score_adj; exec "$H" fuzz --reverse --peer "$IP" --seed "$FUZZ_SEED" \
      --max-cases "$FUZZ_REVERSE" --seconds 600 --out /tmp/out/fuzz-reverse --json /tmp/out/fuzz-reverse-report.json \
      --kernel-log /dev/kmsg --restart-command "$RESTART" "$@" ${PV:+--peer-version "$PV"} ) > /tmp/out/fuzz-reverse.txt 2>&1
  echo "@@FUZZREVERSE rc=$?"; ship fuzzreverse fuzz-reverse.txt fuzz-reverse-report.json fuzz-reverse
}

[ "${PHASES_LIB:-0}" = 1 ] && return 0
rc=0
# A boot after a kernel panic while fuzzing the server (FUZZ_SKIP on the kernel command line)
# only fuzzes on; one after a panic while fuzzing the client (RESUME=client-fuzz) goes on after.
if [ -z "${FUZZ_SKIP:-}" ] && [ -z "${RESUME:-}" ]; then
  phase_loopback
  [ "$BENCH" != 1 ] || phase_bench
  phase_server
  [ "$RCOUNT" = 0 ] || phase_repeat
  [ "$CLIENT" != 1 ] || phase_client
  [ "$EXTRA" != 1 ] || phase_extra
  [ "$CLIENT" != 1 ] || [ "$FUZZ" = 0 ] || phase_client_fuzz
fi
[ -n "${FUZZ_SKIP:-}" ] || [ -z "$CREPLAYS" ] || phase_replay_client
# NFS-Ganesha may be down already: a crash in the catalogue is attributed there, and the
# server restarted here, before replays and fuzzing.
if [ "$SERVER" = ganesha ] && { [ "$FUZZ" != 0 ] || [ -n "$REPLAYS" ]; }; then
  ganesha_up > /tmp/out/ganesha-restart.txt 2>&1
fi
[ -n "${FUZZ_SKIP:-}" ] || [ -z "$REPLAYS" ] || phase_replay
# A replayed crash leaves NFS-Ganesha down: up again before fuzzing.
if [ "$SERVER" = ganesha ] && [ "$FUZZ" != 0 ] && [ -n "$REPLAYS" ]; then
  ganesha_up >> /tmp/out/ganesha-restart.txt 2>&1
fi
# NFS-Ganesha 6.5 serves no NFSv4.1 over RDMA (its profile): no back channel to fuzz.
[ -n "${FUZZ_SKIP:-}" ] || [ "$FUZZ" = 0 ] || [ "$FUZZ_REVERSE" = 0 ] || [ "$SERVER" = ganesha ] || phase_fuzz_reverse
[ "$FUZZ" = 0 ] || phase_fuzz
dmesg > /tmp/out/dmesg.txt; ship dmesg dmesg.txt
exit $rc
