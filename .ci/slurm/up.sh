#!/usr/bin/env bash
# Boot a real one-node Slurm (Debian slurm-wlm + munge) for the cluster tests; .ci/slurm/down.sh stops it by PID.
# Facts this relies on (shared/spec/slurm-on-one-machine.md): slurm.conf must be /etc/slurm/slurm.conf (the job
# step strips SLURM_CONF); as root, SlurmUser=SlurmdUser=root; no systemd, no slurmdbd, no accounting.
set -euo pipefail
STATE=${C13_SLURM_STATE:-/tmp/c13-l5-slurm}
CONF=/etc/slurm/slurm.conf
MARK="# c13-l5 one-node test cluster, written by .ci/slurm/up.sh"

if [ -e "$CONF" ] && ! grep -qF "$MARK" "$CONF"; then
  echo "error: $CONF exists and was not written by this kit: refusing to replace a real cluster's config" >&2
  exit 1
fi
if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurm-wlm munge >/dev/null
fi
mkdir -p "$STATE"/spool/ctld "$STATE"/spool/d "$STATE"/log "$STATE"/run /etc/slurm

install -d -o munge -g munge -m 0755 /run/munge
[ -s /etc/munge/munge.key ] || { dd if=/dev/urandom bs=1 count=1024 of=/etc/munge/munge.key 2>/dev/null;
  chown munge:munge /etc/munge/munge.key; chmod 0400 /etc/munge/munge.key; }
if ! { [ -f /run/munge/munged.pid ] && kill -0 "$(cat /run/munge/munged.pid)" 2>/dev/null; }; then
  su -s /bin/sh munge -c "/usr/sbin/munged --pid-file=/run/munge/munged.pid"
fi

host=$(hostname -s)
mem=$(( $(free -m | awk '/^Mem:/ {print $2}') - 1024 ))
cat > "$CONF" <<CONF
$MARK
ClusterName=c13ci
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=$STATE/spool/ctld
SlurmdSpoolDir=$STATE/spool/d
SlurmctldPidFile=$STATE/run/slurmctld.pid
SlurmdPidFile=$STATE/run/slurmd.pid
SlurmctldLogFile=$STATE/log/slurmctld.log
SlurmdLogFile=$STATE/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
MpiDefault=none
ReturnToService=2
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
SchedulerType=sched/backfill
# finished jobs stay visible to squeue/scontrol this long: the executor's squeue status checks need
# MinJobAge >= 3 x slurm-init-seconds-before-status-checks, and the tests read job records afterwards
MinJobAge=600
NodeName=$host CPUs=$(nproc) RealMemory=$mem State=UNKNOWN
PartitionName=main Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF

running() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }
running "$STATE/run/slurmctld.pid" || /usr/sbin/slurmctld
running "$STATE/run/slurmd.pid" || /usr/sbin/slurmd
for _ in $(seq 60); do
  state=$(sinfo -h -o %t 2>/dev/null || true)
  [ "$state" = "idle" ] && { echo "slurm: node $host idle (partition main, $(nproc) CPUs, ${mem} MB)"; exit 0; }
  sleep 0.5
done
echo "error: slurm did not come up within 30 s; see $STATE/log/" >&2
exit 1
