package artifacts

import "errors"

// ErrCapReached is returned by Capture.Write once the capture's byte cap is
// reached and a byte had to be dropped: the write that reaches the cap
// returns the short count with it, and every later write returns 0 with it.
var ErrCapReached = errors.New("output cap reached")

// ErrCorrupt is returned (wrapped, naming the file and the hashes) when a
// banked artifact no longer hashes to its name.
var ErrCorrupt = errors.New("artifact corrupt")

// ErrInvalidPage is returned (wrapped, naming the bad value) when a Page
// asks for something Read cannot serve: a negative offset, limit, tail or
// match count, an unknown unit, an invalid regular expression, or a
// combination that makes no sense.
var ErrInvalidPage = errors.New("invalid page request")

// errStaleIndex reports an index that does not match its log. Read rebuilds
// the index from the log when it sees it; it never reaches callers.
var errStaleIndex = errors.New("stale index")
