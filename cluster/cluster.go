package cluster

import (
	"fmt"
	"slices"

	"github.com/commcal/commcal/internal/badinput"
)

// Node is one compute node of a cluster.
type Node struct {
	Name       string
	Rack       string
	RackIndex  int
	NICRateBps float64
	Addr       string
}

// ResourceKind says what a directed resource is.
type ResourceKind uint8

// Directed resource kinds. Each physical full-duplex link yields two resources.
const (
	NICOut     ResourceKind = iota // node → its switch
	NICIn                          // switch → node
	UplinkUp                       // rack switch → core router
	UplinkDown                     // core router → rack switch
	BackboneAB                     // cable backbone, first rack → second rack
	BackboneBA                     // cable backbone, second rack → first rack
)

var kindNames = [...]string{"nic-out", "nic-in", "uplink-up", "uplink-down", "backbone", "backbone"}

func (k ResourceKind) String() string { return kindNames[k] }

// Resource is one direction of one link. ID indexes Cluster.Resources.
type Resource struct {
	ID      int
	Kind    ResourceKind
	Owner   string // the node (NIC), the rack (uplink) or "A->B" (backbone)
	RateBps float64
	// Reverse is the ID of the same link's other direction.
	Reverse int
}

// Name is a stable, human-readable identifier such as "nic-out:X1" or "backbone:X->Y".
func (r Resource) Name() string { return r.Kind.String() + ":" + r.Owner }

// PathClass groups transfers whose paths have the same shape, for per-class Hockney fits.
type PathClass string

// Path classes.
const (
	IntraRack PathClass = "intra-rack"
	InterRack PathClass = "inter-rack"
)

// PathClasses lists every path class, in the order reports list them.
func PathClasses() []PathClass { return []PathClass{IntraRack, InterRack} }

// Cluster is a checked description with its nodes and directed resources laid out.
type Cluster struct {
	desc      Description
	nodes     []Node
	nodeIndex map[string]int
	racks     []string
	rackNodes [][]string // node names per rack, in description order
	resources []Resource
	nicOut    []int // per node
	uplinkUp  []int // per rack (TopologyCore)
	backbone  [2]int
	byAddr    map[string]string
}

// New checks a description and builds its cluster. A description that breaks a rule or a size
// limit is bad input (internal/badinput); the message lists the problems on one line, naming
// the rack, node or key of each.
func New(d Description) (*Cluster, error) {
	c, err := build(d)
	if err != nil {
		return nil, badinput.Wrap("", err)
	}
	return c, nil
}

// build checks a description and lays out its cluster.
func build(d Description) (*Cluster, error) {
	rackNodes, err := d.check()
	if err != nil {
		return nil, err
	}
	nNodes := 0
	for _, names := range rackNodes {
		nNodes += len(names)
	}
	c := &Cluster{desc: d, nodeIndex: make(map[string]int, nNodes), byAddr: map[string]string{},
		nodes: make([]Node, 0, nNodes), nicOut: make([]int, 0, nNodes), resources: make([]Resource, 0, 2*(nNodes+len(d.Racks)))}
	over := map[string]NodeSettings{}
	for _, ns := range d.Node {
		over[ns.Name] = ns
	}
	add := func(kind ResourceKind, owner string, rate float64) int {
		id := len(c.resources)
		c.resources = append(c.resources,
			Resource{ID: id, Kind: kind, Owner: owner, RateBps: rate, Reverse: id + 1},
			Resource{ID: id + 1, Kind: kind + 1, Owner: owner, RateBps: rate, Reverse: id})
		return id
	}
	for ri, r := range d.Racks {
		c.racks = append(c.racks, r.Name)
		c.rackNodes = append(c.rackNodes, rackNodes[ri])
		for _, name := range rackNodes[ri] {
			n := Node{Name: name, Rack: r.Name, RackIndex: ri, NICRateBps: d.NICRateBps}
			if o, ok := over[name]; ok {
				if o.NICRateBps > 0 {
					n.NICRateBps = o.NICRateBps
				}
				n.Addr = o.Addr
				if o.Addr != "" {
					c.byAddr[o.Addr] = name
				}
			}
			c.nodeIndex[name] = len(c.nodes)
			c.nodes = append(c.nodes, n)
			c.nicOut = append(c.nicOut, add(NICOut, name, n.NICRateBps))
		}
	}
	if b := d.Backbone; b != nil {
		switch b.Topology {
		case TopologyCore:
			for _, r := range d.Racks {
				rate := r.UplinkRateBps
				if rate == 0 {
					rate = b.RateBps
				}
				c.uplinkUp = append(c.uplinkUp, add(UplinkUp, r.Name, rate))
			}
		case TopologyCable:
			id := add(BackboneAB, d.Racks[0].Name+"->"+d.Racks[1].Name, b.RateBps)
			c.backbone = [2]int{id, id + 1}
			// Name the reverse direction after its own direction: "backbone:Y->X".
			c.resources[id+1].Owner = d.Racks[1].Name + "->" + d.Racks[0].Name
		}
	}
	return c, nil
}

