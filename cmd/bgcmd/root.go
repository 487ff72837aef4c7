package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/bgcmd/bgcmd/internal/jobstore"
)

// globals are the root's persistent flags, shared by every command.
type globals struct {
	home    string
	policy  string
	session string
	json    bool
	// longLived is set by the commands that serve for a long time (mcp):
	// their runner keeps a spare supervisor ready for the next start.
	longLived bool
	// db is --db: a PostgreSQL DSN (see storeOptions).
	db string
	// prestart is set by run: its runner's supervisor starts before the
	// store is open (runner.Prestart).
	prestart bool
	// transient is set by run and rerun without --wait: the process ends
	// once the job is on record, and its supervisor leaves the store's
	// log ready for the next command (runner.Options.Transient).
	transient bool
	// startOnly is set by run without --wait and --json: it needs nothing
	// of the store but the job's start, whose row its supervisor writes
	// when the store is at this build's schema (runner.Options.SupervisorWrites).
	startOnly bool
}

func newRootCmd() *cobra.Command {
	g := &globals{}
	root := &cobra.Command{
		Use:   "bgcmd",
		Short: "Durable store and supervisor for background commands",
		Long: `bgcmd starts commands as argv arrays under a strict policy, supervises them
in the background, and keeps every transition and every byte of output in a
durable store under its home directory.

Home: --home, else $BGCMD_HOME, else $XDG_STATE_HOME/bgcmd, else ~/.local/state/bgcmd.
Policy: --policy, else $BGCMD_POLICY, else <home>/policy.toml.
Database: --db DSN, else $BGCMD_DB, a postgres:// URL (hosts sharing one
PostgreSQL database); else the SQLite file <home>/bgcmd.db. Logs stay in the home.
Session: --session, else $BGCMD_SESSION, else "default", for every command:
run starts jobs in it, list shows its jobs (--all-sessions: every session's),
mcp serves its jobs only. status, output, wait and kill reach any job by id.
The home must be yours and writable by no one else (a home others may read is
made 0700); the database, logs and artifacts are private to you.

Exit codes: 0 success, 1 runtime error, 2 usage error, 3 refused by policy,
4 not found.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	f := root.PersistentFlags()
	f.StringVar(&g.home, "home", "", "state directory (database, logs, artifacts)")
	f.StringVar(&g.policy, "policy", "", "policy file (TOML)")
	f.StringVar(&g.session, "session", "", "session name for counters and history")
	f.StringVar(&g.db, "db", "", "PostgreSQL database URL (postgres://…); default $BGCMD_DB, else the SQLite file in the home")
	f.BoolVar(&g.json, "json", false, "machine-readable output (one JSON object, or JSON Lines for lists)")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &usageError{err} })
	root.AddCommand(newListCmd(g))
	root.AddCommand(newRunCmd(g), newStatusCmd(g), newWaitCmd(g), newOutputCmd(g), newFollowCmd(g), newKillCmd(g), newRerunCmd(g), newPruneCmd(g), newGCCmd(g), newReconcileCmd(g), newSQLCmd(g))
	root.AddCommand(newMCPCmd(g))
	root.AddCommand(newGitCmd(g))
	root.AddCommand(newVerifyCmd(g), newExportCmd(g))
	root.AddCommand(newVersionCmd(g))
	root.AddCommand(newEventsCmd(g))
	root.Version = readVersion().String()
	// As `bgcmd version` prints it; the supervisor and full lines are read
	// only then.
	cobra.AddTemplateFunc("supervisorLine", func() string { return readSupervisor().String() })
	cobra.AddTemplateFunc("fullLines", func() string {
		if f := readFull(); f != nil {
			return f.String() + "\n"
		}
		return ""
	})
	root.SetVersionTemplate("bgcmd {{.Version}}\n{{supervisorLine}}\n{{fullLines}}")
	root.AddCommand(newUICmd(g))
	return root
}

// homeDir resolves the state directory and checks it is private (see
// jobstore.SecureDir): one another user owns or may write is an error
// saying how to fix it; one others may only read (0755, as `mkdir -p`
// makes it) is made 0700, and bgcmd says so on stderr.
func (g *globals) homeDir() (string, error) {
	home, err := g.resolveHome()
	if err != nil {
		return "", err
	}
	was, err := jobstore.SecureDir(home)
	if err != nil {
		return "", err
	}
	if was != 0 {
		fmt.Fprintf(os.Stderr, "bgcmd: %s was open to other users (mode %04o); bgcmd made it private (0700): "+
			"it holds every command line and its output\n", home, was)
	}
	return home, nil
}

// resolveHome finds the state directory.
func (g *globals) resolveHome() (string, error) {
	if g.home != "" {
		return filepath.Abs(g.home)
	}
	if h := os.Getenv("BGCMD_HOME"); h != "" {
		return filepath.Abs(h)
	}
	if x := os.Getenv("XDG_STATE_HOME"); x != "" {
		return filepath.Join(x, "bgcmd"), nil
	}
	u, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("find home directory: %w (set --home or BGCMD_HOME)", err)
	}
	return filepath.Join(u, ".local", "state", "bgcmd"), nil
}

// sessionName resolves the session.
func (g *globals) sessionName() string {
	if g.session != "" {
		return g.session
	}
	if s := os.Getenv("BGCMD_SESSION"); s != "" {
		return s
	}
	return "default"
}

// openStore opens the store: the database --db or $BGCMD_DB names, else the
// SQLite file under the home directory.
func (g *globals) openStore(ctx context.Context) (*jobstore.Store, error) {
	home, err := g.homeDir()
	if err != nil {
		return nil, err
	}
	return jobstore.Open(ctx, g.storeOptions(home, false))
}

// storeOptions choose the store: the PostgreSQL database --db names, else
// $BGCMD_DB's, else the SQLite file <home>/bgcmd.db (also the path the
// store reports on PostgreSQL: the home keeps the logs either way).
func (g *globals) storeOptions(home string, readOnly bool) jobstore.Options {
	dsn := g.db
	if dsn == "" {
		dsn = os.Getenv("BGCMD_DB")
	}
	return jobstore.Options{Path: filepath.Join(home, "bgcmd.db"), DSN: dsn, ReadOnly: readOnly}
}
