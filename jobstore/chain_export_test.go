package jobstore

// ChainBackfillVersion is the goose version of the Go migration that chains
// existing rows, for the external tests.
const ChainBackfillVersion = chainBackfillVersion
