package jobstore

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/pressly/goose/v3"

	"github.com/bgcmd/bgcmd/migrations"
)

// chainBackfillVersion is the goose version of the Go migration that chains
// the rows recorded before the chain existed. It runs after the SQL
// migrations that add the chain's columns (00008_chain.sql) and rebuild the
// jobs table for the queue (00009_queue.sql).
var chainBackfillVersion = migrations.GoVersions[0]

// goMigrations are the migrations written in Go, registered with the goose
// provider beside the embedded SQL ones.
func goMigrations() []*goose.Migration {
	return []*goose.Migration{
		goose.NewGoMigration(chainBackfillVersion, &goose.GoFunc{RunTx: backfillChain}, nil),
	}
}

// backfillChain chains every row not chained yet, in the order the rows were
// recorded (by time; an event before a refusal at the same instant; events
// by seq), from the current head on.
func backfillChain(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, `SELECT kind, seq, id FROM (
		SELECT 0 AS kind, seq, '' AS id, at FROM job_events WHERE chain_seq IS NULL
		UNION ALL
		SELECT 1 AS kind, 0 AS seq, id, at FROM refusals WHERE chain_seq IS NULL)
		ORDER BY at, kind, seq, id`)
	if err != nil {
		return fmt.Errorf("chain existing rows: %w", err)
	}
	type pending struct {
		kind int
		seq  int64
		id   string
	}
	var todo []pending
	for rows.Next() {
		var p pending
		if err := rows.Scan(&p.kind, &p.seq, &p.id); err != nil {
			rows.Close()
			return fmt.Errorf("chain existing rows: %w", err)
		}
		todo = append(todo, p)
	}
	if err := rows.Close(); err != nil {
		return fmt.Errorf("chain existing rows: %w", err)
	}
	for _, p := range todo {
		if p.kind == 0 {
			err = chainEvent(ctx, tx, p.seq)
		} else {
			err = chainRefusal(ctx, tx, p.id)
		}
		if err != nil {
			return fmt.Errorf("chain existing rows: %w", err)
		}
	}
	return nil
}
