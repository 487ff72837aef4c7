package jobstore

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"strconv"
	"time"

	"github.com/bgcmd/bgcmd"
)

// ChainVersion is the first element of every canonical array: the version
// of the canonical form that docs/schema.md specifies.
const ChainVersion = "bgcmd-chain-1"

// GenesisHash is the prev_hash of the first chained row, and the hash of the
// empty chain (seq 0).
const GenesisHash = "0000000000000000000000000000000000000000000000000000000000000000"

// The kinds of chained rows.
const (
	ChainKindEvent   = "event"
	ChainKindRefusal = "refusal"
)

// querier is what the chain reads and writes through: a *sql.Tx (a goose
// migration), a wtx (a store transaction) or a read transaction.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// ChainHead names the newest chained row: an operator copies it elsewhere
// as a checkpoint and later verifies from it (VerifyChainParams.Since).
type ChainHead struct {
	Seq  int64  `json:"seq"`
	Hash string `json:"hash"`
}

// ChainRow is one chained row: where it sits in the chain and the exact
// canonical text whose sha256 (with PrevHash inside it) is Hash.
type ChainRow struct {
	Seq      int64  `json:"chain_seq"`
	Kind     string `json:"kind"`
	PrevHash string `json:"prev_hash"`
	Hash     string `json:"hash"`
	// Ref is the job id of an event, the id of a refusal.
	Ref string `json:"ref"`
	// EventSeq is the job_events seq of an event.
	EventSeq int64 `json:"event_seq,omitempty"`
	// Canonical is the canonical content as recomputed from the rows now
	// stored; "" for a row retention pruned.
	Canonical string `json:"canonical,omitempty"`
	// Pruned is true for a row retention deleted: only its place, prev_hash
	// and hash are kept.
	Pruned bool `json:"pruned,omitempty"`
}

// Recomputed is the sha256 of Canonical, in hex.
func (r *ChainRow) Recomputed() string { return HashCanonical(r.Canonical) }

// HashCanonical is the lowercase hex sha256 of a canonical text.
func HashCanonical(canonical string) string {
	sum := sha256.Sum256([]byte(canonical))
	return hex.EncodeToString(sum[:])
}

// eventSelect reads an event with everything its canonical form covers:
// the event row, its job's recorded start (argv, exe and its hash, cwd,
// env names) and outcome, and the banked artifacts' hashes and sizes.
const eventSelect = `SELECT e.chain_seq, e.prev_hash, e.hash, e.seq, e.job_id, e.from_state,
	e.to_state, e.at, e.detail, j.session, j.host, j.argv, j.exe, j.exe_sha256, j.cwd,
	j.env_replaced, j.env_names, j.exit_code, j.signal, j.error,
	so.sha256, so.bytes, se.sha256, se.bytes
	FROM job_events e LEFT JOIN jobs j ON j.id = e.job_id
	LEFT JOIN artifacts so ON so.job_id = e.job_id AND so.stream = 'stdout'
	LEFT JOIN artifacts se ON se.job_id = e.job_id AND se.stream = 'stderr'`

// refusalSelect reads a refusal as its canonical form covers it.
const refusalSelect = `SELECT chain_seq, prev_hash, hash, id, at, session, host, argv, cwd,
	code, message FROM refusals`

// eventScan is one eventSelect row.
type eventScan struct {
	chainSeq                 sql.NullInt64
	prevHash, hash           sql.NullString
	seq                      int64
	jobID                    string
	from                     sql.NullString
	to, at, detail           string
	session, host, argv, exe sql.NullString
	exeSHA, cwd              sql.NullString
	envReplaced              sql.NullInt64
	envNames                 sql.NullString
	exitCode                 sql.NullInt64
	signal, errText          sql.NullString
	outSHA                   sql.NullString
	outBytes                 sql.NullInt64
	errSHA                   sql.NullString
	errBytes                 sql.NullInt64
}