// Name is the cluster's name, as written in every table's cluster column.
func (c *Cluster) Name() string { return c.desc.Name }

// Description returns a copy of the description the cluster was built from.
func (c *Cluster) Description() Description { return c.desc }

// Nodes lists the nodes, rack by rack, in the order the description gives them.
func (c *Cluster) Nodes() []Node { return c.nodes }

// NodeNames lists the nodes' names in the description's order.
func (c *Cluster) NodeNames() []string {
	names := make([]string, len(c.nodes))
	for i, n := range c.nodes {
		names[i] = n.Name
	}
	return names
}

// PlaceRanks is where procs ranks run that are placed one per node in the description's
// order from root's node, wrapping around after the last node: the placement of a measured
// collective, of which the datasets keep only the root and the process count (a schedule
// design runs its ranks on the first nodes, root first; validation predicts them there). nil
// where root is not a node.
func (c *Cluster) PlaceRanks(root string, procs int) []string {
	at := slices.IndexFunc(c.nodes, func(n Node) bool { return n.Name == root })
	if at < 0 {
		return nil
	}
	ranks := make([]string, procs)
	for i := range ranks {
		ranks[i] = c.nodes[(at+i)%len(c.nodes)].Name
	}
	return ranks
}

// Racks lists the rack names in description order.
func (c *Cluster) Racks() []string { return c.racks }

// RackNodes lists the names of rack r's nodes, in description order, in a new slice the caller
// may change or append to.
func (c *Cluster) RackNodes(r int) []string { return slices.Clone(c.rackNodes[r]) }

// ClassPair is a pair of nodes of one path class.
type ClassPair struct {
	Class    PathClass
	Src, Dst string
}

// ClassPairs gives one pair of nodes per path class the cluster has, the pairs point-to-point
// sweeps use: intra-rack, the first two nodes of the first rack that has two; inter-rack, the
// first nodes of the first two racks.
func (c *Cluster) ClassPairs() []ClassPair {
	var out []ClassPair
	for _, nodes := range c.rackNodes {
		if len(nodes) >= 2 {
			out = append(out, ClassPair{Class: IntraRack, Src: nodes[0], Dst: nodes[1]})
			break
		}
	}
	if len(c.rackNodes) > 1 {
		out = append(out, ClassPair{Class: InterRack, Src: c.rackNodes[0][0], Dst: c.rackNodes[1][0]})
	}
	return out
}

// Resources lists every directed resource; a resource's ID is its index.
func (c *Cluster) Resources() []Resource { return c.resources }

// Node looks a node up by name.
func (c *Cluster) Node(name string) (Node, bool) {
	i, ok := c.nodeIndex[name]
	if !ok {
		return Node{}, false
	}
	return c.nodes[i], true
}

// NodeByAddr maps a network address given in the description to its node.
func (c *Cluster) NodeByAddr(addr string) (string, bool) {
	n, ok := c.byAddr[addr]
	return n, ok
}

// Class says whether a transfer between two nodes stays in one rack.
func (c *Cluster) Class(src, dst string) (PathClass, error) {
	s, d, err := c.pair(src, dst)
	if err != nil {
		return "", err
	}
	if c.nodes[s].RackIndex == c.nodes[d].RackIndex {
		return IntraRack, nil
	}
	return InterRack, nil
}

// Path lists the IDs of the directed resources a transfer from src to dst crosses, in order:
// the sender's NIC (out), then, between racks, the backbone in the transfer's direction or the
// sender rack's uplink (up) and the receiver rack's uplink (down), then the receiver's NIC (in).
func (c *Cluster) Path(src, dst string) ([]int, error) {
	s, d, err := c.pair(src, dst)
	if err != nil {
		return nil, err
	}
	out, in := c.nicOut[s], c.nicOut[d]+1
	rs, rd := c.nodes[s].RackIndex, c.nodes[d].RackIndex
	if rs == rd {
		return []int{out, in}, nil
	}
	if c.desc.Backbone.Topology == TopologyCable {
		return []int{out, c.backbone[rs], in}, nil
	}
	return []int{out, c.uplinkUp[rs], c.uplinkUp[rd] + 1, in}, nil
}

func (c *Cluster) pair(src, dst string) (int, int, error) {
	s, ok := c.nodeIndex[src]
	if !ok {
		return 0, 0, fmt.Errorf("cluster %s: no node %q", c.desc.Name, src)
	}
	d, ok := c.nodeIndex[dst]
	if !ok {
		return 0, 0, fmt.Errorf("cluster %s: no node %q", c.desc.Name, dst)
	}
	if s == d {
		return 0, 0, fmt.Errorf("cluster %s: transfer from %q to itself", c.desc.Name, src)
	}
	return s, d, nil
}
