//go:build !linux

package atomicio

import "errors"

// exchange is not available: CommitDir falls back to two renames.
func exchange(a, b string) error { return errors.ErrUnsupported }
