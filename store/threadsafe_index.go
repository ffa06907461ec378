package store

import "sort"

// Index returns the objects that share at least one value of index name
// with obj (obj itself need not be stored), in no particular order.
func (s *ThreadSafeStore) Index(name string, obj any) ([]any, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	keys, err := s.idx.keysMatching(name, obj)
	if err != nil {
		return nil, err
	}
	return s.objectsLocked(keys), nil
}

// ByIndex returns the objects whose index name holds value, in no
// particular order.
func (s *ThreadSafeStore) ByIndex(name, value string) ([]any, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	keys, err := s.idx.keysFor(name, value)
	if err != nil {
		return nil, err
	}
	return s.objectsLocked(keys), nil
}

// IndexKeys returns the keys whose index name holds value, sorted.
func (s *ThreadSafeStore) IndexKeys(name, value string) ([]string, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	keys, err := s.idx.keysFor(name, value)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(keys))
	for k := range keys {
		out = append(out, k)
	}
	sort.Strings(out)
	return out, nil
}

// ListIndexFuncValues returns every value index name holds, in no
// particular order; for an index that does not exist, none (and no error,
// unlike the other index queries: client-go's asymmetry, kept).
func (s *ThreadSafeStore) ListIndexFuncValues(name string) []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.idx.values(name)
}

// GetIndexers returns the index functions: the map the store was made
// with, which AddIndexers adds to (client-go returns it too, not a copy).
func (s *ThreadSafeStore) GetIndexers() Indexers {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.idx.funcs
}

// AddIndexers adds index functions and indexes every stored object with
// them. A name that is already taken is an error, and nothing is added.
func (s *ThreadSafeStore) AddIndexers(more Indexers) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.idx.addFuncsAndIndex(more, s.items)
}

func (s *ThreadSafeStore) objectsLocked(keys keySet) []any {
	out := make([]any, 0, len(keys))
	for k := range keys {
		out = append(out, s.items[k])
	}
	return out
}
