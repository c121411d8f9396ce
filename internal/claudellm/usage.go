package claudellm

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// UsageFile is the name of the day's usage record in the data directory.
const UsageFile = "llm-usage.json"

// Usage is one day's use of the backend, kept in $ENGRAM_HOME/llm-usage.json
// across worker cycles. Only the worker writes it, under its lock.
type Usage struct {
	// Day is the local date the counters are for (YYYY-MM-DD); a record of
	// another day counts as empty.
	Day string `json:"day"`
	// Calls is the number of times the claude binary was run.
	Calls int `json:"calls"`
	// EstTokens is the estimated input tokens of those calls: the client's
	// own count when it reported one, else the prompt's bytes / 4 plus the
	// client's fixed overhead.
	EstTokens int64 `json:"est_tokens"`
	// OutputTokens as the client reported them.
	OutputTokens int64 `json:"output_tokens"`
	// CostUSD as the client reported it (list price; a subscription is
	// billed differently).
	CostUSD float64 `json:"cost_usd"`
	// Fell back: calls not made or not usable, by reason. The caller used
	// the local path for what they were for.
	Budget    int `json:"fell_back_budget"`
	RateLimit int `json:"fell_back_rate_limit"`
	Auth      int `json:"fell_back_auth"`
	Malformed int `json:"fell_back_malformed"`
	Failed    int `json:"fell_back_failed"`
	Cooldown  int `json:"fell_back_cooldown"`
	// CooldownUntil: after a rate limit or an authentication error no call
	// is made before this time.
	CooldownUntil time.Time `json:"cooldown_until,omitzero"`
	// LastError is the last failure, one line.
	LastError string `json:"last_error,omitempty"`
}

// FellBack is the number of calls whose work went to the local path.
func (u Usage) FellBack() int {
	return u.Budget + u.RateLimit + u.Auth + u.Malformed + u.Failed + u.Cooldown
}

// ReadUsage reads the record in dir for the day of now; a missing,
// unreadable or older record is an empty one for today (the cooldown
// carries over midnight).
func ReadUsage(dir string, now time.Time) Usage {
	today := now.Format(time.DateOnly)
	b, err := os.ReadFile(filepath.Join(dir, UsageFile))
	if err != nil {
		return Usage{Day: today}
	}
	var u Usage
	if json.Unmarshal(b, &u) != nil {
		return Usage{Day: today}
	}
	if u.Day != today {
		return Usage{Day: today, CooldownUntil: u.CooldownUntil}
	}
	return u
}

// writeUsage replaces the record (temporary file, 0600, rename).
func writeUsage(dir string, u Usage) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	b, err := json.MarshalIndent(u, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".llm-usage-*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	dst := filepath.Join(dir, UsageFile)
	if fi, err := os.Lstat(dst); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("%s is a symbolic link: not replacing it", dst)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return os.Rename(tmp.Name(), dst)
}
