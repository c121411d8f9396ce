package minilm

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
)

// The runtime file (RuntimeFile in the model directory) holds everything
// Embed needs, laid out so that Open is a mmap and a few header checks:
//
//	header   headerSize bytes: magic, version, dimensions, section table, CRCs
//	vocab    the word pieces, concatenated
//	offsets  uint32 × (vocab+1): piece i is vocab[offsets[i]:offsets[i+1]]
//	slots    uint32 × hashSlots: open-addressing table, piece id+1 (0 = empty)
//	weights  little-endian, in the order of layout(): float32, except the
//	         four matrices of each layer in a version-2 file, which are
//	         IEEE half precision (float16)
//
// Every section starts on a 64-byte boundary (cache line, and float32
// alignment for the mmapped slices). Open checks the header CRC, the
// vocabulary CRC and that the file is exactly as long as the header says;
// the weights CRC costs a read of 90 MB, so only (*Model).Check does it.
const (
	RuntimeFile = "minilm.engram"

	magic = "ENGRMLM\x00"
	// versionF32 files hold every weight in float32, the query weights
	// and bias pre-scaled by 1/sqrt(head size); versionF16 files hold the
	// layers' matrices in float16, as the published model has them (so
	// exactly), and the query unscaled: the forward pass scales the
	// query after its product. A product streams every weight of its
	// matrix, so half the bytes is a faster prompt (matrices.go).
	versionF32 = 1
	versionF16 = 2
	headerSize = 256
	align      = 64
	panel      = 16 // output columns per packed weight panel
)

// header fields, in file order after the magic; all uint32 except eps.
type header struct {
	Version    uint32
	Vocab      uint32 // vocabulary size
	Hidden     uint32 // 384
	Layers     uint32 // 6
	Heads      uint32 // 12
	Inter      uint32 // 1536
	MaxPos     uint32 // 512
	Eps        float32
	CLS, SEP   uint32
	UNK        uint32
	MaxChars   uint32 // longest word WordPiece splits; longer ones are [UNK]
	HashSlots  uint32 // power of two
	VocabOff   uint64
	VocabLen   uint64
	OffsOff    uint64
	SlotsOff   uint64
	WeightsOff uint64
	FileSize   uint64
	VocabCRC   uint32 // over vocab, offsets and slots
	WeightsCRC uint32
	HeaderCRC  uint32 // over the header bytes before it
}

func (h *header) encode() []byte {
	b := make([]byte, headerSize)
	copy(b, magic)
	le := binary.LittleEndian
	p := 8
	u32 := func(v uint32) { le.PutUint32(b[p:], v); p += 4 }
	u64 := func(v uint64) { le.PutUint64(b[p:], v); p += 8 }
	u32(h.Version)
	u32(h.Vocab)
	u32(h.Hidden)
	u32(h.Layers)
	u32(h.Heads)
	u32(h.Inter)
	u32(h.MaxPos)
	u32(math.Float32bits(h.Eps))
	u32(h.CLS)
	u32(h.SEP)
	u32(h.UNK)
	u32(h.MaxChars)
	u32(h.HashSlots)
	u64(h.VocabOff)
	u64(h.VocabLen)
	u64(h.OffsOff)
	u64(h.SlotsOff)
	u64(h.WeightsOff)
	u64(h.FileSize)
	u32(h.VocabCRC)
	u32(h.WeightsCRC)
	h.HeaderCRC = crc32.ChecksumIEEE(b[:p])
	u32(h.HeaderCRC)
	return b
}

// errFormat is wrapped by every complaint about a damaged or foreign file.
var errFormat = errors.New("not a valid minilm runtime file")

func decodeHeader(b []byte) (*header, error) {
	if len(b) < headerSize {
		return nil, fmt.Errorf("%w: %d bytes, shorter than its header", errFormat, len(b))
	}
	if string(b[:8]) != magic {
		return nil, fmt.Errorf("%w: bad magic", errFormat)
	}
	le := binary.LittleEndian
	p := 8
	u32 := func() uint32 { v := le.Uint32(b[p:]); p += 4; return v }
	u64 := func() uint64 { v := le.Uint64(b[p:]); p += 8; return v }
	h := &header{}
	h.Version = u32()
	if h.Version != versionF32 && h.Version != versionF16 {
		return nil, fmt.Errorf("%w: version %d, want %d or %d (convert the model again)", errFormat, h.Version, versionF32, versionF16)
	}
	h.Vocab, h.Hidden, h.Layers, h.Heads = u32(), u32(), u32(), u32()
	h.Inter, h.MaxPos = u32(), u32()
	h.Eps = math.Float32frombits(u32())
	h.CLS, h.SEP, h.UNK, h.MaxChars, h.HashSlots = u32(), u32(), u32(), u32(), u32()
	h.VocabOff, h.VocabLen, h.OffsOff, h.SlotsOff, h.WeightsOff, h.FileSize = u64(), u64(), u64(), u64(), u64(), u64()
	h.VocabCRC, h.WeightsCRC = u32(), u32()
	want := crc32.ChecksumIEEE(b[:p])
	h.HeaderCRC = u32()
	if h.HeaderCRC != want {
		return nil, fmt.Errorf("%w: header checksum mismatch", errFormat)
	}
	return h, h.validate(uint64(len(b)))
}

