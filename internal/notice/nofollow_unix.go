//go:build unix

package notice

import "syscall"

const oNoFollow = syscall.O_NOFOLLOW
