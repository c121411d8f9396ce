package minilm

import (
	"strings"
	"sync"
	"testing"
)

// Close while embeddings are under way waits for them: the prompt hook
// returns at its deadline with its embedding still running, and an unmap
// under the running kernels would end the process with a fault (exit 2,
// which erases the user's prompt).
func TestCloseWaitsForEmbeddings(t *testing.T) {
	text := strings.Repeat("the deploy script pushes the image to the registry and restarts the service ", 8)
	for range 20 {
		m := testModel(t)
		var wg sync.WaitGroup
		started := make(chan struct{})
		for g := range 3 {
			wg.Go(func() {
				defer func() { recover() }() // started after Close: errClosed
				if g == 0 {
					close(started)
				}
				v := m.EmbedText(text, 128)
				if len(v) != Dim {
					t.Errorf("vector of %d", len(v))
				}
			})
		}
		<-started
		if err := m.Close(); err != nil {
			t.Fatal(err)
		}
		wg.Wait()
	}
	m := testModel(t)
	m.Close()
	func() {
		defer func() {
			if recover() == nil {
				t.Error("an embedding after Close did not fail")
			}
		}()
		m.EmbedText("after close", 16)
	}()
}
