package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/commcal/commcal/internal/atomicio"
)

// Launch is an agent's place in the launch: its rank, how many agents there are, which
// launcher said so, and the launcher's job (so that a rendezvous file of another job is not
// taken for this one's).
type Launch struct {
	Rank, Size int
	Launcher   string
	Job        string
}

// launchers are the environments launchers give their tasks, in the order they are trusted:
// mpirun under a Slurm allocation also leaves Slurm's variables, which describe the
// allocation, not the MPI job.
var launchers = []struct {
	name, rank, size, job string
}{
	{"openmpi", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_MCA_ess_base_jobid"},
	{"pmi", "PMI_RANK", "PMI_SIZE", "PMI_JOBID"},
	{"pmix", "PMIX_RANK", "PMIX_SIZE", "PMIX_NAMESPACE"},
	{"slurm", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_JOB_ID"},
}

// DetectLaunch reads the rank and size from the launcher's environment (Open MPI, an MPICH
// PMI, PMIx, Slurm, in that order). An error says what is missing or malformed.
func DetectLaunch(getenv func(string) string) (Launch, error) {
	for _, l := range launchers {
		r, s := getenv(l.rank), getenv(l.size)
		if r == "" || s == "" {
			// Half a launcher's pair says nothing (srun --mpi=pmix sets PMIX_RANK and no
			// size; Slurm's own variables follow).
			continue
		}
		rank, err1 := strconv.Atoi(r)
		size, err2 := strconv.Atoi(s)
		if err1 != nil || err2 != nil || rank < 0 || size < 1 || rank >= size {
			return Launch{}, fmt.Errorf("engine: %s=%q and %s=%q are not a rank and a size", l.rank, r, l.size, s)
		}
		job := getenv(l.job)
		if l.name == "slurm" && job != "" && getenv("SLURM_STEP_ID") != "" {
			job += "." + getenv("SLURM_STEP_ID")
		}
		return Launch{Rank: rank, Size: size, Launcher: l.name, Job: job}, nil
	}
	return Launch{}, errors.New("engine: no launcher in the environment (SLURM_PROCID, OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK); give --rank and --size")
}

// Rendezvous is a directory on a file system every node sees, where rank 0 publishes the
// coordinator's addresses (and, unless the token comes from elsewhere, the token) for the
// other agents to find.
type Rendezvous struct {
	Dir string
}

const (
	rendezvousFile  = "coordinator.json"
	rendezvousToken = "token"
	rendezvousTag   = "commcal-rendezvous/1"
)

type rendezvousInfo struct {
	Format string   `json:"format"`
	Job    string   `json:"job"`
	Addrs  []string `json:"addrs"`
}

// Publish writes the coordinator's addresses (and the token, when withToken) into the
// directory, creating it. A directory holding another run's files is refused: it would send
// agents to a dead coordinator. The returned function removes what Publish wrote.
func (r Rendezvous) Publish(job string, port int, tok Token, withToken bool) (remove func(), err error) {
	if err := os.MkdirAll(r.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("engine: rendezvous: %w", err)
	}
	file := filepath.Join(r.Dir, rendezvousFile)
	if _, err := os.Lstat(file); err == nil {
		return nil, fmt.Errorf("engine: rendezvous directory %s holds another run's %s: give each run its own directory (e.g. one per job id) or remove it", r.Dir, rendezvousFile)
	}
	ips, err := hostAddrs("")
	if err != nil {
		return nil, fmt.Errorf("engine: rendezvous: %w", err)
	}
	info := rendezvousInfo{Format: rendezvousTag, Job: job}
	for _, ip := range ips {
		info.Addrs = append(info.Addrs, net.JoinHostPort(ip, strconv.Itoa(port)))
	}
	var wrote []string
	remove = func() {
		for _, f := range wrote {
			os.Remove(f)
		}
	}
	if withToken {
		tf := filepath.Join(r.Dir, rendezvousToken)
		if err := atomicio.WriteFileMode(tf, []byte(tok.String()+"\n"), 0o600); err != nil {
			return nil, fmt.Errorf("engine: rendezvous: %w", err)
		}
		wrote = append(wrote, tf)
	}
	data, _ := json.Marshal(info)
	if err := atomicio.WriteFileMode(file, append(data, '\n'), 0o600); err != nil {
		remove()
		return nil, fmt.Errorf("engine: rendezvous: %w", err)
	}
	// The coordinator file last, so that an agent that finds it finds the token too.
	wrote = append([]string{file}, wrote...)
	return remove, nil
}

// Find waits until rank 0 has published this job's coordinator and returns its addresses,
// and the token published beside it (nil if none was).
func (r Rendezvous) Find(ctx context.Context, job string, timeout time.Duration) ([]string, Token, error) {
	file := filepath.Join(r.Dir, rendezvousFile)
	deadline := time.Now().Add(timeout)
	for {
		data, err := os.ReadFile(file)
		if err == nil {
			var info rendezvousInfo
			if json.Unmarshal(data, &info) == nil && info.Format == rendezvousTag && len(info.Addrs) > 0 && (job == "" || info.Job == "" || info.Job == job) {
				var tok Token
				if _, err := os.Stat(filepath.Join(r.Dir, rendezvousToken)); err == nil {
					if tok, err = ReadTokenFile(filepath.Join(r.Dir, rendezvousToken)); err != nil {
						return nil, nil, fmt.Errorf("engine: rendezvous: %w", err)
					}
				}
				return info.Addrs, tok, nil
			}
		}
		if time.Now().After(deadline) {
			return nil, nil, fmt.Errorf("engine: no coordinator of this job published itself in %s within %v (did rank 0 start? is the directory on a file system every node shares?)", r.Dir, timeout)
		}
		select {
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}
