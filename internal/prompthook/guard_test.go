package prompthook

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
)

// A fault reading mapped memory that is gone, as a string left pointing
// into an unmapped recollection file would be, ends recall with an error:
// the process lives on to exit 0.
func TestGuardedFault(t *testing.T) {
	page, err := syscall.Mmap(-1, 0, syscall.Getpagesize(), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Skip("no anonymous mapping here:", err)
	}
	if err := syscall.Munmap(page); err != nil {
		t.Fatal(err)
	}
	a := guarded(func() answer {
		var sum byte
		for _, b := range page { // unmapped: faults
			sum += b
		}
		return answer{err: fmt.Errorf("read an unmapped page without a fault (sum %d)", sum)}
	})
	if a.err == nil || !strings.Contains(a.err.Error(), "panicked") {
		t.Fatalf("guarded = %v, want the fault as a recall error", a.err)
	}
	if a := guarded(func() answer { panic("a bug") }); a.err == nil {
		t.Fatal("a panic is not a recall error")
	}
	if a := guarded(func() answer { return answer{} }); a.err != nil {
		t.Fatalf("a recall that does not fail: %v", a.err)
	}
}
