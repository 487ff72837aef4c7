// Command bgcmd starts, supervises and records background commands under a
// strict policy, and reads back their status, output and history.
//
// Exit codes: 0 success, 1 runtime error, 2 usage error, 3 refused by
// policy, 4 not found. `run --wait` and `wait` exit with the command's own
// code (see `bgcmd run --help`).
package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	// Its init starts the supervisor of a `bgcmd run` among the first.
	_ "github.com/bgcmd/bgcmd/cmd/bgcmd/internal/earlysup"
	"github.com/bgcmd/bgcmd/internal/launch"
	_ "github.com/bgcmd/bgcmd/internal/prefault"
	"github.com/bgcmd/bgcmd/runner"
)

func main() {
	runner.MaybeSupervise() // a detached supervisor never returns from here
	code := execute(os.Args[1:])
	launch.DiscardEarly() // a run that never took it (refused, or failed before)
	os.Exit(code)
}

// execute runs the CLI and maps its error to an exit code. The error goes
// to stderr as a line, or with --json as one object (see errorObject).
func execute(args []string) int {
	root := newRootCmd()
	root.SetArgs(args)
	err := handOverIfLean(root.Execute())
	if err == nil {
		return 0
	}
	asJSON := false
	if f := root.PersistentFlags().Lookup("json"); f != nil {
		asJSON = f.Value.String() == "true"
	}
	var un unparsedError
	if errors.As(err, &un) {
		asJSON = un.asJSON
	}
	return report(err, asJSON)
}

// report writes err to stderr, as a line or with asJSON as one object
// (see errorObject), and returns the exit code it calls for.
func report(err error, asJSON bool) int {
	code := exitCodeFor(err)
	var ex *exitError
	if errors.As(err, &ex) {
		code = ex.code
		if ex.msg == "" {
			return code // a job's own exit code; its status was printed
		}
	}
	if asJSON {
		_ = writeJSON(os.Stderr, errorObject(err, code))
	} else {
		// An error may quote what an agent chose (a candidate's argv, an
		// env name it set): each line goes through oneLine.
		lines := strings.Split(err.Error(), "\n")
		for i, l := range lines {
			lines[i] = oneLine(l)
		}
		fmt.Fprintln(os.Stderr, "bgcmd:", strings.Join(lines, "\n"))
	}
	return code
}
