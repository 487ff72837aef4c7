package jobstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/jmoiron/sqlx"

	"github.com/bgcmd/bgcmd"
)

// Counters returns the session's running jobs, its finished (settled,
// unread) jobs and its queued jobs, on every host sharing the store: a
// session may span hosts, and its counters are the session's, not the
// machine's. On SQLite they are one row of session_counters, which the
// store's writes keep (keepRollups); on PostgreSQL they are counted from
// jobs' partial indexes, a step for every job counted (see that backend's
// migration 00016 for why it keeps no such table).
func (s *Store) Counters(ctx context.Context, session string) (bgcmd.Counters, error) {
	return s.countersIn(ctx, s.r, session)
}

// countersIn reads the session's counters through q: the reader, or a
// write transaction that has just changed them.
func (s *Store) countersIn(ctx context.Context, q sqlx.QueryerContext, session string) (bgcmd.Counters, error) {
	var c bgcmd.Counters
	var err error
	if s.d.postgres {
		err = q.QueryRowxContext(ctx, countedCountersSQL, session, session, session).
			Scan(&c.Running, &c.Finished, &c.Queued)
	} else {
		err = q.QueryRowxContext(ctx, `SELECT running, finished, queued FROM session_counters
		WHERE session = ?`, session).Scan(&c.Running, &c.Finished, &c.Queued)
		if errors.Is(err, sql.ErrNoRows) {
			return bgcmd.Counters{}, nil // no job of the session yet
		}
	}
	if err != nil {
		return c, fmt.Errorf("counters: %w", err)
	}
	return c, nil
}

// countedCountersSQL counts a session's counters (its name three times)
// from jobs on the partial indexes: PostgreSQL's Counters, and SQLite's
// before session_counters.
const countedCountersSQL = `SELECT
	(SELECT COUNT(*) FROM jobs WHERE session = ? AND state = 'running'),
	(SELECT COUNT(*) FROM jobs WHERE session = ? AND state NOT IN ('running', 'queued') AND seen_at IS NULL),
	(SELECT COUNT(*) FROM jobs WHERE session = ? AND state = 'queued')`
