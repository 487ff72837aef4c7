package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/bgcmd/bgcmd/internal/jobstore"
)

// sqlWriteError marks an error writing the result (not a query error).
type sqlWriteError struct{ err error }

func (e *sqlWriteError) Error() string { return e.err.Error() }
func (e *sqlWriteError) Unwrap() error { return e.err }

// defaultSQLTimeout bounds a query unless --timeout says otherwise.
const defaultSQLTimeout = 30 * time.Second

// sqlWatchdogGrace is how long past --timeout the watchdog of bgcmd sql
// waits before it ends the process: SQLite's own interrupt, when it
// covers the query, ends it first and says so the same way.
const sqlWatchdogGrace = 500 * time.Millisecond

// sqlWritesHint is what a user whose ad-hoc query would write does
// instead: each change to the history has its own command.
const sqlWritesHint = "bgcmd sql only reads; jobs leave the history through bgcmd prune, " +
	"running ones stop with bgcmd kill, and files go with bgcmd gc"

func newSQLCmd(g *globals) *cobra.Command {
	var (
		asCSV   bool
		timeout string
	)
	cmd := &cobra.Command{
		Use:   "sql QUERY [--csv] [--timeout DUR]",
		Short: "Run read-only SQL over the store",
		Long: `Run one SQL query over the database on a read-only connection: SQLite
itself refuses any write, ATTACH, VACUUM INTO or pragma that sets a value
(exit 2, "read-only"), whatever the statement looks like; pragmas that only
read (table_info, user_version, ...) pass. A query runs for at most
--timeout (default 30s), then it is interrupted (exit 1). On PostgreSQL
(--db, BGCMD_DB) the query is one statement in a READ ONLY transaction of a
read-only session with statement_timeout set from --timeout: the server
refuses any write (exit 2, "read-only") and stops a query past its time.
The tables (jobs, job_events, artifacts, refusals) and the views for the
usual audit questions (job_durations, failures_by_exe, refusal_log) are
described in docs/schema.md.

Output is an aligned table of at most 1000 rows (cells cut at 4096
characters; stderr says how many rows were cut); --csv gives CSV with a
header row; --json gives JSON Lines, one object per row keyed by column
name, in column order (a repeated column name gets a suffix: id, id_2).
CSV and JSON stream every row. NULL is NULL in the table, empty in CSV and
null in JSON. Several arguments are joined with spaces.`,
		Example: `  bgcmd sql "SELECT exe, failures, jobs FROM failures_by_exe ORDER BY failures DESC"
  bgcmd sql --csv "SELECT id, state, duration_ms FROM job_durations WHERE duration_ms > 60000"
  bgcmd --json sql "SELECT * FROM refusal_log LIMIT 5"`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if asCSV && g.json {
				return &usageError{errors.New("--csv and --json: choose one")}
			}
			limit, err := parseDuration("--timeout", timeout)
			if err != nil {
				return err
			}
			if limit == 0 {
				return &usageError{fmt.Errorf("--timeout %q: want a positive duration such as 30s or 5m", timeout)}
			}
			home, err := g.homeDir()
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), limit)
			defer cancel()
			st, err := jobstore.Open(ctx, g.storeOptions(home, true))
			if err != nil {
				return err
			}
			defer st.Close()
			out := cmd.OutOrStdout()
			var w sqlWriter
			switch {
			case asCSV:
				w = &csvWriter{w: csv.NewWriter(out)}
			case g.json:
				w = &jsonLinesWriter{w: out}
			default:
				w = &tableWriter{w: out, errw: cmd.ErrOrStderr(), style: styleFor(out), width: termWidth(out)}
			}
			var mu sync.Mutex // held while a row is written, so the watchdog cuts none
			timedOut := func() string {
				return fmt.Sprintf("sql: the query ran past its time limit of %s and was interrupted; "+
					"narrow it (WHERE, LIMIT) or raise --timeout", limit)
			}
			// SQLite's interrupt covers a query until its first row: a scan
			// after that (a row at once, then none for hours) would go on
			// past --timeout. The watchdog ends the process instead; its
			// connection only reads, so nothing is left half done.
			watchdog := time.AfterFunc(limit+sqlWatchdogGrace, func() {
				mu.Lock()
				_ = w.flush()
				fmt.Fprintln(cmd.ErrOrStderr(), "bgcmd: "+timedOut())
				os.Exit(exitRuntime)
			})
			defer watchdog.Stop()
			locked := func(f func() error) error {
				mu.Lock()
				defer mu.Unlock()
				return wrapWrite(f())
			}
			err = st.Query(ctx, strings.Join(args, " "),
				func(cols []string) error { return locked(func() error { return w.columns(cols) }) },
				func(r jobstore.QueryRow) error { return locked(func() error { return w.row(r) }) })
			if err == nil {
				err = locked(w.flush)
			}
			var we *sqlWriteError
			switch {
			case err == nil || errors.As(err, &we):
				return err
			case errors.Is(err, jobstore.ErrQueryWrites):
				return &exitError{code: exitUsage, kind: errorKinds[exitUsage], hint: sqlWritesHint,
					msg: fmt.Sprintf("sql is read-only: %s refused the write (%v)\nhint: %s", st.Backend(), err, sqlWritesHint)}
			case cmd.Context().Err() != nil:
				return err
			case errors.Is(ctx.Err(), context.DeadlineExceeded):
				return errors.New(timedOut())
			}
			return &usageError{err}
		},
	}
	cmd.Flags().BoolVar(&asCSV, "csv", false, "CSV with a header row")
	cmd.Flags().StringVar(&timeout, "timeout", defaultSQLTimeout.String(), "interrupt the query after this long")
	return cmd
}

