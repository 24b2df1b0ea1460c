package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// The errors the gateway answers itself take the shape of Envoy's front door errors,
// {"code", "message"} without details (docs/api.md, "Errors the front door answers itself"),
// and Envoy's statuses: 405 with `allow` for a known path's wrong method, 400 for a query or
// body field naming another resource than the path (ADR 0044).

// reach records whether a request got as far as the server: only then is an error the
// server's status, details included.
type reach struct{ backend bool }

type reachKey struct{}

func reached(ctx context.Context) bool {
	found, _ := ctx.Value(reachKey{}).(*reach)
	return found != nil && found.backend
}

func markReached(ctx context.Context) {
	if found, ok := ctx.Value(reachKey{}).(*reach); ok {
		found.backend = true
	}
}

// reachUnary and reachStream are client interceptors on the gateway's connection to the server.
func reachUnary(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn,
	invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	markReached(ctx)
	return invoker(ctx, method, req, reply, cc, opts...)
}

func reachStream(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string,
	streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	markReached(ctx)
	return streamer(ctx, desc, cc, method, opts...)
}

func writeFrontDoor(w http.ResponseWriter, httpStatus int, code codes.Code, message string) {
	body, _ := json.Marshal(map[string]any{"code": int(code), "message": message})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(httpStatus)
	_, _ = w.Write(append(body, '\n'))
}

// errorHandler writes the server's errors as grpc-gateway does (the google.rpc.Status with its
// details, which equals Envoy's convert_grpc_status), and the gateway's own as the front door's.
func errorHandler(ctx context.Context, mux *runtime.ServeMux, marshaler runtime.Marshaler,
	w http.ResponseWriter, r *http.Request, err error) {
	if reached(ctx) {
		runtime.DefaultHTTPErrorHandler(ctx, mux, marshaler, w, r, err)
		return
	}
	failed := status.Convert(err)
	writeFrontDoor(w, runtime.HTTPStatusFromCode(failed.Code()), failed.Code(), failed.Message())
}

// routingErrorHandler answers what matches no route; the front door checks (frontDoor) have
// answered a known path's wrong method already.
func routingErrorHandler(_ context.Context, _ *runtime.ServeMux, _ runtime.Marshaler,
	w http.ResponseWriter, r *http.Request, httpStatus int) {
	switch httpStatus {
	case http.StatusNotFound:
		writeFrontDoor(w, httpStatus, codes.NotFound, fmt.Sprintf("Could not resolve %s to a method.", r.URL.Path))
	case http.StatusMethodNotAllowed:
		writeFrontDoor(w, httpStatus, codes.Unimplemented, "method "+r.Method+" not allowed")
	default:
		writeFrontDoor(w, httpStatus, codes.Unknown, http.StatusText(httpStatus))
	}
}

// frontDoor checks what Envoy's routes check before the transcoder, then serves next.
func frontDoor(bindings []binding, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r = r.WithContext(context.WithValue(r.Context(), reachKey{}, &reach{}))
		fitting, methods := routesOf(bindings, r.URL.Path)
		if len(fitting) == 0 {
			next.ServeHTTP(w, r)
			return
		}
		served := servedBy(fitting, r.Method)
		if served == nil {
			w.Header().Set("Allow", strings.Join(methods, ", "))
			writeFrontDoor(w, http.StatusMethodNotAllowed, codes.Unimplemented, fmt.Sprintf(
				"method %s not allowed: %s accepts %s", r.Method, fitting[0].template, strings.Join(methods, " and ")))
			return
		}
		if message := unknownQuery(*served, r); message != "" {
			writeFrontDoor(w, http.StatusBadRequest, codes.InvalidArgument, message)
			return
		}
		if message := collision(*served, r); message != "" {
			writeFrontDoor(w, http.StatusBadRequest, codes.InvalidArgument, message)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func servedBy(fitting []binding, method string) *binding {
	for index := range fitting {
		if fitting[index].method == method {
			return &fitting[index]
		}
	}
	return nil
}

// unknownQuery names a query parameter that is no field of the request, on every route (the
// gateway itself ignores the query of a route whose body is "*" or whose path binds every
// field); reject_unknown_query_parameters makes it a 400 on Envoy.
func unknownQuery(served binding, r *http.Request) string {
	for name := range r.URL.Query() {
		if served.request.Fields().ByName(protoreflect.Name(name)) == nil {
			return fmt.Sprintf("Could not find field %q in the type %q.", name, served.request.FullName())
		}
	}
	return ""
}

// collision names a query parameter or body field that repeats a field the path binds (the
// body only when its value differs, as Envoy's reject_binding_body_field_collisions).
func collision(served binding, r *http.Request) string {
	query := r.URL.Query()
	for _, name := range served.variables() {
		if query.Has(name) {
			return name + ": is named by the path; do not repeat it in the query"
		}
	}
	if served.body != "*" || r.Body == nil {
		return ""
	}
	text, err := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(text))
	var fields map[string]any
	if err != nil || json.Unmarshal(text, &fields) != nil {
		return "" // the gateway's own decoder reports what is wrong with the body
	}
	variables, _ := served.match(r.URL.Path)
	for _, name := range served.variables() {
		if value, ok := fields[name].(string); ok && value != variables[name] {
			return fmt.Sprintf("The binding value %q of the field %s is conflicting with the value %q in the body.",
				variables[name], name, value)
		}
	}
	return ""
}
