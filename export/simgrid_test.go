package export

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/contention"
	"github.com/commcal/commcal/estimate"
	"github.com/commcal/commcal/internal/badinput"
)

func build(t *testing.T, desc cluster.Description, p contention.Params, segs []estimate.SegmentedHockney, hockney []estimate.HockneyFit, mode string) (*cluster.Cluster, *SimGrid) {
	t.Helper()
	cl, err := cluster.New(desc)
	if err != nil {
		t.Fatal(err)
	}
	s, err := BuildSimGrid(cl, &estimate.Calibration{Cluster: cl.Name(), Params: p, HockneySegments: segs, Hockney: hockney}, SimGridOptions{Latency: mode})
	if err != nil {
		t.Fatal(err)
	}
	return cl, s
}

func link(t *testing.T, s *SimGrid, id string) LinkSummary {
	t.Helper()
	for _, l := range s.Summary.Links {
		if l.ID == id {
			return l
		}
	}
	t.Fatalf("no link %s among %v", id, s.Summary.Links)
	return LinkSummary{}
}

// TestLatencySplit checks the split of Hockney's α over the links (closed form: NIC α_intra/2,
// cable α_inter − α_intra, uplink (α_inter − α_intra)/2) and the clamp when α_inter < α_intra.
func TestLatencySplit(t *testing.T) {
	tc := roundTripCases()
	for _, c := range []struct {
		name          string
		desc          cluster.Description
		intra, inter  float64
		nic, bb       string
		wantNIC, want float64 // the NIC's and the backbone link's latency
		warn          bool
	}{
		{"cable", tc[0].desc, 5e-5, 8e-5, "nic-a1", "backbone", 2.5e-5, 3e-5, false},
		{"core", tc[1].desc, 5e-5, 8e-5, "nic-n1", "uplink-r2", 2.5e-5, 1.5e-5, false},
		{"inter below intra", tc[0].desc, 9e-5, 8e-5, "nic-b4", "backbone", 4.5e-5, 0, true},
		{"inter only", tc[0].desc, 0, 8e-5, "nic-a1", "backbone", 0, 8e-5, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			lat := map[cluster.PathClass]float64{cluster.InterRack: c.inter}
			if c.intra > 0 {
				lat[cluster.IntraRack] = c.intra
			}
			_, s := build(t, c.desc, contention.Params{Efficiency: 0.94, LatencyS: lat}, nil, nil, LatencyHockney)
			if got := link(t, s, c.nic).LatencyS; !scalar.EqualWithinAbsOrRel(got, c.wantNIC, 1e-18, 1e-12) {
				t.Errorf("%s latency %g, want %g", c.nic, got, c.wantNIC)
			}
			if got := link(t, s, c.bb).LatencyS; !scalar.EqualWithinAbsOrRel(got, c.want, 1e-18, 1e-12) {
				t.Errorf("%s latency %g, want %g", c.bb, got, c.want)
			}
			if got := len(s.Summary.Warnings) > 0 && strings.Contains(strings.Join(s.Summary.Warnings, "\n"), "below intra-rack"); got != c.warn {
				t.Errorf("warnings %q, want some: %v", s.Summary.Warnings, c.warn)
			}
			_, none := build(t, c.desc, contention.Params{Efficiency: 0.94, LatencyS: lat}, nil, nil, LatencyNone)
			for _, l := range none.Summary.Links {
				if l.LatencyS != 0 {
					t.Errorf("--latency none: %s has latency %g", l.ID, l.LatencyS)
				}
			}
		})
	}
}

