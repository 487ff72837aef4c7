package runner

import (
	"io"
	"os"
	"path/filepath"
	"strings"
)

// supervisorLogName is the file in a job's directory that its detached
// supervisor's own stdout and stderr go to from its first instruction: a
// Go panic, a runtime fault, a goroutine dump on SIGQUIT.
const supervisorLogName = "supervisor.log"

// lastWordsEnds is how much of each end of a supervisor's log lastWords
// keeps: a panic's or a fault's message is at the start of what the
// runtime prints, the frame that raised it right after, and whatever the
// process printed last at the end.
const lastWordsEnds = 512

// lastWords returns what the detached supervisor of the job directory dir
// printed, fit for a job's error (see relayable): all of it when it is
// short, else its first and last lastWordsEnds bytes around " … ". It
// returns "" when the log is empty or cannot be read. It is read before
// the directory is removed, so that a job whose supervisor died keeps, in
// its error, the one account of why.
func lastWords(dir string) string {
	f, err := os.Open(filepath.Join(dir, supervisorLogName))
	if err != nil {
		return ""
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || fi.Size() == 0 {
		return ""
	}
	if fi.Size() <= 2*lastWordsEnds {
		b, _ := io.ReadAll(io.LimitReader(f, 2*lastWordsEnds))
		return strings.TrimSpace(relayable(string(b)))
	}
	head := make([]byte, lastWordsEnds)
	tail := make([]byte, lastWordsEnds)
	n, _ := f.ReadAt(head, 0)
	m, _ := f.ReadAt(tail, fi.Size()-lastWordsEnds)
	return strings.TrimSpace(relayable(string(head[:n]))) + " … " + strings.TrimSpace(relayable(string(tail[:m])))
}

// withLastWords appends to msg what the supervisor of the job directory
// dir printed, if anything.
func withLastWords(msg, dir string) string {
	if w := lastWords(dir); w != "" {
		return msg + "; its log reads: " + w
	}
	return msg
}
