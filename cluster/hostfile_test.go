package cluster

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/commcal/commcal/internal/badinput"
)

// TestFromHostFileSyntaxes reads the forms both launchers document: Open MPI's mpirun(1)
// "hostfile" section (host slots=N max_slots=M, # comments, blank lines) with what its lexer
// also takes (synonyms, spaces around '=', user@host, ^host, // and /* */ comments, IP
// addresses), and MPICH hydra's machinefile (host:N followed by user= or binding=; ifhn=
// from MPD's). A host listed twice is taken once, in the order of first listing.
func TestFromHostFileSyntaxes(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []string
	}{
		{"open mpi", "# hosts\nnode1 slots=4\nnode2 slots=2 max_slots=8\n\nnode1 slots=4\nnode3\n", []string{"node1", "node2", "node3"}},
		{"mpich", "node1:8\nnode2:2 binding=user:0,1 user=alice\nnode3:1 ifhn=192.168.0.3\n", []string{"node1", "node2", "node3"}},
		{"synonyms and spaces", "a count=2 max-slots=4\nb cpu = 2 cpu_max =2\nc slots= 1 username=bob cores=0 boards=1 sockets_per_board=2 cpu_set=0-3\n", []string{"a", "b", "c"}},
		{"comments", "a # x\nb // y\nc /* block\nstill */\n/* one */ d slots=1 /* two */ max_slots=2\n", []string{"a", "b", "c", "d"}},
		{"user and exclusion", "bob@a\nb\n^b\n^c\n", []string{"a"}},
		{"addresses", "10.0.0.1 slots=2\n10.0.0.2:4\nfe80::1\n2001:db8::7 slots=1\n", []string{"10.0.0.1", "10.0.0.2", "fe80::1", "2001:db8::7"}},
		{"crlf and names", "graphene-1.nancy.grid5000.fr\r\nnode_7\r\n123\r\n", []string{"graphene-1.nancy.grid5000.fr", "node_7", "123"}},
		{"no final newline", "a\nb", []string{"a", "b"}},
	} {
		d, err := FromHostFile(strings.NewReader(tc.in), "lab", Rates{NICBps: 1e9})
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if cl, err := New(d); err != nil || !slices.Equal(d.Racks[0].Nodes, tc.want) || len(cl.Racks()) != 1 {
			t.Errorf("%s: nodes %v (%v), want %v", tc.name, d.Racks[0].Nodes, err, tc.want)
		}
	}
}

// TestFromHostFileRefuses is a case per check: what Open MPI's or MPICH's reader refuses (or
// would take for a host name that no launcher can reach) is bad input naming the line.
func TestFromHostFileRefuses(t *testing.T) {
	long := "node1 # " + strings.Repeat("x", maxHostLineBytes) + "\n"
	for _, tc := range []struct{ name, in, want string }{
		{"zero slots", "node1\nnode2 slots=0\n", `line 2: "slots=0": want a whole number from 1 to 1048576`},
		{"slots not a number", "node1 slots=abc\n", `line 1: "slots=abc": want a whole number from 1 to 1048576`},
		{"negative slots", "node1 slots=-1\n", `line 1: "slots=-1": want a whole number`},
		{"fractional slots", "node1 slots=1.5\n", `"slots=1.5": want a whole number`},
		{"huge slots", "node1 slots=99999999999999999999\n", `"slots=99999999999999999999": want a whole number from 1 to 1048576`},
		{"zero count", "node1:0\n", `line 1: "node1:0": want a whole number from 1 to 1048576`},
		{"no count", "node1:\n", `line 1: "node1:": no count after ':'`},
		{"unknown keyword", "node1 slotz=4\n", `line 1: unknown keyword "slotz": a host takes slots=`},
		{"keyword case", "node1 Slots=4\n", `unknown keyword "Slots"`},
		{"no value", "node1 user=\n", `line 1: "user=" has no value`},
		{"keyword twice", "node1 slots=2 count=4\n", `line 1: slots given twice on the line ("slots=2" and "count=4")`},
		{"count and slots", "node1:2 slots=2\n", `slots given twice on the line ("node1:2" and "slots=2")`},
		{"max below slots", "node1 slots=4 max_slots=2\n", "line 1: max_slots 2 is less than slots 4"},
		{"max below count", "node1:8 max-slots=2\n", "max_slots 2 is less than slots 8"},
		{"comma list", "node1,node2\n", `line 1: "node1,node2": a comma-separated list is --host syntax`},
		{"leading option", "slots=4\n", `line 1: "slots=4" where a host name is expected`},
		{"two hosts", "node1 node2\n", `line 1: "node2" after the host: want keyword=value`},
		{"bad character", "no!de\n", `line 1: "no!de" is not a host name: byte 2 is "!"`},
		{"non-ascii", "n\xc3\xb6de\n", `byte 1 is "\xc3"`},
		{"empty label", "node..lab\n", "is not a host name: it has an empty label"},
		{"hyphen", "-node\n", `the label "-node" starts or ends with '-'`},
		{"long label", strings.Repeat("a", 64) + "\n", "a label is 64 bytes long, at most 63"},
		{"long name", strings.Repeat("abcdefg.", 32) + "a\n", "it is 257 bytes long, at most 253"},
		{"bad ipv4", "10.0.0.256\n", "it is not an IPv4 address"},
		{"ipv6 zone", "fe80::1%eth0\n", "an address with a zone"},
		{"two at signs", "a@b@c\n", `line 1: "a@b@c": want user@host`},
		{"relative node", "+n0\n", `"+n0" is not a host name`},
		{"long line", long, "line 1: longer than 65536 bytes"},
		{"empty", "", "no host: every line is blank, a comment or an excluded ^host"},
		{"only comments", "# a\n\n  // b\n", "no host"},
		{"all excluded", "a\n^a\n", "no host"},
	} {
		_, err := FromHostFile(strings.NewReader(tc.in), "lab", Rates{NICBps: 1e9})
		checkInputError(t, tc.name, err, "", tc.want)
	}
}

