package jobstore

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/jmoiron/sqlx"
)

// checkpointEvery is how many write transactions of a store's writer
// go by between two of its checkpoints (see checkpointer): about 17 pages
// each for a job's create or settle, so about 1,100 pages, as often as
// SQLite's own default wal_autocheckpoint (1,000). A checkpoint holds the
// writer while it copies the log and fsyncs the log and the database, and
// every write of the host waits behind it: every 16 (272 pages), four
// concurrent starters ran about 14% slower in an interleaved comparison.
// What it costs: with synchronous=NORMAL a commit is fsynced by the next
// checkpoint, so a power loss (not a crash of the process) may take back
// the commits since the last one, up to this many, as long as the
// kernel's writeback has not written them.
const checkpointEvery = 64

// checkpointer takes a long-lived SQLite writer's checkpoints off its
// commits. A commit that crosses wal_autocheckpoint pages copies the
// log's pages into the database and fsyncs both before it returns to its
// caller. With the writer's wal_autocheckpoint at 0 the store instead
// counts its commits and, every checkpointEvery, has a goroutine run a
// passive checkpoint on the writer's connection once the commit has
// returned: the caller goes on (a job's start returns, its child runs),
// and only a write that comes before the checkpoint ends waits for it.
//
// On the writer's connection, not a reader's: between two writes of this
// process nothing appends to the log, so the checkpoint copies all of it
// and the next write starts the log again from its beginning. Run beside
// a stream of writes it would never catch up, and the log would grow
// without bound.
//
// Only a store with its own read pool has one (not ReadOnly, not
// PostgreSQL, not OneConnection: that is a detached supervisor's, whose
// one or few settles would seldom reach checkpointEvery, and whose writer
// keeps checkpointing in its commits). A short-lived process seldom
// reaches checkpointEvery commits either; its writes wait for the next
// checkpoint of any process sharing the store (a supervisor's settle, a
// long-lived host), or for the last connection to close, which copies the
// log and empties it (journal_size_limit, see openDB).
type checkpointer struct {
	db      *sqlx.DB
	commits atomic.Int64
	// paused counts the series of bulk writes in progress (bulkWrites),
	// which checkpoint on their own terms: no checkpoint is asked for
	// meanwhile.
	paused   atomic.Int32
	kick     chan struct{}
	stop     chan struct{}
	stopOnce sync.Once
	done     sync.WaitGroup
}

// newCheckpointer starts the goroutine that checkpoints through db, the
// writer.
func newCheckpointer(db *sqlx.DB) *checkpointer {
	c := &checkpointer{db: db, kick: make(chan struct{}, 1), stop: make(chan struct{})}
	c.done.Add(1)
	go c.run()
	return c
}

// committed counts one write transaction of the writer, and asks for a
// checkpoint every checkpointEvery of them without waiting for it.
func (c *checkpointer) committed() {
	if c.commits.Add(1)%checkpointEvery != 0 || c.paused.Load() > 0 {
		return
	}
	select {
	case c.kick <- struct{}{}:
	default: // one is asked for already
	}
}

func (c *checkpointer) run() {
	defer c.done.Done()
	for {
		select {
		case <-c.stop:
			return
		case <-c.kick:
			// Best effort: a checkpoint that cannot run now (the disk is
			// full, say) is tried again after the next checkpointEvery
			// commits, and the log keeps every commit meanwhile.
			_, _ = c.db.ExecContext(context.Background(), "PRAGMA wal_checkpoint(PASSIVE)")
		}
	}
}

// pause stops asking for checkpoints until the returned func is called.
func (c *checkpointer) pause() (resume func()) {
	c.paused.Add(1)
	return func() { c.paused.Add(-1) }
}

// close stops the goroutine, after the checkpoint it is running if any.
// Closing again does nothing.
func (c *checkpointer) close() {
	c.stopOnce.Do(func() { close(c.stop) })
	c.done.Wait()
}
