// Package wire is an informer's client of kube-apiserver over HTTP,
// written from scratch: a ListerWatcher whose LIST and WATCH are HTTP
// requests, as client-go's REST client (rest/request.go) and its
// dynamic client (dynamic/simple.go) make them. It uses net/http and
// apimachinery's decoders, framers and error types, and nothing of
// client-go.
//
// # A LIST
//
// GET /api/v1/namespaces/<ns>/pods?limit=500&resourceVersion=0: the
// ListOptions as query parameters, under their JSON names, in
// alphabetical order, the empty ones left out. The answer is a PodList,
// read as an *unstructured.UnstructuredList. A status outside 200–206 is
// an error: the Status in the body if the server sent one, or a generic
// error for the code (response.go).
//
// # A WATCH
//
// The same URL with watch=true. A 200 begins a stream of JSON
// WatchEvents, {"type": "ADDED", "object": {...}}, for as long as the
// server keeps it open: until the watch's timeoutSeconds, or until the
// client goes (stream.go). A BOOKMARK carries only a resourceVersion;
// an ERROR a Status (410 Expired). A watch-list (sendInitialEvents=true)
// is a watch whose stream begins with every object as ADDED and a
// BOOKMARK marking their end.
//
// # Between the client and the wire (client.go, limiter.go)
//
//   - a rate limit: a token bucket, 5 requests a second and a burst of
//     10 unless configured. A LIST waits for a token; a WATCH's first try
//     does not; every retry does.
//   - retries: a 429 or 5xx with a Retry-After of whole seconds is tried
//     again after that long, and a connection broken under a LIST (reset,
//     EOF) or a WATCH (EOF, timeout) after 1 s, up to 10 times. A WATCH
//     whose connection broke every time is an empty watch, not an error.
//   - each try is reported (Options.Observe), with its number, its
//     status, the Retry-After it was sent and the request as it went out
//     (whose context is the caller's): a simulator's trace shows the
//     requests as kubectl -v=6 would, each try named after its call.
//
// Every rule here is held to client-go's by differential tests: the same
// requests from both clients to an in-process kube-apiserver (package
// kubeapiserver), and to a scripted server that answers badly on
// purpose; the requests each sent and what each made of the answers are
// compared with go-cmp.
package wire
