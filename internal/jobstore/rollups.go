package jobstore

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/jmoiron/sqlx"

	"github.com/bgcmd/bgcmd"
)

// SQLite keeps two roll-ups of jobs: job_hours (the web view's charts, a
// row per hour of creation, outcome and executable) and session_counters
// (each session's running, finished-unread and queued jobs, which every
// result carries). The store keeps both exact in the transaction of each
// of its writes to jobs: every write that inserts or deletes a row, or
// changes a column they key or count, calls the functions below (see
// docs/schema.md). Triggers kept them until migration 00020: each
// process that opened the store parsed their 8 KB of SQL and compiled
// them into each insert and update of jobs it ran, a third of the
// statement compiling a short-lived process does (a `bgcmd run`'s
// supervisor). PostgreSQL keeps neither (dialect.hasRollup).

// rolled is what the roll-ups key and count of one jobs row, as stored.
type rolled struct {
	Session    string         `db:"session"`
	Exe        string         `db:"exe"`
	CreatedAt  string         `db:"created_at"`
	State      string         `db:"state"`
	ExitCode   sql.NullInt64  `db:"exit_code"`
	StartedAt  sql.NullString `db:"started_at"`
	FinishedAt sql.NullString `db:"finished_at"`
	SeenAt     sql.NullString `db:"seen_at"`
}

// rolledColumns are rolled's columns, for a RETURNING clause.
const rolledColumns = `session, exe, created_at, state, exit_code, started_at, finished_at, seen_at`

// rolledOf is what the roll-ups count of a row read whole.
func rolledOf(r *jobRow) *rolled {
	return &rolled{Session: r.Session, Exe: r.Exe, CreatedAt: r.CreatedAt, State: r.State,
		ExitCode: r.ExitCode, StartedAt: r.StartedAt, FinishedAt: r.FinishedAt, SeenAt: r.SeenAt}
}

// before is the row as it was before a transition from state that wrote
// only its state and, when finished, finished_at and exit_code: a job
// that has not settled has neither (only a settle writes them).
func (r *rolled) before(state bgcmd.State, finished bool) *rolled {
	b := *r
	b.State = string(state)
	if finished {
		b.FinishedAt, b.ExitCode = sql.NullString{}, sql.NullInt64{}
	}
	return &b
}

// key is the row's job_hours key: its hour, outcome and executable.
func (r *rolled) key() [3]string {
	var exit *int
	if r.ExitCode.Valid {
		code := int(r.ExitCode.Int64)
		exit = &code
	}
	return [3]string{hourOf(r.CreatedAt), string(outcomeOf(bgcmd.State(r.State), exit)), r.Exe}
}

// hourOf is job_hours.hour of a stored time: its first 13 characters.
func hourOf(stored string) string {
	if len(stored) < 13 {
		return stored
	}
	return stored[:13]
}

// counts are the row's place in its session's counters.
func (r *rolled) counts() (running, finished, queued int) {
	switch bgcmd.State(r.State) {
	case bgcmd.StateRunning:
		return 1, 0, 0
	case bgcmd.StateQueued:
		return 0, 0, 1
	}
	if !r.SeenAt.Valid {
		return 0, 1, 0
	}
	return 0, 0, 0
}

// runMSSQL is a row's run time from its started_at (?4) and finished_at
// (?5), as the charts read it from jobs: NULL unless it started and
// finished.
var runMSSQL = sqliteDialect.msBetween("?4", "?5")

