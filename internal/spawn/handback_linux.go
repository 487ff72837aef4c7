//go:build linux

package spawn

import (
	"fmt"
	"os"
	"syscall"

	"github.com/bgcmd/bgcmd/internal/launch"
)

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
	if len(os.Args) != 4 || os.Args[1] != launch.Command || os.Args[2] == launch.BuildStamp() {
		return nil
	}
	bgcmd := os.Args[3]
	err := syscall.Exec(bgcmd, []string{bgcmd, launch.Command}, os.Environ())
	return fmt.Errorf("this supervisor is of another build than %s, which could not be started in its place: %w (rebuild both with make build)", bgcmd, err)
}
