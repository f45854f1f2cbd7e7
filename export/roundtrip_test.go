package export

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/contention"
	"github.com/commcal/commcal/estimate"
	"github.com/commcal/commcal/experiments"
)

// roundTripTol is how closely SimGrid's completion times must agree with commcal's maxmin,
// relative. Both compute the same max-min allocation in floating point; SimGrid's solver
// treats rates within maxmin/precision (1e-5, relative) as equal when it saturates a
// constraint, and dates events to surf/precision (1e-9 s, absolute) — on these patterns of
// 10–100 ms transfers that is at most 1e-7 relative. 1e-6 leaves room for both and still
// catches any difference of model (a wrong capacity, route or latency moves times by 1% and
// more). SimGrid's defaults of both precisions are kept: they are what a user gets.
const roundTripTol = 1e-6

// simGridPython finds a Python interpreter with SimGrid's module (Debian's python3-simgrid
// installs it for /usr/bin/python3, which need not be the python3 first on PATH). Without
// one the test skips, naming what is missing — except in CI (CI set), where it fails.
func simGridPython(t *testing.T) string {
	t.Helper()
	var tried []string
	for _, name := range []string{"python3", "/usr/bin/python3"} {
		py, err := exec.LookPath(name)
		if err != nil || slices.Contains(tried, py) {
			continue
		}
		tried = append(tried, py)
		if exec.Command(py, "-c", "import simgrid").Run() == nil {
			return py
		}
	}
	msg := "needs python3 with SimGrid's module (apt-get install python3-simgrid); no python3 found"
	if len(tried) > 0 {
		msg = fmt.Sprintf("needs python3 with SimGrid's module (apt-get install python3-simgrid); %s cannot import simgrid", strings.Join(tried, " and "))
	}
	if os.Getenv("CI") != "" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// simResult is what testdata/simgrid_roundtrip.py prints.
type simResult struct {
	Times  [][]float64 `json:"times"`
	Routes []struct {
		Links   []string
		Latency float64
	} `json:"-"`
	RawRoutes [][2]json.RawMessage `json:"routes"`
}

// simulate runs patterns (and looks up routes) under SimGrid on an exported directory.
func simulate(t *testing.T, py, dir string, cfg []byte, pats [][]contention.Flow, routes [][2]string) simResult {
	t.Helper()
	ps := [][][3]any{}
	for _, p := range pats {
		var fl [][3]any
		for _, f := range p {
			fl = append(fl, [3]any{f.Src, f.Dst, f.Bytes})
		}
		ps = append(ps, fl)
	}
	if routes == nil {
		routes = [][2]string{}
	}
	data, err := json.Marshal(map[string]any{"patterns": ps, "routes": routes})
	if err != nil {
		t.Fatal(err)
	}
	jobFile := filepath.Join(t.TempDir(), "job.json")
	if err := os.WriteFile(jobFile, data, 0o644); err != nil {
		t.Fatal(err)
	}
	args := append([]string{filepath.Join("testdata", "simgrid_roundtrip.py"), filepath.Join(dir, PlatformFile), jobFile},
		strings.Fields(string(cfg))...)
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(py, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("simgrid_roundtrip.py: %v\n%s", err, stderr.String())
	}
	var res simResult
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		t.Fatalf("simgrid_roundtrip.py printed %q: %v", stdout.String(), err)
	}
	for _, r := range res.RawRoutes {
		var links []string
		var lat float64
		if err := json.Unmarshal(r[0], &links); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(r[1], &lat); err != nil {
			t.Fatal(err)
		}
		res.Routes = append(res.Routes, struct {
			Links   []string
			Latency float64
		}{links, lat})
	}
	if len(res.Times) != len(pats) {
		t.Fatalf("SimGrid simulated %d patterns, want %d", len(res.Times), len(pats))
	}
	return res
}

// roundTripCase is a cluster, its calibration and the patterns simulated on it.
type roundTripCase struct {
	name   string
	desc   cluster.Description
	params contention.Params
	random experiments.RandomSpec
	// hand are patterns that share NICs, the backbone and the uplinks both ways.
	hand [][]contention.Flow
}

func flows(spec ...any) []contention.Flow {
	var out []contention.Flow
	for i := 0; i < len(spec); i += 3 {
		out = append(out, contention.Flow{Src: spec[i].(string), Dst: spec[i+1].(string), Bytes: spec[i+2].(float64)})
	}
	return out
}

