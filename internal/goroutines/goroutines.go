// Package goroutines reads the process's goroutines from a stack dump,
// taken with the world stopped: the way the simulator tells that a
// goroutine it cannot otherwise see (kube-apiserver's cacher, client-go's
// delaying queue, etcd's transport) is parked with nothing to do.
// testing/synctest's "durably blocked" says the same inside a bubble; these
// goroutines live outside one (etcd talks over real sockets).
package goroutines

import (
	"runtime"
	"strings"
)

// Dump is every goroutine's stack, as runtime.Stack writes it.
func Dump() []byte {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return buf[:n]
		}
		buf = make([]byte, 2*len(buf))
	}
}

// All is Dump split into one text per goroutine: a header line
// ("goroutine 42 [select, 2 minutes]:"), its frames, and the "created by"
// line.
func All() []string { return strings.Split(string(Dump()), "\n\n") }

// State is a goroutine's state from its header: "select", "chan receive",
// "sync.Cond.Wait", "running", "runnable", ... without the time it has
// waited.
func State(g string) string {
	header, _, _ := strings.Cut(g, "\n")
	state := header
	if i := strings.Index(state, "["); i >= 0 {
		state = state[i+1:]
	}
	state, _, _ = strings.Cut(state, ",")
	return strings.TrimSuffix(state, "]:")
}

// Current is the calling goroutine's number, as a dump prints it (the
// "in goroutine N" of the goroutines it starts).
func Current() string {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	id, _, _ := strings.Cut(strings.TrimPrefix(string(buf), "goroutine "), " ")
	return id
}
