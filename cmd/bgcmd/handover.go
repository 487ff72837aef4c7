package main

import (
	"debug/buildinfo"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/bgcmd/bgcmd/internal/jobstore"
	"github.com/bgcmd/bgcmd/internal/launch"
)

// The one-line help of the commands a lean bgcmd hands to bgcmd-full
// (lean.go), shared by both builds so that `bgcmd help` lists them alike.
const (
	mcpShort = "Serve the agent tools over MCP on stdio"
	gitShort = "Read a git repository with the read-only git tools"
	uiShort  = "Serve a read-only web view of the history and the output"
)

// unparsedError is an error of a command line that bgcmd did not parse
// (one a lean bgcmd hands to bgcmd-full, lean.go): asJSON says whether
// that command line asks for --json, which its flags would have said.
type unparsedError struct {
	error
	asJSON bool
}

func (e unparsedError) Unwrap() error { return e.error }

// unparsed is err of this process's command line, which bgcmd did not
// parse.
func unparsed(err error) unparsedError {
	return unparsedError{error: err, asJSON: asksForJSON(os.Args[1:])}
}

// asksForJSON says whether the global flag --json is set among args, a
// command line bgcmd did not parse: before any "--", the last --json or
// --json=BOOL says, as the flag itself would.
func asksForJSON(args []string) bool {
	on := false
	for _, a := range args {
		if a == "--" {
			break
		}
		if a == "--json" {
			on = true
		} else if v, ok := strings.CutPrefix(a, "--json="); ok {
			on, _ = strconv.ParseBool(v)
		}
	}
	return on
}

// handOverIfLean hands this process's command line to bgcmd-full when this
// bgcmd is a lean build (launch.LeanTag) and err says its store needs what
// the build leaves out (a PostgreSQL store, or a store to migrate:
// jobstore.ErrLeanBuild). Every command opens its store before it writes
// anything or starts anything, so bgcmd-full runs the command from the
// start. It returns err otherwise, or why the hand-over failed.
func handOverIfLean(err error) error {
	if !launch.Lean || !errors.Is(err, jobstore.ErrLeanBuild) {
		return err
	}
	return handOver(err)
}

// handOver replaces this process with bgcmd-full beside it (same process
// id, descriptors, environment and arguments), for a command this lean
// build leaves out; why says which. bgcmd-full must carry this bgcmd's
// build stamp: it is read from the file opened here, and that same file
// is executed (through its descriptor), so the file checked is the file
// run. It returns only when the hand-over failed, saying why and how to
// recover.
func handOver(why error) error {
	full := launch.Beside(launch.FullName)
	if full == "" {
		return fmt.Errorf("%w; this bgcmd has no build stamp, so it does not look for %s: build with make build, or build bgcmd without the tag %s",
			why, launch.FullName, launch.LeanTag)
	}
	f, err := os.Open(full)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w; no %s beside this bgcmd: install it with bgcmd (make build builds both)", why, full)
	}
	if err != nil {
		return fmt.Errorf("%w; %s cannot be opened: %v", why, full, err)
	}
	defer f.Close()
	bi, err := buildinfo.Read(f)
	if err != nil {
		return fmt.Errorf("%w; %s is not a bgcmd binary (%v): rebuild both with make build", why, full, err)
	}
	if m := fullMismatch(bi); m != "" {
		return fmt.Errorf("%w; %s %s: rebuild both with make build", why, full, m)
	}
	launch.DiscardEarly() // its descriptors close on exec anyway: it exits
	argv := append([]string{full}, os.Args[1:]...)
	err = syscall.Exec("/proc/self/fd/"+strconv.Itoa(int(f.Fd())), argv, os.Environ())
	return fmt.Errorf("%w; %s could not be started: %v", why, full, err)
}

// fullMismatch says why the binary whose build information is bi is not
// the bgcmd-full of this build ("" when it is): one of another build, or a
// lean build itself, which would hand the command on to itself for ever.
// handOver refuses it for that, and `bgcmd version` says so.
func fullMismatch(bi *buildinfo.BuildInfo) string {
	if stampOf(bi) != launch.BuildStamp() {
		return "is of another build than this bgcmd"
	}
	for _, s := range bi.Settings {
		if s.Key == "-tags" && slices.Contains(strings.Split(s.Value, ","), launch.LeanTag) {
			return "is a lean build itself, not the full bgcmd"
		}
	}
	return ""
}
