package atomicio

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/commcal/commcal/internal/badinput"
)

// ErrBusy is returned (wrapped) by Claim when another process holds the output's lock.
var ErrBusy = errors.New("another commcal process is writing this output")

// Target is an output path a command is about to write.
type Target struct {
	Path string
	// File says the output is one file (predict --parquet); otherwise it is a directory.
	File bool
	// Inputs are the paths the command reads. The output may not be, contain or lie inside
	// any of them, --force or not (symbolic links resolved).
	Inputs []string
	// Force allows replacing an existing path that is not a commcal output.
	Force bool
	// ReplaceNeedsForce makes even an earlier commcal output need Force (ingest).
	ReplaceNeedsForce bool
	// Wait waits for a concurrent run's lock instead of failing at once.
	Wait bool
}

// Claimed is an output path locked for one command. Release unlocks it.
type Claimed struct {
	Path    string
	lock    *Lock
	created []string // parent directories Claim made, deepest first
}

// Release removes the lock file and unlocks the output, so that nothing is left beside it.
// A process that was waiting on the removed file notices that it no longer is the lock
// (lockPath compares the locked file with the one at the path) and locks afresh.
func (c *Claimed) Release() {
	if c != nil && c.lock != nil {
		c.lock.Release()
		c.lock = nil
		for _, d := range c.created {
			os.Remove(d) // only if still empty: nothing was written into it
		}
	}
}

// Claim checks that t.Path may be written and locks it:
//
//   - a path that is, contains or lies inside an input, or contains the working directory,
//     is refused, even with Force; so is a symbolic link (give its target instead);
//   - an existing path is replaced only if it is a commcal output (a directory with the
//     Marker, or an empty directory) or Force is set; a file output needs Force to replace a
//     file;
//   - an advisory lock (flock on ".<base>.lock" beside the path) makes a second process on
//     the same output fail at once with ErrBusy, or wait with t.Wait;
//   - under the lock, what an earlier killed run left beside the path is cleared: its
//     temporary directories (marked as commcal's) are removed, and a commit it left half done
//     is rolled back, so the path holds the earlier complete output.
//
// Refusals are bad input (exit status 2); a busy lock and I/O failures are not.
func Claim(ctx context.Context, t Target) (*Claimed, error) {
	if t.Path == "" {
		return nil, badinput.Errorf("", "no output path given (--out)")
	}
	out, err := resolve(t.Path)
	if err != nil {
		return nil, fmt.Errorf("output %s: %w", t.Path, err)
	}
	if st, err := os.Lstat(t.Path); err == nil && st.Mode()&fs.ModeSymlink != 0 {
		return nil, badinput.Errorf(t.Path, "the output is a symbolic link; give the path it points to (commcal replaces outputs by renaming)")
	}
	if wd, err := os.Getwd(); err == nil {
		if rwd, err := resolve(wd); err == nil && (rwd == out || within(rwd, out)) {
			return nil, badinput.Errorf(t.Path, "the output contains the working directory; choose another path")
		}
	}
	for _, in := range t.Inputs {
		if _, err := os.Lstat(in); in == "" || err != nil {
			continue // an optional input not given, or a name that is no path (a built-in cluster)
		}
		rin, err := resolve(in)
		if err != nil {
			return nil, fmt.Errorf("input %s: %w", in, err)
		}
		switch {
		case rin == out:
			return nil, badinput.Errorf(t.Path, "the output is the input %s; commcal never replaces its input", in)
		case within(rin, out):
			return nil, badinput.Errorf(t.Path, "the output contains the input %s; commcal never replaces its input", in)
		case within(out, rin):
			return nil, badinput.Errorf(t.Path, "the output lies inside the input %s; write it elsewhere", in)
		}
	}
	var created []string
	for d := filepath.Dir(out); ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil || filepath.Dir(d) == d {
			break
		}
		created = append(created, d)
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return nil, fmt.Errorf("output %s: %w", t.Path, err)
	}
	lockFile := filepath.Join(filepath.Dir(out), "."+filepath.Base(out)+".lock")
	lock, err := Acquire(ctx, lockFile, t.Wait)
	if err != nil {
		for _, d := range created {
			os.Remove(d)
		}
		return nil, fmt.Errorf("output %s: %w", t.Path, err)
	}
	c := &Claimed{Path: t.Path, lock: lock, created: created}
	if err := recoverSiblings(out); err != nil {
		c.Release()
		return nil, fmt.Errorf("output %s: clearing what an interrupted run left: %w", t.Path, err)
	}
	if err := replaceable(t, out); err != nil {
		c.Release()
		return nil, err
	}
	return c, nil
}