// TestFromHostFileBounds: more hosts than a cluster may have are refused at the line that
// passes the limit, and an input larger than maxFileBytes at the line where it does.
func TestFromHostFileBounds(t *testing.T) {
	var b strings.Builder
	for i := 0; i <= maxNodes; i++ {
		fmt.Fprintf(&b, "n%d\n", i)
	}
	_, err := FromHostFile(strings.NewReader(b.String()), "big", Rates{NICBps: 1e9})
	checkInputError(t, "65,537 hosts", err, "", "line 65537: more than 65536 hosts")

	comment := "#" + strings.Repeat("c", 1000) + "\n"
	_, err = FromHostFile(strings.NewReader(strings.Repeat(comment, maxFileBytes/len(comment)+1)), "big", Rates{NICBps: 1e9})
	checkInputError(t, "17 MB of comments", err, "", fmt.Sprintf("line %d: the input passes 16 MiB", maxFileBytes/len(comment)+1))
}

// FuzzFromHostFile: any input gives either bad input on one line under 1 KB, naming a line
// when it is about one, or one rack of distinct host names that builds into a cluster.
func FuzzFromHostFile(f *testing.F) {
	for _, s := range []string{
		"# hosts\nnode1 slots=4 max_slots=8\nnode2:8\n\nnode3\n",
		"node1:2 binding=user:0,1 user=alice\n^node1\nbob@node2 /* c\n*/\n",
		"node1 slots = 4 // c\n10.0.0.1\nfe80::1 slots=2\n",
		"node1,node2\nslots=4\nnode1 slotz=4\nnode1 slots=0\nnode1:x\n",
		"a@b@c\n-node\nnode..x\n\xff\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := FromHostFile(strings.NewReader(s), "fuzz", Rates{NICBps: 1e9})
		if err != nil {
			msg := err.Error()
			if !isOneLineBadInput(err) {
				t.Fatalf("error %q: want bad input on one line under 1 KB", msg)
			}
			if !strings.HasPrefix(msg, "line ") && !strings.HasPrefix(msg, "no host") {
				t.Fatalf("error %q names no line", msg)
			}
			return
		}
		nodes := d.Racks[0].Nodes
		if len(d.Racks) != 1 || len(nodes) == 0 || len(nodes) > maxNodes {
			t.Fatalf("%d racks, %d nodes", len(d.Racks), len(nodes))
		}
		for _, n := range nodes {
			if p := hostNameProblem(n); p != "" {
				t.Fatalf("host %q accepted, but %s", n, p)
			}
		}
		if _, err := New(d); err != nil {
			t.Fatalf("an accepted host file does not build: %v", err)
		}
	})
}

// isOneLineBadInput reports whether err is bad input with a one-line message under 1 KB.
func isOneLineBadInput(err error) bool {
	msg := err.Error()
	return badinput.Is(err) && !strings.ContainsAny(msg, "\r\n") && len(msg) <= 1000
}
