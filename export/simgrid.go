package export

import (
	"bytes"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/contention"
	"github.com/commcal/commcal/datasets"
	"github.com/commcal/commcal/estimate"
	"github.com/commcal/commcal/internal/atomicio"
	"github.com/commcal/commcal/internal/badinput"
)

// Files of a SimGrid export directory.
const (
	PlatformFile = "platform.xml" // hosts, links and routes (SimGrid DTD version 4.1)
	HostFile     = "hostfile"     // one host per line, for smpirun -hostfile
	MaxMinFile   = "maxmin.cfg"   // --cfg options: SimGrid computes commcal's maxmin
	SMPIFile     = "smpi.cfg"     // --cfg options: SMPI's factors from the segmented Hockney fit
	SummaryFile  = "export.json"  // what was exported, for scripts
)

// SummaryFormat versions export.json.
const SummaryFormat = "commcal-simgrid-export/1"

// Latency modes of the platform's links.
const (
	// LatencyHockney puts the calibration's Hockney α on the links (see SimGridOptions).
	LatencyHockney = "hockney"
	// LatencyNone gives every link latency 0.
	LatencyNone = "none"
)

// HostSpeed is every host's speed in the platform. commcal models no computation, so any
// documented constant does; 1 Gflop/s is SimGrid's examples' usual host.
const HostSpeed = "1Gf"

// CeilingLink is the id of the FATPIPE link that carries commcal's per-flow ceiling.
const CeilingLink = "flow-ceiling"

// MaxMinConfig are the SimGrid options (3.32) under which its network model is commcal's
// maxmin on the exported platform:
//
//   - network/model:CM02 — max-min sharing of link capacities among flows (Casanova and
//     Marchal), without LV08's corrections;
//   - network/crosstraffic:0 — no 5% of each flow's rate on its reverse route (TCP's
//     acknowledgements), which commcal does not model;
//   - network/weight-S:0 — a flow's sharing weight is its route's latency alone, with no
//     S/bandwidth term per link (CM02's default, written out);
//   - network/TCP-gamma:0 — no window bound γ/(2·latency) on a flow's rate (SimGrid's default
//     γ = 4 MiB would cap long-latency routes); 0 switches the bound off;
//   - network/latency-factor:1, network/bandwidth-factor:1 — latencies and bandwidths as
//     written (CM02's defaults, written out so that a user's other settings cannot creep in);
//   - network/optim:Full — every share recomputed at every event. With the default, Lazy,
//     SimGrid 3.32 mis-shares once flows come out of their latency phase: on the round-trip
//     test's tree, flows through a saturated uplink direction got the full per-flow ceiling
//     (times 40–70% short); without latencies, or with Full, the times are maxmin's.
//
// CM02's sharing is weighted by route latency (a flow's share is inversely proportional to
// its route's latency: TCP's RTT unfairness). With latency 0 everywhere (LatencyNone) every
// weight is equal and the sharing is exactly commcal's maxmin; with Hockney latencies it is
// exactly maxmin for patterns whose transfers all have the same route latency (one path
// class), and RTT-weighted between classes otherwise.
var MaxMinConfig = []string{
	"network/model:CM02",
	"network/crosstraffic:0",
	"network/weight-S:0",
	"network/TCP-gamma:0",
	"network/latency-factor:1",
	"network/bandwidth-factor:1",
	"network/optim:Full",
}

// SimGridOptions choose what the export writes.
type SimGridOptions struct {
	// Latency is LatencyHockney (the default when empty) or LatencyNone.
	Latency string
	// Version is commcal's version, written into export.json.
	Version string
}

// SimGrid is a cluster and its calibration as SimGrid inputs, every file's bytes ready to write.
type SimGrid struct {
	Platform, Hostfile, MaxMinCfg, SMPICfg []byte
	Summary                                Summary
}

