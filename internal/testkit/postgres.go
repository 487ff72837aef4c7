package testkit

import (
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"sync"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver
)

// PostgresEnv names the PostgreSQL server the tests use: a postgres:// URL
// (scripts/pg prints one for a throwaway server).
const PostgresEnv = "BGCMD_TEST_PG"

// PostgresServer returns the server PostgresEnv names. Without it tb is
// skipped, saying so, except under CI=true, where it fails: CI must run
// the PostgreSQL half of the tests.
func PostgresServer(tb testing.TB) string {
	tb.Helper()
	dsn := os.Getenv(PostgresEnv)
	if dsn == "" {
		if os.Getenv("CI") == "true" {
			tb.Fatal(PostgresEnv + " is not set: CI must run the tests on PostgreSQL too (.ci/run starts a server with scripts/pg)")
		}
		tb.Skip(PostgresEnv + " is not set: the PostgreSQL half is skipped (start a server with `make pg` and export the DSN it prints)")
	}
	return dsn
}

var (
	adminOnce sync.Once
	admin     *sql.DB
	adminErr  error
)

// PostgresDB creates an empty database on the server PostgresEnv names
// and returns its DSN; the database is dropped (with any session still on
// it) when tb ends.
func PostgresDB(tb testing.TB) string {
	tb.Helper()
	server := PostgresServer(tb)
	adminOnce.Do(func() {
		admin, adminErr = sql.Open("pgx", server)
		if adminErr == nil {
			admin.SetMaxOpenConns(4)
		}
	})
	if adminErr != nil {
		tb.Fatalf("open %s: %v", PostgresEnv, adminErr)
	}
	u, err := url.Parse(server)
	if err != nil {
		tb.Fatalf("%s must be a postgres:// URL: %v", PostgresEnv, err)
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := "bgcmd_test_" + hex.EncodeToString(b)
	if _, err := admin.Exec(`CREATE DATABASE ` + name); err != nil {
		tb.Fatalf("create a test database on %s: %v", PostgresEnv, err)
	}
	tb.Cleanup(func() {
		if _, err := admin.Exec(`DROP DATABASE IF EXISTS ` + name + ` WITH (FORCE)`); err != nil {
			tb.Logf("drop test database %s: %v", name, err)
		}
	})
	u.Path = "/" + name
	return u.String()
}
