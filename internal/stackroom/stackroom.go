// Package stackroom gives a goroutine that is about to call into SQLite,
// while its stack is still shallow, the stack those calls will need.
//
// A goroutine starts on a small stack (2 KiB in a process that has not
// collected garbage yet), and the runtime doubles it, copying it whole,
// each time a call needs more. To copy a stack the runtime walks each of
// its frames and looks up the frame's size and pointer map in tables it
// decodes from the function's start: cheap for a small function, slow deep
// in SQLite's (modernc.org/sqlite is C translated to Go; sqlite3VdbeExec
// alone is 75 KiB of code), and slower in a process whose tables are not
// yet in the processor's caches. A detached supervisor is such a process:
// its goroutines that open the store, write the job's row and settle it
// each grew to 4, 8 and then 16 KiB with SQLite's frames on the stack,
// about 2 ms of its CPU in stack copies (a sampled profile of 60 `bgcmd
// run -- /bin/true` in a row). Grown here first, in one copy of a stack a
// few frames deep, they are not copied again: a whole run, both processes,
// took 54.6 ms of CPU where it took 57.5 (three rounds of 60 runs each, in
// turn).
//
// A long-lived process gains little: the runtime starts new goroutines
// near the average stack it found at its last collection, and its tables
// stay cached (stack copies were 0.1% of the in-process lifecycle's CPU).
package stackroom

// Room is the stack Grow leaves a goroutine: twice the deepest a
// supervisor's SQLite calls were seen to need.
const Room = 32 << 10

// Grow makes the calling goroutine's stack at least Room bytes, in one
// copy. Call it first thing in a goroutine that will call into SQLite.
// Growing it costs a few microseconds (the stack's memory and a frame
// cleared); the runtime may halve it again at a garbage collection that
// finds it mostly unused.
func Grow() { frame() }

// frame's local array makes its frame nearly Room bytes: the runtime grows
// the stack on entry, by doubling until the frame fits, to Room.
//
//go:noinline
func frame() {
	var room [Room - 4<<10]byte
	touch(room[:])
}

// touch keeps room's use out of the compiler's reach, so that frame
// keeps its size.
//
//go:noinline
func touch(b []byte) { b[0]++ }
