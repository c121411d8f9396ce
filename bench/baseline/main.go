// Command baseline is the floor the Stop hook is measured against: a Go
// hello-world that reads all of stdin, as every hook must, and exits 0.
package main

import (
	"io"
	"os"
)

func main() {
	io.Copy(io.Discard, os.Stdin)
}