func roundTripCases() []roundTripCase {
	lat := map[cluster.PathClass]float64{cluster.IntraRack: 5e-5, cluster.InterRack: 8e-5}
	return []roundTripCase{{
		name: "two racks and a backbone cable",
		desc: cluster.Description{Name: "tworack", NICRateBps: 1e9,
			Backbone: &cluster.Backbone{Topology: cluster.TopologyCable, Kind: cluster.KindElectrical, RateBps: 2e9},
			Racks:    []cluster.Rack{{Name: "a", NodePrefix: "a", NodeFirst: 1, NodeCount: 4}, {Name: "b", NodePrefix: "b", NodeFirst: 1, NodeCount: 4}}},
		params: contention.Params{Efficiency: 0.94, ContraFactor: 1, LatencyS: lat},
		random: experiments.RandomSpec{Nodes: 8, D: 2, Sizes: []int64{1_000_000, 4_000_000, 10_000_000}},
		hand: [][]contention.Flow{
			// One NIC both ways: a1 sends two, receives three.
			flows("a1", "a2", 4e6, "a1", "b1", 6e6, "a2", "a1", 5e6, "b2", "a1", 3e6, "a3", "a1", 2e6),
			// The backbone both ways: four flows a→b saturate its 1.88 Gbit/s, two come back.
			flows("a1", "b1", 1e7, "a2", "b2", 1e7, "a3", "b3", 8e6, "a4", "b4", 6e6, "b1", "a2", 5e6, "b2", "a3", 7e6),
			// An incast from both racks.
			flows("a2", "a1", 3e6, "a3", "a1", 3e6, "a4", "a1", 4e6, "b1", "a1", 5e6, "b2", "a1", 2e6),
			// One path class each: intra-rack only, inter-rack only.
			flows("a1", "a2", 4e6, "a2", "a3", 3e6, "a3", "a1", 5e6, "a1", "a4", 2e6, "b1", "b2", 6e6, "b2", "b1", 1e6),
			flows("a1", "b1", 4e6, "a1", "b2", 3e6, "a2", "b1", 5e6, "b3", "a3", 2e6, "b4", "a3", 6e6, "a4", "b4", 1e6),
			// Lone transfers.
			flows("a1", "a2", 3e6), flows("b3", "a2", 3e6),
		},
	}, {
		name: "a tree: three racks with uplinks to a core, a slow NIC, a per-flow ceiling",
		desc: cluster.Description{Name: "tree", NICRateBps: 1e9,
			Backbone: &cluster.Backbone{Topology: cluster.TopologyCore, Kind: cluster.KindOptical, RateBps: 2e9},
			Racks: []cluster.Rack{{Name: "r1", NodePrefix: "n", NodeFirst: 1, NodeCount: 3, UplinkRateBps: 1.5e9},
				{Name: "r2", NodePrefix: "n", NodeFirst: 4, NodeCount: 3}, {Name: "r3", NodePrefix: "n", NodeFirst: 7, NodeCount: 3, UplinkRateBps: 1e9}},
			Node: []cluster.NodeSettings{{Name: "n5", NICRateBps: 5e8}}},
		params: contention.Params{Efficiency: 0.94, ContraFactor: 1, CeilingBps: 8e8, LatencyS: lat},
		random: experiments.RandomSpec{Nodes: 9, D: 2, Racks: 3, Sizes: []int64{1_000_000, 4_000_000, 10_000_000}},
		hand: [][]contention.Flow{
			// r3's uplink both ways (0.94 Gbit/s), r1's up.
			flows("n7", "n1", 8e6, "n8", "n4", 6e6, "n9", "n2", 5e6, "n1", "n7", 4e6, "n4", "n8", 7e6, "n2", "n9", 3e6),
			// The slow NIC both ways, and the ceiling on every other route.
			flows("n5", "n1", 4e6, "n5", "n7", 3e6, "n2", "n5", 2e6, "n8", "n5", 5e6, "n3", "n6", 6e6),
			flows("n1", "n2", 4e6, "n2", "n3", 3e6, "n3", "n1", 5e6),
			flows("n1", "n4", 4e6, "n2", "n7", 3e6, "n4", "n8", 5e6, "n9", "n1", 2e6),
			flows("n1", "n2", 3e6), flows("n6", "n9", 3e6),
		},
	}}
}

// singleClass reports whether every transfer of a pattern has the same path class.
func singleClass(cl *cluster.Cluster, p []contention.Flow) bool {
	first, _ := cl.Class(p[0].Src, p[0].Dst)
	for _, f := range p[1:] {
		if c, _ := cl.Class(f.Src, f.Dst); c != first {
			return false
		}
	}
	return true
}