// validate checks the dimensions against what the forward pass supports
// and every section against the file size, so that no later slice
// expression can go out of bounds.
func (h *header) validate(size uint64) error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{errFormat}, a...)...)
	}
	switch {
	case h.FileSize != size:
		return bad("%d bytes, header says %d (truncated?)", size, h.FileSize)
	case h.Hidden == 0 || h.Hidden%panel != 0 || h.Hidden > 4096:
		return bad("hidden size %d", h.Hidden)
	case h.Heads == 0 || h.Hidden%h.Heads != 0:
		return bad("%d heads for hidden size %d", h.Heads, h.Hidden)
	case h.Inter == 0 || h.Inter%panel != 0 || h.Inter > 16384:
		return bad("intermediate size %d", h.Inter)
	case h.Layers == 0 || h.Layers > 64:
		return bad("%d layers", h.Layers)
	case h.MaxPos < 3 || h.MaxPos > 8192:
		return bad("%d positions", h.MaxPos)
	case h.Vocab == 0 || h.Vocab > 1<<22:
		return bad("vocabulary of %d", h.Vocab)
	case h.CLS >= h.Vocab || h.SEP >= h.Vocab || h.UNK >= h.Vocab:
		return bad("special token ids out of range")
	case h.HashSlots < 2*h.Vocab || h.HashSlots&(h.HashSlots-1) != 0:
		return bad("%d hash slots for %d pieces", h.HashSlots, h.Vocab)
	case !(h.Eps > 0 && h.Eps < 1):
		return bad("layer norm epsilon %g", h.Eps)
	}
	sections := []struct {
		name     string
		off, len uint64
	}{
		{"vocab", h.VocabOff, h.VocabLen},
		{"offsets", h.OffsOff, 4 * (uint64(h.Vocab) + 1)},
		{"slots", h.SlotsOff, 4 * uint64(h.HashSlots)},
		{"weights", h.WeightsOff, 4 * h.layout().total},
	}
	end := uint64(headerSize)
	for _, s := range sections {
		if s.off%align != 0 || s.off < end || s.len > size || s.off > size-s.len {
			return bad("%s section [%d, +%d) outside the file or overlapping", s.name, s.off, s.len)
		}
		end = s.off + s.len
	}
	return nil
}

// layout gives the offsets of every weight inside the weights section, in
// 4-byte units (a float32 each; in a version-2 file a matrix's float16
// values take two to a unit). Linear layers are stored packed (see pack)
// with their bias after them; in a version-1 file the query weights and
// bias are pre-scaled by 1/sqrt(head size); token type 0 is folded into
// the position embeddings.
type layout struct {
	word, pos, embLNg, embLNb uint64
	layers                    []layerLayout
	total                     uint64
}

type layerLayout struct {
	qkvW, qkvB, outW, outB, ln1g, ln1b, upW, upB, downW, downB, ln2g, ln2b uint64
}

func (h *header) layout() layout {
	H, I, V, P := uint64(h.Hidden), uint64(h.Inter), uint64(h.Vocab), uint64(h.MaxPos)
	var l layout
	next := uint64(0)
	take := func(n uint64) uint64 {
		o := next
		next += (n + 15) &^ 15 // keep every table 64-byte aligned
		return o
	}
	takeMat := take
	if h.Version == versionF16 {
		takeMat = func(n uint64) uint64 { return take((n + 1) / 2) }
	}
	l.word, l.pos = take(V*H), take(P*H)
	l.embLNg, l.embLNb = take(H), take(H)
	for range h.Layers {
		var ll layerLayout
		ll.qkvW, ll.qkvB = takeMat(3*H*H), take(3*H)
		ll.outW, ll.outB = takeMat(H*H), take(H)
		ll.ln1g, ll.ln1b = take(H), take(H)
		ll.upW, ll.upB = takeMat(I*H), take(I)
		ll.downW, ll.downB = takeMat(H*I), take(H)
		ll.ln2g, ll.ln2b = take(H), take(H)
		l.layers = append(l.layers, ll)
	}
	l.total = next
	return l
}

// slots lists every tensor of the layout in file order: its offset, its
// number of values, and whether it is a layer's matrix (float16 in a
// version-2 file). The layouts of the two versions list the same tensors
// in the same order.
func (l *layout) slots(h *header) []tensorSlot {
	H, I, V, P := uint64(h.Hidden), uint64(h.Inter), uint64(h.Vocab), uint64(h.MaxPos)
	s := []tensorSlot{{l.word, V * H, false}, {l.pos, P * H, false}, {l.embLNg, H, false}, {l.embLNb, H, false}}
	for _, ll := range l.layers {
		s = append(s,
			tensorSlot{ll.qkvW, 3 * H * H, true}, tensorSlot{ll.qkvB, 3 * H, false},
			tensorSlot{ll.outW, H * H, true}, tensorSlot{ll.outB, H, false},
			tensorSlot{ll.ln1g, H, false}, tensorSlot{ll.ln1b, H, false},
			tensorSlot{ll.upW, I * H, true}, tensorSlot{ll.upB, I, false},
			tensorSlot{ll.downW, H * I, true}, tensorSlot{ll.downB, H, false},
			tensorSlot{ll.ln2g, H, false}, tensorSlot{ll.ln2b, H, false})
	}
	return s
}

type tensorSlot struct {
	off, n uint64
	matrix bool
}

func alignUp(n uint64) uint64 { return (n + align - 1) &^ (align - 1) }
