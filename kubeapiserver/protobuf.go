package kubeapiserver

import (
	"bytes"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
	"k8s.io/apiserver/pkg/endpoints/request"
)

// Protobuf request bodies. A typed clientset (client-go's kubernetes
// package) made from a rest.Config without a ContentType, as every
// controller that reads a kubeconfig makes it, sends the body of a
// create or an update of a built-in kind as protobuf (client-go:
// rest/request.go, UseProtobufAsDefault), and kube-apiserver, which has
// the kind's Go type, decodes it. This server's handlers speak JSON only
// (serializer.go: its objects have no Go type), so a filter in front of
// them does that decoding, and hands them the same object as JSON:
//
//	POST /api/v1/namespaces/ns0/pods           POST /api/v1/namespaces/ns0/pods
//	Content-Type: ...vnd.kubernetes.protobuf ─▶ Content-Type: application/json
//	k8s\x00 + Unknown{v1 Pod, raw}    decode to  {"apiVersion":"v1","kind":"Pod",...}
//	                                  corev1.Pod, encode as JSON
//
// The rest of the request goes on as any JSON one: the handler decodes
// the body, refuses a kind that is not the resource's, and stores it.
// What protobuf does not carry is not in the JSON either: an empty list
// or map decodes as an absent one, as kube-apiserver sees it too.
//
// Only creates and updates go through the filter. A DELETE's body, a
// DeleteOptions, needs nothing: k8s.io/apiserver's delete handler
// decodes it itself with meta/v1's codecs, which take protobuf, for any
// resource (delete.go DeleteResource). A PATCH's body is a patch, never
// protobuf. And the response is the handler's: JSON, whatever the client
// accepts, since that is the only encoding the resource is served in;
// client-go decodes it by its Content-Type.
//
// A protobuf body sent to a resource whose kind has no Go type here (a
// custom resource) is left as it came, and the handler answers it 415,
// naming the media types it takes: kube-apiserver does not decode a
// custom resource from protobuf either.

// builtInScheme holds the Go types of the built-in kinds a typed client
// sends as protobuf: core/v1's (pods, configmaps, secrets, namespaces)
// and apps/v1's (deployments), and meta/v1's in each group version. It
// is made once, when the package is loaded, and only read after.
var builtInScheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(corev1.AddToScheme(s))
	utilruntime.Must(appsv1.AddToScheme(s))
	return s
}()

// protobufBodies is the filter that turns the protobuf body of a create
// or an update of a built-in kind into JSON, before h reads it.
type protobufBodies struct {
	h http.Handler
	// kinds are the served resources whose kind builtInScheme holds.
	kinds map[schema.GroupVersionResource]schema.GroupVersionKind
	// limit is the handlers' request body limit
	// (Config.MaxRequestBodyBytes), which the filter reads up to.
	limit int64
	// statuses encode the filter's refusals as the handler would: as
	// JSON.
	statuses negotiated
	decode   *protobuf.Serializer
	encode   *json.Serializer
}

// protobufBodies is the filter in front of h, for the resources s serves.
func (s *Server) protobufBodies(h http.Handler, limit int64) http.Handler {
	kinds := map[schema.GroupVersionResource]schema.GroupVersionKind{}
	for _, sv := range s.served {
		if res := sv.storage.Resource(); builtInScheme.Recognizes(res.GroupVersionKind()) {
			kinds[res.GroupVersionResource()] = res.GroupVersionKind()
		}
	}
	return &protobufBodies{
		h: h, kinds: kinds, limit: limit, statuses: negotiated{s.kinds.scheme},
		decode: protobuf.NewSerializer(builtInScheme, builtInScheme),
		encode: json.NewSerializerWithOptions(json.DefaultMetaFactory, builtInScheme, builtInScheme, json.SerializerOptions{}),
	}
}

func (p *protobufBodies) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	kind, ok := p.takes(req)
	if !ok {
		p.h.ServeHTTP(w, req)
		return
	}
	body, err := p.asJSON(req, kind)
	if err != nil {
		info, _ := request.RequestInfoFrom(req.Context())
		responsewriters.ErrorNegotiated(err, p.statuses, schema.GroupVersion{Group: info.APIGroup, Version: info.APIVersion}, w, req)
		return
	}
	r := req.Clone(req.Context())
	r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	r.Header.Set("Content-Type", runtime.ContentTypeJSON)
	r.Header.Set("Content-Length", strconv.Itoa(len(body)))
	p.h.ServeHTTP(w, r)
}

// takes reports whether req is a create or an update, with a protobuf
// body, of a resource whose kind builtInScheme holds, and that kind.
func (p *protobufBodies) takes(req *http.Request) (schema.GroupVersionKind, bool) {
	media, _, err := mime.ParseMediaType(req.Header.Get("Content-Type"))
	if err != nil || media != runtime.ContentTypeProtobuf {
		return schema.GroupVersionKind{}, false
	}
	info, ok := request.RequestInfoFrom(req.Context())
	if !ok || !info.IsResourceRequest || info.Subresource != "" || (info.Verb != "create" && info.Verb != "update") {
		return schema.GroupVersionKind{}, false
	}
	kind, ok := p.kinds[schema.GroupVersionResource{Group: info.APIGroup, Version: info.APIVersion, Resource: info.Resource}]
	return kind, ok
}

// asJSON reads req's body, at most the handlers' limit of it, decodes it
// from protobuf (kind fills in what its envelope leaves out, as the
// handler's defaults do) and encodes it as JSON, with its apiVersion and
// kind. A body over the limit is 413, as the handler answers it; one
// that does not decode, or is of a kind builtInScheme does not hold, is
// 400, as kube-apiserver answers a body it cannot decode (create.go
// transformDecodeError).
//
// The limit is the protobuf body's, and the handler reads the JSON,
// which is longer, under the same limit: a body whose JSON is over it
// (3 MiB by default, more than etcd takes for one object) is refused
// 413 here, where kube-apiserver would read it.
func (p *protobufBodies) asJSON(req *http.Request, kind schema.GroupVersionKind) ([]byte, error) {
	raw, err := io.ReadAll(io.LimitReader(req.Body, p.limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(raw)) > p.limit {
		return nil, apierrors.NewRequestEntityTooLargeError(fmt.Sprintf("limit is %d", p.limit))
	}
	obj, gvk, err := p.decode.Decode(raw, &kind, nil)
	if err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the body does not decode from protobuf as a %s: %v", kind.Kind, err))
	}
	obj.GetObjectKind().SetGroupVersionKind(*gvk) // protobuf carries it in the envelope, not in the object
	return runtime.Encode(p.encode, obj)
}