// TestSimGridPlatform checks the platform's content through encoding/xml: capacities
// (0.94 × nominal, or the measured ones), one SPLITDUPLEX link per NIC, the ceiling link,
// routers named apart from hosts, and the same bytes on every run.
func TestSimGridPlatform(t *testing.T) {
	desc := roundTripCases()[1].desc
	desc.Racks[0].Nodes = []string{"switch-r2"} // a host named as a router would be
	p := contention.Params{Efficiency: 0.94, BackboneBps: 1.2e9}
	_, s := build(t, desc, p, nil, nil, "")
	var doc xmlPlatform
	if err := xml.Unmarshal(s.Platform, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Version != "4.1" || doc.Zone.Routing != "DijkstraCache" || len(doc.Zone.Hosts) != 10 {
		t.Fatalf("platform version %q, routing %q, %d hosts", doc.Version, doc.Zone.Routing, len(doc.Zone.Hosts))
	}
	routers := map[string]bool{}
	for _, r := range doc.Zone.Routers {
		routers[r.ID] = true
	}
	if !routers["_switch-r2"] || !routers["core"] || routers["switch-r2"] {
		t.Errorf("routers %v: want _switch-r2 (a host is named switch-r2) and core", routers)
	}
	bw := map[string]string{}
	for _, l := range doc.Zone.Links {
		bw[l.ID] = l.Bandwidth + " " + l.SharingPolicy
	}
	for id, want := range map[string]string{
		"nic-n1":    "1.175e+08Bps SPLITDUPLEX", // 0.94 × 1 Gbit/s / 8
		"nic-n5":    "5.875e+07Bps SPLITDUPLEX", // the slow NIC
		"uplink-r1": "1.5e+08Bps SPLITDUPLEX",   // measured backbone capacity replaces every uplink's
		// commcal's ceiling is the slowest NIC's capacity, which binds the flows between
		// faster NICs: every route carries it.
		CeilingLink: "5.875e+07Bps FATPIPE",
	} {
		if bw[id] != want {
			t.Errorf("link %s: %q, want %q", id, bw[id], want)
		}
	}
	// 10 NICs × 2 directions and 3 uplinks × 2.
	if len(doc.Zone.Routes) != 26 {
		t.Errorf("%d routes, want 26", len(doc.Zone.Routes))
	}
	_, again := build(t, desc, p, nil, nil, "")
	if !bytes.Equal(s.Platform, again.Platform) || !bytes.Equal(s.SMPICfg, again.SMPICfg) {
		t.Error("two exports of the same input differ")
	}
	if !bytes.HasPrefix(s.Platform, []byte("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n")) {
		t.Errorf("platform starts %q", s.Platform[:120])
	}
	if got := string(s.Hostfile); !strings.HasPrefix(got, "switch-r2\nn1\n") || strings.Count(got, "\n") != 10 {
		t.Errorf("hostfile %q", got)
	}
}

// TestSMPIFactors checks the factor lists against their closed form: bw_k = 1/(β_k·B),
// lat_k = α_k/L on the intra-rack route (B = 0.94 Gbit/s / 8, L = α_intra = 5e-5 s), each
// written at its segment's first size − 1; a flagged segment takes the single line's β and
// the platform's latency (factor 1).
func TestSMPIFactors(t *testing.T) {
	desc := roundTripCases()[0].desc
	p := contention.Params{Efficiency: 0.94, LatencyS: map[cluster.PathClass]float64{cluster.IntraRack: 5e-5, cluster.InterRack: 8e-5}}
	segs := []estimate.SegmentedHockney{{Class: cluster.IntraRack, Breaks: []float64{1420, 65536}, Segments: []estimate.HockneySegment{
		{Alpha: estimate.Param{Value: 2.5e-5}, Beta: estimate.Param{Value: 1.7021276595744682e-08}},
		{Alpha: estimate.Param{Value: -1e-6}, Beta: estimate.Param{Value: 9e-9}, Flags: []string{"α = -1e-06 s is negative: no latency can be"}},
		{Alpha: estimate.Param{Value: 1e-4}, Beta: estimate.Param{Value: 8.51063829787234e-09}},
	}}, {Class: cluster.InterRack, Segments: []estimate.HockneySegment{{Alpha: estimate.Param{Value: 1e-4}, Beta: estimate.Param{Value: 1e-8}}}}}
	hockney := []estimate.HockneyFit{{Class: cluster.IntraRack, Beta: estimate.Param{Value: 8.51063829787234e-09}}}
	_, s := build(t, desc, p, segs, hockney, "")
	want := "--cfg=network/model:SMPI\n--cfg=smpi/bw-factor:0:0.5;1419:1;65535:1\n--cfg=smpi/lat-factor:0:0.5;1419:1;65535:2\n"
	if got := string(s.SMPICfg); got != want {
		t.Errorf("smpi.cfg:\n%s\nwant:\n%s", got, want)
	}
	sm := s.Summary.SMPI
	if sm.Class != cluster.IntraRack || sm.RefSrc != "a1" || sm.RefDst != "a2" || sm.Segments[1].Fallback == "" || len(sm.OtherClassesOff) != 1 {
		t.Errorf("smpi summary %+v", sm)
	}
	if len(s.Summary.Warnings) != 1 || !strings.Contains(s.Summary.Warnings[0], "from 1420 B") {
		t.Errorf("warnings %q, want one about the flagged segment from 1420 B", s.Summary.Warnings)
	}
	// Without latencies, there is nothing for a latency factor to scale.
	_, none := build(t, desc, p, segs, hockney, LatencyNone)
	if strings.Contains(string(none.SMPICfg), "lat-factor") || len(none.Summary.SMPI.Omitted) != 2 {
		t.Errorf("--latency none: smpi.cfg %q, omitted %q", none.SMPICfg, none.Summary.SMPI.Omitted)
	}
	// Without a segmented fit, factors of 1.
	_, plain := build(t, desc, p, nil, nil, "")
	if got := string(plain.SMPICfg); got != "--cfg=network/model:SMPI\n--cfg=smpi/bw-factor:0:1\n--cfg=smpi/lat-factor:0:1\n" {
		t.Errorf("no segments: smpi.cfg %q", got)
	}
}

// TestSimGridBadInput checks the errors: another cluster's calibration, an unknown latency
// mode, parameters out of range — each bad input.
func TestSimGridBadInput(t *testing.T) {
	cl, err := cluster.New(roundTripCases()[0].desc)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		cal  estimate.Calibration
		mode string
		want string
	}{
		{"other cluster", estimate.Calibration{Cluster: "lab", Params: contention.DefaultParams()}, "", "a calibration of cluster lab"},
		{"mode", estimate.Calibration{Cluster: "tworack", Params: contention.DefaultParams()}, "half", `latency "half"`},
		{"params", estimate.Calibration{Cluster: "tworack", Params: contention.Params{Efficiency: 2}}, "", "efficiency"},
	} {
		_, err := BuildSimGrid(cl, &c.cal, SimGridOptions{Latency: c.mode})
		if err == nil || !badinput.Is(err) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want bad input naming %q", c.name, err, c.want)
		}
	}
}
