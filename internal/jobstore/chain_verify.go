package jobstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/bgcmd/bgcmd"
)

// The problems VerifyChain names.
const (
	// ChainContentMismatch: the row's content (or, for an event, its job's
	// recorded start or outcome, or its banked artifacts' hashes) no longer
	// hashes to the hash recorded with it.
	ChainContentMismatch = "content_mismatch"
	// ChainBrokenLink: the row's prev_hash is not the hash of the row before.
	ChainBrokenLink = "broken_link"
	// ChainMissingSeq: no row holds this place in the chain (a row deleted,
	// or its place edited).
	ChainMissingSeq = "missing_seq"
	// ChainDuplicateSeq: two rows claim the same place.
	ChainDuplicateSeq = "duplicate_seq"
	// ChainUnchainedRow: a row without a place in the chain (inserted by
	// something other than bgcmd).
	ChainUnchainedRow = "unchained_row"
	// ChainHeadMismatch: the chain does not end where the head says (rows
	// at its end deleted, or the head edited).
	ChainHeadMismatch = "head_mismatch"
	// ChainCheckpointNotFound: no row carries the hash verification was
	// asked to start from (the history was rewritten after it was recorded).
	ChainCheckpointNotFound = "checkpoint_not_found"
)

// ChainProblem is the first row of the chain that does not verify.
type ChainProblem struct {
	Seq     int64  `json:"seq"`
	Kind    string `json:"kind,omitempty"`
	Ref     string `json:"ref,omitempty"`
	Problem string `json:"problem"`
	Detail  string `json:"detail"`
}

// Error says what is wrong, where.
func (p *ChainProblem) Error() string {
	where := fmt.Sprintf("chain row %d", p.Seq)
	if p.Seq == 0 {
		where = "chain"
	}
	if p.Kind != "" {
		where += fmt.Sprintf(" (%s %s)", p.Kind, p.Ref)
	}
	return fmt.Sprintf("%s: %s: %s", where, p.Problem, p.Detail)
}

// VerifyChainParams choose where verification starts.
type VerifyChainParams struct {
	// Since, when set, is a hash an operator recorded from ChainHead
	// earlier: verification starts at the row that carries it (which must
	// still recompute to it) instead of the first row.
	Since string
}

// ChainReport is what VerifyChain walked.
type ChainReport struct {
	// From is where the walk started: seq 0 and GenesisHash, or the
	// checkpoint's row.
	From ChainHead `json:"from"`
	// Head is the store's head as read at the start of the walk.
	Head     ChainHead `json:"head"`
	Rows     int64     `json:"rows"`
	Events   int64     `json:"events"`
	Refusals int64     `json:"refusals"`
	// Pruned counts places kept for rows retention deleted.
	Pruned int64 `json:"pruned"`
	// Problem is the first row that does not verify; nil when all do.
	Problem *ChainProblem `json:"problem,omitempty"`
}

// OK reports whether the whole walk verified.
func (r *ChainReport) OK() bool { return r.Problem == nil }

// VerifyChain recomputes the chain, in one read snapshot, from the first row
// (or from p.Since) to the head: every row's hash from its content and
// prev_hash, every link, every place from the start to the head exactly
// once. It stops at the first row that does not verify and names it in the
// report's Problem. The error is for a store it could not read.
func (s *Store) VerifyChain(ctx context.Context, p VerifyChainParams) (*ChainReport, error) {
	tx, err := s.r.BeginTx(ctx, s.d.snapshotTx())
	if err != nil {
		return nil, fmt.Errorf("verify chain: %w", err)
	}
	defer tx.Rollback()
	rep := &ChainReport{From: ChainHead{Seq: 0, Hash: GenesisHash}}
	if rep.Head, err = chainHead(ctx, tx); err != nil {
		return nil, fmt.Errorf("verify chain: %w", err)
	}
	since := strings.ToLower(strings.TrimSpace(p.Since))
	if since != "" && !bgcmd.ValidSHA256(since) {
		return nil, fmt.Errorf("verify chain: --since %q is not a recorded head hash (64 hex digits, as bgcmd verify --chain --head prints it)", p.Since)
	}
	if since != "" && since != GenesisHash {
		var seq int64
		var prev string
		err := tx.QueryRowContext(ctx, `SELECT chain_seq, prev_hash FROM job_events WHERE hash = ?
			UNION ALL SELECT chain_seq, prev_hash FROM refusals WHERE hash = ?
			UNION ALL SELECT chain_seq, prev_hash FROM chain_pruned WHERE hash = ?
			ORDER BY 1 LIMIT 1`, since, since, since).Scan(&seq, &prev)
		if errors.Is(err, sql.ErrNoRows) {
			rep.Problem = &ChainProblem{Problem: ChainCheckpointNotFound,
				Detail: fmt.Sprintf("no row carries hash %s: the history it named was rewritten or deleted after it was recorded", since)}
			return rep, nil
		}
		if err != nil {
			return nil, fmt.Errorf("verify chain: find checkpoint: %w", err)
		}
		rep.From = ChainHead{Seq: seq - 1, Hash: prev}
		defer func() {
			if rep.Problem == nil && rep.Rows > 0 {
				rep.From = ChainHead{Seq: seq, Hash: since}
			}
		}()
	}
	if rep.Problem, err = firstUnchained(ctx, tx); err != nil || rep.Problem != nil {
		return rep, err
	}
	return rep, walkChain(ctx, tx, rep)
}

