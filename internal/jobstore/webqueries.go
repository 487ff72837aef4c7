package jobstore

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/bgcmd/bgcmd"
)

// FilterParams are ListParams plus the filters of the web view.
type FilterParams struct {
	ListParams
	// LabelKey keeps jobs carrying this label; with LabelValue set, only
	// those whose label has exactly that value.
	LabelKey, LabelValue string
}

// Filter is List with a label filter: jobs matching p, newest first, one
// keyset page at a time (the cursor is the last id of the page). Every
// filter is a bound parameter.
func (s *Store) Filter(ctx context.Context, p FilterParams) (*ListResult, error) {
	limit := p.Limit
	switch {
	case limit == 0:
		limit = 50
	case limit < 0 || limit > MaxListLimit:
		return nil, fmt.Errorf("filter jobs: limit %d out of range 1..%d", limit, MaxListLimit)
	}
	where, args, err := listWhere(p.ListParams)
	if err != nil {
		return nil, fmt.Errorf("filter jobs: %w", err)
	}
	if p.LabelKey != "" {
		args = append(args, p.LabelKey)
		if p.LabelValue != "" {
			args = append(args, p.LabelValue)
		}
		where = append(where, s.d.labelExists(p.LabelValue != ""))
	}
	res, err := s.selectJobs(ctx, where, args, limit)
	if err != nil {
		return nil, fmt.Errorf("filter jobs: %w", err)
	}
	return res, nil
}

// listWhere turns p's filters (not its limit) into SQL conditions and their
// arguments.
func listWhere(p ListParams) ([]string, []any, error) {
	var where []string
	var args []any
	if len(p.States) > 0 {
		for _, st := range p.States {
			if !st.Valid() {
				return nil, nil, fmt.Errorf("unknown state %q (one of %s)", st, stateNames())
			}
		}
		where = append(where, "state IN (?)")
		args = append(args, p.States)
	}
	if p.Session != "" {
		where = append(where, "session = ?")
		args = append(args, p.Session)
	}
	if !p.Since.IsZero() {
		where = append(where, "created_at >= ?")
		args = append(args, fmtTime(p.Since))
	}
	if !p.Until.IsZero() {
		where = append(where, "created_at < ?")
		args = append(args, fmtTime(p.Until))
	}
	if p.Exe != "" {
		where = append(where, "exe = ?")
		args = append(args, p.Exe)
	}
	if p.Unread {
		where = append(where, "state NOT IN ('running', 'queued') AND seen_at IS NULL")
	}
	if p.Host != "" {
		where = append(where, "(host_id = ? OR host = ?)")
		args = append(args, p.Host, p.Host)
	}
	if p.Before != "" {
		where = append(where, "id < ?")
		args = append(args, p.Before)
	}
	return where, args, nil
}

// Outcome is how a job ended, coarser than its state, for charts: "ok"
// (exited 0), "failed" (exited non-zero or by a signal), "timeout",
// "killed", "other" (output_limit, start_failed, orphaned, dependency_failed) or "running" (queued too).
type Outcome string

// The outcomes, in the order charts stack them.
const (
	OutcomeOK      Outcome = "ok"
	OutcomeFailed  Outcome = "failed"
	OutcomeTimeout Outcome = "timeout"
	OutcomeKilled  Outcome = "killed"
	OutcomeOther   Outcome = "other"
	OutcomeRunning Outcome = "running"
)

// Outcomes lists every outcome in stacking order.
var Outcomes = []Outcome{OutcomeOK, OutcomeFailed, OutcomeTimeout, OutcomeKilled, OutcomeOther, OutcomeRunning}

// outcomeSQL computes a jobs row's Outcome.
const outcomeSQL = `CASE
	WHEN state IN ('running', 'queued') THEN 'running'
	WHEN state = 'exited' AND exit_code = 0 THEN 'ok'
	WHEN state = 'exited' THEN 'failed'
	WHEN state IN ('timeout', 'killed') THEN state
	ELSE 'other' END`

// HourCount is how many jobs created in one hour ended with one outcome.
type HourCount struct {
	// Hour is the start of the hour, UTC.
	Hour    time.Time
	Outcome Outcome
	Jobs    int
}

