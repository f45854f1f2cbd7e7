package cluster

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/commcal/commcal/internal/badinput"
)

// writeFile writes a description into a temporary directory and returns its path.
func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// checkInputError asserts that err is bad input whose one-line message, under 1 KB, names the
// file and contains every want.
func checkInputError(t *testing.T, what string, err error, file string, want ...string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: no error", what)
		return
	}
	msg := err.Error()
	if !badinput.Is(err) {
		t.Errorf("%s: %q is not marked as bad input", what, msg)
	}
	if strings.ContainsAny(msg, "\r\n") || len(msg) > 1000 {
		t.Errorf("%s: message spans several lines or passes 1 KB: %q", what, msg)
	}
	if file != "" && !strings.HasPrefix(msg, file+": ") {
		t.Errorf("%s: message %q does not start with the file %s", what, msg, file)
	}
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("%s: message %q does not mention %q", what, msg, w)
		}
	}
}

// racksTOML describes a core-topology cluster of racks numbered ranges.
func racksTOML(racks, perRack int) string {
	var b strings.Builder
	b.WriteString("name = \"big\"\nnic_rate_bps = 1e9\n[backbone]\ntopology = \"core\"\nkind = \"electrical\"\nrate_bps = 1e10\n")
	for r := 1; r <= racks; r++ {
		fmt.Fprintf(&b, "[[rack]]\nname = \"r%d\"\nnode_prefix = \"n%d-\"\nnode_count = %d\n", r, r, perRack)
	}
	return b.String()
}

// TestSizeLimitsBeforeAllocating is the report of a 1 KB cluster file with 16 racks of
// 1,048,576 numbered nodes that ran out of memory: it is refused, naming the file and the
// rack, without laying out a single node.
func TestSizeLimitsBeforeAllocating(t *testing.T) {
	text := strings.NewReplacer(" = ", "=", "node_prefix=\"n", "node_prefix=\"").Replace(racksTOML(16, 1<<20))
	if len(text) > 1024 {
		t.Fatalf("the description is %d bytes, the report's was under 1 KB", len(text))
	}
	path := writeFile(t, "huge.toml", text)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := Load(path)
	runtime.ReadMemStats(&after)
	checkInputError(t, "16 × 1,048,576 nodes", err, path, `rack 1 ("r1"): node_count 1048576 outside [0, 65536]`)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20 {
		t.Errorf("refusing the description allocated %d bytes; the sizes must be checked before allocating", grew)
	}

	// Racks within the per-rack bound but too many nodes in all: the rack where the total
	// passes the limit is named.
	_, err = Parse([]byte(racksTOML(3, 30_000)), "toml")
	checkInputError(t, "3 × 30,000 nodes", err, "", "90000 nodes in all, at most 65536", `rack 3 ("r3")`)

	// Too many racks.
	_, err = Parse([]byte(racksTOML(maxRacks+1, 1)), "toml")
	checkInputError(t, "4,097 racks", err, "", "4097 racks, at most 4096")

	// A range whose numbers overflow.
	_, err = Parse([]byte(strings.Replace(racksTOML(1, 2), "node_count", "node_first = 9223372036854775807\nnode_count", 1)), "toml")
	checkInputError(t, "overflowing range", err, "", `rack 1 ("r1"): node_first 9223372036854775807 + node_count 2 overflows`)

	// A file larger than any description: refused before it is read.
	big := filepath.Join(t.TempDir(), "big.toml")
	if err := os.WriteFile(big, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, maxFileBytes+1); err != nil {
		t.Fatal(err)
	}
	_, err = Load(big)
	checkInputError(t, "17 MB file", err, big, "larger than 16 MiB")
}

// TestSizesThatMustWork: the 1,000-node all-to-all target in 20 racks, and the limits
// themselves.
func TestSizesThatMustWork(t *testing.T) {
	c, err := Parse([]byte(racksTOML(20, 50)), "toml")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Nodes()) != 1000 || len(c.Racks()) != 20 || len(c.Resources()) != 2*1000+2*20 {
		t.Fatalf("%d nodes, %d racks, %d resources", len(c.Nodes()), len(c.Racks()), len(c.Resources()))
	}
	nodes := c.Nodes()
	for _, pair := range [][2]int{{0, 999}, {999, 0}, {0, 1}, {500, 549}} {
		ids, err := c.Path(nodes[pair[0]].Name, nodes[pair[1]].Name)
		if err != nil || (len(ids) != 2 && len(ids) != 4) {
			t.Errorf("path %v: %v %v", pair, ids, err)
		}
	}
	if c, err := Parse([]byte(racksTOML(16, maxNodes/16)), "toml"); err != nil || len(c.Nodes()) != maxNodes {
		t.Errorf("%d nodes (the limit): %v", maxNodes, err)
	}
	if c, err := Parse([]byte(racksTOML(maxRacks, 1)), "toml"); err != nil || len(c.Racks()) != maxRacks {
		t.Errorf("%d racks (the limit): %v", maxRacks, err)
	}
}

