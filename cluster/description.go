package cluster

import (
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/commcal/commcal/internal/badinput"
	"github.com/commcal/commcal/internal/strictjson"
	"github.com/commcal/commcal/internal/stricttoml"
)

// Topologies of the inter-rack network.
const (
	// TopologyCable joins exactly two racks with one full-duplex backbone cable.
	TopologyCable = "cable"
	// TopologyCore gives every rack its own full-duplex uplink to a core router.
	TopologyCore = "core"
)

// Backbone kinds. The kind is descriptive: the models use only the rate, but the papers report
// results per kind (β_E for electrical, β_O for optical), so calibrations keep it.
const (
	KindElectrical = "electrical"
	KindOptical    = "optical"
)

// Description is a cluster as its operator writes it down (cluster.toml or cluster.json).
// Rates are in bits per second.
type Description struct {
	Name       string  `toml:"name" json:"name"`
	NICRateBps float64 `toml:"nic_rate_bps" json:"nic_rate_bps"`
	// Backbone is the inter-rack network; it may be left out of a one-rack cluster.
	Backbone *Backbone `toml:"backbone,omitempty" json:"backbone,omitempty"`
	Racks    []Rack    `toml:"rack" json:"rack"`
	// Node holds per-node settings: NIC rate overrides for heterogeneous clusters and the
	// addresses that adapters (iperf3) use to map hosts to nodes.
	Node []NodeSettings `toml:"node,omitempty" json:"node,omitempty"`
}

// Backbone describes how racks are joined.
type Backbone struct {
	Topology string  `toml:"topology" json:"topology"`
	Kind     string  `toml:"kind" json:"kind"`
	RateBps  float64 `toml:"rate_bps" json:"rate_bps"`
}

// Rack lists a top-of-rack switch's nodes, either by name or as a numbered range
// (NodePrefix + NodeFirst ... NodePrefix + NodeFirst+NodeCount-1), or both.
type Rack struct {
	Name       string   `toml:"name" json:"name"`
	Nodes      []string `toml:"nodes,omitempty" json:"nodes,omitempty"`
	NodePrefix string   `toml:"node_prefix,omitempty" json:"node_prefix,omitempty"`
	NodeFirst  int      `toml:"node_first,omitzero" json:"node_first,omitempty"`
	NodeCount  int      `toml:"node_count,omitzero" json:"node_count,omitempty"`
	// UplinkRateBps is the rate of this rack's uplink to the core (TopologyCore only);
	// zero means the backbone rate.
	UplinkRateBps float64 `toml:"uplink_rate_bps,omitzero" json:"uplink_rate_bps,omitempty"`
}

// NodeSettings overrides one node's defaults.
type NodeSettings struct {
	Name       string  `toml:"name" json:"name"`
	NICRateBps float64 `toml:"nic_rate_bps" json:"nic_rate_bps,omitempty"`
	Addr       string  `toml:"addr" json:"addr,omitempty"`
}

// Limits on a description, checked on its counts before any node is laid out, so that a
// short file cannot ask for more memory than the machine has (a 1 KB file can declare 16
// racks of a million numbered nodes each).
//
//   - maxNodes, 65,536 nodes in all: above the largest Ethernet or InfiniBand clusters that
//     commcal's estimators can calibrate (the LMO model and the point-to-point tables are
//     per pair, 4·10⁹ pairs at this size) and 65× the 1,000-node all-to-all the models are
//     sized for, while a laid-out cluster of this size stays near 30 MB.
//   - maxRacks, 4,096 racks: 16 nodes per rack at the node limit; every rack is a switch with
//     its own uplink resources.
//   - maxNameBytes, 255 bytes per name: a DNS host name has at most 253.
//   - maxFileBytes, 16 MiB per file: 65,536 nodes listed one by one with per-node settings
//     take about 5 MB.
const (
	maxNodes     = 1 << 16
	maxRacks     = 1 << 12
	maxNameBytes = 255
	maxFileBytes = 16 << 20
)

// Load reads a cluster description from a .toml or .json file and checks it. Errors caused by
// the file (a missing file, a syntax error, a bad value) are bad input (internal/badinput)
// and name the file.
func Load(path string) (*Cluster, error) {
	var format string
	switch strings.ToLower(filepath.Ext(path)) {
	case ".toml":
		format = "toml"
	case ".json":
		format = "json"
	default:
		return nil, badinput.Errorf(path, "cluster: unknown extension %q, want .toml or .json", filepath.Ext(path))
	}
	data, err := readFile(path)
	if err != nil {
		return nil, err
	}
	c, err := parse(data, format)
	if err != nil {
		return nil, badinput.Wrap(path, err)
	}
	return c, nil
}

