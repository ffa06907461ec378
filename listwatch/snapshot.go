package listwatch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// The levers that take an embedded etcd's revision back: Snapshot copies
// its data aside, Restore puts a copy back, Wipe starts it empty. Each
// stops etcd and starts it again, as a restart does.

// ErrNoSnapshot is returned by Restore for a name Snapshot never took.
var ErrNoSnapshot = errors.New("listwatch: no such snapshot")

// snapshotsDir holds Snapshot's copies. It is inside the data directory,
// beside etcd's own "member" directory (the only one etcd reads), so
// that whatever removes the data directory removes them too.
const snapshotsDir = "cachelab-snapshots"

// Snapshot stops the server, copies its data (etcd's member directory:
// the database and the write-ahead log) under name, and starts it again
// on the same directory and ports, as Restart does: clients see a
// restart. A snapshot of the same name is replaced. It is a cold copy of
// one member's disk, the simplest backup there is; `etcdutl snapshot
// restore` of a `snapshot save` would come back at the same revision too.
func (e *Embedded) Snapshot(ctx context.Context, name string) error {
	if err := checkSnapshotName(name); err != nil {
		return err
	}
	if err := e.singleMember("Snapshot"); err != nil {
		return err
	}
	e.stop()
	dst := e.snapshotPath(name)
	err := os.RemoveAll(dst)
	if err == nil {
		err = copyTree(e.memberDir(), dst)
	}
	if err != nil {
		err = fmt.Errorf("listwatch: snapshot %s: %w", name, err)
	}
	return errors.Join(err, e.start(ctx))
}

// Restore stops the server, puts the data Snapshot saved under name back
// in place of its own, and starts it again on the same ports. Its
// revision is the snapshot's: resourceVersions go backwards, and every
// write made since is gone. Clients see a restart, and etcd's client
// resumes its watches from the revisions they had reached, which the
// restored etcd has not (a watch from a future revision waits for it
// silently).
func (e *Embedded) Restore(ctx context.Context, name string) error {
	if err := checkSnapshotName(name); err != nil {
		return err
	}
	if err := e.singleMember("Restore"); err != nil {
		return err
	}
	src := e.snapshotPath(name)
	if _, err := os.Stat(src); err != nil {
		return fmt.Errorf("%w: %q (%v)", ErrNoSnapshot, name, err)
	}
	e.stop()
	err := os.RemoveAll(e.memberDir())
	if err == nil {
		err = copyTree(src, e.memberDir())
	}
	if err != nil {
		err = fmt.Errorf("listwatch: restore %s: %w", name, err)
	}
	return errors.Join(err, e.start(ctx))
}

// Wipe stops the server, removes its data, and starts it again, empty,
// on the same ports: a new member whose revision starts again at 1.
// Snapshots are kept.
func (e *Embedded) Wipe(ctx context.Context) error {
	if err := e.singleMember("Wipe"); err != nil {
		return err
	}
	e.stop()
	err := os.RemoveAll(e.memberDir())
	if err != nil {
		err = fmt.Errorf("listwatch: wipe: %w", err)
	}
	return errors.Join(err, e.start(ctx))
}

func (e *Embedded) memberDir() string { return filepath.Join(e.dir, "member") }

// singleMember refuses a lever that works on one member's data directory
// when e is a cluster: copying one member's disk back would leave it
// disagreeing with the others' raft logs.
func (e *Embedded) singleMember(what string) error {
	if e.cluster() {
		return fmt.Errorf("%w: %s works on a single-member etcd, and this one has %d members "+
			"(a member's data copied back would disagree with the others' raft logs)", ErrCluster, what, len(e.members))
	}
	return nil
}

func (e *Embedded) snapshotPath(name string) string {
	return filepath.Join(e.dir, snapshotsDir, name)
}

// checkSnapshotName keeps a snapshot's name one path element.
func checkSnapshotName(name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, `/\`) || !filepath.IsLocal(name) {
		return fmt.Errorf("listwatch: snapshot name %q: want one file name", name)
	}
	return nil
}

// copyTree copies the directory src to dst, which must not exist:
// directories, and regular files with their permissions. etcd is stopped,
// so nothing changes under it.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.MkdirAll(to, info.Mode().Perm())
		case d.Type().IsRegular():
			return copyFile(path, to, info.Mode().Perm())
		}
		return fmt.Errorf("%s: not a regular file or directory", path)
	})
}

func copyFile(src, dst string, perm fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
