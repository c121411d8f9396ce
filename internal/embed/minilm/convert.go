package minilm

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"os"
	"path/filepath"
	"strings"
)

// Convert reads a Hugging Face model directory (config.json, tokenizer.json
// and one BERT safetensors file, fp16, bf16 or fp32) and writes RuntimeFile
// into dstDir (created 0700 if missing) atomically: a temporary file,
// fsync, rename. On failure nothing is left behind. It checks that the
// tokenizer and model are the kind Embed implements (BERT normalizer and
// pre-tokenizer, WordPiece, a BERT encoder with GELU) rather than guessing.
func Convert(srcDir, dstDir string) error {
	cfg, err := readConfig(filepath.Join(srcDir, "config.json"))
	if err != nil {
		return err
	}
	tok, err := readTokenizer(filepath.Join(srcDir, "tokenizer.json"))
	if err != nil {
		return err
	}
	if len(tok.vocab) != cfg.VocabSize {
		return fmt.Errorf("minilm: tokenizer.json has %d pieces, config.json says %d", len(tok.vocab), cfg.VocabSize)
	}
	stPath, err := findSafetensors(srcDir)
	if err != nil {
		return err
	}
	st, err := readSafetensors(stPath)
	if err != nil {
		return err
	}

	h := &header{
		Version: versionF32, Vocab: uint32(cfg.VocabSize), Hidden: uint32(cfg.HiddenSize),
		Layers: uint32(cfg.NumHiddenLayers), Heads: uint32(cfg.NumAttentionHeads),
		Inter: uint32(cfg.IntermediateSize), MaxPos: uint32(cfg.MaxPositionEmbeddings),
		Eps: float32(cfg.LayerNormEps), CLS: tok.cls, SEP: tok.sep, UNK: tok.unk,
		MaxChars: uint32(tok.maxChars),
	}
	h.HashSlots = 1
	for h.HashSlots < 2*h.Vocab {
		h.HashSlots <<= 1
	}

	// Vocabulary sections.
	var blob []byte
	offs := make([]byte, 0, 4*(len(tok.vocab)+1))
	for _, p := range tok.vocab {
		offs = binary.LittleEndian.AppendUint32(offs, uint32(len(blob)))
		blob = append(blob, p...)
	}
	offs = binary.LittleEndian.AppendUint32(offs, uint32(len(blob)))
	slots := make([]uint32, h.HashSlots)
	mask := h.HashSlots - 1
	for id, p := range tok.vocab {
		i := pieceHash(false, []byte(p)) & mask
		for slots[i] != 0 {
			i = (i + 1) & mask
		}
		slots[i] = uint32(id) + 1
	}
	slotBytes := make([]byte, 0, 4*len(slots))
	for _, s := range slots {
		slotBytes = binary.LittleEndian.AppendUint32(slotBytes, s)
	}

	h.VocabOff = alignUp(headerSize)
	h.VocabLen = uint64(len(blob))
	h.OffsOff = alignUp(h.VocabOff + h.VocabLen)
	h.SlotsOff = alignUp(h.OffsOff + uint64(len(offs)))
	h.WeightsOff = alignUp(h.SlotsOff + uint64(len(slotBytes)))
	// The weights are built in float32 (version 1's layout, the query
	// unscaled), then written as the version this machine reads fastest:
	// float16 matrices where it has the kernels for them and float16
	// holds every matrix value exactly (the published model is float16),
	// else float32 with the query scaled. The file is little-endian, as
	// is every machine Open accepts.
	if !littleEndian() {
		return errors.New("minilm: big-endian machines are not supported")
	}
	l1 := h.layout()
	w1 := make([]float32, l1.total)
	if err := buildWeights(w1, h, cfg, st); err != nil {
		return err
	}
	if halfNative && matricesExact(w1, &l1, h) {
		h.Version = versionF16
	}
	l := h.layout()
	h.FileSize = h.WeightsOff + 4*l.total
	out := make([]byte, h.FileSize)
	copy(out[h.VocabOff:], blob)
	copy(out[h.OffsOff:], offs)
	copy(out[h.SlotsOff:], slotBytes)
	if h.Version == versionF32 {
		scaleQueryWeights(w1, &l1, h)
		copy(f32s(out[h.WeightsOff:], int(l.total)), w1)
	} else {
		ws, w16 := f32s(out[h.WeightsOff:], int(l.total)), u16s(out[h.WeightsOff:], int(2*l.total))
		from := l1.slots(h)
		for i, s := range l.slots(h) {
			src := w1[from[i].off : from[i].off+s.n]
			if !s.matrix {
				copy(ws[s.off:], src)
				continue
			}
			for j, x := range src {
				w16[2*s.off+uint64(j)], _ = halfOf(x)
			}
		}
	}
	h.VocabCRC = crc32.ChecksumIEEE(out[h.VocabOff:h.WeightsOff])
	h.WeightsCRC = crc32.ChecksumIEEE(out[h.WeightsOff:])
	copy(out, h.encode())
	return writeAtomic(dstDir, RuntimeFile, out)
}