// The statements that keep the roll-ups of one row (its hour, outcome and
// executable are ?1, ?2 and ?3).
var (
	// rollInSQL adds a row (hour, outcome, exe, started_at, finished_at)
	// to job_hours.
	rollInSQL = `INSERT INTO job_hours (hour, outcome, exe, jobs, ran, ms_sum, ms_max)
	SELECT ?1, ?2, ?3, 1, m.ms IS NOT NULL, COALESCE(m.ms, 0), m.ms
	FROM (SELECT ` + runMSSQL + ` AS ms) AS m WHERE true
	ON CONFLICT (hour, outcome, exe) DO UPDATE SET jobs = job_hours.jobs + 1,
		ran = job_hours.ran + excluded.ran, ms_sum = job_hours.ms_sum + excluded.ms_sum,
		ms_max = CASE WHEN excluded.ms_max IS NULL THEN job_hours.ms_max
			WHEN job_hours.ms_max IS NULL OR excluded.ms_max > job_hours.ms_max THEN excluded.ms_max
			ELSE job_hours.ms_max END`
	// rollOutSQL takes a row out of job_hours: removing the longest run
	// of an hour cannot lower ms_max without a scan, so it sets
	// max_stale, and a reader takes that hour's maximum from jobs.
	rollOutSQL = `UPDATE job_hours SET jobs = jobs - 1,
		ran = ran - (m.ms IS NOT NULL),
		ms_sum = CASE WHEN m.ms IS NULL THEN ms_sum WHEN ran = 1 THEN 0 ELSE ms_sum - m.ms END,
		ms_max = CASE WHEN m.ms IS NULL THEN ms_max WHEN ran = 1 THEN NULL ELSE ms_max END,
		max_stale = CASE WHEN m.ms IS NULL THEN max_stale WHEN ran = 1 THEN 0
			WHEN m.ms >= ms_max THEN 1 ELSE max_stale END
	FROM (SELECT ` + runMSSQL + ` AS ms) AS m
	WHERE hour = ?1 AND outcome = ?2 AND exe = ?3`
)

const (
	// dropEmptyHourSQL deletes a job_hours row left with no job.
	dropEmptyHourSQL = `DELETE FROM job_hours WHERE hour = ? AND outcome = ? AND exe = ? AND jobs <= 0`
	// countSQL adds to a session's counters.
	countSQL = `INSERT INTO session_counters (session, running, finished, queued) VALUES (?, ?, ?, ?)
	ON CONFLICT (session) DO UPDATE SET running = running + excluded.running,
		finished = finished + excluded.finished, queued = queued + excluded.queued`
)

// keepRollups keeps the roll-ups, in tx, for one jobs row written from
// from to to: from is nil for an insert, else the same job's row before
// (bgcmd never moves a job to another session; a prune's deletes are
// rollOutMany's). On PostgreSQL it does nothing.
func keepRollups(ctx context.Context, tx wtx, from, to *rolled) error {
	if tx.DriverName() != "sqlite" {
		return nil
	}
	if err := keepHours(ctx, tx, from, to); err != nil {
		return fmt.Errorf("keep job_hours: %w", err)
	}
	if err := keepCounts(ctx, tx, from, to); err != nil {
		return fmt.Errorf("keep session_counters: %w", err)
	}
	return nil
}

// keepHours moves the row to its new job_hours row, when its key or run
// time changed.
func keepHours(ctx context.Context, tx wtx, from, to *rolled) error {
	k := to.key()
	if from != nil {
		fk := from.key()
		if fk == k && from.StartedAt == to.StartedAt && from.FinishedAt == to.FinishedAt {
			return nil
		}
		if _, err := tx.ExecContext(ctx, rollOutSQL, fk[0], fk[1], fk[2], from.StartedAt, from.FinishedAt); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, dropEmptyHourSQL, fk[0], fk[1], fk[2]); err != nil {
			return err
		}
	}
	_, err := tx.ExecContext(ctx, rollInSQL, k[0], k[1], k[2], to.StartedAt, to.FinishedAt)
	return err
}

// keepCounts moves the row's counts. An insert always leaves its session
// a row; a write that moves no count writes nothing.
func keepCounts(ctx context.Context, tx wtx, from, to *rolled) error {
	r, f, q := to.counts()
	if from != nil {
		r0, f0, q0 := from.counts()
		if r, f, q = r-r0, f-f0, q-q0; r == 0 && f == 0 && q == 0 {
			return nil
		}
	}
	_, err := tx.ExecContext(ctx, countSQL, to.Session, r, f, q)
	return err
}

