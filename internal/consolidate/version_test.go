package consolidate

import "testing"

func TestVersioned(t *testing.T) {
	for _, c := range []struct{ value, name, version string }{
		{"python 3.12", "python", "3.12"},
		{"postgres 16", "postgres", "16"},
		{"node v20", "node", "v20"},
		{"aws provider 5.x", "aws provider", "5.x"},
		{"kubernetes 1.30", "kubernetes", "1.30"},
		{"python", "", ""},
		{"3.12", "", ""},
		{"port 8080 8081", "", ""},
		{"release 2024 10", "", ""},
		{"mysql 8.4 lts", "", ""},
		{"fastapi", "", ""},
	} {
		n, v, ok := versioned(c.value)
		if n != c.name || v != c.version || ok != (c.name != "") {
			t.Errorf("versioned(%q) = %q, %q, %v; want %q, %q", c.value, n, v, ok, c.name, c.version)
		}
	}
}

func TestOneSlot(t *testing.T) {
	for _, c := range []struct {
		a, b, name string
		want       bool
	}{
		{"python", "prod runs python", "python", true},
		{"database", "prod database", "postgres", true},
		{"legacy cli", "web app", "node", false},
		{"api", "worker", "python", false},
	} {
		if got := oneSlot(c.a, c.b, c.name); got != c.want {
			t.Errorf("oneSlot(%q, %q, %q) = %v", c.a, c.b, c.name, got)
		}
	}
}