// writeAtomic writes dir/name through a temporary file in dir: fsync,
// rename, fsync of the directory. A failure removes the temporary file.
func writeAtomic(dir, name string, data []byte) (err error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("minilm: %w", err)
	}
	f, err := os.CreateTemp(dir, "."+name+".tmp-*")
	if err != nil {
		return fmt.Errorf("minilm: %w", err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err = f.Chmod(0o600); err != nil {
		return fmt.Errorf("minilm: %w", err)
	}
	if _, err = f.Write(data); err != nil {
		return fmt.Errorf("minilm: writing %s: %w", f.Name(), err)
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("minilm: %w", err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("minilm: %w", err)
	}
	if err = os.Rename(f.Name(), filepath.Join(dir, name)); err != nil {
		return fmt.Errorf("minilm: %w", err)
	}
	if d, derr := os.Open(dir); derr == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

type bertConfig struct {
	ModelType             string  `json:"model_type"`
	HiddenAct             string  `json:"hidden_act"`
	HiddenSize            int     `json:"hidden_size"`
	IntermediateSize      int     `json:"intermediate_size"`
	NumHiddenLayers       int     `json:"num_hidden_layers"`
	NumAttentionHeads     int     `json:"num_attention_heads"`
	MaxPositionEmbeddings int     `json:"max_position_embeddings"`
	VocabSize             int     `json:"vocab_size"`
	LayerNormEps          float64 `json:"layer_norm_eps"`
	PositionEmbeddingType string  `json:"position_embedding_type"`
}

func readConfig(path string) (*bertConfig, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("minilm: %w", err)
	}
	var c bertConfig
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("minilm: %s: %w", path, err)
	}
	bad := func(what string, v any) error {
		return fmt.Errorf("minilm: %s: unsupported %s %v", path, what, v)
	}
	switch {
	case c.ModelType != "bert":
		return nil, bad("model_type", c.ModelType)
	case c.HiddenAct != "gelu":
		return nil, bad("hidden_act", c.HiddenAct)
	case c.PositionEmbeddingType != "" && c.PositionEmbeddingType != "absolute":
		return nil, bad("position_embedding_type", c.PositionEmbeddingType)
	case c.HiddenSize <= 0 || c.HiddenSize%panel != 0 || c.HiddenSize > 4096:
		return nil, bad("hidden_size", c.HiddenSize)
	case c.NumAttentionHeads <= 0 || c.HiddenSize%c.NumAttentionHeads != 0:
		return nil, bad("num_attention_heads", c.NumAttentionHeads)
	case c.IntermediateSize <= 0 || c.IntermediateSize%panel != 0 || c.IntermediateSize > 16384:
		return nil, bad("intermediate_size", c.IntermediateSize)
	case c.NumHiddenLayers <= 0 || c.NumHiddenLayers > 64:
		return nil, bad("num_hidden_layers", c.NumHiddenLayers)
	case c.MaxPositionEmbeddings < 3 || c.MaxPositionEmbeddings > 8192:
		return nil, bad("max_position_embeddings", c.MaxPositionEmbeddings)
	case c.VocabSize <= 0 || c.VocabSize > 1<<22:
		return nil, bad("vocab_size", c.VocabSize)
	}
	if c.LayerNormEps == 0 {
		c.LayerNormEps = 1e-12
	}
	if !(c.LayerNormEps > 0 && c.LayerNormEps < 1) {
		return nil, bad("layer_norm_eps", c.LayerNormEps)
	}
	return &c, nil
}

type tokenizerSpec struct {
	vocab         []string // by id
	cls, sep, unk uint32
	maxChars      int
}

// readTokenizer accepts the tokenizer.json of a BERT uncased model and
// nothing else: the tokenizer in this package implements exactly that
// pipeline.
func readTokenizer(path string) (*tokenizerSpec, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("minilm: %w", err)
	}
	var t struct {
		Normalizer *struct {
			Type               string `json:"type"`
			CleanText          bool   `json:"clean_text"`
			HandleChineseChars bool   `json:"handle_chinese_chars"`
			StripAccents       *bool  `json:"strip_accents"`
			Lowercase          bool   `json:"lowercase"`
		} `json:"normalizer"`
		PreTokenizer *struct {
			Type string `json:"type"`
		} `json:"pre_tokenizer"`
		Model struct {
			Type                    string         `json:"type"`
			UnkToken                string         `json:"unk_token"`
			ContinuingSubwordPrefix string         `json:"continuing_subword_prefix"`
			MaxInputCharsPerWord    int            `json:"max_input_chars_per_word"`
			Vocab                   map[string]int `json:"vocab"`
		} `json:"model"`
	}
	if err := json.Unmarshal(b, &t); err != nil {
		return nil, fmt.Errorf("minilm: %s: %w", path, err)
	}
	n := t.Normalizer
	switch {
	case n == nil || n.Type != "BertNormalizer" || !n.CleanText || !n.HandleChineseChars || !n.Lowercase ||
		(n.StripAccents != nil && !*n.StripAccents):
		return nil, fmt.Errorf("minilm: %s: unsupported normalizer (want BertNormalizer, uncased)", path)
	case t.PreTokenizer == nil || t.PreTokenizer.Type != "BertPreTokenizer":
		return nil, fmt.Errorf("minilm: %s: unsupported pre_tokenizer (want BertPreTokenizer)", path)
	case t.Model.Type != "WordPiece" || t.Model.ContinuingSubwordPrefix != "##":
		return nil, fmt.Errorf("minilm: %s: unsupported model %q (want WordPiece with ##)", path, t.Model.Type)
	case t.Model.MaxInputCharsPerWord <= 0:
		return nil, fmt.Errorf("minilm: %s: max_input_chars_per_word %d", path, t.Model.MaxInputCharsPerWord)
	}
	spec := &tokenizerSpec{vocab: make([]string, len(t.Model.Vocab)), maxChars: t.Model.MaxInputCharsPerWord}
	for p, id := range t.Model.Vocab {
		if id < 0 || id >= len(spec.vocab) || spec.vocab[id] != "" || p == "" {
			return nil, fmt.Errorf("minilm: %s: vocabulary ids are not 0..%d, each once", path, len(spec.vocab)-1)
		}
		spec.vocab[id] = p
	}
	special := func(p string) (uint32, error) {
		id, ok := t.Model.Vocab[p]
		if !ok {
			return 0, fmt.Errorf("minilm: %s: no %s in the vocabulary", path, p)
		}
		return uint32(id), nil
	}
	if spec.cls, err = special("[CLS]"); err != nil {
		return nil, err
	}
	if spec.sep, err = special("[SEP]"); err != nil {
		return nil, err
	}
	if spec.unk, err = special(t.Model.UnkToken); err != nil {
		return nil, err
	}
	return spec, nil
}

