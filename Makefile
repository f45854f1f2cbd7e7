# commcal — the two set-up commands are `make run` and `make test`.
GO ?= go
BIN := ./commcal
# Pinned so that the committed sample's manifest does not carry the day it was made.
SAMPLE_EPOCH := 1795219200

.PHONY: run test build bench fuzz sample clean

build:
	$(GO) build -o $(BIN) ./cmd/commcal

## run: the full pipeline on the sample dataset embedded in the binary, into ./run
run: build
	$(BIN) run --out run

## test: static checks and every test
test:
	$(GO) vet ./...
	$(GO) test ./...

## bench: the performance benchmarks (ingest throughput and the others)
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

## fuzz: a short fuzzing session of every input parser
fuzz:
	$(GO) test -run '^$$' -fuzz FuzzIngestCSV -fuzztime 30s ./datasets
	$(GO) test -run '^$$' -fuzz FuzzIngestSimGrid -fuzztime 30s ./datasets
	$(GO) test -run '^$$' -fuzz FuzzIngestIperf3 -fuzztime 30s ./datasets
	$(GO) test -run '^$$' -fuzz FuzzParseCluster -fuzztime 30s ./cluster

## sample: re-measure the embedded sample dataset on an emulated cluster (needs root)
sample: build
	SOURCE_DATE_EPOCH=$(SAMPLE_EPOCH) $(BIN) --log-level info measure --cluster pipeline/sample/lab.toml --force --out pipeline/sample/measured

clean:
	rm -rf $(BIN) run
