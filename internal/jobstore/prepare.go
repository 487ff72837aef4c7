package jobstore

import (
	"context"
	"database/sql"
	"fmt"
)

// Writes names write transactions whose statements Prepare readies.
type Writes uint8

const (
	// CreateWrites is Create: the job's row, its first event and that
	// event's link in the chain.
	CreateWrites Writes = 1 << iota
	// SettleWrites is Settle: the terminal transition, the artifacts, the
	// event and its link in the chain.
	SettleWrites
	// BeginCreateWrites is BeginCreate and its Commit: Create's
	// statements and the one that records the started child.
	BeginCreateWrites
)

// statements are the texts each write runs in its transaction, as the
// code that runs them spells them (the cache is keyed by the text).
func (w Writes) statements() []string {
	chain := []string{nextEventSQL, insertChainedEventSQL, advanceHeadSQL}
	var qs []string
	if w&(CreateWrites|BeginCreateWrites) != 0 {
		qs = append(qs, insertJobSQL)
	}
	if w&BeginCreateWrites != 0 {
		qs = append(qs, markStartedSQL)
	}
	if w&SettleWrites != 0 {
		qs = append(qs, settleJobSQL, insertArtifactSQL, rollOutSQL, dropEmptyHourSQL)
	}
	if w != 0 {
		qs = append(qs, rollInSQL, countSQL) // every write keeps the roll-ups
		qs = append(qs, chain...)
		qs = append(qs, beginSQL, commitSQL) // on SQLite, statements too (sqliteTx)
	}
	return qs
}

// Prepare readies the statements of the writes w on the writer's
// connection, outside any transaction, so that those transactions later
// only run them.
//
// A process's first write otherwise compiles each of its statements inside
// the transaction, and holds the store's write lock meanwhile: every other
// process sharing the file waits on that lock, and SQLite's busy handler
// sleeps 1, 2, 5 ms and more between tries. A process that knows which write comes next calls
// Prepare while it waits for something else: a detached supervisor while
// its job runs (or while it waits for a job, as a spare), the CLI while
// its supervisor starts.
//
// On PostgreSQL and on a read-only store it does nothing. A statement that
// does not prepare (a store migrated by a newer bgcmd, say) is an error,
// and the write that runs it fails the same way.
func (s *Store) Prepare(ctx context.Context, w Writes) error {
	if s.d.postgres || s.readOnly {
		return nil
	}
	conn, err := s.w.Conn(ctx)
	if err != nil {
		return fmt.Errorf("prepare writes: %w", err)
	}
	defer conn.Close()
	return prepareOn(ctx, conn, w.statements())
}

// prepareOn readies the statements qs on conn, the writer's connection.
func prepareOn(ctx context.Context, conn *sql.Conn, qs []string) error {
	return conn.Raw(func(dc any) error {
		sc, ok := dc.(*stmtConn)
		if !ok {
			return nil
		}
		for _, q := range qs {
			if _, err := sc.stmt(ctx, q); err != nil {
				return fmt.Errorf("prepare writes: %w", err)
			}
		}
		return nil
	})
}
