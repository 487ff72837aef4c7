package main

import (
	"errors"
	"strings"

	"github.com/bgcmd/bgcmd"
)

// The CLI's exit codes.
const (
	exitOK       = 0
	exitRuntime  = 1
	exitUsage    = 2
	exitRefused  = 3
	exitNotFound = 4
)

// exitError carries an exit code out of a command; msg (if any) goes to
// stderr. kind and hint, when set, name the error for machines (a policy
// refusal's code and its recovery hint) in the --json error object.
type exitError struct {
	code int
	msg  string
	kind string
	hint string
}

func (e *exitError) Error() string { return e.msg }

// usageError marks a bad flag or argument (exit 2).
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

// exitCodeFor maps an error to the documented exit code.
func exitCodeFor(err error) int {
	var ue *usageError
	switch {
	case errors.As(err, &ue):
		return exitUsage
	case errors.Is(err, bgcmd.ErrNotFound):
		return exitNotFound
	case isCobraUsage(err):
		return exitUsage
	}
	return exitRuntime
}

// isCobraUsage recognises cobra's own flag and argument errors.
func isCobraUsage(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown flag", "unknown shorthand", "unknown command",
		"flag needs an argument", "invalid argument", "accepts ", "requires at least",
		"requires exactly", "required flag"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}
