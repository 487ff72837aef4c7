package jobstore

import (
	"context"
	"errors"
	"fmt"
	"unicode/utf8"
)

// ErrNotReadOnly is returned by Query on a store not opened with ReadOnly:
// ad-hoc SQL only ever runs on a connection SQLite itself keeps read-only.
var ErrNotReadOnly = errors.New("ad-hoc queries need a store opened read-only")

// QueryRow is one row of an ad-hoc query: one value per column, each nil
// (SQL NULL), int64, float64, string (TEXT, and BLOBs that are valid UTF-8)
// or []byte (other BLOBs).
type QueryRow []any

// Query runs one ad-hoc SQL query (the `sql` command, audit tooling) on a
// store opened with Options.ReadOnly, calling columns once with the column
// names and then row for each row, in order. The connection is opened
// read-only (SQLite's mode=ro), so a write statement fails inside SQLite
// with "attempt to write a readonly database", whatever its spelling; Query
// does no string matching. An error from a callback stops the query and is
// returned as is; errors from SQLite are wrapped with "query: ".
func (s *Store) Query(ctx context.Context, query string, columns func([]string) error, row func(QueryRow) error) error {
	if !s.readOnly {
		return ErrNotReadOnly
	}
	rows, err := s.r.QueryContext(ctx, query)
	if err != nil {
		return fmt.Errorf("query: %w", err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return fmt.Errorf("query: %w", err)
	}
	if err := columns(cols); err != nil {
		return err
	}
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return fmt.Errorf("query: %w", err)
		}
		for i, v := range vals {
			vals[i] = plainValue(v)
		}
		if err := row(vals); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("query: %w", err)
	}
	return nil
}

// plainValue narrows a scanned value to the kinds QueryRow documents.
func plainValue(v any) any {
	switch x := v.(type) {
	case nil, int64, float64, string:
		return x
	case []byte:
		if utf8.Valid(x) {
			return string(x)
		}
		return append([]byte(nil), x...)
	case bool:
		if x {
			return int64(1)
		}
		return int64(0)
	case int:
		return int64(x)
	default:
		return fmt.Sprint(x)
	}
}
