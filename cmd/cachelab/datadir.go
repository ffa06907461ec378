package main

import (
	"fmt"
	"os"
	"sync/atomic"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// The embedded etcd's data directory (over 100 MB in $TMPDIR, 256 MB for
// a cluster) belongs to the CLI: it makes the directory before etcd
// starts and removes it after the run's session is closed. So at every
// moment, even while etcd is starting, whatever ends the process early (a
// second signal, a panic on another goroutine) knows what to remove.
// explore runs many etcds, up to --jobs at once, each for a moment: the
// CLI makes one directory for the whole exploration, in which each run
// makes its own (sim.Options.EtcdTempDir), and removes that.

// makeDataDir makes an empty data directory for the run's embedded
// etcd, or none ("") for a run on an external one.
func (m *Main) makeDataDir(o *runOptions) (string, error) {
	if len(o.etcd.Endpoints) > 0 {
		return "", nil
	}
	return m.ownDataDir("cachelab-etcd-")
}

// makeRunsDir makes the directory in which each of explore's runs makes
// its embedded etcd's data directory.
func (m *Main) makeRunsDir() (string, error) { return m.ownDataDir("cachelab-explore-") }

// ownDataDir makes a new directory in $TMPDIR, named from pattern, as
// the one to remove however the process ends.
func (m *Main) ownDataDir(pattern string) (string, error) {
	dir, err := os.MkdirTemp("", pattern)
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

// etcdLogger is the logger of the run's embedded etcd: silent, as
// listwatch's default, with etcd's fatal errors held while the process
// ends at once. A second signal (atOnce) or a crash (crash.go) removes
// the data directory under etcds that may still run, and etcd ends the
// process at its first write that finds its files gone: through its
// logger's Fatal (exit 1, which says "client-go differed") or Panic
// (exit 2, with a stack), before the CLI has said what it removed and
// exited with its own status. Held, that goroutine waits for the end.
func (m *Main) etcdLogger() *zap.Logger {
	forever := func() { select {} }
	return zap.NewNop().WithOptions(
		zap.WithFatalHook(holdWhile{&m.quitting, forever, zapcore.WriteThenFatal}),
		zap.WithPanicHook(holdWhile{&m.quitting, forever, zapcore.WriteThenPanic}))
}

// holdWhile is a logger's hook for its fatal or panic entries: while
// quitting is set it waits (for good, in the process), and otherwise it
// does what then does.
type holdWhile struct {
	quitting *atomic.Bool
	wait     func()
	then     zapcore.CheckWriteHook
}

// OnWrite is called after the entry is written, and must not return:
// zap's caller goes on as if Fatal or Panic had ended it.
func (h holdWhile) OnWrite(ce *zapcore.CheckedEntry, fields []zapcore.Field) {
	if h.quitting.Load() {
		h.wait()
	}
	h.then.OnWrite(ce, fields)
}