// JobsPerHour counts the jobs created in [since, until) per hour and
// outcome, oldest hour first. Hours without jobs are absent. It reads the
// created_at index range, so it costs the jobs in the window.
func (s *Store) JobsPerHour(ctx context.Context, since, until time.Time) ([]HourCount, error) {
	rows, err := s.r.QueryxContext(ctx, `SELECT substr(created_at, 1, 13) AS hour, `+outcomeSQL+` AS outcome,
		COUNT(*) FROM jobs INDEXED BY jobs_created_at WHERE created_at >= ? AND created_at < ?
		GROUP BY hour, outcome ORDER BY hour, outcome`, fmtTime(since), fmtTime(until))
	if err != nil {
		return nil, fmt.Errorf("jobs per hour: %w", err)
	}
	defer rows.Close()
	var out []HourCount
	for rows.Next() {
		var hour, outcome string
		var n int
		if err := rows.Scan(&hour, &outcome, &n); err != nil {
			return nil, fmt.Errorf("jobs per hour: %w", err)
		}
		t, err := time.Parse("2006-01-02T15", hour)
		if err != nil {
			return nil, fmt.Errorf("jobs per hour: parse hour %q: %w", hour, err)
		}
		out = append(out, HourCount{Hour: t, Outcome: Outcome(outcome), Jobs: n})
	}
	return out, rows.Err()
}

// ExeDuration is the run time of one executable's settled jobs.
type ExeDuration struct {
	Exe  string
	Jobs int
	// Mean and Max are over the jobs that started.
	Mean, Max time.Duration
}

// DurationByExe returns, for the jobs created in [since, until) that
// started and settled, each executable's job count and its mean and
// longest run time, the slowest mean first, at most limit executables
// (0 means 10).
func (s *Store) DurationByExe(ctx context.Context, since, until time.Time, limit int) ([]ExeDuration, error) {
	if limit <= 0 {
		limit = 10
	}
	rows, err := s.r.QueryxContext(ctx, `SELECT exe, COUNT(*),
		AVG(`+s.d.msBetween("started_at", "finished_at")+`),
		MAX(`+s.d.msBetween("started_at", "finished_at")+`)
		FROM jobs INDEXED BY jobs_created_at
		WHERE created_at >= ? AND created_at < ? AND started_at IS NOT NULL AND finished_at IS NOT NULL
		GROUP BY exe ORDER BY 3 DESC, exe LIMIT ?`, fmtTime(since), fmtTime(until), limit)
	if err != nil {
		return nil, fmt.Errorf("duration by executable: %w", err)
	}
	defer rows.Close()
	var out []ExeDuration
	for rows.Next() {
		var d ExeDuration
		var mean, maxMS float64
		if err := rows.Scan(&d.Exe, &d.Jobs, &mean, &maxMS); err != nil {
			return nil, fmt.Errorf("duration by executable: %w", err)
		}
		d.Mean = time.Duration(mean * float64(time.Millisecond))
		d.Max = time.Duration(maxMS * float64(time.Millisecond))
		out = append(out, d)
	}
	return out, rows.Err()
}

// Overview is what the top of the web view counts, over every session and
// host: jobs running, settled jobs nobody has read, and refusals since a
// given time. Each is an index lookup.
type Overview struct {
	Running  int
	Unread   int
	Refusals int
}

// Overview counts running and unread jobs across all sessions and the
// refusals recorded at or after since. On SQLite the jobs are summed over
// session_counters, a row a session; on PostgreSQL they are counted from
// jobs' partial indexes.
func (s *Store) Overview(ctx context.Context, since time.Time) (Overview, error) {
	var o Overview
	counts := `(SELECT COALESCE(SUM(running), 0) FROM session_counters),
		(SELECT COALESCE(SUM(finished), 0) FROM session_counters)`
	if s.d.postgres {
		counts = `(SELECT COUNT(*) FROM jobs WHERE state = 'running'),
		(SELECT COUNT(*) FROM jobs WHERE state NOT IN ('running', 'queued') AND seen_at IS NULL)`
	}
	err := s.r.QueryRowxContext(ctx, `SELECT `+counts+`,
		(SELECT COUNT(*) FROM refusals WHERE at >= ?)`, fmtTime(since)).
		Scan(&o.Running, &o.Unread, &o.Refusals)
	if err != nil {
		return o, fmt.Errorf("overview counters: %w", err)
	}
	return o, nil
}

// OutcomeOf returns the job's Outcome, the one JobsPerHour counts it under
// (outcomeSQL in Go, for a job already in hand).
func OutcomeOf(j *bgcmd.Job) Outcome { return outcomeOf(j.State, j.ExitCode) }

