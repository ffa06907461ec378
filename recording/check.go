package recording

import (
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
)

// A session is the story of one informer's connection to one server, and
// Read holds each line to the lines before it. A replay's server believes
// what the session says: a line that contradicts the story would be
// served as something else (an event of a watch never opened, as a new
// ADDED) or left out, and a resourceVersion that goes back leaves the
// replayed informers waiting for one the server will never reach. So a
// session that contradicts itself is refused where it does, file:line:
//
//   - a watch's events come after its watch line, on a watch that opened
//     (its line has no error), before its ERROR and its watch-end;
//   - an event's type is one a watch sends (ADDED, MODIFIED, DELETED,
//     BOOKMARK, ERROR), and a watch-list's initial events are ADDED, then
//     the bookmark that ends them;
//   - an object's name, namespace and resourceVersion are strings, its
//     labels and annotations maps of strings, and a resourceVersion is a
//     number (etcd's revision), as every kube-apiserver backed by etcd
//     gives it;
//   - resourceVersions never go back: a watch's events come in order and
//     after the resourceVersion it watches from; a LIST's items are no
//     newer than the LIST; a snapshot (a LIST, a watch-list's end
//     bookmark) and each event are no older than what the recording had
//     reached, since an informer lists again and watches from what it has;
//   - the cache lines come once the recording has ended, and the end line
//     is the last.

// consistency is what Read has learned from a session's lines so far.
type consistency struct {
	watches map[int]*watchState
	// rv is the newest resourceVersion the recording has reached (its
	// last snapshot's, or a later event's), rvLine the line that reached
	// it; -1 before the first snapshot.
	rv     int64
	rvLine int
	// page is the resourceVersion of the LIST whose next page is to
	// come (a continue token holds it), -1 if none.
	page int64
	// cache is the first cache line's number, 0 before one.
	cache int
}

func newConsistency() *consistency {
	return &consistency{watches: map[int]*watchState{}, rv: -1, page: -1}
}

// watchState is what the lines so far say of one watch. Lines are
// numbers in the file, 0 for none yet.
type watchState struct {
	opened, errored, ended int
	failed                 bool  // its watch line has an error: it never opened
	from                   int64 // the resourceVersion it watches from; -1: none ("" or "0")
	initial                bool  // a watch-list before the bookmark that ends its initial events
	initialRV              int64 // the newest of its initial events' resourceVersions
	initialLine            int
	last                   int64 // its last event's resourceVersion, after its initial events; -1 before one
	lastLine               int
}

// check holds line n, l, to the lines before it, and takes it in.
func (c *consistency) check(l Line, n int) error {
	if c.cache > 0 && l.Kind != KindCache && l.Kind != KindEnd && l.Kind != KindHandler {
		return fmt.Errorf("%s line after the cache lines (line %d): the cache is written once the recording has ended", an(l.Kind), c.cache)
	}
	switch l.Kind {
	case KindList:
		return c.list(l, n)
	case KindWatch:
		return c.watch(l, n)
	case KindEvent:
		return c.event(l, n)
	case KindWatchEnd:
		return c.watchEnd(l, n)
	case KindCache:
		if c.cache == 0 {
			c.cache = n
		}
		_, err := objectRV("cache line's object", l.Object, true)
		return err
	}
	return nil
}

func (c *consistency) list(l Line, n int) error {
	if l.Error != "" {
		c.page = -1
		return nil
	}
	rv, err := parseRV(l.ListRV, "the list's")
	if err != nil {
		return err
	}
	switch {
	case l.Continue == "" && c.rv > rv:
		return fmt.Errorf("a LIST at rv %d, older than rv %d, which the recording had reached at line %d: an informer lists again from what it has, never from before it", rv, c.rv, c.rvLine)
	case l.Continue != "" && c.page >= 0 && rv != c.page:
		return fmt.Errorf("a LIST's next page at rv %d, not at its first page's rv %d: a continue token keeps the LIST's resourceVersion", rv, c.page)
	}
	for i, it := range l.Items {
		irv, err := objectRV(fmt.Sprintf("the list's item %d", i+1), it, true)
		if err != nil {
			return err
		}
		if irv > rv {
			return fmt.Errorf("the list's item %s is at rv %d, newer than the LIST's own rv %d", keyOf(it), irv, rv)
		}
	}
	if l.Continue == "" {
		c.rv, c.rvLine = rv, n
	}
	c.page = -1
	if l.NextContinue != "" {
		c.page = rv
	}
	return nil
}

