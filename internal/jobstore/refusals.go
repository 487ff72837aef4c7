package jobstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/jmoiron/sqlx"

	"github.com/bgcmd/bgcmd"
)

// The bounds of what one refusal stores. A refused start may carry
// megabytes of argv (that is often why it was refused); its audit record
// keeps the start of it, so that refusals cannot fill the disk.
const (
	// MaxRefusalArgvBytes bounds the stored argv, as JSON.
	MaxRefusalArgvBytes = 2048
	// MaxRefusalCwdBytes bounds the stored working directory.
	MaxRefusalCwdBytes = 1024
	// MaxRefusalMessageBytes bounds the stored message.
	MaxRefusalMessageBytes = 1024
)

// RecordRefusal stores a start the policy refused, for audit. It fills
// r.ID and r.Time when empty. The record is bounded: argv (as JSON), cwd
// and message are cut to MaxRefusalArgvBytes, MaxRefusalCwdBytes and
// MaxRefusalMessageBytes (whole UTF-8 characters; argv elements past the
// bound are dropped), and r.Cut, r.ArgvCount and r.OriginalBytes are set
// as stored: whether anything was cut, how many arguments and how many
// bytes of argv, cwd and message the refused start had. r's other fields
// are left as given.
func (s *Store) RecordRefusal(ctx context.Context, r *bgcmd.Refusal) error {
	if s.readOnly {
		return ErrReadOnly
	}
	if r.ID == "" {
		r.ID = NewID()
	}
	if r.Time.IsZero() {
		r.Time = s.now().UTC()
	}
	if r.Session == "" {
		r.Session = "default"
	}
	argv, argvCut := boundArgv(r.Argv, MaxRefusalArgvBytes)
	cwd, cwdCut := cutString(r.Cwd, MaxRefusalCwdBytes)
	msg, msgCut := cutString(r.Message, MaxRefusalMessageBytes)
	r.Cut = argvCut || cwdCut || msgCut
	r.ArgvCount = len(r.Argv)
	r.OriginalBytes = int64(len(r.Cwd) + len(r.Message))
	for _, a := range r.Argv {
		r.OriginalBytes += int64(len(a))
	}
	err := s.insertRefusal(ctx, r.ID, `INSERT INTO refusals (id, at, session, host, argv, cwd, code, message,
		cut, argv_count, original_bytes) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.ID, fmtTime(r.Time), r.Session, s.host, mustJSON(argv), cwd, r.Code, msg,
		r.Cut, r.ArgvCount, r.OriginalBytes)
	if err != nil {
		return fmt.Errorf("record refusal: %w", err)
	}
	return nil
}

// boundArgv keeps the arguments of argv, in order, while their JSON
// encoding fits in budget bytes, cutting the one that crosses it; it
// reports whether anything was cut or dropped. The result is never nil.
func boundArgv(argv []string, budget int) ([]string, bool) {
	out := []string{}
	room := budget - len("[]")
	for i, a := range argv {
		if i > 0 {
			room -= len(",")
		}
		n := jsonLen(a)
		if n <= room {
			out = append(out, a)
			room -= n
			continue
		}
		if room > len(`""`) {
			a, _ = cutString(a, room-len(`""`))
			for a != "" && jsonLen(a) > room {
				// Each byte removed shortens the encoding by at least one.
				a, _ = cutString(a, len(a)-(jsonLen(a)-room))
			}
			if a != "" {
				out = append(out, a)
			}
		}
		return out, true
	}
	return out, false
}

// jsonLen is the length of s encoded as a JSON string.
func jsonLen(s string) int { return len(mustJSON(s)) }

// cutString keeps at most n bytes of s, ending on a whole UTF-8 character,
// and reports whether it cut.
func cutString(s string, n int) (string, bool) {
	if len(s) <= n {
		return s, false
	}
	if n <= 0 {
		return "", true
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n], true
}

// Refusals returns the newest refusals first, at most limit (0 means 50).
func (s *Store) Refusals(ctx context.Context, limit int) ([]bgcmd.Refusal, error) {
	if limit <= 0 {
		limit = 50
	}
	rows, err := s.r.QueryxContext(ctx, `SELECT id, at, session, argv, cwd, code, message, cut,
		argv_count, original_bytes FROM refusals ORDER BY at DESC, id DESC LIMIT ?`, limit)
	if err != nil {
		return nil, fmt.Errorf("list refusals: %w", err)
	}
	defer rows.Close()
	var out []bgcmd.Refusal
	for rows.Next() {
		var r bgcmd.Refusal
		var at, argv string
		if err := rows.Scan(&r.ID, &at, &r.Session, &argv, &r.Cwd, &r.Code, &r.Message, &r.Cut,
			&r.ArgvCount, &r.OriginalBytes); err != nil {
			return nil, fmt.Errorf("list refusals: %w", err)
		}
		if r.Time, err = parseTime(at); err != nil {
			return nil, err
		}
		if err := json.Unmarshal([]byte(argv), &r.Argv); err != nil {
			return nil, errors.Join(fmt.Errorf("list refusals: decode argv"), err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// pruneRefusals deletes (or, dry, counts) the refusals recorded before
// before, of session when it is not "", a batch per transaction.
func (s *Store) pruneRefusals(ctx context.Context, before time.Time, session string, dry bool) (int64, error) {
	where := `at < ?`
	args := []any{fmtTime(before)}
	if session != "" {
		where += ` AND session = ?`
		args = append(args, session)
	}
	if dry {
		var n int64
		if err := s.r.GetContext(ctx, &n, `SELECT COUNT(*) FROM refusals WHERE `+where, args...); err != nil {
			return 0, fmt.Errorf("prune refusals: %w", err)
		}
		return n, nil
	}
	var total int64
	for {
		var n int64
		err := s.inTx(ctx, func(tx wtx) error {
			var ids []string
			if err := tx.SelectContext(ctx, &ids, `SELECT id FROM refusals WHERE `+where+` LIMIT ?`,
				append(args, DefaultPruneBatch)...); err != nil || len(ids) == 0 {
				return err
			}
			in, inArgs, err := sqlx.In(`id IN (?)`, ids)
			if err != nil {
				return err
			}
			// The chain keeps the places of what goes, so it still links.
			if err := keepPrunedPlaces(ctx, tx, "refusals", in, inArgs...); err != nil {
				return err
			}
			res, err := tx.ExecContext(ctx, `DELETE FROM refusals WHERE `+in, inArgs...)
			if err != nil {
				return err
			}
			n, err = res.RowsAffected()
			return err
		})
		if err != nil {
			return total, fmt.Errorf("prune refusals: %w", err)
		}
		total += n
		if n < DefaultPruneBatch {
			return total, nil
		}
	}
}
