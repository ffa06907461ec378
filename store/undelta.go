package store

// UndeltaStore is a Store that, after every write, hands PushFunc the
// whole content: it turns a stream of changes (what a reflector delivers)
// back into a stream of complete states, for a consumer that only
// understands "here is everything" (U1). It mirrors client-go's
// UndeltaStore (undelta_store.go); like client-go's, its fields are
// exported and may be set directly.
//
// A write and the List after it take the store's lock separately, so two
// concurrent writes may both push the state that holds both: every write
// is followed by a push of a state that includes it, and the same state
// may be pushed twice. PushFunc must be safe to call concurrently.
type UndeltaStore struct {
	Store
	PushFunc func([]any)
}

var _ Store = (*UndeltaStore)(nil)

// NewUndeltaStore returns an empty UndeltaStore over a plain store keyed
// by keyFunc.
func NewUndeltaStore(pushFunc func([]any), keyFunc KeyFunc) *UndeltaStore {
	return &UndeltaStore{Store: New(Options{KeyFunc: keyFunc}), PushFunc: pushFunc}
}

// pushAfter pushes the whole content if the write succeeded (U1).
func (u *UndeltaStore) pushAfter(err error) error {
	if err != nil {
		return err
	}
	u.PushFunc(u.Store.List())
	return nil
}

// Add stores obj, then pushes the whole content.
func (u *UndeltaStore) Add(obj any) error { return u.pushAfter(u.Store.Add(obj)) }

// Update stores obj, then pushes the whole content.
func (u *UndeltaStore) Update(obj any) error { return u.pushAfter(u.Store.Update(obj)) }

// Delete removes obj's key, then pushes the whole content, even when
// nothing was stored under the key.
func (u *UndeltaStore) Delete(obj any) error { return u.pushAfter(u.Store.Delete(obj)) }

// Replace makes list the whole content (the store keeps list's objects;
// do not modify them), then pushes it.
func (u *UndeltaStore) Replace(list []any, resourceVersion string) error {
	return u.pushAfter(u.Store.Replace(list, resourceVersion))
}
