package claude

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/anthropics/anthropic-sdk-go"
)

// APIError is a failure of the Messages API that remained after the client's
// retries (the SDK retries connection errors, 408, 409, 429 and 5xx, 529
// included, honouring retry-after).
type APIError struct {
	StatusCode int    // the HTTP status, 0 if no answer came
	Type       string // the API's error type, such as "rate_limit_error"
	Message    string // the API's message, cut to a few hundred bytes
	RequestID  string
	err        error
}

// Error says in a few words what happened and what to do.
func (e *APIError) Error() string {
	s := "agent: claude: " + e.what()
	if e.Message != "" {
		s += ": " + e.Message
	}
	if e.RequestID != "" {
		s += " (request id " + e.RequestID + ")"
	}
	return s
}

func (e *APIError) what() string {
	switch e.StatusCode {
	case 0:
		return "could not reach the API: " + e.err.Error()
	case http.StatusUnauthorized:
		return "authentication failed (401): the API key was refused; check ANTHROPIC_API_KEY"
	case http.StatusForbidden:
		return "permission denied (403)"
	case http.StatusTooManyRequests:
		return "rate limited (429), still after retries; wait and try again"
	case 529:
		return "the API is overloaded (529), still after retries; try again later"
	case http.StatusBadRequest:
		return "the API refused the request (400)"
	}
	if e.StatusCode >= 500 {
		return fmt.Sprintf("the API failed (%d), still after retries", e.StatusCode)
	}
	return fmt.Sprintf("the API answered %d %s", e.StatusCode, http.StatusText(e.StatusCode))
}

// Unwrap returns the SDK's error.
func (e *APIError) Unwrap() error { return e.err }

// apiError turns an error of the SDK into an *APIError; a canceled context
// stays what it is.
func apiError(err error) error {
	var ae *anthropic.Error
	if !errors.As(err, &ae) {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return err
		}
		return &APIError{err: err}
	}
	e := &APIError{StatusCode: ae.StatusCode, RequestID: ae.RequestID, err: err}
	var body struct {
		Error struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal([]byte(ae.RawJSON()), &body) == nil {
		e.Type, e.Message = body.Error.Type, body.Error.Message
	}
	if len(e.Message) > 300 {
		e.Message = e.Message[:300] + "…"
	}
	return e
}
