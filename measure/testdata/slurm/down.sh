#!/bin/sh
# down.sh DIR: stops what up.sh DIR started (slurmd, slurmctld, munged) and waits for them.
dir=$1
for d in slurmd slurmctld munged; do
	f="$dir/$d.pid"
	[ -f "$f" ] || continue
	pid=$(cat "$f")
	kill "$pid" 2>/dev/null || continue
	i=0
	while kill -0 "$pid" 2>/dev/null && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	kill -9 "$pid" 2>/dev/null
done
exit 0
