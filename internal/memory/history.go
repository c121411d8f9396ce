package memory

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/engram-memory/engram/internal/store"
)

// WriteHistory renders the history of one memory, oldest event first: when,
// what, what caused it and why, then the values that changed (before →
// after) or were set.
func WriteHistory(w io.Writer, id string, evs []store.Event) {
	if len(evs) == 0 {
		fmt.Fprintf(w, "%s: no history recorded (made before engram kept one)\n", id)
		return
	}
	fmt.Fprintf(w, "%s: %d event%s\n", id, len(evs), plural(len(evs)))
	for _, ev := range evs {
		line := fmt.Sprintf("%s  %-12s", ev.At.Local().Format("2006-01-02 15:04:05"), ev.Action)
		if ev.Cause != "" {
			line += "  by " + ev.Cause
		}
		if ev.Detail != "" {
			line += "  (" + ev.Detail + ")"
		}
		fmt.Fprintln(w, line)
		if ch := changes(ev.Before, ev.After); ch != "" {
			fmt.Fprintf(w, "    %s\n", ch)
		}
	}
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// changes lists the values of an event: "k: a → b" for one that changed,
// "k: b" for one set, "k: a → (none)" for one dropped; the statement first.
func changes(before, after map[string]any) string {
	keys := slices.Sorted(maps.Keys(after))
	for k := range before {
		if _, ok := after[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.SortStableFunc(keys, func(a, b string) int {
		switch {
		case a == b:
			return 0
		case a == "statement":
			return -1
		case b == "statement":
			return 1
		}
		return strings.Compare(a, b)
	})
	var parts []string
	for _, k := range keys {
		a, hadA := before[k]
		b, hasB := after[k]
		switch {
		case hadA && hasB && fmt.Sprint(a) == fmt.Sprint(b):
			continue
		case hadA && hasB:
			parts = append(parts, fmt.Sprintf("%s: %s → %s", k, show(a), show(b)))
		case hasB:
			parts = append(parts, fmt.Sprintf("%s: %s", k, show(b)))
		default:
			parts = append(parts, fmt.Sprintf("%s: %s → (none)", k, show(a)))
		}
	}
	return strings.Join(parts, " · ")
}

func show(v any) string {
	switch x := v.(type) {
	case string:
		return fmt.Sprintf("%q", x)
	case []any:
		s := make([]string, len(x))
		for i, e := range x {
			s[i] = fmt.Sprint(e)
		}
		return strings.Join(s, ", ")
	case []string:
		return strings.Join(x, ", ")
	}
	return fmt.Sprint(v)
}