func findSafetensors(dir string) (string, error) {
	for _, name := range []string{"model.safetensors", "model.fp16.safetensors"} {
		if p := filepath.Join(dir, name); fileExists(p) {
			return p, nil
		}
	}
	m, _ := filepath.Glob(filepath.Join(dir, "*.safetensors"))
	if len(m) == 1 {
		return m[0], nil
	}
	return "", fmt.Errorf("minilm: %s: want one model.safetensors (found %d .safetensors files)", dir, len(m))
}

func fileExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

// tensor is one float tensor of a safetensors file, still encoded.
type tensor struct {
	dtype string
	shape []int
	raw   []byte
}

// floats decodes the tensor.
func (t tensor) floats() []float32 {
	size := 2
	if t.dtype == "F32" {
		size = 4
	}
	v := make([]float32, len(t.raw)/size)
	t.decode(v)
	return v
}

// decode writes the tensor's values into v (of its length).
func (t tensor) decode(v []float32) {
	for i := range v {
		switch t.dtype {
		case "F32":
			v[i] = math.Float32frombits(binary.LittleEndian.Uint32(t.raw[4*i:]))
		case "F16":
			v[i] = f16(binary.LittleEndian.Uint16(t.raw[2*i:]))
		case "BF16":
			v[i] = math.Float32frombits(uint32(binary.LittleEndian.Uint16(t.raw[2*i:])) << 16)
		}
	}
}

