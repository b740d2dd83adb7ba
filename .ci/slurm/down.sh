#!/usr/bin/env bash
# Stop what .ci/slurm/up.sh started, by the PIDs in their pid files (slurmd, slurmctld, then munged), and remove
# the slurm.conf it wrote. Safe to run twice.
set -uo pipefail
STATE=${C13_SLURM_STATE:-/tmp/c13-l5-slurm}
CONF=/etc/slurm/slurm.conf
stop() {  # stop <pid file> <name>
  [ -f "$1" ] || return 0
  pid=$(cat "$1")
  if kill -0 "$pid" 2>/dev/null; then
    kill "$pid"
    for _ in $(seq 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
    kill -0 "$pid" 2>/dev/null && kill -9 "$pid"
    echo "slurm: stopped $2 (pid $pid)"
  fi
  rm -f "$1"
}
stop "$STATE/run/slurmd.pid" slurmd
stop "$STATE/run/slurmctld.pid" slurmctld
stop /run/munge/munged.pid munged
if [ -f "$CONF" ] && grep -qF "# c13-l5 one-node test cluster" "$CONF"; then rm -f "$CONF"; fi
exit 0