// outcomeOf is the Outcome of a job in state that exited with exit (nil
// when it has no exit code).
func outcomeOf(state bgcmd.State, exit *int) Outcome {
	switch {
	case state == bgcmd.StateRunning || state == bgcmd.StateQueued:
		return OutcomeRunning
	case state == bgcmd.StateExited && exit != nil && *exit == 0:
		return OutcomeOK
	case state == bgcmd.StateExited:
		return OutcomeFailed
	case state == bgcmd.StateTimeout:
		return OutcomeTimeout
	case state == bgcmd.StateKilled:
		return OutcomeKilled
	}
	return OutcomeOther
}

// OutcomeCount is how many jobs ended with one outcome.
type OutcomeCount struct {
	Outcome Outcome
	Jobs    int
}

// RecentOutcomes counts the outcomes of the newest n jobs (0 means 1000),
// in Outcomes order, leaving out outcomes with none. It reads n rows in id
// order, so its cost does not grow with the table or with how busy the
// last day was.
func (s *Store) RecentOutcomes(ctx context.Context, n int) ([]OutcomeCount, error) {
	if n <= 0 {
		n = 1000
	}
	rows, err := s.r.QueryxContext(ctx, `SELECT `+outcomeSQL+` AS outcome, COUNT(*) FROM
		(SELECT state, exit_code FROM jobs ORDER BY id DESC LIMIT ?) AS r GROUP BY outcome`, n)
	if err != nil {
		return nil, fmt.Errorf("recent outcomes: %w", err)
	}
	defer rows.Close()
	got := map[Outcome]int{}
	for rows.Next() {
		var o string
		var c int
		if err := rows.Scan(&o, &c); err != nil {
			return nil, fmt.Errorf("recent outcomes: %w", err)
		}
		got[Outcome(o)] = c
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("recent outcomes: %w", err)
	}
	var out []OutcomeCount
	for _, o := range Outcomes {
		if got[o] > 0 {
			out = append(out, OutcomeCount{o, got[o]})
		}
	}
	return out, nil
}

// ChartData is what the charts of one window show: jobs per hour and
// outcome, and run time by executable.
type ChartData struct {
	Hours []HourCount
	// Exes are the slowest executables by mean run time, at most the
	// limit asked for.
	Exes []ExeDuration
}

// Charts returns JobsPerHour and DurationByExe of [since, until), limiting
// the executables to limit (0 means 10). The whole hours of the window come
// from the hourly roll-up (job_hours, a row per hour, outcome and
// executable), the part hours at either end from the jobs themselves, so
// its cost is the window's hours, not its jobs. On PostgreSQL, which keeps
// no roll-up, everything comes from the jobs.
func (s *Store) Charts(ctx context.Context, since, until time.Time, limit int) (*ChartData, error) {
	if limit <= 0 {
		limit = 10
	}
	var c chartAcc
	from, to := since.UTC().Truncate(time.Hour), until.UTC().Truncate(time.Hour)
	if from.Before(since) {
		from = from.Add(time.Hour)
	}
	if !from.Before(to) || !s.d.hasRollup() {
		// No whole hour inside (or no roll-up, on PostgreSQL): the jobs
		// of the window, as they are.
		if err := c.scan(ctx, s, since, until); err != nil {
			return nil, err
		}
		return c.data(limit)
	}
	if err := c.scan(ctx, s, since, from); err != nil {
		return nil, err
	}
	if err := c.rollup(ctx, s, from, to); err != nil {
		return nil, err
	}
	if err := c.scan(ctx, s, to, until); err != nil {
		return nil, err
	}
	return c.data(limit)
}

// chartAcc adds up the rows of the chart queries: per hour, outcome and
// executable, the jobs, those that ran, their run time's sum and maximum.
type chartAcc struct {
	hours map[string]map[Outcome]int
	exes  map[string]*exeAcc
}

type exeAcc struct {
	ran      int
	sum, max float64
}

// scan adds the jobs created in [since, until), read from jobs (the
// created_at index range).
func (c *chartAcc) scan(ctx context.Context, s *Store, since, until time.Time) error {
	if !since.Before(until) {
		return nil
	}
	rows, err := s.r.QueryxContext(ctx, `SELECT substr(created_at, 1, 13) AS hour, `+outcomeSQL+` AS outcome, exe,
		COUNT(*), COUNT(ms), COALESCE(SUM(ms), 0), COALESCE(MAX(ms), 0) FROM (
			SELECT created_at, state, exit_code, exe,
				CASE WHEN started_at IS NOT NULL AND finished_at IS NOT NULL
				THEN `+s.d.msBetween("started_at", "finished_at")+` END AS ms
			FROM jobs INDEXED BY jobs_created_at WHERE created_at >= ? AND created_at < ?) AS w
		GROUP BY hour, outcome, exe`, fmtTime(since), fmtTime(until))
	if err != nil {
		return fmt.Errorf("charts: %w", err)
	}
	return c.add(rows)
}