// tensors maps a tensor name (without any "bert." prefix) to its tensor.
type tensors map[string]tensor

func readSafetensors(path string) (tensors, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("minilm: %w", err)
	}
	if len(b) < 8 {
		return nil, fmt.Errorf("minilm: %s: too short for safetensors", path)
	}
	n := binary.LittleEndian.Uint64(b)
	if n > uint64(len(b)-8) {
		return nil, fmt.Errorf("minilm: %s: header length %d beyond the file", path, n)
	}
	var meta map[string]json.RawMessage
	if err := json.Unmarshal(b[8:8+n], &meta); err != nil {
		return nil, fmt.Errorf("minilm: %s: %w", path, err)
	}
	data := b[8+n:]
	ts := tensors{}
	for name, raw := range meta {
		if name == "__metadata__" {
			continue
		}
		var info struct {
			Dtype   string   `json:"dtype"`
			Shape   []int    `json:"shape"`
			Offsets []uint64 `json:"data_offsets"`
		}
		if err := json.Unmarshal(raw, &info); err != nil {
			return nil, fmt.Errorf("minilm: %s: tensor %s: %w", path, name, err)
		}
		size := map[string]uint64{"F16": 2, "BF16": 2, "F32": 4}[info.Dtype]
		if size == 0 {
			continue // position_ids and other integer buffers
		}
		count := uint64(1)
		for _, d := range info.Shape {
			if d <= 0 || d > 1<<24 {
				return nil, fmt.Errorf("minilm: %s: tensor %s: shape %v", path, name, info.Shape)
			}
			count *= uint64(d)
		}
		if len(info.Offsets) != 2 || info.Offsets[0] > info.Offsets[1] || info.Offsets[1] > uint64(len(data)) ||
			info.Offsets[1]-info.Offsets[0] != count*size {
			return nil, fmt.Errorf("minilm: %s: tensor %s: offsets %v do not fit", path, name, info.Offsets)
		}
		ts[strings.TrimPrefix(name, "bert.")] = tensor{info.Dtype, info.Shape, data[info.Offsets[0]:info.Offsets[1]]}
	}
	return ts, nil
}

// f16 widens an IEEE half-precision value.
func f16(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h) & 0x3ff
	switch {
	case exp == 0x1f: // Inf, NaN
		return math.Float32frombits(sign | 0xff<<23 | mant<<13)
	case exp != 0:
		return math.Float32frombits(sign | (exp+112)<<23 | mant<<13)
	case mant == 0:
		return math.Float32frombits(sign)
	default: // subnormal: mant × 2⁻²⁴
		v := float32(mant) / (1 << 24)
		if sign != 0 {
			v = -v
		}
		return v
	}
}

// matricesExact reports whether float16 holds every value of the layers'
// matrices in w (laid out as l) exactly.
func matricesExact(w []float32, l *layout, h *header) bool {
	for _, s := range l.slots(h) {
		if !s.matrix {
			continue
		}
		for _, x := range w[s.off : s.off+s.n] {
			if _, ok := halfOf(x); !ok {
				return false
			}
		}
	}
	return true
}

// scaleQueryWeights multiplies the query's weights and bias in w (laid
// out as l, version 1) by 1/sqrt(head size): the query's panels are the
// first H of the 3H packed output columns.
func scaleQueryWeights(w []float32, l *layout, h *header) {
	H := uint64(h.Hidden)
	s := float32(1 / math.Sqrt(float64(h.Hidden/h.Heads)))
	for _, ll := range l.layers {
		for _, part := range [][]float32{w[ll.qkvW : ll.qkvW+H*H], w[ll.qkvB : ll.qkvB+H]} {
			for i := range part {
				part[i] *= s
			}
		}
	}
}

