//go:build linked

package main

// With the build tag linked, the floor links every package bgcmd's main
// package imports as make build builds it, lean (the tag bgcmd_lean, which
// BenchmarkCLIRun builds this with too), its own internal packages aside,
// blank: their initialisation runs before main in both processes, as it
// does in `bgcmd run` and its supervisor. No code of theirs runs beyond
// that, and the binary is smaller than bgcmd's: the linker leaves out what
// only bgcmd's commands reach, which bgcmd pays for in page faults and at
// exit. BenchmarkCLIRun times this build beside the plain one, which parts
// the gap between `bgcmd run` and the floor into what the binary's package
// set costs and what bgcmd's own work costs.
// TestLinkedFloorLinksWhatBgcmdLinks keeps this list in step with
// cmd/bgcmd's imports.
import (
	_ "bytes"
	_ "context"
	_ "debug/buildinfo"
	_ "encoding/csv"
	_ "encoding/hex"
	_ "encoding/json"
	_ "errors"
	_ "fmt"
	_ "io"
	_ "io/fs"
	_ "math"
	_ "os"
	_ "os/signal"
	_ "path/filepath"
	_ "regexp"
	_ "runtime/debug"
	_ "slices"
	_ "sort"
	_ "strconv"
	_ "strings"
	_ "sync"
	_ "syscall"
	_ "time"
	_ "unicode/utf8"

	_ "github.com/bgcmd/bgcmd"
	_ "github.com/bgcmd/bgcmd/artifacts"
	_ "github.com/bgcmd/bgcmd/internal/hostid"
	_ "github.com/bgcmd/bgcmd/internal/jobstore"
	_ "github.com/bgcmd/bgcmd/internal/launch"
	_ "github.com/bgcmd/bgcmd/policy"
	_ "github.com/bgcmd/bgcmd/runner"
	_ "github.com/spf13/cobra"
	_ "golang.org/x/sys/unix"
)