func (e *eventScan) dest() []any {
	return []any{&e.chainSeq, &e.prevHash, &e.hash, &e.seq, &e.jobID, &e.from, &e.to, &e.at,
		&e.detail, &e.session, &e.host, &e.argv, &e.exe, &e.exeSHA, &e.cwd, &e.envReplaced,
		&e.envNames, &e.exitCode, &e.signal, &e.errText, &e.outSHA, &e.outBytes, &e.errSHA, &e.errBytes}
}

// canonical is the event's canonical text at chain place seq after prev.
func (e *eventScan) canonical(seq int64, prev string) string {
	v := []any{ChainVersion, seq, prev, ChainKindEvent, e.seq, e.jobID, nullStr(e.from), e.to, e.at, e.detail}
	if !e.from.Valid {
		v = append(v, nullStr(e.session), nullStr(e.host), nullStr(e.argv), nullStr(e.exe),
			nullStr(e.exeSHA), nullStr(e.cwd), nullInt(e.envReplaced), nullStr(e.envNames))
	}
	if bgcmd.State(e.to).Settled() {
		v = append(v, nullInt(e.exitCode), nullStr(e.signal), nullStr(e.errText),
			nullStr(e.outSHA), nullInt(e.outBytes), nullStr(e.errSHA), nullInt(e.errBytes))
	}
	return encodeCanonical(v)
}

func (e *eventScan) row() ChainRow {
	return ChainRow{Seq: e.chainSeq.Int64, Kind: ChainKindEvent, PrevHash: e.prevHash.String,
		Hash: e.hash.String, Ref: e.jobID, EventSeq: e.seq,
		Canonical: e.canonical(e.chainSeq.Int64, e.prevHash.String)}
}

// refusalScan is one refusalSelect row.
type refusalScan struct {
	chainSeq                         sql.NullInt64
	prevHash, hash                   sql.NullString
	id, at, session, host, argv, cwd string
	code, message                    string
}

func (r *refusalScan) dest() []any {
	return []any{&r.chainSeq, &r.prevHash, &r.hash, &r.id, &r.at, &r.session, &r.host, &r.argv,
		&r.cwd, &r.code, &r.message}
}

func (r *refusalScan) canonical(seq int64, prev string) string {
	return encodeCanonical([]any{ChainVersion, seq, prev, ChainKindRefusal, r.id, r.at, r.session,
		r.host, r.argv, r.cwd, r.code, r.message})
}

func (r *refusalScan) row() ChainRow {
	return ChainRow{Seq: r.chainSeq.Int64, Kind: ChainKindRefusal, PrevHash: r.prevHash.String,
		Hash: r.hash.String, Ref: r.id, Canonical: r.canonical(r.chainSeq.Int64, r.prevHash.String)}
}

func nullStr(s sql.NullString) any {
	if !s.Valid {
		return nil
	}
	return s.String
}

func nullInt(n sql.NullInt64) any {
	if !n.Valid {
		return nil
	}
	return n.Int64
}

// encodeCanonical writes v (strings, int64s and nils) as a compact JSON
// array: no whitespace; a string escapes only '"', '\\' and the bytes below
// 0x20 (\b \t \n \f \r, the rest as \u00xx in lowercase hex) and keeps every
// other byte as stored. This is what SQLite's json_array() and Python's
// json.dumps(v, ensure_ascii=False, separators=(",", ":")) produce.
func encodeCanonical(v []any) string {
	b := make([]byte, 0, 256)
	b = append(b, '[')
	for i, x := range v {
		if i > 0 {
			b = append(b, ',')
		}
		switch x := x.(type) {
		case nil:
			b = append(b, "null"...)
		case int64:
			b = strconv.AppendInt(b, x, 10)
		case string:
			b = appendCanonicalString(b, x)
		default:
			panic(fmt.Sprintf("jobstore: canonical value of type %T", x)) // programmer error
		}
	}
	return string(append(b, ']'))
}