// TestBadNames: names with control characters, invalid UTF-8 or nothing in them are refused
// with the position of the name.
func TestBadNames(t *testing.T) {
	base := "name = \"x\"\nnic_rate_bps = 1e9\n"
	cases := []struct{ name, toml, want string }{
		{"NUL in a node", base + "[[rack]]\nname = \"r\"\nnodes = [\"a\", \"b\\u0000c\"]\n", `rack 1 ("r"): node 2 of nodes: name "b\x00c" contains the control character U+0000 at byte 1`},
		{"newline in a node", base + "[[rack]]\nname = \"r\"\nnodes = [\"a\\nb\"]\n", `node 1 of nodes: name "a\nb" contains the control character U+000A`},
		{"tab in a node", base + "[[rack]]\nname = \"r\"\nnodes = [\"a\\tb\"]\n", "U+0009"},
		{"escape in a node", base + "[[rack]]\nname = \"r\"\nnodes = [\"a\\u001b[31m\"]\n", "U+001B"},
		{"bidi override in a node", base + "[[rack]]\nname = \"r\"\nnodes = [\"a\\u202Eb\"]\n", "U+202E"},
		{"DEL in a node", base + "[[rack]]\nname = \"r\"\nnodes = [\"a\\u007F\"]\n", "U+007F"},
		{"empty node", base + "[[rack]]\nname = \"r\"\nnodes = [\"a\", \"\"]\n", `node 2 of nodes: name "" is empty`},
		{"blank node", base + "[[rack]]\nname = \"r\"\nnodes = [\" \"]\n", `name " " is empty`},
		{"long node", base + "[[rack]]\nname = \"r\"\nnodes = [\"" + strings.Repeat("a", 256) + "\"]\n", "is 256 bytes long, at most 255"},
		{"newline in a rack", base + "[[rack]]\nname = \"r\\n\"\nnodes = [\"a\"]\n", `rack 1: name "r\n" contains the control character U+000A`},
		{"empty rack", base + "[[rack]]\nname = \"\"\nnodes = [\"a\"]\n", `rack 1: name "" is empty`},
		{"NUL in a prefix", base + "[[rack]]\nname = \"r\"\nnode_prefix = \"n\\u0000\"\nnode_count = 2\n", `rack 1 ("r"): node_prefix "n\x00" contains the control character U+0000`},
		{"long prefix", base + "[[rack]]\nname = \"r\"\nnode_prefix = \"" + strings.Repeat("n", 254) + "\"\nnode_count = 20\n", "are longer than 255 bytes"},
		{"NUL in the cluster", "name = \"x\\u0000\"\nnic_rate_bps = 1e9\n[[rack]]\nname = \"r\"\nnodes = [\"a\"]\n", `name "x\x00" contains`},
		{"newline in an address", base + "[[rack]]\nname = \"r\"\nnodes = [\"a\"]\n[[node]]\nname = \"a\"\naddr = \"10.0.0.1\\n\"\n", `[[node]] 1 ("a"): addr "10.0.0.1\n" contains the control character U+000A`},
	}
	for _, tc := range cases {
		_, err := Parse([]byte(tc.toml), "toml")
		checkInputError(t, tc.name, err, "", tc.want)
	}
	// JSON the same.
	_, err := Parse([]byte(`{"name":"x","nic_rate_bps":1e9,"rack":[{"name":"r","nodes":["a","b\u0000"]}]}`), "json")
	checkInputError(t, "JSON NUL", err, "", `node 2 of nodes: name "b\x00" contains the control character U+0000`)
	// Spaces and non-ASCII letters inside a name are fine.
	if _, err := Parse([]byte(base+"[[rack]]\nname = \"salle Ω\"\nnodes = [\"nœud 1\", \"n-2.lab\"]\n"), "toml"); err != nil {
		t.Error(err)
	}
}

