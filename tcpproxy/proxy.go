// Package tcpproxy is a TCP proxy on loopback that does what a network
// does to the connections through it, and nothing else:
//
//	client ══TLS══▶ Proxy (127.0.0.1:port) ──TCP──▶ server
//
// It forwards bytes: TLS, when there is any, is between the client and
// the server, end to end, so the proxy sees neither a request nor a
// credential. Cut resets every connection through it (each client reads
// "connection reset by peer", mid-response if need be) and holds the
// connections made after it, unanswered, until Restore. A scenario's
// disconnect is that, where the informers talk HTTP (package cluster's
// Proxy on a cluster, sim's in-process kube-apiserver).
//
// Closing one stream and not the others is not a proxy's to do: an
// HTTP/2 client sends all its requests over one connection, encrypted.
package tcpproxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"slices"
	"sync"
	"time"
)

// Proxy forwards the connections made to its address to a target.
type Proxy struct {
	target string // host:port it dials
	ln     net.Listener
	dial   func(ctx context.Context, network, addr string) (net.Conn, error)

	mu     sync.Mutex
	links  map[*link]struct{}
	cut    chan struct{} // closed by Restore; nil while connected
	held   int           // connections waiting for Restore, their clients' first bytes read
	closed bool
	wg     sync.WaitGroup

	onHeld func() // tests: a connection began to wait for Restore
}

// link is one client's connection through the proxy, and the proxy's to
// the cluster.
type link struct{ in, out net.Conn }

func (l *link) close() {
	_ = l.in.Close()
	if l.out != nil {
		_ = l.out.Close()
	}
}

// Start starts a proxy to target (host:port) on an ephemeral loopback
// port.
func Start(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("a local proxy to %s: %w", target, err)
	}
	p := &Proxy{target: target, ln: ln, links: map[*link]struct{}{},
		dial: (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr is the proxy's address, host:port, for the clients to dial.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		in, err := p.ln.Accept()
		if err != nil {
			return // closed
		}
		l := &link{in: in}
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			_ = in.Close()
			return
		}
		p.links[l] = struct{}{}
		p.wg.Add(1)
		p.mu.Unlock()
		go p.serve(l)
	}
}

// serve forwards one connection, once the proxy is not cut, until either
// end closes it or Cut does.
func (p *Proxy) serve(l *link) {
	defer p.wg.Done()
	defer p.drop(l)
	var first []byte
	holding := false // counted in p.held
	defer func() {
		if holding {
			p.unhold()
		}
	}()
	for {
		p.mu.Lock()
		held, closed := p.cut, p.closed
		p.mu.Unlock()
		if closed {
			return
		}
		if held == nil {
			break
		}
		// Cut: the connection waits, as a dial into a network that is
		// down waits, until Restore (or Close, or the client gives
		// up). A TLS client speaks first: what it said is kept for
		// the server.
		if first == nil {
			buf := make([]byte, 4096)
			n, err := l.in.Read(buf)
			if err != nil {
				return
			}
			first = buf[:n]
			p.mu.Lock()
			p.held++
			p.mu.Unlock()
			holding = true
			if p.onHeld != nil {
				p.onHeld()
			}
		}
		<-held
	}
	if holding {
		p.unhold()
		holding = false
	}
	out, err := p.dial(context.Background(), "tcp", p.target)
	if err != nil {
		return // the client reads an end of stream, as from a server that is not there
	}
	p.mu.Lock()
	if _, ok := p.links[l]; !ok { // cut or closed while dialling
		p.mu.Unlock()
		_ = out.Close()
		return
	}
	l.out = out
	p.mu.Unlock()
	if len(first) > 0 {
		if _, err := out.Write(first); err != nil {
			return
		}
	}
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		if tc, ok := dst.(*net.TCPConn); ok {
			_ = tc.CloseWrite() // a half close carries through
		}
		done <- struct{}{}
	}
	go pipe(out, l.in)
	go pipe(l.in, out)
	<-done
	<-done
}

// unhold counts a held connection as held no more: it went on, or ended.
func (p *Proxy) unhold() {
	p.mu.Lock()
	p.held--
	p.mu.Unlock()
}

// Held is how many connections wait for Restore: made after Cut, each
// with what its client said first (a TLS client's hello) read and kept.
// A client whose requests go over one of them waits for the network to
// come back, and nothing it does before then reaches the target.
func (p *Proxy) Held() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.held
}

func (p *Proxy) drop(l *link) {
	p.mu.Lock()
	delete(p.links, l)
	p.mu.Unlock()
	l.close()
}

// Cut resets every connection through the proxy, and holds those made
// after it until Restore. It returns how many it reset.
func (p *Proxy) Cut() int {
	p.mu.Lock()
	if p.cut == nil {
		p.cut = make(chan struct{})
	}
	ls := p.takeLinks()
	p.mu.Unlock()
	for _, l := range ls {
		// Every client reads a reset. A plain close sends a FIN, but
		// resets the connection instead when bytes the client sent are
		// still unread (an HTTP/2 client sends window updates and pings
		// at any time), so which of the two a client read would depend
		// on timing. Clients take either as the end of the stream (see
		// k8s.io/apimachinery/pkg/util/net.IsProbableEOF).
		if tc, ok := l.in.(*net.TCPConn); ok {
			_ = tc.SetLinger(0)
		}
		l.close()
	}
	return len(ls)
}

// takeLinks empties the proxy's links and returns them; p.mu is held.
// A link taken is one serve does not forward (see serve's check after
// dialling).
func (p *Proxy) takeLinks() []*link {
	ls := slices.Collect(maps.Keys(p.links))
	clear(p.links)
	return ls
}

// Restore lets connections through again: those held since Cut go on
// to the target, with what their clients said while they waited.
func (p *Proxy) Restore() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cut != nil {
		close(p.cut)
		p.cut = nil
	}
}

// Close stops the proxy and closes every connection through it.
func (p *Proxy) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	err := p.ln.Close()
	ls := p.takeLinks()
	if p.cut != nil {
		close(p.cut)
		p.cut = nil
	}
	p.mu.Unlock()
	for _, l := range ls {
		l.close()
	}
	p.wg.Wait()
	if errors.Is(err, net.ErrClosed) {
		err = nil
	}
	return err
}
