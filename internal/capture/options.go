package capture

import (
	"github.com/engram-memory/engram/internal/config"
	"github.com/engram-memory/engram/internal/transcript"
)

// OptionsFrom derives capture options from the configuration.
func OptionsFrom(c config.Config) Options {
	return Options{
		Transcript: transcript.Options{MaxToolResult: c.ToolResultMax, MaxToolInput: c.ToolInputMax, MaxLine: c.MaxLine},
		CaptureMax: c.CaptureMax,
	}
}
