//go:build linux

package launch

import (
	"sync"
	"syscall"
)

// Command is the hidden first argument with which a supervisor binary is
// started as a detached supervisor.
const Command = "__supervise"

// SupervisorName is the file name of bgcmd's supervisor binary, which
// `make build` puts beside bgcmd. It links only what a detached supervisor
// runs (the runner and the store, not the CLI, the MCP server or the web
// view), so it starts faster than bgcmd itself would: every `bgcmd run`
// waits for a supervisor's start-up.
const SupervisorName = "bgcmd-supervisor"

// FullName is the file name of the full bgcmd, which `make build` puts
// beside a lean bgcmd (LeanTag): the same program with every command, to
// which the lean one hands the commands it leaves out (see
// cmd/bgcmd/lean.go).
const FullName = "bgcmd-full"

// LeanTag is the build tag of bgcmd's lean binaries (make build):
// bgcmd-supervisor and bgcmd itself. Their store (internal/jobstore's
// lean_build.go) leaves out the PostgreSQL driver and the migrations, and
// bgcmd leaves out the MCP server, the web view and the git tools:
// bgcmd-supervisor links some 160 packages and the lean bgcmd 180, where
// bgcmd-full links 330. The everyday path (a `bgcmd run`, a status, the
// output of a migrated SQLite store) needs nothing else; a lean bgcmd hands
// every other command to bgcmd-full beside it, and a supervisor of a
// PostgreSQL store is bgcmd-full.
const LeanTag = "bgcmd_lean"

// StampSymbol is the variable the linker's -X sets to a binary's build
// stamp.
const StampSymbol = "github.com/bgcmd/bgcmd/internal/launch.buildStamp"

// buildStamp names the build a binary comes from. `make build` sets it
// (the linker's -X) to the same value in bgcmd and in bgcmd-supervisor: a
// digest of the build IDs of every package bgcmd-supervisor links, which
// change with any of their sources and with the toolchain. A binary built
// otherwise (go build, go install) has none, and supervises with itself.
var buildStamp string

// BuildStamp returns the build stamp of this binary ("" when it has none).
func BuildStamp() string { return buildStamp }

// self is this process's executable, resolved once (Executable).
var self struct {
	once sync.Once
	path string
	err  error
}

// Executable returns the path of this process's executable, as
// os.Executable does on Linux: the link /proc/self/exe, without the
// " (deleted)" the kernel appends to a file removed since.
func Executable() (string, error) {
	self.once.Do(func() {
		for n := 256; ; n *= 2 {
			buf := make([]byte, n)
			m, err := syscall.Readlink("/proc/self/exe", buf)
			if err != nil {
				self.err = &Error{Op: "resolve this executable", Err: err}
				return
			}
			if m < n {
				self.path = trimDeleted(string(buf[:m]))
				return
			}
		}
	})
	return self.path, self.err
}

// trimDeleted is p without the suffix " (deleted)".
func trimDeleted(p string) string {
	const deleted = " (deleted)"
	if len(p) > len(deleted) && p[len(p)-len(deleted):] == deleted {
		return p[:len(p)-len(deleted)]
	}
	return p
}

// SupervisorPath returns the supervisor binary a supervisor of binary is
// started from first: bgcmd-supervisor beside this process's own
// executable (Beside), when binary is that executable; else "".
func SupervisorPath(binary string) string {
	if exe, err := Executable(); err != nil || exe != binary {
		return ""
	}
	return Beside(SupervisorName)
}

// Beside returns the path of the file name in the directory of this
// process's executable, when the executable carries a build stamp (make
// build puts bgcmd's binaries side by side); else "". The path is only
// looked beside the executable's resolved path, so whoever may put a file
// there may also replace bgcmd itself.
func Beside(name string) string {
	if buildStamp == "" {
		return ""
	}
	exe, err := Executable()
	if err != nil {
		return ""
	}
	// The path is absolute and clean: its directory ends at its last slash.
	dir := len(exe)
	for dir > 0 && exe[dir-1] != '/' {
		dir--
	}
	return exe[:dir] + name
}

// Env is a supervisor's own environment: only what it needs to run, never
// a job's (which travels on the hand-over socket).
func Env() []string {
	var env []string
	for _, k := range []string{"PATH", "TMPDIR", "GORACE", "GOCOVERDIR"} {
		if v, ok := syscall.Getenv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// Error is a start that failed: what was being done, why, and how to
// recover when there is more to say.
type Error struct {
	Op   string
	Err  error
	Hint string
}

func (e *Error) Error() string {
	msg := e.Op + ": " + e.Err.Error()
	if e.Hint != "" {
		msg += " (" + e.Hint + ")"
	}
	return msg
}

// Unwrap returns the system call's error.
func (e *Error) Unwrap() error { return e.Err }
