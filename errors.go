package bgcmd

import "errors"

// ErrNotFound is returned for an id that names no job (or artifact).
var ErrNotFound = errors.New("not found")

// ErrInvalidTransition is returned when a compare-and-set transition finds
// the job in another state than the one expected, for example a second
// settle of a job that has already settled.
var ErrInvalidTransition = errors.New("invalid transition")
