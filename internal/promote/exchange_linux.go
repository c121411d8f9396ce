package promote

import (
	"errors"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// errNoExchange means the file system cannot exchange two names atomically.
var errNoExchange = errors.New("atomic exchange not supported")

// exchange swaps the files named a and b in one step (renameat2
// RENAME_EXCHANGE): afterwards b holds the new content and a what b held.
func exchange(a, b string) error {
	err := unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
	if errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EINVAL) || errors.Is(err, unix.EOPNOTSUPP) {
		return errNoExchange
	}
	if err != nil {
		return &os.LinkError{Op: "exchange", Old: a, New: b, Err: err}
	}
	return nil
}

// renameNoReplace renames a to b unless b exists (fs.ErrExist).
func renameNoReplace(a, b string) error {
	err := unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_NOREPLACE)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, unix.EEXIST):
		return fs.ErrExist
	case errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EINVAL) || errors.Is(err, unix.EOPNOTSUPP):
		return linkNoReplace(a, b)
	}
	return &os.LinkError{Op: "rename", Old: a, New: b, Err: err}
}
