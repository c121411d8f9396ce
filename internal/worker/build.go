package worker

import (
	"fmt"
	"os"
	"runtime/debug"
	"sync"
)

var (
	buildVersion, buildCommit string
	buildOnce                 sync.Once
	buildID                   string
)

// SetBuild records the version and commit stamped into the binary (main
// calls it before anything else).
func SetBuild(version, commit string) { buildVersion, buildCommit = version, commit }

// BuildID names the running build, so that what one build quarantined is
// tried again by the next: the stamped version and commit; without a
// stamped commit, the revision Go recorded; without one, the executable's
// size and modification time (a rebuilt binary differs).
func BuildID() string {
	buildOnce.Do(func() {
		if buildCommit != "" {
			buildID = buildVersion + "@" + buildCommit
			return
		}
		if bi, ok := debug.ReadBuildInfo(); ok {
			rev, dirty := "", ""
			for _, s := range bi.Settings {
				switch {
				case s.Key == "vcs.revision":
					rev = s.Value
				case s.Key == "vcs.modified" && s.Value == "true":
					dirty = "+dirty"
				}
			}
			if rev != "" && dirty == "" {
				buildID = buildVersion + "@" + rev
				return
			}
		}
		buildID = buildVersion + "@unstamped"
		if exe, err := os.Executable(); err == nil {
			if fi, err := os.Stat(exe); err == nil {
				buildID = fmt.Sprintf("%s@exe-%d-%d", buildVersion, fi.Size(), fi.ModTime().UnixNano())
			}
		}
	})
	return buildID
}
