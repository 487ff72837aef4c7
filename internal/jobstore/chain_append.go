package jobstore

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/bgcmd/bgcmd"
)

// eventFacts are the job's values an event's canonical form covers (see
// eventScan.canonical), as the transaction appending the event has just
// stored them: the job's identity for its creation, its outcome and
// artifacts for a settle. A transition that is neither covers none, and
// needs no facts.
//
// With them appendEvent chains the event as it inserts it: the head and
// the event's seq read in one statement, the row written once with its
// link, the head moved. Without them (a caller that cannot say what was
// stored) the event is inserted, then read back with the job's row and
// artifacts, then linked (chainEvent): two statements more, one of them a
// three-way join.
type eventFacts struct {
	// The job's identity, for its creation event.
	session, host, argv, exe, exeSHA, cwd, envNames sql.NullString
	envReplaced                                     sql.NullInt64
	// The job's outcome, for a settled event.
	exitCode           sql.NullInt64
	signal, errText    sql.NullString
	outSHA, errSHA     sql.NullString
	outBytes, errBytes sql.NullInt64
	identity, outcome  bool
}

// creationFacts are the facts of job j's creation event, with argv and
// envNames as insertJobSQL bound them (exe_sha256 is stored NULL when
// empty).
func creationFacts(j *bgcmd.Job, argv, envNames string) *eventFacts {
	f := &eventFacts{identity: true,
		session: validStr(j.Session), host: validStr(j.Host), argv: validStr(argv), exe: validStr(j.Exe),
		exeSHA: sql.NullString{String: j.ExeSHA256, Valid: j.ExeSHA256 != ""}, cwd: validStr(j.Cwd),
		envNames: validStr(envNames), envReplaced: sql.NullInt64{Valid: true}}
	if j.EnvReplaced {
		f.envReplaced.Int64 = 1
	}
	return f
}

// outcomeFacts are the facts of a settled event: the exit code, signal and
// error the job's row holds now, and its artifacts (at most one a stream).
func outcomeFacts(exitCode sql.NullInt64, signal, errText string, arts []bgcmd.Artifact) *eventFacts {
	f := &eventFacts{outcome: true, exitCode: exitCode, signal: validStr(signal), errText: validStr(errText)}
	for _, a := range arts {
		sha, n := validStr(a.SHA256), sql.NullInt64{Int64: a.Bytes, Valid: true}
		switch a.Stream {
		case bgcmd.Stdout:
			f.outSHA, f.outBytes = sha, n
		case bgcmd.Stderr:
			f.errSHA, f.errBytes = sha, n
		}
	}
	return f
}

func validStr(s string) sql.NullString { return sql.NullString{String: s, Valid: true} }

// nullInt64 is *n as a nullable integer.
func nullInt64(n *int) sql.NullInt64 {
	if n == nil {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: int64(*n), Valid: true}
}

// covers reports whether f holds what the canonical form of an event from
// from to to covers.
func (f *eventFacts) covers(from, to bgcmd.State) bool {
	if from == "" && (f == nil || !f.identity) {
		return false
	}
	if to.Settled() && (f == nil || !f.outcome) {
		return false
	}
	return true
}

// fill copies f's facts into e.
func (f *eventFacts) fill(e *eventScan) {
	if f == nil {
		return
	}
	e.session, e.host, e.argv, e.exe, e.exeSHA, e.cwd = f.session, f.host, f.argv, f.exe, f.exeSHA, f.cwd
	e.envReplaced, e.envNames = f.envReplaced, f.envNames
	e.exitCode, e.signal, e.errText = f.exitCode, f.signal, f.errText
	e.outSHA, e.outBytes, e.errSHA, e.errBytes = f.outSHA, f.outBytes, f.errSHA, f.errBytes
}

// The statements of an event chained as it is inserted: the head and the
// seq the event gets (SQLite: one past the largest seq job_events ever
// had, as AUTOINCREMENT gives it; PostgreSQL: the identity's next value),
// then the row with its link.
const (
	nextEventSQL = `SELECT h.seq, h.hash, MAX(
		COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'job_events'), 0),
		COALESCE((SELECT MAX(seq) FROM job_events), 0)) + 1
		FROM chain_head h WHERE h.id = 1`
	nextEventPostgresSQL = `SELECT h.seq, h.hash, nextval(pg_get_serial_sequence('job_events', 'seq'))
		FROM chain_head h WHERE h.id = 1`
	insertChainedEventSQL = `INSERT INTO job_events (seq, job_id, from_state, to_state, at, detail,
		chain_seq, prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`
)

// appendChainedEvent inserts the event e (its row's own fields set, seq
// aside) already linked into the chain, its canonical form taken from e:
// the caller's facts (eventFacts) and the row as bound here.
func appendChainedEvent(ctx context.Context, tx wtx, e *eventScan) error {
	next := nextEventSQL
	if tx.DriverName() == "pgx" {
		next = nextEventPostgresSQL
	}
	var head ChainHead
	if err := tx.QueryRowContext(ctx, next).Scan(&head.Seq, &head.Hash, &e.seq); err != nil {
		return fmt.Errorf("read chain head: %w", err)
	}
	link := ChainHead{Seq: head.Seq + 1}
	link.Hash = HashCanonical(e.canonical(link.Seq, head.Hash))
	if _, err := tx.ExecContext(ctx, insertChainedEventSQL, e.seq, e.jobID, nullStr(e.from), e.to,
		e.at, e.detail, link.Seq, head.Hash, link.Hash); err != nil {
		return err
	}
	return advanceHead(ctx, tx, head, link)
}
