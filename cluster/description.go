package cluster

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/BurntSushi/toml"
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
	Backbone *Backbone `toml:"backbone" json:"backbone,omitempty"`
	Racks    []Rack    `toml:"rack" json:"rack"`
	// Node holds per-node settings: NIC rate overrides for heterogeneous clusters and the
	// addresses that adapters (iperf3) use to map hosts to nodes.
	Node []NodeSettings `toml:"node" json:"node,omitempty"`
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
	Nodes      []string `toml:"nodes" json:"nodes,omitempty"`
	NodePrefix string   `toml:"node_prefix" json:"node_prefix,omitempty"`
	NodeFirst  int      `toml:"node_first" json:"node_first,omitempty"`
	NodeCount  int      `toml:"node_count" json:"node_count,omitempty"`
	// UplinkRateBps is the rate of this rack's uplink to the core (TopologyCore only);
	// zero means the backbone rate.
	UplinkRateBps float64 `toml:"uplink_rate_bps" json:"uplink_rate_bps,omitempty"`
}

// NodeSettings overrides one node's defaults.
type NodeSettings struct {
	Name       string  `toml:"name" json:"name"`
	NICRateBps float64 `toml:"nic_rate_bps" json:"nic_rate_bps,omitempty"`
	Addr       string  `toml:"addr" json:"addr,omitempty"`
}

// Load reads a cluster description from a .toml or .json file and checks it.
func Load(path string) (*Cluster, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	var format string
	switch strings.ToLower(filepath.Ext(path)) {
	case ".toml":
		format = "toml"
	case ".json":
		format = "json"
	default:
		return nil, fmt.Errorf("cluster: %s: unknown extension %q, want .toml or .json", path, filepath.Ext(path))
	}
	c, err := Parse(data, format)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// Parse decodes a description in the given format ("toml" or "json"), rejecting unknown keys,
// and checks it.
func Parse(data []byte, format string) (*Cluster, error) {
	var d Description
	switch format {
	case "toml":
		md, err := toml.Decode(string(data), &d)
		if err != nil {
			return nil, fmt.Errorf("cluster: %w", err)
		}
		if und := md.Undecoded(); len(und) > 0 {
			keys := make([]string, len(und))
			for i, k := range und {
				keys[i] = k.String()
			}
			return nil, fmt.Errorf("cluster: unknown key(s) %s", strings.Join(keys, ", "))
		}
	case "json":
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&d); err != nil {
			return nil, fmt.Errorf("cluster: %w", err)
		}
	default:
		panic("cluster: unknown format " + format)
	}
	return New(d)
}

// expandNodes returns a rack's node names in order: the listed names, then the numbered range.
func (r *Rack) expandNodes() []string {
	names := append([]string(nil), r.Nodes...)
	for i := 0; i < r.NodeCount; i++ {
		names = append(names, fmt.Sprintf("%s%d", r.NodePrefix, r.NodeFirst+i))
	}
	return names
}

// maxRackNodes bounds a numbered node range, so that a typo cannot ask for billions of nodes.
const maxRackNodes = 1 << 20

func positive(v float64) bool { return v > 0 && !math.IsInf(v, 1) }

// check returns every problem of the description, joined, so that an operator fixes them in
// one pass.
func (d *Description) check() error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf("cluster: "+format, a...)) }
	if strings.TrimSpace(d.Name) == "" {
		bad("name is empty")
	}
	if !positive(d.NICRateBps) {
		bad("nic_rate_bps must be positive and finite, got %g", d.NICRateBps)
	}
	if len(d.Racks) == 0 {
		bad("no [[rack]] given")
	}
	rackSeen := map[string]bool{}
	nodeRack := map[string]string{}
	for i, r := range d.Racks {
		if strings.TrimSpace(r.Name) == "" {
			bad("rack %d has no name", i+1)
		}
		if rackSeen[r.Name] {
			bad("rack %q appears twice", r.Name)
		}
		rackSeen[r.Name] = true
		if r.NodeCount < 0 || r.NodeCount > maxRackNodes {
			bad("rack %q: node_count must be between 0 and %d, got %d", r.Name, maxRackNodes, r.NodeCount)
			continue
		}
		names := r.expandNodes()
		if len(names) == 0 {
			bad("rack %q has no nodes", r.Name)
		}
		for _, n := range names {
			if strings.TrimSpace(n) == "" {
				bad("rack %q has a node with an empty name", r.Name)
				continue
			}
			if prev, ok := nodeRack[n]; ok {
				bad("node %q appears twice (racks %q and %q)", n, prev, r.Name)
			}
			nodeRack[n] = r.Name
		}
		if r.UplinkRateBps != 0 && !positive(r.UplinkRateBps) {
			bad("rack %q: uplink_rate_bps must be positive and finite, got %g", r.Name, r.UplinkRateBps)
		}
	}
	if d.Backbone == nil {
		if len(d.Racks) > 1 {
			bad("%d racks but no [backbone]", len(d.Racks))
		}
	} else {
		b := d.Backbone
		switch b.Topology {
		case TopologyCable:
			if len(d.Racks) != 2 {
				bad("backbone topology %q joins exactly 2 racks, got %d", b.Topology, len(d.Racks))
			}
			for _, r := range d.Racks {
				if r.UplinkRateBps != 0 {
					bad("rack %q: uplink_rate_bps is for topology %q, not %q", r.Name, TopologyCore, TopologyCable)
				}
			}
		case TopologyCore:
		default:
			bad("backbone topology must be %q or %q, got %q", TopologyCable, TopologyCore, b.Topology)
		}
		if b.Kind != KindElectrical && b.Kind != KindOptical {
			bad("backbone kind must be %q or %q, got %q", KindElectrical, KindOptical, b.Kind)
		}
		if !positive(b.RateBps) {
			bad("backbone rate_bps must be positive and finite, got %g", b.RateBps)
		}
	}
	addrs := map[string]string{}
	seen := map[string]bool{}
	for _, ns := range d.Node {
		if _, ok := nodeRack[ns.Name]; !ok {
			bad("[[node]] %q is not in any rack", ns.Name)
		}
		if seen[ns.Name] {
			bad("[[node]] %q appears twice", ns.Name)
		}
		seen[ns.Name] = true
		if ns.NICRateBps != 0 && !positive(ns.NICRateBps) {
			bad("node %q: nic_rate_bps must be positive and finite, got %g", ns.Name, ns.NICRateBps)
		}
		if ns.Addr != "" {
			if prev, ok := addrs[ns.Addr]; ok {
				bad("address %s given to both %q and %q", ns.Addr, prev, ns.Name)
			}
			addrs[ns.Addr] = ns.Name
		}
	}
	return errors.Join(errs...)
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
		return nil, fmt.Errorf("cluster: %q is neither a file nor a built-in cluster (%s)", ref, strings.Join(Examples(), ", "))
	}
	c, err := Parse(data, "toml")
	if err != nil {
		return nil, fmt.Errorf("built-in cluster %s: %w", ref, err)
	}
	return c, nil
}
