package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestClusterInputErrors is a case per check of the host file and topology readers as the
// command line reports them: exit status 2, one line under 1 KB that starts with the file and
// names the line, and no description written.
func TestClusterInputErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ name, from, text, want string }{
		{"zero slots", "from-hosts", "node1\nnode2 slots=0\n", `line 2: "slots=0": want a whole number from 1 to 1048576`},
		{"slots not a number", "from-hosts", "node1 slots=abc\n", `line 1: "slots=abc": want a whole number`},
		{"unknown keyword", "from-hosts", "node1 slotz=4\n", `line 1: unknown keyword "slotz"`},
		{"comma list", "from-hosts", "node1,node2\n", `line 1: "node1,node2": a comma-separated list is --host syntax`},
		{"leading option", "from-hosts", "slots=4\n", `line 1: "slots=4" where a host name is expected`},
		{"max below slots", "from-hosts", "node1 slots=4 max_slots=2\n", "line 1: max_slots 2 is less than slots 4"},
		{"not a host name", "from-hosts", "# c\nnode1\nno de!\n", `line 3: "de!" after the host`},
		{"long line", "from-hosts", strings.Repeat("n", 100_000) + "\n", "line 1: longer than 65536 bytes"},
		{"no host", "from-hosts", "# nothing\n", "no host"},
		{"nodes twice", "from-slurm", "SwitchName=s0 Nodes=a[1-2] Nodes=a3\n", "line 1: Nodes given twice"},
		{"unknown key", "from-slurm", "SwitchName=s0 Nodez=a\n", `line 1: unknown key "Nodez"`},
		{"switch twice", "from-slurm", "SwitchName=s0 Nodes=a\nSwitchName=s0 Nodes=b\n", `line 2: switch "s0" is already defined on line 1`},
	} {
		in := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-"))
		out := in + ".toml"
		if err := os.WriteFile(in, []byte(tc.text), 0o644); err != nil {
			t.Fatal(err)
		}
		code, _, stderr := runCLI(t, "cluster", tc.from, "--nic-rate", "1e9", "--uplink-rate", "1e10", "--out", out, in)
		msg := strings.TrimSuffix(stderr, "\n")
		if code != exitBadInput || !strings.HasPrefix(msg, "commcal: "+in+": ") || !strings.Contains(msg, tc.want) || strings.Contains(msg, "\n") || len(msg) > 1024 {
			t.Errorf("%s: exit %d, message %q; want exit %d and %q after the file", tc.name, code, msg, exitBadInput, tc.want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%s: %s was written", tc.name, out)
		}
	}
	if code, _, stderr := runCLI(t, "cluster", "from-hosts", "--nic-rate", "1e9", dir); code != exitBadInput || !strings.Contains(stderr, dir+": is a directory") {
		t.Errorf("a directory: exit %d, %q", code, stderr)
	}
}

// TestClusterFromHostsDocExample: the host file of the documentation's example keeps giving
// the same description.
func TestClusterFromHostsDocExample(t *testing.T) {
	code, stdout, stderr := runCLI(t, "cluster", "from-hosts", "--nic-rate", "1e9", "testdata/hosts")
	want := "# cluster hosts: 1 racks, written by commcal; set the rates to the hardware's\nname = \"hosts\"\nnic_rate_bps = 1e+09\n\n[[rack]]\n  name = \"rack0\"\n  nodes = [\"node1\", \"node2\", \"node3\"]\n"
	if code != exitOK || stdout != want {
		t.Errorf("exit %d, %s\n%s", code, stderr, stdout)
	}
}
