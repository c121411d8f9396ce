//go:build !linux

package minilm

import (
	"testing"
	"time"
)

func reportCPU(b *testing.B, f func()) {
	for b.Loop() {
		f()
	}
}

func processCPU() time.Duration { return 0 }

// minorFaults is not counted here: it reads Linux's getrusage.
func minorFaults() int64 { return 0 }
