// Command engram-hook-userprompt is Claude Code's UserPromptSubmit hook. It
// will inject recalled memories; until recall exists it reads its input and
// prints nothing. It always exits 0: exit code 2 would erase the prompt.
package main

import (
	"io"
	"os"
)

func main() {
	defer func() {
		recover()
		os.Exit(0)
	}()
	_, _ = io.Copy(io.Discard, io.LimitReader(os.Stdin, 16<<20))
}
