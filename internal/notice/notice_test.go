package notice

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestNoticeRoundTripAndLines(t *testing.T) {
	home := t.TempDir()
	t0 := time.Date(2026, 3, 1, 9, 30, 0, 0, time.UTC)
	for _, tc := range []struct {
		n    Notice
		want string
	}{
		{Notice{Oldest: t0}, "engram: the memory worker has never run; captures have waited since 2026-03-01T09:30:00Z; run `engram-worker doctor`"},
		{Notice{LastRun: t0, Oldest: t0.Add(time.Hour)}, "engram: the memory worker has not run since 2026-03-01T09:30:00Z; run `engram-worker doctor`"},
		{Notice{LastRun: t0.Add(48 * time.Hour), Oldest: t0}, "engram: captures have waited for the memory worker since 2026-03-01T09:30:00Z although it ran at 2026-03-03T09:30:00Z; run `engram-worker doctor`"},
	} {
		if changed, err := Write(home, tc.n); err != nil || !changed {
			t.Fatalf("Write: %v %v", changed, err)
		}
		if changed, _ := Write(home, tc.n); changed {
			t.Errorf("the same notice written twice")
		}
		got, ok := Read(home)
		if !ok || !got.LastRun.Equal(tc.n.LastRun) || !got.Oldest.Equal(tc.n.Oldest) {
			t.Errorf("Read %+v %v, want %+v", got, ok, tc.n)
		}
		if got.Line() != tc.want {
			t.Errorf("Line %q\nwant %q", got.Line(), tc.want)
		}
	}
	now := time.Now()
	if Due(home, now) == "" {
		t.Fatal("not due before it was told")
	}
	if err := Told(home, now); err != nil {
		t.Fatal(err)
	}
	if Due(home, now.Add(time.Hour)) != "" || Due(home, now.Add(Every+time.Minute)) == "" {
		t.Error("told once a day")
	}
	os.WriteFile(filepath.Join(home, Name), []byte("garbage"), 0o600)
	if _, ok := Read(home); ok || Due(home, now.Add(2*Every)) != "" {
		t.Error("a damaged notice is read")
	}
	if err := Remove(home); err != nil || Remove(home) != nil {
		t.Error(err)
	}
	// A symlink in place of the told stamp is not followed.
	target := filepath.Join(t.TempDir(), "elsewhere")
	os.WriteFile(target, nil, 0o600)
	os.Remove(filepath.Join(home, toldName))
	os.Symlink(target, filepath.Join(home, toldName))
	if err := Told(home, now); err == nil {
		t.Error("Told followed a symlink")
	}
}
