// Package hostid gives each bgcmd home a stable host identity: a random
// UUID kept in the file <home>/host, created once (0600) and read ever
// after. Job rows record it beside the machine's hostname, so two machines
// with the same hostname sharing one store never judge each other's jobs,
// and renaming a machine does not orphan its history.
package hostid

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/uuid"
	"golang.org/x/sys/unix"

	"github.com/bgcmd/bgcmd/internal/atomicfile"
)

// FileName is the file in the home that holds the host id.
const FileName = "host"

// Identity names the host a home belongs to: ID is stable for the home,
// Name is the machine's hostname now (shown to people, never compared).
type Identity struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// Load returns the identity of home, creating the id file (a new random
// UUID, 0600) when it does not exist yet. Two processes creating it at once
// agree: the file is created by a hard link that fails when another won,
// and the loser reads the winner's id. A file that is not ours, not a
// regular file, a symlink, or does not hold a UUID is an error naming it:
// bgcmd never replaces it, since the jobs recorded under it would be
// orphaned.
func Load(home string) (Identity, error) {
	name, err := os.Hostname()
	if err != nil {
		return Identity{}, fmt.Errorf("host identity: hostname: %w", err)
	}
	path := filepath.Join(home, FileName)
	id, err := read(path)
	if errors.Is(err, os.ErrNotExist) {
		id, err = create(path)
	}
	if err != nil {
		return Identity{}, err
	}
	return Identity{ID: id, Name: name}, nil
}

// read reads and checks an existing id file without following a symlink.
func read(path string) (string, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, unix.ENOENT) {
			return "", os.ErrNotExist
		}
		return "", fmt.Errorf("host identity %s: %w (remove it if it is not bgcmd's host id file)", path, err)
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("host identity %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("host identity %s: not a regular file (remove it; bgcmd creates a new host id)", path)
	}
	if st, ok := fi.Sys().(*unix.Stat_t); ok && int(st.Uid) != os.Getuid() {
		return "", fmt.Errorf("host identity %s: owned by uid %d, not by this user (remove it; bgcmd creates a new host id)", path, st.Uid)
	}
	b, err := io.ReadAll(io.LimitReader(f, 128))
	if err != nil {
		return "", fmt.Errorf("host identity %s: %w", path, err)
	}
	id := strings.TrimSpace(string(b))
	u, err := uuid.Parse(id)
	if err != nil {
		return "", fmt.Errorf("host identity %s: %q is not a UUID (restore the file from a backup, or remove it to start a new host id: its running jobs are then reconciled by no one)", path, id)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		_ = f.Chmod(0o600)
	}
	return u.String(), nil
}

// create writes a new id to a temporary file and links it into place; when
// another process linked first, its id is read instead.
func create(path string) (string, error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("host identity: create %s: %w", dir, err)
	}
	f, err := os.CreateTemp(dir, "."+FileName+".tmp*")
	if err != nil {
		return "", fmt.Errorf("host identity: %w", err)
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	id := uuid.NewString()
	_, err = f.WriteString(id + "\n")
	if err == nil {
		err = f.Chmod(0o600)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("host identity: write %s: %w", tmp, err)
	}
	if err := os.Link(tmp, path); err != nil {
		if errors.Is(err, os.ErrExist) {
			return read(path)
		}
		return "", fmt.Errorf("host identity: create %s: %w", path, err)
	}
	if err := atomicfile.SyncDir(dir); err != nil {
		return "", fmt.Errorf("host identity: %w", err)
	}
	return id, nil
}