func wrapWrite(err error) error {
	if err != nil {
		return &sqlWriteError{err}
	}
	return nil
}

// sqlWriter renders a query result.
type sqlWriter interface {
	columns([]string) error
	row(jobstore.QueryRow) error
	flush() error
}

// sqlText renders a value as text ("" and false for NULL).
func sqlText(v any) (string, bool) {
	switch x := v.(type) {
	case nil:
		return "", false
	case string:
		return x, true
	case int64:
		return strconv.FormatInt(x, 10), true
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64), true
	case []byte:
		return "x'" + hex.EncodeToString(x) + "'", true
	}
	return fmt.Sprint(v), true
}

// Bounds of the aligned table, which must see every row it prints before
// printing: CSV and JSON Lines stream instead.
const (
	// maxTableRows bounds the rows the table keeps; the rest are counted.
	maxTableRows = 1000
	// maxTableCell is the characters a cell keeps; the rest is cut.
	maxTableCell = 4096
	// maxTableBytes bounds the text the table keeps in all.
	maxTableBytes = 8 << 20
)

// tableWriter buffers at most maxTableRows rows (maxTableBytes of text)
// and prints an aligned table, then says on errw how many rows it cut.
type tableWriter struct {
	w     io.Writer
	errw  io.Writer
	style style
	width int
	t     table
	kept  int
	cut   int64
}

func (t *tableWriter) columns(cols []string) error {
	t.t.header = cols
	return nil
}

func (t *tableWriter) row(r jobstore.QueryRow) error {
	if t.cut > 0 || len(t.t.rows) >= maxTableRows || t.kept >= maxTableBytes {
		t.cut++
		return nil
	}
	cells := make([]cell, len(r))
	for i, v := range r {
		s, ok := sqlText(v)
		if !ok {
			cells[i] = cell{"NULL", sgrDim}
			continue
		}
		cells[i] = cell{text: cutCell(oneLine(s))}
		t.kept += len(cells[i].text)
	}
	t.t.add(cells...)
	return nil
}

func (t *tableWriter) flush() error {
	if err := t.t.write(t.w, t.style, t.width); err != nil {
		return err
	}
	if t.cut > 0 {
		_, err := fmt.Fprintf(t.errw, "%d more row(s) cut from the table: add a LIMIT, or use --csv or --json, which stream every row\n", t.cut)
		return err
	}
	return nil
}

// cutCell keeps the first maxTableCell characters of s, marking a cut.
func cutCell(s string) string {
	if len(s) <= maxTableCell {
		return s
	}
	n := 0
	for i := range s {
		if n == maxTableCell {
			return s[:i] + "…"
		}
		n++
	}
	return s
}

// csvWriter streams CSV.
type csvWriter struct{ w *csv.Writer }

func (c *csvWriter) columns(cols []string) error { return c.w.Write(cols) }

func (c *csvWriter) row(r jobstore.QueryRow) error {
	rec := make([]string, len(r))
	for i, v := range r {
		rec[i], _ = sqlText(v)
	}
	return c.w.Write(rec)
}

func (c *csvWriter) flush() error {
	c.w.Flush()
	return c.w.Error()
}

// jsonLinesWriter streams one JSON object per row, keys in column order.
type jsonLinesWriter struct {
	w    io.Writer
	keys [][]byte
}

func (j *jsonLinesWriter) columns(cols []string) error {
	seen := map[string]int{}
	for _, c := range cols {
		seen[c]++
		name := c
		if n := seen[c]; n > 1 {
			name = fmt.Sprintf("%s_%d", c, n)
		}
		k, err := json.Marshal(name)
		if err != nil {
			return err
		}
		j.keys = append(j.keys, k)
	}
	return nil
}

func (j *jsonLinesWriter) row(r jobstore.QueryRow) error {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, v := range r {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(j.keys[i])
		b.WriteByte(':')
		val, err := json.Marshal(v) // []byte becomes base64
		if err != nil {
			return err
		}
		b.Write(val)
	}
	b.WriteString("}\n")
	_, err := j.w.Write(b.Bytes())
	return err
}

func (j *jsonLinesWriter) flush() error { return nil }