// buildWeights lays the tensors out as version 1's layout() says, the
// query unscaled.
func buildWeights(w []float32, h *header, cfg *bertConfig, ts tensors) error {
	l := h.layout()
	H, I := int(h.Hidden), int(h.Inter)
	lookup := func(name string, shape ...int) (tensor, error) {
		t, ok := ts[name]
		if !ok {
			return t, fmt.Errorf("minilm: safetensors has no tensor %s", name)
		}
		if fmt.Sprint(t.shape) != fmt.Sprint(shape) {
			return t, fmt.Errorf("minilm: tensor %s has shape %v, want %v", name, t.shape, shape)
		}
		return t, nil
	}
	get := func(name string, shape ...int) ([]float32, error) {
		t, err := lookup(name, shape...)
		if err != nil {
			return nil, err
		}
		return t.floats(), nil
	}
	var errs []error
	// put decodes a tensor straight into its place: no copy of the
	// embedding table on the heap.
	put := func(off uint64, name string, shape ...int) []float32 {
		t, err := lookup(name, shape...)
		if err != nil {
			errs = append(errs, err)
			return nil
		}
		n := uint64(1)
		for _, d := range shape {
			n *= uint64(d)
		}
		v := w[off : off+n]
		t.decode(v)
		return v
	}
	put(l.word, "embeddings.word_embeddings.weight", cfg.VocabSize, H)
	pos := put(l.pos, "embeddings.position_embeddings.weight", cfg.MaxPositionEmbeddings, H)
	// Embed always uses token type 0: fold its embedding into the positions.
	if t, ok := ts["embeddings.token_type_embeddings.weight"]; !ok || len(t.shape) != 2 || t.shape[1] != H {
		errs = append(errs, errors.New("minilm: safetensors has no token type embeddings of width hidden_size"))
	} else if pos != nil {
		tt := t.floats()
		for p := range cfg.MaxPositionEmbeddings {
			for i := range H {
				pos[p*H+i] += tt[i]
			}
		}
	}
	put(l.embLNg, "embeddings.LayerNorm.weight", H)
	put(l.embLNb, "embeddings.LayerNorm.bias", H)
	for i, ll := range l.layers {
		p := fmt.Sprintf("encoder.layer.%d.", i)
		// Q, K and V become one linear layer of 3H outputs.
		qkv := make([]float32, 0, 3*H*H)
		qkvB := make([]float32, 0, 3*H)
		for _, part := range []string{"query", "key", "value"} {
			wt, err1 := get(p+"attention.self."+part+".weight", H, H)
			b, err2 := get(p+"attention.self."+part+".bias", H)
			if err := errors.Join(err1, err2); err != nil {
				errs = append(errs, err)
				continue
			}
			qkv = append(qkv, wt...)
			qkvB = append(qkvB, b...)
		}
		if len(qkv) == 3*H*H {
			pack(w[ll.qkvW:], qkv, 3*H, H)
			copy(w[ll.qkvB:], qkvB)
		}
		linear := func(wOff, bOff uint64, name string, out, in int) {
			wt, err1 := get(name+".weight", out, in)
			b, err2 := get(name+".bias", out)
			if err := errors.Join(err1, err2); err != nil {
				errs = append(errs, err)
				return
			}
			pack(w[wOff:], wt, out, in)
			copy(w[bOff:], b)
		}
		linear(ll.outW, ll.outB, p+"attention.output.dense", H, H)
		put(ll.ln1g, p+"attention.output.LayerNorm.weight", H)
		put(ll.ln1b, p+"attention.output.LayerNorm.bias", H)
		linear(ll.upW, ll.upB, p+"intermediate.dense", I, H)
		linear(ll.downW, ll.downB, p+"output.dense", H, I)
		put(ll.ln2g, p+"output.LayerNorm.weight", H)
		put(ll.ln2b, p+"output.LayerNorm.bias", H)
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	for _, x := range w {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return errors.New("minilm: the weights contain NaN or Inf")
		}
	}
	return nil
}

// pack lays out a PyTorch linear weight (out × in, row-major) as panels of
// `panel` output columns: panel p holds, for each input k, the weights of
// outputs p*panel … p*panel+panel-1 side by side. The matmul kernels then
// read each panel front to back and update panel outputs per input.
func pack(dst, wt []float32, out, in int) {
	for p := 0; p < out/panel; p++ {
		base := p * in * panel
		for k := range in {
			for c := range panel {
				dst[base+k*panel+c] = wt[(p*panel+c)*in+k]
			}
		}
	}
}

// Install prepares a model directory for Open: with pinned, srcDir must
// be Package's model directory and pass Verify; without, any directory
// with the Hugging Face layout Convert accepts will do (a user's own
// copy, fp32 weights). It then converts into dstDir.
func Install(srcDir, dstDir string, pinned bool) error {
	if pinned {
		if err := Verify(srcDir); err != nil {
			return err
		}
	}
	return Convert(srcDir, dstDir)
}
