package main

import (
	"bytes"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/bgcmd/bgcmd/jobstore"
)

// sqlWriteError marks an error writing the result (not a query error).
type sqlWriteError struct{ err error }

func (e *sqlWriteError) Error() string { return e.err.Error() }
func (e *sqlWriteError) Unwrap() error { return e.err }

func newSQLCmd(g *globals) *cobra.Command {
	var asCSV bool
	cmd := &cobra.Command{
		Use:   "sql QUERY [--csv]",
		Short: "Run read-only SQL over the store",
		Long: `Run one SQL query over the database on a read-only connection: SQLite
itself refuses any write (exit 2), whatever the statement looks like.
The tables (jobs, job_events, artifacts, refusals) and the views for the
usual audit questions (job_durations, failures_by_exe, refusal_log) are
described in docs/schema.md.

Output is an aligned table; --csv gives CSV with a header row; --json gives
JSON Lines, one object per row keyed by column name, in column order (a
repeated column name gets a suffix: id, id_2). NULL is NULL in the table,
empty in CSV and null in JSON. Several arguments are joined with spaces.`,
		Example: `  bgcmd sql "SELECT exe, failures, jobs FROM failures_by_exe ORDER BY failures DESC"
  bgcmd sql --csv "SELECT id, state, duration_ms FROM job_durations WHERE duration_ms > 60000"
  bgcmd --json sql "SELECT * FROM refusal_log LIMIT 5"`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if asCSV && g.json {
				return &usageError{errors.New("--csv and --json: choose one")}
			}
			home, err := g.homeDir()
			if err != nil {
				return err
			}
			st, err := jobstore.Open(cmd.Context(), jobstore.Options{Path: filepath.Join(home, "bgcmd.db"), ReadOnly: true})
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
				w = &tableWriter{w: out, style: styleFor(out), width: termWidth(out)}
			}
			err = st.Query(cmd.Context(), strings.Join(args, " "),
				func(cols []string) error { return wrapWrite(w.columns(cols)) },
				func(r jobstore.QueryRow) error { return wrapWrite(w.row(r)) })
			if err == nil {
				err = wrapWrite(w.flush())
			}
			var we *sqlWriteError
			switch {
			case err == nil || errors.As(err, &we):
				return err
			case strings.Contains(err.Error(), "readonly"):
				return &usageError{fmt.Errorf("sql is read-only: SQLite refused the write (%w)", err)}
			case cmd.Context().Err() != nil:
				return err
			}
			return &usageError{err}
		},
	}
	cmd.Flags().BoolVar(&asCSV, "csv", false, "CSV with a header row")
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

// tableWriter buffers the rows and prints an aligned table.
type tableWriter struct {
	w     io.Writer
	style style
	width int
	t     table
}

func (t *tableWriter) columns(cols []string) error {
	t.t.header = cols
	return nil
}

func (t *tableWriter) row(r jobstore.QueryRow) error {
	cells := make([]cell, len(r))
	for i, v := range r {
		s, ok := sqlText(v)
		if !ok {
			cells[i] = cell{"NULL", sgrDim}
			continue
		}
		cells[i] = cell{text: oneLine(s)}
	}
	t.t.add(cells...)
	return nil
}

func (t *tableWriter) flush() error { return t.t.write(t.w, t.style, t.width) }

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
