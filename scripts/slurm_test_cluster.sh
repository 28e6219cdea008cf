#!/usr/bin/env bash
# A one-node SLURM cluster on loopback for the tests (and for trying `launcher=slurm` on one machine).
#
#   scripts/slurm_test_cluster.sh start STATE_DIR   # prints SLURM_CONF=<STATE_DIR>/slurm.conf when the node is idle
#   scripts/slurm_test_cluster.sh stop STATE_DIR    # stops, by PID, only the daemons `start` started
#
# Needs root (it installs Debian's slurm-wlm and munge with apt when they are missing, and the daemons
# run as root). Clients find the cluster through SLURM_CONF. No slurmdbd: slca reads job states from
# squeue and the run directories, never from sacct (docs/launch.md#test-cluster says why). Two fake GPUs
# (character devices like /dev/null) let jobs ask for --gpus-per-node.
set -euo pipefail

action=${1:-}
state=${2:-}
if [[ -z "$action" || -z "$state" ]]; then
  echo "usage: $0 start|stop STATE_DIR" >&2
  exit 2
fi
mkdir -p "$state"
state=$(cd "$state" && pwd)
pids="$state/pids"

stop() {
  [[ -f "$pids" ]] || return 0
  # Jobs first, while the daemons can still end them (a job step outlives a stopped slurmd).
  if SLURM_CONF="$state/slurm.conf" scancel --full --user="$(id -un)" 2>/dev/null; then
    for _ in $(seq 100); do
      [[ -z "$(SLURM_CONF="$state/slurm.conf" squeue -h -t R,CG,S -o %i 2>/dev/null)" ]] && break
      sleep 0.2
    done
  fi
  # slurmd first (it holds the job steps), then slurmctld, then munged if this script started it.
  tac "$pids" | while read -r name pid; do
    if kill -0 "$pid" 2>/dev/null; then
      kill "$pid" 2>/dev/null || true
      for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null || true
    fi
    echo "stopped $name ($pid)"
  done
  rm -f "$pids"
}

if [[ "$action" == stop ]]; then
  stop
  exit 0
fi
if [[ "$action" != start ]]; then
  echo "$0: unknown action '$action' (start or stop)" >&2
  exit 2
fi
if [[ -f "$pids" ]]; then
  echo "$0: $state already holds a cluster (its pids file exists); stop it first" >&2
  exit 1
fi

if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
  if [[ $(id -u) -ne 0 ]]; then
    echo "$0: slurm-wlm and munge are missing and installing them needs root" >&2
    exit 1
  fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q slurm-wlm munge >"$state/apt.log" 2>&1 \
    || { apt-get update -q >>"$state/apt.log" 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q slurm-wlm munge >>"$state/apt.log" 2>&1; } \
    || { echo "$0: apt-get install slurm-wlm munge failed (see $state/apt.log)" >&2; exit 1; }
fi

host=$(hostname -s)
mkdir -p "$state/ctld" "$state/spool" "$state/log"
for i in 0 1; do
  [[ -e "$state/gpu$i" ]] || mknod "$state/gpu$i" c 1 3  # the device numbers of /dev/null
done

cat >"$state/slurm.conf" <<EOF
# Written by scripts/slurm_test_cluster.sh: one node on loopback, for tests.
ClusterName=slcatest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=16817
SlurmdPort=16818
SlurmUser=root
AuthType=auth/munge
CredType=cred/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/builtin
MpiDefault=none
ReturnToService=2
JobRequeue=1
# Refuse at submission a job the partition can never run (more nodes than it has), as production clusters do.
EnforcePartLimits=ALL
KillWait=3
MinJobAge=600
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
GresTypes=gpu
StateSaveLocation=$state/ctld
SlurmdSpoolDir=$state/spool
SlurmctldPidFile=$state/slurmctld.pid
SlurmdPidFile=$state/slurmd.pid
SlurmctldLogFile=$state/log/slurmctld.log
SlurmdLogFile=$state/log/slurmd.log
NodeName=$host NodeAddr=127.0.0.1 CPUs=2 Gres=gpu:2 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
cat >"$state/gres.conf" <<EOF
AutoDetect=off
Name=gpu File=$state/gpu[0-1]
EOF
export SLURM_CONF="$state/slurm.conf"

# munged: reuse one already running (it is system-wide), else start it and record its pid.
if ! munge -n </dev/null >/dev/null 2>&1; then
  [[ -s /etc/munge/munge.key ]] || { mungekey --create --force >/dev/null 2>&1 || create-munge-key -f >/dev/null; }
  chown munge:munge /etc/munge/munge.key && chmod 400 /etc/munge/munge.key
  mkdir -p /run/munge /var/log/munge /var/lib/munge
  chown munge:munge /run/munge /var/log/munge /var/lib/munge
  runuser -u munge -- /usr/sbin/munged
  for _ in $(seq 50); do [[ -s /run/munge/munged.pid ]] && break; sleep 0.1; done
  echo "munged $(cat /run/munge/munged.pid)" >>"$pids"
fi

/usr/sbin/slurmctld -f "$state/slurm.conf" -i
for _ in $(seq 100); do [[ -s "$state/slurmctld.pid" ]] && break; sleep 0.1; done
echo "slurmctld $(cat "$state/slurmctld.pid")" >>"$pids"
/usr/sbin/slurmd -f "$state/slurm.conf" -N "$host"
for _ in $(seq 100); do [[ -s "$state/slurmd.pid" ]] && break; sleep 0.1; done
echo "slurmd $(cat "$state/slurmd.pid")" >>"$pids"

for _ in $(seq 300); do
  if sinfo -h -N -o '%T' 2>/dev/null | grep -qx idle; then
    # A daemon that died at once (its port taken by another cluster) must not pass for this one.
    while read -r name pid; do
      kill -0 "$pid" 2>/dev/null || { echo "$0: $name exited at start (logs in $state/log)" >&2; stop >/dev/null; exit 1; }
    done <"$pids"
    echo "SLURM_CONF=$state/slurm.conf"
    exit 0
  fi
  sleep 0.2
done
echo "$0: the node did not become idle within 60 s (logs in $state/log)" >&2
stop >/dev/null
exit 1