// Summary is export.json: what the platform and the configurations hold and why.
type Summary struct {
	Format  string `json:"format"`
	Tool    string `json:"tool"`
	Version string `json:"version"`
	Cluster string `json:"cluster"`
	// CalibrationCreated is the calibration's own creation time (none of the export's).
	CalibrationCreated string `json:"calibration_created,omitempty"`
	Latency            string `json:"latency"`
	// Links lists every platform link with the commcal resources it carries.
	Links []LinkSummary `json:"links"`
	// CeilingBytesPerS is commcal's per-flow ceiling, 0 when it binds no route (no
	// flow-ceiling link).
	CeilingBytesPerS float64 `json:"ceiling_bytes_per_s,omitempty"`
	// RouteLatencyS is each path class's route latency in the platform; CommcalLatencyS
	// the latency commcal's models add for the class (the calibration's Hockney α).
	RouteLatencyS   map[cluster.PathClass]float64 `json:"route_latency_s"`
	CommcalLatencyS map[cluster.PathClass]float64 `json:"commcal_latency_s,omitempty"`
	MaxMinConfig    []string                      `json:"maxmin_config"`
	SMPI            SMPISummary                   `json:"smpi"`
	Usage           []string                      `json:"usage"`
	Warnings        []string                      `json:"warnings,omitempty"`
}

// LinkSummary is one platform link.
type LinkSummary struct {
	ID             string  `json:"id"`
	SharingPolicy  string  `json:"sharing_policy"`
	BandwidthBytes float64 `json:"bandwidth_bytes_per_s"`
	LatencyS       float64 `json:"latency_s"`
	// Resources are the commcal resources the link carries: the UP direction first (a
	// SPLITDUPLEX link's <id>_UP), then DOWN.
	Resources []string `json:"resources,omitempty"`
}

// SMPISummary is smpi.cfg's content and where it comes from.
type SMPISummary struct {
	Config []string `json:"config"`
	// Class is the path class whose segments the factors reproduce, Source the data of its
	// fit, RefSrc → RefDst the route the factors are relative to (the class's sweep pair),
	// with its platform bandwidth bound and latency.
	Class           cluster.PathClass `json:"class,omitempty"`
	Source          string            `json:"source,omitempty"`
	RefSrc          string            `json:"ref_src,omitempty"`
	RefDst          string            `json:"ref_dst,omitempty"`
	RefBytesPerS    float64           `json:"ref_bandwidth_bytes_per_s,omitempty"`
	RefLatencyS     float64           `json:"ref_latency_s,omitempty"`
	Segments        []SMPISegment     `json:"segments,omitempty"`
	Omitted         []string          `json:"omitted"`
	OtherClassesOff []string          `json:"other_classes,omitempty"`
}

// SMPISegment is one protocol regime: from FromBytes on, a lone transfer of m bytes on the
// reference route takes AlphaS + BetaSPerByte·m under SMPI with these factors.
type SMPISegment struct {
	FromBytes    int64   `json:"from_bytes"`
	AlphaS       float64 `json:"alpha_s"`
	BetaSPerByte float64 `json:"beta_s_per_byte"`
	BwFactor     float64 `json:"bw_factor"`
	LatFactor    float64 `json:"lat_factor,omitempty"`
	// Fallback says why the segment's own fit was not used (a flagged α or β).
	Fallback string `json:"fallback,omitempty"`
}

// Names of the platform's routers, made distinct from every host name.
type names struct {
	taken map[string]bool
}

func (n names) router(want string) string {
	for n.taken[want] {
		want = "_" + want
	}
	n.taken[want] = true
	return want
}