// TestLoadErrorsAreBadInput: every error caused by the file is bad input naming it, on one
// line, with the key, line or rack where that applies.
func TestLoadErrorsAreBadInput(t *testing.T) {
	goodJSON := `{"name":"lab","nic_rate_bps":1e9,"rack":[{"name":"r1","nodes":["a","b"]}]}`
	cases := []struct {
		name, file, text string
		want             []string
	}{
		{"TOML syntax", "c.toml", "name = \n", []string{"cluster: toml: line"}},
		{"TOML type", "c.toml", "name = 1\n", []string{"name"}},
		{"TOML duplicate key", "c.toml", "name = \"a\"\nname = \"b\"\n", []string{"name"}},
		{"TOML unknown key", "c.toml", "colour = \"red\"\n" + heteroTOML, []string{`unknown key(s) "colour"`}},
		{"TOML bad value", "c.toml", strings.Replace(heteroTOML, "nic_rate_bps = 1e9", "nic_rate_bps = -1", 1), []string{"nic_rate_bps must be positive"}},
		{"JSON syntax", "c.json", "{\"name\":\n\"x\",}", []string{"line 2, column 5"}},
		{"JSON trailing document", "c.json", goodJSON + "\n" + goodJSON, []string{"line 2, column 1", "more data after the end of the JSON document"}},
		{"JSON trailing garbage", "c.json", goodJSON + " x", []string{"more data after the end"}},
		{"JSON duplicate top-level key", "c.json", `{"name":"a","name":"b","nic_rate_bps":1,"rack":[]}`, []string{`key "name" appears twice in the top-level object`}},
		{"JSON duplicate nested key", "c.json", `{"name":"a","nic_rate_bps":1,"rack":[{"name":"r","nodes":["a"]},{"name":"s","nodes":["b"],"name":"t"}]}`,
			[]string{`key "name" appears twice in rack[1]`, "line 1, column"}},
		{"JSON keys differing in case", "c.json", `{"name":"a","NAME":"b"}`, []string{`key "NAME" repeats "name" in the top-level object`}},
		{"JSON unknown field", "c.json", `{"name":"a","colour":1}`, []string{`unknown key "colour"`}},
		{"JSON type", "c.json", `{"name":1}`, []string{"line 1, column 10: name: JSON number, want a string"}},
		{"JSON type nested", "c.json", `{"name":"x","rack":[{"name":"r","node_count":"3"}]}`, []string{"rack.node_count: JSON string, want a number that fits int"}},
		{"JSON empty", "c.json", "  \n", []string{"no JSON document"}},
		{"JSON truncated", "c.json", `{"name":"a"`, []string{"ends inside a JSON value"}},
		{"JSON bad value", "c.json", `{"name":"a","nic_rate_bps":0,"rack":[{"name":"r","nodes":["a"]}]}`, []string{"nic_rate_bps must be positive"}},
		{"unknown extension", "c.yaml", "name: x\n", []string{`unknown extension ".yaml"`}},
	}
	for _, tc := range cases {
		path := writeFile(t, tc.file, tc.text)
		_, err := Load(path)
		checkInputError(t, tc.name, err, path, tc.want...)
		if _, err := LoadNamed(path); err == nil || !badinput.Is(err) {
			t.Errorf("%s: LoadNamed: %v", tc.name, err)
		}
	}
	missing := filepath.Join(t.TempDir(), "missing.toml")
	_, err := LoadNamed(missing)
	checkInputError(t, "missing file", err, missing, "no such file")
	dir := t.TempDir() + "/d.toml"
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	_, err = Load(dir)
	checkInputError(t, "directory", err, dir, "is a directory")
	_, err = LoadNamed("no-such-cluster")
	checkInputError(t, "unknown built-in", err, "no-such-cluster", "neither a file nor a built-in cluster (ccpe-testbed, graphene)")
	_, err = New(Description{Name: "x"})
	checkInputError(t, "New", err, "", "nic_rate_bps must be positive", "no [[rack]] given")
	// Many problems stay on one line, ten of them and a count.
	many := "name = \"x\"\nnic_rate_bps = 1\n[[rack]]\nname = \"r\"\nnodes = [" + strings.Repeat(`"", `, 25) + "\"a\"]\n"
	_, err = Parse([]byte(many), "toml")
	checkInputError(t, "25 problems", err, "", "; and ", " more")

	// Valid JSON with trailing white space is one document.
	if _, err := Load(writeFile(t, "ok.json", goodJSON+"\n\n")); err != nil {
		t.Error(err)
	}
}
