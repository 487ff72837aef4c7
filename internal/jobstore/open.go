package jobstore

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jmoiron/sqlx"
	_ "modernc.org/sqlite" // registers the "sqlite" driver
	sqlite3 "modernc.org/sqlite/lib"

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
	// With a PostgreSQL DSN it is only the home's database path the store
	// reports (Path), and no file is made there.
	Path string
	// DSN, when it is a postgres:// or postgresql:// URL, selects the
	// PostgreSQL backend on that database (see open_postgres.go); empty
	// keeps SQLite at Path. It may hold a password: it is never printed.
	DSN string
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
	// OneConnection reads through the writer's connection instead of a
	// read pool, on SQLite: for a process that does one thing at a time
	// (a detached supervisor), where each further connection would read
	// and parse the whole schema again before its first statement. Reads
	// then wait for a write in progress, and a read transaction takes the
	// write lock.
	OneConnection bool
	// Deferred makes the store without opening the database: no
	// connection, no schema read, no migration, until the first statement
	// runs, which opens it as it is. For a process that may never use the
	// store (a `bgcmd run` whose supervisor writes the job's row), and
	// only for a SQLite file whose schema is this build's (SchemaCurrent):
	// the open checks nothing of it.
	Deferred bool
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
	// d is what differs between SQLite and PostgreSQL.
	d dialect
	// dsn is the PostgreSQL DSN ("" on SQLite).
	dsn string
	// notices is the PostgreSQL listener (nil on SQLite).
	notices *notices
	// autocheckpoint is the SQLite writer's wal_autocheckpoint: 0 when
	// ckpt checkpoints after the commits instead (see checkpointer).
	autocheckpoint int
	ckpt           *checkpointer
	// busyTimeout is how long a write waits for another's, and a reader
	// for a create announced ahead of its row (landAnnounced).
	busyTimeout time.Duration
	// announced keeps landAnnounced from reading an empty directory again.
	announced announceCache
}

// ErrLeanBuild is wrapped by the refusal of a lean build of bgcmd's
// binaries (the tag bgcmd_lean: see lean_build.go) to open a store that
// needs what it leaves out: a PostgreSQL store, or a SQLite store that is
// new or at another schema version (the migrations). A lean bgcmd hands
// such a command to bgcmd-full beside it.
var ErrLeanBuild = errors.New("this lean build leaves that to bgcmd-full, which make build builds beside it")

// Open opens (creating and migrating as needed) the database at opts.Path.
// It fails with an error naming the path when the directory cannot be
// created, the file is not a SQLite database, WAL cannot be enabled, or the
// database was migrated by a newer bgcmd; in each case nothing is overwritten.
//
// The database's directory must pass SecureDir (ours, written by no one
// else; tightened to 0700 when others may read it) and is created 0700;
// the database, its WAL and SHM are made 0600 whatever the umask.
func Open(ctx context.Context, opts Options) (*Store, error) {
	s, err := open(ctx, opts)
	if err != nil || opts.Deferred {
		return s, err
	}
	// A job reported running before its row was written reads as written
	// (see Announce).
	if err := s.landAnnounced(ctx, ""); err != nil {
		s.Close()
		return nil, fmt.Errorf("open store %s: %w", s.path, err)
	}
	return s, nil
}

