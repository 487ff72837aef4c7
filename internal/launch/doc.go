// Package launch starts a detached supervisor process with system calls
// alone: which file (bgcmd-supervisor beside bgcmd, or bgcmd itself), with
// which argv, environment and descriptors. internal/spawn wraps what it
// returns in files for the runner. It also says where bgcmd's other
// binaries are (Beside: make build puts the three side by side) and
// whether this binary is a lean build (Lean, LeanTag).
//
// It imports only syscall, sync and errors, and declares no variable that
// needs initialising, so that bgcmd's early start (cmd/bgcmd/internal/earlysup),
// built on it alone, is initialised among the binary's very first packages.
// The runtime initialises, among the packages whose imports are all
// initialised, the one whose import path sorts first; a package that waits
// for os (or for strings, whose unicode tables are initialised late, or
// path/filepath) therefore waits behind every package of the binary whose
// path sorts before its own and is ready by then: the standard library's
// crypto, compress and encoding packages, golang.org/x/text and more, some
// 5 ms of a `bgcmd run` on a small machine. Started from here, the
// supervisor starts that much sooner, and every `bgcmd run` waits for it.
package launch