// readFile reads a description of at most maxFileBytes. A path that does not exist or is a
// directory is bad input; other read errors are the system's.
func readFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, badinput.Errorf(path, "cluster: no such file")
		}
		return nil, fmt.Errorf("cluster: %w", err)
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.IsDir() {
		return nil, badinput.Errorf(path, "cluster: is a directory, want a .toml or .json file")
	}
	data, err := io.ReadAll(io.LimitReader(f, maxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	if len(data) > maxFileBytes {
		return nil, badinput.Errorf(path, "cluster: larger than %d MiB; a description of the largest cluster allowed (%d nodes) takes a few MB", maxFileBytes>>20, maxNodes)
	}
	return data, nil
}

// Parse decodes a description in the given format ("toml" or "json") and checks it. Unknown
// keys, repeated keys and, in JSON, anything after the first document are errors. Errors are
// bad input (internal/badinput); the caller names the file.
func Parse(data []byte, format string) (*Cluster, error) {
	c, err := parse(data, format)
	if err != nil {
		return nil, badinput.Wrap("", err)
	}
	return c, nil
}

func parse(data []byte, format string) (*Cluster, error) {
	if len(data) > maxFileBytes {
		return nil, fmt.Errorf("cluster: description larger than %d MiB", maxFileBytes>>20)
	}
	var d Description
	switch format {
	case "toml":
		if err := stricttoml.Decode(data, &d); err != nil {
			return nil, fmt.Errorf("cluster: %w", err)
		}
	case "json":
		if err := strictjson.Decode(data, &d); err != nil {
			return nil, fmt.Errorf("cluster: %w", oneLine(err))
		}
	default:
		panic("cluster: unknown format " + format)
	}
	return build(d)
}

// oneLine keeps a library's error on one line: it is returned as it is when it already is.
func oneLine(err error) error {
	if msg := err.Error(); strings.ContainsAny(msg, "\r\n") {
		return errors.New(strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(msg))
	}
	return err
}

// expandNodes returns a rack's node names in order: the listed names, then the numbered range.
// The description must have been checked (its sizes are trusted).
func (r *Rack) expandNodes() []string {
	names := make([]string, 0, len(r.Nodes)+r.NodeCount)
	names = append(names, r.Nodes...)
	for i := 0; i < r.NodeCount; i++ {
		names = append(names, r.NodePrefix+strconv.Itoa(r.NodeFirst+i))
	}
	return names
}

func positive(v float64) bool { return v > 0 && !math.IsInf(v, 1) }

// nameProblem says what is wrong with a node, rack, cluster or address name, or "". Names are
// written into every table, report and figure: they must be non-empty, valid UTF-8, at most
// maxNameBytes long and free of control and format characters (NUL, newline, tab, escape,
// bidirectional overrides, zero-width spaces, byte-order marks).
func nameProblem(s string) string {
	if strings.TrimSpace(s) == "" {
		return "is empty"
	}
	return NameTextProblem(s)
}

// NameTextProblem is what keeps s from being a name other than its being empty: its length
// (at most maxNameBytes), its encoding (UTF-8) or a rune no name holds (BadRune); "" when
// none. The control protocol checks the names its messages carry by it.
func NameTextProblem(s string) string {
	switch {
	case len(s) > maxNameBytes:
		return fmt.Sprintf("is %d bytes long, at most %d", len(s), maxNameBytes)
	case !utf8.ValidString(s):
		return "is not valid UTF-8"
	}
	if i, r := BadRune(s); i >= 0 {
		return fmt.Sprintf("contains the control character %U at byte %d", r, i)
	}
	return ""
}

// BadRune finds the first rune of s that no name may hold: a control character (NUL, tab,
// newline, DEL, …), a format character (bidirectional overrides, zero-width joiners) or a line
// or paragraph separator. Cluster descriptions, pattern files and dataset rows all refuse names
// by this one rule, so a name one accepts is never refused by another. It returns -1 when
// there is none.
func BadRune(s string) (int, rune) {
	for i, r := range s {
		if unicode.IsControl(r) || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp) {
			return i, r
		}
	}
	return -1, 0
}

// problems collects the problems of a description, so that an operator fixes them in one
// pass, and reports them on one line: at most maxProblems, then how many more.
type problems struct {
	list []string
	more int
}

const maxProblems = 10

func (p *problems) add(format string, a ...any) {
	if len(p.list) < maxProblems {
		p.list = append(p.list, fmt.Sprintf(format, a...))
	} else {
		p.more++
	}
}

