package memnet

import (
	"io"
	"net"
	"os"
	"sync"
	"time"
)

// buffer is one direction of a connection: what one end has written and
// the other has not read yet. Every byte that leaves it, read or thrown
// away by a reset or a close, is counted as read, so that the network's
// Pending stays exact.
type buffer struct {
	n    *Network
	mu   sync.Mutex
	data []byte
	eof  bool          // the writer closed: reads get io.EOF once data is read
	gone bool          // the reader closed: writes fail
	err  error         // a reset: reads and writes fail with it at once
	wake chan struct{} // a reader waits on it (capacity 1)
}

func newBuffer(n *Network) *buffer { return &buffer{n: n, wake: make(chan struct{}, 1)} }

func (b *buffer) notify() {
	select {
	case b.wake <- struct{}{}:
	default:
	}
}

// drop throws away what the buffer holds, counted as read. b.mu is held.
func (b *buffer) drop() {
	b.n.read.Add(int64(len(b.data)))
	b.data = nil
}

// conn is one end of a connection.
type conn struct {
	net           *Network
	line          string
	in, out       *buffer
	local, remote net.Addr
	peer          *conn

	mu       sync.Mutex
	closed   bool
	deadline time.Time     // for reads; writes never wait
	changed  chan struct{} // closed and remade when deadline changes or the conn closes
}

func (c *conn) Read(p []byte) (int, error) {
	for {
		b := c.in
		b.mu.Lock()
		switch {
		case b.err != nil:
			b.mu.Unlock()
			return 0, b.err
		case len(b.data) > 0:
			n := copy(p, b.data)
			b.data = b.data[n:]
			b.n.read.Add(int64(n))
			b.mu.Unlock()
			return n, nil
		case b.eof:
			b.mu.Unlock()
			return 0, io.EOF
		}
		b.mu.Unlock()
		if err := c.wait(); err != nil {
			return 0, err
		}
	}
}

// wait waits for the in buffer to change, the read deadline to pass, or
// the conn to close.
func (c *conn) wait() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return &net.OpError{Op: "read", Net: "tcp", Addr: c.remote, Err: net.ErrClosed}
	}
	if c.changed == nil {
		c.changed = make(chan struct{})
	}
	deadline, changed := c.deadline, c.changed
	c.mu.Unlock()
	var expired <-chan time.Time
	if !deadline.IsZero() {
		d := time.Until(deadline)
		if d <= 0 {
			return &net.OpError{Op: "read", Net: "tcp", Addr: c.remote, Err: os.ErrDeadlineExceeded}
		}
		t := time.NewTimer(d)
		defer t.Stop()
		expired = t.C
	}
	select {
	case <-c.in.wake:
	case <-changed:
	case <-expired:
	}
	return nil
}

func (c *conn) Write(p []byte) (int, error) {
	c.mu.Lock()
	closed := c.closed
	c.mu.Unlock()
	if closed {
		return 0, &net.OpError{Op: "write", Net: "tcp", Addr: c.remote, Err: net.ErrClosed}
	}
	b := c.out
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.err != nil:
		return 0, b.err
	case b.gone:
		return 0, errReset("write", c.remote)
	}
	b.data = append(b.data, p...)
	b.n.written.Add(int64(len(p)))
	b.notify()
	return len(p), nil
}

// Close ends this end: the peer reads what was written, then io.EOF, and
// its writes fail from now on.
func (c *conn) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	if c.changed != nil {
		close(c.changed)
		c.changed = nil
	}
	c.mu.Unlock()
	c.out.mu.Lock()
	c.out.eof = true
	c.out.notify()
	c.out.mu.Unlock()
	c.in.mu.Lock()
	c.in.gone = true
	c.in.drop()
	c.in.mu.Unlock()
	c.net.forget(c)
	return nil
}

// reset fails both directions with ECONNRESET, as a TCP reset does, and
// reports whether the connection was open.
func (c *conn) reset() bool {
	was := false
	for _, b := range []*buffer{c.in, c.out} {
		b.mu.Lock()
		if b.err == nil && !b.gone {
			was = true
			b.err = errReset("read", c.remote)
		}
		b.drop()
		b.notify()
		b.mu.Unlock()
	}
	return was
}

func (c *conn) LocalAddr() net.Addr  { return c.local }
func (c *conn) RemoteAddr() net.Addr { return c.remote }

func (c *conn) SetDeadline(t time.Time) error { return c.SetReadDeadline(t) }

// SetReadDeadline sets when a Read waiting for data gives up, on the wall
// clock, as net.Conn's does; a Read waiting now sees the new deadline.
func (c *conn) SetReadDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.deadline = t
	if c.changed != nil {
		close(c.changed)
		c.changed = nil
	}
	return nil
}

// SetWriteDeadline does nothing: a write never waits.
func (c *conn) SetWriteDeadline(time.Time) error { return nil }
