// Package pipelinetest runs the pipeline for tests: the embedded sample, and simulated
// clusters, into run directories that the tests of the pipeline and of its readers examine.
package pipelinetest

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/contention"
	"github.com/commcal/commcal/datasets"
	"github.com/commcal/commcal/estimate"
	"github.com/commcal/commcal/pipeline"
	"github.com/commcal/commcal/simulate"
)

// Sample runs the embedded sample into out, dated 2026-11-21, with the measurement's notes.
func Sample(t testing.TB, out string) *pipeline.RunResult {
	t.Helper()
	return SampleWith(t, out, pipeline.RunOptions{Created: time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)})
}

// SampleWith runs the embedded sample into out with the measurement's notes, the default
// stopping rule and parameters, and the creation time, thresholds and previous run of opts.
func SampleWith(t testing.TB, out string, opts pipeline.RunOptions) *pipeline.RunResult {
	t.Helper()
	cl, srcs, err := pipeline.Sample()
	if err != nil {
		t.Fatal(err)
	}
	notes, err := pipeline.SampleNotes()
	if err != nil {
		t.Fatal(err)
	}
	opts.Cluster, opts.Sources, opts.Out, opts.Rule, opts.Defaults, opts.Notes = cl, srcs, out, estimate.DefaultStoppingRule, contention.DefaultParams(), notes
	res, err := pipeline.Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// Simulated simulates a cluster (seed 1, 1% noise, 10 repetitions) and runs the pipeline on it
// into dir/name, which it returns: one night of measurements.
func Simulated(t testing.TB, cl *cluster.Cluster, dir, name string) string {
	t.Helper()
	sim := filepath.Join(dir, "sim-"+name)
	tr := simulate.DefaultTruth(cl, 1)
	tr.Noise = 0.01
	when := time.Unix(0, 0)
	if _, _, err := simulate.Run(context.Background(), simulate.Options{Cluster: cl, Truth: tr, Out: sim, Created: when}); err != nil {
		t.Fatal(err)
	}
	srcs, err := datasets.ExpandSources([]string{sim}, datasets.Source{})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, name)
	if _, err := pipeline.Run(context.Background(), pipeline.RunOptions{Cluster: cl, Sources: srcs, Out: out, Rule: estimate.DefaultStoppingRule,
		Created: when, Defaults: contention.DefaultParams(), Weighted: true}); err != nil {
		t.Fatal(err)
	}
	return out
}
