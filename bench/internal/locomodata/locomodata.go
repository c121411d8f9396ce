// Package locomodata reads the LoCoMo format (Maharana et al., ACL 2024)
// for engram's benchmarks: bench/locomo and bench/retrievers.
package locomodata

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// The LoCoMo format (Maharana et al., ACL 2024): a JSON list of samples,
// each with a conversation of numbered sessions and its questions. Only the
// fields the harness uses are decoded; the others are ignored.

// Sample is one LoCoMo conversation with its questions.
type Sample struct {
	ID       string
	SpeakerA string
	SpeakerB string
	Sessions []Session
	QA       []QA
}

// Session is one LoCoMo session: a dated list of dialog turns.
type Session struct {
	N       int
	RawDate string
	Date    time.Time // zero when RawDate does not parse
	Turns   []Turn
}

// Turn is one dialog turn.
type Turn struct {
	Speaker string `json:"speaker"`
	DiaID   string `json:"dia_id"`
	Text    string `json:"text"`
	// Caption describes a photo the speaker shared (LoCoMo's BLIP caption);
	// used only with -captions.
	Caption string `json:"blip_caption"`
}

// QA is one question.
type QA struct {
	Question string
	Category int
	// Evidence is the raw list of dia_ids; see ParseEvidence.
	Evidence []string
}

type rawSample struct {
	SampleID     string                     `json:"sample_id"`
	Conversation map[string]json.RawMessage `json:"conversation"`
	QA           []struct {
		Question string          `json:"question"`
		Category int             `json:"category"`
		Evidence json.RawMessage `json:"evidence"`
	} `json:"qa"`
}

var sessionKey = regexp.MustCompile(`^session_(\d+)$`)

// Load reads a LoCoMo-format file.
func Load(path string) ([]Sample, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var raw []rawSample
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("%s: not a LoCoMo-format file (a JSON list of samples): %w", path, err)
	}
	var out []Sample
	for i, r := range raw {
		s := Sample{ID: r.SampleID}
		if s.ID == "" {
			s.ID = fmt.Sprintf("sample-%d", i+1)
		}
		str := func(k string) string {
			var v string
			if m, ok := r.Conversation[k]; ok {
				_ = json.Unmarshal(m, &v)
			}
			return v
		}
		s.SpeakerA, s.SpeakerB = str("speaker_a"), str("speaker_b")
		for k, v := range r.Conversation {
			m := sessionKey.FindStringSubmatch(k)
			if m == nil {
				continue
			}
			n, _ := strconv.Atoi(m[1])
			var turns []Turn
			if err := json.Unmarshal(v, &turns); err != nil {
				return nil, fmt.Errorf("%s: %s.%s: %w", path, s.ID, k, err)
			}
			ses := Session{N: n, RawDate: str(k + "_date_time"), Turns: turns}
			ses.Date, _ = ParseDate(ses.RawDate)
			s.Sessions = append(s.Sessions, ses)
		}
		sort.Slice(s.Sessions, func(a, b int) bool { return s.Sessions[a].N < s.Sessions[b].N })
		for _, q := range r.QA {
			qa := QA{Question: q.Question, Category: q.Category}
			// evidence is a list of strings; tolerate a single string.
			var list []string
			if json.Unmarshal(q.Evidence, &list) != nil {
				var one string
				if json.Unmarshal(q.Evidence, &one) == nil && one != "" {
					list = []string{one}
				}
			}
			qa.Evidence = list
			s.QA = append(s.QA, qa)
		}
		out = append(out, s)
	}
	return out, nil
}

// ParseDate reads LoCoMo's session dates, "1:56 pm on 8 May, 2023", as UTC.
func ParseDate(s string) (time.Time, error) {
	s = strings.Join(strings.Fields(s), " ")
	for _, layout := range []string{"3:04 pm on 2 January, 2006", "3:04 pm on 2 Jan, 2006", "3:04 PM on 2 January, 2006"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("date %q: want like \"1:56 pm on 8 May, 2023\"", s)
}

var diaPiece = regexp.MustCompile(`^D:?(\d+):(\d+)$`)

// EvidenceParse is the outcome of parsing one question's evidence list.
type EvidenceParse struct {
	IDs      []string // canonical dia_ids ("D3:12"), deduplicated, in order
	Repaired int      // ids recovered from a malformed entry ("D1:3; D1:4", "D:11:26")
	Skipped  []string // pieces that name no dia_id
}

// ParseEvidence splits and canonicalises an evidence list. Entries are
// normally single dia_ids ("D1:3"); some are several joined by ';' or ','
// or carry a stray colon ("D:11:26"). Pieces that are not of the form
// D<session>:<turn> are skipped and reported.
func ParseEvidence(list []string) EvidenceParse {
	var p EvidenceParse
	seen := map[string]bool{}
	for _, e := range list {
		pieces := strings.FieldsFunc(e, func(r rune) bool { return r == ';' || r == ',' || r == ' ' || r == '\t' })
		multi := len(pieces) > 1
		for _, piece := range pieces {
			m := diaPiece.FindStringSubmatch(piece)
			if m == nil {
				p.Skipped = append(p.Skipped, piece)
				continue
			}
			sn, _ := strconv.Atoi(m[1])
			tn, _ := strconv.Atoi(m[2])
			id := fmt.Sprintf("D%d:%d", sn, tn)
			if multi || id != piece {
				p.Repaired++
			}
			if !seen[id] {
				seen[id] = true
				p.IDs = append(p.IDs, id)
			}
		}
		if len(pieces) == 0 {
			p.Skipped = append(p.Skipped, e)
		}
	}
	return p
}

// Category names of LoCoMo's question categories.
var categoryNames = map[int]string{
	1: "multi-hop",
	2: "temporal",
	3: "open-domain",
	4: "single-hop",
	5: "adversarial",
}

// CategoryName names a LoCoMo question category.
func CategoryName(c int) string {
	if n, ok := categoryNames[c]; ok {
		return n
	}
	return fmt.Sprintf("category-%d", c)
}