func (p *problems) err() error {
	if len(p.list) == 0 {
		return nil
	}
	msg := strings.Join(p.list, "; ")
	if p.more > 0 {
		msg += fmt.Sprintf("; and %d more", p.more)
	}
	return errors.New("cluster: " + msg)
}

// rackRef names rack i (0-based) as a message shows it: its 1-based position and its name.
func (d *Description) rackRef(i int) string {
	return fmt.Sprintf("rack %d (%q)", i+1, d.Racks[i].Name)
}

// checkSizes checks the counts of a description against the limits without allocating
// anything per node.
func (d *Description) checkSizes() error {
	var p problems
	if len(d.Racks) > maxRacks {
		p.add("%d racks, at most %d", len(d.Racks), maxRacks)
		return p.err()
	}
	if len(d.Node) > maxNodes {
		p.add("%d [[node]] settings, at most one per node (%d nodes at most)", len(d.Node), maxNodes)
	}
	total := 0
	for i, r := range d.Racks {
		n := len(r.Nodes)
		switch {
		case r.NodeCount < 0 || r.NodeCount > maxNodes:
			p.add("%s: node_count %d outside [0, %d]", d.rackRef(i), r.NodeCount, maxNodes)
			continue
		case r.NodeCount > 0 && r.NodeFirst > math.MaxInt-(r.NodeCount-1):
			p.add("%s: node_first %d + node_count %d overflows", d.rackRef(i), r.NodeFirst, r.NodeCount)
			continue
		}
		n += r.NodeCount
		if total <= maxNodes && total+n > maxNodes {
			p.add("%d nodes in all, at most %d: the limit is passed at %s", sumNodes(d.Racks), maxNodes, d.rackRef(i))
		}
		total += n
	}
	return p.err()
}

// sumNodes counts the nodes of racks whose node_count is within the limit.
func sumNodes(racks []Rack) int {
	total := 0
	for _, r := range racks {
		total += len(r.Nodes)
		if r.NodeCount > 0 && r.NodeCount <= maxNodes {
			total += r.NodeCount
		}
	}
	return total
}

// check returns every problem of the description, on one line, or, when there is none, each
// rack's node names.
func (d *Description) check() ([][]string, error) {
	if err := d.checkSizes(); err != nil {
		return nil, err
	}
	var p problems
	if pr := nameProblem(d.Name); pr != "" {
		p.add("name %q %s", d.Name, pr)
	}
	if !positive(d.NICRateBps) {
		p.add("nic_rate_bps must be positive and finite, got %g", d.NICRateBps)
	}
	if len(d.Racks) == 0 {
		p.add("no [[rack]] given")
	}
	names, nodeRack := d.checkRacks(&p)
	d.checkBackbone(&p)
	d.checkNodeSettings(&p, nodeRack)
	if err := p.err(); err != nil {
		return nil, err
	}
	return names, nil
}

// checkRacks adds the problems of the racks (their names, their nodes' names, a rack or a
// node given twice, a rack without nodes, a bad uplink rate) to p, and returns each rack's
// node names and the rack of every node.
func (d *Description) checkRacks(p *problems) (names [][]string, nodeRack map[string]int) {
	rackSeen := map[string]bool{}
	nodeRack = make(map[string]int, sumNodes(d.Racks))
	names = make([][]string, len(d.Racks))
	for i, r := range d.Racks {
		if pr := nameProblem(r.Name); pr != "" {
			p.add("rack %d: name %q %s", i+1, r.Name, pr)
		}
		if rackSeen[r.Name] {
			p.add("%s appears twice", d.rackRef(i))
		}
		rackSeen[r.Name] = true
		for j, n := range r.Nodes {
			if pr := nameProblem(n); pr != "" {
				p.add("%s: node %d of nodes: name %q %s", d.rackRef(i), j+1, n, pr)
			}
		}
		if r.NodeCount > 0 {
			d.checkRange(p, i)
		}
		names[i] = r.expandNodes()
		if len(names[i]) == 0 {
			p.add("%s has no nodes", d.rackRef(i))
		}
		for _, n := range names[i] {
			if prev, ok := nodeRack[n]; ok && nameProblem(n) == "" {
				p.add("node %q appears twice (%s and %s)", n, d.rackRef(prev), d.rackRef(i))
			}
			nodeRack[n] = i
		}
		if r.UplinkRateBps != 0 && !positive(r.UplinkRateBps) {
			p.add("%s: uplink_rate_bps must be positive and finite, got %g", d.rackRef(i), r.UplinkRateBps)
		}
	}
	return names, nodeRack
}

