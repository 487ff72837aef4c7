package jobstore

import (
	"context"
	"fmt"

	"github.com/jmoiron/sqlx"
)

// rollOut takes the jobs named by ids, which the caller is about to delete
// in tx, out of the job_hours roll-up with one update per hour, outcome and
// executable, and
// sets job_hours_bulk so that the delete trigger, which would update and
// delete a roll-up row per job, leaves the roll-up alone. The caller
// deletes the jobs and then calls endRollOut in the same transaction.
//
// The update is the trigger's, summed: a row loses the batch's jobs, runs
// and run time, its maximum turns stale when a removed run was as long as
// it, and a row left with no run loses its sum and maximum (and is no
// longer stale), as it does after the trigger's last removal. Rows left
// with no job are deleted.
func rollOut(ctx context.Context, tx wtx, ids []string) error {
	if _, err := tx.ExecContext(ctx, `INSERT INTO job_hours_bulk (id) VALUES (1)`); err != nil {
		return fmt.Errorf("roll out of job_hours: %w", err)
	}
	q, args, err := sqlx.In(`UPDATE job_hours SET jobs = jobs - g.n, ran = ran - g.runs,
		ms_sum = CASE WHEN g.runs = 0 THEN ms_sum WHEN ran = g.runs THEN 0 ELSE ms_sum - g.run_ms END,
		ms_max = CASE WHEN g.runs = 0 THEN ms_max WHEN ran = g.runs THEN NULL ELSE ms_max END,
		max_stale = CASE WHEN g.runs = 0 THEN max_stale WHEN ran = g.runs THEN 0
			WHEN g.longest >= ms_max THEN 1 ELSE max_stale END
		FROM (SELECT hour, outcome, exe, COUNT(*) AS n, COUNT(ms) AS runs, TOTAL(ms) AS run_ms, MAX(ms) AS longest
			FROM (SELECT substr(created_at, 1, 13) AS hour, `+outcomeSQL+` AS outcome, exe,
				CASE WHEN started_at IS NOT NULL AND finished_at IS NOT NULL
				THEN `+sqliteDialect.msBetween("started_at", "finished_at")+` END AS ms
				FROM jobs WHERE id IN (?)) AS r
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
	return nil
}

// endRollOut clears job_hours_bulk, so that the deletes after it, in this
// transaction or any other, keep the roll-up through the trigger again.
func endRollOut(ctx context.Context, tx wtx) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM job_hours_bulk`); err != nil {
		return fmt.Errorf("roll out of job_hours: %w", err)
	}
	return nil
}