// BuildSimGrid lays out cl and cal as a SimGrid platform and its configurations.
//
// The platform is one zone with DijkstraCache routing over the cluster's tree: a host per
// node, a router per rack switch (and a core router for TopologyCore), a SPLITDUPLEX link
// per NIC (host → switch is its UP direction, switch → host DOWN), per rack uplink (switch →
// core UP) and for the backbone cable (first rack → second rack UP). The tree has one path
// between two hosts, so SimGrid's routes cross exactly the directed resources of
// cluster.Path, in its order; SimGrid computes them on demand (Floyd would be cubic in the
// cluster's size). Bandwidths are the capacities of commcal's models (contention.Params:
// measured NIC and backbone capacities where the calibration has them, else efficiency ×
// nominal), in bytes per second. commcal's per-flow ceiling, when below some NIC's capacity,
// is a FATPIPE link (each flow bounded by it, none sharing it) on every host's way out.
//
// Latencies (LatencyHockney) split the calibration's Hockney α per path class over the
// links, so that a route's latency is its class's α: each NIC direction α_intra/2, the
// backbone cable α_inter − α_intra, each uplink direction (α_inter − α_intra)/2 (a route
// crosses two); a class without α counts 0, and α_inter < α_intra leaves the backbone at 0
// with a warning. A lone transfer of m bytes then takes α + 8m/rate in SimGrid as in
// commcal's models.
//
// smpi.cfg holds SMPI's smpi/bw-factor and smpi/lat-factor, "size:factor;…" lists from the
// segmented Hockney fit of one path class (intra-rack if fitted, else inter-rack: SimGrid's
// factors depend on the size only; a factor applies to sizes above its size, so segment k,
// which starts at b_k bytes, is written at b_k − 1): for segment k, bw_k =
// 1/(β_k·B) and lat_k = α_k/L, B and L the bandwidth bound and latency of the class's route
// in the platform, so that under SMPI's model a lone transfer on that route takes
// α_k + β_k·m. A segment flagged by the fit (α < 0, β ≤ 0) takes the class's single-line
// values instead. smpi/os and smpi/or are left out: calibrations hold no per-message
// overheads.
func BuildSimGrid(cl *cluster.Cluster, cal *estimate.Calibration, opts SimGridOptions) (*SimGrid, error) {
	if cal.Cluster != cl.Name() {
		return nil, badinput.Errorf("", "export: a calibration of cluster %s, the cluster is %s", cal.Cluster, cl.Name())
	}
	mode := opts.Latency
	if mode == "" {
		mode = LatencyHockney
	}
	if mode != LatencyHockney && mode != LatencyNone {
		return nil, badinput.Errorf("", "export: latency %q: want %s or %s", mode, LatencyHockney, LatencyNone)
	}
	net, err := cal.Params.Network(cl)
	if err != nil {
		return nil, err
	}
	s := &SimGrid{Summary: Summary{Format: SummaryFormat, Tool: "commcal", Version: opts.Version, Cluster: cl.Name(), CalibrationCreated: cal.Created,
		Latency: mode, MaxMinConfig: slices.Clone(MaxMinConfig), RouteLatencyS: map[cluster.PathClass]float64{}}}
	sum := &s.Summary
	warn := func(format string, a ...any) { sum.Warnings = append(sum.Warnings, fmt.Sprintf(format, a...)) }
	nicLat, bbLat := sum.linkLatencies(mode, net, warn)
	p := newPlatform(cl, sum)
	p.ceilingLink(net)
	p.links(net, nicLat, bbLat)
	for _, cp := range cl.ClassPairs() {
		sum.RouteLatencyS[cp.Class] = routeLatency(cp.Class, nicLat, bbLat)
	}
	if s.Platform, err = encodePlatform(p.zone); err != nil {
		return nil, err
	}
	var hosts bytes.Buffer
	for _, n := range cl.Nodes() {
		hosts.WriteString(n.Name + "\n")
	}
	s.Hostfile = hosts.Bytes()
	s.MaxMinCfg = cfgLines(MaxMinConfig)
	s.smpi(cl, cal, net, nicLat, bbLat, warn)
	s.SMPICfg = cfgLines(sum.SMPI.Config)
	sum.Usage = []string{
		"SimGrid computing commcal's maxmin (s4u program): ./prog " + PlatformFile + " $(cat " + MaxMinFile + ")",
		"SMPI with the calibrated protocol regimes: smpirun $(cat " + SMPIFile + ") -platform " + PlatformFile + " -hostfile " + HostFile + " ./app",
	}
	return s, nil
}

