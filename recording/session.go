package recording

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"
)

// Version is the session format's version, in every session's first
// line; Read refuses another.
const Version = 1

// The kinds of line a session holds, in the order an informer meets
// them.
const (
	// KindSession is the first line: what was recorded, from where.
	KindSession = "session"
	// KindRequest is one try of an HTTP request and its status (package
	// wire's Exchange), as kubectl -v=6 shows it.
	KindRequest = "request"
	// KindList is a LIST the informer made and the page it got back (or
	// the error in its place).
	KindList = "list"
	// KindWatch is a WATCH the informer opened (or could not open).
	KindWatch = "watch"
	// KindEvent is an event of an open watch, as the informer got it.
	KindEvent = "event"
	// KindWatchEnd is the end of a watch's stream.
	KindWatchEnd = "watch-end"
	// KindHandler is a call the recording informer's handler got.
	KindHandler = "handler"
	// KindCache is the recording informer's cache when the recording
	// ended: one line per object.
	KindCache = "cache"
	// KindEnd is the last line: why the recording ended.
	KindEnd = "end"
)

// Line is one line of a session file (JSON Lines). Which fields a line
// has depends on its Kind; every line but the first has At.
type Line struct {
	Kind string `json:"kind"`
	// At is when the line's fact reached the informer, since the
	// recording began (Duration, "1.25s").
	At Duration `json:"at"`

	// KindSession.
	Version   int    `json:"version,omitempty"`
	Resource  string `json:"resource,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	Labels    string `json:"labels,omitempty"`
	Fields    string `json:"fields,omitempty"`
	Server    string `json:"server,omitempty"`  // the cluster's address
	Began     string `json:"began,omitempty"`   // wall time, RFC 3339: for people only
	Objects   string `json:"objects,omitempty"` // "metadata" (names, labels, resourceVersions) or "full"

	// KindRequest.
	Method     string `json:"method,omitempty"`
	URI        string `json:"uri,omitempty"`
	Try        int    `json:"try,omitempty"`
	Status     int    `json:"status,omitempty"`
	RetryAfter string `json:"retryAfter,omitempty"`

	// KindList and KindWatch: the request's options, and for a list the
	// page's resourceVersion and continue token.
	Watch             int              `json:"watch,omitempty"` // the watch's number, from 1 (KindWatch, KindEvent, KindWatchEnd)
	ResourceVersion   string           `json:"resourceVersion,omitempty"`
	Limit             int64            `json:"limit,omitempty"`
	Continue          string           `json:"continue,omitempty"`
	SendInitialEvents bool             `json:"sendInitialEvents,omitempty"`
	ListRV            string           `json:"listRV,omitempty"`       // the page's resourceVersion
	NextContinue      string           `json:"nextContinue,omitempty"` // the page's continue token
	Items             []map[string]any `json:"items,omitempty"`        // the page's objects

	// KindEvent: its type (ADDED, MODIFIED, DELETED, BOOKMARK, ERROR)
	// and object (for ERROR, the Status). KindCache: the object.
	Type   string         `json:"type,omitempty"`
	Object map[string]any `json:"object,omitempty"`

	// KindHandler: OnAdd, OnUpdate or OnDelete, the object's key and
	// resourceVersion (and the old one's, for OnUpdate).
	Call  string `json:"call,omitempty"`
	Key   string `json:"key,omitempty"`
	RV    string `json:"rv,omitempty"`
	OldRV string `json:"oldRV,omitempty"`

	// Error is the error in place of an answer (KindList, KindWatch,
	// KindRequest) or why the recording ended (KindEnd).
	Error string `json:"error,omitempty"`
}

// Duration is a time.Duration written as its String ("1.25s").
type Duration time.Duration

func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("a duration is a string such as \"1.25s\": %w", err)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	if v < 0 {
		return fmt.Errorf("duration %s is negative", s)
	}
	*d = Duration(v)
	return nil
}

// Writer writes a session's lines, one JSON object each, as they come;
// it is safe for concurrent use (the reflector's goroutine and the
// handlers' write to it).
type Writer struct {
	mu    sync.Mutex
	enc   *json.Encoder
	began time.Time
	now   func() time.Time
	err   error
	// written, if set, is told of each line once it is written.
	written func(Line)
	// failed, if set, is told of the first error writing meets.
	failed func(error)
}

// NewWriter returns a Writer to w whose lines' At counts from now().
func NewWriter(w io.Writer, now func() time.Time) *Writer {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return &Writer{enc: enc, began: now(), now: now}
}

// Write stamps l with the time since the recording began (unless it is
// the session line) and writes it. The first error is kept (Err), and
// every later Write does nothing.
func (w *Writer) Write(l Line) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return
	}
	if l.Kind != KindSession {
		l.At = Duration(w.now().Sub(w.began))
	}
	w.err = w.enc.Encode(l)
	switch {
	case w.err != nil && w.failed != nil:
		w.failed(w.err)
	case w.err == nil && w.written != nil:
		w.written(l)
	}
}

// Err is the first error writing met.
func (w *Writer) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// Session is a session file, read and checked.
type Session struct {
	File   string
	Header Line   // the session line
	Lines  []Line // the rest, in order
	lineNo []int  // each line's number in the file
	// Cut is the number of the file's last line if it was cut short
	// (what a recording killed mid-line leaves), and left out; 0 if the
	// file's last line is whole.
	Cut int
}

// Pos is where line i of s.Lines is in its file.
func (s *Session) Pos(i int) string { return fmt.Sprintf("%s:%d", s.File, s.lineNo[i]) }

// LineNo is the number in its file of line i of s.Lines.
func (s *Session) LineNo(i int) int { return s.lineNo[i] }

// Len is how many lines the session holds: its session line and the
// rest (a cut last line is not one of them).
func (s *Session) Len() int { return 1 + len(s.Lines) }

// ErrNotSession is returned by Read for a file whose first line is not a
// session line.
var ErrNotSession = errors.New("recording: not a session file (its first line is not {\"kind\":\"session\",...})")

// ErrTrace is returned by Read for a trace given as a session: what
// cachelab run prints (--output json, or text) is the run's story, not
// what an informer received.
var ErrTrace = errors.New("recording: this is a trace (cachelab run --output json), not a session (cachelab record)")

// notSession is the error for a first line that is not a session line:
// ErrTrace for a trace's first line, ErrNotSession otherwise.
func notSession(pos string, b []byte, err error) error {
	var rec struct {
		Record string `json:"record"`
	}
	switch {
	case json.Unmarshal(b, &rec) == nil && rec.Record == "header":
		return fmt.Errorf("%s: %w", pos, ErrTrace)
	case json.Unmarshal(b, &rec) == nil && rec.Record != "":
		return fmt.Errorf("%s: %w: it is cachelab's JSON output (a %q record)", pos, ErrNotSession, rec.Record)
	case bytes.HasPrefix(b, []byte("# cachelab ")):
		return fmt.Errorf("%s: %w: it is a text trace (cachelab run)", pos, ErrNotSession)
	}
	return fmt.Errorf("%s: %w: %v", pos, ErrNotSession, err)
}

// What a session may hold. A replay is a run with a step per moment, and
// its server rebuilds its state from a segment's start at each: a
// session of 10,000 moments replays in about half a minute (measured:
// 25 s and 125 MB for 10,000 steps, 163 s for 30,000), and a million
// would take hours. A session's bytes are mostly objects: 32 MiB holds a
// --full LIST of 5,000 pods (it reads in under a second, in 250 MB), or
// 100,000 lines of names, labels and resourceVersions. A longer
// recording is record's to cut: a shorter --for, or fewer pods (-n, -l).
const (
	// MaxSize is the most bytes a session file may hold.
	MaxSize = 32 << 20
	// MaxLines is the most lines a session file may hold.
	MaxLines = 100_000
)

// TooMuch is the advice of an error for a session over a limit.
const TooMuch = "record a shorter span (--for) or fewer pods (-n, -l)"

// StoppedError is ReadContext's error when its context ended while it
// read: where it had got to.
type StoppedError struct {
	File string
	Line int // the line it was about to read
	Err  error
}

func (e *StoppedError) Error() string {
	return fmt.Sprintf("%s:%d: reading stopped: %v", e.File, e.Line, e.Err)
}
func (e *StoppedError) Unwrap() error { return e.Err }

// Read reads a session file (name is for errors: file:line): ReadContext
// with a context that never ends.
func Read(r io.Reader, name string) (*Session, error) {
	return ReadContext(context.Background(), r, name)
}

// ReadContext reads a session file (name is for errors: file:line). It
// checks each line's kind, that times do not go back, and that each line
// agrees with the lines before it (check.go); a session of more than
// MaxSize bytes or MaxLines lines is refused at the line that passes the
// limit. A last line cut short (its JSON ends early, as a recording
// killed mid-line leaves it) is left out and named in Cut; a line cut
// short anywhere else is damage, and an error. It stops, between two
// lines, as soon as ctx ends (a *StoppedError).
func ReadContext(ctx context.Context, r io.Reader, name string) (*Session, error) {
	s := &Session{File: name}
	in := &countingReader{r: io.LimitReader(r, MaxSize+1)}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64*1024), MaxSize+1)
	n := 0
	var read int64 // the bytes of the lines before this one
	var last Duration
	c := newConsistency()
	var cut error // the error of a line cut short, until a line after it makes it damage
	for sc.Scan() {
		n++
		if err := ctx.Err(); err != nil {
			return nil, &StoppedError{File: name, Line: n, Err: context.Cause(ctx)}
		}
		read += int64(len(sc.Bytes()))
		switch {
		case read > MaxSize:
			return nil, fmt.Errorf("%s:%d: the session passes %d bytes (32 MiB), the most a session may hold: %s", name, n, MaxSize, TooMuch)
		case n > MaxLines:
			return nil, fmt.Errorf("%s:%d: the session passes %d lines, the most a session may hold: %s", name, n, MaxLines, TooMuch)
		}
		read++ // its newline
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		if cut != nil {
			return nil, cut
		}
		var l Line
		if err := decodeLine(b, &l); err != nil {
			switch {
			case s.Header.Kind == "":
				return nil, notSession(fmt.Sprintf("%s:%d", name, n), b, err)
			case errors.Is(err, io.ErrUnexpectedEOF):
				cut, s.Cut = fmt.Errorf("%s:%d: not a session line: it is cut short (%v), and is not the file's last line", name, n, err), n
				continue
			}
			return nil, fmt.Errorf("%s:%d: not a session line: %v", name, n, err)
		}
		if err := s.add(l, n, &last, c); err != nil {
			return nil, fmt.Errorf("%s:%d: %v", name, n, err)
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			err = fmt.Errorf("the session passes %d bytes (32 MiB), the most a session may hold: %s", MaxSize, TooMuch)
		}
		return nil, fmt.Errorf("%s:%d: %v", name, n+1, err)
	}
	if in.n > MaxSize { // more after a newline at the limit
		return nil, fmt.Errorf("%s:%d: the session passes %d bytes (32 MiB), the most a session may hold: %s", name, n+1, MaxSize, TooMuch)
	}
	if s.Header.Kind == "" {
		return nil, fmt.Errorf("%s: %w", name, ErrNotSession)
	}
	return s, nil
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(b []byte) (int, error) {
	k, err := c.r.Read(b)
	c.n += int64(k)
	return k, err
}

// decodeLine decodes one line of a session: one JSON object, with no
// field the format does not know.
func decodeLine(b []byte, l *Line) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(l); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("more after its JSON object (at byte %d)", dec.InputOffset()+1)
	}
	return nil
}

// add checks one line and keeps it.
func (s *Session) add(l Line, n int, last *Duration, c *consistency) error {
	if s.Header.Kind == "" {
		switch {
		case l.Kind != KindSession:
			return ErrNotSession
		case l.Version != Version:
			return fmt.Errorf("session format version %d; this cachelab reads version %d", l.Version, Version)
		}
		if _, ok := ResourceNamed(l.Resource); !ok {
			return fmt.Errorf("the session recorded %q; cachelab replays %s", l.Resource, resourceList())
		}
		if err := checkScope(l); err != nil {
			return err
		}
		s.Header = l
		return nil
	}
	switch l.Kind {
	case KindRequest, KindList, KindWatch, KindEvent, KindWatchEnd, KindHandler, KindCache, KindEnd:
	case KindSession:
		return fmt.Errorf("a second session line")
	default:
		return fmt.Errorf("unknown kind %q (want one of request, list, watch, event, watch-end, handler, cache, end)", l.Kind)
	}
	if k := len(s.Lines); k > 0 && s.Lines[k-1].Kind == KindEnd {
		return fmt.Errorf("%s line after the end line (line %d): the end line is a session's last", an(l.Kind), s.lineNo[k-1])
	}
	if l.At < *last {
		return fmt.Errorf("at %s, before the line above it (%s): a session's lines are in the order they came", time.Duration(l.At), time.Duration(*last))
	}
	*last = l.At
	if err := c.check(l, n); err != nil {
		return err
	}
	s.Lines = append(s.Lines, l)
	s.lineNo = append(s.lineNo, n)
	return nil
}
