package jobstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

// MinIDRef is the shortest prefix or suffix of a job id ResolveID accepts.
const MinIDRef = 4

// ErrBadIDRef is wrapped by ResolveID's error for a reference that cannot
// name a job: too short, too long, or not made of hex digits and dashes.
var ErrBadIDRef = errors.New("bad job id reference")

// maxCandidates bounds the candidates an AmbiguousIDError lists.
const maxCandidates = 10

// IDCandidate is one job an ambiguous id reference could mean.
type IDCandidate struct {
	ID        string    `db:"id"`
	Argv      string    `db:"argv"`
	CreatedAt time.Time `db:"-"`
	Created   string    `db:"created_at"`
}

// AmbiguousIDError says that an id reference matches more than one job.
type AmbiguousIDError struct {
	// Ref is the reference as given.
	Ref string
	// Candidates are the matching jobs, newest first (at most ten).
	Candidates []IDCandidate
	// More is true when more jobs matched than are listed.
	More bool
}

func (e *AmbiguousIDError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "job id %q is ambiguous: it matches", e.Ref)
	if e.More {
		fmt.Fprintf(&b, " more than %d jobs, among them", len(e.Candidates))
	} else {
		fmt.Fprintf(&b, " %d jobs", len(e.Candidates))
	}
	for _, c := range e.Candidates {
		fmt.Fprintf(&b, "\n  %s  %s", c.ID, c.Argv)
	}
	b.WriteString("\ngive more characters of the id")
	return b.String()
}

// ResolveID turns a reference to a job into its full id, the way git takes
// an abbreviated hash: the full id, or a unique prefix or unique suffix of
// at least MinIDRef characters (hex digits and dashes, any case). A
// reference matching no job wraps bgcmd.ErrNotFound; one matching several
// is an *AmbiguousIDError listing them; a malformed one is an error saying
// what an id looks like. A full id is returned unchecked (Get tells whether
// it exists).
func (s *Store) ResolveID(ctx context.Context, ref string) (string, error) {
	id := strings.ToLower(strings.TrimSpace(ref))
	if len(id) == 36 {
		return id, nil
	}
	if len(id) < MinIDRef {
		return "", fmt.Errorf("%w: job id %q is too short: give at least %d characters of it (a prefix or a suffix, as bgcmd list shows)", ErrBadIDRef, ref, MinIDRef)
	}
	if len(id) > 36 || strings.Trim(id, "0123456789abcdef-") != "" {
		return "", fmt.Errorf("%w: %q is not a job id: ids are UUIDs such as 0190f7c2-8f1e-7b8a-9c61-3f0e2d4a5b6c, and a unique prefix or suffix of one will do", ErrBadIDRef, ref)
	}
	// A prefix walks the primary key's index; a suffix (the random end of
	// a UUIDv7, unique from its first characters) scans the table.
	var found []IDCandidate
	err := s.r.SelectContext(ctx, &found, `SELECT id, argv, created_at FROM jobs
		WHERE `+s.d.idMatch()+`
		ORDER BY id DESC LIMIT ?`, id, id, maxCandidates+1)
	if err != nil {
		return "", fmt.Errorf("resolve job id %q: %w", ref, err)
	}
	switch len(found) {
	case 0:
		return "", fmt.Errorf("resolve job id: %w", notFound(sql.ErrNoRows, "job", ref))
	case 1:
		return found[0].ID, nil
	}
	e := &AmbiguousIDError{Ref: ref, More: len(found) > maxCandidates}
	for _, c := range found[:min(len(found), maxCandidates)] {
		c.CreatedAt, _ = parseTime(c.Created)
		e.Candidates = append(e.Candidates, c)
	}
	return "", e
}
