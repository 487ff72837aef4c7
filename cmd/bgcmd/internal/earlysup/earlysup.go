// Package earlysup starts the detached supervisor of a `bgcmd run` while
// the binary is still initialising. It is imported by bgcmd's main package
// for its init alone, and imports nothing heavier than the standard
// library's process start (internal/spawn), so its init runs among the
// binary's first: the supervisor's own start-up, a process start of the
// same binary, then overlaps the rest of this process's, where otherwise
// the two would run one after the other.
//
// Only the literal form `bgcmd run ...` starts one; any other command line
// (global flags before run, --help) leaves the runner to start it when the
// policy is loaded, as before. A supervisor started here holds nothing
// until the runner hands it the store and the job, and exits when this
// process ends without doing so (a refused run).
package earlysup

import (
	"os"
	"strings"

	"github.com/bgcmd/bgcmd/internal/spawn"
)

func init() {
	if wantsSupervisor(os.Args[1:]) {
		spawn.StartEarly(os.Getenv("BGCMD_DB") != "" || namesDB(os.Args[2:]))
	}
}

// namesDB says whether run's own flags (args, the command line after
// `run`, up to the command's argv) give --db: the store is then likely a
// PostgreSQL one, whose supervisor is bgcmd itself (spawn.Start). A guess
// either way costs only time: the runner lets go a supervisor that cannot
// open the store it gets (spawn.TakeEarly).
func namesDB(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if a == "--db" || strings.HasPrefix(a, "--db=") {
			return true
		}
	}
	return false
}

// wantsSupervisor says whether args (the command line without the binary)
// are a run that starts a command: `run` first, and no help flag among
// run's own flags (those before the command's argv).
func wantsSupervisor(args []string) bool {
	if len(args) < 2 || args[0] != "run" {
		return false
	}
	for _, a := range args[1:] {
		switch a {
		case "--":
			return true
		case "-h", "--help", "--version":
			return false
		}
	}
	return true
}
