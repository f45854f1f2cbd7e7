package cluster

import (
	"slices"
	"strings"
	"testing"

	"github.com/commcal/commcal/internal/badinput"
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
}

// TestFromSlurmTopologyForms reads what Slurm writes besides the plain tree: scontrol's
// lines for an upper switch, which list the nodes beneath it as well as its child switches;
// continued lines; keys in any case; an empty leaf switch, left out with a note.
func TestFromSlurmTopologyForms(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		racks    []string
		nodes    int
		notes    []string
	}{
		{"scontrol upper switch", "SwitchName=s0 Level=0 LinkSpeed=1 Nodes=dev[0-5]\nSwitchName=s1 Level=0 LinkSpeed=1 Nodes=dev[6-11]\nSwitchName=s2 Level=1 LinkSpeed=1 Nodes=dev[0-11] Switches=s[0-1]\n",
			[]string{"s0", "s1"}, 12, nil},
		{"continuation", "SwitchName=s0 \\\n  Nodes=a[1-2],\\ # a comment\na3\nSwitchName=s1 Nodes=b1\n", []string{"s0", "s1"}, 4, nil},
		{"key case", "switchname=s0 NODES=a1\nSWITCHNAME=s1 nodes=b1 linkspeed=10\n", []string{"s0", "s1"}, 2, nil},
		{"empty leaf", "SwitchName=s0 Nodes=a[1-2]\nSwitchName=spare\nSwitchName=s1 Nodes=b1\nSwitchName=top Switches=s0,s1,spare\n",
			[]string{"s0", "s1"}, 3, []string{"switch spare (line 2) has no nodes: left out"}},
		{"deeper tree", "SwitchName=l0 Nodes=a1\nSwitchName=l1 Nodes=b1\nSwitchName=m0 Switches=l0\nSwitchName=m1 Switches=l1\nSwitchName=top Switches=m[0-1]\n",
			[]string{"l0", "l1"}, 2, []string{"the topology has 3 switches above the leaves; commcal models one core router above 2 racks"}},
	} {
		d, notes, err := FromSlurmTopology(strings.NewReader(tc.in), "x", Rates{NICBps: 1e9, UplinkBps: 1e10, Kind: KindElectrical})
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		cl, err := New(d)
		if err != nil || !slices.Equal(cl.Racks(), tc.racks) || len(cl.Nodes()) != tc.nodes || !slices.Equal(notes, tc.notes) {
			t.Errorf("%s: racks %v, %d nodes, notes %q (%v); want %v, %d, %q", tc.name, d.Racks, len(d.Racks), notes, err, tc.racks, tc.nodes, tc.notes)
		}
	}
}

