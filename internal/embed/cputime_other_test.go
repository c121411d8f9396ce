//go:build !linux

package embed

import "testing"

func reportCPU(b *testing.B, f func()) {
	for b.Loop() {
		f()
	}
}
