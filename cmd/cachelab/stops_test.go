package main

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// Every command ends the same way when a signal stops it, or when the
// reader of its stdout goes away: run's way (signals.go). These tests
// stop each command in the test process, the way main's signal handler
// does (a context cancelled with the signal as its cause) and the way a
// closed pipe does (EPIPE), and check its exit status, its words and
// that nothing is left in $TMPDIR (issue 47, case 7: explore exited 3
// with "context canceled", and 2 with a usage hint when its stdout was
// closed). The scripts (explore-signals.txtar) stop real processes.

// signalledContext is a context a signal has already cancelled, as
// main's handler cancels it.
func signalledContext(sig syscall.Signal) context.Context {
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(interrupted{sig: sig})
	return ctx
}

// shardRecords writes the records of a small exploration's two shards
// into dir, for explore merge.
func shardRecords(t *testing.T, dir string) []string {
	t.Helper()
	var files []string
	for _, shard := range []string{"0/2", "1/2"} {
		c := newCLI("", false, nil)
		c.run(t, exitOK, "explore", "add-update-delete", "--faults", "close-watch", "--sample", "2", "--shard", shard)
		name := filepath.Join(dir, "shard"+shard[:1]+".json")
		if err := os.WriteFile(name, []byte(c.stdout.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, name)
	}
	return files
}

func TestStoppedBySignalEveryCommand(t *testing.T) {
	records := shardRecords(t, t.TempDir())
	out := filepath.Join(t.TempDir(), "groups")
	for _, tc := range []struct {
		sig  syscall.Signal
		args []string
		want string
	}{
		{syscall.SIGINT, []string{"explore", "add-update-delete", "--faults", "close-watch"},
			"cachelab: interrupted by SIGINT while exploring add-update-delete, before any placement had run\n"},
		{syscall.SIGTERM, []string{"explore", "add-update-delete", "--faults", "close-watch", "--output", "json"},
			"cachelab: interrupted by SIGTERM while exploring add-update-delete, before any placement had run\n"},
		{syscall.SIGHUP, []string{"explore", "add-update-delete", "--faults", "close-watch", "--shard", "0/2"},
			"cachelab: interrupted by SIGHUP while exploring add-update-delete, before any placement had run\n"},
		// run and replay said so already; the same words, one path.
		{syscall.SIGTERM, []string{"run", "add-update-delete"}, "cachelab: interrupted by SIGTERM while starting etcd\n"},
		{syscall.SIGHUP, []string{"replay", "testdata/sessions/control-chars.jsonl"}, "cachelab: interrupted by SIGHUP while reading the session\n"},
		// merge runs each group's file again for its timeline.
		{syscall.SIGINT, append([]string{"explore", "merge", "--out", out}, records...),
			"cachelab: interrupted by SIGINT while writing the groups' timelines into " + out + "\n"},
	} {
		t.Run(strings.Join(tc.args[:2], " ")+" "+tc.sig.String(), func(t *testing.T) {
			empty := tmpdir(t)
			c := newCLI("", false, nil)
			if got, want := c.Run(signalledContext(tc.sig), tc.args), exitSignalBase+int(tc.sig); got != want {
				t.Errorf("exit code %d, want %d", got, want)
			}
			if got := c.stderr.String(); got != tc.want {
				t.Errorf("stderr:\n%s\nwant:\n%s", got, tc.want)
			}
			if got := c.stdout.String(); got != "" {
				t.Errorf("stdout: %q, want nothing", got)
			}
			empty()
		})
	}
}

// A closed stdout: 141, and no usage hint (the command line was right),
// for every command that writes to it.
func TestClosedStdoutEveryCommand(t *testing.T) {
	records := shardRecords(t, t.TempDir())
	for _, tc := range []struct {
		args []string
		want string // the end of stderr
	}{
		{[]string{"explore", "add-update-delete", "--faults", "close-watch", "--sample", "1"},
			"placements run in 0s at -j auto (4 computing, up to 8 in all)\ncachelab: stdout was closed (broken pipe) while writing the report\n"},
		{[]string{"explore", "add-update-delete", "--faults", "close-watch", "--sample", "1", "--output", "json"},
			"placements run in 0s at -j auto (4 computing, up to 8 in all)\ncachelab: stdout was closed (broken pipe) while writing the exploration's record\n"},
		{[]string{"explore", "add-update-delete", "--faults", "close-watch", "--sample", "2", "--shard", "1/2"},
			"placements run in 0s at -j auto (4 computing, up to 8 in all)\ncachelab: stdout was closed (broken pipe) while writing the exploration's record\n"},
		{append([]string{"explore", "merge"}, records...),
			"cachelab: stdout was closed (broken pipe) while writing the report\n"},
		{append([]string{"explore", "merge", "--output", "json"}, records...),
			"cachelab: stdout was closed (broken pipe) while writing the exploration's record\n"},
		{[]string{"version"}, "cachelab: stdout was closed (broken pipe) while printing the version\n"},
		{[]string{"scenarios"}, "cachelab: stdout was closed (broken pipe) while listing the scenarios\n"},
		{[]string{"scenarios", "add-update-delete"}, "cachelab: stdout was closed (broken pipe) while printing the scenario\n"},
		{[]string{"scenarios", "add-update-delete", "--file"}, "cachelab: stdout was closed (broken pipe) while printing the scenario\n"},
		{[]string{"scenarios", "--commands"}, "cachelab: stdout was closed (broken pipe) while listing the commands\n"},
		{[]string{"run", "add-update-delete"}, "cachelab: stdout was closed (broken pipe) before the first step\n"},
		{[]string{"run", "add-update-delete", "--output", "json"}, "cachelab: stdout was closed (broken pipe) before the first step\n"},
		{[]string{"replay", "testdata/sessions/control-chars.jsonl"}, "cachelab: stdout was closed (broken pipe) before the first step\n"},
		{[]string{"replay", "testdata/sessions/control-chars.jsonl", "--output", "json"}, "cachelab: stdout was closed (broken pipe) before the first step\n"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			empty := tmpdir(t)
			c := newCLI("", false, nil)
			c.Stdout = &closedAfter{n: 0}
			if got, want := c.Run(context.Background(), tc.args), exitSignalBase+int(syscall.SIGPIPE); got != want {
				t.Errorf("exit code %d, want %d", got, want)
			}
			if got := c.stderr.String(); !strings.HasSuffix(got, tc.want) || strings.Count(got, "cachelab:") != 1 {
				t.Errorf("stderr:\n%s\nwant it to end with:\n%s", got, tc.want)
			}
			empty()
		})
	}
}