// open is Open, before the announced creates are landed.
func open(ctx context.Context, opts Options) (*Store, error) {
	if opts.DSN != "" && !IsPostgresDSN(opts.DSN) {
		return nil, errors.New("open store: the database DSN is not a postgres:// or postgresql:// URL " +
			"(give a PostgreSQL URL with --db or BGCMD_DB, or none for the SQLite file in the home)")
	}
	if opts.Path == "" && opts.DSN == "" {
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
	if opts.DSN != "" {
		return openPostgres(ctx, opts)
	}
	path, err := filepath.Abs(opts.Path)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", opts.Path, err)
	}
	s := &Store{path: path, host: opts.Host, hostID: opts.HostID, shareArtifacts: opts.ShareArtifacts,
		now: opts.Now, readOnly: opts.ReadOnly, busyTimeout: opts.BusyTimeout}
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
		s.r, err = openDB(path, opts.BusyTimeout, true, true, opts.ReadConns, walAutocheckpoint)
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
	// A process that reads through its writer (a detached supervisor)
	// checkpoints in its commits; one with a read pool, after them.
	s.autocheckpoint = walAutocheckpoint
	if !opts.OneConnection && !opts.Deferred {
		s.autocheckpoint = 0
	}
	if opts.Deferred {
		// database/sql connects at the first statement; reads go through
		// the writer, as with OneConnection.
		if s.w, err = openDB(path, opts.BusyTimeout, false, false, 1, s.autocheckpoint); err != nil {
			return nil, err
		}
		s.r = s.w
		return s, nil
	}
	if err := s.openWriter(ctx, opts.BusyTimeout); err != nil {
		return nil, err
	}
	if err := s.adoptLegacyRows(ctx); err != nil {
		s.w.Close()
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	if opts.OneConnection {
		s.r = s.w
		return s, nil
	}
	if s.r, err = openDB(path, opts.BusyTimeout, true, false, opts.ReadConns, walAutocheckpoint); err != nil {
		s.w.Close()
		return nil, err
	}
	s.ckpt = newCheckpointer(s.w)
	return s, nil
}

// openDB is the one place SQLite is opened. reader connections use deferred
// transactions; readOnly ones are opened with mode=ro, so SQLite itself
// refuses every write whatever SQL they run; the writer uses
// immediate ones, so a busy database waits at BEGIN, where the busy timeout
// applies, instead of failing on a later lock upgrade.
func openDB(path string, busy time.Duration, reader, readOnly bool, conns, autocheckpoint int) (*sqlx.DB, error) {
	q := url.Values{}
	if readOnly {
		q.Set("mode", "ro")
	}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busy.Milliseconds()))
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "synchronous(NORMAL)")
	// The write-ahead log file outlives each process (persistWAL). A
	// checkpoint every 256 pages (1 MiB), not SQLite's 1000, bounds the
	// frames a log holds while processes share it (a writer whose store
	// checkpoints after its commits has 0: see checkpointer).
	q.Add("_pragma", fmt.Sprintf("wal_autocheckpoint(%d)", autocheckpoint))
	// The last connection to close checkpoints the log; with a
	// journal_size_limit it then empties it, where SQLite would keep its
	// frames. The next process to open the store rebuilds the log's index
	// from the frames it finds (SQLite's recovery) and, not knowing which
	// were copied, counts none as copied: the log starts again only at a
	// write after a checkpoint in that process's life, which a short
	// command (a write, then its end) never makes, so without such closes
	// every command would append to the log and read all of it at open
	// (the supervisor of a `bgcmd run` makes that write on purpose
	// instead, and leaves the log to the next process: see ReadyLog). The
	// limit also cuts a log that grew long back to 16 MiB when it starts
	// again.
	q.Add("_pragma", fmt.Sprintf("journal_size_limit(%d)", walSizeLimit))
	if reader {
		q.Set("_txlock", "deferred")
	} else {
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

// openWriter opens the writer connection and readies the file (WAL,
// migrations). Processes that open a store at the same moment as others
// create, convert or migrate it can find it locked in ways SQLite's busy
// handler does not wait for (turning on WAL takes an exclusive lock
// without it): such an open is retried until busy has passed.
func (s *Store) openWriter(ctx context.Context, busy time.Duration) error {
	deadline := time.Now().Add(busy)
	for backoff := 2 * time.Millisecond; ; backoff = min(2*backoff, 100*time.Millisecond) {
		w, err := openDB(s.path, busy, false, false, 1, s.autocheckpoint)
		if err != nil {
			return err
		}
		s.w = w
		if err = s.init(ctx); err == nil {
			return nil
		}
		w.Close()
		if sqliteCode(err) != sqlite3.SQLITE_BUSY || time.Now().Add(backoff).After(deadline) {
			return err
		}
		select {
		case <-time.After(backoff):
		case <-ctx.Done():
			return fmt.Errorf("open store %s: %w", s.path, ctx.Err())
		}
	}
}

// init makes the file a WAL SQLite database (once: the mode is kept in the
// file) and migrates it, both under the migration file lock.
func (s *Store) init(ctx context.Context) error {
	mode, err := s.journalMode(ctx)
	if err != nil {
		return err
	}
	if current, err := appliedVersion(ctx, s.w); err == nil && current == latestVersion(sqliteDialect) && mode == "wal" {
		return nil // the common case: already migrated, no lock, no provider
	}
	unlock, err := flock.Lock(s.path+".migrate.lock", true)
	if err != nil {
		return fmt.Errorf("open store %s: %w", s.path, err)
	}
	defer unlock()
	if mode != "wal" {
		if err := s.w.GetContext(ctx, &mode, "PRAGMA journal_mode = WAL"); err != nil {
			return describeOpenError(s.path, err)
		}
		if mode = strings.ToLower(mode); mode != "wal" {
			return fmt.Errorf("open store %s: journal_mode is %q, not wal (is the directory on a filesystem without shared memory?)", s.path, mode)
		}
	}
	if err := migrate(ctx, s.w, s.path); err != nil {
		return err
	}
	return forgetStatements(ctx, s.w)
}

// forgetStatements finalises the statements the writer's connection keeps
// prepared: after a migration, those are its DDL, never run again, which
// would otherwise hold the places of the store's own (maxCachedStmts).
func forgetStatements(ctx context.Context, db *sqlx.DB) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return conn.Raw(func(dc any) error {
		if c, ok := dc.(*stmtConn); ok {
			return c.closeStmts()
		}
		return nil
	})
}

