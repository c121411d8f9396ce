// Package cputime reads the CPU time this process has used, user and system
// together. On a shared, loaded machine a benchmark's wall time includes the
// time it waited for a CPU; its CPU time does not, so reporting both tells
// the cost from the contention.
package cputime

import "time"

// Now returns the CPU time used by the process so far, or 0 where it is not
// available (then differences are 0 and callers should not report them).
func Now() time.Duration { return now() }
