// Package safe keeps one failing item or step from stopping the rest: a
// panic becomes an error that says where it happened.
package safe

import (
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
)

// PanicError is a recovered panic: its value and the stack from where it
// was raised.
type PanicError struct {
	Value any
	Stack string
}

func (e *PanicError) Error() string { return fmt.Sprintf("panic: %v\n%s", e.Value, e.Stack) }

// maxStack bounds the stack kept: the frames nearest the panic say where.
const maxStack = 1500

// Recovered turns the value of recover() into a *PanicError (nil for nil).
// Call it in the deferred function itself, where the panicking frames are
// still on the stack.
func Recovered(r any) error {
	if r == nil {
		return nil
	}
	st := string(debug.Stack())
	// debug.Stack, Recovered and the deferred call come first; the frames
	// that panicked follow "panic(".
	if i := strings.Index(st, "\npanic("); i >= 0 {
		st = st[i+1:]
	}
	if len(st) > maxStack {
		st = st[:maxStack]
	}
	return &PanicError{Value: r, Stack: st}
}

// IsPanic reports whether err is, or wraps, a recovered panic.
func IsPanic(err error) bool {
	var p *PanicError
	return errors.As(err, &p)
}

// Run calls fn, a panic becoming an error.
func Run(fn func() error) (err error) {
	defer func() {
		if p := Recovered(recover()); p != nil {
			err = p
		}
	}()
	return fn()
}
