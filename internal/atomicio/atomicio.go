// Package atomicio writes files and directories so that no reader ever sees them half written:
// everything goes to a temporary sibling, is synced to disk, and is renamed into place.
package atomicio

import (
	"fmt"
	"os"
	"path/filepath"
)

// WriteFile writes data to path through a synced temporary file in the same directory.
func WriteFile(path string, data []byte) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-")
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
		err = os.Chmod(tmp, 0o644)
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

// CommitDir syncs every file of the directory tmp and renames tmp to out. When replace is set
// and out exists, the old out is moved aside first and removed after the new one is in place;
// otherwise an existing out is an error.
func CommitDir(tmp, out string, replace bool) error {
	if err := syncTree(tmp); err != nil {
		return err
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	var old string
	if _, err := os.Stat(out); err == nil {
		if !replace {
			return fmt.Errorf("%s already exists", out)
		}
		old = tmp + ".old"
		if err := os.Rename(out, old); err != nil {
			return err
		}
	}
	if err := os.Rename(tmp, out); err != nil {
		if old != "" {
			os.Rename(old, out)
		}
		return err
	}
	if old != "" {
		if err := os.RemoveAll(old); err != nil {
			return err
		}
	}
	return syncDir(filepath.Dir(out))
}

// BuildDir builds the directory out through fill, in a temporary sibling that replaces out
// when fill succeeds and is removed when fill or the commit fails; out is untouched then.
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
		os.RemoveAll(tmp)
	}
	return err
}

// TempDir makes a temporary directory beside out, for CommitDir.
func TempDir(out string) (string, error) {
	parent := filepath.Dir(filepath.Clean(out))
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", err
	}
	return os.MkdirTemp(parent, "."+filepath.Base(out)+".tmp-")
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