// etcd's fatal errors and panics, through its logger, wait while the
// process ends at once (atOnce removes the data directory of an etcd
// that may still write), and end the process as etcd means them to
// otherwise. Each call runs on a goroutine of its own, as etcd's do, and
// the test's hooks end that goroutine where the process's would exit or
// wait for good.
func TestEtcdFatalWaitsWhileQuitting(t *testing.T) {
	for _, quitting := range []bool{false, true} {
		for level, log := range map[string]func(*zap.Logger){
			"fatal": func(l *zap.Logger) { l.Fatal("failed to save raft state") },
			"panic": func(l *zap.Logger) { l.Panic("failed to create WAL") },
		} {
			var q atomic.Bool
			q.Store(quitting)
			var waited, ended, returned atomic.Bool
			hook := holdWhile{&q, func() { waited.Store(true); runtime.Goexit() }, endGoroutine{&ended}}
			lg := zap.NewNop().WithOptions(zap.WithFatalHook(hook), zap.WithPanicHook(hook))
			done := make(chan struct{})
			go func() {
				defer close(done)
				log(lg)
				returned.Store(true)
			}()
			<-done
			if returned.Load() || waited.Load() != quitting || ended.Load() == quitting {
				t.Errorf("%s while quitting=%v: waited %v, went on as etcd means %v, returned to etcd %v; want waited %v, went on %v, returned false",
					level, quitting, waited.Load(), ended.Load(), returned.Load(), quitting, !quitting)
			}
		}
	}
}

// endGoroutine stands in for zap's own end of a fatal or panic entry
// (os.Exit, panic): it notes it and ends the goroutine.
type endGoroutine struct{ ended *atomic.Bool }

func (e endGoroutine) OnWrite(*zapcore.CheckedEntry, []zapcore.Field) {
	e.ended.Store(true)
	runtime.Goexit()
}
