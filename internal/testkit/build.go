package testkit

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/bgcmd/bgcmd/internal/launch"
)

// StampFlag is the linker flag that gives a binary the build stamp stamp,
// as `make build` gives bgcmd and bgcmd-supervisor theirs (see
// internal/launch): with -ldflags.
func StampFlag(stamp string) string {
	return "-X " + launch.StampSymbol + "=" + stamp
}

// BuildStamped builds the main package pkg into the file out with build
// stamp stamp and the build tags tags (none when empty), by the go command
// goTool: static, as make build builds, or with the race detector (and so
// cgo) when race is set.
func BuildStamped(goTool, pkg, out, stamp, tags string, race bool) error {
	args := []string{"build", "-ldflags", StampFlag(stamp), "-o", out}
	if tags != "" {
		args = append(args, "-tags", tags)
	}
	cgo := "CGO_ENABLED=0" // as make build: a static binary
	if race {
		args = append(args, "-race")
		cgo = "CGO_ENABLED=1" // the race detector needs cgo
	}
	args = append(args, pkg)
	cmd := exec.Command(goTool, args...)
	cmd.Env = append(os.Environ(), cgo)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}

// BuildSupervisor builds bgcmd's supervisor binary into dir (as
// bgcmd-supervisor) with build stamp stamp, as BuildStamped does, with the
// tag make build gives it (launch.LeanTag). A bgcmd built into dir with
// the same stamp starts its detached supervisors from it.
func BuildSupervisor(goTool, dir, stamp string, race bool) error {
	return BuildStamped(goTool, "github.com/bgcmd/bgcmd/cmd/bgcmd-supervisor",
		filepath.Join(dir, launch.SupervisorName), stamp, launch.LeanTag, race)
}

// BuildRelease builds into dir what make build builds, with build stamp
// stamp: bgcmd, lean (launch.LeanTag); bgcmd-full beside it, the same
// program with every command, to which the lean one hands the commands it
// leaves out; and bgcmd-supervisor (BuildSupervisor). It returns bgcmd's
// path.
func BuildRelease(goTool, dir, stamp string, race bool) (string, error) {
	const pkg = "github.com/bgcmd/bgcmd/cmd/bgcmd"
	bin := filepath.Join(dir, "bgcmd")
	if err := BuildStamped(goTool, pkg, bin, stamp, launch.LeanTag, race); err != nil {
		return "", err
	}
	if err := BuildStamped(goTool, pkg, filepath.Join(dir, launch.FullName), stamp, "", race); err != nil {
		return "", err
	}
	return bin, BuildSupervisor(goTool, dir, stamp, race)
}
