package selection

import (
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/contention"
	"github.com/commcal/commcal/datasets"
	"github.com/commcal/commcal/datasets/campaigns"
	"github.com/commcal/commcal/experiments"
	"github.com/commcal/commcal/simulate"
)

// simulatedDatasets simulates two datasets of one truth (asymmetric, 1% noise, seeds 1 and 2)
// on the CCPE testbed and returns their directories.
func simulatedDatasets(t *testing.T) []string {
	t.Helper()
	cl, err := cluster.LoadNamed("ccpe-testbed")
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, seed := range []uint64{1, 2} {
		tr := simulate.DefaultTruth(cl, seed)
		tr.Noise = 0.01
		dir := filepath.Join(t.TempDir(), "sim")
		if _, _, err := simulate.Run(context.Background(), simulate.Options{Cluster: cl, Truth: tr, Out: dir, Created: time.Unix(0, 0)}); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, dir)
	}
	return dirs
}

// A leaderboard, which takes tens of seconds over the two simulated datasets, cancelled a
// second into its calibrations and cross-validations returns within a second with an error
// that is context.Canceled.
func TestLeaderboardStopsWhenCancelled(t *testing.T) {
	dirs := simulatedDatasets(t)
	ctx, cancel := context.WithCancel(t.Context())
	const delay = time.Second
	time.AfterFunc(delay, cancel)
	start := time.Now()
	lb, err := BuildLeaderboard(ctx, dirs, datasets.Open, contention.DefaultParams(), experiments.WithRole(experiments.HeldOut), true, nil)
	took := time.Since(start)
	if lb != nil || !errors.Is(err, context.Canceled) {
		t.Fatalf("after %v: a leaderboard (%v) and error %v; want none and an error that is context.Canceled", took, lb != nil, err)
	}
	if lag := took - delay; lag > time.Second {
		t.Errorf("returned %v after the cancellation, want at most 1s", lag)
	}
}

