package transcript

import (
	"encoding/json"
	"io"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// repeatReader yields s repeated until n bytes have been read, so that a test
// can feed Read a line far larger than it wants to hold in memory itself.
type repeatReader struct {
	s string
	n int64
	i int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.n <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > r.n {
		p = p[:r.n]
	}
	n := 0
	for n < len(p) {
		c := copy(p[n:], r.s[r.i:])
		n += c
		r.i = (r.i + c) % len(r.s)
	}
	r.n -= int64(n)
	return n, nil
}

// allocated returns the bytes allocated while f runs.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

func TestReadLargeToolResult(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 20 MB line")
	}
	// Each unit is 62 bytes of JSON (\n escaped) and 61 decoded, mostly
	// two-byte runes: the kept text and the count of omitted bytes must be
	// in decoded bytes, and cuts must not split a rune.
	unit := strings.Repeat("é", 30) + "\n"
	n := 20 << 20 / 62
	line := `{"type":"user","uuid":"u","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"HEAD` +
		strings.Repeat(strings.Repeat("é", 30)+`\n`, n) + `TAIL","is_error":false}]},"toolUseResult":{"stdout":"(elided)"}}` + "\n"
	next := userLine("after")
	data := line + next
	if len(line) < 20<<20 {
		t.Fatalf("line is %d bytes, want at least 20 MB", len(line))
	}

	var res Result
	alloc := allocated(func() {
		var err error
		res, err = Read(strings.NewReader(data), 0, Options{})
		if err != nil {
			t.Fatal(err)
		}
	})
	checkResult(t, []byte(data), 0, Options{}, res)
	if res.End != int64(len(data)) || res.Skipped != 0 || len(res.Messages) != 2 {
		t.Fatalf("End=%d Skipped=%d messages=%d, want %d, 0, 2", res.End, res.Skipped, len(res.Messages), len(data))
	}
	got := res.Messages[0].Blocks[0].Text
	decoded := 8 + n*len(unit)
	head, tail, ok := strings.Cut(got, "\n…[truncated ")
	if !ok {
		t.Fatalf("no truncation marker in %q", got)
	}
	num, tail, _ := strings.Cut(tail, " bytes]…\n")
	omitted, err := strconv.Atoi(num)
	if err != nil {
		t.Fatalf("marker count %q: %v", num, err)
	}
	if !strings.HasPrefix(head, "HEAD") || !strings.HasSuffix(tail, "TAIL") {
		t.Errorf("head %q… tail …%q, want HEAD… and …TAIL", head[:10], tail[len(tail)-10:])
	}
	if len(head)+omitted+len(tail) != decoded {
		t.Errorf("kept %d+%d bytes and omitted %d, want %d in all", len(head), len(tail), omitted, decoded)
	}
	if len(head)+len(tail) > defaultMaxToolResult || len(head)+len(tail) < defaultMaxToolResult-2*utf8.UTFMax {
		t.Errorf("kept %d bytes, want close to %d", len(head)+len(tail), defaultMaxToolResult)
	}
	if !utf8.ValidString(got) || strings.ContainsRune(got, utf8.RuneError) {
		t.Errorf("a cut split a rune: %q", got)
	}
	// The line is read in pieces and joined (twice its size); its text is
	// never decoded whole, which would cost a third time.
	if limit := uint64(2.5 * float64(len(line))); alloc > limit {
		t.Errorf("allocated %d MB reading a %d MB line, want at most %d MB", alloc>>20, len(line)>>20, limit>>20)
	}
	t.Logf("allocated %.1f MB for a %.1f MB line", float64(alloc)/(1<<20), float64(len(line))/(1<<20))
}

func TestReadOverlongLineStreams(t *testing.T) {
	if testing.Short() {
		t.Skip("reads a 50 MB line")
	}
	prefix := `{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"`
	const size = 50 << 20
	before, after := userLine("before"), userLine("after")
	r := io.MultiReader(
		strings.NewReader(before+prefix),
		&repeatReader{s: "0123456789abcdef", n: size},
		strings.NewReader("\"}]}}\n"+after),
	)
	total := int64(len(before) + len(prefix) + size + len("\"}]}}\n") + len(after))
	var res Result
	alloc := allocated(func() {
		var err error
		res, err = Read(r, 0, Options{})
		if err != nil {
			t.Fatal(err)
		}
	})
	if res.End != total || res.Skipped != 1 {
		t.Errorf("End=%d Skipped=%d, want %d, 1", res.End, res.Skipped, total)
	}
	want := []brief{prompt("before"), prompt("after")}
	if got := briefs(res.Messages); !equalJSON(got, want) {
		t.Errorf("messages:\n got %s\nwant %s", dump(got), dump(want))
	}
	if want := res.End - int64(len(after)); res.Messages[1].Offset != want {
		t.Errorf("after: Offset=%d, want %d", res.Messages[1].Offset, want)
	}
	// Past MaxLine the line is discarded as it streams by: nothing more
	// than the first MaxLine bytes is ever held.
	if alloc > defaultMaxLine+2<<20 {
		t.Errorf("allocated %d MB skipping a %d MB line", alloc>>20, size>>20)
	}
	t.Logf("allocated %.1f MB skipping a %d MB line", float64(alloc)/(1<<20), size>>20)
}

func equalJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// Lines longer than the read buffer go the slow way; the MaxLine boundary
// must be the same there.
func TestMaxLineBoundary(t *testing.T) {
	for _, size := range []int{200, readBufSize - 1, readBufSize, readBufSize + 1, 3*readBufSize + 7} {
		l := userLine("x")
		l = userLine(strings.Repeat("x", size-len(l)+2)) // size bytes without the newline
		if len(l)-1 != size {
			t.Fatalf("built a line of %d bytes, want %d", len(l)-1, size)
		}
		for _, tt := range []struct {
			maxLine     int64
			wantSkipped int
		}{
			{int64(size), 0},
			{int64(size) - 1, 1},
		} {
			res := readString(t, l+userLine("next"), 0, Options{MaxLine: tt.maxLine})
			if res.Skipped != tt.wantSkipped || len(res.Messages) != 2-tt.wantSkipped {
				t.Errorf("line of %d, MaxLine %d: Skipped=%d messages=%d, want %d, %d",
					size, tt.maxLine, res.Skipped, len(res.Messages), tt.wantSkipped, 2-tt.wantSkipped)
			}
		}
	}
}