// checkRange adds the problems of rack i's numbered range to p: a node_prefix with a
// control character or that is not UTF-8, or names too long. The names of a range differ
// only by their number, so the longest one is checked.
func (d *Description) checkRange(p *problems, i int) {
	r := d.Racks[i]
	longest := r.NodePrefix + strconv.Itoa(r.NodeFirst+r.NodeCount-1)
	if r.NodeFirst < 0 {
		longest = r.NodePrefix + strconv.Itoa(r.NodeFirst)
	}
	at, ch := BadRune(r.NodePrefix)
	switch {
	case at >= 0:
		p.add("%s: node_prefix %q contains the control character %U at byte %d", d.rackRef(i), r.NodePrefix, ch, at)
	case !utf8.ValidString(r.NodePrefix):
		p.add("%s: node_prefix %q is not valid UTF-8", d.rackRef(i), r.NodePrefix)
	case len(longest) > maxNameBytes:
		p.add("%s: node names such as %q are longer than %d bytes", d.rackRef(i), longest, maxNameBytes)
	}
}

// checkBackbone adds the problems of the backbone to p: missing between racks, a topology
// that does not fit the racks (a cable joins exactly two, and their uplink rates are for
// TopologyCore), an unknown kind, a bad rate.
func (d *Description) checkBackbone(p *problems) {
	b := d.Backbone
	if b == nil {
		if len(d.Racks) > 1 {
			p.add("%d racks but no [backbone]", len(d.Racks))
		}
		return
	}
	switch b.Topology {
	case TopologyCable:
		if len(d.Racks) != 2 {
			p.add("backbone topology %q joins exactly 2 racks, got %d", b.Topology, len(d.Racks))
		}
		for i, r := range d.Racks {
			if r.UplinkRateBps != 0 {
				p.add("%s: uplink_rate_bps is for topology %q, not %q", d.rackRef(i), TopologyCore, TopologyCable)
			}
		}
	case TopologyCore:
	default:
		p.add("backbone topology must be %q or %q, got %q", TopologyCable, TopologyCore, b.Topology)
	}
	if b.Kind != KindElectrical && b.Kind != KindOptical {
		p.add("backbone kind must be %q or %q, got %q", KindElectrical, KindOptical, b.Kind)
	}
	if !positive(b.RateBps) {
		p.add("backbone rate_bps must be positive and finite, got %g", b.RateBps)
	}
}

// checkNodeSettings adds the problems of the [[node]] settings to p: a node in no rack
// (nodeRack holds every rack's nodes) or given twice, a bad NIC rate, a bad address or one
// given to two nodes.
func (d *Description) checkNodeSettings(p *problems, nodeRack map[string]int) {
	addrs := map[string]string{}
	seen := map[string]bool{}
	for i, ns := range d.Node {
		if _, ok := nodeRack[ns.Name]; !ok {
			p.add("[[node]] %d: %q is not in any rack", i+1, ns.Name)
		}
		if seen[ns.Name] {
			p.add("[[node]] %d: %q appears twice", i+1, ns.Name)
		}
		seen[ns.Name] = true
		if ns.NICRateBps != 0 && !positive(ns.NICRateBps) {
			p.add("[[node]] %d (%q): nic_rate_bps must be positive and finite, got %g", i+1, ns.Name, ns.NICRateBps)
		}
		if ns.Addr == "" {
			continue
		}
		if pr := nameProblem(ns.Addr); pr != "" {
			p.add("[[node]] %d (%q): addr %q %s", i+1, ns.Name, ns.Addr, pr)
		}
		if prev, ok := addrs[ns.Addr]; ok {
			p.add("address %q given to both %q and %q", ns.Addr, prev, ns.Name)
		}
		addrs[ns.Addr] = ns.Name
	}
}

//go:embed examples/*.toml
var examples embed.FS

// Examples lists the names of the cluster descriptions built into the binary.
func Examples() []string {
	entries, _ := examples.ReadDir("examples")
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, strings.TrimSuffix(e.Name(), ".toml"))
	}
	return names
}

// LoadNamed loads a cluster description from a file, or, when ref is not a file but the name of
// a built-in example (see Examples), that example.
func LoadNamed(ref string) (*Cluster, error) {
	if _, err := os.Stat(ref); err == nil || strings.ContainsAny(ref, `/\.`) {
		return Load(ref)
	}
	data, err := examples.ReadFile("examples/" + ref + ".toml")
	if err != nil {
		return nil, badinput.Errorf(ref, "cluster: neither a file nor a built-in cluster (%s)", strings.Join(Examples(), ", "))
	}
	c, err := parse(data, "toml")
	if err != nil {
		return nil, fmt.Errorf("built-in cluster %s: %w", ref, err)
	}
	return c, nil
}
