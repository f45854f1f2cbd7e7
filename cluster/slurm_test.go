package cluster

import (
	"slices"
	"strings"
	"testing"
)

func TestExpandHostList(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"n[1-3,7]", []string{"n1", "n2", "n3", "n7"}},
		{"n[08-10]", []string{"n08", "n09", "n10"}},
		{"a,b[1-2],c", []string{"a", "b1", "b2", "c"}},
		{"r[1-2]n[1-2]", []string{"r1n1", "r1n2", "r2n1", "r2n2"}},
		{"graphene-[1-3]-eth0", []string{"graphene-1-eth0", "graphene-2-eth0", "graphene-3-eth0"}},
	} {
		got, err := ExpandHostList(tc.in)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("ExpandHostList(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"n[1-", "n]1[", "n[3-1]", "n[a-b]", "a,,b", "n[0-100000000]"} {
		if got, err := ExpandHostList(bad); err == nil {
			t.Errorf("ExpandHostList(%q) = %d names, want an error", bad, len(got))
		}
	}
}

// TestFromSlurmTopology reads a topology.conf as Slurm's documentation writes it (a
// two-level tree) and the same as `scontrol show topology` prints it; the description builds
// into a cluster with the nodes under their leaf switches and uplinks to a core.
func TestFromSlurmTopology(t *testing.T) {
	conf := `# topology.conf
SwitchName=s0 Nodes=dev[0-5]
SwitchName=s1 Nodes=dev[6-11]
SwitchName=s2 Switches=s[0-1]
`
	scontrol := `SwitchName=s0 Level=0 LinkSpeed=1 Nodes=dev[0-5]
SwitchName=s1 Level=0 LinkSpeed=1 Nodes=dev[6-11]
SwitchName=s2 Level=1 LinkSpeed=1 Switches=s[0-1]
`
	for _, in := range []string{conf, scontrol} {
		d, notes, err := FromSlurmTopology(strings.NewReader(in), "dev", Rates{NICBps: 1e9, UplinkBps: 10e9, Kind: KindElectrical})
		if err != nil {
			t.Fatal(err)
		}
		cl, err := New(d)
		if err != nil {
			t.Fatal(err)
		}
		if len(cl.Racks()) != 2 || len(cl.Nodes()) != 12 || d.Backbone.Topology != TopologyCore || len(notes) != 0 {
			t.Fatalf("%d racks, %d nodes, backbone %+v, notes %v", len(cl.Racks()), len(cl.Nodes()), d.Backbone, notes)
		}
		if c, _ := cl.Class("dev0", "dev6"); c != InterRack {
			t.Errorf("dev0 → dev6 is %s", c)
		}
		data, err := EncodeTOML(d)
		if err != nil {
			t.Fatal(err)
		}
		back, err := Parse(data, "toml")
		if err != nil || len(back.Nodes()) != 12 {
			t.Fatalf("the written TOML does not read back: %v\n%s", err, data)
		}
	}
	for _, bad := range []string{"", "SwitchName=s0\n", "Nodes=a\n", "SwitchName=s0 Nodes=a[1-2]\nSwitchName=s1 Nodes=a[2-3]\n", "SwitchName=s0 Nodes=a junk\n"} {
		if _, _, err := FromSlurmTopology(strings.NewReader(bad), "x", Rates{NICBps: 1e9}); err == nil {
			t.Errorf("FromSlurmTopology(%q) accepted", bad)
		}
	}
}

func TestFromHostFile(t *testing.T) {
	d, err := FromHostFile(strings.NewReader("# hosts\nnode1 slots=4\nnode2:8\n\nnode1 slots=4\nnode3\n"), "lab", Rates{NICBps: 1e9})
	if err != nil {
		t.Fatal(err)
	}
	if cl, err := New(d); err != nil || !slices.Equal(d.Racks[0].Nodes, []string{"node1", "node2", "node3"}) || len(cl.Racks()) != 1 {
		t.Fatalf("%+v, %v", d, err)
	}
}

// TestBadRuneOneRule: the one rule every reader of names applies refuses control, format and
// separator characters alike (U+2028 was accepted by cluster files and refused by dataset
// rows, so such a node could never be measured).
func TestBadRuneOneRule(t *testing.T) {
	for _, s := range []string{"a\x00b", "a\nb", "a\u202eb", "a\u200db", "a\u2028b", "a\u2029b", "a\x7fb"} {
		if i, _ := BadRune(s); i != 1 {
			t.Errorf("BadRune(%q) = %d, want 1", s, i)
		}
	}
	if i, _ := BadRune("graphene-1.nancy.grid5000.fr"); i != -1 {
		t.Errorf("a host name refused at %d", i)
	}
}