// replaceable says whether what is at out may be replaced.
func replaceable(t Target, out string) error {
	st, err := os.Lstat(out)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("output %s: %w", t.Path, err)
	}
	if t.Force {
		return nil
	}
	switch {
	case t.File && st.Mode().IsRegular():
		return badinput.Errorf(t.Path, "the output file exists; use --force to replace it")
	case t.File:
		return badinput.Errorf(t.Path, "the output exists and is not a regular file")
	case !st.IsDir():
		return badinput.Errorf(t.Path, "the output exists and is not a directory; use --force to replace it")
	case IsOutput(out) && t.ReplaceNeedsForce:
		return badinput.Errorf(t.Path, "the output already exists (written by commcal); use --force to replace it")
	case IsOutput(out):
		return nil
	}
	if isEmptyDir(out) {
		return nil // an empty directory holds nothing to lose
	}
	return badinput.Errorf(t.Path, "the output exists and was not written by commcal (no %s in it); use --force to replace it", Marker)
}

// Lock is an advisory lock held on a lock file (flock). Release removes the file, so that
// nothing is left behind; a process that was waiting on the removed file notices it no
// longer is the lock (Acquire compares the locked file with the one at the path) and locks
// afresh.
type Lock struct {
	f    *os.File
	path string
}

// Acquire takes the lock at path, creating the file. When the lock is held elsewhere it
// fails at once with ErrBusy, or with wait polls until it is free or ctx is done.
func Acquire(ctx context.Context, path string, wait bool) (*Lock, error) {
	f, err := lockPath(ctx, path, wait)
	if err != nil {
		return nil, err
	}
	return &Lock{f: f, path: path}, nil
}

// Release removes the lock file and unlocks it. It may be called more than once.
func (l *Lock) Release() {
	if l != nil && l.f != nil {
		os.Remove(l.path)
		l.f.Close()
		l.f = nil
	}
}

func lockPath(ctx context.Context, path string, wait bool) (*os.File, error) {
	for {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return nil, err
		}
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			if sameFile(f, path) {
				return f, nil
			}
			f.Close() // the holder removed it after we opened it: lock the new one
			continue
		}
		f.Close()
		if !errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("locking %s: %w", path, err)
		}
		if !wait {
			return nil, fmt.Errorf("%w (lock %s held); try again when it is done", ErrBusy, path)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// sameFile reports whether the open file f is still the file at path.
func sameFile(f *os.File, path string) bool {
	a, err := f.Stat()
	if err != nil {
		return false
	}
	b, err := os.Stat(path)
	return err == nil && os.SameFile(a, b)
}

// recoverSiblings clears what killed runs left beside out; the caller holds out's lock, so no
// live process owns any of it. A "<tmp>.old" is an earlier output moved aside by a commit that
// did not finish: it goes back to out when out is missing, else it is removed. Temporary
// directories are removed when they carry the Marker (or are empty: killed before the Marker
// was written), temporary files when their name is exactly what WriteFile makes.
func recoverSiblings(out string) error {
	parent, base := filepath.Dir(out), filepath.Base(out)
	entries, err := os.ReadDir(parent)
	if err != nil {
		return err
	}
	prefix := "." + base + tmpInfix
	tmpFile := regexp.MustCompile(`^` + regexp.QuoteMeta(prefix) + `[0-9]+$`)
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, prefix) {
			continue
		}
		path := filepath.Join(parent, name)
		switch {
		case e.IsDir() && strings.HasSuffix(name, ".old") && IsOutput(path):
			if _, err := os.Lstat(out); errors.Is(err, os.ErrNotExist) {
				if err := os.Rename(path, out); err != nil {
					return err
				}
				continue
			}
			if err := RemoveMarked(path); err != nil {
				return err
			}
		case e.IsDir() && (IsOutput(path) || isEmptyDir(path)):
			if err := RemoveMarked(path); err != nil {
				return err
			}
		case e.Type().IsRegular() && tmpFile.MatchString(name):
			if err := os.Remove(path); err != nil {
				return err
			}
		}
	}
	return nil
}

func isEmptyDir(dir string) bool {
	entries, err := os.ReadDir(dir)
	return err == nil && len(entries) == 0
}

// resolve makes p absolute with every symbolic link of its longest existing prefix resolved
// (the rest does not exist yet, so it cannot be a link).
func resolve(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	rest := ""
	for cur := abs; ; {
		if r, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(r, rest), nil
		} else if !errors.Is(err, os.ErrNotExist) {
			return "", err
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return abs, nil
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}

// within reports whether p lies strictly inside dir (both clean and absolute).
func within(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