// linkLatencies splits the calibration's Hockney α over the links (LatencyHockney): each NIC
// direction α_intra/2, and bbLat = α_inter − α_intra for the backbone (an uplink direction
// takes half of it). It records commcal's latencies in the summary; α_inter < α_intra leaves
// the backbone at 0 with a warning. Without latencies, or with LatencyNone, both are 0.
func (sum *Summary) linkLatencies(mode string, net *contention.Network, warn func(string, ...any)) (nicLat, bbLat float64) {
	if mode != LatencyHockney || len(net.Latency) == 0 {
		return 0, 0
	}
	sum.CommcalLatencyS = map[cluster.PathClass]float64{}
	for k, v := range net.Latency {
		sum.CommcalLatencyS[k] = v
	}
	intra, inter := net.Latency[cluster.IntraRack], net.Latency[cluster.InterRack]
	nicLat = intra / 2
	if _, ok := net.Latency[cluster.InterRack]; ok {
		if bbLat = inter - intra; bbLat < 0 {
			warn("hockney α inter-rack %g s is below intra-rack %g s: inter-rack routes get the intra-rack latency (the backbone's is 0)", inter, intra)
			bbLat = 0
		}
	}
	return nicLat, bbLat
}

// platform is the platform's zone as BuildSimGrid lays it out, with the summary whose link
// list it keeps beside the zone's.
type platform struct {
	cl       *cluster.Cluster
	sum      *Summary
	zone     xmlZone
	racks    []string
	switches []string // the router of each rack's switch
	core     string   // the core router, "" unless the backbone is TopologyCore
	ceiling  float64  // the flow-ceiling link's bandwidth in bytes per second, 0 without it
}

// newPlatform starts the zone: a host per node, a router per rack switch and, for
// TopologyCore, the core router, each router named apart from every host.
func newPlatform(cl *cluster.Cluster, sum *Summary) *platform {
	hostNames := map[string]bool{}
	for _, n := range cl.Nodes() {
		hostNames[n.Name] = true
	}
	nm := names{taken: hostNames}
	p := &platform{cl: cl, sum: sum, zone: xmlZone{ID: cl.Name(), Routing: "DijkstraCache"}, racks: cl.Racks()}
	for _, n := range cl.Nodes() {
		p.zone.Hosts = append(p.zone.Hosts, xmlHost{ID: n.Name, Speed: HostSpeed})
	}
	p.switches = make([]string, len(p.racks))
	for i, r := range p.racks {
		p.switches[i] = nm.router("switch-" + r)
		p.zone.Routers = append(p.zone.Routers, xmlRouter{ID: p.switches[i]})
	}
	if desc := cl.Description(); desc.Backbone != nil && desc.Backbone.Topology == cluster.TopologyCore {
		p.core = nm.router("core")
		p.zone.Routers = append(p.zone.Routers, xmlRouter{ID: p.core})
	}
	return p
}

// addLink adds a link to the zone and to the summary, with the commcal resources it carries.
func (p *platform) addLink(id, policy string, bw, lat float64, resources ...string) {
	p.zone.Links = append(p.zone.Links, xmlLink{ID: id, Bandwidth: num(bw) + "Bps", Latency: num(lat) + "s", SharingPolicy: policy})
	p.sum.Links = append(p.sum.Links, LinkSummary{ID: id, SharingPolicy: policy, BandwidthBytes: bw, LatencyS: lat, Resources: resources})
}

// route adds the one-way route from src to dst over links.
func (p *platform) route(src, dst string, links ...xmlLinkCtn) {
	p.zone.Routes = append(p.zone.Routes, xmlRoute{Src: src, Dst: dst, Symmetrical: "NO", Links: links})
}

// ceilingLink adds the FATPIPE link of commcal's per-flow ceiling when the ceiling is below
// some NIC's capacity, so that it binds a route.
func (p *platform) ceilingLink(net *contention.Network) {
	for _, r := range p.cl.Resources() {
		if r.Kind == cluster.NICOut && net.Ceiling < net.Capacity[r.ID] {
			p.ceiling = net.Ceiling / 8
		}
	}
	if p.ceiling > 0 {
		p.sum.CeilingBytesPerS = p.ceiling
		p.addLink(CeilingLink, "FATPIPE", p.ceiling, 0)
	}
}

