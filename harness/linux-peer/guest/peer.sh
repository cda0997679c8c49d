#!/bin/sh
# Soft-RoCE on a dummy netdev whose address exists only in this VM (qemu runs with -nic
# none), and the kernel NFS server listening for RDMA on 20049. rxe on lo does not work with
# RDMA-CM (rdma_resolve_route: ENODEV), hence the dummy device. PEER=ganesha: NFS-Ganesha
# (appended to the initramfs by ./run) serves instead of nfsd.
IP=${PEER_IP:-10.55.0.1}
step() {
  n=$1; shift
  "$@" > /tmp/step.log 2>&1; rc=$?
  echo "@@STEP $n rc=$rc up=$(cut -d' ' -f1 /proc/uptime)"
  [ $rc = 0 ] || cat /tmp/step.log
  return $rc
}
step rdma sh -c 'modprobe rdma_rxe && modprobe ib_uverbs && modprobe rdma_ucm'
step netdev sh -c "modprobe dummy; ip link show dummy0 >/dev/null 2>&1 || ip link add dummy0 type dummy; ip addr add $IP/24 dev dummy0 && ip link set dummy0 up"
step rxe sh -c 'rdma link add rxe0 type rxe netdev dummy0'
# Soft-iWARP (SIW=1 on the kernel command line, an image built with SIW=1): siw on a second
# dummy netdev with its own address, so RDMA-CM resolves each address to one device.
if [ "${SIW:-0}" = 1 ]; then
  step siw sh -c "modprobe siw && ip link add dummy1 type dummy && ip addr add ${SIW_IP:-10.55.1.1}/24 dev dummy1 && ip link set dummy1 up && rdma link add siw0 type siw netdev dummy1"
fi
# The server under test: the kernel's nfsd, or NFS-Ganesha (PEER=ganesha on the kernel command
# line) exporting the same tree, with the same port for RPC-over-RDMA.
# NFS-Ganesha's VFS FSAL refuses to export a tmpfs (populate_posix_file_systems() skips them):
# its /export is a directory of the initramfs's root file system instead.
# shellcheck disable=SC2016 # expanded by the sh that step runs
step export sh -c '
  { [ "${PEER:-nfsd}" = ganesha ] || mount -t tmpfs tmpfs /export; } &&
  { [ ! -x /extra/rpcrdma-harness ] || /extra/rpcrdma-harness export-tree /export; } &&
  mkdir -p /run/rpcbind && rpcbind -w'
# Both grace periods 10 s: nfsd grants no delegation while lockd's lasts too (locks_in_grace()
# in nfs4_open_delegation(), fs/nfsd/nfs4state.c; lockd's default is 5 x nlm_timeout = 50 s,
# get_lockd_grace_period(), fs/lockd/svc.c), which held the first recall check ~35 s.
if [ "${PEER:-nfsd}" = ganesha ]; then
  step ganesha /ganesha/start
else
  step nfsd sh -c '
    modprobe nfsd && modprobe rpcrdma &&
    mount -t nfsd nfsd /proc/fs/nfsd &&
    mount -t rpc_pipefs rpc_pipefs /var/lib/nfs/rpc_pipefs 2>/dev/null;
    exportfs -ra && rpc.mountd --manage-gids &&
    echo 10 > /proc/fs/nfsd/nfsv4gracetime 2>/dev/null;
    echo 10 > /proc/sys/fs/nfs/nlm_grace_period 2>/dev/null;
    rpc.nfsd 4 &&
    echo "rdma 20049" > /proc/fs/nfsd/portlist'
fi
[ "${SIW:-0}" = 1 ] && IP=${SIW_IP:-10.55.1.1}
echo "@@PEER_READY ip=$IP port=20049 kernel=$(uname -r) up=$(cut -d' ' -f1 /proc/uptime)"
