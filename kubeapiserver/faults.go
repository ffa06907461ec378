package kubeapiserver

import (
	"fmt"
	"net/http"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
	"k8s.io/apiserver/pkg/endpoints/request"
)

// Fault is an answer the server gives a request instead of serving it.
type Fault struct {
	// Status is the HTTP status: 429 is answered as kube-apiserver's
	// max-in-flight and priority-and-fairness filters answer it (a plain
	// text body); any other as an API error (a Status object) with that
	// code.
	Status int
	// RetryAfter, in seconds, is sent as a Retry-After header (and in
	// the Status's details); 0 for none.
	RetryAfter int
}

// FailNext makes the next request of user with verb ("list", "watch" or
// "" for either) fail with f, once. Faults for one user and verb are
// taken in the order they were set.
func (s *Server) FailNext(user, verb string, f Fault) {
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	s.faults.next = append(s.faults.next, armed{user: user, verb: verb, f: f})
}

type armed struct {
	user, verb string
	f          Fault
}

// faults is the filter that answers armed faults. It sits innermost in
// the handler chain, after authentication and authorization, where
// kube-apiserver's own max-in-flight filter sits.
type faults struct {
	codecs serializer.CodecFactory // the server's (kinds), for the errors
	mu     sync.Mutex
	next   []armed
}

func (fs *faults) take(user, verb string) (Fault, bool) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	for i, a := range fs.next {
		if a.user == user && (a.verb == "" || a.verb == verb) {
			fs.next = append(fs.next[:i], fs.next[i+1:]...)
			return a.f, true
		}
	}
	return Fault{}, false
}

func (fs *faults) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		ctx := req.Context()
		u, _ := request.UserFrom(ctx)
		info, _ := request.RequestInfoFrom(ctx)
		if u == nil || info == nil {
			h.ServeHTTP(w, req)
			return
		}
		f, ok := fs.take(u.GetName(), info.Verb)
		if !ok {
			h.ServeHTTP(w, req)
			return
		}
		if f.RetryAfter > 0 {
			w.Header().Set("Retry-After", retryAfter(f.RetryAfter))
		}
		if f.Status == http.StatusTooManyRequests {
			// k8s.io/apiserver server/filters: tooManyRequests
			http.Error(w, "Too many requests, please try again later.", http.StatusTooManyRequests)
			return
		}
		gr := schema.GroupResource{Group: info.APIGroup, Resource: info.Resource}
		err := apierrors.NewGenericServerResponse(f.Status, info.Verb, gr, info.Name,
			fmt.Sprintf("a fault the scenario placed: %d", f.Status), f.RetryAfter, true)
		responsewriters.ErrorNegotiated(err, fs.codecs, schema.GroupVersion{Group: info.APIGroup, Version: info.APIVersion}, w, req)
	})
}