// links adds a SPLITDUPLEX link per pair of directed resources and the routes that cross
// it. Resources come in pairs (an ID and its Reverse, ID+1) in the order cluster.New lays
// them out: NICs in node order, then uplinks in rack order or the cable.
func (p *platform) links(net *contention.Network, nicLat, bbLat float64) {
	res := p.cl.Resources()
	for _, r := range res {
		if r.ID > r.Reverse {
			continue
		}
		up, down := r, res[r.Reverse]
		bw := net.Capacity[r.ID] / 8
		switch r.Kind {
		case cluster.NICOut:
			n, _ := p.cl.Node(r.Owner)
			id := "nic-" + r.Owner
			p.addLink(id, "SPLITDUPLEX", bw, nicLat, up.Name(), down.Name())
			out := []xmlLinkCtn{{ID: id, Direction: "UP"}}
			if p.ceiling > 0 {
				out = append(out, xmlLinkCtn{ID: CeilingLink})
			}
			p.route(n.Name, p.switches[n.RackIndex], out...)
			p.route(p.switches[n.RackIndex], n.Name, xmlLinkCtn{ID: id, Direction: "DOWN"})
		case cluster.UplinkUp:
			ri := slices.Index(p.racks, r.Owner)
			id := "uplink-" + r.Owner
			p.addLink(id, "SPLITDUPLEX", bw, bbLat/2, up.Name(), down.Name())
			p.route(p.switches[ri], p.core, xmlLinkCtn{ID: id, Direction: "UP"})
			p.route(p.core, p.switches[ri], xmlLinkCtn{ID: id, Direction: "DOWN"})
		case cluster.BackboneAB:
			p.addLink("backbone", "SPLITDUPLEX", bw, bbLat, up.Name(), down.Name())
			p.route(p.switches[0], p.switches[1], xmlLinkCtn{ID: "backbone", Direction: "UP"})
			p.route(p.switches[1], p.switches[0], xmlLinkCtn{ID: "backbone", Direction: "DOWN"})
		default:
			panic(fmt.Sprintf("export: resource %s comes first in its pair", r.Name()))
		}
	}
}

// routeLatency is a path class's route latency in the platform: two NIC directions, and
// between racks the backbone cable or two uplink directions (each half of bbLat).
func routeLatency(class cluster.PathClass, nicLat, bbLat float64) float64 {
	if class == cluster.IntraRack {
		return 2 * nicLat
	}
	return 2*nicLat + bbLat
}

