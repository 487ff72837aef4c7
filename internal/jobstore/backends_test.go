package jobstore_test

import (
	"context"
	"database/sql"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd/internal/jobstore"
	"github.com/bgcmd/bgcmd/internal/testkit"
)

// The store contract is this package's tests: each test that is not about
// the SQLite file itself runs once per backend, as the subtests "sqlite"
// and "postgres" (eachBackend). The PostgreSQL half needs a server:
// BGCMD_TEST_PG names it (a postgres:// URL; scripts/pg starts a
// throwaway one), and every store of a test gets a database of its own on
// it, dropped when the test ends. Without BGCMD_TEST_PG the half is
// skipped with the reason, except under CI=true, where it fails.

const (
	backendSQLite   = "sqlite"
	backendPostgres = "postgres"
)

// eachBackend runs fn as a parallel subtest per backend; openTest and
// rawDB inside fn open stores of that backend.
func eachBackend(t *testing.T, fn func(t *testing.T)) {
	t.Helper()
	for _, b := range []string{backendSQLite, backendPostgres} {
		t.Run(b, func(t *testing.T) {
			if b == backendPostgres {
				pgServer(t)
			}
			t.Parallel()
			fn(t)
		})
	}
}

// backendOf is the backend the (sub)test t runs against: postgres inside
// eachBackend's "postgres" subtest, sqlite everywhere else.
func backendOf(t testing.TB) string {
	for _, part := range strings.Split(t.Name(), "/") {
		if part == backendPostgres {
			return backendPostgres
		}
	}
	return backendSQLite
}

// pgServer returns BGCMD_TEST_PG, skipping t without it (failing it under
// CI=true, where the PostgreSQL half of the contract must run).
func pgServer(t testing.TB) string { return testkit.PostgresServer(t) }

// pgByPath maps a store path a test opens again to its database, so that a
// test reopening "the same file" reopens the same database.
var pgByPath sync.Map

// freshPGDatabase creates an empty database on the test server and returns
// its DSN; it is dropped when t ends.
func freshPGDatabase(t testing.TB) string { return testkit.PostgresDB(t) }

// backendOptions fills opts for t's backend: on PostgreSQL, the DSN of a
// fresh database (the same one again for a path opened before).
func backendOptions(t testing.TB, opts jobstore.Options) jobstore.Options {
	if backendOf(t) != backendPostgres || opts.DSN != "" {
		return opts
	}
	if opts.Path != "" {
		if dsn, ok := pgByPath.Load(opts.Path); ok {
			opts.DSN = dsn.(string)
			return opts
		}
	}
	opts.DSN = freshPGDatabase(t)
	if opts.Path != "" {
		pgByPath.Store(opts.Path, opts.DSN)
	}
	return opts
}

// rawDB opens the database of s directly, to check what the store wrote
// (or to tamper with it) without going through it. Its SQL is written as
// for the store: "?" placeholders on both backends.
func rawDB(t testing.TB, s *jobstore.Store) *sql.DB {
	t.Helper()
	if dsn := s.DSN(); dsn != "" {
		db, err := jobstore.OpenRawPostgres(context.Background(), dsn)
		require.NoError(t, err)
		t.Cleanup(func() { db.Close() })
		return db
	}
	return openRaw(t, s.Path())
}
