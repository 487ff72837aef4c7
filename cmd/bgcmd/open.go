package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// openJobs opens the store and a detached runner without loading the
// policy: every command but run reads or retires jobs and needs none, so a
// broken policy file never stands between a user and their history.
// Unless skipReconcile is set, opening reconciles orphaned jobs first.
func (g *globals) openJobs(ctx context.Context, skipReconcile bool) (*app, error) {
	home, err := g.homeDir()
	if err != nil {
		return nil, err
	}
	return g.open(ctx, home, nil, skipReconcile)
}

// interruptible returns a context cancelled by SIGINT or SIGTERM, for the
// commands that wait: bgcmd stops waiting, the job keeps running.
func interruptible(ctx context.Context) (context.Context, context.CancelFunc) {
	return signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
}

// interrupted is the error of a wait cut short by the user.
func interrupted(id string) error {
	return &exitError{code: exitInterrupted,
		msg: fmt.Sprintf("interrupted; job %s keeps running (bgcmd wait %s)", id, id)}
}
