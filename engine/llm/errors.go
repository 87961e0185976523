package llm

import (
	"errors"
	"fmt"
	"net"
	"regexp"
	"strings"
)

// ConfigError is a model call that cannot succeed until the configuration
// changes: credentials missing, a CLI not installed, a model the endpoint
// does not serve. It is never retried and never falls back.
type ConfigError struct {
	// Model is the model concerned; "" when the error is about no model.
	Model string
	// Field is the CUE path to change (with its position when known);
	// "" when no field of set.cue is at fault.
	Field string
	// Reason says what is wrong and, when no field is, what to do.
	Reason string
}

func (e *ConfigError) Error() string {
	if e.Field == "" || e.Model == "" {
		return e.Reason
	}
	return fmt.Sprintf("%s: set %s to a model the endpoint serves", e.Reason, e.Field)
}

// ModelNotServed is the ConfigError of a model the endpoint rejected as
// unknown or retired; detail is the endpoint's own words.
func ModelNotServed(model, field, detail string) *ConfigError {
	return &ConfigError{
		Model:  model,
		Field:  field,
		Reason: fmt.Sprintf("the endpoint does not serve model %s (unknown or retired): %s", model, strings.TrimSuffix(oneLine(detail), ".")),
	}
}

// transientError is a failure worth trying again, or on a fallback.
type transientError struct{ err error }

func (e *transientError) Error() string { return e.err.Error() }
func (e *transientError) Unwrap() error { return e.err }

// IsTransient reports whether err is a failure that may pass on another
// try or another model: an overloaded or rate-limited endpoint, a server
// error, a timeout, a broken connection.
func IsTransient(err error) bool {
	var t *transientError
	if errors.As(err, &t) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne)
}

// transientStatus reports whether an HTTP status is worth another try.
func transientStatus(status int) bool {
	switch status {
	case 408, 409, 429, 500, 502, 503, 504, 529:
		return true
	}
	return false
}

// transientType reports whether an API error type says the same.
func transientType(kind string) bool {
	switch kind {
	case "overloaded_error", "rate_limit_error", "api_error", "timeout_error", "server_error", "rate_limit_exceeded":
		return true
	}
	return false
}

// modelMissing matches what the endpoints say of a model they do not
// serve: Anthropic's not_found_error "model: ID", OpenAI's "The model `ID`
// does not exist or you do not have access to it." (code
// model_not_found), and Claude Code's "There's an issue with the selected
// model".
var modelMissing = regexp.MustCompile("(?i)model_not_found|^model: |the model `[^`]*` does not exist|issue with the selected model|model .* (does not exist|not found)")

// IsModelNotFound reports whether an endpoint's error says the requested
// model does not exist for it: HTTP status 404 with an error of type
// not_found_error or code model_not_found, or a message in one of the
// endpoints' words for it (a CLI reports only the message). status and
// kind may be 0 and "" when unknown.
func IsModelNotFound(status int, kind, message string) bool {
	switch {
	case kind == "model_not_found":
		return true
	case status == 404 && kind == "not_found_error":
		return true
	}
	return modelMissing.MatchString(strings.TrimSpace(message))
}

// classify turns an endpoint's error into a ConfigError (model not
// served), a transient error, or a plain error.
func classify(model string, status int, kind, message string, err error) error {
	switch {
	case IsModelNotFound(status, kind, message):
		return ModelNotServed(model, "", message)
	case transientStatus(status) || transientType(kind):
		return &transientError{err}
	}
	return err
}

// oneLine is s on one line, at most 300 bytes.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 300 {
		s = s[:297] + "..."
	}
	return s
}
