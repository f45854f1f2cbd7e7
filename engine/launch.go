package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/commcal/commcal/internal/atomicio"
	"github.com/commcal/commcal/internal/badinput"
)

// Launch is an agent's place in the launch: its rank, how many agents there are, which
// launcher said so, and the launcher's job (so that a rendezvous file of another job is not
// taken for this one's).
type Launch struct {
	Rank, Size int
	Launcher   string
	Job        string
	// SizeFrom names the environment variable the size was read from (SLURM_NTASKS, …), for
	// messages about it.
	SizeFrom string
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
			return Launch{}, fmt.Errorf("engine: %s=%s and %s=%s are not a rank and a size", l.rank, badinput.Quote(r), l.size, badinput.Quote(s))
		}
		job := getenv(l.job)
		if l.name == "slurm" && job != "" && getenv("SLURM_STEP_ID") != "" {
			job += "." + getenv("SLURM_STEP_ID")
		}
		return Launch{Rank: rank, Size: size, Launcher: l.name, Job: job, SizeFrom: l.size}, nil
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
		return nil, badinput.Errorf(file, "another run's rendezvous file: give each run its own directory (e.g. one per job id) or remove it")
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

// rendezvousSettle is how long a coordinator file that cannot be read as one may stay so
// before Find reports it: rank 0 replaces the file whole (written aside, then renamed), but a
// network file system may show a reader a moment of its making.
const rendezvousSettle = time.Second

// maxRendezvousFile bounds the coordinator file Find reads: it lists rank 0's addresses, some
// 50 bytes each.
const maxRendezvousFile = 1 << 20

// Find waits until rank 0 has published this job's coordinator and returns its addresses,
// and the token published beside it (nil if none was). A coordinator file that is not one
// (after rendezvousSettle), or is another job's, is bad input naming the file.
func (r Rendezvous) Find(ctx context.Context, job string, timeout time.Duration) ([]string, Token, error) {
	file := filepath.Join(r.Dir, rendezvousFile)
	deadline := time.Now().Add(timeout)
	var badSince time.Time
	for {
		info, err := readRendezvous(file)
		switch {
		case err == nil && job != "" && info.Job != "" && info.Job != job:
			return nil, nil, badinput.Errorf(file, "published by job %s, and this agent is of job %s: give each run its own rendezvous directory (e.g. one per job id), or remove the file",
				badinput.Quote(info.Job), badinput.Quote(job))
		case err == nil:
			var tok Token
			tf := filepath.Join(r.Dir, rendezvousToken)
			if _, err := os.Stat(tf); err == nil {
				if tok, err = ReadTokenFile(tf); err != nil {
					return nil, nil, badinput.Wrap(tf, err)
				}
			}
			return info.Addrs, tok, nil
		case badinput.Is(err):
			if badSince.IsZero() {
				badSince = time.Now()
			}
			if time.Since(badSince) >= rendezvousSettle || time.Now().After(deadline) {
				return nil, nil, err
			}
		case !errors.Is(err, fs.ErrNotExist):
			return nil, nil, fmt.Errorf("engine: rendezvous: %w", err)
		default:
			badSince = time.Time{}
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

// readRendezvous reads a coordinator file of at most maxRendezvousFile bytes: one JSON object
// of rendezvousInfo's fields, the format tag commcal writes, and at least one HOST:PORT
// address. What is wrong with the file is bad input naming it; a missing file is
// fs.ErrNotExist.
func readRendezvous(file string) (*rendezvousInfo, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxRendezvousFile+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxRendezvousFile {
		return nil, badinput.Errorf(file, "larger than %d bytes: not a commcal rendezvous file", maxRendezvousFile)
	}
	return parseRendezvous(file, data)
}

// parseRendezvous reads the content of the coordinator file named file.
func parseRendezvous(file string, data []byte) (*rendezvousInfo, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var info rendezvousInfo
	if err := dec.Decode(&info); err != nil {
		return nil, badinput.Errorf(file, "not a commcal rendezvous file: %s", jsonProblem(err))
	}
	if rest := bytes.TrimSpace(data[dec.InputOffset():]); len(rest) > 0 {
		return nil, badinput.Errorf(file, "not a commcal rendezvous file: %s after the object", badinput.Quote(string(rest)))
	}
	switch {
	case info.Format != rendezvousTag:
		return nil, badinput.Errorf(file, "format %s, want %q: not a commcal rendezvous file, or one of another commcal version", badinput.Quote(info.Format), rendezvousTag)
	case len(info.Addrs) == 0:
		return nil, badinput.Errorf(file, "addrs: lists no address of the coordinator")
	case len(info.Addrs) > maxHostAddrs:
		return nil, badinput.Errorf(file, "addrs: %d addresses, at most %d", len(info.Addrs), maxHostAddrs)
	}
	for i, a := range info.Addrs {
		if _, ok := dialHostPort(a); !ok {
			return nil, badinput.Errorf(file, "addrs[%d]: %s is not HOST:PORT with a port in 1…65535", i, badinput.Quote(a))
		}
	}
	return &info, nil
}