func (c *consistency) watch(l Line, n int) error {
	if l.Watch <= 0 {
		return fmt.Errorf("a watch line numbered %d: watches are numbered from 1", l.Watch)
	}
	if w, ok := c.watches[l.Watch]; ok {
		return fmt.Errorf("watch %d opened a second time (first at line %d)", l.Watch, w.opened)
	}
	w := &watchState{opened: n, failed: l.Error != "", from: -1, initial: l.SendInitialEvents, initialRV: -1, last: -1}
	if l.ResourceVersion != "" && l.ResourceVersion != "0" {
		rv, err := parseRV(l.ResourceVersion, "the watch's")
		if err != nil {
			return err
		}
		w.from = rv
	}
	c.watches[l.Watch] = w
	return nil
}

func (c *consistency) watchEnd(l Line, n int) error {
	w, err := c.watchOf(l, "a watch-end")
	if err != nil {
		return err
	}
	if w.ended > 0 {
		return fmt.Errorf("a second watch-end of watch %d (the first at line %d)", l.Watch, w.ended)
	}
	w.ended = n
	return nil
}

// watchOf is the open watch a line of what names.
func (c *consistency) watchOf(l Line, what string) (*watchState, error) {
	w, ok := c.watches[l.Watch]
	switch {
	case !ok:
		return nil, fmt.Errorf("%s of watch %d, which no line before it opens: a watch's lines come after its watch line", what, l.Watch)
	case w.failed:
		return nil, fmt.Errorf("%s of watch %d, whose WATCH failed (line %d): it never opened", what, l.Watch, w.opened)
	}
	return w, nil
}

// eventTypes are the types of event a watch sends.
var eventTypes = map[string]bool{"ADDED": true, "MODIFIED": true, "DELETED": true, "BOOKMARK": true, "ERROR": true}

func (c *consistency) event(l Line, n int) error {
	w, err := c.watchOf(l, "an event")
	if err != nil {
		return err
	}
	switch {
	case w.ended > 0:
		return fmt.Errorf("an event of watch %d after its watch-end (line %d)", l.Watch, w.ended)
	case w.errored > 0:
		return fmt.Errorf("an event of watch %d after its ERROR (line %d): an ERROR is a watch's last event", l.Watch, w.errored)
	case !eventTypes[l.Type]:
		return fmt.Errorf("unknown event type %q (want one of ADDED, MODIFIED, DELETED, BOOKMARK, ERROR)", l.Type)
	case l.Type == "ERROR":
		w.errored = n
		if l.Object == nil {
			return fmt.Errorf("an ERROR event has no object (its Status)")
		}
		return nil
	}
	rv, err := objectRV("event's object", l.Object, l.Type != "BOOKMARK")
	if err != nil {
		return err
	}
	if w.initial {
		return c.initialEvent(w, l, n, rv)
	}
	return c.change(w, l, n, rv)
}

// initialEvent takes in one of a watch-list's initial events: an ADDED
// per object, at the object's own resourceVersion, then the bookmark that
// ends them, at the snapshot's.
func (c *consistency) initialEvent(w *watchState, l Line, n int, rv int64) error {
	switch {
	case l.Type == "ADDED":
		if rv > w.initialRV {
			w.initialRV, w.initialLine = rv, n
		}
		return nil
	case l.Type != "BOOKMARK":
		return fmt.Errorf("%s event among watch %d's initial events: a watch-list's initial events are ADDED events, then the bookmark that ends them", an(l.Type), l.Watch)
	case !endsInitialEvents(l.Object):
		return nil // a bookmark that does not end them says nothing yet
	case rv < w.initialRV:
		return fmt.Errorf("the bookmark that ends watch %d's initial events is at rv %d, older than its initial event at rv %d (line %d)", l.Watch, rv, w.initialRV, w.initialLine)
	case rv < c.rv:
		return fmt.Errorf("a watch-list at rv %d, older than rv %d, which the recording had reached at line %d: an informer lists again from what it has, never from before it", rv, c.rv, c.rvLine)
	}
	w.initial, w.last, w.lastLine = false, rv, n
	c.rv, c.rvLine = rv, n
	return nil
}