func appendCanonicalString(b []byte, s string) []byte {
	const hexDigits = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\b':
			b = append(b, '\\', 'b')
		case '\t':
			b = append(b, '\\', 't')
		case '\n':
			b = append(b, '\\', 'n')
		case '\f':
			b = append(b, '\\', 'f')
		case '\r':
			b = append(b, '\\', 'r')
		default:
			if c < 0x20 {
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			} else {
				b = append(b, c)
			}
		}
	}
	return append(b, '"')
}

// The statements that append an event to the chain (chainEvent): read the
// head, read the event back, link it, move the head.
const (
	chainHeadSQL   = `SELECT seq, hash FROM chain_head WHERE id = 1`
	chainEventSQL  = eventSelect + ` WHERE e.seq = ?`
	linkEventSQL   = `UPDATE job_events SET chain_seq = ?, prev_hash = ?, hash = ? WHERE seq = ?`
	advanceHeadSQL = `UPDATE chain_head SET seq = ?, hash = ? WHERE id = 1 AND seq = ? AND hash = ?`
)

// chainHead reads the head inside the caller's transaction.
func chainHead(ctx context.Context, q querier) (ChainHead, error) {
	var h ChainHead
	if err := q.QueryRowContext(ctx, chainHeadSQL).Scan(&h.Seq, &h.Hash); err != nil {
		return h, fmt.Errorf("read chain head: %w", err)
	}
	return h, nil
}

