package learn

import (
	"bytes"
	"testing"

	"github.com/engram-memory/engram/internal/corpus"
	"github.com/engram-memory/engram/internal/reading"
)

const speech = "../../extract/testdata/speech"

func load(t *testing.T) []corpus.Item {
	t.Helper()
	items, err := corpus.LoadDir(speech)
	if err != nil {
		t.Fatal(err)
	}
	return items
}

// TestExamples: a label goes to the sentence that names its subject; the
// other sentences of the utterance say nothing lasting.
func TestExamples(t *testing.T) {
	items, err := corpus.Parse(bytes.NewBufferString("@source written/x\n"+
		"ok that worked. from now on never put emoji in commit messages. now fix the lint => pref - g emoji :: Never put emoji in commit messages.\n"), "t")
	if err != nil {
		t.Fatal(err)
	}
	ex := Examples(items)
	if len(ex) != 3 {
		t.Fatalf("%d examples, want 3: %+v", len(ex), ex)
	}
	for i, want := range []int{reading.None, reading.Pref, reading.None} {
		if ex[i].Kind != want {
			t.Errorf("sentence %d %q: kind %d, want %d", i, ex[i].Text, ex[i].Kind, want)
		}
	}
	if ex[1].Global != 1 || ex[1].Positive != 0 {
		t.Errorf("scope %d polarity %d, want 1 and 0", ex[1].Global, ex[1].Positive)
	}
	spans := SpanExamples(items)
	if len(spans) != 1 || spans[0].In[reading.SpanSubject] == nil {
		t.Fatalf("span examples %+v, want one with a subject", spans)
	}
	var got []string
	for i, in := range spans[0].In[reading.SpanSubject] {
		if in {
			got = append(got, spans[0].Words[i].W)
		}
	}
	if len(got) != 1 || got[0] != "emoji" {
		t.Errorf("subject words %v, want [emoji]", got)
	}
}
