package main

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
)

// The PrefEval explicit-preference format (Zhao et al., ICLR 2025) as the
// dev split gives it: {"topics": {name: [{preference, question,
// explanation}]}, "filler": [{conversation: [{role, content}]}]}. Only the
// fields the harness uses are decoded.

// Item is one preference with the question that should bring it back.
type Item struct {
	Preference string `json:"preference"`
	Question   string `json:"question"`
}

// Message is one message of a filler conversation.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Filler is one unrelated real chat conversation.
type Filler struct {
	Conversation []Message `json:"conversation"`
}

// Data is the whole file.
type Data struct {
	Topics map[string][]Item `json:"topics"`
	Filler []Filler          `json:"filler"`
	// names are the topics in a fixed order (sorted).
	names []string
}

func loadData(path string) (*Data, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var d Data
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("%s: not a PrefEval-format file ({\"topics\": ..., \"filler\": ...}): %w", path, err)
	}
	for name, items := range d.Topics {
		if len(items) == 0 {
			return nil, fmt.Errorf("%s: topic %q has no preference", path, name)
		}
		d.names = append(d.names, name)
	}
	if len(d.names) == 0 {
		return nil, fmt.Errorf("%s: no topic", path)
	}
	sort.Strings(d.names)
	return &d, nil
}

// item is the protocol's choice for user u in a topic: preference number
// u mod (topic size), and the same item's question.
func (d *Data) item(topic string, u int) (Item, int) {
	items := d.Topics[topic]
	i := u % len(items)
	return items[i], i
}
