package jobstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/pressly/goose/v3"
	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"github.com/bgcmd/bgcmd/internal/flock"
	"github.com/bgcmd/bgcmd/internal/hostid"
	"github.com/bgcmd/bgcmd/migrations"
)

// DefaultBusyTimeout is how long a write waits for another process's write
// transaction before failing with "database is locked".
const DefaultBusyTimeout = 30 * time.Second

// Options configure Open. Zero values take the documented defaults.
type Options struct {
	// Path is the database file; its directory is created if missing.
	Path string
	// Host names this machine in job rows, for people; default
	// os.Hostname().
	Host string
	// HostID is the stable id of this host's bgcmd home, the key of every
	// per-host query (reconcile, the queue, hooks). Default: the id kept in
	// the file "host" beside the database (created once; see
	// internal/hostid), which for a SQLite store in its home is the home's
	// id. A store opened elsewhere than in its home must be given it.
	HostID string
	// ShareArtifacts keeps banked output in the store too (artifact_blobs,
	// artifact_chunks) so every host sharing the store can read it; off by
	// default: a store used by one host needs only the files.
	ShareArtifacts bool
	// Now is the clock; default time.Now.
	Now func() time.Time
	// BusyTimeout; default DefaultBusyTimeout.
	BusyTimeout time.Duration
	// ReadOnly opens the file read-only (SQLite refuses every write) and
	// skips migration. The database must already exist.
	ReadOnly bool
	// ReadConns bounds the read pool; default 4.
	ReadConns int
}

// Store is an open bgcmd database. It is safe for concurrent use.
type Store struct {
	w, r   *sqlx.DB
	path   string
	host   string
	hostID string
	// shareArtifacts: banked output goes into the store too.
	shareArtifacts bool
	now            func() time.Time
	readOnly       bool
}

// Open opens (creating and migrating as needed) the database at opts.Path.
// It fails with an error naming the path when the directory cannot be
// created, the file is not a SQLite database, WAL cannot be enabled, or the
// database was migrated by a newer bgcmd; in each case nothing is overwritten.
//
// The database's directory must pass SecureDir (ours, written by no one
// else; tightened to 0700 when others may read it) and is created 0700;
// the database, its WAL and SHM are made 0600 whatever the umask.
func Open(ctx context.Context, opts Options) (*Store, error) {
	if opts.Path == "" {
		return nil, errors.New("open store: empty database path")
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.BusyTimeout <= 0 {
		opts.BusyTimeout = DefaultBusyTimeout
	}
	if opts.ReadConns <= 0 {
		opts.ReadConns = 4
	}
	if opts.Host == "" {
		h, err := os.Hostname()
		if err != nil {
			return nil, fmt.Errorf("open store: hostname: %w", err)
		}
		opts.Host = h
	}
	path, err := filepath.Abs(opts.Path)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", opts.Path, err)
	}
	s := &Store{path: path, host: opts.Host, hostID: opts.HostID, shareArtifacts: opts.ShareArtifacts,
		now: opts.Now, readOnly: opts.ReadOnly}
	if _, err := SecureDir(filepath.Dir(path)); err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	if opts.ReadOnly {
		if _, err := os.Stat(path); err != nil {
			return nil, fmt.Errorf("open store %s read-only: %w (run a bgcmd command that writes first, or check --home)", path, err)
		}
		for _, p := range []string{path, path + "-wal", path + "-shm"} {
			if err := makePrivate(p); err != nil {
				return nil, err
			}
		}
		s.r, err = openDB(path, opts.BusyTimeout, true, true, opts.ReadConns)
		if err != nil {
			return nil, err
		}
		if err := s.r.PingContext(ctx); err != nil {
			s.r.Close()
			return nil, describeOpenError(path, err)
		}
		s.w = s.r
		return s, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("open store: create directory for %s: %w", path, err)
	}
	if err := privateFiles(path); err != nil {
		return nil, err
	}
	if s.hostID == "" {
		id, err := hostid.Load(filepath.Dir(path))
		if err != nil {
			return nil, fmt.Errorf("open store %s: %w", path, err)
		}
		s.hostID = id.ID
	}
	if s.w, err = openDB(path, opts.BusyTimeout, false, false, 1); err != nil {
		return nil, err
	}
	if err := s.init(ctx); err != nil {
		s.w.Close()
		return nil, err
	}
	if err := s.adoptLegacyRows(ctx); err != nil {
		s.w.Close()
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	if s.r, err = openDB(path, opts.BusyTimeout, true, false, opts.ReadConns); err != nil {
		s.w.Close()
		return nil, err
	}
	return s, nil
}

// openDB is the one place SQLite is opened. reader connections use deferred
// transactions; readOnly ones are opened with mode=ro, so SQLite itself
// refuses every write whatever SQL they run; the writer uses
// immediate ones, so a busy database waits at BEGIN, where the busy timeout
// applies, instead of failing on a later lock upgrade.
func openDB(path string, busy time.Duration, reader, readOnly bool, conns int) (*sqlx.DB, error) {
	q := url.Values{}
	if readOnly {
		q.Set("mode", "ro")
	}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busy.Milliseconds()))
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "synchronous(NORMAL)")
	if reader {
		q.Set("_txlock", "deferred")
	} else {
		q.Add("_pragma", "journal_mode(WAL)")
		q.Set("_txlock", "immediate")
	}
	dsn := "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + q.Encode()
	// Every connection keeps the statements it runs prepared
	// (stmtConnector): the same SQL, parsed once per connection.
	db := sqlx.NewDb(sql.OpenDB(stmtConnector{dsn: dsn}), "sqlite")
	db.SetMaxOpenConns(conns)
	db.SetMaxIdleConns(conns)
	db.SetConnMaxIdleTime(0)
	return db, nil
}