// firstUnchained finds a row that carries no place in the chain.
func firstUnchained(ctx context.Context, tx *sql.Tx) (*ChainProblem, error) {
	var seq int64
	err := tx.QueryRowContext(ctx, `SELECT seq FROM job_events WHERE chain_seq IS NULL OR hash IS NULL
		OR prev_hash IS NULL ORDER BY seq LIMIT 1`).Scan(&seq)
	if err == nil {
		return &ChainProblem{Kind: ChainKindEvent, Ref: fmt.Sprintf("job_events seq %d", seq), Problem: ChainUnchainedRow,
			Detail: "the event has no place in the chain: it was not recorded by bgcmd"}, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("verify chain: %w", err)
	}
	var id string
	err = tx.QueryRowContext(ctx, `SELECT id FROM refusals WHERE chain_seq IS NULL OR hash IS NULL
		OR prev_hash IS NULL ORDER BY at LIMIT 1`).Scan(&id)
	if err == nil {
		return &ChainProblem{Kind: ChainKindRefusal, Ref: id, Problem: ChainUnchainedRow,
			Detail: "the refusal has no place in the chain: it was not recorded by bgcmd"}, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("verify chain: %w", err)
	}
	return nil, nil
}

// chainPage is how many rows a chainCursor reads at a time.
const chainPage = 1000

// chainCursor yields one table's chained rows in chain order, a page at a
// time: the walk merges three tables, and a PostgreSQL connection reads one
// result at a time, so no cursor keeps its rows open between pages.
type chainCursor struct {
	ctx  context.Context
	tx   *sql.Tx
	q    string // rows with chain_seq >= ?, in chain order, LIMIT ?
	next int64  // the chain_seq the next page starts at
	scan func(*sql.Rows) (ChainRow, error)
	page []ChainRow
	done bool
	cur  *ChainRow
}

func (c *chainCursor) advance() error {
	c.cur = nil
	if len(c.page) == 0 && !c.done {
		if err := c.fill(); err != nil {
			return err
		}
	}
	if len(c.page) == 0 {
		return nil
	}
	c.cur = &c.page[0]
	c.page = c.page[1:]
	return nil
}

// fill reads the next page.
func (c *chainCursor) fill() error {
	rows, err := c.tx.QueryContext(c.ctx, c.q, c.next, chainPage)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		r, err := c.scan(rows)
		if err != nil {
			return err
		}
		c.page = append(c.page, r)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if len(c.page) < chainPage {
		c.done = true
	}
	if n := len(c.page); n > 0 {
		c.next = c.page[n-1].Seq + 1
	}
	return nil
}