// journalMode returns the file's journal mode, in lower case.
func (s *Store) journalMode(ctx context.Context) (string, error) {
	var mode string
	if err := s.w.GetContext(ctx, &mode, "PRAGMA journal_mode"); err != nil {
		return "", describeOpenError(s.path, err)
	}
	return strings.ToLower(mode), nil
}

// appliedVersion reads the newest applied migration from goose's table; an
// error means the table is not there yet.
func appliedVersion(ctx context.Context, db *sqlx.DB) (int64, error) {
	var v int64
	err := db.GetContext(ctx, &v, `SELECT COALESCE(MAX(version_id), 0) FROM goose_db_version WHERE is_applied`)
	return v, err
}

// latestVersion is the number of the newest migration of the dialect,
// embedded SQL or Go.
func latestVersion(d dialect) int64 {
	fsys, pattern := fs.FS(migrations.FS), "*.sql"
	if d.postgres {
		fsys, pattern = migrations.PostgresFS, "postgres/*.sql"
	}
	entries, err := fs.Glob(fsys, pattern)
	if err != nil {
		return -1
	}
	var latest int64 = -1
	for _, e := range entries {
		n, err := strconv.ParseInt(strings.SplitN(path.Base(e), "_", 2)[0], 10, 64)
		if err == nil && n > latest {
			latest = n
		}
	}
	if !d.postgres {
		for _, v := range migrations.GoVersions {
			latest = max(latest, v)
		}
	}
	return latest
}

// Close closes the database connections.
func (s *Store) Close() error {
	if s.notices != nil {
		s.notices.close()
	}
	if s.ckpt != nil {
		s.ckpt.close()
	}
	if s.readOnly || s.r == s.w {
		return s.r.Close()
	}
	return errors.Join(s.w.Close(), s.r.Close())
}

// Path is the absolute path of the database file (on PostgreSQL, the
// home's database path given in Options.Path, where no file is kept).
func (s *Store) Path() string { return s.path }

// Backend names the store's database engine for messages: "SQLite" or
// "PostgreSQL".
func (s *Store) Backend() string { return s.d.name() }

// DSN is the PostgreSQL DSN the store was opened with ("" on SQLite). It
// may hold a password: hand it on only through a private channel (a
// detached supervisor's spec pipe), never in argv, the environment or a
// message.
func (s *Store) DSN() string { return s.dsn }

// Host is the host name this store writes into job rows and reconciles.
func (s *Store) Host() string { return s.host }

// Now is the store's clock.
func (s *Store) Now() time.Time { return s.now() }

// SchemaCurrent says whether the SQLite file at path is at this build's
// schema version and in write-ahead-log mode, as a full open leaves it,
// from its header alone (user_version, which migrations keep equal to the
// schema's version: see 00019_user_version.sql; the file format versions,
// 2 in WAL mode): no SQLite, no lock, a read of 100 bytes. False for a
// file that is missing, unreadable, not SQLite, at another version, or
// taken out of WAL mode (by hand: no bgcmd does); the caller then opens
// the store as usual, which migrates it, puts it back in WAL mode, or says
// why not.
//
// The header is the file's, not the write-ahead log's: a migration whose
// first page is still in the log is not seen until a checkpoint copies it.
// Seen too old, the store is only opened the usual way; a newer bgcmd's
// migration seen as this version is refused by the first full open, as
// any newer schema is.
func SchemaCurrent(path string) bool {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return false
	}
	defer syscall.Close(fd)
	var h [100]byte
	if n, err := syscall.Pread(fd, h[:], 0); err != nil || n < len(h) {
		return false
	}
	if string(h[:16]) != "SQLite format 3\x00" || h[18] != 2 || h[19] != 2 {
		return false
	}
	return int64(binary.BigEndian.Uint32(h[60:64])) == latestVersion(sqliteDialect)
}

// Connected says whether the store has opened a connection to its
// database: a Deferred store has none until its first statement.
func (s *Store) Connected() bool { return s.w.Stats().OpenConnections > 0 }
