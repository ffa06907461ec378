package difftest

import "strconv"

// Decoder turns fuzz input into test objects and operation scripts. Every
// choice reads one byte; an exhausted input reads zeros, so any input,
// including an empty one, decodes to a valid (if short) script.
type Decoder struct {
	data []byte
	pos  int
	rv   int // resourceVersions increase as objects are made
}

// NewDecoder decodes data.
func NewDecoder(data []byte) *Decoder { return &Decoder{data: data} }

// Byte reads one byte (0 once the input is used up).
func (d *Decoder) Byte() byte {
	if d.pos >= len(d.data) {
		return 0
	}
	b := d.data[d.pos]
	d.pos++
	return b
}

// Done reports whether the input is used up.
func (d *Decoder) Done() bool { return d.pos >= len(d.data) }

// Intn reads a number in [0, n).
func (d *Decoder) Intn(n int) int { return int(d.Byte()) % n }

// keys is the small key space fuzzed objects live in: small, so that
// operations keep meeting the same keys. "c" is cluster-scoped.
var keys = []string{"a/x", "a/y", "b/x", "c", "d/z"}

// Object reads an object: one of a few keys, a fresh resourceVersion (or,
// one time in eight, the previous one), an app label, and rarely a label
// that makes a test function fail. With allowBad it can also be nil or
// an object without metadata.
func (d *Decoder) Object(allowBad bool) any {
	flags := d.Byte()
	if allowBad && flags == 0xFF {
		return Bad(int(d.Byte()))
	}
	if allowBad && flags == 0xFE {
		return nil
	}
	if flags == 0xFD {
		var last any
		if d.Byte()%2 == 0 {
			last = d.Object(false)
		}
		return Tomb{Key: keys[d.Intn(len(keys))], Obj: last}
	}
	key := keys[d.Intn(len(keys))]
	if flags&0x08 == 0 || d.rv == 0 {
		d.rv++
	}
	opts := []ObjOption{RV(d.rv)}
	if app := []string{"", "web", "db", "api"}[flags&3]; app != "" {
		opts = append(opts, Label("app", app))
	}
	switch flags & 0xF0 {
	case 0xF0:
		opts = append(opts, Label(LabelTransformFails, "y"))
	case 0xE0:
		opts = append(opts, Label(LabelLookupFails, "y"))
	case 0xD0:
		opts = append(opts, Label(LabelIndexFails, "y"))
	case 0xC0:
		opts = append(opts, Label("tier", "web")) // two values for IndexByLabelValues
	}
	return Pod(key, opts...)
}

// Objects reads a list of up to max objects.
func (d *Decoder) Objects(max int, allowBad bool) []any {
	n := d.Intn(max + 1)
	out := make([]any, n)
	for i := range out {
		out[i] = d.Object(allowBad)
	}
	return out
}

// RV reads a resourceVersion string, sometimes empty.
func (d *Decoder) RV() string {
	if b := d.Byte(); b%5 != 0 {
		return strconv.Itoa(int(b))
	}
	return ""
}

// QueueConfig reads a queue configuration. For RealFIFO it is always a
// valid combination; invalid ones are TestRealFIFOOptionPanics' business.
func (d *Decoder) QueueConfig() QueueConfig {
	b := d.Byte()
	c := QueueConfig{
		Known:        b&1 != 0,
		EmitReplaced: b&2 != 0,
		Transform:    b&4 != 0,
		Atomic:       b&8 != 0,
	}
	c.Unlock = c.Atomic && b&16 != 0
	c.Bookmarks = c.Atomic && b&32 != 0
	return c
}

// QueueOps reads a script of at most max ops drawn from kinds.
func (d *Decoder) QueueOps(kinds []OpKind, max int) []Op {
	var ops []Op
	for !d.Done() && len(ops) < max {
		switch kind := kinds[d.Intn(len(kinds))]; kind {
		case OpAdd, OpUpdate, OpDelete:
			ops = append(ops, Op{Kind: kind, Obj: d.Object(true)})
		case OpKnownSet, OpKnownRemove:
			ops = append(ops, Op{Kind: kind, Obj: d.Object(false)})
		case OpReplace:
			ops = append(ops, Op{Kind: kind, List: d.Objects(4, true), RV: d.RV()})
		case OpBookmark:
			ops = append(ops, Op{Kind: kind, RV: d.RV()})
		case OpPop, OpPopBatch:
			ops = append(ops, Op{Kind: kind, Fail: d.Byte()%8 == 0})
		default:
			ops = append(ops, Op{Kind: kind})
		}
	}
	return ops
}

// storeKinds are the store operations a fuzzed script draws from.
var storeKinds = []string{"add", "add", "update", "delete", "get", "getbykey", "list", "listkeys", "rv",
	"replace", "index", "indexkeys", "byindex", "listvalues", "addindexers", "bookmark", "transaction", "resync"}

var indexNames = []string{"app", "namespace", "labels", "missing"}

// StoreConfig reads a store configuration.
func (d *Decoder) StoreConfig() StoreConfig {
	b := d.Byte()
	return StoreConfig{Transform: b&1 != 0, DeletionHandling: b&2 != 0}
}

// StoreOps reads a store script of at most max ops.
func (d *Decoder) StoreOps(max int) []StoreOp {
	var ops []StoreOp
	for !d.Done() && len(ops) < max {
		op := StoreOp{Kind: storeKinds[d.Intn(len(storeKinds))]}
		switch op.Kind {
		case "add", "update", "delete", "get":
			op.Obj = d.Object(true)
		case "getbykey":
			op.Key = keys[d.Intn(len(keys))]
		case "replace":
			op.List, op.RV = d.Objects(4, true), d.RV()
		case "index":
			op.Index, op.Obj = indexNames[d.Intn(len(indexNames))], d.Object(true)
		case "indexkeys", "byindex":
			op.Index = indexNames[d.Intn(len(indexNames))]
			op.Value = []string{"", "web", "db", "api", "a", "b", "x"}[d.Intn(7)]
		case "listvalues":
			op.Index = indexNames[d.Intn(len(indexNames))]
		case "addindexers":
			op.Index = indexNames[d.Intn(3)]
		case "bookmark":
			op.RV = d.RV()
		case "transaction":
			n := d.Intn(4)
			for range n {
				op.Txns = append(op.Txns, Txn{Type: []string{"Add", "Update", "Delete"}[d.Intn(3)], Obj: d.Object(true)})
			}
		}
		ops = append(ops, op)
	}
	return ops
}
