package memnet

import (
	"context"
	"errors"
	"io"
	"net"
	"net/netip"
	"runtime/pprof"
	"slices"
	"sync"
	"syscall"
)

// A client in another process cannot dial a network in memory: it dials
// TCP. ServeTCP lets it in. Each connection it makes to the listener is
// dialed on a line of the network and relayed, byte for byte, both ways,
// so the server sees it as any other of the network's connections, and
// a Cut of the line reaches it: the relay resets its TCP connection, and
// holds a connection made while the line is cut, reading nothing from it,
// until Restore.
//
// What the network counts ends at the relay. A byte between the relay
// and the other process is in a kernel buffer of one of the two sockets
// Relays names, where only the kernel can count it (package procstate).

// Relay is a TCP connection a client in another process made: the
// addresses of its two ends.
type Relay struct {
	Client netip.AddrPort // the other process's end
	Server netip.AddrPort // the relay's end, on the listener's address
	// Held is true while the connection waits for its line's Restore:
	// what the client wrote to it stays unread until then.
	Held bool
}

// ServeTCP accepts connections on ln until the network closes, and
// relays each over a connection dialed on line. Its goroutines carry the
// network's labels (New).
func (n *Network) ServeTCP(ln net.Listener, line string) {
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-n.done
		cancel()
		ln.Close()
	}()
	go func() {
		if n.labels != nil {
			pprof.SetGoroutineLabels(n.labels)
		}
		for {
			c, err := ln.Accept()
			if err != nil {
				return // the network closed (or the listener failed: nothing more comes)
			}
			r := n.relay(c)
			go r.run(ctx, n, line)
		}
	}()
}

// Relays are the TCP connections being relayed, in the order made.
func (n *Network) Relays() []Relay {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := make([]Relay, 0, len(n.relaying))
	for _, r := range n.relaying {
		out = append(out, Relay{Client: addrPort(r.tcp.RemoteAddr()), Server: addrPort(r.tcp.LocalAddr()), Held: r.held})
	}
	return out
}

// relayed is one TCP connection and the network's connection it is
// relayed over.
type relayed struct {
	tcp  net.Conn
	held bool // guarded by the network's mu
}

func (n *Network) relay(c net.Conn) *relayed {
	r := &relayed{tcp: c, held: true}
	n.mu.Lock()
	n.relaying = append(n.relaying, r)
	n.mu.Unlock()
	return r
}

func (n *Network) unrelay(r *relayed) {
	n.mu.Lock()
	n.relaying = slices.DeleteFunc(n.relaying, func(o *relayed) bool { return o == r })
	n.mu.Unlock()
}

// run dials the line (waiting while it is cut) and copies both ways
// until either end ends. A reset of the network's end resets the TCP
// connection; a close closes it.
func (r *relayed) run(ctx context.Context, n *Network, line string) {
	defer n.unrelay(r)
	mem, err := n.dial(ctx, line)
	if err != nil {
		r.tcp.Close()
		return
	}
	n.mu.Lock()
	r.held = false
	n.mu.Unlock()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		io.Copy(mem, r.tcp)
		mem.Close()
	}()
	_, err = io.Copy(r.tcp, mem)
	if errors.Is(err, syscall.ECONNRESET) {
		if t, ok := r.tcp.(*net.TCPConn); ok {
			t.SetLinger(0) // the close sends a reset, as the cut did
		}
	}
	r.tcp.Close()
	mem.Close()
	wg.Wait()
}

func addrPort(a net.Addr) netip.AddrPort {
	if t, ok := a.(*net.TCPAddr); ok {
		return t.AddrPort()
	}
	ap, _ := netip.ParseAddrPort(a.String())
	return ap
}
