package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/commcal/commcal/internal/badinput"
)

func TestDetectLaunch(t *testing.T) {
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	cases := []struct {
		name string
		env  func(string) string
		want Launch
		err  string
	}{
		{"slurm", env("SLURM_PROCID", "3", "SLURM_NTASKS", "8", "SLURM_JOB_ID", "42", "SLURM_STEP_ID", "0"), Launch{Rank: 3, Size: 8, Launcher: "slurm", Job: "42.0", SizeFrom: "SLURM_NTASKS"}, ""},
		{"mpirun under an allocation", env("OMPI_COMM_WORLD_RANK", "1", "OMPI_COMM_WORLD_SIZE", "4", "SLURM_PROCID", "0", "SLURM_NTASKS", "1"),
			Launch{Rank: 1, Size: 4, Launcher: "openmpi", SizeFrom: "OMPI_COMM_WORLD_SIZE"}, ""},
		{"srun --mpi=pmix", env("PMIX_RANK", "2", "SLURM_PROCID", "2", "SLURM_NTASKS", "4"), Launch{Rank: 2, Size: 4, Launcher: "slurm", SizeFrom: "SLURM_NTASKS"}, ""},
		{"rank past size", env("PMI_RANK", "4", "PMI_SIZE", "4"), Launch{}, "not a rank and a size"},
		{"nothing", env(), Launch{}, "give --rank and --size"},
		// A value is quoted cut to badinput.MaxQuote bytes, with its length.
		{"a megabyte of rank", env("PMI_RANK", strings.Repeat("7", 1<<20), "PMI_SIZE", "4"), Launch{}, `PMI_RANK="` + strings.Repeat("7", 64) + `"… (1048576 bytes) and PMI_SIZE="4"`},
	}
	for _, tc := range cases {
		got, err := DetectLaunch(tc.env)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) || len(err.Error()) > 300 {
				t.Errorf("%s: %v, want %q", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: %+v, %v; want %+v", tc.name, got, err, tc.want)
		}
	}
}

// TestRendezvousFindRefuses: a coordinator file that is not one, or is another job's, is bad
// input naming the file and what is wrong with it, once it has stayed so for
// rendezvousSettle; nothing of it longer than badinput.MaxQuote is quoted.
func TestRendezvousFindRefuses(t *testing.T) {
	for _, tc := range []struct {
		name, content, want string
	}{
		{"garbage", "\x00\x01garbage", "not a commcal rendezvous file: not JSON: invalid character '\\x00' looking for beginning of value (byte 1)"},
		{"empty", "", "not a commcal rendezvous file: an empty line"},
		{"unknown key", `{"format":"commcal-rendezvous/1","addrs":["10.0.0.1:7000"],"port":7000}`, `not a commcal rendezvous file: unknown field "port"`},
		{"trailing", `{"format":"commcal-rendezvous/1","addrs":["10.0.0.1:7000"]} {}`, `not a commcal rendezvous file: "{}" after the object`},
		{"format", `{"format":"` + strings.Repeat("f", 200) + `","addrs":["10.0.0.1:7000"]}`, `format "` + strings.Repeat("f", 64) + `"… (200 bytes), want "commcal-rendezvous/1": not a commcal rendezvous file, or one of another commcal version`},
		{"no address", `{"format":"commcal-rendezvous/1","addrs":[]}`, "addrs: lists no address of the coordinator"},
		{"bad address", `{"format":"commcal-rendezvous/1","addrs":["10.0.0.1:7000","10.0.0.2:99999"]}`, `addrs[1]: "10.0.0.2:99999" is not HOST:PORT with a port in 1…65535`},
		{"another job", `{"format":"commcal-rendezvous/1","job":"41","addrs":["10.0.0.1:7000"]}`, `published by job "41", and this agent is of job "42": give each run its own rendezvous directory (e.g. one per job id), or remove the file`},
		{"too large", `{"format":"commcal-rendezvous/1","addrs":["` + strings.Repeat(" ", maxRendezvousFile) + `"]}`, "larger than 1048576 bytes: not a commcal rendezvous file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			file := filepath.Join(dir, rendezvousFile)
			if err := os.WriteFile(file, []byte(tc.content), 0o600); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			_, _, err := Rendezvous{Dir: dir}.Find(context.Background(), "42", time.Minute)
			if err == nil || err.Error() != file+": "+tc.want || !badinput.Is(err) {
				t.Fatalf("%v (bad input %v)\nwant %s: %s", err, badinput.Is(err), file, tc.want)
			}
			if el := time.Since(start); el > 10*time.Second {
				t.Errorf("reported after %v", el)
			}
		})
	}
}

// TestRendezvousFindWaitsOutAMoment: a coordinator file that is garbage for less than
// rendezvousSettle (a network file system showing its making) is read once it is whole.
func TestRendezvousFindWaitsOutAMoment(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, rendezvousFile)
	if err := os.WriteFile(file, []byte(`{"format":"commcal-ren`), 0o600); err != nil {
		t.Fatal(err)
	}
	time.AfterFunc(300*time.Millisecond, func() {
		os.WriteFile(file, []byte(`{"format":"commcal-rendezvous/1","job":"42","addrs":["10.0.0.1:7000"]}`), 0o600)
	})
	addrs, tok, err := Rendezvous{Dir: dir}.Find(context.Background(), "42", time.Minute)
	if err != nil || len(addrs) != 1 || addrs[0] != "10.0.0.1:7000" || tok != nil {
		t.Errorf("%v, %v, %v", addrs, tok, err)
	}
}

// FuzzRendezvousFile: any coordinator file reads as one listing HOST:PORT addresses, or is
// bad input naming the file in a message of bounded length; nothing panics.
func FuzzRendezvousFile(f *testing.F) {
	f.Add([]byte(`{"format":"commcal-rendezvous/1","job":"42.0","addrs":["10.0.0.1:7000","[fd00::1]:7000"]}` + "\n"))
	f.Add([]byte(`{"format":"commcal-rendezvous/1","addrs":["10.0.0.1"]}`))
	f.Add([]byte(`{"format":"x","addrs":[]} {}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		info, err := parseRendezvous("/rdv/coordinator.json", data)
		if err != nil {
			if !badinput.Is(err) || !strings.HasPrefix(err.Error(), "/rdv/coordinator.json: ") || len(err.Error()) > badinput.MaxMessage {
				t.Fatalf("%q: %v", data, err)
			}
			return
		}
		if info.Format != rendezvousTag || len(info.Addrs) == 0 {
			t.Fatalf("%q read as %+v", data, info)
		}
	})
}
