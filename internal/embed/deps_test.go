package embed

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoRemoteDependencies guards the split between embed and
// embed/remote: the prompt hook imports embed for Local and must not link
// go-openai (or any HTTP client) through it.
func TestNoRemoteDependencies(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go tool not in PATH")
	}
	out, err := exec.Command(goTool, "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if strings.Contains(pkg, "go-openai") || pkg == "net/http" || strings.HasSuffix(pkg, "internal/embed/remote") {
			t.Errorf("package embed depends on %s; keep network code in embed/remote", pkg)
		}
	}
}