// advanceHead moves the head from old to next: a compare-and-set, so two
// writers can never both extend the same head.
func advanceHead(ctx context.Context, q querier, old, next ChainHead) error {
	res, err := q.ExecContext(ctx, advanceHeadSQL, next.Seq, next.Hash, old.Seq, old.Hash)
	if err != nil {
		return fmt.Errorf("advance chain head: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return fmt.Errorf("advance chain head from seq %d: it moved under this transaction (%d rows, %v)", old.Seq, n, err)
	}
	return nil
}

// chainEvent appends the job_events row eventSeq, already inserted in the
// caller's write transaction, to the chain: it reads the row back with
// everything its canonical form covers, so the hash is computed from exactly
// what is stored. The job's artifact rows must be inserted before it.
func chainEvent(ctx context.Context, q querier, eventSeq int64) error {
	head, err := chainHead(ctx, q)
	if err != nil {
		return err
	}
	var e eventScan
	if err := q.QueryRowContext(ctx, chainEventSQL, eventSeq).Scan(e.dest()...); err != nil {
		return fmt.Errorf("chain event %d: %w", eventSeq, err)
	}
	next := ChainHead{Seq: head.Seq + 1}
	next.Hash = HashCanonical(e.canonical(next.Seq, head.Hash))
	if _, err := q.ExecContext(ctx, linkEventSQL, next.Seq, head.Hash, next.Hash, eventSeq); err != nil {
		return fmt.Errorf("chain event %d: %w", eventSeq, err)
	}
	return advanceHead(ctx, q, head, next)
}

// chainRefusal appends the refusals row id, already inserted in the caller's
// write transaction, to the chain.
func chainRefusal(ctx context.Context, q querier, id string) error {
	head, err := chainHead(ctx, q)
	if err != nil {
		return err
	}
	var r refusalScan
	if err := q.QueryRowContext(ctx, refusalSelect+` WHERE id = ?`, id).Scan(r.dest()...); err != nil {
		return fmt.Errorf("chain refusal %s: %w", id, err)
	}
	next := ChainHead{Seq: head.Seq + 1}
	next.Hash = HashCanonical(r.canonical(next.Seq, head.Hash))
	if _, err := q.ExecContext(ctx, `UPDATE refusals SET chain_seq = ?, prev_hash = ?, hash = ? WHERE id = ?`,
		next.Seq, head.Hash, next.Hash, id); err != nil {
		return fmt.Errorf("chain refusal %s: %w", id, err)
	}
	return advanceHead(ctx, q, head, next)
}

// insertRefusal runs insert (an INSERT INTO refusals of the row id) and
// appends that row to the chain, in one write transaction: the one way a
// refusal is recorded.
func (s *Store) insertRefusal(ctx context.Context, id, insert string, args ...any) error {
	return s.inTx(ctx, func(tx wtx) error {
		if _, err := tx.ExecContext(ctx, insert, args...); err != nil {
			return err
		}
		return chainRefusal(ctx, tx, id)
	})
}

// ChainHead returns the current head of the store's chain.
func (s *Store) ChainHead(ctx context.Context) (ChainHead, error) {
	return chainHead(ctx, s.r)
}

// JobChain returns job id's events as chained rows, in chain order, each
// with the canonical text recomputed from what is stored now.
func (s *Store) JobChain(ctx context.Context, id string) ([]ChainRow, error) {
	rows, err := s.r.QueryContext(ctx, eventSelect+` WHERE e.job_id = ? ORDER BY e.seq`, id)
	if err != nil {
		return nil, fmt.Errorf("job chain: %w", err)
	}
	defer rows.Close()
	var out []ChainRow
	for rows.Next() {
		var e eventScan
		if err := rows.Scan(e.dest()...); err != nil {
			return nil, fmt.Errorf("job chain: %w", err)
		}
		out = append(out, e.row())
	}
	return out, rows.Err()
}

// ExeSHA256 returns the sha256 of job id's executable as hashed at start,
// or "" when none was recorded.
func (s *Store) ExeSHA256(ctx context.Context, id string) (string, error) {
	var h sql.NullString
	if err := s.r.QueryRowContext(ctx, `SELECT exe_sha256 FROM jobs WHERE id = ?`, id).Scan(&h); err != nil {
		return "", fmt.Errorf("job executable hash: %w", notFound(err, "job", id))
	}
	return h.String, nil
}

// ChainedArtifact is a banked stream with the chain place of the event that
// committed to its hash (its job's settle event).
type ChainedArtifact struct {
	JobID    string       `json:"job_id"`
	Stream   bgcmd.Stream `json:"stream"`
	SHA256   string       `json:"sha256"`
	Bytes    int64        `json:"bytes"`
	ChainSeq int64        `json:"chain_seq"`
}

// ChainedArtifacts returns every banked stream whose settle event sits at
// chain place fromSeq or later, in chain order.
func (s *Store) ChainedArtifacts(ctx context.Context, fromSeq int64) ([]ChainedArtifact, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT a.job_id, a.stream, a.sha256, a.bytes, e.chain_seq
		FROM artifacts a JOIN job_events e ON e.job_id = a.job_id AND e.from_state IS NOT NULL
		WHERE e.chain_seq >= ? AND e.to_state NOT IN ('running', 'queued') ORDER BY e.chain_seq, a.stream DESC`, fromSeq)
	if err != nil {
		return nil, fmt.Errorf("chained artifacts: %w", err)
	}
	defer rows.Close()
	var out []ChainedArtifact
	for rows.Next() {
		var a ChainedArtifact
		if err := rows.Scan(&a.JobID, &a.Stream, &a.SHA256, &a.Bytes, &a.ChainSeq); err != nil {
			return nil, fmt.Errorf("chained artifacts: %w", err)
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

// keepPrunedPlaces records, before retention deletes them, the chain places
// of the rows of table (job_events or refusals) that where selects: each
// row's seq, prev_hash and hash stay in chain_pruned, so the chain still
// links across them and verification counts them as pruned. A row deleted
// any other way leaves its place empty, which verification reports.
func keepPrunedPlaces(ctx context.Context, q querier, table, where string, args ...any) error {
	kind, ref := ChainKindEvent, "job_id"
	if table == "refusals" {
		kind, ref = ChainKindRefusal, "id"
	}
	_, err := q.ExecContext(ctx, `INSERT INTO chain_pruned (chain_seq, prev_hash, hash, kind, ref, pruned_at)
		SELECT chain_seq, prev_hash, hash, '`+kind+`', `+ref+`, ? FROM `+table+`
		WHERE chain_seq IS NOT NULL AND (`+where+`)`, append([]any{fmtTime(time.Now())}, args...)...)
	if err != nil {
		return fmt.Errorf("keep the chain places of pruned %s: %w", table, err)
	}
	return nil
}
