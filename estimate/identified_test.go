package estimate_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/contention"
	"github.com/commcal/commcal/datasets"
	"github.com/commcal/commcal/datasets/campaigns"
	"github.com/commcal/commcal/estimate"
	"github.com/commcal/commcal/pipeline"
	"github.com/commcal/commcal/rundir"
)

// walkSubset are the committed TCP datasets walked by default: those of the leaderboard's
// subset test, one of each cluster shape. COMMCAL_LEADERBOARD=full walks every one.
var walkSubset = []string{"two-rack-1g-seed2", "two-rack-100m", "three-rack-1g-heldout12"}

// TestNoParameterReportedAsFittedUnidentified calibrates every dataset the project holds — the
// built-in sample, the committed TCP datasets (a subset unless COMMCAL_LEADERBOARD=full) and
// every dataset the test data ingest to (the benchmark outputs of datasets/testdata, the
// graphene ping-pong, and the real outputs of the shared formats directory when it is there)
// — and walks each calibration: every estimate.Param it holds, found by reflection, must be
// named by Calibration.Estimates, and every one not listed in NotIdentified must have a finite
// value and a finite interval, a rate (a key ending _bps) at most the line rate of the
// cluster's fastest resource + RateMargin, and a Hockney β a positive slope whose rate 8/β is
// at most the fastest NIC's; φ, when used, must not have the interval [0, 1]; and the
// contention parameters the models use must be finite and within their resources' line
// rates, and no latency longer than the smallest message's whole time. The learned models' fits are walked too.
func TestNoParameterReportedAsFittedUnidentified(t *testing.T) {
	if testing.Short() {
		t.Skip("calibrates the sample, three committed TCP datasets and the test data; not with -short")
	}
	ctx := context.Background()
	walk := func(t *testing.T, ds *datasets.Dataset) {
		in, err := rundir.LoadTables(ctx, ds)
		if err != nil {
			t.Fatal(err)
		}
		in.HockneyBreaks = ds.Manifest.HockneyBreaks
		cal, err := estimate.Calibrate(ctx, ds.Cluster, in, contention.DefaultParams(), false)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range walkCalibration(ds.Cluster, cal) {
			if strings.HasPrefix(f, "learned/ackpath-alpha/alpha: ") && strings.Contains(f, "+Inf]") {
				// α's interval may reach max-min (α = ∞), its limit, where the patterns
				// bound α from below only; it is kept with that interval shown. Any other
				// failure of α fails.
				t.Logf("kept with an interval up to max-min: %s", f)
				continue
			}
			t.Error(f)
		}
	}

	t.Run("sample", func(t *testing.T) {
		cl, srcs, err := pipeline.Sample()
		if err != nil {
			t.Fatal(err)
		}
		walk(t, ingest(t, cl, srcs))
	})

	ix, err := campaigns.LoadCommitted("..")
	if err != nil {
		t.Fatal(err)
	}
	names := walkSubset
	if os.Getenv("COMMCAL_LEADERBOARD") == "full" {
		names = nil
		for _, c := range ix.Campaigns {
			names = append(names, c.Name)
		}
	}
	for _, name := range names {
		t.Run("tcp/"+name, func(t *testing.T) {
			c, err := ix.Find(name)
			if err != nil {
				t.Fatal(err)
			}
			ds, err := datasets.Open(c.Path)
			if err != nil {
				t.Fatal(err)
			}
			walk(t, ds)
		})
	}

	testbed, err := cluster.LoadNamed("ccpe-testbed")
	if err != nil {
		t.Fatal(err)
	}
	bench := filepath.Join("..", "datasets", "testdata", "benchmarks")
	entries, err := os.ReadDir(bench)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() == "README.md" {
			continue
		}
		t.Run("testdata/"+e.Name(), func(t *testing.T) {
			srcs, err := datasets.ExpandSources([]string{filepath.Join(bench, e.Name())}, datasets.Source{Src: "X1", Dst: "Y1"})
			if err != nil {
				t.Fatal(err)
			}
			if ds := ingestOrRefused(t, testbed, srcs); ds != nil {
				walk(t, ds)
			}
		})
	}
	t.Run("testdata/graphene_eth", func(t *testing.T) {
		cl, err := cluster.LoadNamed("graphene")
		if err != nil {
			t.Fatal(err)
		}
		walk(t, ingest(t, cl, []datasets.Source{{Path: filepath.Join("..", "datasets", "testdata", "graphene_eth", "graphene_eth_PingPong.csv"),
			Src: "graphene-1", Dst: "graphene-2"}}))
	})

	for _, name := range []string{"miriel", "plafrim"} {
		t.Run("saturation/"+name, func(t *testing.T) {
			dir := filepath.Join("..", "data", "saturation")
			cl, err := cluster.Load(filepath.Join(dir, name+".toml"))
			if err != nil {
				t.Fatal(err)
			}
			ranks := readRanks(t, filepath.Join(dir, name+".ranks"))
			files, _ := filepath.Glob(filepath.Join(dir, name+"_*", "load_*.csv"))
			srcs, err := datasets.ExpandSources(files, datasets.Source{Format: datasets.FormatSaturation, Ranks: ranks})
			if err != nil {
				t.Fatal(err)
			}
			walk(t, ingest(t, cl, srcs))
		})
	}

	formats := filepath.Join("..", "..", "shared", "data", "formats")
	if lab, err := cluster.Load(filepath.Join(formats, "lab.toml")); err != nil {
		t.Logf("the shared benchmark outputs are not walked: %v", err)
	} else {
		// Every file is a source, but SimGrid's calibration directory is one.
		var paths []string
		dirs, _ := filepath.Glob(filepath.Join(formats, "*"))
		for _, d := range dirs {
			if st, err := os.Stat(d); err != nil || !st.IsDir() {
				continue
			}
			if filepath.Base(d) == "simgrid_calibration" {
				paths = append(paths, d)
				continue
			}
			files, _ := filepath.Glob(filepath.Join(d, "*"))
			paths = append(paths, files...)
		}
		for _, path := range paths {
			rel, _ := filepath.Rel(formats, path)
			t.Run("formats/"+rel, func(t *testing.T) {
				srcs, err := datasets.ExpandSources([]string{path}, datasets.Source{Src: "a", Dst: "b"})
				if err != nil {
					t.Fatal(err)
				}
				if ds := ingestOrRefused(t, lab, srcs); ds != nil {
					walk(t, ds)
				}
			})
		}
	}
}