// TestFromSlurmTopologyRefuses is a case per check: what Slurm refuses in topology.conf, and
// what commcal cannot model, is bad input naming the line.
func TestFromSlurmTopologyRefuses(t *testing.T) {
	long := "SwitchName=s0 Nodes=a1 # " + strings.Repeat("x", maxSlurmLineBytes) + "\n"
	for _, tc := range []struct{ name, in, want string }{
		{"empty", "", "no switch with Nodes="},
		{"no nodes anywhere", "SwitchName=s0\n", "no switch with Nodes="},
		{"no switch name", "Nodes=a\n", "line 1: no SwitchName"},
		{"not key=value", "SwitchName=s0 Nodes=a junk\n", `line 1: "junk" is not Key=Value`},
		{"nodes twice", "# c\nSwitchName=s0 Nodes=a[1-2] Nodes=a3\n", "line 2: Nodes given twice"},
		{"name twice in other case", "SwitchName=s0 switchname=s1 Nodes=a\n", "line 1: SwitchName given twice"},
		{"unknown key", "SwitchName=s0 Nodez=a\n", `line 1: unknown key "Nodez": a switch line takes SwitchName, Switches, Nodes and LinkSpeed`},
		{"block topology", "BlockName=b1 Nodes=a[1-4]\n", `line 1: "BlockName": the block topology (topology/block) is not a tree`},
		{"both in topology.conf", "SwitchName=s0 Nodes=a Switches=s1\nSwitchName=s1 Nodes=b\n", `line 1: switch "s0" has both Nodes and Switches`},
		{"switch twice", "SwitchName=s0 Nodes=a\n\nSwitchName=s0 Nodes=b\n", `line 3: switch "s0" is already defined on line 1`},
		{"node under two leaves", "SwitchName=s0 Nodes=a[1-2]\nSwitchName=s1 Nodes=a[2-3]\n", `line 2: node "a2" is already under the switch of line 1`},
		{"undefined child", "SwitchName=s0 Nodes=a\nSwitchName=s1 Nodes=b\nSwitchName=top Switches=s[0-2]\n", `line 3: switch "top" lists the child switch "s2", which no other line defines`},
		{"own child", "SwitchName=s0 Nodes=a\nSwitchName=top Switches=top\n", `line 2: switch "top" lists the child switch "top"`},
		{"bad link speed", "SwitchName=s0 Nodes=a LinkSpeed=fast\n", `line 1: LinkSpeed="fast": want a whole number from 0 to 4294967295`},
		{"negative level", "SwitchName=s0 Level=-1 Nodes=a\n", `line 1: Level="-1": want a whole number`},
		{"empty switch name", "SwitchName= Nodes=a\n", "line 1: SwitchName is empty"},
		{"bad host list", "SwitchName=s0 Nodes=a[1-\n", `line 1: Nodes: "a[1-": unbalanced [`},
		{"bad node name", "SwitchName=s0 Nodes=a\x01b\n", `line 1: node "a\x01b" contains the control character U+0001`},
		{"too many nodes", "SwitchName=s0 Nodes=a[0-40000]\nSwitchName=s1 Nodes=b[0-40000]\n", "line 2: more than 65536 nodes under the leaf switches"},
		{"long line", long, "line 1: longer than 1048576 bytes"},
		{"long continuation", strings.Repeat("SwitchName=s0 \\\n", maxSlurmLineBytes/10) + "Nodes=a\n", "line 1: longer than 1048576 bytes with its continuations"},
	} {
		_, _, err := FromSlurmTopology(strings.NewReader(tc.in), "x", Rates{NICBps: 1e9})
		checkInputError(t, tc.name, err, "", tc.want)
	}
}

// FuzzFromSlurmTopology: any input gives either bad input on one line under 1 KB, or a
// description whose racks are disjoint leaf switches with nodes; building it into a cluster
// fails only as bad input (too many racks).
func FuzzFromSlurmTopology(f *testing.F) {
	for _, s := range []string{
		"# topology.conf\nSwitchName=s0 Nodes=dev[0-5]\nSwitchName=s1 Nodes=dev[6-11]\nSwitchName=s2 Switches=s[0-1]\n",
		"SwitchName=s0 Level=0 LinkSpeed=1 Nodes=dev[0-5]\nSwitchName=s2 Level=1 LinkSpeed=1 Nodes=dev[0-5] Switches=s0\n",
		"SwitchName=s0 \\\n Nodes=a[01-03,7],b\nSwitchName=spare\n",
		"SwitchName=s0 Nodes=a Nodes=b\nBlockName=b1\nSwitchName=s0 Nodes=r[1-2]n[1-2]\n",
		"SwitchName=s0 Nodes=n[0-100000000]\nSwitchName=x Switches=y\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, _, err := FromSlurmTopology(strings.NewReader(s), "fuzz", Rates{NICBps: 1e9, UplinkBps: 1e10, Kind: KindElectrical})
		if err != nil {
			if !isOneLineBadInput(err) {
				t.Fatalf("error %q: want bad input on one line under 1 KB", err)
			}
			return
		}
		seen := map[string]bool{}
		for _, r := range d.Racks {
			if len(r.Nodes) == 0 {
				t.Fatalf("rack %q has no nodes", r.Name)
			}
			for _, n := range r.Nodes {
				if seen[n] {
					t.Fatalf("node %q in two racks", n)
				}
				seen[n] = true
			}
		}
		if _, err := New(d); err != nil && !badinput.Is(err) {
			t.Fatalf("an accepted topology fails to build with %v", err)
		}
	})
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
