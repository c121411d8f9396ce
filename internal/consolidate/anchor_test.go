package consolidate

import (
	"testing"

	"github.com/engram-memory/engram/internal/episode"
)

// TestProjectName: the project's own name, as the reading normalises it or
// as written, is never an old value; other names are.
func TestProjectName(t *testing.T) {
	e := &episode.Episode{Project: "risk-engine"}
	for name, want := range map[string]bool{"risk engine": true, "risk-engine": true, "Risk_Engine": true, "risk": false, "java 11": false} {
		if got := projectName(e, name); got != want {
			t.Errorf("projectName(%q) = %v, want %v", name, got, want)
		}
	}
	if projectName(&episode.Episode{}, "") {
		t.Error("no project: an empty name is the project's")
	}
}
