// Package earlysup starts the detached supervisor of a `bgcmd run` while
// the binary is still initialising. It is imported by bgcmd's main package
// for its init alone, and imports nothing but internal/launch and
// syscall (not even os or strings), so its init runs among the binary's
// very first (see internal/launch): the supervisor's own start-up, a
// process start, then overlaps the rest of this process's, where otherwise
// the two would run one after the other.
//
// Only the literal form `bgcmd run ...` starts one; any other command line
// (global flags before run, --help) leaves the runner to start it when the
// policy is loaded, as before. A supervisor started here holds nothing
// until the runner hands it the store and the job, and exits when this
// process ends without doing so (a refused run).
package earlysup

import (
	"syscall"

	"github.com/bgcmd/bgcmd/internal/launch"
)

func init() {
	args := commandLine()
	if len(args) > 1 && wantsSupervisor(args[1:]) {
		db, _ := syscall.Getenv("BGCMD_DB")
		launch.StartEarly(db != "" || namesDB(args[2:]))
	}
}

// commandLine returns this process's arguments, binary first, as the
// kernel keeps them (/proc/self/cmdline): os.Args is not set yet. It
// returns nil when they cannot be read; no supervisor is started early
// then.
func commandLine() []string {
	fd, err := syscall.Open("/proc/self/cmdline", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	defer syscall.Close(fd)
	var data []byte
	buf := make([]byte, 4096)
	for {
		n, err := syscall.Read(fd, buf)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil
		}
		if n == 0 {
			break
		}
		data = append(data, buf[:n]...)
	}
	var args []string
	for start, i := 0, 0; i < len(data); i++ {
		if data[i] == 0 {
			args = append(args, string(data[start:i]))
			start = i + 1
		}
	}
	return args
}

// namesDB says whether run's own flags (args, the command line after
// `run`, up to the command's argv) give --db: the store is then likely a
// PostgreSQL one, whose supervisor is bgcmd itself (launch.Start). A
// guess either way costs only time: the runner lets go a supervisor that
// cannot open the store it gets (launch.TakeEarly).
func namesDB(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if a == "--db" || len(a) > len("--db=") && a[:len("--db=")] == "--db=" {
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
