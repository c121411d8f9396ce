package safe

import (
	"errors"
	"strings"
	"testing"
)

func explode(s []int) int { return s[len(s)] }

func TestRun(t *testing.T) {
	if err := Run(func() error { return nil }); err != nil {
		t.Fatalf("Run(nil) = %v", err)
	}
	plain := errors.New("plain")
	if err := Run(func() error { return plain }); err != plain || IsPanic(err) {
		t.Fatalf("Run(plain) = %v", err)
	}
	err := Run(func() error { explode(nil); return nil })
	if !IsPanic(err) {
		t.Fatalf("Run(panic) = %v, want a panic error", err)
	}
	// The message names the panic and the function that raised it.
	if msg := err.Error(); !strings.Contains(msg, "index out of range") || !strings.Contains(msg, "safe.explode") {
		t.Errorf("error %q does not say what and where", msg)
	}
	if len(err.(*PanicError).Stack) > maxStack {
		t.Errorf("stack of %d bytes", len(err.(*PanicError).Stack))
	}
	if !IsPanic(errors.Join(errors.New("x"), err)) {
		t.Error("IsPanic does not see a wrapped panic")
	}
}
