// Command bgcmd-supervisor is bgcmd's detached supervisor, and nothing
// else: bgcmd starts it, from beside its own executable, for each command
// it runs in the background, and hands it the job. It links the runner and
// the store but not the CLI, the MCP server or the web view, so it starts
// faster than bgcmd would: every `bgcmd run` waits for that start. `make
// build` builds it with bgcmd and bgcmd-full, all three stamped with the
// same build, and with the tag bgcmd_lean (launch.LeanTag), which leaves
// the PostgreSQL driver and the migrations out of its store: it supervises
// the jobs of SQLite stores, and bgcmd-full those of PostgreSQL ones. A
// bgcmd without it, or with one of another build, supervises with itself
// (see internal/spawn).
package main

import (
	"fmt"
	"os"

	// Its init maps in the heap's start and the code, among the first.
	"github.com/bgcmd/bgcmd/internal/launch"
	_ "github.com/bgcmd/bgcmd/internal/prefault"
	"github.com/bgcmd/bgcmd/internal/spawn"
	"github.com/bgcmd/bgcmd/runner"
)

func main() {
	// One of another build hands the process over to bgcmd.
	if err := spawn.HandBackIfStale(); err != nil {
		fmt.Fprintln(os.Stderr, launch.SupervisorName+":", err)
		os.Exit(1)
	}
	runner.MaybeSupervise() // never returns when started by bgcmd
	fmt.Fprintf(os.Stderr, "%s is started by bgcmd for each background command; run bgcmd instead\n", launch.SupervisorName)
	os.Exit(2)
}
