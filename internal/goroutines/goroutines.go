// Package goroutines reads the process's goroutines from a stack dump,
// taken with the world stopped: the way the simulator tells that a
// goroutine it cannot otherwise see (kube-apiserver's cacher, client-go's
// delaying queue, etcd's transport) is parked with nothing to do.
// testing/synctest's "durably blocked" says the same inside a bubble; these
// goroutines live outside one (etcd talks over real sockets).
package goroutines

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"
)

// Dump is every goroutine's stack, as runtime.Stack writes it. The
// simulator takes one at every poll of a settle, thousands in a long
// run: the dump is written into a buffer kept from one call to the next
// (sized to the largest so far), and only what it holds is copied out.
func Dump() []byte {
	dumps.Add(1)
	scratch.Lock()
	defer scratch.Unlock()
	for {
		n := runtime.Stack(scratch.buf, true)
		if n < len(scratch.buf) {
			return append([]byte(nil), scratch.buf[:n]...)
		}
		scratch.buf = make([]byte, 2*len(scratch.buf))
	}
}

// dumps counts Dump's calls.
var dumps atomic.Int64

// Dumps is how many dumps the process has taken: the cost of watching
// goroutines grows with it, each one as large as the process's
// goroutines, so a test can hold a step's count to what its work needs.
func Dumps() int64 { return dumps.Load() }

// scratch is Dump's buffer.
var scratch = struct {
	sync.Mutex
	buf []byte
}{buf: make([]byte, 1<<18)}

// All is Dump split into one text per goroutine: a header line
// ("goroutine 42 [select, 2 minutes]:"), its frames, and the "created by"
// line.
func All() []string {
	d := Dump()
	if len(d) == 0 {
		return nil
	}
	return strings.Split(unsafe.String(&d[0], len(d)), "\n\n") // d is this call's own copy
}

// State is a goroutine's state from its header: "select", "chan receive",
// "sync.Cond.Wait", "running", "runnable", ... without the time it has
// waited.
func State(g string) string {
	header, _, _ := strings.Cut(g, "\n")
	state := header
	if i := strings.Index(state, "["); i >= 0 {
		state = state[i+1:]
	}
	state, _, _ = strings.Cut(state, labelsOpen)
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

// OwnLabel is the calling goroutine's pprof label key, or "" if it has
// none: its own stack's header, read as Label reads a dump's. It costs one
// small stack trace, without stopping the world.
func OwnLabel(key string) string {
	ShowLabels()
	buf := make([]byte, 512)
	buf = buf[:runtime.Stack(buf, false)]
	return Label(string(buf), key)
}

// ID is a goroutine's number from its header ("goroutine 42 [...]:").
func ID(g string) string {
	id, _, _ := strings.Cut(strings.TrimPrefix(g, "goroutine "), " ")
	return id
}

// Parent is the number of the goroutine that started g, from its
// "created by ... in goroutine N" line, or "" if the dump does not say.
func Parent(g string) string {
	i := strings.LastIndex(g, "\ncreated by ")
	if i < 0 {
		return ""
	}
	line, _, _ := strings.Cut(g[i+1:], "\n")
	_, id, ok := strings.Cut(line, " in goroutine ")
	if !ok {
		return ""
	}
	return strings.TrimSpace(id)
}

// labelsOpen starts the pprof labels in a header, once ShowLabels has run:
// "goroutine 42 [select, 2 minutes labels:{"k": "v"}]:".
const labelsOpen = " labels:{"

// ShowLabels has the runtime print each goroutine's pprof labels in its
// dump header (GODEBUG tracebacklabels=1, which the runtime reads again
// whenever GODEBUG is set). Goroutines inherit their creator's labels,
// so a label set where a component starts (runtime/pprof.Do) marks every
// goroutine that component ever starts, however many hands it passes
// through: the dump's "created by" names only the last one. It is called
// before each dump that reads labels, so that a GODEBUG set since (by a
// test, say) cannot turn the labels off unseen.
func ShowLabels() {
	labelsMu.Lock()
	defer labelsMu.Unlock()
	env := os.Getenv("GODEBUG")
	for _, kv := range strings.Split(env, ",") {
		if kv == "tracebacklabels=1" {
			return
		}
	}
	if env != "" {
		env += ","
	}
	_ = os.Setenv("GODEBUG", env+"tracebacklabels=1")
}

var labelsMu sync.Mutex

// Label is the value of g's pprof label key, as its header shows it once
// ShowLabels has run, or "" if it has none.
func Label(g, key string) string {
	header, _, _ := strings.Cut(g, "\n")
	_, labels, ok := strings.Cut(header, labelsOpen)
	if !ok {
		return ""
	}
	labels = strings.TrimSuffix(labels, "}]:")
	// Each pair is printed quoted, as "key": "value", and pairs are
	// separated by ", ": read the quoted strings one at a time.
	for labels != "" {
		k, rest, err := unquoteFirst(labels)
		if err != nil {
			return ""
		}
		rest = strings.TrimPrefix(rest, ": ")
		v, rest, err := unquoteFirst(rest)
		if err != nil {
			return ""
		}
		if k == key {
			return v
		}
		labels = strings.TrimPrefix(rest, ", ")
	}
	return ""
}

// unquoteFirst reads the Go-quoted string s begins with.
func unquoteFirst(s string) (string, string, error) {
	q, err := strconv.QuotedPrefix(s)
	if err != nil {
		return "", "", err
	}
	v, err := strconv.Unquote(q)
	return v, s[len(q):], err
}

// Parked reports whether a goroutine in state (State) waits for
// something from outside it that has not come: a channel, a condition, a
// WaitGroup or the network. It is testing/synctest's "durably blocked",
// with the network added. Running, runnable, a system call, a lock
// (held by someone who is running) and a sleep on the real clock are
// not: such a goroutine goes on of itself, soon.
func Parked(state string) bool {
	switch state {
	case "chan receive", "chan send", "select", "select (no cases)", "chan receive (nil chan)", "chan send (nil chan)",
		"sync.Cond.Wait", "sync.WaitGroup.Wait", "IO wait":
		return true
	}
	return false
}