// change takes in an event after the initial ones: a change or a
// bookmark, in resourceVersion order.
func (c *consistency) change(w *watchState, l Line, n int, rv int64) error {
	switch {
	case c.rv < 0:
		return fmt.Errorf("%s event of watch %d before any LIST or watch-list: an informer watches from what it has listed", an(l.Type), l.Watch)
	case rv < w.last:
		return fmt.Errorf("watch %d's %s event at rv %d goes back from its event at rv %d (line %d): a watch's events come in resourceVersion order", l.Watch, l.Type, rv, w.last, w.lastLine)
	case rv < w.from || rv == w.from && l.Type != "BOOKMARK":
		return fmt.Errorf("watch %d's %s event at rv %d, though it watches from rv %d: a watch sends what came after its resourceVersion", l.Watch, l.Type, rv, w.from)
	case rv < c.rv:
		return fmt.Errorf("%s event at rv %d, older than rv %d, which the recording had reached at line %d: an informer watches from what it has", an(l.Type), rv, c.rv, c.rvLine)
	}
	w.last, w.lastLine = rv, n
	c.rv, c.rvLine = rv, n
	return nil
}

// endsInitialEvents reports whether a bookmark's object carries the
// annotation that ends a watch-list's initial events.
func endsInitialEvents(obj map[string]any) bool {
	md, _ := obj["metadata"].(map[string]any)
	ann, _ := md["annotations"].(map[string]any)
	return ann[initialEventsEnd] == "true"
}

// checkScope checks the session line's namespace and selectors: a replay
// asks for them again, as the recorded informer asked the server.
func checkScope(l Line) error {
	if l.Namespace != "" {
		if errs := validation.IsDNS1123Label(l.Namespace); len(errs) > 0 {
			return fmt.Errorf("the session line's namespace %q is not a namespace's name: %s", l.Namespace, strings.Join(errs, "; "))
		}
	}
	if _, err := labels.Parse(l.Labels); err != nil {
		return fmt.Errorf("the session line's labels %q are not a label selector: %v", l.Labels, err)
	}
	if _, err := fields.ParseSelector(l.Fields); err != nil {
		return fmt.Errorf("the session line's fields %q are not a field selector: %v", l.Fields, err)
	}
	return nil
}

// objectRV checks an object's metadata, as a server writes it, and
// returns its resourceVersion: whose names the object for errors, and a
// name is needed but for a bookmark.
func objectRV(whose string, obj map[string]any, named bool) (int64, error) {
	if obj == nil {
		return 0, fmt.Errorf("%s is missing", whose)
	}
	md, ok := obj["metadata"].(map[string]any)
	if !ok {
		return 0, fmt.Errorf("%s has no metadata", whose)
	}
	for _, f := range []string{"name", "namespace", "resourceVersion"} {
		if v, ok := md[f]; ok {
			if _, ok := v.(string); !ok {
				return 0, fmt.Errorf("%s: metadata.%s is %s, not a string (write it in quotes)", whose, f, jsonType(v))
			}
		}
	}
	for _, f := range []string{"labels", "annotations"} {
		if err := stringMap(md[f]); err != nil {
			return 0, fmt.Errorf("%s: metadata.%s%v", whose, f, err)
		}
	}
	if name, _ := md["name"].(string); named && name == "" {
		return 0, fmt.Errorf("%s has no metadata.name", whose)
	}
	rv, _ := md["resourceVersion"].(string)
	if rv == "" {
		return 0, fmt.Errorf("%s has no metadata.resourceVersion", whose)
	}
	return parseRV(rv, whose+"'s")
}

// stringMap checks that v, a label or annotation map, is absent or maps
// strings to strings.
func stringMap(v any) error {
	if v == nil {
		return nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf(" is %s, not a map of strings", jsonType(v))
	}
	for k, x := range m {
		if _, ok := x.(string); !ok {
			return fmt.Errorf("[%s] is %s, not a string", strconv.Quote(k), jsonType(x))
		}
	}
	return nil
}

// jsonType names the JSON type of a decoded value, for messages.
func jsonType(v any) string {
	switch v.(type) {
	case float64:
		return "a number"
	case bool:
		return "a boolean"
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	case nil:
		return "null"
	}
	return "a string"
}

// an is a word with its indefinite article: "an ADDED", "a watch".
func an(word string) string {
	if word != "" && strings.ContainsRune("aeiouAEIOU", rune(word[0])) {
		return "an " + word
	}
	return "a " + word
}
