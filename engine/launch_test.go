package engine

import (
	"strings"
	"testing"
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
		{"slurm", env("SLURM_PROCID", "3", "SLURM_NTASKS", "8", "SLURM_JOB_ID", "42", "SLURM_STEP_ID", "0"), Launch{Rank: 3, Size: 8, Launcher: "slurm", Job: "42.0"}, ""},
		{"mpirun under an allocation", env("OMPI_COMM_WORLD_RANK", "1", "OMPI_COMM_WORLD_SIZE", "4", "SLURM_PROCID", "0", "SLURM_NTASKS", "1"),
			Launch{Rank: 1, Size: 4, Launcher: "openmpi"}, ""},
		{"srun --mpi=pmix", env("PMIX_RANK", "2", "SLURM_PROCID", "2", "SLURM_NTASKS", "4"), Launch{Rank: 2, Size: 4, Launcher: "slurm"}, ""},
		{"rank past size", env("PMI_RANK", "4", "PMI_SIZE", "4"), Launch{}, "not a rank and a size"},
		{"nothing", env(), Launch{}, "give --rank and --size"},
	}
	for _, tc := range cases {
		got, err := DetectLaunch(tc.env)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: %v, want %q", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: %+v, %v; want %+v", tc.name, got, err, tc.want)
		}
	}
}
