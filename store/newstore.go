package store

// client-go makes its stores with NewStore and NewIndexer and option
// functions; cachelab's one constructor is New with an Options struct.
// These two say the same in client-go's words, so that code (and a
// test) written against client-go's tools/cache reads the same here.

// StoreOption sets one field of Options, as client-go's StoreOption
// does of its cache.
type StoreOption func(*Options)

// WithTransformer sets the store's TransformFunc (client-go:
// WithTransformer).
func WithTransformer(transformer TransformFunc) StoreOption {
	return func(o *Options) { o.Transformer = transformer }
}

// NewStore returns a Store keyed by keyFunc, with no indices (client-go:
// NewStore). It is New with Options{KeyFunc: keyFunc} and opts applied.
func NewStore(keyFunc KeyFunc, opts ...StoreOption) Store {
	return NewIndexer(keyFunc, Indexers{}, opts...)
}

// NewIndexer returns an Indexer keyed by keyFunc with the given index
// functions (client-go: NewIndexer). Unlike client-go's, a nil indexers
// makes an empty map, as New does (doc.go, "Differences in behaviour").
func NewIndexer(keyFunc KeyFunc, indexers Indexers, opts ...StoreOption) Indexer {
	o := Options{KeyFunc: keyFunc, Indexers: indexers}
	for _, opt := range opts {
		opt(&o)
	}
	return New(o)
}
