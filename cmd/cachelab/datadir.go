package main

import (
	"fmt"
	"os"
)

// The embedded etcd's data directory (over 100 MB in $TMPDIR, 256 MB for
// a cluster) belongs to the CLI: it makes the directory before etcd
// starts and removes it after the run's session is closed. So at every
// moment, even while etcd is starting, whatever ends the process early (a
// second signal, a panic on another goroutine) knows what to remove.

// makeDataDir makes an empty data directory for the run's embedded
// etcd, or none ("") for a run on an external one.
func (m *Main) makeDataDir(o *runOptions) (string, error) {
	if len(o.etcd.Endpoints) > 0 {
		return "", nil
	}
	dir, err := os.MkdirTemp("", "cachelab-etcd-")
	if err != nil {
		return "", fmt.Errorf("the embedded etcd's data directory: %w", err)
	}
	m.mu.Lock()
	m.dataDir = dir
	m.mu.Unlock()
	return dir, nil
}

// dropDataDir removes the run's data directory, once its session is
// closed (etcd stopped), and says so on stderr if it cannot.
func (m *Main) dropDataDir() {
	m.mu.Lock()
	dir := m.dataDir
	m.dataDir = ""
	m.mu.Unlock()
	if dir == "" {
		return
	}
	if err := removeDataDir(dir); err != nil {
		fmt.Fprintf(m.Stderr, "cachelab: the embedded etcd's data directory: %v\n", err)
	}
}

// removeDataDir removes dir and everything in it. etcd may still be
// running (a second signal does not wait for it to stop) and create a
// file while the directory is emptied, which makes the last step fail:
// so it tries a few times.
func removeDataDir(dir string) error {
	var err error
	for range 3 {
		if err = os.RemoveAll(dir); err == nil {
			return nil
		}
	}
	return err
}