// init checks the file is a WAL SQLite database and migrates it under the
// migration file lock.
func (s *Store) init(ctx context.Context) error {
	var mode string
	if err := s.w.GetContext(ctx, &mode, "PRAGMA journal_mode"); err != nil {
		return describeOpenError(s.path, err)
	}
	if !strings.EqualFold(mode, "wal") {
		return fmt.Errorf("open store %s: journal_mode is %q, not wal (is the directory on a filesystem without shared memory?)", s.path, mode)
	}
	if current, err := appliedVersion(ctx, s.w); err == nil && current == latestVersion() {
		return nil // the common case: already migrated, no lock, no provider
	}
	unlock, err := flock.Lock(s.path+".migrate.lock", true)
	if err != nil {
		return fmt.Errorf("open store %s: %w", s.path, err)
	}
	defer unlock()
	return migrate(ctx, s.w, s.path)
}

// appliedVersion reads the newest applied migration from goose's table; an
// error means the table is not there yet.
func appliedVersion(ctx context.Context, db *sqlx.DB) (int64, error) {
	var v int64
	err := db.GetContext(ctx, &v, `SELECT COALESCE(MAX(version_id), 0) FROM goose_db_version WHERE is_applied`)
	return v, err
}

// latestVersion is the number of the newest migration, embedded SQL or Go.
func latestVersion() int64 {
	entries, err := fs.Glob(migrations.FS, "*.sql")
	if err != nil {
		return -1
	}
	var latest int64 = -1
	for _, e := range entries {
		n, err := strconv.ParseInt(strings.SplitN(e, "_", 2)[0], 10, 64)
		if err == nil && n > latest {
			latest = n
		}
	}
	for _, m := range goMigrations() {
		latest = max(latest, m.Version)
	}
	return latest
}

func migrate(ctx context.Context, db *sqlx.DB, path string) error {
	p, err := goose.NewProvider(goose.DialectSQLite3, db.DB, migrations.FS,
		goose.WithDisableGlobalRegistry(true), goose.WithGoMigrations(goMigrations()...))
	if err != nil {
		return fmt.Errorf("open store %s: load migrations: %w", path, err)
	}
	current, err := p.GetDBVersion(ctx)
	if err != nil {
		return describeOpenError(path, err)
	}
	sources := p.ListSources()
	known := sources[len(sources)-1].Version
	if current > known {
		return fmt.Errorf("open store %s: schema version %d is newer than this bgcmd knows (%d): upgrade bgcmd, or use another --home", path, current, known)
	}
	if current == known {
		return nil
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("open store %s: migrate: %w", path, err)
	}
	return nil
}

// Close closes the database connections.
func (s *Store) Close() error {
	if s.readOnly {
		return s.r.Close()
	}
	return errors.Join(s.w.Close(), s.r.Close())
}

// Path is the absolute path of the database file.
func (s *Store) Path() string { return s.path }

// Host is the host name this store writes into job rows and reconciles.
func (s *Store) Host() string { return s.host }

// Now is the store's clock.
func (s *Store) Now() time.Time { return s.now() }
