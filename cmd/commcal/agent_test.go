package main

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// noLauncher hides any launcher the tests run under, so that only a case's own environment
// gives the agent a rank.
func noLauncher(t *testing.T) {
	for _, v := range []string{"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "PMI_RANK", "PMI_SIZE", "PMIX_RANK", "PMIX_SIZE",
		"SLURM_PROCID", "SLURM_NTASKS", "COMMCAL_TOKEN", "COMMCAL_TOKEN_FILE", "COMMCAL_RENDEZVOUS", "COMMCAL_COORDINATOR", "COMMCAL_DATA_LISTEN"} {
		t.Setenv(v, "")
	}
}

// TestAgentUsageErrors: every check of agent's flags, the launcher's environment and the
// rendezvous file is exit status 2 with one line naming the flag, variable or file, and
// nothing is written.
func TestAgentUsageErrors(t *testing.T) {
	noLauncher(t)
	dir := t.TempDir()
	rdv := filepath.Join(dir, "rdv")
	write(t, filepath.Join(rdv, "coordinator.json"), "garbage\n")
	out := filepath.Join(dir, "out")
	twoRack := filepath.Join("..", "..", "data", "tcp", "clusters", "two-rack-1g.toml")
	coord := []string{"--rank", "1", "--size", "2", "--coordinator", "node01:7070"}
	rank0 := []string{"--cluster", twoRack, "--out", out, "--rendezvous", filepath.Join(dir, "rdv0")}
	for _, tc := range []struct {
		name string
		env  []string
		args []string
		want string
	}{
		{"size zero", nil, []string{"--rank", "0", "--size", "0", "--coordinator", "node01:7070"}, "agent: --size 0: want the number of agents, 1 to 65536"},
		{"size past a cluster's", nil, []string{"--size", "70000", "--coordinator", "node01:7070"}, "agent: --size 70000: want the number of agents, 1 to 65536"},
		{"negative rank", nil, []string{"--rank", "-2", "--size", "2", "--coordinator", "node01:7070"}, "agent: --rank -2: want 0 or more"},
		{"rank without size", nil, []string{"--rank", "1", "--coordinator", "node01:7070"}, "agent: --rank 1 needs --size, the number of agents"},
		{"rank past size", nil, []string{"--rank", "3", "--size", "3", "--coordinator", "node01:7070"}, "agent: --rank 3 is not below --size 3: ranks run from 0 to 2"},
		{"coordinator port", nil, []string{"--rank", "1", "--size", "2", "--coordinator", "node01:99999"}, `agent: --coordinator "node01:99999": port "99999" is not in 1…65535`},
		{"coordinator without port", nil, []string{"--rank", "1", "--size", "2", "--coordinator", "node01"}, `agent: --coordinator "node01": want HOST:PORT`},
		{"listen port", nil, append([]string{"--listen", ":70000"}, coord...), `agent: --listen ":70000": port "70000" is not in 0…65535`},
		{"data-listen not an address", nil, append([]string{"--data-listen", "10.0.0.300"}, coord...), `agent: --data-listen "10.0.0.300": "10.0.0.300" is neither an IP address nor a network interface's name`},
		{"data-listen no such interface", nil, append([]string{"--data-listen", "nosuch0"}, coord...), `agent: --data-listen "nosuch0": no network interface nosuch0 here`},
		{"data-listen port", nil, append([]string{"--data-listen", "lo:65536"}, coord...), `agent: --data-listen "lo:65536": port "65536": want a port in 0…65535 (0: any)`},
		{"connect-timeout", nil, append([]string{"--connect-timeout", "0s"}, coord...), "agent: --connect-timeout 0s: want a positive duration"},
		{"join-timeout", nil, append([]string{"--join-timeout", "-1s"}, coord...), "agent: --join-timeout -1s: want a positive duration"},
		{"node", nil, append([]string{"--node", "a\tb"}, coord...), `agent: --node "a\tb": contains the control character U+0009 at byte 1`},
		{"neither rendezvous nor coordinator", nil, []string{"--rank", "1", "--size", "2"}, "agent: give one of --rendezvous DIR and --coordinator HOST:PORT"},
		{"size against the launcher", []string{"SLURM_PROCID", "1", "SLURM_NTASKS", "4"}, []string{"--size", "5", "--coordinator", "node01:7070"},
			"agent: --size 5 disagrees with the launcher (SLURM_NTASKS=4): leave --size out, or launch 5 agents"},
		{"launcher's garbage", []string{"PMI_RANK", "x", "PMI_SIZE", "4"}, []string{"--coordinator", "node01:7070"},
			`agent: engine: PMI_RANK="x" and PMI_SIZE="4" are not a rank and a size`},
		{"size against the cluster", nil, append([]string{"--rank", "0", "--size", "3"}, rank0...),
			"agent: the cluster description has 10 nodes and the launch 3 agents (--size 3; --cluster " + twoRack + "): start one agent per node"},
		{"launcher's size against the cluster", []string{"SLURM_PROCID", "0", "SLURM_NTASKS", "3"}, rank0,
			"agent: the cluster description has 10 nodes and the launch 3 agents (the launcher's SLURM_NTASKS=3; --cluster " + twoRack + "): start one agent per node"},
		{"garbage rendezvous file", nil, []string{"--rank", "1", "--size", "2", "--rendezvous", rdv},
			filepath.Join(rdv, "coordinator.json") + ": not a commcal rendezvous file: not JSON: invalid character 'g' looking for beginning of value (byte 1)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for i := 0; i+1 < len(tc.env); i += 2 {
				t.Setenv(tc.env[i], tc.env[i+1])
			}
			code, stdout, stderr := runCLI(t, append([]string{"agent"}, tc.args...)...)
			if code != exitBadInput || stderr != "commcal: "+tc.want+"\n" {
				t.Errorf("exit %d, stderr %q\nwant exit %d, %q", code, stderr, exitBadInput, "commcal: "+tc.want+"\n")
			}
			if stdout != "" {
				t.Errorf("stdout %q", stdout)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("--out %s was created (%v)", out, err)
			}
		})
	}
}

// TestAgentRefusesAnEndlessControlLine: a "coordinator" that answers with an endless line
// ends the agent (exit 1: it is not the run's coordinator) with one short line saying so.
func TestAgentRefusesAnEndlessControlLine(t *testing.T) {
	noLauncher(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		line := []byte(strings.Repeat("x", 1<<20))
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				c.SetWriteDeadline(time.Now().Add(20 * time.Second))
				for sent := 0; sent < 100<<20; sent += len(line) {
					if _, err := c.Write(line); err != nil {
						return
					}
				}
			}()
		}
	}()
	t.Setenv("COMMCAL_TOKEN", strings.Repeat("ab", 32))
	code, _, stderr := runCLI(t, "agent", "--rank", "1", "--size", "2", "--connect-timeout", "300ms", "--coordinator", ln.Addr().String())
	want := `not the commcal control protocol: a line longer than 65536 bytes, starting "` + strings.Repeat("x", 64) + `"`
	if code != exitFailure || !strings.Contains(stderr, want) || len(stderr) > 1000 || strings.Count(stderr, "\n") != 1 {
		t.Errorf("exit %d, stderr (%d bytes) %q\nwant exit %d, one line holding %q", code, len(stderr), stderr, exitFailure, want)
	}
}
