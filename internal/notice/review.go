package notice

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// The review notice: the worker writes how many beliefs wait for the
// user's review (see internal/review) to a file, and the prompt hook
// mentions it once a day, in one line.
const (
	// ReviewName is the review notice file in ENGRAM_HOME.
	ReviewName = "review-waiting"
	// reviewToldName's modification time is when the prompt hook last told.
	reviewToldName = "review-waiting.told"
)

// WriteReview records that n beliefs wait for review (none: the file
// goes).
func WriteReview(home string, n int) error {
	path := filepath.Join(home, ReviewName)
	if n <= 0 {
		if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
			return err
		}
		return nil
	}
	_, err := replace(home, ReviewName, strconv.Itoa(n)+"\n")
	return err
}

// ReviewLine is the line for n beliefs waiting.
func ReviewLine(n int) string {
	what := fmt.Sprintf("%d beliefs wait", n)
	if n == 1 {
		what = "1 belief waits"
	}
	return "engram: " + what + " for the user's review before they reach long-term or core memory; " +
		"they can run `engram-worker review`, or go through them here with the memory_review tool"
}

// ReviewDue returns the review line to tell at now, "" when nothing waits
// or it was told within Every. One failed open when nothing waits.
func ReviewDue(home string, now time.Time) string {
	b, err := os.ReadFile(filepath.Join(home, ReviewName))
	if err != nil {
		return ""
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || n <= 0 {
		return ""
	}
	if toldWithin(home, reviewToldName, now) {
		return ""
	}
	return ReviewLine(n)
}

// ReviewTold records that the review line was told at now.
func ReviewTold(home string, now time.Time) error { return touch(home, reviewToldName, now) }
