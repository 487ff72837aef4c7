package testkit

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/bgcmd/bgcmd/internal/spawn"
)

// StampFlag is the linker flag that gives a binary the build stamp stamp,
// as `make build` gives bgcmd and bgcmd-supervisor theirs (see
// internal/spawn): with -ldflags.
func StampFlag(stamp string) string {
	return "-X " + spawn.StampSymbol + "=" + stamp
}

// BuildSupervisor builds bgcmd's supervisor binary into dir (as
// bgcmd-supervisor) with build stamp stamp, by the go command goTool, with
// the race detector when race is set. A bgcmd built into dir with the same
// stamp starts its detached supervisors from it.
func BuildSupervisor(goTool, dir, stamp string, race bool) error {
	args := []string{"build", "-ldflags", StampFlag(stamp), "-o", filepath.Join(dir, "bgcmd-supervisor")}
	cgo := "CGO_ENABLED=0" // as make build: a static binary
	if race {
		args = append(args, "-race")
		cgo = "CGO_ENABLED=1" // the race detector needs cgo
	}
	cmd := exec.Command(goTool, append(args, "github.com/bgcmd/bgcmd/cmd/bgcmd-supervisor")...)
	cmd.Env = append(os.Environ(), cgo)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("build bgcmd-supervisor: %v\n%s", err, out)
	}
	return nil
}