// TestLeaderboard ranks the models on two simulated datasets of one truth (asymmetric, 1%
// noise): every model is scored on both, the ranking sums their transfers, is in order and
// puts hockney (no contention at all) last, every setting carries its noise limit and the
// ranking the pooled one; with inSample every model's reach is pooled in the ranking's order,
// the same as its accuracy for models that no random pattern calibrates, and given on every
// entry.
func TestLeaderboard(t *testing.T) {
	dirs := simulatedDatasets(t)
	var progress []int
	lb, err := BuildLeaderboard(context.Background(), dirs, datasets.Open, contention.DefaultParams(), experiments.WithRole(experiments.HeldOut), true,
		func(done, total int) {
			if total != len(dirs) {
				t.Errorf("progress: %d of %d datasets, there are %d", done, total, len(dirs))
			}
			progress = append(progress, done)
		})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(progress, []int{1, 2}) {
		t.Errorf("progress reported %v datasets done, want 1 then 2", progress)
	}
	if len(lb.Ranking) != len(contention.Models()) {
		t.Fatalf("%d models ranked, want %d", len(lb.Ranking), len(contention.Models()))
	}
	perDataset := map[string]int{}
	for _, e := range lb.Entries {
		if e.Setting == "overall" {
			perDataset[e.Model] += e.Transfers
		} else if !(e.NoiseWithin10 > 0 && e.NoiseMeanAbsErr > 0) {
			t.Errorf("%s %s %s: no noise limit", e.Dataset, e.Setting, e.Model)
		}
	}
	for i, r := range lb.Ranking {
		if r.Transfers != perDataset[r.Model] || r.Transfers == 0 {
			t.Errorf("%s: %d transfers ranked, the datasets scored %d", r.Model, r.Transfers, perDataset[r.Model])
		}
		if i > 0 && r.Within10 > lb.Ranking[i-1].Within10 {
			t.Errorf("ranking out of order at %s", r.Model)
		}
	}
	for _, r := range lb.Ranking {
		if r.InSampleWithin10 == nil || r.InSampleMeanAbsErr == nil {
			t.Errorf("%s: no in-sample reach in the ranking", r.Model)
			continue
		}
		if (r.Model == "maxmin" || r.Model == "hockney") && (*r.InSampleWithin10 != r.Within10 || *r.InSampleMeanAbsErr != r.MeanAbsErr) {
			t.Errorf("%s: in sample %.4f / %.4f, held out %.4f / %.4f (no random pattern calibrates it)",
				r.Model, *r.InSampleWithin10, *r.InSampleMeanAbsErr, r.Within10, r.MeanAbsErr)
		}
	}
	for _, e := range lb.Entries {
		if e.InSampleWithin10 == nil || e.InSampleMeanAbsErr == nil {
			t.Errorf("%s %s %s: no in-sample reach", e.Dataset, e.Setting, e.Model)
			break
		}
	}
	// The pooled noise limit: each dataset's overall one weighted by the transfers it is over.
	var n int
	var within, abs float64
	for _, e := range lb.Entries {
		if e.Setting == "overall" && e.Model == "hockney" {
			n += e.NoiseTransfers
			within += e.NoiseWithin10 * float64(e.NoiseTransfers)
			abs += e.NoiseMeanAbsErr * float64(e.NoiseTransfers)
		}
	}
	if nl := lb.NoiseLimit; n == 0 || nl.Transfers != n || math.Abs(nl.Within10-within/float64(n)) > 1e-12 || math.Abs(nl.MeanAbsErr-abs/float64(n)) > 1e-12 {
		t.Errorf("pooled noise limit %+v, the datasets' give %d transfers, %.6f / %.6f", nl, n, within/float64(n), abs/float64(n))
	}
	if lb.Ranking[len(lb.Ranking)-1].Model != "hockney" {
		t.Errorf("last %s, want hockney (no contention at all)", lb.Ranking[len(lb.Ranking)-1].Model)
	}
	var buf bytes.Buffer
	if err := lb.WriteText(&buf); err != nil || !strings.Contains(buf.String(), "noise limit ≤ 10%") || !strings.Contains(buf.String(), "in sample ≤ 10%") {
		t.Errorf("text: %v\n%s", err, buf.String())
	}
	// The Markdown tables: three, each a header, a separator of as many columns, and rows of
	// as many cells; one row per ranked model and the noise limit's, per cross-validation
	// score, per entry.
	buf.Reset()
	if err := lb.WriteMarkdown(&buf); err != nil {
		t.Fatal(err)
	}
	borders := func(l string) int { return strings.Count(l, "|") - strings.Count(l, `\|`) }
	var tables [][]string
	for _, block := range strings.Split(buf.String(), "\n\n") {
		if lines := strings.Split(strings.TrimSpace(block), "\n"); strings.HasPrefix(lines[0], "| ") {
			tables = append(tables, lines)
		}
	}
	cv := 0
	for _, d := range lb.CrossValidation {
		cv += len(d.Scores)
	}
	if want := []int{len(lb.Ranking) + 1, cv, len(lb.Entries)}; len(tables) != 3 {
		t.Fatalf("%d Markdown tables, want 3 of %v rows:\n%s", len(tables), want, buf.String())
	} else {
		for i, tb := range tables {
			cols := borders(tb[0])
			if len(tb) != want[i]+2 || tb[1] != "|"+strings.Repeat("---|", cols-1) {
				t.Errorf("table %d: %d lines (want %d), separator %q", i, len(tb), want[i]+2, tb[1])
			}
			for _, l := range tb[2:] {
				if borders(l) != cols {
					t.Errorf("table %d: row %q has another number of cells", i, l)
				}
			}
		}
	}
	if lb.Selected == "" || !strings.Contains(buf.String(), "selected by cross-validation: "+lb.Selected) {
		t.Errorf("no selected model in\n%s", buf.String())
	}
}

// leaderboardSubset are the committed datasets make test scores, one of each cluster shape:
// their tables in LEADERBOARD.md are checked on every run, the whole file by make leaderboard.
var leaderboardSubset = []string{"two-rack-1g-seed2", "two-rack-100m", "three-rack-1g-heldout12"}