// smpi fills the SMPI summary and its configuration (see BuildSimGrid).
func (s *SimGrid) smpi(cl *cluster.Cluster, cal *estimate.Calibration, net *contention.Network, nicLat, bbLat float64, warn func(string, ...any)) {
	sm := &s.Summary.SMPI
	sm.Config = []string{"network/model:SMPI"}
	sm.Omitted = []string{
		"smpi/os, smpi/or: the calibration holds no per-message send or receive overheads (pingpong_pairs' os_s and or_s enter only the L fit); SimGrid's default 0 applies",
	}
	var seg *estimate.SegmentedHockney
	for _, class := range cluster.PathClasses() {
		for i := range cal.HockneySegments {
			if cal.HockneySegments[i].Class == class {
				if seg == nil {
					seg = &cal.HockneySegments[i]
				} else {
					sm.OtherClassesOff = append(sm.OtherClassesOff, string(class))
				}
			}
		}
	}
	if seg == nil {
		sm.Config = append(sm.Config, "smpi/bw-factor:0:1", "smpi/lat-factor:0:1")
		warn("no segmented Hockney fit in the calibration: smpi/bw-factor and smpi/lat-factor are 1, so SMPI's point-to-point times are the platform's latency + size/bandwidth")
		return
	}
	var ref cluster.ClassPair
	for _, cp := range cl.ClassPairs() {
		if cp.Class == seg.Class {
			ref = cp
		}
	}
	if ref.Src == "" {
		warn("segmented Hockney fit of class %s, which cluster %s does not have: smpi factors left at 1", seg.Class, cl.Name())
		sm.Config = append(sm.Config, "smpi/bw-factor:0:1", "smpi/lat-factor:0:1")
		return
	}
	path, _ := cl.Path(ref.Src, ref.Dst)
	bound := net.Ceiling
	for _, id := range path {
		bound = min(bound, net.Capacity[id])
	}
	B, L := bound/8, routeLatency(seg.Class, nicLat, bbLat)
	sm.Class, sm.Source, sm.RefSrc, sm.RefDst, sm.RefBytesPerS, sm.RefLatencyS = seg.Class, seg.Source, ref.Src, ref.Dst, B, L
	var plain *estimate.HockneyFit
	for i := range cal.Hockney {
		if cal.Hockney[i].Class == seg.Class {
			plain = &cal.Hockney[i]
		}
	}
	var bw, lat []string
	for k, g := range seg.Segments {
		// SimGrid applies the factor of threshold b to sizes above b, so a segment that
		// starts at size s (an integer number of bytes) is written at s − 1; the first at 0.
		from, threshold := int64(0), int64(0)
		if k > 0 {
			from = int64(math.Ceil(seg.Breaks[k-1]))
			threshold = from - 1
		}
		ss := SMPISegment{FromBytes: from, AlphaS: g.Alpha.Value, BetaSPerByte: g.Beta.Value}
		why := g.Flags
		if u, ok := notIdentified(cal, estimate.SegmentName(seg.Class, g)+"/beta_s_per_byte"); ok {
			why = append(slices.Clip(why), "β not identified: "+u.Reason)
		}
		if len(why) > 0 || !(g.Alpha.Value >= 0) || !(g.Beta.Value > 0) || math.IsInf(g.Beta.Value, 0) {
			ss.Fallback = strings.Join(why, "; ")
			if ss.Fallback == "" {
				ss.Fallback = fmt.Sprintf("α = %g s, β = %g s/B", g.Alpha.Value, g.Beta.Value)
			}
			// The platform's own values: its latency, and the single line's rate when valid.
			ss.AlphaS, ss.BetaSPerByte = L, 1/B
			if _, refused := notIdentified(cal, "hockney/"+string(seg.Class)+"/beta_s_per_byte"); plain != nil && !refused && plain.Beta.Value > 0 && !math.IsInf(plain.Beta.Value, 0) {
				ss.BetaSPerByte = plain.Beta.Value
			}
			warn("hockney segment %s from %d B: %s; smpi factors of the single line used", seg.Class, from, ss.Fallback)
		}
		ss.BwFactor = 1 / (ss.BetaSPerByte * B)
		if L > 0 {
			ss.LatFactor = ss.AlphaS / L
		}
		bw = append(bw, fmt.Sprintf("%d:%s", threshold, num(ss.BwFactor)))
		lat = append(lat, fmt.Sprintf("%d:%s", threshold, num(ss.LatFactor)))
		sm.Segments = append(sm.Segments, ss)
	}
	sm.Config = append(sm.Config, "smpi/bw-factor:"+strings.Join(bw, ";"))
	if L > 0 {
		sm.Config = append(sm.Config, "smpi/lat-factor:"+strings.Join(lat, ";"))
	} else {
		sm.Omitted = append(sm.Omitted, fmt.Sprintf("smpi/lat-factor: the %s route has no latency in the platform (no Hockney α, or --latency none) for a factor to scale", seg.Class))
	}
}

// num formats a float in its shortest exact form, the same on every run.
func num(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// cfgLines writes SimGrid options one per line as --cfg=KEY:VALUE, ready for $(cat FILE).
func cfgLines(opts []string) []byte {
	var b bytes.Buffer
	for _, o := range opts {
		b.WriteString("--cfg=" + o + "\n")
	}
	return b.Bytes()
}

// WriteDir writes every file of the export into dir (which the caller built and claimed).
func (s *SimGrid) WriteDir(dir string) error {
	summary, err := datasets.EncodeJSON(s.Summary)
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	for _, f := range []struct {
		name string
		data []byte
	}{{PlatformFile, s.Platform}, {HostFile, s.Hostfile}, {MaxMinFile, s.MaxMinCfg}, {SMPIFile, s.SMPICfg}, {SummaryFile, summary}} {
		if err := atomicio.WriteFile(filepath.Join(dir, f.name), f.data); err != nil {
			return fmt.Errorf("export: %w", err)
		}
	}
	return nil
}

// notIdentified is the calibration's entry for the named parameter, when it does not use it.
func notIdentified(cal *estimate.Calibration, name string) (estimate.Unidentified, bool) {
	for _, u := range cal.NotIdentified {
		if u.Parameter == name {
			return u, true
		}
	}
	return estimate.Unidentified{}, false
}
