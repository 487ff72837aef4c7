package jobstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"time"
	"unicode/utf8"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// ErrNotReadOnly is returned by Query on a store not opened with ReadOnly:
// ad-hoc SQL only ever runs on a connection SQLite itself keeps read-only.
var ErrNotReadOnly = errors.New("ad-hoc queries need a store opened read-only")

// ErrQueryWrites is wrapped by the error of an ad-hoc query SQLite refused
// because it would write, attach a database or change the connection.
var ErrQueryWrites = errors.New("refused on a readonly connection: ad-hoc queries are read-only " +
	"(no writes, no ATTACH or VACUUM INTO, no pragma that sets a value)")

// MaxQueryValueBytes bounds any one string or blob an ad-hoc query can make
// (SQLITE_LIMIT_LENGTH on its connection): a query cannot build a value of
// gigabytes in memory.
const MaxQueryValueBytes = 32 << 20

// QueryRow is one row of an ad-hoc query: one value per column, each nil
// (SQL NULL), int64, float64, string (TEXT, and BLOBs that are valid UTF-8)
// or []byte (other BLOBs).
type QueryRow []any

// Query runs one ad-hoc SQL query (the `sql` command, audit tooling) on a
// store opened with Options.ReadOnly, calling columns once with the column
// names and then row for each row, in order, as they come (nothing is
// buffered). ctx bounds the query: when it ends, SQLite is interrupted.
//
// The query runs on a connection locked down by SQLite itself, whatever the
// SQL says (Query does no string matching): the file is opened mode=ro,
// PRAGMA query_only is on, no database may be attached
// (SQLITE_LIMIT_ATTACHED is 0, which also stops VACUUM INTO) and an
// authorizer refuses every statement that writes, attaches, detaches or
// sets a pragma; only reading pragmas pass. A refused statement fails with
// an error wrapping ErrQueryWrites. An error from a callback stops the
// query and is returned as is; other errors from SQLite are wrapped with
// "query: ".
func (s *Store) Query(ctx context.Context, query string, columns func([]string) error, row func(QueryRow) error) error {
	if !s.readOnly {
		return ErrNotReadOnly
	}
	if s.d.postgres {
		return s.queryPostgres(ctx, query, columns, row)
	}
	conn, err := s.r.Conn(ctx)
	if err != nil {
		return fmt.Errorf("query: %w", err)
	}
	defer conn.Close()
	if err := lockDown(ctx, conn); err != nil {
		return fmt.Errorf("query: lock the connection down: %w", err)
	}
	rows, err := conn.QueryContext(ctx, query)
	if err != nil {
		return queryError(err)
	}
	return scanQuery(rows, columns, row)
}

// scanQuery hands the columns and rows of an ad-hoc query to the callbacks.
func scanQuery(rows *sql.Rows, columns func([]string) error, row func(QueryRow) error) error {
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return queryError(err)
	}
	if err := columns(cols); err != nil {
		return err
	}
	// PostgreSQL's numeric comes as text: it is read as a number, as
	// SQLite gives one.
	numeric := make([]bool, len(cols))
	if types, err := rows.ColumnTypes(); err == nil {
		for i, ct := range types {
			numeric[i] = ct.DatabaseTypeName() == "NUMERIC"
		}
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return queryError(err)
		}
		out := make(QueryRow, len(cols))
		for i, v := range vals {
			out[i] = plainValue(v)
			if s, ok := out[i].(string); ok && numeric[i] {
				out[i] = numberValue(s)
			}
		}
		if err := row(out); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return queryError(err)
	}
	return nil
}

// lockDown makes conn unable to change any file: query_only, no attached
// databases, bounded values and the read-only authorizer. Each step is
// idempotent, so a pooled connection locked before is locked again.
func lockDown(ctx context.Context, conn *sql.Conn) error {
	// Before the authorizer, which refuses setting pragmas.
	if _, err := conn.ExecContext(ctx, "PRAGMA query_only = 1"); err != nil {
		return err
	}
	if _, err := sqlite.Limit(conn, sqlite3.SQLITE_LIMIT_ATTACHED, 0); err != nil {
		return err
	}
	if _, err := sqlite.Limit(conn, sqlite3.SQLITE_LIMIT_LENGTH, MaxQueryValueBytes); err != nil {
		return err
	}
	return conn.Raw(func(dc any) error {
		ar, ok := dc.(sqlite.AuthorizerRegisterer)
		if !ok {
			return fmt.Errorf("the SQLite driver connection %T has no authorizer", dc)
		}
		return ar.RegisterAuthorizer(readOnlyAuthorizer)
	})
}

// readOnlyAuthorizer allows reading and refuses everything else.
func readOnlyAuthorizer(action sqlite.AuthorizerActionCode, arg1, arg2, _, _ string) sqlite.AuthorizerReturnCode {
	switch action {
	case sqlite.AuthSelect, sqlite.AuthRead, sqlite.AuthFunction, sqlite.AuthRecursive,
		sqlite.AuthTransaction, sqlite.AuthSavepoint:
		return sqlite.AuthorizerOK
	case sqlite.AuthPragma:
		// query_only = 1 is how lockDown starts, also on a connection
		// this authorizer already guards.
		if readPragmas[arg1] || (arg2 == "" && readValuePragmas[arg1]) || (arg1 == "query_only" && arg2 == "1") {
			return sqlite.AuthorizerOK
		}
	}
	return sqlite.AuthorizerDeny
}

// readPragmas only read, with or without an argument (a table, an index,
// a row limit).
var readPragmas = map[string]bool{
	"table_info": true, "table_xinfo": true, "table_list": true,
	"index_info": true, "index_xinfo": true, "index_list": true,
	"foreign_key_list": true, "foreign_key_check": true,
	"integrity_check": true, "quick_check": true,
	"database_list": true, "collation_list": true, "function_list": true,
	"module_list": true, "pragma_list": true, "compile_options": true,
}

// readValuePragmas read a setting when given no argument (and would set it
// with one).
var readValuePragmas = map[string]bool{
	"application_id": true, "user_version": true, "schema_version": true,
	"data_version": true, "page_size": true, "page_count": true,
	"freelist_count": true, "max_page_count": true, "encoding": true,
	"journal_mode": true, "foreign_keys": true, "query_only": true,
	"auto_vacuum": true, "cache_size": true, "synchronous": true,
	"busy_timeout": true, "temp_store": true, "mmap_size": true,
}

// queryError wraps an error from SQLite, marking the refusals of a locked
// down connection with ErrQueryWrites.
func queryError(err error) error {
	switch pgCode(err) {
	case pgReadOnlyTransaction:
		return fmt.Errorf("query: %w (%w)", ErrQueryWrites, err)
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_AUTH, sqlite3.SQLITE_READONLY:
			return fmt.Errorf("query: %w (%w)", ErrQueryWrites, err)
		}
	}
	return fmt.Errorf("query: %w", err)
}

// numberValue reads a numeric's text as an int64 when it is whole and
// fits, else as a float64 (the text itself when it is neither, as NaN).
func numberValue(s string) any {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		return f
	}
	return s
}

// plainValue narrows a scanned value to the kinds QueryRow documents (a
// time, which PostgreSQL may give, as RFC 3339 UTC text like the stored
// times).
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
	case int32:
		return int64(x)
	case float32:
		return float64(x)
	case time.Time:
		return x.UTC().Format(time.RFC3339Nano)
	default:
		return fmt.Sprint(x)
	}
}
