//go:build !unix

package minilm

func mapFile(path string) ([]byte, func([]byte) error, error) { return readFile(path) }
