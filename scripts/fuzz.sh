#!/bin/sh
# Fuzzes every fuzz target of the module for FUZZTIME each, minimising a new input for at most
# FUZZMINIMIZETIME (make fuzz, make fuzz-smoke). Prints a failing target's output.
#
# Go's fuzzer sometimes reports "fuzzing process hung or terminated unexpectedly" when it stops a
# worker that is still busy (golang/go#52569, #48820): the input it writes then passes when run
# alone. Such a report is told from a real failure by running the written input alone (with a
# one-minute limit, so that an input that hangs still fails); only when that run reports the
# input's own subtest as passed is the input removed (this run wrote it) and the target fuzzed
# once more, and that second run must pass. A crash that does not repeat when the input runs
# alone (a race, an input taking between the fuzzer's limit and a minute) is let through this
# way: the second run is its only other chance to show. A duration's end can also race the
# workers, reported as "context deadline exceeded" with no input written (golang/go#75804):
# that target is fuzzed once more too, and must pass then.
set -u
GO="${GO:-go}"
FUZZTIME="${FUZZTIME:-30s}"
FUZZMINIMIZETIME="${FUZZMINIMIZETIME:-60s}"
log="$(mktemp)"
alone="$(mktemp)"
trap 'rm -f "$log" "$alone"' EXIT

fuzz() { # pkg target
	"$GO" test -run '^$' -fuzz "^$2\$" -fuzztime "$FUZZTIME" -fuzzminimizetime "$FUZZMINIMIZETIME" "$1" >"$log" 2>&1
}

# show prints the fuzzing log from its first failure on (a panic's stack included), all of it if
# there is no "--- FAIL" line.
show() {
	if grep -q -e '--- FAIL' "$log"; then
		sed -n '/--- FAIL/,$p' "$log"
	else
		cat "$log"
	fi
}

pkgs="$("$GO" list ./...)" || exit 1
for pkg in $pkgs; do
	targets="$("$GO" test -list '^Fuzz' "$pkg")" || exit 1
	for target in $(printf '%s\n' "$targets" | grep '^Fuzz'); do
		echo "fuzz $pkg $target ($FUZZTIME)"
		dir="$("$GO" list -f '{{.Dir}}' "$pkg")" || exit 1
		# The corpus directories this run may create, to remove with a harmless input.
		newTarget=0 newFuzz=0 newTestdata=0
		[ -d "$dir/testdata/fuzz/$target" ] || newTarget=1
		[ -d "$dir/testdata/fuzz" ] || newFuzz=1
		[ -d "$dir/testdata" ] || newTestdata=1
		fuzz "$pkg" "$target" && continue
		show
		grep -q -e 'hung or terminated unexpectedly' -e 'context deadline exceeded' "$log" || exit 1
		input="$(sed -n 's/.*Failing input written to \(testdata\/fuzz\/[^ ]*\).*/\1/p' "$log" | head -n 1)"
		if [ -n "$input" ]; then
			name="$(basename "$input")"
			if [ ! -f "$dir/$input" ]; then
				echo "the fuzzer named $dir/$input, which does not exist"
				exit 1
			fi
			"$GO" test -count=1 -v -timeout 60s -run "^$target/$name\$" "$pkg" >"$alone" 2>&1
			if ! grep -q -e "--- PASS: $target/$name " "$alone"; then
				cat "$alone"
				echo "the input fails alone: $dir/$input"
				exit 1
			fi
			echo "the input passes alone (the fuzzer's worker-stop report, not a failure); removed, fuzzing again"
			rm -f "$dir/$input"
			[ "$newTarget" = 0 ] || rmdir "$dir/testdata/fuzz/$target"
			[ "$newFuzz" = 0 ] || rmdir "$dir/testdata/fuzz"
			[ "$newTestdata" = 0 ] || rmdir "$dir/testdata"
		else
			echo "no input written; fuzzing again"
		fi
		if ! fuzz "$pkg" "$target"; then
			show
			echo "$target failed again on the second run"
			exit 1
		fi
	done
done
