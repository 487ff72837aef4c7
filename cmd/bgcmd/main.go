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

	"github.com/bgcmd/bgcmd/runner"
)

func main() {
	runner.MaybeSupervise() // a detached supervisor never returns from here
	code := execute(os.Args[1:])
	os.Exit(code)
}

// execute runs the CLI and maps its error to an exit code.
func execute(args []string) int {
	root := newRootCmd()
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return 0
	}
	var ex *exitError
	if errors.As(err, &ex) {
		if ex.msg != "" {
			fmt.Fprintln(os.Stderr, "bgcmd:", ex.msg)
		}
		return ex.code
	}
	fmt.Fprintln(os.Stderr, "bgcmd:", err)
	return exitCodeFor(err)
}
