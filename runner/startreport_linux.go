//go:build linux

package runner

import (
	"bufio"
	"errors"
	"io"
	"os"
	"strings"
	"time"
)

// A detached supervisor writes on its report pipe (descriptor 4), one line
// each: supervisorHello first of all; handoffTaken as soon as it has read
// its job, before it does anything with it; then its report ("ok …" or
// "error: …"), after which it closes the pipe.

// handoffTaken is the line a supervisor writes once it has read its job. A
// spare that ends without it never had the job, whatever the write of the
// job returned, so another supervisor can run it safely.
const handoffTaken = "taken"

// reportReader reads a supervisor's report pipe, noting the hello and the
// taken lines on the way to the report.
type reportReader struct {
	f  *os.File
	rd *bufio.Reader
	// exe is the file the supervisor was started from, for errors.
	exe string
	// hello and taken say which of those lines have been read.
	hello, taken bool
	// line and err are a report read early (by tookJob), not yet returned.
	line    string
	err     error
	pending bool
}

// newReportReader reads f, the report pipe of the supervisor started
// from exe, for startupTimeout at most.
func newReportReader(f *os.File, exe string) *reportReader {
	_ = f.SetReadDeadline(time.Now().Add(startupTimeout))
	return &reportReader{f: f, rd: bufio.NewReader(f), exe: exe}
}

// next returns the next line that is neither the hello nor the taken line
// (the report, or "" and the error that ended the pipe).
func (rr *reportReader) next() (string, error) {
	for {
		line, err := rr.rd.ReadString('\n')
		switch line = strings.TrimSpace(line); {
		case line == supervisorHello && !rr.hello:
			rr.hello = true
		case line == handoffTaken && rr.hello && !rr.taken:
			rr.taken = true
			return "", nil
		default:
			return line, err
		}
		if err != nil {
			return "", err
		}
	}
}

// tookJob waits until the supervisor says it took its job (true) or ends
// without saying so (false). A supervisor still silent when the wait ends
// counts as having it: only its end proves it never will.
func (rr *reportReader) tookJob() bool {
	line, err := rr.next()
	if rr.taken {
		return true
	}
	rr.line, rr.err, rr.pending = line, err, true
	return line != "" || !errors.Is(err, io.EOF)
}

// report returns the supervisor's report line, or "" and the error that
// ended the pipe before it.
func (rr *reportReader) report() (string, error) {
	if rr.pending {
		rr.pending = false
		return rr.line, rr.err
	}
	for {
		line, err := rr.next()
		if line != "" || err != nil {
			return line, err
		}
	}
}
