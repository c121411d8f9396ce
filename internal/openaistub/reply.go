package openaistub

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"net/http"
	"strings"
	"time"
)

// Reply is the scripted answer to one request. The zero Reply answers 200
// with an empty assistant message (chat) or the Embed function's vectors
// (embeddings).
type Reply struct {
	// Status is the HTTP status; 0 means 200.
	Status int
	// Content is the assistant message content of a 200 chat reply.
	Content string
	// Refusal fills message.refusal of a 200 chat reply.
	Refusal string
	// FinishReason of a 200 chat reply; "" means "stop".
	FinishReason string
	// Usage is reported in a 200 reply; nil reports an estimate.
	Usage *Usage
	// Vectors answer an embeddings request; nil uses Options.Embed.
	Vectors [][]float32
	// Error is the message of an OpenAI-shaped error body, sent when Status
	// is not 2xx and Body is empty.
	Error string
	// ErrorType and ErrorCode fill that body's "type" and "code".
	ErrorType string
	ErrorCode string
	// Body, when set, is sent verbatim instead of any generated body (e.g.
	// an HTML error page from a proxy, or a truncated JSON document).
	Body string
	// Header is added to the response (e.g. Retry-After).
	Header http.Header
	// Delay holds the reply back; the stub gives up early if the client
	// goes away or the server closes.
	Delay time.Duration
}

// Usage is the token usage reported by a reply.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// Content answers 200 with the given assistant content.
func Content(s string) Reply { return Reply{Content: s} }

// JSON answers 200 with v marshalled as the assistant content. It panics if
// v cannot be marshalled (a bug in the test).
func JSON(v any) Reply {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("openaistub.JSON: %v", err))
	}
	return Reply{Content: string(b)}
}

// Status answers with an HTTP error status and an OpenAI-shaped error body.
func Status(code int, message string) Reply {
	return Reply{Status: code, Error: message, ErrorType: errorType(code)}
}

// RateLimited answers 429 with the given Retry-After value ("" sends none).
func RateLimited(retryAfter string) Reply {
	r := Status(http.StatusTooManyRequests, "Rate limit reached (openaistub)")
	r.ErrorCode = "rate_limit_exceeded"
	if retryAfter != "" {
		r.Header = http.Header{"Retry-After": {retryAfter}}
	}
	return r
}

// ServerError answers 500.
func ServerError() Reply {
	return Status(http.StatusInternalServerError, "The server had an error while processing your request (openaistub)")
}

// Slow returns r delayed by d.
func Slow(d time.Duration, r Reply) Reply {
	r.Delay = d
	return r
}

func errorType(code int) string {
	switch {
	case code == http.StatusTooManyRequests:
		return "rate_limit_error"
	case code == http.StatusUnauthorized:
		return "authentication_error"
	case code >= 500:
		return "server_error"
	default:
		return "invalid_request_error"
	}
}

func (r Reply) status() int {
	if r.Status == 0 {
		return http.StatusOK
	}
	return r.Status
}

func (r Reply) errorBody() any {
	e := map[string]any{"message": r.Error, "type": r.ErrorType, "param": nil, "code": nil}
	if r.ErrorType == "" {
		e["type"] = errorType(r.status())
	}
	if r.ErrorCode != "" {
		e["code"] = r.ErrorCode
	}
	return map[string]any{"error": e}
}

func (r Reply) chatBody(id, model string, req *Request) any {
	finish := r.FinishReason
	if finish == "" {
		finish = "stop"
	}
	msg := map[string]any{"role": "assistant", "content": r.Content}
	if r.Refusal != "" {
		msg["refusal"] = r.Refusal
	}
	u := r.Usage
	if u == nil {
		in := estimateTokens(len(req.Body))
		out := estimateTokens(len(r.Content))
		u = &Usage{PromptTokens: in, CompletionTokens: out, TotalTokens: in + out}
	}
	return map[string]any{
		"id":      id,
		"object":  "chat.completion",
		"created": time.Now().Unix(),
		"model":   model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
		"usage":   u,
	}
}

func embeddingsBody(model string, vecs [][]float32, base64Format bool, req *Request) any {
	data := make([]any, len(vecs))
	for i, v := range vecs {
		var emb any = v
		if base64Format {
			b := make([]byte, 4*len(v))
			for j, f := range v {
				binary.LittleEndian.PutUint32(b[4*j:], math.Float32bits(f))
			}
			emb = base64.StdEncoding.EncodeToString(b)
		}
		data[i] = map[string]any{"object": "embedding", "index": i, "embedding": emb}
	}
	n := 0
	for _, in := range req.Input {
		n += estimateTokens(len(in))
	}
	return map[string]any{
		"object": "list",
		"data":   data,
		"model":  model,
		"usage":  map[string]int{"prompt_tokens": n, "total_tokens": n},
	}
}

// estimateTokens is the usual four bytes per token.
func estimateTokens(n int) int { return (n + 3) / 4 }

// HashVectors returns an embedding function that maps each input to a
// deterministic L2-normalised vector of dim dimensions (FNV hashes of the
// input's words), so equal texts get equal vectors and texts sharing words
// are closer than unrelated ones.
func HashVectors(dim int) func(model string, inputs []string) [][]float32 {
	if dim <= 0 {
		dim = 16
	}
	return func(_ string, inputs []string) [][]float32 {
		out := make([][]float32, len(inputs))
		for i, in := range inputs {
			v := make([]float32, dim)
			for _, w := range words(strings.ToLower(in)) {
				h := fnv.New64a()
				h.Write([]byte(w))
				s := h.Sum64()
				sign := float32(1)
				if s&(1<<63) != 0 {
					sign = -1
				}
				v[s%uint64(dim)] += sign
			}
			var norm float64
			for _, f := range v {
				norm += float64(f) * float64(f)
			}
			if norm == 0 {
				v[0] = 1
			} else {
				for j := range v {
					v[j] = float32(float64(v[j]) / math.Sqrt(norm))
				}
			}
			out[i] = v
		}
		return out
	}
}

func words(s string) []string {
	var out []string
	start := -1
	for i, r := range s + " " {
		alnum := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r > 127
		switch {
		case alnum && start < 0:
			start = i
		case !alnum && start >= 0:
			out = append(out, s[start:i])
			start = -1
		}
	}
	return out
}
