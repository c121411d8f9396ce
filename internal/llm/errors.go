package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"

	openai "github.com/sashabaranov/go-openai"
)

// ErrBudget means the client's call budget (Config.MaxCalls) is spent.
// Nothing was sent; callers should fall back and stop calling for this
// cycle.
var ErrBudget = errors.New("llm: call budget exhausted")

// ErrMalformed means the model answered but the reply is not valid JSON of
// the requested shape (or was refused or cut short).
var ErrMalformed = errors.New("llm: malformed reply")

// Error is a call that failed at the HTTP or network level, after any
// retries. It unwraps to the go-openai error (*openai.APIError or
// *openai.RequestError) or the network error.
type Error struct {
	// Status is the HTTP status, 0 for a network error or timeout.
	Status int
	// Attempts is how many requests the call made.
	Attempts int
	Err      error
}

func (e *Error) Error() string {
	msg := clip(oneLine(errorMessage(e.Err)), 300)
	if e.Status != 0 {
		return fmt.Sprintf("llm: chat completion failed (%d attempts): status %d: %s", e.Attempts, e.Status, msg)
	}
	return fmt.Sprintf("llm: chat completion failed (%d attempts): %s", e.Attempts, msg)
}

func (e *Error) Unwrap() error { return e.Err }

// StatusOf returns the HTTP status carried by err (an *Error, an
// *openai.APIError or an *openai.RequestError), or 0.
func StatusOf(err error) int {
	var le *Error
	if errors.As(err, &le) && le.Status != 0 {
		return le.Status
	}
	var ae *openai.APIError
	if errors.As(err, &ae) {
		return ae.HTTPStatusCode
	}
	var re *openai.RequestError
	if errors.As(err, &re) {
		return re.HTTPStatusCode
	}
	return 0
}

// errorMessage is the server's message for API errors (without the body
// dump of RequestError.Error), the error text otherwise.
func errorMessage(err error) string {
	var ae *openai.APIError
	if errors.As(err, &ae) {
		return ae.Message
	}
	var re *openai.RequestError
	if errors.As(err, &re) {
		if len(re.Body) > 0 {
			return string(re.Body)
		}
		if re.Err != nil {
			return re.Err.Error()
		}
		return re.HTTPStatus
	}
	if err == nil {
		return ""
	}
	return err.Error()
}

// retryable reports whether a failed attempt is worth repeating: rate
// limits (unless the account is out of quota), server errors, request
// timeouts and dropped connections. timedOut says the attempt's own
// deadline fired.
func retryable(err error, timedOut bool) bool {
	switch st := StatusOf(err); {
	case st == http.StatusTooManyRequests:
		return !strings.Contains(strings.ToLower(errorMessage(err)+" "+apiCode(err)), "insufficient_quota")
	case st == http.StatusRequestTimeout || st >= 500:
		return true
	case st != 0:
		return false
	}
	if timedOut || errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF)
}

func apiCode(err error) string {
	var ae *openai.APIError
	if errors.As(err, &ae) && ae.Code != nil {
		return fmt.Sprint(ae.Code)
	}
	return ""
}

// aboutResponseFormat reports whether err is a 400 that rejects the
// response_format (a server without json_schema support).
func aboutResponseFormat(err error) bool {
	if StatusOf(err) != http.StatusBadRequest {
		return false
	}
	msg := strings.ToLower(errorMessage(err))
	var ae *openai.APIError
	if errors.As(err, &ae) && ae.Param != nil {
		msg += " " + strings.ToLower(*ae.Param)
	}
	return strings.Contains(msg, "response_format") || strings.Contains(msg, "json_schema")
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// clip bounds s to n bytes without splitting a UTF-8 sequence.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }
