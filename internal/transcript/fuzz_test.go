package transcript

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/engram-memory/engram/internal/inject"
)

// fuzzSeeds are small transcripts covering the shapes Read knows: the
// fixtures' conversation lines one by one, grouped assistant lines, and the
// edge cases of the table tests.
func fuzzSeeds(f *testing.F) [][]byte {
	var seeds [][]byte
	for _, name := range []string{"session-1.jsonl", "session-2.jsonl"} {
		for _, l := range bytes.SplitAfter(readFixture(f, name), []byte("\n")) {
			// The fixtures' non-conversation lines are large and many;
			// a few of each kind are enough to seed.
			if len(l) > 4096 && !bytes.Contains(l, []byte(`"type":"user"`)) && !bytes.Contains(l, []byte(`"type":"assistant"`)) {
				continue
			}
			seeds = append(seeds, l)
		}
	}
	seeds = append(seeds,
		[]byte(groupedTranscript()),
		[]byte(userLine("ok")+`{"type":"user","message":{"content":"hal`),
		[]byte("{not json\n\n"+userLine("x")),
		[]byte(strings.ReplaceAll(userLine("crlf")+assistantLine("m", blocks(text("y"))), "\n", "\r\n")),
		[]byte(strings.Replace(userLine("bad \x01"), `\u0001`, "\xff", 1)),
		[]byte(userLine(blocks(toolResult("t", []obj{text("a"), {"type": "image"}}, true), text("typed")))+
			userLine(inject.Wrap("m")+"q")+userLine("<command-name>/x</command-name>")),
		[]byte(assistantLine("m", blocks(obj{"type": "thinking", "thinking": "t"}, toolUse("t1", "Write", obj{"file_path": "/a", "content": "x\ny"})))+
			assistantLine("m", blocks(toolUse("t1", "Write", obj{"file_path": "/a", "content": "x\ny"}), text("done")))),
		[]byte(userLine(blocks(toolResult("t", strings.Repeat("é\\\"\n", 300), false)))),
		[]byte(userLine("s", obj{"isSidechain": true})+userLine("m", obj{"isMeta": "yes"})),
	)
	return seeds
}

func FuzzRead(f *testing.F) {
	for i, s := range fuzzSeeds(f) {
		f.Add(s, uint32(i*37), uint16(0), uint8(0))
		f.Add(s, uint32(len(s)/2), uint16(200+i), uint8(40))
	}
	f.Fuzz(func(t *testing.T, data []byte, split uint32, maxLine uint16, limit uint8) {
		const start = 777
		opt := Options{MaxLine: int64(maxLine), MaxToolResult: int(limit), MaxToolInput: int(limit) / 2}
		full, err := Read(bytes.NewReader(data), start, opt)
		if err != nil {
			t.Fatalf("Read: %v", err)
		}
		checkResult(t, data, start, opt, full)

		// Lines longer than the read buffer take another path; it must
		// agree with the short one.
		small, err := read(bytes.NewReader(data), start, opt, 16)
		if err != nil {
			t.Fatalf("read with a small buffer: %v", err)
		}
		if !reflect.DeepEqual(small, full) {
			t.Fatalf("with a 16-byte buffer:\n got %s\nwant %s", dump(small), dump(full))
		}

		// A first pass over a prefix, as when Claude Code is mid-write,
		// then a second from where it stopped, read the same.
		k := int(split % uint32(len(data)+1))
		r1, err := Read(bytes.NewReader(data[:k]), start, opt)
		if err != nil {
			t.Fatalf("Read prefix: %v", err)
		}
		checkResult(t, data[:k], start, opt, r1)
		rest := data[r1.End-start:]
		r2, err := Read(bytes.NewReader(rest), r1.End, opt)
		if err != nil {
			t.Fatalf("Read rest: %v", err)
		}
		checkResult(t, rest, r1.End, opt, r2)
		if r2.End != full.End || r1.Skipped+r2.Skipped != full.Skipped {
			t.Fatalf("split at %d: End=%d Skipped=%d+%d, want %d, %d", k, r2.End, r1.Skipped, r2.Skipped, full.End, full.Skipped)
		}
		if got := mergeMessages(r1.Messages, r2.Messages); !reflect.DeepEqual(got, full.Messages) {
			t.Fatalf("split at %d:\n got %s\nwant %s", k, dump(got), dump(full.Messages))
		}

		_ = Render(full.Messages)
		n := 0
		for _, turn := range Turns(full.Messages) {
			n += len(turn)
		}
		if n != len(full.Messages) {
			t.Fatalf("Turns holds %d messages, want %d", n, len(full.Messages))
		}
	})
}
