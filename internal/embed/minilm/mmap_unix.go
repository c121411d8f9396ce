//go:build unix

package minilm

import (
	"fmt"
	"os"
	"syscall"
)

// mapFile maps path read-only and shared: pages come from the page cache
// as they are touched, and every process embedding shares them.
func mapFile(path string) ([]byte, func([]byte) error, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, nil, fmt.Errorf("%s: not a regular file", path)
	}
	if fi.Size() < headerSize || fi.Size() > 1<<32 {
		return nil, nil, fmt.Errorf("%s: %w: %d bytes", path, errFormat, fi.Size())
	}
	data, err := syscall.Mmap(int(f.Fd()), 0, int(fi.Size()), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil, fmt.Errorf("mmap %s: %w", path, err)
	}
	return data, syscall.Munmap, nil
}
