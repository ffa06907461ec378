// Package memnet is a network in memory between an in-process client and
// an in-process server, which knows at every moment whether a byte is on
// its way.
//
// Over loopback TCP a byte the server has written may sit in a kernel
// buffer while the client's reading goroutine is still parked: nothing in
// the process can tell that the client has work coming. Here each
// direction of a connection is a buffer in memory, and the network
// counts what was written into them and what was read out; Pending is the
// difference, exactly. A writer never waits (the buffers grow), so two
// ends that both write before they read (a TLS 1.3 server's session
// tickets, a client's HTTP/2 preface) cannot lock each other, as they
// could over net.Pipe.
//
//	client ──Dial──▶ conn ═══ buffers (counted) ═══ conn ◀──Accept── server
//
// Clients dial on lines, named by their caller ("controller", "story"):
// Cut does to one line what a network partition does, deterministically:
// every connection open on it is reset (a read or write gets ECONNRESET,
// as across a TCP reset), and a Dial made on it while cut waits,
// unanswered, until Restore, as a SYN does across a partition until it
// heals. The other lines go on. Nothing here runs on
// a clock, but for the deadlines net/http and crypto/tls set, which are
// the wall clock's, as on any connection.
package memnet

import (
	"context"
	"errors"
	"net"
	"os"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"syscall"
)

// ErrClosed is returned by Dial and Accept once the network is closed.
var ErrClosed = errors.New("memnet: network closed")

// Network is one server's listener and its clients' dialer.
type Network struct {
	addr   *net.TCPAddr // what the listener says it listens on
	labels context.Context

	written, read atomic.Int64 // bytes into and out of every buffer, both ways

	mu       sync.Mutex
	open     map[*conn]struct{}
	cut      map[string]chan struct{} // the lines cut, each with what Restore closes
	closed   bool
	ports    int
	backlog  chan *conn
	relaying []*relayed // ServeTCP's connections
	done     chan struct{}
}

// New is a network whose listener says it listens on addr (the address a
// server puts in its URL), and which hands each accepted connection to
// the server with the pprof labels of labels (nil for none): the
// goroutine that calls Accept takes them, so every goroutine the server
// starts for the connection inherits them.
func New(addr *net.TCPAddr, labels context.Context) *Network {
	return &Network{addr: addr, labels: labels, open: map[*conn]struct{}{}, cut: map[string]chan struct{}{},
		backlog: make(chan *conn), done: make(chan struct{})}
}

// Pending is how many bytes have been written on the network and not yet
// read, in either direction: 0 means nothing is on its way.
func (n *Network) Pending() int64 { return n.written.Load() - n.read.Load() }

// Moved is how many bytes have been read on the network so far: a reader
// that compares it before and after a look knows whether anything moved
// in between.
func (n *Network) Moved() int64 { return n.read.Load() }

// Dialer dials the network's listener on line; the address is not
// looked at. While the line is cut a dial waits until Restore (or its
// context ends).
func (n *Network) Dialer(line string) func(ctx context.Context, network, address string) (net.Conn, error) {
	return func(ctx context.Context, _, _ string) (net.Conn, error) { return n.dial(ctx, line) }
}

func (n *Network) dial(ctx context.Context, line string) (net.Conn, error) {
	for {
		n.mu.Lock()
		closed, healed := n.closed, n.cut[line]
		n.mu.Unlock()
		if closed {
			return nil, ErrClosed
		}
		if healed == nil {
			break
		}
		select {
		case <-healed:
		case <-n.done:
		case <-ctx.Done():
			return nil, &net.OpError{Op: "dial", Net: "tcp", Addr: n.addr, Err: ctx.Err()}
		}
	}
	client, server := n.pair(line)
	select {
	case n.backlog <- server:
		return client, nil
	case <-n.done:
		return nil, ErrClosed
	case <-ctx.Done():
		client.Close()
		return nil, &net.OpError{Op: "dial", Net: "tcp", Addr: n.addr, Err: ctx.Err()}
	}
}

// pair makes the two ends of a connection, and keeps them until closed.
func (n *Network) pair(line string) (client, server *conn) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.ports++
	local := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 40000 + n.ports%20000}
	up, down := newBuffer(n), newBuffer(n)
	client = &conn{net: n, line: line, in: down, out: up, local: local, remote: n.addr}
	server = &conn{net: n, line: line, in: up, out: down, local: n.addr, remote: local}
	client.peer, server.peer = server, client
	n.open[client], n.open[server] = struct{}{}, struct{}{}
	return client, server
}

// Cut resets every connection open on line and holds the line's new
// dials until Restore. It returns how many connections it reset.
func (n *Network) Cut(line string) int {
	n.mu.Lock()
	if n.cut[line] == nil {
		n.cut[line] = make(chan struct{})
	}
	var all []*conn
	for c := range n.open {
		if c.line == line && c.local != n.addr {
			all = append(all, c)
		}
	}
	n.mu.Unlock()
	reset := 0
	for _, c := range all {
		if c.reset() {
			reset++
		}
	}
	return reset
}

// Restore ends a Cut of line: the dials it held go on.
func (n *Network) Restore(line string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if healed := n.cut[line]; healed != nil {
		close(healed)
		delete(n.cut, line)
	}
}

// IsCut reports whether line is cut.
func (n *Network) IsCut(line string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.cut[line] != nil
}

// Listener is the server's end of the network.
func (n *Network) Listener() net.Listener { return listener{n} }

// Close closes the listener and every connection, and refuses later dials.
func (n *Network) Close() error {
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		return nil
	}
	n.closed = true
	close(n.done)
	var all []*conn
	for c := range n.open {
		all = append(all, c)
	}
	n.mu.Unlock()
	for _, c := range all {
		c.Close()
	}
	return nil
}

func (n *Network) forget(c *conn) {
	n.mu.Lock()
	delete(n.open, c)
	n.mu.Unlock()
}

type listener struct{ n *Network }

// Accept hands over the next connection dialed, after giving the calling
// goroutine the network's labels (New).
func (l listener) Accept() (net.Conn, error) {
	if l.n.labels != nil {
		pprof.SetGoroutineLabels(l.n.labels)
	}
	select {
	case c := <-l.n.backlog:
		return c, nil
	case <-l.n.done:
		return nil, &net.OpError{Op: "accept", Net: "tcp", Addr: l.n.addr, Err: ErrClosed}
	}
}

func (l listener) Close() error   { return l.n.Close() }
func (l listener) Addr() net.Addr { return l.n.addr }

// errReset is what a connection's reads and writes get once it is cut.
func errReset(op string, addr net.Addr) error {
	return &net.OpError{Op: op, Net: "tcp", Addr: addr, Err: os.NewSyscallError(op, syscall.ECONNRESET)}
}
