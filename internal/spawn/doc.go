// Package spawn starts the bgcmd binary as a detached supervisor process,
// for the runner: internal/launch starts it with system calls alone (in
// its own session, in the root directory, with none of the starting
// process's environment but what a supervisor needs, and with no
// descriptor besides the standard ones, its hand-over socket and its
// report pipe), and this package hands its descriptors on as files.
//
// A supervisor of bgcmd starts from bgcmd-supervisor, the binary `make
// build` puts beside bgcmd, which links only what a supervisor runs and so
// starts faster (launch.SupervisorPath). Both carry the same build stamp;
// a bgcmd-supervisor of another build hands the process back to the bgcmd
// that started it before it reads anything (HandBackIfStale), and a bgcmd
// without one, or without a stamp, supervises with itself.
//
// bgcmd's own main package starts the supervisor of a `bgcmd run` while
// the binary initialises (launch.StartEarly), instead of after it; the
// runner hands a job to such a supervisor as to any other (TakeEarly).
package spawn
