//go:build !linux

package promote

import "errors"

// errNoExchange means the file system cannot exchange two names atomically.
var errNoExchange = errors.New("atomic exchange not supported")

// exchange is not available here: the caller renames right after its check.
func exchange(a, b string) error { return errNoExchange }

// renameNoReplace renames a to b unless b exists (fs.ErrExist).
func renameNoReplace(a, b string) error { return linkNoReplace(a, b) }
