package informer

// ResourceEventHandler is what a controller registers with an informer to
// hear about changes. Calls to one handler come one at a time, in the
// order the informer saw the changes; a slow handler delays only itself
// (P10).
//
//   - OnAdd: an object appeared in the cache. isInInitialList is true
//     while the informer is delivering its initial list (and for the
//     synthetic adds a late handler receives, P8).
//   - OnUpdate: an object changed, or, when old and new have the same
//     resourceVersion, a resync or relist re-delivered it unchanged (P6).
//   - OnDelete: an object left the cache. obj may be a
//     store.DeletedFinalStateUnknown when the delete was missed while the
//     watch was down and only a relist noticed (P2, P3).
//
// Handlers must not modify the objects they are given: they are the
// cache's own.
//
// It mirrors client-go's ResourceEventHandler (controller.go).
type ResourceEventHandler interface {
	OnAdd(obj any, isInInitialList bool)
	OnUpdate(oldObj, newObj any)
	OnDelete(obj any)
}

// ResourceEventHandlerFuncs adapts plain functions to a
// ResourceEventHandler; nil functions ignore their event. AddFunc does not
// hear isInInitialList: use ResourceEventHandlerDetailedFuncs for that.
type ResourceEventHandlerFuncs struct {
	AddFunc    func(obj any)
	UpdateFunc func(oldObj, newObj any)
	DeleteFunc func(obj any)
}

// OnAdd calls AddFunc if it is set.
func (f ResourceEventHandlerFuncs) OnAdd(obj any, _ bool) {
	if f.AddFunc != nil {
		f.AddFunc(obj)
	}
}

// OnUpdate calls UpdateFunc if it is set.
func (f ResourceEventHandlerFuncs) OnUpdate(oldObj, newObj any) {
	if f.UpdateFunc != nil {
		f.UpdateFunc(oldObj, newObj)
	}
}

// OnDelete calls DeleteFunc if it is set.
func (f ResourceEventHandlerFuncs) OnDelete(obj any) {
	if f.DeleteFunc != nil {
		f.DeleteFunc(obj)
	}
}

// ResourceEventHandlerDetailedFuncs is ResourceEventHandlerFuncs whose
// AddFunc also hears isInInitialList.
type ResourceEventHandlerDetailedFuncs struct {
	AddFunc    func(obj any, isInInitialList bool)
	UpdateFunc func(oldObj, newObj any)
	DeleteFunc func(obj any)
}

// OnAdd calls AddFunc if it is set.
func (f ResourceEventHandlerDetailedFuncs) OnAdd(obj any, isInInitialList bool) {
	if f.AddFunc != nil {
		f.AddFunc(obj, isInInitialList)
	}
}

// OnUpdate calls UpdateFunc if it is set.
func (f ResourceEventHandlerDetailedFuncs) OnUpdate(oldObj, newObj any) {
	if f.UpdateFunc != nil {
		f.UpdateFunc(oldObj, newObj)
	}
}

// OnDelete calls DeleteFunc if it is set.
func (f ResourceEventHandlerDetailedFuncs) OnDelete(obj any) {
	if f.DeleteFunc != nil {
		f.DeleteFunc(obj)
	}
}

// FilteringResourceEventHandler passes on only the objects FilterFunc
// accepts, and turns crossings of the filter into adds and deletes (P13):
//
//	old passes  new passes   Handler hears
//	    yes        yes       OnUpdate(old, new)
//	    no         yes       OnAdd(new, false)
//	    yes        no        OnDelete(old)
//	    no         no        nothing
//
// FilterFunc sees a DeletedFinalStateUnknown as it is, not the object in
// it.
type FilteringResourceEventHandler struct {
	FilterFunc func(obj any) bool
	Handler    ResourceEventHandler
}

// OnAdd passes obj on if it passes the filter.
func (f FilteringResourceEventHandler) OnAdd(obj any, isInInitialList bool) {
	if f.FilterFunc(obj) {
		f.Handler.OnAdd(obj, isInInitialList)
	}
}

// OnUpdate passes the update on as an update, add or delete, or not at all.
func (f FilteringResourceEventHandler) OnUpdate(oldObj, newObj any) {
	newer, older := f.FilterFunc(newObj), f.FilterFunc(oldObj)
	switch {
	case newer && older:
		f.Handler.OnUpdate(oldObj, newObj)
	case newer:
		f.Handler.OnAdd(newObj, false)
	case older:
		f.Handler.OnDelete(oldObj)
	}
}

// OnDelete passes obj on if it passes the filter.
func (f FilteringResourceEventHandler) OnDelete(obj any) {
	if f.FilterFunc(obj) {
		f.Handler.OnDelete(obj)
	}
}
