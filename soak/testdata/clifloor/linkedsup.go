//go:build linkedsup

package main

// With the build tag linkedsup, the floor links every package
// bgcmd-supervisor's main package imports (bgcmd's own start-up helper,
// internal/prefault, aside), blank, as linked.go does for bgcmd's: built
// so, it is the linked floor's second program (clifloor-linked-child),
// which the first starts as bgcmd starts bgcmd-supervisor.
// TestLinkedFloorLinksWhatBgcmdLinks keeps this list in step with
// cmd/bgcmd-supervisor's imports.
import (
	_ "fmt"
	_ "os"

	_ "github.com/bgcmd/bgcmd/internal/launch"
	_ "github.com/bgcmd/bgcmd/internal/spawn"
	_ "github.com/bgcmd/bgcmd/runner"
)