// readRanks reads a ranks file: one node per line, # comments and blank lines skipped.
func readRanks(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var ranks []string
	for l := range strings.Lines(string(b)) {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			ranks = append(ranks, l)
		}
	}
	return ranks
}

// ingest ingests sources into a temporary dataset and opens it.
func ingest(t *testing.T, cl *cluster.Cluster, srcs []datasets.Source) *datasets.Dataset {
	t.Helper()
	ds := ingestOrRefused(t, cl, srcs)
	if ds == nil {
		t.Fatal("refused")
	}
	return ds
}

// ingestOrRefused ingests sources into a temporary dataset and opens it, or logs the refusal
// of input that commcal refuses as bad input and returns nil.
func ingestOrRefused(t *testing.T, cl *cluster.Cluster, srcs []datasets.Source) *datasets.Dataset {
	t.Helper()
	out := filepath.Join(t.TempDir(), "ds")
	if _, err := datasets.Ingest(context.Background(), datasets.IngestOptions{Cluster: cl, Sources: srcs, Out: out, Created: time.Unix(0, 0)}); err != nil {
		t.Logf("not ingested, nothing to walk: %v", err)
		return nil
	}
	ds, err := datasets.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

// walkCalibration lists what is wrong with a calibration (TestNoParameterReportedAsFittedUnidentified).
func walkCalibration(cl *cluster.Cluster, cal *estimate.Calibration) []string {
	var out []string
	bad := func(format string, a ...any) { out = append(out, fmt.Sprintf(format, a...)) }
	var nic, core float64
	for _, r := range cl.Resources() {
		if r.Kind == cluster.NICOut || r.Kind == cluster.NICIn {
			nic = max(nic, r.RateBps)
		} else {
			core = max(core, r.RateBps)
		}
	}
	fastest := max(nic, core)
	limit := func(nominal float64) float64 { return nominal * (1 + estimate.RateMargin) }

	// Every Param of the calibration has a name: the reflection's and Estimates' multisets
	// of values agree.
	found := map[[4]uint64]string{}
	count := map[[4]uint64]int{}
	reflectParams(reflect.ValueOf(cal).Elem(), "calibration", func(path string, p estimate.Param) {
		count[bits(p)]++
		found[bits(p)] = path
	})
	named := cal.Estimates()
	byBits := map[[4]uint64]string{}
	for _, e := range named {
		count[bits(e.Param)]--
		byBits[bits(e.Param)] = e.Name
	}
	for k, n := range count {
		switch {
		case n > 0:
			bad("%s: an estimate Calibration.Estimates does not name", found[k])
		case n < 0:
			bad("%s: named by Calibration.Estimates but not held by the calibration", byBits[k])
		}
	}

	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	for _, e := range named {
		if !cal.Identified(e.Name) {
			continue
		}
		p := e.Param
		switch {
		case !finite(p.Value) || !finite(p.CILow) || !finite(p.CIHigh):
			bad("%s: reported as fitted with %g [%g, %g]", e.Name, p.Value, p.CILow, p.CIHigh)
			continue
		case strings.HasSuffix(e.Name, "_bps") && p.Value > limit(fastest):
			bad("%s: %.4g Gbit/s, above the fastest line rate %.4g Gbit/s", e.Name, p.Value/1e9, fastest/1e9)
		case (strings.HasPrefix(e.Name, "hockney/") || strings.HasPrefix(e.Name, "hockney-segments/")) && strings.HasSuffix(e.Name, "/beta_s_per_byte") &&
			(!(p.Value > 0) || !(p.CILow > 0) || 8/p.Value > limit(nic)):
			bad("%s: β %.4g s/B [%.4g, %.4g] used as a rate (fastest NIC %.4g Gbit/s)", e.Name, p.Value, p.CILow, p.CIHigh, nic/1e9)
		}
	}
	for _, h := range cal.Hockney {
		if name := "hockney/" + string(h.Class) + "/alpha_s"; cal.Identified(name) && h.Alpha.Value > h.SmallestSeconds {
			bad("%s: latency %.4g s used, longer than the %.4g s a whole %.0f B message took", name, h.Alpha.Value, h.SmallestSeconds, h.SmallestBytes)
		}
		if l := cal.Params.LatencyS[h.Class]; l > h.SmallestSeconds {
			bad("params.latency_s[%s]: %.4g s, longer than the %.4g s a whole %.0f B message took", h.Class, l, h.SmallestSeconds, h.SmallestBytes)
		}
	}
	if c := cal.Contra; c != nil && cal.Identified("contra/phi") {
		if !finite(c.Phi) || c.CILow <= 0 && c.CIHigh >= 1 {
			bad("contra/phi: %g [%g, %g] used", c.Phi, c.CILow, c.CIHigh)
		}
		if cal.Params.ContraFactor != c.Phi {
			bad("contra/phi: fitted %g, the models use %g", c.Phi, cal.Params.ContraFactor)
		}
	}

	p := cal.Params
	for _, r := range []struct {
		key     string
		v       float64
		nominal float64
	}{{"params.ceiling_bps", p.CeilingBps, nic}, {"params.nic_bps", p.NICBps, nic}, {"params.backbone_bps", p.BackboneBps, core}} {
		if !finite(r.v) || r.v < 0 || r.v > limit(r.nominal) {
			bad("%s: %.4g Gbit/s (line rate %.4g Gbit/s)", r.key, r.v/1e9, r.nominal/1e9)
		}
	}
	for _, class := range slices.Sorted(func(yield func(cluster.PathClass) bool) {
		for k := range p.InverseBandwidth {
			if !yield(k) {
				return
			}
		}
	}) {
		if b := p.InverseBandwidth[class]; !finite(b) || !(b > 0) || 8/b > limit(nic) {
			bad("params.inverse_bandwidth_s_per_byte.%s: %g s/B (fastest NIC %.4g Gbit/s)", class, b, nic/1e9)
		}
	}
	for class, a := range p.LatencyS {
		if !finite(a) || a < 0 {
			bad("params.latency_s.%s: %g s", class, a)
		}
	}
	if a := p.PenaltyAlpha; a != 0 && (!finite(a) || a < 0 || 8/a > limit(nic)) {
		bad("params.penalty_alpha_s_per_byte: %g s/B", a)
	}
	for name, lp := range p.Learned {
		for _, r := range []struct {
			key string
			v   float64
		}{{"ceiling_bps", lp.CeilingBps}, {"nic_bps", lp.NICBps}, {"backbone_bps", lp.BackboneBps}} {
			if !finite(r.v) || r.v > limit(fastest) {
				bad("params.learned.%s.%s: %.4g Gbit/s", name, r.key, r.v/1e9)
			}
		}
	}
	slices.Sort(out)
	return out
}

var paramType = reflect.TypeFor[estimate.Param]()

// reflectParams calls found for every estimate.Param inside v, with its path.
func reflectParams(v reflect.Value, path string, found func(string, estimate.Param)) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			reflectParams(v.Elem(), path, found)
		}
	case reflect.Struct:
		if v.Type() == paramType {
			found(path, v.Interface().(estimate.Param))
			return
		}
		for i := range v.NumField() {
			if f := v.Type().Field(i); f.IsExported() {
				reflectParams(v.Field(i), path+"."+f.Name, found)
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			reflectParams(v.Index(i), fmt.Sprintf("%s[%d]", path, i), found)
		}
	case reflect.Map:
		iter := v.MapRange()
		for iter.Next() {
			reflectParams(iter.Value(), fmt.Sprintf("%s[%v]", path, iter.Key()), found)
		}
	}
}

// bits is a Param's identity for the multiset comparison (NaN equal to itself).
func bits(p estimate.Param) [4]uint64 {
	return [4]uint64{math.Float64bits(p.Value), math.Float64bits(p.CILow), math.Float64bits(p.CIHigh), uint64(p.N)}
}