// rollOutMany takes the jobs named by ids, which the caller is about to
// delete in tx (a prune's batch), out of both roll-ups: one update per
// hour, outcome and executable, and one per session, where a row at a
// time would cost a few statements per job.
//
// The job_hours update is rollOutSQL summed: a row loses the batch's
// jobs, runs and run time, its maximum turns stale when a removed run was
// as long as it, and a row left with no run loses its sum and maximum
// (and is no longer stale). Rows left with no job are deleted.
func rollOutMany(ctx context.Context, tx wtx, ids []string) error {
	q, args, err := sqlx.In(`UPDATE job_hours SET jobs = jobs - g.n, ran = ran - g.runs,
		ms_sum = CASE WHEN g.runs = 0 THEN ms_sum WHEN ran = g.runs THEN 0 ELSE ms_sum - g.run_ms END,
		ms_max = CASE WHEN g.runs = 0 THEN ms_max WHEN ran = g.runs THEN NULL ELSE ms_max END,
		max_stale = CASE WHEN g.runs = 0 THEN max_stale WHEN ran = g.runs THEN 0
			WHEN g.longest >= ms_max THEN 1 ELSE max_stale END
		FROM (SELECT hour, outcome, exe, COUNT(*) AS n, COUNT(ms) AS runs, TOTAL(ms) AS run_ms, MAX(ms) AS longest
			FROM (`+hoursOfJobsSQL+` WHERE id IN (?)) AS r
			GROUP BY hour, outcome, exe) AS g
		WHERE job_hours.hour = g.hour AND job_hours.outcome = g.outcome AND job_hours.exe = g.exe`, ids)
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, q, args...); err != nil {
		return fmt.Errorf("roll out of job_hours: %w", err)
	}
	if q, args, err = sqlx.In(`DELETE FROM job_hours WHERE jobs <= 0
		AND hour IN (SELECT DISTINCT substr(created_at, 1, 13) FROM jobs WHERE id IN (?))`, ids); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, q, args...); err != nil {
		return fmt.Errorf("roll out of job_hours: %w", err)
	}
	if q, args, err = sqlx.In(`UPDATE session_counters SET running = session_counters.running - g.running,
		finished = session_counters.finished - g.finished, queued = session_counters.queued - g.queued
		FROM (`+countsOfJobsSQL+` WHERE id IN (?) AND (state IN ('running', 'queued') OR seen_at IS NULL)
			GROUP BY session) AS g
		WHERE session_counters.session = g.session`, ids); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, q, args...); err != nil {
		return fmt.Errorf("count out of session_counters: %w", err)
	}
	return nil
}

// hoursOfJobsSQL reads each job's job_hours key and run time (a WHERE
// clause follows).
var hoursOfJobsSQL = `SELECT substr(created_at, 1, 13) AS hour, ` + outcomeSQL + ` AS outcome, exe,
	CASE WHEN started_at IS NOT NULL AND finished_at IS NOT NULL
	THEN ` + sqliteDialect.msBetween("started_at", "finished_at") + ` END AS ms FROM jobs`

// countsOfJobsSQL sums jobs into session counters (a WHERE clause and a
// GROUP BY session follow).
const countsOfJobsSQL = `SELECT session, SUM(state = 'running') AS running,
	SUM(state NOT IN ('running', 'queued') AND seen_at IS NULL) AS finished,
	SUM(state = 'queued') AS queued FROM jobs`

// Recount rebuilds both roll-ups from jobs in one write transaction, as a
// full scan gives them. bgcmd's own writes keep them exact; a write to
// the jobs table by anything else (a row deleted or changed by hand) does
// not, and `bgcmd reconcile --recount` calls this afterwards. On
// PostgreSQL, which keeps no roll-up, it does nothing.
func (s *Store) Recount(ctx context.Context) error {
	if !s.d.hasRollup() {
		return nil
	}
	err := s.inTx(ctx, func(tx wtx) error {
		for _, q := range []string{
			`DELETE FROM job_hours`,
			`INSERT INTO job_hours (hour, outcome, exe, jobs, ran, ms_sum, ms_max)
			SELECT hour, outcome, exe, COUNT(*), COUNT(ms), TOTAL(ms), MAX(ms)
			FROM (` + hoursOfJobsSQL + `) AS r GROUP BY hour, outcome, exe`,
			`DELETE FROM session_counters`,
			`INSERT INTO session_counters (session, running, finished, queued)
			` + countsOfJobsSQL + ` GROUP BY session`,
		} {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("recount the roll-ups: %w", describeWriteError(err))
	}
	return nil
}
