package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestCompletionWords is a case per kind of word the shells ask about: a partial flag gives
// the flags it starts (a partial or unknown flag crashed urfave/cli's own completion), a
// positional argument or a flag's value gives nothing so that the shell completes a file,
// and subcommands and a|b|c arguments give their names.
func TestCompletionWords(t *testing.T) {
	for _, tc := range []struct {
		words []string
		want  []string
	}{
		{[]string{"ingest", "--f"}, []string{"--format", "--force"}},
		{[]string{"ingest", "--zzz"}, nil},
		{[]string{"--quiet", "ingest", "--fo"}, []string{"--format", "--force"}},
		{[]string{"cluster", "from-hosts", "--nic"}, []string{"--nic-rate"}},
		{[]string{"cluster", "from-hosts", "-"}, []string{"--name", "--nic-rate", "--uplink-rate", "--kind", "--out", "-o", "--force", "--help", "-h"}},
		{[]string{"ingest", ""}, nil},
		{[]string{"ingest", "--out", ""}, nil},
		{[]string{"ingest", "--out", "=", ""}, nil},
		{[]string{"ingest", "--out", "x", ""}, nil},
		{[]string{"ingest", "--out=x", "--fo"}, []string{"--format", "--force"}},
		{[]string{"ingest", "--force", "--fo"}, []string{"--format", "--force"}},
		{[]string{"ingest", "data", "--f"}, nil},
		{[]string{"ingest", "--", "--f"}, nil},
		{[]string{"--log-level", ""}, nil},
		{[]string{"clu"}, []string{"cluster"}},
		{[]string{"c"}, []string{"compare", "cluster", "completion"}},
		{[]string{"cluster", ""}, []string{"from-slurm", "from-hosts"}},
		{[]string{"completion", ""}, []string{"bash", "zsh", "fish", "man"}},
		{[]string{"completion", "bash", ""}, nil},
		{[]string{"nosuch", ""}, nil},
	} {
		code, stdout, stderr := runCLI(t, append([]string{"completion", "--words", "--", "commcal"}, tc.words...)...)
		got := strings.Fields(stdout)
		if code != exitOK || stderr != "" || !slices.Equal(got, tc.want) {
			t.Errorf("%q: exit %d, %q, stderr %q; want %q", tc.words, code, got, stderr, tc.want)
		}
	}
	if code, stdout, _ := runCLI(t, "completion", "--words", "--", "commcal"); code != exitOK || stdout != "" {
		t.Errorf("no word to complete: exit %d, %q", code, stdout)
	}
}

// TestCompletionBash sources the bash script into a real bash and calls its function as
// readline does, with COMP_WORDS and COMP_CWORD set: a partial flag completes to the flags, a
// positional argument leaves COMPREPLY empty, and the function is registered with -o default
// so that bash then completes a file name.
func TestCompletionBash(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash on this machine")
	}
	bin := buildBinary(t)
	_, script, _ := runCLI(t, "completion", "bash")
	for _, tc := range []struct {
		words []string
		want  string
	}{
		{[]string{"ingest", "--f"}, "--format --force"},
		{[]string{"ingest", ""}, ""},
		{[]string{"cluster", "from-hosts", "--nic-rate", "1e9", "ho"}, ""},
		{[]string{"clu"}, "cluster"},
		{[]string{"completion", "f"}, "fish"},
	} {
		prog := script + `
COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 )); _commcal_complete
echo "${COMPREPLY[*]}"
complete -p commcal`
		out, err := exec.Command(bash, append([]string{"-c", prog, "bash", bin}, tc.words...)...).CombinedOutput()
		lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
		if err != nil || len(lines) != 2 || lines[0] != tc.want || !strings.Contains(lines[1], "-o default") {
			t.Errorf("%q: %v\n%s\nwant %q", tc.words, err, out, tc.want)
		}
	}
}

// TestCompletionFish asks fish, when it is installed, for the candidates of the generated
// script: flags for a partial flag, files for a positional argument.
func TestCompletionFish(t *testing.T) {
	fish, err := exec.LookPath("fish")
	if err != nil {
		if os.Getenv("CI") != "" { // .ci/run installs it
			t.Fatal("needs fish (apt-get install fish)")
		}
		t.Skip("needs fish (apt-get install fish)")
	}
	dir := t.TempDir()
	_, script, _ := runCLI(t, "completion", "fish")
	if err := os.WriteFile(filepath.Join(dir, "hostfile_alpha"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(fish, "--no-config", "-c", script+"\ncomplete -C 'commcal ingest --f'; complete -C 'commcal ingest hostf'")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	for _, want := range []string{"--format\t", "--force\t", "hostfile_alpha"} {
		if err != nil || !strings.Contains(string(out), want) {
			t.Errorf("fish offers no %q: %v\n%s", want, err, out)
		}
	}
}
