// Package atomicio writes commcal's outputs so that no reader ever sees them half written and
// no command replaces what it did not write: everything goes to a temporary sibling marked as
// commcal's, is synced to disk and renamed into place; Claim checks an output path against the
// inputs and what is already there, locks it against a concurrent run, and clears what a
// killed run left behind.
package atomicio

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Marker is the file every directory commcal builds carries. A directory holding it was
// written by commcal, and a later command may replace it; nothing else is replaced without
// --force.
const Marker = ".commcal-output"

const markerText = "This directory was written by commcal; commcal may replace it as a whole.\n"

// tmpInfix names temporary siblings: ".<base>.tmp-<random>".
const tmpInfix = ".tmp-"

// WriteFile writes data to path through a synced temporary file in the same directory.
func WriteFile(path string, data []byte) error { return WriteFileMode(path, data, 0o644) }

// WriteFileMode is WriteFile with the file's permissions (0600 for a secret): the temporary
// file is created 0600, so the data is never readable by others on the way.
func WriteFileMode(path string, data []byte, mode os.FileMode) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+tmpInfix)
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, mode)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return syncDir(dir)
}

// CommitDir syncs every file of the directory tmp and moves it to out. When replace is set
// and out exists, the two are exchanged in one atomic rename (Linux renameat2
// RENAME_EXCHANGE), so that out is at every moment either the old or the new directory, and
// the old one is removed; where the file system cannot exchange, the old out is moved aside to
// "<tmp>.old" first, which Claim completes or rolls back if the process dies in between.
// Without replace an existing out is an error.
func CommitDir(tmp, out string, replace bool) error {
	if err := syncTree(tmp); err != nil {
		return err
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	if _, err := os.Lstat(out); err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			return err
		}
		if err := os.Rename(tmp, out); err != nil {
			return err
		}
		return syncDir(filepath.Dir(out))
	}
	if !replace {
		return fmt.Errorf("%s already exists", out)
	}
	if err := exchange(tmp, out); err == nil {
		// tmp now holds the old output.
		if err := syncDir(filepath.Dir(out)); err != nil {
			return err
		}
		return RemoveMarked(tmp)
	}
	old := tmp + ".old"
	if err := os.Rename(out, old); err != nil {
		return err
	}
	if err := os.Rename(tmp, out); err != nil {
		os.Rename(old, out)
		return err
	}
	if err := syncDir(filepath.Dir(out)); err != nil {
		return err
	}
	return RemoveMarked(old)
}

// BuildDir builds the directory out through fill, in a temporary sibling that replaces out
// when fill succeeds and is removed when fill or the commit fails; out is untouched then.
// The caller has claimed out (Claim).
func BuildDir(out string, fill func(tmp string) error) error {
	tmp, err := TempDir(out)
	if err != nil {
		return err
	}
	err = fill(tmp)
	if err == nil {
		err = CommitDir(tmp, out, true)
	}
	if err != nil {
		RemoveMarked(tmp)
	}
	return err
}

// RemoveMarked removes a directory commcal wrote, its Marker last: killed in the middle, the
// directory keeps its Marker and the next Claim of the same output removes the rest. (Removed
// in any order, a kill could leave an unmarked remnant that no later run may touch.)
func RemoveMarked(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.Name() == Marker {
			continue
		}
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return err
		}
	}
	if err := os.Remove(filepath.Join(dir, Marker)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return os.Remove(dir)
}

// TempDir makes a temporary directory beside out, for CommitDir, and marks it as commcal's
// at once, so that a later run can tell it from anything else if this one is killed.
func TempDir(out string) (string, error) {
	parent := filepath.Dir(filepath.Clean(out))
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(filepath.Clean(out))+tmpInfix)
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(tmp, Marker), []byte(markerText), 0o644); err != nil {
		os.RemoveAll(tmp) // holds at most a partial Marker
		return "", err
	}
	return tmp, nil
}

// IsOutput reports whether dir is a directory commcal wrote (it holds the Marker).
func IsOutput(dir string) bool {
	st, err := os.Lstat(filepath.Join(dir, Marker))
	return err == nil && st.Mode().IsRegular()
}

func syncTree(root string) error {
	return filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return syncDir(path)
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		err = f.Sync()
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return err
	})
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