// walkChain merges the three chained tables in chain order and checks each
// row against the one before.
func walkChain(ctx context.Context, tx *sql.Tx, rep *ChainReport) error {
	from := rep.From.Seq + 1
	queries := []struct {
		q    string
		scan func(*sql.Rows) (ChainRow, error)
	}{
		{eventSelect + ` WHERE e.chain_seq >= ? ORDER BY e.chain_seq LIMIT ?`, func(rs *sql.Rows) (ChainRow, error) {
			var e eventScan
			err := rs.Scan(e.dest()...)
			return e.row(), err
		}},
		{refusalSelect + ` WHERE chain_seq >= ? ORDER BY chain_seq LIMIT ?`, func(rs *sql.Rows) (ChainRow, error) {
			var r refusalScan
			err := rs.Scan(r.dest()...)
			return r.row(), err
		}},
		{`SELECT chain_seq, prev_hash, hash, kind, ref FROM chain_pruned WHERE chain_seq >= ? ORDER BY chain_seq LIMIT ?`,
			func(rs *sql.Rows) (ChainRow, error) {
				r := ChainRow{Pruned: true}
				err := rs.Scan(&r.Seq, &r.PrevHash, &r.Hash, &r.Kind, &r.Ref)
				return r, err
			}},
	}
	var cursors []*chainCursor
	for _, q := range queries {
		c := &chainCursor{ctx: ctx, tx: tx, q: q.q, next: from, scan: q.scan}
		if err := c.advance(); err != nil {
			return fmt.Errorf("verify chain: %w", err)
		}
		cursors = append(cursors, c)
	}
	want, prev := from, rep.From.Hash
	for {
		var next *chainCursor
		for _, c := range cursors {
			if c.cur != nil && (next == nil || c.cur.Seq < next.cur.Seq) {
				next = c
			}
		}
		if next == nil || next.cur.Seq > rep.Head.Seq {
			break
		}
		r := next.cur
		if p := checkRow(r, want, prev); p != nil {
			rep.Problem = p
			return nil
		}
		rep.Rows++
		switch {
		case r.Pruned:
			rep.Pruned++
		case r.Kind == ChainKindEvent:
			rep.Events++
		default:
			rep.Refusals++
		}
		prev = r.Hash
		want++
		if err := next.advance(); err != nil {
			return fmt.Errorf("verify chain: %w", err)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	for _, c := range cursors {
		if c.cur != nil && c.cur.Seq > rep.Head.Seq {
			rep.Problem = &ChainProblem{Seq: c.cur.Seq, Kind: c.cur.Kind, Ref: c.cur.Ref, Problem: ChainHeadMismatch,
				Detail: fmt.Sprintf("the row claims place %d, past the head (seq %d): it was not appended by bgcmd", c.cur.Seq, rep.Head.Seq)}
			return nil
		}
	}
	if want-1 != rep.Head.Seq || prev != rep.Head.Hash {
		rep.Problem = &ChainProblem{Seq: want, Problem: ChainHeadMismatch,
			Detail: fmt.Sprintf("the head names seq %d (hash %s) but the chain ends at seq %d (hash %s): rows at its end were deleted, or the head was edited",
				rep.Head.Seq, rep.Head.Hash, want-1, prev)}
		if want-1 < rep.Head.Seq {
			rep.Problem.Problem = ChainMissingSeq
		}
	}
	return nil
}

// checkRow checks r, expected at place want after a row hashing to prev.
func checkRow(r *ChainRow, want int64, prev string) *ChainProblem {
	p := &ChainProblem{Seq: r.Seq, Kind: r.Kind, Ref: r.Ref}
	if r.Pruned {
		p.Kind = "pruned " + r.Kind
	}
	switch {
	case r.Seq < want:
		p.Problem = ChainDuplicateSeq
		p.Detail = fmt.Sprintf("another row already holds place %d", r.Seq)
	case r.Seq > want:
		p = &ChainProblem{Seq: want, Problem: ChainMissingSeq,
			Detail: fmt.Sprintf("no row holds place %d (the next row found is %d): a row was deleted or its place edited", want, r.Seq)}
	case r.PrevHash != prev:
		p.Problem = ChainBrokenLink
		p.Detail = fmt.Sprintf("its prev_hash is %s but the row before hashes to %s: rows were reordered, removed or rewritten", r.PrevHash, prev)
	case !r.Pruned && r.Recomputed() != r.Hash:
		p.Problem = ChainContentMismatch
		what := "its id, time, session, host, argv, cwd, code or message"
		if r.Kind == ChainKindEvent {
			what = "the event, its job's recorded start (argv, exe, exe_sha256, cwd, env names) or outcome (exit code, signal, error), or its banked artifacts' hashes"
		}
		p.Detail = fmt.Sprintf("the stored content hashes to %s, not the recorded %s: %s changed after it was recorded",
			r.Recomputed(), r.Hash, what)
	default:
		return nil
	}
	return p
}
