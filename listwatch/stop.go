package listwatch

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"go.etcd.io/etcd/server/v3/etcdserver/api/rafthttp"

	"github.com/cachelab/cachelab/internal/goroutines"
)

// How an embedded etcd stops. Three things happen, and only the first
// two are anyone's business but the process's:
//
//	halt          every member's etcd server stops, all at once: its raft
//	              loop ends, its database and write-ahead log are written
//	              and closed
//	removeDir     the temporary data directory goes (over 100 MB), and
//	              the certificates' files, wherever the directory is
//	closeServers  each member's listeners and connections close, and the
//	              goroutines serving them end
//
// etcd's own graceful stop (embed.Etcd.Close) does all three in one call,
// and makes a leader hand its leadership to a peer first. When a whole
// cluster stops, that peer is stopping too: the leader waits etcd's
// request timeout, 5 s, for a handover that cannot happen. So halt stops
// every member with EtcdServer.HardStop, which skips the handover (there
// is no one left to lead), and the servers close after.
//
// closeServers is slow on a cluster, for a reason inside etcd: a member's
// peer server wraps each connection so that every Read sets a 5 s
// deadline of its own (transport.timeoutConn), which undoes the deadline
// net/http sets to abort its read after a quick request (a version check
// between members, every few seconds). Such a connection stays open, and
// its server's shutdown waits its 1 s grace for it, until that 5 s
// deadline passes. Nothing of the run depends on it: Stop returns once the
// data is gone and leaves the servers closing in the background; Wait
// waits for them (a test checking that nothing is left running does), and
// Close is both.

// Close stops etcd, removes a temporary data directory, and returns once
// every goroutine etcd started has ended: Stop, then Wait.
func (e *Embedded) Close() error {
	err := e.Stop()
	e.Wait()
	return err
}

// Stop stops etcd and removes a temporary data directory, promptly: on a
// cluster too, every member stops at once, none handing its leadership
// on. etcd's listeners and connections go on closing in the background
// for up to about 6 s on a cluster (Wait waits for them); a process that
// exits next need not wait. After Stop, only Wait, Close and Stop may be
// called, and the last two do nothing more.
func (e *Embedded) Stop() error {
	if e.stopped {
		return nil
	}
	e.stopped = true
	e.halt()
	err := e.removeDir()
	e.closing.Add(1)
	go func() {
		defer e.closing.Done()
		e.closeServers()
	}()
	return err
}

// Wait waits until what Stop left closing has closed. On a cluster that
// includes the goroutines of the members' last peer connections
// (waitPeerConns), which only Wait looks for: looking is a goroutine dump
// of the whole process, and a process that does not wait (the CLI, and
// explore's many runs after it) should not pay for it.
func (e *Embedded) Wait() {
	e.closing.Wait()
	if e.cluster() {
		waitPeerConns()
	}
}

// stop stops every member and waits until its servers have closed, so
// that a restart can bind the same ports.
func (e *Embedded) stop() {
	e.halt()
	e.closeServers()
}

// halt stops every running member's etcd server without a leadership
// handover, and closes the client: the leader first, then the others at
// once.
//
// The leader goes first because it asks its peers over HTTP for their
// versions (its cluster-version monitor, at the first commit of its term
// and every few seconds), with a 5 s timeout and no way to cancel it, and
// its server's stop waits for the answer. A peer halted already cannot
// give one: its handler fails reading the closed database, and net/http,
// finishing that connection, waits on a read that etcd's own 5 s deadline
// holds (the same deadline as at the top of this file). Peers that still
// run answer at once.
func (e *Embedded) halt() {
	e.local.serve(nil)
	if e.client != nil {
		_ = e.client.Close()
		e.client = nil
	}
	leaders, others := e.byLeadership()
	for _, group := range [][]*member{leaders, others} {
		var wg sync.WaitGroup
		for _, m := range group {
			wg.Go(m.halt)
		}
		wg.Wait()
	}
}

// byLeadership splits the running members into those that believe they
// lead (more than one while a partition lasts) and the rest.
func (e *Embedded) byLeadership() (leaders, others []*member) {
	for _, m := range e.members {
		switch {
		case m.server == nil:
		case m.server.Server.Leader() == m.server.Server.MemberID():
			leaders = append(leaders, m)
		default:
			others = append(others, m)
		}
	}
	return leaders, others
}

// closeServers closes every member's servers, together: each waits up to
// a second for its peers' connections to it to end, which they do as
// the others close.
func (e *Embedded) closeServers() {
	var wg sync.WaitGroup
	for _, m := range e.members {
		wg.Go(m.stop)
	}
	wg.Wait()
}

// halt stops m's etcd server, if it runs, dropping its streams first. Its
// listeners stay open until stop.
func (m *member) halt() {
	if m.server == nil {
		return
	}
	m.crash()
	m.server.Server.HardStop()
}

// stop stops m, if it runs, dropping its streams first: on its own (a
// member lever), a leader hands its leadership on as it stops; after
// halt, only its servers are left to close.
func (m *member) stop() {
	if m.server == nil {
		return
	}
	m.crash()
	m.server.Close()
	<-m.server.Err() // closed once every etcd goroutine has exited
	m.server = nil
}

// removeDir removes etcd's certificate files (they are the run's, in a
// directory given or not), and the data directory if it is a temporary
// one.
func (e *Embedded) removeDir() error {
	err := e.tls.remove()
	if e.ownDir {
		err = os.RemoveAll(e.dir)
	}
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("listwatch: remove %s: %w", e.dir, err)
	}
	return nil
}

// waitPeerConns waits, after every member of a cluster stopped, for the
// goroutines of their last peer connections to end (see the top of this
// file), so that Close leaves nothing running. Any such goroutine in the
// process counts; the wait is bounded by rafthttp's read timeout. Each
// look dumps every goroutine of the process, so it looks every 50 ms:
// the wait is seconds long anyway.
func waitPeerConns() {
	deadline := time.Now().Add(rafthttp.DefaultConnReadTimeout + time.Second)
	for time.Now().Before(deadline) {
		if !bytes.Contains(goroutines.Dump(), []byte("transport.timeoutConn.Read")) {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}
