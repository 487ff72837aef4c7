package jobstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/bgcmd/bgcmd"
)

// This file keeps banked output in the store itself, for stores that
// several hosts share (Options.ShareArtifacts): one artifact_blobs row per
// distinct content, named by its sha256 as the files are, and its bytes in
// artifact_chunks rows of at most ChunkSize, in order. The statements are
// portable SQL.

// ChunkSize is the largest artifact_chunks.data value.
const ChunkSize = 512 << 10

// ErrNoBlob is returned by ReadBlob when the store does not hold the
// content: it was banked by a host that does not share its artifacts, or
// retention removed it.
var ErrNoBlob = errors.New("output not in the store")

// HasBlob reports whether the store holds the whole content with this
// sha256 (a blob row is written with all its chunks).
func (s *Store) HasBlob(ctx context.Context, sha string) (bool, error) {
	var n int
	if err := s.r.GetContext(ctx, &n, `SELECT COUNT(*) FROM artifact_blobs WHERE sha256 = ?`, sha); err != nil {
		return false, fmt.Errorf("look up output %s in the store: %w", sha, err)
	}
	return n == 1, nil
}

// PutBlob stores size bytes read from r under sha (the caller hashed
// them: a host banks its own files) in one transaction: the blob row and
// every chunk, or nothing. Content already there is not written again, but
// its created_at is moved to now: the job about to name it is running, and
// retention keeps every blob stored since the oldest running job began
// (deleteBlobsTx), so a prune on another host between this store and the
// settle that names the content cannot remove it.
func (s *Store) PutBlob(ctx context.Context, sha string, size int64, r io.Reader) error {
	if !bgcmd.ValidSHA256(sha) {
		return fmt.Errorf("store output: malformed sha256 %q", sha)
	}
	chunks := (size + ChunkSize - 1) / ChunkSize
	err := s.inTx(ctx, func(tx wtx) error {
		at := fmtTime(s.now())
		res, err := tx.ExecContext(ctx, `UPDATE artifact_blobs SET created_at = ? WHERE sha256 = ?`, at, sha)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 1 {
			return err // stored before: only touched
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO artifact_blobs (sha256, bytes, chunks, created_at)
			VALUES (?, ?, ?, ?)`, sha, size, chunks, at); err != nil {
			return err
		}
		buf := make([]byte, ChunkSize)
		for seq := int64(0); seq < chunks; seq++ {
			want := min(ChunkSize, size-seq*ChunkSize)
			if _, err := io.ReadFull(r, buf[:want]); err != nil {
				return fmt.Errorf("read chunk %d: %w", seq, err)
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO artifact_chunks (sha256, seq, data) VALUES (?, ?, ?)`,
				sha, seq, buf[:want]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store output %s: %w", sha, err)
	}
	return nil
}

// ReadBlob writes the content stored under sha to w, chunk by chunk, and
// returns its size. It fails with ErrNoBlob when the store does not hold
// it, and names a chunk missing or of the wrong length (the store was
// edited): nothing short is passed off as whole.
func (s *Store) ReadBlob(ctx context.Context, sha string, w io.Writer) (int64, error) {
	var blob struct {
		Bytes  int64 `db:"bytes"`
		Chunks int64 `db:"chunks"`
	}
	err := s.r.GetContext(ctx, &blob, `SELECT bytes, chunks FROM artifact_blobs WHERE sha256 = ?`, sha)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("read output %s: %w", sha, ErrNoBlob)
	}
	if err != nil {
		return 0, fmt.Errorf("read output %s: %w", sha, err)
	}
	rows, err := s.r.QueryxContext(ctx, `SELECT seq, data FROM artifact_chunks WHERE sha256 = ? ORDER BY seq`, sha)
	if err != nil {
		return 0, fmt.Errorf("read output %s: %w", sha, err)
	}
	defer rows.Close()
	var n, next int64
	for rows.Next() {
		var seq int64
		var data []byte
		if err := rows.Scan(&seq, &data); err != nil {
			return n, fmt.Errorf("read output %s: %w", sha, err)
		}
		if seq != next || int64(len(data)) != min(ChunkSize, blob.Bytes-seq*ChunkSize) {
			return n, fmt.Errorf("read output %s: chunk %d is missing or torn (the store was edited?)", sha, next)
		}
		if _, err := w.Write(data); err != nil {
			return n, fmt.Errorf("read output %s: %w", sha, err)
		}
		n += int64(len(data))
		next++
	}
	if err := rows.Err(); err != nil {
		return n, fmt.Errorf("read output %s: %w", sha, err)
	}
	if next != blob.Chunks || n != blob.Bytes {
		return n, fmt.Errorf("read output %s: %d of %d chunks (%d of %d bytes) in the store (the store was edited?)",
			sha, next, blob.Chunks, n, blob.Bytes)
	}
	return n, nil
}

// DeleteUnreferencedBlobs deletes the stored content of each of shas that
// no artifacts row names (prune calls it with the ones its deleted rows
// named), chunks and all, and returns how many went. A read first says
// which of them the store holds at all: most outputs are kept in files
// only, and a prune of a hundred thousand jobs would otherwise take the
// write lock two hundred times to delete nothing.
func (s *Store) DeleteUnreferencedBlobs(ctx context.Context, shas []string) (int, error) {
	total := 0
	for start := 0; start < len(shas); start += DefaultPruneBatch {
		var part []string
		if err := selectIn(ctx, s.r, &part, `SELECT sha256 FROM artifact_blobs WHERE sha256 IN (?)`,
			shas[start:min(start+DefaultPruneBatch, len(shas))]); err != nil {
			return total, fmt.Errorf("delete stored output: %w", err)
		}
		if len(part) == 0 {
			continue
		}
		err := s.inTx(ctx, func(tx wtx) error {
			n, err := deleteBlobsTx(ctx, tx, `sha256 IN (?) AND`, part)
			total += n
			return err
		})
		if err != nil {
			return total, fmt.Errorf("delete stored output: %w", err)
		}
	}
	return total, nil
}

// DeleteStrayBlobs deletes stored content that no artifacts row names and
// that was stored before olderThan (gc: a host may be between storing its
// output and recording the settle that names it).
func (s *Store) DeleteStrayBlobs(ctx context.Context, olderThan time.Time) (int, error) {
	var total int
	err := s.inTx(ctx, func(tx wtx) error {
		var err error
		total, err = deleteBlobsTx(ctx, tx, `created_at < ? AND`, fmtTime(olderThan))
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("delete stray stored output: %w", err)
	}
	return total, nil
}

// deleteBlobsTx deletes the unreferenced blobs that also match cond (a
// condition ending in AND) and their chunks. A blob stored (or stored
// again, PutBlob) since the oldest running job was created stays whatever
// cond says: that job may have stored it and not yet settled, on any host.
// Times compare as fixed-width text on both backends.
func deleteBlobsTx(ctx context.Context, tx wtx, cond string, arg any) (int, error) {
	where := cond + ` NOT EXISTS (SELECT 1 FROM artifacts a WHERE a.sha256 = artifact_blobs.sha256)
		AND NOT EXISTS (SELECT 1 FROM jobs j WHERE j.state = 'running' AND j.created_at <= artifact_blobs.created_at)`
	q, args, err := sqlx.In(`SELECT sha256 FROM artifact_blobs WHERE `+where, arg)
	if err != nil {
		return 0, err
	}
	var shas []string
	if err := tx.SelectContext(ctx, &shas, q, args...); err != nil || len(shas) == 0 {
		return 0, err
	}
	for _, stmt := range []string{`DELETE FROM artifact_chunks WHERE sha256 IN (?)`, `DELETE FROM artifact_blobs WHERE sha256 IN (?)`} {
		q, args, err := sqlx.In(stmt, shas)
		if err != nil {
			return 0, err
		}
		if _, err := tx.ExecContext(ctx, q, args...); err != nil {
			return 0, err
		}
	}
	return len(shas), nil
}
