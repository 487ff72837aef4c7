// Package spawn starts the bgcmd binary as a detached supervisor process:
// in its own session, in the root directory, with none of the starting
// process's environment but what a supervisor needs (Env), and with no
// descriptor besides the standard ones (the null device, or the job's
// supervisor.log), its hand-over socket (descriptor 3) and its report pipe
// (descriptor 4).
//
// A supervisor of bgcmd starts from bgcmd-supervisor, the binary `make
// build` puts beside bgcmd, which links only what a supervisor runs and so
// starts faster (SupervisorPath). Both carry the same
// build stamp; a bgcmd-supervisor of another build hands the process back
// to the bgcmd that started it before it reads anything (HandBackIfStale),
// and a bgcmd without one, or without a stamp, supervises with itself.
//
// It imports only the standard library, so that it is initialised among
// the binary's first packages: bgcmd's own main package starts the
// supervisor of a `bgcmd run` from there (StartEarly), while the rest of
// the binary initialises, instead of after it. The runner hands a job to
// such a supervisor as to any other (TakeEarly).
package spawn
