package informer

import (
	"fmt"
	"strings"

	"github.com/cachelab/cachelab/store"
)

// Object is what a typed handler's objects must be: comparable (so a
// missing object, a nil pointer, can be told apart) and named.
type Object interface {
	comparable
	GetName() string
	GetNamespace() string
}

// DeletedObject is what a typed handler's OnDelete gets: the tombstone
// made explicit (client-go v0.36). OptionalObj is the deleted object as
// the informer last knew it; when the informer noticed the delete only in
// a relist, FinalStateUnknown is set (its Key is always right) and
// OptionalObj may be stale or, if the cache had no copy, the zero T.
// GetObjectName, GetName, GetNamespace and GetKey work in every case.
type DeletedObject[T Object] struct {
	OptionalObj       T
	FinalStateUnknown *store.DeletedFinalStateUnknown
}

// GetObjectName is the deleted object's namespace and name: from the
// tombstone's key when there is one (a key with more than one "/" keeps
// the rest in the name), else from OptionalObj, else empty.
func (d DeletedObject[T]) GetObjectName() store.ObjectName {
	if d.FinalStateUnknown != nil {
		ns, name, found := strings.Cut(d.FinalStateUnknown.Key, "/")
		if !found {
			return store.ObjectName{Name: ns}
		}
		return store.ObjectName{Namespace: ns, Name: name}
	}
	var zero T
	if d.OptionalObj == zero {
		return store.ObjectName{}
	}
	return store.ObjectName{Namespace: d.OptionalObj.GetNamespace(), Name: d.OptionalObj.GetName()}
}

// GetName is the deleted object's name, without the namespace.
func (d DeletedObject[T]) GetName() string { return d.GetObjectName().Name }

// GetNamespace is the deleted object's namespace, if it has one.
func (d DeletedObject[T]) GetNamespace() string { return d.GetObjectName().Namespace }

// GetKey is the key the deleted object was stored under.
func (d DeletedObject[T]) GetKey() string {
	if d.FinalStateUnknown != nil {
		return d.FinalStateUnknown.Key
	}
	return d.GetObjectName().String()
}

// TypedResourceEventHandler is ResourceEventHandler for objects of type
// T, with the tombstone made explicit in OnDelete.
type TypedResourceEventHandler[T Object] interface {
	OnAdd(obj T, isInInitialList bool)
	OnUpdate(oldObj, newObj T)
	OnDelete(obj DeletedObject[T])
}

// TypedResourceEventHandlerFuncs is ResourceEventHandlerFuncs for Ts.
type TypedResourceEventHandlerFuncs[T Object] struct {
	AddFunc    func(obj T)
	UpdateFunc func(oldObj, newObj T)
	DeleteFunc func(obj DeletedObject[T])
}

// OnAdd calls AddFunc if it is set.
func (f TypedResourceEventHandlerFuncs[T]) OnAdd(obj T, _ bool) {
	if f.AddFunc != nil {
		f.AddFunc(obj)
	}
}

// OnUpdate calls UpdateFunc if it is set.
func (f TypedResourceEventHandlerFuncs[T]) OnUpdate(oldObj, newObj T) {
	if f.UpdateFunc != nil {
		f.UpdateFunc(oldObj, newObj)
	}
}

// OnDelete calls DeleteFunc if it is set.
func (f TypedResourceEventHandlerFuncs[T]) OnDelete(obj DeletedObject[T]) {
	if f.DeleteFunc != nil {
		f.DeleteFunc(obj)
	}
}

// TypedResourceEventHandlerDetailedFuncs is
// ResourceEventHandlerDetailedFuncs for Ts.
type TypedResourceEventHandlerDetailedFuncs[T Object] struct {
	AddFunc    func(obj T, isInInitialList bool)
	UpdateFunc func(oldObj, newObj T)
	DeleteFunc func(obj DeletedObject[T])
}

// OnAdd calls AddFunc if it is set.
func (f TypedResourceEventHandlerDetailedFuncs[T]) OnAdd(obj T, isInInitialList bool) {
	if f.AddFunc != nil {
		f.AddFunc(obj, isInInitialList)
	}
}

// OnUpdate calls UpdateFunc if it is set.
func (f TypedResourceEventHandlerDetailedFuncs[T]) OnUpdate(oldObj, newObj T) {
	if f.UpdateFunc != nil {
		f.UpdateFunc(oldObj, newObj)
	}
}

