package main

import (
	"errors"
	"strings"
)

// jsonError is the object bgcmd writes to stderr for an error under
// --json: {"error": {"code", "message", "hint"}}. stdout then holds
// nothing of the failed command beyond what it had already printed.
type jsonError struct {
	Error jsonErrorBody `json:"error"`
}

// jsonErrorBody names an error for machines: Code is a stable word (a
// policy refusal's own code, such as "not_allowlisted", or one of
// "runtime", "usage", "refused", "not_found", "still_running", "no_match",
// "interrupted"), Message the text a person would read, Hint how to
// recover when bgcmd knows.
type jsonErrorBody struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Hint    string `json:"hint,omitempty"`
}

// errorKinds names bgcmd's own exit codes.
var errorKinds = map[int]string{
	exitRuntime: "runtime", exitUsage: "usage", exitRefused: "refused",
	exitNotFound: "not_found", exitStillRunning: "still_running",
	exitNoMatch: "no_match", exitInterrupted: "interrupted",
}

// errorObject describes err, which made bgcmd exit with code.
func errorObject(err error, code int) jsonError {
	body := jsonErrorBody{Code: errorKinds[code], Message: err.Error()}
	if body.Code == "" {
		body.Code = "runtime"
	}
	var ex *exitError
	if errors.As(err, &ex) {
		if ex.kind != "" {
			body.Code = ex.kind
		}
		if ex.hint != "" {
			body.Hint = ex.hint
			body.Message = strings.TrimSuffix(body.Message, "\nhint: "+ex.hint)
		}
	}
	return jsonError{Error: body}
}
