package jobstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"strings"
	"time"
	"unicode"
)

// The PostgreSQL error codes (SQLSTATE) the store tells apart.
const (
	pgDiskFull            = "53100"
	pgReadOnlyTransaction = "25006"
	pgLockNotAvailable    = "55P03"
)

// rawSQLKey marks a context whose statements are run exactly as given
// (ad-hoc queries, where "?" is a jsonb operator).
type rawSQLKey struct{}

// withRawSQL returns ctx marked so that pgConn runs its SQL unchanged.
func withRawSQL(ctx context.Context) context.Context {
	return context.WithValue(ctx, rawSQLKey{}, true)
}

// queryPostgres is Query on PostgreSQL. The store's sessions are already
// read-only (default_transaction_read_only, set when it was opened
// read-only); the query runs, exactly as given, as one statement (pgx's
// extended protocol refuses several) in a READ ONLY transaction on a
// connection of its own, with statement_timeout set past ctx's deadline,
// and that connection is closed afterwards, so that nothing the query did
// to its session (a setting, an advisory lock) outlives it. A write is
// refused by the server and wraps ErrQueryWrites, as on SQLite. The
// database role is the second wall: audit users get one that may only
// SELECT the views (see the README).
func (s *Store) queryPostgres(ctx context.Context, query string, columns func([]string) error, row func(QueryRow) error) error {
	conn, err := s.r.Conn(ctx)
	if err != nil {
		return fmt.Errorf("query: %w", err)
	}
	defer conn.Close()
	// The connection is discarded, never returned to the pool.
	defer conn.Raw(func(any) error { return driver.ErrBadConn })
	if kind := leadingKeyword(query); !pgQueryKinds[kind] {
		return fmt.Errorf("query: %w: PostgreSQL runs a query here (SELECT, WITH, VALUES, TABLE, EXPLAIN or SHOW), not %s: "+
			"a READ ONLY transaction lets COPY write the server's files and run its programs", ErrQueryWrites, orWhat(kind))
	}
	raw := withRawSQL(ctx)
	tx, err := conn.BeginTx(raw, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return fmt.Errorf("query: %w", err)
	}
	defer tx.Rollback()
	if d, ok := ctx.Deadline(); ok {
		// The context ends the query first (pgx cancels it, and the caller
		// sees its deadline passed); the server's own timeout, a second
		// later, ends it even if this process is gone.
		ms := max(time.Until(d).Milliseconds(), 1) + 1000
		if _, err := tx.ExecContext(raw, fmt.Sprintf("SET LOCAL statement_timeout = %d", ms)); err != nil {
			return fmt.Errorf("query: set the statement timeout: %w", err)
		}
	}
	rows, err := tx.QueryContext(raw, query)
	if err != nil {
		return queryError(err)
	}
	return scanQuery(rows, columns, row)
}

// pgQueryKinds are the statements an ad-hoc query may begin with on
// PostgreSQL: those that only compute rows. A READ ONLY transaction
// refuses writes to tables but not what acts outside the database (COPY
// to a server file or program) or outside the transaction (CALL, DO).
var pgQueryKinds = map[string]bool{"select": true, "with": true, "values": true, "table": true, "explain": true, "show": true}

// leadingKeyword returns, lowercased, the first word of query after any
// white space, comments (-- to the line's end, and /* */, nested as
// PostgreSQL nests them) and opening parentheses; "" when there is none.
func leadingKeyword(query string) string {
	s := query
	for {
		s = strings.TrimLeft(s, " \t\r\n\f\v(")
		switch {
		case strings.HasPrefix(s, "--"):
			i := strings.IndexByte(s, '\n')
			if i < 0 {
				return ""
			}
			s = s[i+1:]
		case strings.HasPrefix(s, "/*"):
			depth, i := 0, 0
			for i < len(s) {
				switch {
				case strings.HasPrefix(s[i:], "/*"):
					depth, i = depth+1, i+2
				case strings.HasPrefix(s[i:], "*/"):
					depth, i = depth-1, i+2
				default:
					i++
				}
				if depth == 0 {
					break
				}
			}
			if depth != 0 {
				return ""
			}
			s = s[i:]
		default:
			end := strings.IndexFunc(s, func(r rune) bool {
				return !(r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r))
			})
			if end < 0 {
				end = len(s)
			}
			return strings.ToLower(s[:end])
		}
	}
}

// orWhat names a statement kind in a refusal.
func orWhat(kind string) string {
	if kind == "" {
		return "a statement without a keyword"
	}
	return strings.ToUpper(kind)
}
