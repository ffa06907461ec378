package difftest

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/cachelab/cachelab/store"
)

// Builders for queue scripts.

// Add is an Add op.
func Add(obj any) Op { return Op{Kind: OpAdd, Obj: obj} }

// Update is an Update op.
func Update(obj any) Op { return Op{Kind: OpUpdate, Obj: obj} }

// Delete is a Delete op.
func Delete(obj any) Op { return Op{Kind: OpDelete, Obj: obj} }

// Replace is a Replace op.
func Replace(rv string, objs ...any) Op { return Op{Kind: OpReplace, List: objs, RV: rv} }

// Resync is a Resync op.
func Resync() Op { return Op{Kind: OpResync} }

// Bookmark is a Bookmark op.
func Bookmark(rv string) Op { return Op{Kind: OpBookmark, RV: rv} }

// Pop is a Pop op.
func Pop() Op { return Op{Kind: OpPop} }

// PopFail is a Pop whose process function returns an error.
func PopFail() Op { return Op{Kind: OpPop, Fail: true} }

// PopBatch is a PopBatch op.
func PopBatch() Op { return Op{Kind: OpPopBatch} }

// Close is a Close op.
func Close() Op { return Op{Kind: OpClose} }

// KnownSet puts obj in both sides' consumer caches.
func KnownSet(obj any) Op { return Op{Kind: OpKnownSet, Obj: obj} }

// KnownRemove removes obj from both sides' consumer caches.
func KnownRemove(obj any) Op { return Op{Kind: OpKnownRemove, Obj: obj} }

// describe names an object for scripts and transcripts: key@rv, with +tN
// when the test transformer has run N times on it.
func describe(obj any) string {
	switch x := obj.(type) {
	case nil:
		return "nil"
	case *unstructured.Unstructured:
		k, _ := store.MetaNamespaceKeyFunc(x)
		s := k + "@" + x.GetResourceVersion()
		if n := x.GetAnnotations()[AnnotationTransformed]; n != "" {
			s += "+t" + n
		}
		return s
	case Tombstone:
		return fmt.Sprintf("Tombstone(%s: %s)", x.Key, describe(x.Obj))
	case Tomb:
		return describe(Tombstone(x))
	case store.DeletedFinalStateUnknown:
		return describe(Norm(x))
	case ReplacedAll:
		return fmt.Sprintf("{rv=%s: %s}", x.RV, describeAll(x.Objects))
	case BookmarkRV:
		return "{rv=" + x.RV + "}"
	case SyncAll:
		return "{}"
	case store.ExplicitKey:
		return fmt.Sprintf("ExplicitKey(%s)", string(x))
	}
	return fmt.Sprintf("%T%+v", obj, obj)
}

func describeAll(objs []any) string {
	parts := make([]string, len(objs))
	for i, o := range objs {
		parts[i] = describe(o)
	}
	return strings.Join(parts, " ")
}

// describePop renders one popped value for a transcript.
func describePop(p Popped) string {
	parts := make([]string, len(p.Deltas))
	for i, d := range p.Deltas {
		if d.Type == "" {
			parts[i] = describe(d.Object)
		} else {
			parts[i] = d.Type + " " + describe(d.Object)
		}
	}
	s := "[" + strings.Join(parts, ", ") + "]"
	if p.Batch {
		s = "batch " + s
	}
	if p.InInitialList {
		s += " initial"
		// The one pop that finishes the initial list: did the queue already
		// report synced while process ran? (DeltaFIFO yes, the others no.)
		if p.SyncedInProcess {
			s += " synced-in-process"
		}
	}
	return s
}
