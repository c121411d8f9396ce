package recall

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
	"unsafe"
)

func TestReplacement(t *testing.T) {
	for _, c := range []struct{ old, by, want string }{
		{"the build hosts use docker to build the agent image",
			"User: thanks! quick one. not docker anymore on the build hosts, it's podman. same commands mostly\n\nAssistant: Noted.",
			"not docker anymore on the build hosts, it's podman."},
		// A full stop inside a name ends no sentence.
		{"we deploy to Fly.io", "User: we moved off fly.io last week, Render runs it now\n\nAssistant: Noted.",
			"we moved off fly.io last week, Render runs it now"},
		// No term shared: the first sentence.
		{"redis 6", "User: it's 7.2 now. ops did it\n\nAssistant: ok", "it's 7.2 now."},
		{"anything", "Assistant: only the assistant spoke", ""},
		{"anything", "", ""},
	} {
		if got := Replacement(c.old, c.by); got != c.want {
			t.Errorf("Replacement(%q, %q) = %q, want %q", c.old, c.by, got, c.want)
		}
	}
	long := "User: " + strings.Repeat("docker word ", 40) + "\n\nAssistant: ok"
	if got := Replacement("docker", long); len(got) > ReplacedMax || !strings.HasSuffix(got, "…") {
		t.Errorf("a long correction is quoted as %d bytes %q, want at most %d ending in …", len(got), got, ReplacedMax)
	}
}

func TestSupersededLabel(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	at := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
	if got, want := SupersededLabel(`it's "podman" now`, at, now), `superseded 29 Nov 2026 by "it's 'podman' now"`; got != want {
		t.Errorf("label = %q, want %q", got, want)
	}
	if got := SupersededLabel("", at, now); got != "superseded by a later correction" {
		t.Errorf("label without the correction's words = %q", got)
	}
}

// A superseded item keeps what replaced it through a file, mapped as the
// prompt hook maps it, and a bite's label says it; an item written without
// reads without.
func TestReplacedRoundTrip(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	at := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
	f := &File{Embedder: "test", CreatedAt: now, Scope: "project", ProjectPath: "/p", Items: []Item{
		{Kind: KindEpisode, ID: "ep_000000000001", Text: "the build hosts use docker; built with cargo", At: now.Add(-30 * 24 * time.Hour),
			Superseded: true, Replaced: "not docker anymore, it's podman", ReplacedAt: at},
		{Kind: KindEpisode, ID: "ep_000000000002", Text: "superseded without a known correction", Superseded: true},
		// Replaced is only kept for a superseded item.
		{Kind: KindEpisode, ID: "ep_000000000003", Text: "current", Replaced: "stray", ReplacedAt: at},
	}}
	path := filepath.Join(t.TempDir(), "p.rec")
	if err := Save(path, f); err != nil {
		t.Fatal(err)
	}
	v, err := LoadView(path)
	if err != nil {
		t.Fatal(err)
	}
	var got []Item
	for i := range v.Len() {
		it, err := v.Item(i)
		if err != nil {
			t.Fatal(err)
		}
		it.detach()
		got = append(got, it)
	}
	v.Close()
	if got[0].Replaced != "not docker anymore, it's podman" || !got[0].ReplacedAt.Equal(at) {
		t.Errorf("item 0 reads Replaced %q at %v", got[0].Replaced, got[0].ReplacedAt)
	}
	for _, i := range []int{1, 2} {
		if got[i].Replaced != "" || !got[i].ReplacedAt.IsZero() {
			t.Errorf("item %d reads Replaced %q at %v, want none", i, got[i].Replaced, got[i].ReplacedAt)
		}
	}
	out, _ := Format(Result{Episodes: []Candidate{{Item: got[0]}, {Item: got[1]}}}, DefaultSettings.Limits, now)
	for _, want := range []string{`· superseded 29 Nov 2026 by "not docker anymore, it's podman"] `, "· superseded by a later correction] "} {
		if !strings.Contains(out, want) {
			t.Errorf("the bites do not say %q:\n%s", want, out)
		}
	}
}

// detach leaves no string of an item in its file's bytes: the prompt hook
// formats items after the files are unmapped, and a string left pointing
// into a mapping faults it.
func TestDetachOwnsEveryString(t *testing.T) {
	var it Item
	rv := reflect.ValueOf(&it).Elem()
	for i := range rv.NumField() {
		if f := rv.Field(i); f.Kind() == reflect.String && f.CanSet() {
			f.SetString("value of " + rv.Type().Field(i).Name)
		}
	}
	it.Superseded = true
	f := &File{Embedder: "test", Scope: "project", Items: []Item{it}}
	data := f.Encode()
	v, err := DecodeView(data)
	if err != nil {
		t.Fatal(err)
	}
	got, err := v.Item(0)
	if err != nil {
		t.Fatal(err)
	}
	got.detach()
	lo, hi := uintptr(unsafe.Pointer(unsafe.SliceData(data))), uintptr(unsafe.Pointer(unsafe.SliceData(data)))+uintptr(len(data))
	gv := reflect.ValueOf(got)
	for i := range gv.NumField() {
		fv := gv.Field(i)
		if fv.Kind() != reflect.String || fv.Len() == 0 {
			continue
		}
		s := fv.String()
		if p := uintptr(unsafe.Pointer(unsafe.StringData(s))); p >= lo && p < hi {
			t.Errorf("field %s still points into the file's bytes after detach", gv.Type().Field(i).Name)
		}
	}
}
