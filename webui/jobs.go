package webui

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/internal/jobstore"
)

// defaultJobsPage is how many jobs the jobs page shows by default.
const defaultJobsPage = 50

// recentJobs is how many of the newest jobs the outcome counters cover: a
// bounded read, whatever the table's size or the day's load.
const recentJobs = 1000

// jobsFilter is the jobs page's form, as given.
type jobsFilter struct {
	States  map[string]bool
	Session string
	Exe     string
	Label   string
	Since   string
	Until   string
	Limit   int
}

// jobRow is one line of the jobs table.
type jobRow struct {
	ID       string
	Badge    badge
	Argv     []string
	Exe      string
	Session  string
	Created  time.Time
	Duration time.Duration
	Labels   map[string]string
	Unread   bool
}

type jobsBody struct {
	Filter   jobsFilter
	States   []bgcmd.State
	Overview jobstore.Overview
	// Recent counts the outcomes of the newest recentJobs jobs (RecentJobs
	// of them, fewer when the store holds fewer).
	Recent     []jobstore.OutcomeCount
	RecentJobs int
	Jobs       []jobRow
	// Next and First are links to the next (older) page and to the
	// newest, "" when there is none.
	Next, First string
}

type outcomeTotal struct {
	Outcome jobstore.Outcome
	Jobs    int
}

func (s *Server) handleJobs(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	q := r.URL.Query()
	f, p, err := parseJobsFilter(q, s.now())
	if err != nil {
		s.fail(w, err)
		return
	}
	res, err := s.store.Filter(ctx, p)
	if err != nil {
		s.fail(w, err)
		return
	}
	now := s.now()
	ov, err := s.store.Overview(ctx, now.Add(-24*time.Hour))
	if err != nil {
		s.fail(w, err)
		return
	}
	recent, err := s.store.RecentOutcomes(ctx, recentJobs)
	if err != nil {
		s.fail(w, err)
		return
	}
	body := jobsBody{Filter: f, States: bgcmd.States(), Overview: ov, Recent: recent}
	for _, r := range recent {
		body.RecentJobs += r.Jobs
	}
	for _, rec := range res.Jobs {
		j := &rec.Job
		body.Jobs = append(body.Jobs, jobRow{ID: j.ID, Badge: stateBadge(j), Argv: j.Argv, Exe: j.Exe,
			Session: j.Session, Created: j.CreatedAt, Duration: j.Duration(now), Labels: j.Labels,
			Unread: j.State.Settled() && j.SeenAt == nil})
	}
	if res.NextBefore != "" {
		nq := cloneQuery(q)
		nq.Set("before", res.NextBefore)
		body.Next = s.prefix + "/?" + nq.Encode()
	}
	if q.Get("before") != "" {
		fq := cloneQuery(q)
		fq.Del("before")
		body.First = s.prefix + "/?" + fq.Encode()
	}
	s.render(w, http.StatusOK, "jobs", view{Title: "Jobs", Body: body})
}

// totals sums hourly counts per outcome, in stacking order, leaving out
// outcomes with no jobs.
func totals(hours []jobstore.HourCount) []outcomeTotal {
	sum := map[jobstore.Outcome]int{}
	for _, h := range hours {
		sum[h.Outcome] += h.Jobs
	}
	var out []outcomeTotal
	for _, o := range jobstore.Outcomes {
		if sum[o] > 0 {
			out = append(out, outcomeTotal{o, sum[o]})
		}
	}
	return out
}

func cloneQuery(q url.Values) url.Values {
	c := url.Values{}
	for k, v := range q {
		c[k] = append([]string(nil), v...)
	}
	return c
}

// parseJobsFilter reads the jobs page's query: state (repeatable),
// session, exe, label (KEY or KEY=VALUE), since and until (a time, or a
// duration meaning that long ago), limit and the before cursor.
func parseJobsFilter(q url.Values, now time.Time) (jobsFilter, jobstore.FilterParams, error) {
	f := jobsFilter{States: map[string]bool{}, Session: q.Get("session"), Exe: q.Get("exe"),
		Label: q.Get("label"), Since: q.Get("since"), Until: q.Get("until"), Limit: defaultJobsPage}
	var p jobstore.FilterParams
	for _, st := range q["state"] {
		if st == "" {
			continue
		}
		if !bgcmd.State(st).Valid() {
			return f, p, badRequest("state %q is not a job state (%s)", st, strings.Join(bgcmd.StateNames(bgcmd.States()), ", "))
		}
		f.States[st] = true
		p.States = append(p.States, bgcmd.State(st))
	}
	p.Session, p.Exe = f.Session, f.Exe
	if f.Label != "" {
		k, v, _ := strings.Cut(f.Label, "=")
		p.LabelKey, p.LabelValue = k, v
	}
	var err error
	if p.Since, err = parseWhen(f.Since, now); err != nil {
		return f, p, badRequest("since %q: %v", f.Since, err)
	}
	if p.Until, err = parseWhen(f.Until, now); err != nil {
		return f, p, badRequest("until %q: %v", f.Until, err)
	}
	if l := q.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > jobstore.MaxListLimit {
			return f, p, badRequest("limit %q: want a number from 1 to %d", l, jobstore.MaxListLimit)
		}
		f.Limit = n
	}
	p.Limit = f.Limit
	p.Before = q.Get("before")
	return f, p, nil
}

// parseWhen reads a time filter: empty (none), a duration ("2h": that long
// before now), RFC 3339, or the browser's datetime-local form (UTC).
func parseWhen(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if d, err := time.ParseDuration(s); err == nil {
		return now.Add(-d), nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("want a duration ago (2h), a date (2006-01-02) or a time (2006-01-02T15:04, UTC)")
}

func badRequest(format string, args ...any) error {
	return &httpError{code: http.StatusBadRequest, msg: fmt.Sprintf(format, args...)}
}
