package recall

import (
	"encoding/binary"
	"math"
)

// Bloom is a Bloom filter of stems (by stemHash): the global recollection
// file carries one of every term in the store's index, so that the hook
// does not open the store for a prompt none of whose terms any episode
// holds (a prompt that has nothing to do with any memory).
type Bloom struct {
	Bits []byte // a multiple of 8 bytes
	K    int    // probes per key
}

// bloomBitsPerKey and bloomProbes give about 1% false positives.
const (
	bloomBitsPerKey = 10
	bloomProbes     = 7
	// maxBloomProbes bounds what a reader accepts.
	maxBloomProbes = 32
)

// NewBloom sizes a filter for n keys.
func NewBloom(n int) *Bloom {
	words := max(1, (n*bloomBitsPerKey+63)/64)
	return &Bloom{Bits: make([]byte, 8*words), K: bloomProbes}
}

// Add puts a stem hash in the filter.
func (b *Bloom) Add(h uint64) {
	m := uint64(len(b.Bits)) * 8
	h1, h2 := bloomHashes(h)
	for i := range b.K {
		bit := (h1 + uint64(i)*h2) % m
		b.Bits[bit/8] |= 1 << (bit % 8)
	}
}

// mayHold reports whether a stem hash may be in a filter's bits: false
// means surely not. Without bits (no filter), everything may be.
func mayHold(bits []byte, k int, h uint64) bool {
	if len(bits) == 0 || k <= 0 {
		return true
	}
	m := uint64(len(bits)) * 8
	h1, h2 := bloomHashes(h)
	for i := range k {
		bit := (h1 + uint64(i)*h2) % m
		if bits[bit/8]&(1<<(bit%8)) == 0 {
			return false
		}
	}
	return true
}

// MayHold reports whether the filter may hold h.
func (b *Bloom) MayHold(h uint64) bool { return b == nil || mayHold(b.Bits, b.K, h) }

// bloomHashes derives the two hashes of double hashing from a stem hash,
// mixed first (FNV's bits are not independent enough on their own).
func bloomHashes(h uint64) (uint64, uint64) {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], h)
	return uint64(binary.LittleEndian.Uint32(b[:4])), uint64(binary.LittleEndian.Uint32(b[4:])) | 1
}

// bloomRate is the expected false positive rate of a filter holding n keys.
func bloomRate(b *Bloom, n int) float64 {
	m := float64(len(b.Bits) * 8)
	return math.Pow(1-math.Exp(-float64(b.K)*float64(n)/m), float64(b.K))
}
