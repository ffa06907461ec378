package recording

// Reduce is what a session keeps of an object: by default its kind, its
// name and namespace, its labels and its resourceVersion (and, once it
// is being deleted, its deletionTimestamp), and nothing else: a session
// from a production cluster holds no specs, no statuses, no annotations
// (which often hold secrets' checksums or whole configurations) and no
// managed fields. With full, the object as it came.
//
// An informer's behaviour depends on no more than this: its keys, its
// resourceVersions and, through selectors the server applies, its
// labels.
func Reduce(obj map[string]any, full bool) map[string]any {
	if full {
		return obj
	}
	out := map[string]any{}
	for _, k := range []string{"apiVersion", "kind"} {
		if v, ok := obj[k]; ok {
			out[k] = v
		}
	}
	md, _ := obj["metadata"].(map[string]any)
	kept := map[string]any{}
	for _, k := range []string{"name", "namespace", "resourceVersion", "labels", "deletionTimestamp"} {
		if v, ok := md[k]; ok {
			kept[k] = v
		}
	}
	// A watch-list's last bookmark says that the initial events are over
	// in an annotation: the one annotation kept.
	if ann, ok := md["annotations"].(map[string]any); ok {
		if v, ok := ann[initialEventsEnd]; ok {
			kept["annotations"] = map[string]any{initialEventsEnd: v}
		}
	}
	out["metadata"] = kept
	return out
}

// initialEventsEnd is the annotation of the bookmark that ends a
// watch-list's initial events (metav1.InitialEventsAnnotationKey).
const initialEventsEnd = "k8s.io/initial-events-end"
