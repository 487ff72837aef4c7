//go:build linux

package runner

import (
	"os"
	"os/signal"
	"syscall"
)

// catchSignals catches sigs on ch, except those this process was started
// with ignored: ignored dispositions survive exec, so a signal ignored by
// whoever started bgcmd (nohup's SIGHUP, say) stays ignored for the jobs
// it starts, and a signal that was not ignored is caught, never ignored,
// so that it reaches the jobs with its default action. A job thus sees the
// signal dispositions its starter had.
func catchSignals(ch chan<- os.Signal, sigs ...syscall.Signal) {
	var catch []os.Signal
	for _, s := range sigs {
		if !signal.Ignored(s) {
			catch = append(catch, s)
		}
	}
	if len(catch) > 0 {
		signal.Notify(ch, catch...)
	}
}
