package embed

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// ErrBadVector means bytes given to Decode are not a whole number of
// float32 values.
var ErrBadVector = errors.New("embed: vector bytes are not a multiple of 4")

// Cosine returns the cosine similarity of a and b, in [-1, 1]. It is 0 when
// the lengths differ (vectors of different embedders are never comparable)
// or when either vector is zero (a text without content words).
func Cosine(a, b []float32) float32 {
	if len(a) != len(b) || len(a) == 0 {
		return 0
	}
	b = b[:len(a)]
	// Four independent float32 lanes: about 4× faster than one float64
	// sum, and precise enough for ranking (relative error ~1e-6).
	var d0, d1, d2, d3, x0, x1, x2, x3, y0, y1, y2, y3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		a4, b4 := a[i:i+4:i+4], b[i:i+4:i+4]
		d0 += a4[0] * b4[0]
		d1 += a4[1] * b4[1]
		d2 += a4[2] * b4[2]
		d3 += a4[3] * b4[3]
		x0 += a4[0] * a4[0]
		x1 += a4[1] * a4[1]
		x2 += a4[2] * a4[2]
		x3 += a4[3] * a4[3]
		y0 += b4[0] * b4[0]
		y1 += b4[1] * b4[1]
		y2 += b4[2] * b4[2]
		y3 += b4[3] * b4[3]
	}
	for ; i < len(a); i++ {
		d0 += a[i] * b[i]
		x0 += a[i] * a[i]
		y0 += b[i] * b[i]
	}
	dot := float64((d0 + d1) + (d2 + d3))
	na := float64((x0 + x1) + (x2 + x3))
	nb := float64((y0 + y1) + (y2 + y3))
	if na == 0 || nb == 0 {
		return 0
	}
	c := dot / math.Sqrt(na*nb)
	return float32(max(-1, min(1, c)))
}

// Encode packs v as little-endian IEEE-754 float32 values, 4 bytes each:
// the BLOB layout of stored embeddings.
func Encode(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// Decode unpacks bytes written by Encode. A length that is not a multiple
// of 4 is an error wrapping ErrBadVector.
func Decode(b []byte) ([]float32, error) {
	if len(b)%4 != 0 {
		return nil, fmt.Errorf("decode %d bytes: %w", len(b), ErrBadVector)
	}
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v, nil
}
