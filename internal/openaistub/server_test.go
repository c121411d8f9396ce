package openaistub_test

import (
	"context"
	"errors"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/engram-memory/engram/internal/openaistub"
)

func client(srv *openaistub.Server, key string) *openai.Client {
	cfg := openai.DefaultConfig(key)
	cfg.BaseURL = srv.BaseURL()
	return openai.NewClientWithConfig(cfg)
}

func chat(c *openai.Client, user string) (openai.ChatCompletionResponse, error) {
	return c.CreateChatCompletion(context.Background(), openai.ChatCompletionRequest{
		Model:          "m1",
		Messages:       []openai.ChatCompletionMessage{{Role: "system", Content: "sys"}, {Role: "user", Content: user}},
		ResponseFormat: &openai.ChatCompletionResponseFormat{Type: openai.ChatCompletionResponseFormatTypeJSONObject},
	})
}

func TestListensOnLoopback(t *testing.T) {
	srv := openaistub.Start(t, openaistub.Options{})
	if !strings.HasPrefix(srv.URL, "http://127.0.0.1:") || srv.BaseURL() != srv.URL+"/v1" {
		t.Errorf("URL=%q BaseURL=%q", srv.URL, srv.BaseURL())
	}
}

func TestChatQueueThenHandler(t *testing.T) {
	srv := openaistub.Start(t, openaistub.Options{Chat: func(r *openaistub.Request) openaistub.Reply {
		return openaistub.Content("handler:" + r.User())
	}})
	srv.Enqueue(openaistub.JSON(map[string]int{"n": 1}), openaistub.Status(418, "teapot"))
	c := client(srv, "k1")

	resp, err := chat(c, "one")
	if err != nil || resp.Choices[0].Message.Content != `{"n":1}` {
		t.Fatalf("first: %v %+v", err, resp)
	}
	if resp.Usage.TotalTokens == 0 || resp.Model != "m1" {
		t.Errorf("usage=%+v model=%q", resp.Usage, resp.Model)
	}
	_, err = chat(c, "two")
	var ae *openai.APIError
	if !errors.As(err, &ae) || ae.HTTPStatusCode != 418 || ae.Message != "teapot" {
		t.Fatalf("second: %v", err)
	}
	resp, err = chat(c, "three")
	if err != nil || resp.Choices[0].Message.Content != "handler:three" {
		t.Fatalf("third: %v %+v", err, resp)
	}
	if srv.Pending() != 0 || srv.Unscripted() != 0 || srv.Count() != 3 {
		t.Errorf("pending=%d unscripted=%d count=%d", srv.Pending(), srv.Unscripted(), srv.Count())
	}
	r := srv.ChatRequests()[0]
	if r.Seq != 1 || r.Model != "m1" || r.Authorization != "Bearer k1" || r.System() != "sys" || r.User() != "one" ||
		r.ResponseFormat == nil || r.ResponseFormat.Type != "json_object" || !r.Contains("one") {
		t.Errorf("recorded %+v", r)
	}
}

func TestUnscripted(t *testing.T) {
	srv := openaistub.Start(t, openaistub.Options{})
	resp, err := chat(client(srv, ""), "x")
	if err != nil || resp.Choices[0].Message.Content != "{}" || srv.Unscripted() != 1 {
		t.Fatalf("err=%v content=%q unscripted=%d", err, resp.Choices[0].Message.Content, srv.Unscripted())
	}
	if a := srv.Requests()[0].Authorization; a != "" {
		t.Errorf("Authorization=%q with an empty key", a)
	}
}