// TestCommittedLeaderboardSubset scores leaderboardSubset and wants each of their tables' rows
// (a dataset's cross-validation rows, and its rows per setting) in LEADERBOARD.md as they are:
// a dataset's rows depend on that dataset alone, so a change that moves a number of any of
// them is caught in minutes, without every committed dataset.
func TestCommittedLeaderboardSubset(t *testing.T) {
	if testing.Short() {
		t.Skip("calibrates and scores three committed TCP datasets; not with -short")
	}
	doc, err := os.ReadFile(filepath.Join("..", "data", "tcp", "LEADERBOARD.md"))
	if err != nil {
		t.Fatal(err)
	}
	ix, err := campaigns.LoadCommitted("..")
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, name := range leaderboardSubset {
		c, err := ix.Find(name)
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, c.Path)
	}
	lb, err := BuildLeaderboard(context.Background(), paths, datasets.Open, contention.DefaultParams(), experiments.WithRole(experiments.HeldOut), false, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	if err := lb.WriteMarkdown(&got); err != nil {
		t.Fatal(err)
	}
	blocks := datasetRows(got.String(), leaderboardSubset)
	if len(blocks) < 2*len(leaderboardSubset) {
		t.Fatalf("%d blocks of rows for %d datasets in\n%s", len(blocks), len(leaderboardSubset), got.String())
	}
	for _, b := range blocks {
		if !bytes.Contains(doc, []byte(b)) {
			t.Errorf("LEADERBOARD.md does not hold these rows as scored now (regenerate it with make leaderboard's command):\n%s", b)
		}
	}
}

// datasetRows are the blocks of rows of a leaderboard's tables that belong to one dataset: a
// row whose first cell names one of the datasets, with the rows after it whose first cell is
// empty.
func datasetRows(markdown string, names []string) []string {
	var blocks []string
	lines := strings.Split(markdown, "\n")
	for i := 0; i < len(lines); i++ {
		first, _, _ := strings.Cut(strings.TrimPrefix(lines[i], "| "), " ")
		if !strings.HasPrefix(lines[i], "| ") || !slices.Contains(names, first) {
			continue
		}
		j := i + 1
		for j < len(lines) && strings.HasPrefix(lines[j], "|  |") {
			j++
		}
		blocks = append(blocks, strings.Join(lines[i:j], "\n")+"\n")
		i = j - 1
	}
	return blocks
}

// TestCommittedLeaderboard regenerates the tables of data/tcp/LEADERBOARD.md from the committed
// TCP datasets of the index (data/tcp/campaigns.toml), in its order, the command its header
// names, and wants the file to end with exactly them: a change to a model, an estimator or a
// dataset that moves a number there comes with the regenerated file. It runs with
// COMMCAL_LEADERBOARD=full (make leaderboard, which CI runs too): minutes on two cores for
// every committed dataset (docs/performance.md); make test checks a subset
// (TestCommittedLeaderboardSubset).
func TestCommittedLeaderboard(t *testing.T) {
	if os.Getenv("COMMCAL_LEADERBOARD") != "full" {
		t.Skip("the whole leaderboard runs with make leaderboard (COMMCAL_LEADERBOARD=full)")
	}
	doc, err := os.ReadFile(filepath.Join("..", "data", "tcp", "LEADERBOARD.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(doc, []byte("`commcal leaderboard --markdown --index data/tcp/campaigns.toml`")) {
		t.Fatal("LEADERBOARD.md does not name the command that regenerates it, `commcal leaderboard --markdown --index data/tcp/campaigns.toml`")
	}
	ix, err := campaigns.LoadCommitted("..")
	if err != nil {
		t.Fatal(err)
	}
	lb, err := BuildLeaderboard(context.Background(), ix.Paths(), datasets.Open, contention.DefaultParams(), experiments.WithRole(experiments.HeldOut), false, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The reports' default model is the one this cross-validation selects (the default is a
	// constant, chosen once; a change of the selection must change it too).
	if lb.Selected != contention.DefaultModel {
		t.Errorf("cross-validation selects %s, the default model is %s", lb.Selected, contention.DefaultModel)
	}
	var got bytes.Buffer
	if err := lb.WriteMarkdown(&got); err != nil {
		t.Fatal(err)
	}
	if !bytes.HasSuffix(doc, got.Bytes()) {
		// The first line that differs, counting from the ranking's first line in both.
		file, now := string(doc), got.String()
		file = file[max(strings.Index(file, "| rank"), 0):]
		fl, nl := strings.Split(file, "\n"), strings.Split(now, "\n")
		i := 0
		for i < min(len(fl), len(nl)) && fl[i] == nl[i] {
			i++
		}
		at := func(l []string) string {
			if i < len(l) {
				return l[i]
			}
			return "(end)"
		}
		t.Fatalf("LEADERBOARD.md is not what the index's datasets give; first difference, line %d of the tables:\n file: %q\n  now: %q\n(regenerate it with `commcal leaderboard --markdown --index data/tcp/campaigns.toml`, keeping the header)",
			i+1, at(fl), at(nl))
	}
}
