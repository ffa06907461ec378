package trace

import (
	"errors"
	"fmt"
	"strings"
)

// Filter picks the events a reader wants to see: some layers (--only),
// one object (--object). The zero Filter keeps everything. A filter
// changes what is shown, never what ran or what was compared: a step's
// verdict and its divergence stay whole.
type Filter struct {
	// Layers are the layers to keep, as ParseLayers returns them: a base
	// layer ("watch", "handler") or one handler's ("handler/h1"). Nil
	// keeps every layer.
	Layers []string
	// Object is a namespace/name to follow; "" keeps every object.
	Object string
}

// ErrUnknownLayer is returned by ParseLayers for a name that is not a
// layer of the trace; the message lists the valid ones.
var ErrUnknownLayer = errors.New("trace: unknown layer")

// ParseLayers reads a comma-separated list of layers, as --only takes it.
func ParseLayers(list string) ([]string, error) {
	var out []string
	for _, l := range strings.Split(list, ",") {
		l = strings.TrimSpace(l)
		base, name, isHandler := strings.Cut(l, "/")
		switch {
		case l == "",
			isHandler && (base != LayerHandler || name == ""),
			!isHandler && Rank(l) == len(layerOrder):
			return nil, fmt.Errorf("%w %q: want one or more of %s, or handler/<name>", ErrUnknownLayer, l, strings.Join(layerOrder, ", "))
		}
		out = append(out, l)
	}
	return out, nil
}

// ParseObject checks an --object value: a namespace/name.
func ParseObject(key string) (string, error) {
	ns, name, ok := strings.Cut(key, "/")
	if !ok || ns == "" || name == "" || strings.ContainsAny(key, " \t@") || strings.Contains(name, "/") {
		return "", fmt.Errorf("trace: object %q: want namespace/name, such as ns0/a", key)
	}
	return key, nil
}

// Keep reports whether e passes the filter. For Object, an event is kept
// when it is about that object (its Key), or when it is about no object
// in particular and does not name another one: a fault, a request, a
// reflector's replace, a relist's batch that lists the object among
// others (a ReplacedAll pop names its objects only in Detail).
func (f Filter) Keep(e Event) bool {
	return f.keepLayer(e.Layer) && f.keepObject(e)
}

func (f Filter) keepLayer(layer string) bool {
	if f.Layers == nil {
		return true
	}
	for _, l := range f.Layers {
		if l == layer || l == (Event{Layer: layer}).Base() {
			return true
		}
	}
	return false
}

func (f Filter) keepObject(e Event) bool {
	switch {
	case f.Object == "":
		return true
	case e.Key != "":
		return e.Key == f.Object
	case !strings.Contains(e.Detail, "@"): // names no object at all
		return true
	}
	return Names(e.Detail, f.Object)
}

// Names reports whether text names the object key as key@rv, as Describe
// writes it, and not as the tail of a longer key.
func Names(text, key string) bool {
	for i := 0; ; {
		j := strings.Index(text[i:], key+"@")
		if j < 0 {
			return false
		}
		at := i + j
		if at == 0 || strings.ContainsRune(" {(,:[", rune(text[at-1])) {
			return true
		}
		i = at + 1
	}
}

// Events returns the events that pass the filter, in their order.
func (f Filter) Events(events []Event) []Event {
	if f.Layers == nil && f.Object == "" {
		return events
	}
	var out []Event
	for _, e := range events {
		if f.Keep(e) {
			out = append(out, e)
		}
	}
	return out
}

// Step returns sr with only the events that pass the filter; its
// verdict and divergence are sr's.
func (f Filter) Step(sr StepResult) StepResult {
	out := sr
	out.World = f.Events(sr.World)
	out.Sides = make(map[string][]Event, len(sr.Sides))
	for who, evs := range sr.Sides {
		out.Sides[who] = f.Events(evs)
	}
	return out
}
