// Package runner starts, supervises, kills and awaits background commands,
// and reconciles jobs whose supervisor died.
//
// A host calls Start and gets a job id at once. Each job gets a supervisor
// that is the child's parent: it puts the child in its own process group,
// pumps both pipes into capped, indexed log files, enforces the timeout
// (SIGTERM to the group, SIGKILL after the grace period) and the byte cap,
// kills and reaps every descendant left after the main process exits
// (whatever it did with sessions and groups: see Containment), records
// the CPU time and peak memory of the tree, writes an exit record file and
// then the terminal transition with the banked artifacts, in one
// transaction.
//
// The supervisor runs in one of two modes sharing one supervise loop:
// in-process (a goroutine in the host, for Go programs that do not ship the
// bgcmd binary) or detached (the bgcmd binary re-executed with the hidden
// subcommand named by SuperviseCommand, in its own session, so the command
// outlives the host). A Go host that wants detached supervision without
// shipping bgcmd calls MaybeSupervise at the top of its own main and sets
// Options.Binary to its own executable; Start names the fix when the binary
// does not (a supervisor's first word on its report pipe is a hello).
//
// Kill, Await and Status work from any process that opens the same home: a
// kill request is recorded in the store and announced by a datagram on the
// job's wake socket, beside the database, on which the supervisor waits (a
// descriptor of its own, not one of the few inotify instances a user has);
// Await watches the job's directory with inotify for the settle.
//
// Reading is pure unless the name says otherwise: Status, Await, AwaitAny,
// Job, List and ReadOutput never mark a job read; Read (a status taken in)
// and MarkRead do, clearing a settled job from its session's finished
// counter.
package runner