// rollup adds the whole hours [from, to) from job_hours. An hour whose
// longest job was removed (max_stale) has its maximum taken from jobs.
func (c *chartAcc) rollup(ctx context.Context, s *Store, from, to time.Time) error {
	rows, err := s.r.QueryxContext(ctx, `SELECT h.hour, h.outcome, h.exe, h.jobs, h.ran, h.ms_sum,
		CASE WHEN h.max_stale = 0 THEN COALESCE(h.ms_max, 0) ELSE COALESCE((
			SELECT MAX((julianday(j.finished_at) - julianday(j.started_at)) * 86400000.0)
			FROM jobs j INDEXED BY jobs_created_at
			WHERE j.created_at >= h.hour AND j.created_at < h.hour || ';' AND j.exe = h.exe
			AND j.started_at IS NOT NULL AND j.finished_at IS NOT NULL
			AND `+outcomeOfSQL("j")+` = h.outcome), 0) END
		FROM job_hours h WHERE h.hour >= ? AND h.hour < ?`, from.Format(hourLayout), to.Format(hourLayout))
	if err != nil {
		return fmt.Errorf("charts: %w", err)
	}
	return c.add(rows)
}

// hourLayout is job_hours.hour: the first 13 characters of a stored time.
const hourLayout = "2006-01-02T15"

// outcomeOfSQL is outcomeSQL over the columns of the table aliased t.
func outcomeOfSQL(t string) string {
	return `CASE
	WHEN ` + t + `.state IN ('running', 'queued') THEN 'running'
	WHEN ` + t + `.state = 'exited' AND ` + t + `.exit_code = 0 THEN 'ok'
	WHEN ` + t + `.state = 'exited' THEN 'failed'
	WHEN ` + t + `.state IN ('timeout', 'killed') THEN ` + t + `.state
	ELSE 'other' END`
}

// add reads rows of (hour, outcome, exe, jobs, ran, ms sum, ms max).
func (c *chartAcc) add(rows *sqlx.Rows) error {
	defer rows.Close()
	if c.hours == nil {
		c.hours, c.exes = map[string]map[Outcome]int{}, map[string]*exeAcc{}
	}
	for rows.Next() {
		var hour, outcome, exe string
		var jobs, ran int
		var sum, maxMS float64
		if err := rows.Scan(&hour, &outcome, &exe, &jobs, &ran, &sum, &maxMS); err != nil {
			return fmt.Errorf("charts: %w", err)
		}
		if c.hours[hour] == nil {
			c.hours[hour] = map[Outcome]int{}
		}
		c.hours[hour][Outcome(outcome)] += jobs
		if ran > 0 {
			a := c.exes[exe]
			if a == nil {
				a = &exeAcc{max: maxMS}
				c.exes[exe] = a
			}
			a.ran += ran
			a.sum += sum
			a.max = max(a.max, maxMS)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("charts: %w", err)
	}
	return nil
}

// data is what was added up, as ChartData.
func (c *chartAcc) data(limit int) (*ChartData, error) {
	hours, exes := c.hours, c.exes
	d := &ChartData{}
	for hour, byOutcome := range hours {
		t, err := time.Parse(hourLayout, hour)
		if err != nil {
			return nil, fmt.Errorf("charts: parse hour %q: %w", hour, err)
		}
		for _, o := range Outcomes {
			if n := byOutcome[o]; n > 0 {
				d.Hours = append(d.Hours, HourCount{Hour: t, Outcome: o, Jobs: n})
			}
		}
	}
	sort.SliceStable(d.Hours, func(i, j int) bool { return d.Hours[i].Hour.Before(d.Hours[j].Hour) })
	for exe, a := range exes {
		ms := func(f float64) time.Duration { return time.Duration(f * float64(time.Millisecond)) }
		d.Exes = append(d.Exes, ExeDuration{Exe: exe, Jobs: a.ran, Mean: ms(a.sum / float64(a.ran)), Max: ms(a.max)})
	}
	sort.Slice(d.Exes, func(i, j int) bool {
		if d.Exes[i].Mean != d.Exes[j].Mean {
			return d.Exes[i].Mean > d.Exes[j].Mean
		}
		return d.Exes[i].Exe < d.Exes[j].Exe
	})
	if len(d.Exes) > limit {
		d.Exes = d.Exes[:limit]
	}
	return d, nil
}
