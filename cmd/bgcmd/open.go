package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/bgcmd/bgcmd/jobstore"
	"github.com/bgcmd/bgcmd/runner"
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
	a := &app{home: home, session: g.sessionName()}
	if a.store, err = jobstore.Open(ctx, jobstore.Options{Path: filepath.Join(home, "bgcmd.db")}); err != nil {
		return nil, err
	}
	bin, err := os.Executable()
	if err != nil {
		a.store.Close()
		return nil, fmt.Errorf("find the bgcmd binary for detached supervisors: %w", err)
	}
	a.runner, err = runner.New(ctx, runner.Options{Store: a.store, Home: home, Detached: true,
		Binary: bin, Session: a.session, SkipReconcile: skipReconcile})
	if err != nil {
		a.store.Close()
		return nil, err
	}
	return a, nil
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
