package main

import (
	"debug/buildinfo"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/bgcmd/bgcmd/internal/launch"
)

// supervisorInfo says which file this bgcmd starts its detached
// supervisors from.
type supervisorInfo struct {
	// Path is bgcmd-supervisor beside bgcmd when it is of this build, else
	// bgcmd itself.
	Path string `json:"path"`
	// Note says why bgcmd supervises with itself, when bgcmd-supervisor is
	// missing or not of its build, and how to mend that.
	Note string `json:"note,omitempty"`
}

// readSupervisor finds out what supervisorInfo says, from the build stamp
// of this binary and that of bgcmd-supervisor beside it.
func readSupervisor() supervisorInfo {
	self, err := os.Executable()
	if err != nil {
		return supervisorInfo{Note: "bgcmd cannot name its own executable: " + err.Error()}
	}
	lean := launch.SupervisorPath(self)
	if lean == "" {
		return supervisorInfo{Path: self, Note: "built without make build, so bgcmd has no build stamp and supervises with itself"}
	}
	info := supervisorInfo{Path: self}
	bi, err := buildinfo.ReadFile(lean)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		info.Note = "no " + launch.SupervisorName + " beside it, so bgcmd supervises with itself; install it with bgcmd (make build makes both)"
	case err != nil:
		info.Note = lean + " is unreadable, so bgcmd supervises with itself: " + err.Error()
	case stampOf(bi) != launch.BuildStamp():
		info.Note = lean + " is of another build, so bgcmd supervises with itself; rebuild both with make build"
	default:
		info.Path = lean
	}
	return info
}

// fullInfo says which bgcmd-full a lean bgcmd (launch.LeanTag) hands the
// commands it leaves out to.
type fullInfo struct {
	// Path is bgcmd-full beside bgcmd.
	Path string `json:"path"`
	// Note says what is wrong with it, when it is missing or not of this
	// build, and how to mend that.
	Note string `json:"note,omitempty"`
}

// readFull finds out what fullInfo says, for a lean bgcmd (nil for a full
// one, which serves every command itself).
func readFull() *fullInfo {
	if !launch.Lean {
		return nil
	}
	full := launch.Beside(launch.FullName)
	if full == "" {
		return &fullInfo{Note: "this lean bgcmd has no build stamp, so it has none: build with make build"}
	}
	info := &fullInfo{Path: full}
	bi, err := buildinfo.ReadFile(full)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		info.Note = "missing, so mcp, ui, git, PostgreSQL stores and migrations fail; install it with bgcmd (make build makes both)"
	case err != nil:
		info.Note = "unreadable: " + err.Error()
	default:
		if m := fullMismatch(bi); m != "" {
			info.Note = m + ", so it is not used; rebuild both with make build"
		}
	}
	return info
}

// String is the line `bgcmd version` prints for it.
func (f fullInfo) String() string {
	line := "full " + f.Path
	if f.Note != "" {
		line += ": " + f.Note
	}
	return line
}

// stampOf returns the build stamp the linker flags of bi gave its binary.
func stampOf(bi *buildinfo.BuildInfo) string {
	for _, s := range bi.Settings {
		if s.Key != "-ldflags" {
			continue
		}
		for _, f := range strings.Fields(s.Value) {
			if v, ok := strings.CutPrefix(strings.Trim(f, `"'`), launch.StampSymbol+"="); ok {
				return v
			}
		}
	}
	return ""
}

// String is the line `bgcmd version` prints under the version.
func (s supervisorInfo) String() string {
	line := "supervisor " + filepath.Clean(s.Path)
	if s.Note != "" {
		line += ": " + s.Note
	}
	return line
}
