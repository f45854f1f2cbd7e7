#!/bin/sh
# up.sh DIR: a single-node Slurm cluster on this machine, for the launcher tests: munged,
# slurmctld and slurmd, every file (configuration, key, sockets, state, logs, pid files) in
# DIR, daemons run as root. Waits until the node is idle. down.sh DIR stops it all.
# Prints nothing on success; on failure the daemons' logs say why.
set -eu
dir=$1
host=$(hostname -s)
mkdir -p "$dir/state" "$dir/spool"
# Ports away from Slurm's defaults, so that a real Slurm on the machine is left alone.
ctl_port=${COMMCAL_TEST_SLURMCTLD_PORT:-16817}
d_port=${COMMCAL_TEST_SLURMD_PORT:-16818}
dd if=/dev/urandom of="$dir/munge.key" bs=1024 count=1 2>/dev/null
chmod 400 "$dir/munge.key"
/usr/sbin/munged --force --key-file="$dir/munge.key" --socket="$dir/munge.sock" \
	--pid-file="$dir/munged.pid" --log-file="$dir/munged.log" --seed-file="$dir/munge.seed"
cat > "$dir/slurm.conf" <<CONF
ClusterName=commcaltest
SlurmctldHost=$host
SlurmctldPort=$ctl_port
SlurmdPort=$d_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge.sock
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
PlugStackConfig=$dir/plugstack.conf
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/builtin
MpiDefault=none
SwitchType=switch/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
ReturnToService=2
SlurmdParameters=config_overrides
KillWait=5
NodeName=$host NodeAddr=127.0.0.1 CPUs=64 RealMemory=1000 State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
: > "$dir/plugstack.conf"
export SLURM_CONF="$dir/slurm.conf"
/usr/sbin/slurmctld -f "$SLURM_CONF"
/usr/sbin/slurmd -f "$SLURM_CONF" -N "$host"
i=0
until sinfo -h -N -o %t 2>/dev/null | grep -qx idle; do
	i=$((i + 1))
	if [ $i -gt 150 ]; then
		echo "up.sh: the node did not become idle in 30 s; sinfo says: $(sinfo -h -N -o '%t %E' 2>&1)" >&2
		exit 1
	fi
	sleep 0.2
done
