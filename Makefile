# commcal — the two set-up commands are `make run` and `make test`.
GO ?= go
BIN := ./commcal
# Pinned so that the committed sample's manifest does not carry the day it was made.
SAMPLE_EPOCH := 1795219200

.PHONY: run test leaderboard build static bench simgrid-inputs simgrid fuzz fuzz-smoke sample clean

## build: ./commcal. -buildvcs=auto stamps the git commit into the binary (commcal version
## prints it) when built from a checkout, whatever GOFLAGS says.
build:
	$(GO) build -buildvcs=auto -o $(BIN) ./cmd/commcal

## static: a static binary (no cgo) to copy onto cluster nodes
static:
	CGO_ENABLED=0 $(GO) build -buildvcs=auto -trimpath -o $(BIN) ./cmd/commcal

## run: the full pipeline on the sample dataset embedded in the binary, into ./run
run: build
	$(BIN) run --out run

## test: static checks and every test, the committed leaderboard on three of its datasets
# The packages whose tests time real transfers (measure: TCP through shaped links in network
# namespaces; engine: the benchmark engine over loopback) are tested last, one at a time
# (-p 1): another package's tests beside them on a 2-core machine take the CPU they need and
# skew the rates they measure. The others run two at a time. Tests inside a package still run
# in parallel where they say so. cmd/commcal's test of measure then run (as root) measures
# too, but asserts no rate, and runs with the others. -timeout 30m is there for a hung test,
# not for a slow machine. The measured times are in docs/performance.md.
TIMED_PKGS := ./engine ./measure
test:
	$(GO) vet ./...
	$(GO) test -p 2 -timeout 30m $$($(GO) list ./... | grep -vxF "$$($(GO) list $(TIMED_PKGS))")
	$(GO) test -p 1 -timeout 30m $(TIMED_PKGS)

## leaderboard: data/tcp/LEADERBOARD.md regenerated from every committed TCP dataset and
## compared with the file, and every one's calibration walked for parameters reported as
## fitted that the data do not identify (minutes; CI runs it after make test)
leaderboard:
	COMMCAL_LEADERBOARD=full $(GO) test -count=1 -timeout 60m -run '^TestCommittedLeaderboard$$' ./selection/
	COMMCAL_LEADERBOARD=full $(GO) test -count=1 -timeout 30m -run '^TestNoParameterReportedAsFittedUnidentified$$' ./estimate/

## bench: the performance benchmarks (ingest throughput and the others)
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

## simgrid-inputs: the 10^4-transfer pattern, its platform, commcal's times, into bench/out
BENCH_OUT ?= bench/out
simgrid-inputs:
	COMMCAL_BENCH_OUT=$(abspath $(BENCH_OUT)) $(GO) test -count=1 -run '^TestWriteSimGridInputs$$' ./contention/

## simgrid: the same pattern under SimGrid's max-min, side by side (needs python3-simgrid)
simgrid: simgrid-inputs
	/usr/bin/python3 bench/simgrid_maxmin.py --dir $(BENCH_OUT)

## fuzz: a fuzzing session of every fuzz target (FUZZTIME each, default 30s; a new input
## minimised for up to FUZZMINIMIZETIME, Go's default 60s: the defaults are scripts/fuzz.sh's,
## which also says how a failure is told from the Go fuzzer's worker-stop report)
fuzz:
	GO=$(GO) FUZZTIME=$(FUZZTIME) FUZZMINIMIZETIME=$(FUZZMINIMIZETIME) ./scripts/fuzz.sh

## fuzz-smoke: every fuzz target for 500 executions, as CI runs them. A count, not a
## duration: a duration's deadline can race the fuzzer's workers, which then report "context
## deadline exceeded" with no failing input (golang/go#75804). Minimising stops after 1s: the
## ingest targets' executions take tens of ms, and a worker still minimising at the end can be
## reported as hung (golang/go#52569, #48820); a real failure is still reported.
fuzz-smoke:
	$(MAKE) fuzz FUZZTIME=500x FUZZMINIMIZETIME=1s

## sample: re-measure the embedded sample dataset on an emulated cluster (needs root)
sample: build
	SOURCE_DATE_EPOCH=$(SAMPLE_EPOCH) $(BIN) --log-level info measure --cluster pipeline/sample/lab.toml --force --out pipeline/sample/measured

## clean: remove what the targets above write (the binary, ./run, the benchmark outputs)
clean:
	rm -rf $(BIN) run $(BENCH_OUT)
