package embed

import (
	"errors"
	"math"
	"slices"
	"testing"
)

func TestCosine(t *testing.T) {
	tests := []struct {
		name string
		a, b []float32
		want float32
	}{
		{"identical", []float32{1, 2, 3}, []float32{1, 2, 3}, 1},
		{"scaled", []float32{1, 2, 3}, []float32{2, 4, 6}, 1},
		{"opposite", []float32{1, -2, 3}, []float32{-1, 2, -3}, -1},
		{"orthogonal", []float32{1, 0}, []float32{0, 1}, 0},
		{"45 degrees", []float32{1, 0}, []float32{1, 1}, float32(1 / math.Sqrt2)},
		{"odd length past the unrolled loop", []float32{1, 0, 0, 0, 0, 0, 1}, []float32{0, 0, 0, 0, 0, 0, 1}, float32(1 / math.Sqrt2)},
		{"zero vector", []float32{0, 0, 0}, []float32{1, 2, 3}, 0},
		{"both zero", []float32{0, 0}, []float32{0, 0}, 0},
		{"length mismatch", []float32{1, 2, 3}, []float32{1, 2}, 0},
		{"empty", nil, nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Cosine(tt.a, tt.b); math.Abs(float64(got-tt.want)) > 1e-6 {
				t.Errorf("Cosine(%v, %v)=%v, want %v", tt.a, tt.b, got, tt.want)
			}
		})
	}
}

func TestCosineMatchesFloat64(t *testing.T) {
	l := NewLocal()
	a, b := l.EmbedText(promptText), l.EmbedText(episodeText)
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	want := dot / math.Sqrt(na*nb)
	if got := Cosine(a, b); math.Abs(float64(got)-want) > 1e-5 {
		t.Errorf("Cosine=%v, float64 reference %v", got, want)
	}
}

func TestEncodeDecode(t *testing.T) {
	tests := []struct {
		name string
		v    []float32
	}{
		{"empty", []float32{}},
		{"one", []float32{1.5}},
		{"specials", []float32{0, float32(math.Copysign(0, -1)), -1, math.MaxFloat32, math.SmallestNonzeroFloat32, float32(math.Inf(1))}},
		{"local vector", NewLocal().EmbedText("round trip through a BLOB")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := Encode(tt.v)
			if len(b) != 4*len(tt.v) {
				t.Fatalf("len(Encode)=%d, want %d", len(b), 4*len(tt.v))
			}
			got, err := Decode(b)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.v) {
				t.Fatalf("len(Decode)=%d, want %d", len(got), len(tt.v))
			}
			for i := range got {
				if math.Float32bits(got[i]) != math.Float32bits(tt.v[i]) {
					t.Errorf("[%d]=%v, want %v (bit for bit)", i, got[i], tt.v[i])
				}
			}
		})
	}
}

func TestEncodeLittleEndian(t *testing.T) {
	// 1.0 is 0x3f800000: little-endian bytes 00 00 80 3f, the layout
	// SQLite BLOBs written by any engram build must share.
	if got, want := Encode([]float32{1}), []byte{0, 0, 0x80, 0x3f}; !slices.Equal(got, want) {
		t.Errorf("Encode([1])=% x, want % x", got, want)
	}
}

func TestDecodeBadLength(t *testing.T) {
	for _, n := range []int{1, 2, 3, 5, 1537} {
		_, err := Decode(make([]byte, n))
		if !errors.Is(err, ErrBadVector) {
			t.Errorf("Decode(%d bytes): err=%v, want ErrBadVector", n, err)
		}
	}
}
