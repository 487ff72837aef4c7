package bgcmd_test

import (
	"fmt"

	"github.com/bgcmd/bgcmd"
)

// A job is settled once it is in any state but running; a state bgcmd does
// not know is neither valid nor settled.
func ExampleState_Settled() {
	for _, s := range []bgcmd.State{bgcmd.StateRunning, bgcmd.StateExited, bgcmd.StateOrphaned, "paused"} {
		fmt.Println(s, s.Valid(), s.Settled())
	}
	// Output:
	// running true false
	// exited true true
	// orphaned true true
	// paused false false
}
