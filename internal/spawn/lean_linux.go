//go:build linux

package spawn

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
)

// SupervisorName is the file name of bgcmd's supervisor binary, which
// `make build` puts beside bgcmd. It links only what a detached supervisor
// runs (the runner and the store, not the CLI, the MCP server or the web
// view), so it starts faster than bgcmd itself would: every `bgcmd run`
// waits for a supervisor's start-up.
const SupervisorName = "bgcmd-supervisor"

// SupervisorTag is the build tag bgcmd-supervisor is built with (make
// build): the store it links then leaves out the PostgreSQL driver and the
// migrations, which it never runs (internal/jobstore's
// supervisor_build.go), so it links 160 packages rather than 262. bgcmd
// starts the supervisors of a PostgreSQL store from its own binary.
const SupervisorTag = "bgcmd_supervisor"

// StampSymbol is the variable the linker's -X sets to a binary's build
// stamp.
const StampSymbol = "github.com/bgcmd/bgcmd/internal/spawn.buildStamp"

// buildStamp names the build a binary comes from. `make build` sets it
// (the linker's -X) to the same value in bgcmd and in bgcmd-supervisor: a
// digest of the build IDs of every package bgcmd-supervisor links, which
// change with any of their sources and with the toolchain. A binary built
// otherwise (go build, go install) has none, and supervises with itself.
var buildStamp string

// BuildStamp returns the build stamp of this binary ("" when it has none).
func BuildStamp() string { return buildStamp }

// executable is this process's executable, resolved once.
var executable = sync.OnceValues(os.Executable)

// SupervisorPath returns the supervisor binary a supervisor of binary is
// started from first: bgcmd-supervisor in the directory of this process's
// own executable, when binary is that executable and it carries a build
// stamp; else "". The path is only looked beside the executable's resolved
// path, so whoever may put a file there may also replace bgcmd itself.
func SupervisorPath(binary string) string {
	if buildStamp == "" {
		return ""
	}
	exe, err := executable()
	if err != nil || exe != binary {
		return ""
	}
	return filepath.Join(filepath.Dir(exe), SupervisorName)
}

// forkExec starts binary as a supervisor with attr: from its supervisor
// binary when it has one (SupervisorPath), which is told this build's stamp
// and binary (see HandBackIfStale); else, or when that cannot be started,
// or when the supervisor will open a PostgreSQL store (postgres), which
// the supervisor binary is built without (SupervisorTag), from binary
// itself.
func forkExec(binary string, postgres bool, attr *syscall.ProcAttr) (pid int, path string, err error) {
	if lean := SupervisorPath(binary); lean != "" && !postgres {
		pid, err := syscall.ForkExec(lean, []string{lean, Command, buildStamp, binary}, attr)
		if err == nil {
			return pid, lean, nil
		}
	}
	pid, err = syscall.ForkExec(binary, []string{binary, Command}, attr)
	return pid, binary, err
}

// HandBackIfStale is the first thing the supervisor binary's main does. A
// bgcmd starts it as `bgcmd-supervisor __supervise STAMP BGCMD`, STAMP
// being that bgcmd's build stamp and BGCMD its executable. When STAMP is
// not this binary's own (a bgcmd-supervisor left from another build, or
// built without make), it executes BGCMD in its place as the supervisor,
// with the same process, descriptors and environment, so that the job
// runs under the code of the bgcmd that started it. It returns nil when
// the stamps agree or it was not started that way, and an error only when
// that execution failed. Every version of the supervisor binary keeps this
// rule, so that any bgcmd can rely on it.
func HandBackIfStale() error {
	if len(os.Args) != 4 || os.Args[1] != Command || os.Args[2] == buildStamp {
		return nil
	}
	bgcmd := os.Args[3]
	err := syscall.Exec(bgcmd, []string{bgcmd, Command}, os.Environ())
	return fmt.Errorf("this supervisor is of another build than %s, which could not be started in its place: %w (rebuild both with make build)", bgcmd, err)
}
