//go:build !race

package minilm

const raceEnabled = false