// expectedLinks is the SimGrid route of cluster.Path: each directed resource as its link's
// direction.
func expectedLinks(cl *cluster.Cluster, src, dst string) []string {
	path, _ := cl.Path(src, dst)
	var out []string
	for _, id := range path {
		r := cl.Resources()[id]
		switch r.Kind {
		case cluster.NICOut:
			out = append(out, "nic-"+r.Owner+"_UP")
		case cluster.NICIn:
			out = append(out, "nic-"+r.Owner+"_DOWN")
		case cluster.UplinkUp:
			out = append(out, "uplink-"+r.Owner+"_UP")
		case cluster.UplinkDown:
			out = append(out, "uplink-"+r.Owner+"_DOWN")
		case cluster.BackboneAB:
			out = append(out, "backbone_UP")
		case cluster.BackboneBA:
			out = append(out, "backbone_DOWN")
		}
	}
	return out
}

// TestSimGridRoundTrip exports platforms, simulates patterns on them with the real SimGrid,
// and compares with commcal's maxmin on the same patterns and rates:
//
//   - routes: for every ordered pair of hosts, SimGrid's route crosses the links of
//     cluster.Path in order (the flow-ceiling link once where there is one) and has the
//     path class's latency;
//   - --latency none under maxmin.cfg: every pattern (random ones from
//     experiments.RandomPatterns, hand-made ones sharing NICs, backbone and uplinks both ways)
//     agrees with maxmin without latencies within roundTripTol;
//   - Hockney latencies under maxmin.cfg: every pattern of one path class agrees with maxmin
//     plus α (CM02 weights sharing by route latency, so mixed patterns are only reported);
//   - smpi.cfg: lone transfers on the reference route take α_k + β_k·m of their segment.
func TestSimGridRoundTrip(t *testing.T) {
	py := simGridPython(t)
	segs := []estimate.SegmentedHockney{{Class: cluster.IntraRack, Source: "p2p_sweep", Breaks: []float64{1420, 65536}, BreaksFrom: "given",
		Segments: []estimate.HockneySegment{
			{FromBytes: 1, ToBytes: 1400, Alpha: estimate.Param{Value: 3e-5}, Beta: estimate.Param{Value: 1.2e-8}},
			{FromBytes: 1420, ToBytes: 65000, Alpha: estimate.Param{Value: 6e-5}, Beta: estimate.Param{Value: 9.5e-9}},
			{FromBytes: 65536, ToBytes: 1e8, Alpha: estimate.Param{Value: 1.5e-4}, Beta: estimate.Param{Value: 8.6e-9}},
		}}}
	worst := map[string]float64{}
	counts := map[string]int{}
	note := func(part string, got, want float64) float64 {
		d := math.Abs(got-want) / want
		worst[part] = max(worst[part], d)
		counts[part]++
		return d
	}
	for ci, tc := range roundTripCases() {
		cl, err := cluster.New(tc.desc)
		if err != nil {
			t.Fatal(err)
		}
		randoms, err := experiments.RandomPatterns(cl, tc.random, 12, uint64(11+ci))
		if err != nil {
			t.Fatal(err)
		}
		pats := slices.Clone(tc.hand)
		for _, p := range randoms {
			pats = append(pats, p.Flows)
		}
		cal := &estimate.Calibration{Cluster: cl.Name(), Params: tc.params, HockneySegments: segs}
		export := func(mode string) string {
			s, err := BuildSimGrid(cl, cal, SimGridOptions{Latency: mode})
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			if err := s.WriteDir(dir); err != nil {
				t.Fatal(err)
			}
			if tc.params.CeilingBps > 0 && s.Summary.CeilingBytesPerS != tc.params.CeilingBps/8 {
				t.Fatalf("%s: ceiling link %g B/s, want %g", tc.name, s.Summary.CeilingBytesPerS, tc.params.CeilingBps/8)
			}
			return dir
		}
		predict := func(p contention.Params, pat []contention.Flow) []float64 {
			net, err := p.Network(cl)
			if err != nil {
				t.Fatal(err)
			}
			pred, err := contention.MaxMin{}.Predict(context.Background(), net, pat)
			if err != nil {
				t.Fatal(err)
			}
			return pred.Times
		}
		maxminCfg := cfgLines(MaxMinConfig)

		// Routes and plain max-min, without latencies.
		dir := export(LatencyNone)
		var pairs [][2]string
		for _, a := range cl.Nodes() {
			for _, b := range cl.Nodes() {
				if a.Name != b.Name {
					pairs = append(pairs, [2]string{a.Name, b.Name})
				}
			}
		}
		res := simulate(t, py, dir, maxminCfg, pats, pairs)
		for i, pr := range pairs {
			got := res.Routes[i].Links
			ceil := 0
			got = slices.DeleteFunc(slices.Clone(got), func(l string) bool {
				if l == CeilingLink {
					ceil++
					return true
				}
				return false
			})
			wantCeil := 0
			if tc.params.CeilingBps > 0 {
				wantCeil = 1
			}
			if want := expectedLinks(cl, pr[0], pr[1]); !slices.Equal(got, want) || ceil != wantCeil {
				t.Errorf("%s: SimGrid route %s → %s crosses %v (flow-ceiling %d times), commcal's path %v (flow-ceiling %d)",
					tc.name, pr[0], pr[1], res.Routes[i].Links, ceil, want, wantCeil)
			}
			if res.Routes[i].Latency != 0 {
				t.Errorf("%s: route %s → %s has latency %g with --latency none", tc.name, pr[0], pr[1], res.Routes[i].Latency)
			}
		}
		noLat := tc.params
		noLat.LatencyS = nil
		for pi, pat := range pats {
			want := predict(noLat, pat)
			for fi, got := range res.Times[pi] {
				if d := note("no latency, every pattern", got, want[fi]); d > roundTripTol {
					t.Errorf("%s, pattern %d transfer %d (%s → %s, %g B): SimGrid %.12g s, commcal maxmin %.12g s (relative difference %.2g)",
						tc.name, pi, fi, pat[fi].Src, pat[fi].Dst, pat[fi].Bytes, got, want[fi], d)
				}
			}
		}

		// Hockney latencies.
		dir = export(LatencyHockney)
		res = simulate(t, py, dir, maxminCfg, pats, pairs)
		for i, pr := range pairs {
			class, _ := cl.Class(pr[0], pr[1])
			if want := tc.params.LatencyS[class]; math.Abs(res.Routes[i].Latency-want) > 1e-15 {
				t.Errorf("%s: route %s → %s (%s) has latency %g s, want α = %g s", tc.name, pr[0], pr[1], class, res.Routes[i].Latency, want)
			}
		}
		for pi, pat := range pats {
			want := predict(tc.params, pat)
			for fi, got := range res.Times[pi] {
				if !singleClass(cl, pat) {
					note("latencies, mixed classes (RTT-weighted, not asserted)", got, want[fi])
					continue
				}
				if d := note("latencies, one path class", got, want[fi]); d > roundTripTol {
					t.Errorf("%s, pattern %d transfer %d (%s → %s, %g B): SimGrid %.12g s, commcal maxmin + α %.12g s (relative difference %.2g)",
						tc.name, pi, fi, pat[fi].Src, pat[fi].Dst, pat[fi].Bytes, got, want[fi], d)
				}
			}
		}

		// SMPI's factors: lone transfers on the reference route, sizes across the segments.
		s, err := BuildSimGrid(cl, cal, SimGridOptions{})
		if err != nil {
			t.Fatal(err)
		}
		sm := s.Summary.SMPI
		var lone [][]contention.Flow
		sizes := []float64{100, 1000, 1419, 1420, 5000, 65535, 65536, 1e6, 1e7}
		for _, m := range sizes {
			lone = append(lone, []contention.Flow{{Src: sm.RefSrc, Dst: sm.RefDst, Bytes: m}})
		}
		res = simulate(t, py, dir, s.SMPICfg, lone, nil)
		for i, m := range sizes {
			k, _ := slices.BinarySearch(segs[0].Breaks, m)
			if k < len(segs[0].Breaks) && segs[0].Breaks[k] == m {
				k++
			}
			want := segs[0].Segments[k].Alpha.Value + segs[0].Segments[k].Beta.Value*m
			if d := note("smpi.cfg, lone transfers", res.Times[i][0], want); d > roundTripTol {
				t.Errorf("%s: SMPI lone transfer of %g B on %s → %s: %.12g s, segment %d's α + β·m = %.12g s (relative difference %.2g)",
					tc.name, m, sm.RefSrc, sm.RefDst, res.Times[i][0], k+1, want, d)
			}
		}
	}
	parts := make([]string, 0, len(worst))
	for p := range worst {
		parts = append(parts, p)
	}
	slices.Sort(parts)
	for _, p := range parts {
		t.Logf("%-55s %4d transfers, largest relative difference %.3g", p+":", counts[p], worst[p])
	}
	if worst["latencies, mixed classes (RTT-weighted, not asserted)"] < 1e-3 {
		t.Errorf("mixed-class patterns under Hockney latencies agree with maxmin to %.2g: CM02 should weight them by route latency, as the export's documentation says",
			worst["latencies, mixed classes (RTT-weighted, not asserted)"])
	}
}
