//go:build !unix

package stophook

import "os"

const oNoFollow = 0

func startDetached(bin string, args []string, out *os.File) (int, error) {
	return 0, errUnsupported
}
