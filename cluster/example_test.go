package cluster_test

import (
	"fmt"
	"log"

	"github.com/commcal/commcal/cluster"
)

// Parse reads a description (TOML here), checks it and lays the cluster out: racks of named
// or numbered nodes, and for each transfer the directed resources it crosses. Between the
// two racks of a cable backbone a transfer crosses the sender's NIC, the cable in its
// direction and the receiver's NIC.
func ExampleParse() {
	desc := `
name = "lab"
nic_rate_bps = 1e9

[backbone]
topology = "cable"
kind = "electrical"
rate_bps = 1e9

[[rack]]
name = "a"
node_prefix = "a"
node_first = 1
node_count = 3

[[rack]]
name = "b"
nodes = ["b1", "b2"]
`
	cl, err := cluster.Parse([]byte(desc), "toml")
	if err != nil {
		log.Fatal(err)
	}
	for i, rack := range cl.Racks() {
		fmt.Println("rack", rack, cl.RackNodes(i))
	}
	res := cl.Resources()
	for _, pair := range [][2]string{{"a1", "a3"}, {"a1", "b2"}, {"b2", "a1"}} {
		class, err := cl.Class(pair[0], pair[1])
		if err != nil {
			log.Fatal(err)
		}
		path, err := cl.Path(pair[0], pair[1])
		if err != nil {
			log.Fatal(err)
		}
		var crossed []string
		for _, id := range path {
			crossed = append(crossed, res[id].Name())
		}
		fmt.Println(pair[0], "→", pair[1], class, crossed)
	}
	// Output:
	// rack a [a1 a2 a3]
	// rack b [b1 b2]
	// a1 → a3 intra-rack [nic-out:a1 nic-in:a3]
	// a1 → b2 inter-rack [nic-out:a1 backbone:a->b nic-in:b2]
	// b2 → a1 inter-rack [nic-out:b2 backbone:b->a nic-in:a1]
}

// A description that breaks rules is refused with every problem on one line, each naming
// its rack, node or key.
func ExampleParse_invalid() {
	desc := `
name = "lab"
nic_rate_bps = 1e9

[[rack]]
name = "a"
nodes = ["n1", "n2"]

[[rack]]
name = "b"
nodes = ["n2"]
`
	_, err := cluster.Parse([]byte(desc), "toml")
	fmt.Println(err)
	// Output:
	// cluster: node "n2" appears twice (rack 1 ("a") and rack 2 ("b")); 2 racks but no [backbone]
}

// LoadNamed loads one of the descriptions built into the binary by its name (see Examples),
// or a description file by its path. Graphene's racks hang off a core router: a transfer
// between racks crosses its sender rack's uplink up and its receiver rack's down.
func ExampleLoadNamed() {
	cl, err := cluster.LoadNamed("graphene")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(cl.Name(), len(cl.Nodes()), "nodes in", len(cl.Racks()), "racks")
	path, err := cl.Path("graphene-1", "graphene-144")
	if err != nil {
		log.Fatal(err)
	}
	for _, id := range path {
		fmt.Println(cl.Resources()[id].Name())
	}
	// Output:
	// graphene 144 nodes in 4 racks
	// nic-out:graphene-1
	// uplink-up:sgraphene1
	// uplink-down:sgraphene4
	// nic-in:graphene-144
}