func TestRetryAfterHeaderAndRawBody(t *testing.T) {
	srv := openaistub.Start(t, openaistub.Options{})
	srv.Enqueue(openaistub.RateLimited("7"), openaistub.Reply{Status: 502, Body: "<html>bad gateway</html>"})
	resp, err := http.Post(srv.BaseURL()+"/chat/completions", "application/json", strings.NewReader(`{"model":"m"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "7" {
		t.Errorf("status=%d Retry-After=%q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	_, err = chat(client(srv, ""), "x")
	var re *openai.RequestError
	if !errors.As(err, &re) || re.HTTPStatusCode != 502 || !strings.Contains(string(re.Body), "bad gateway") {
		t.Errorf("err=%v, want RequestError 502", err)
	}
}

func TestSlowReplyAndClose(t *testing.T) {
	srv, err := openaistub.New(openaistub.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv.Enqueue(openaistub.Slow(time.Minute, openaistub.Content("late")))
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err = client(srv, "").CreateChatCompletion(ctx, openai.ChatCompletionRequest{Model: "m"})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err=%v, want deadline exceeded", err)
	}
	srv.Enqueue(openaistub.Slow(time.Minute, openaistub.Content("late")))
	go chat(client(srv, ""), "x")
	for srv.Count() < 2 {
		time.Sleep(5 * time.Millisecond)
	}
	start := time.Now()
	srv.Close()
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("Close took %v with a delayed reply pending", el)
	}
}

func TestBadRequestsAndUnknownPaths(t *testing.T) {
	srv := openaistub.Start(t, openaistub.Options{})
	for _, tc := range []struct{ method, path, body string }{
		{"POST", "/v1/chat/completions", "not json"},
		{"GET", "/v1/models", ""},
	} {
		req, _ := http.NewRequest(tc.method, srv.URL+tc.path, strings.NewReader(tc.body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 400 && resp.StatusCode != 404 {
			t.Errorf("%s %s: status %d", tc.method, tc.path, resp.StatusCode)
		}
	}
	if srv.Count() != 2 {
		t.Errorf("count=%d, want 2 (bad requests are recorded too)", srv.Count())
	}
}

func TestEmbeddings(t *testing.T) {
	srv := openaistub.Start(t, openaistub.Options{})
	c := client(srv, "k")
	resp, err := c.CreateEmbeddings(context.Background(), openai.EmbeddingRequestStrings{
		Input: []string{"Go tests with testify", "go tests with TESTIFY", "bananas"},
		Model: "emb-1",
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Data) != 3 || len(resp.Data[0].Embedding) != 16 {
		t.Fatalf("got %d vectors of %d", len(resp.Data), len(resp.Data[0].Embedding))
	}
	dot := func(a, b []float32) (s float64) {
		for i := range a {
			s += float64(a[i]) * float64(b[i])
		}
		return s
	}
	v := resp.Data
	if n := dot(v[0].Embedding, v[0].Embedding); math.Abs(n-1) > 1e-5 {
		t.Errorf("norm² %v, want 1", n)
	}
	if s := dot(v[0].Embedding, v[1].Embedding); math.Abs(s-1) > 1e-5 {
		t.Errorf("case-only difference gives cosine %v, want 1", s)
	}
	if dot(v[0].Embedding, v[2].Embedding) >= 0.99 {
		t.Error("unrelated texts got the same vector")
	}
	r := srv.EmbeddingRequests()
	if len(r) != 1 || r[0].Model != "emb-1" || len(r[0].Input) != 3 {
		t.Errorf("recorded %+v", r)
	}

	// base64, a custom function, a scripted error.
	srv2 := openaistub.Start(t, openaistub.Options{Embed: func(model string, in []string) [][]float32 {
		out := make([][]float32, len(in))
		for i := range in {
			out[i] = []float32{float32(i), 0.5, -2}
		}
		return out
	}})
	srv2.EnqueueEmbeddings(openaistub.Status(500, "boom"))
	c2 := client(srv2, "")
	req := openai.EmbeddingRequestStrings{Input: []string{"a", "b"}, Model: "m", EncodingFormat: openai.EmbeddingEncodingFormatBase64}
	if _, err := c2.CreateEmbeddings(context.Background(), req); err == nil {
		t.Error("scripted 500 not returned")
	}
	resp, err = c2.CreateEmbeddings(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.Data[1].Embedding; len(got) != 3 || got[0] != 1 || got[1] != 0.5 || got[2] != -2 {
		t.Errorf("base64 vector %v", got)
	}
}
