#!/bin/sh
# Fuzzes every fuzz target of the module for FUZZTIME each, minimising a new input for at most
# FUZZMINIMIZETIME (make fuzz, make fuzz-smoke). Prints a failing target's output.
#
# Go's fuzzer sometimes reports "fuzzing process hung or terminated unexpectedly" when it stops a
# worker that is still busy (golang/go#52569, #48820): the input it writes then passes when run
# alone. Such a report is told from a real failure by running the written input alone (with a
# one-minute limit, so a real hang still fails); only then is the input removed (this run wrote
# it) and the target fuzzed once more, and that second run must pass.
set -u
GO="${GO:-go}"
FUZZTIME="${FUZZTIME:-30s}"
FUZZMINIMIZETIME="${FUZZMINIMIZETIME:-60s}"
log="$(mktemp)"
trap 'rm -f "$log"' EXIT

fuzz() { # pkg target
	"$GO" test -run '^$' -fuzz "^$2\$" -fuzztime "$FUZZTIME" -fuzzminimizetime "$FUZZMINIMIZETIME" "$1" >"$log" 2>&1
}

for pkg in $("$GO" list ./...); do
	for target in $("$GO" test -list '^Fuzz' "$pkg" | grep '^Fuzz' || true); do
		echo "fuzz $pkg $target ($FUZZTIME)"
		dir="$("$GO" list -f '{{.Dir}}' "$pkg")"
		new=""
		for d in "$dir/testdata" "$dir/testdata/fuzz" "$dir/testdata/fuzz/$target"; do
			[ -d "$d" ] || new="$d $new"
		done
		fuzz "$pkg" "$target" && continue
		tail -n 40 "$log"
		grep -q 'hung or terminated unexpectedly' "$log" || exit 1
		input="$(sed -n 's/.*Failing input written to \(testdata\/fuzz\/[^ ]*\).*/\1/p' "$log" | head -n 1)"
		if [ -n "$input" ]; then
			if ! "$GO" test -timeout 60s -run "^$target/$(basename "$input")\$" "$pkg" >/dev/null 2>&1; then
				echo "the input fails alone: $dir/$input"
				exit 1
			fi
			echo "the input passes alone (the fuzzer's worker-stop report, not a failure); removed, fuzzing again"
			rm -f "$dir/$input"
			for d in $new; do rmdir "$d"; done
		else
			echo "no input written; fuzzing again"
		fi
		if ! fuzz "$pkg" "$target"; then
			tail -n 40 "$log"
			exit 1
		fi
	done
done