// OnDelete calls DeleteFunc if it is set.
func (f TypedResourceEventHandlerDetailedFuncs[T]) OnDelete(obj DeletedObject[T]) {
	if f.DeleteFunc != nil {
		f.DeleteFunc(obj)
	}
}

// TypedFilteringResourceEventHandler is FilteringResourceEventHandler for
// Ts (P13's rules). An update that stops matching becomes an OnDelete of
// the old object, with no tombstone; OnDelete filters OptionalObj, which
// may be the zero T.
type TypedFilteringResourceEventHandler[T Object] struct {
	FilterFunc func(obj T) bool
	Handler    TypedResourceEventHandler[T]
}

// OnAdd calls the handler if obj matches.
func (f TypedFilteringResourceEventHandler[T]) OnAdd(obj T, isInInitialList bool) {
	if f.FilterFunc(obj) {
		f.Handler.OnAdd(obj, isInInitialList)
	}
}

// OnUpdate calls OnUpdate, OnAdd or OnDelete as the match changes.
func (f TypedFilteringResourceEventHandler[T]) OnUpdate(oldObj, newObj T) {
	newer, older := f.FilterFunc(newObj), f.FilterFunc(oldObj)
	switch {
	case newer && older:
		f.Handler.OnUpdate(oldObj, newObj)
	case newer:
		f.Handler.OnAdd(newObj, false)
	case older:
		f.Handler.OnDelete(DeletedObject[T]{OptionalObj: oldObj})
	}
}

// OnDelete calls the handler if the deleted object matches.
func (f TypedFilteringResourceEventHandler[T]) OnDelete(obj DeletedObject[T]) {
	if f.FilterFunc(obj.OptionalObj) {
		f.Handler.OnDelete(obj)
	}
}

// TypedSharedIndexInformer is a SharedIndexInformer whose objects are all
// Ts, with type-safe ways to add handlers and indices (client-go v0.36).
// It is a view: the informer underneath is shared.
type TypedSharedIndexInformer[T Object] struct {
	*SharedIndexInformer
}

// NewTypedSharedIndexInformer is the typed view of inf.
func NewTypedSharedIndexInformer[T Object](inf *SharedIndexInformer) TypedSharedIndexInformer[T] {
	return TypedSharedIndexInformer[T]{inf}
}

// AddTypedEventHandler registers a typed handler, with at most one
// HandlerOptions (AddEventHandlerWithOptions).
func (s TypedSharedIndexInformer[T]) AddTypedEventHandler(h TypedResourceEventHandler[T], options ...HandlerOptions) (Registration, error) {
	var o HandlerOptions
	switch len(options) {
	case 0:
	case 1:
		o = options[0]
	default:
		return nil, fmt.Errorf("at most one HandlerOptions may be passed, got %d", len(options))
	}
	return s.AddEventHandlerWithOptions(&typedHandler[T]{h}, o)
}

// AddTypedIndexers is AddIndexers for TypedIndexFuncs.
func (s TypedSharedIndexInformer[T]) AddTypedIndexers(indexers store.TypedIndexers[T]) error {
	return s.AddIndexers(store.TypedIndexersToIndexers(indexers))
}

// GetTypedIndexer is the informer's indexer, typed.
func (s TypedSharedIndexInformer[T]) GetTypedIndexer() store.TypedIndexer[T] {
	return store.TypedIndexer[T]{Indexer: s.GetIndexer()}
}

// typedHandler calls a typed handler from the untyped calls: objects are
// asserted to T (a wrong type panics, P14), and a tombstone becomes a
// DeletedObject with FinalStateUnknown set.
type typedHandler[T Object] struct {
	h TypedResourceEventHandler[T]
}

func (t *typedHandler[T]) OnAdd(obj any, isInInitialList bool) { t.h.OnAdd(obj.(T), isInInitialList) }
func (t *typedHandler[T]) OnUpdate(oldObj, newObj any)         { t.h.OnUpdate(oldObj.(T), newObj.(T)) }

func (t *typedHandler[T]) OnDelete(obj any) {
	if tomb, ok := obj.(store.DeletedFinalStateUnknown); ok {
		d := DeletedObject[T]{FinalStateUnknown: &tomb}
		if tomb.Obj != nil {
			d.OptionalObj = tomb.Obj.(T)
		}
		t.h.OnDelete(d)
		return
	}
	t.h.OnDelete(DeletedObject[T]{OptionalObj: obj.(T)})
}
