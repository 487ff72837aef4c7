package jobstore

import (
	"os"
	"path/filepath"
)

// ChainBackfillVersion is the goose version of the Go migration that chains
// existing rows, for the external tests.
var ChainBackfillVersion = chainBackfillVersion

// GoMigrations are the store's migrations written in Go, for the external
// tests that drive goose themselves.
var GoMigrations = goMigrations

// RemoveChainBenchStore removes the million-event store the chain benchmark
// built, if it did.
func RemoveChainBenchStore() {
	if chainMillionPath != "" {
		os.RemoveAll(filepath.Dir(chainMillionPath))
	}
}
