// Command gateway is a grpc-gateway v2 reverse proxy generated from proto/ (package gen, by
// `make generate`), configured to answer as Envoy's front door does. The gateway comparison
// test (tests/clients/test_gateway_parity.py) runs it against the test server.
//
//	gateway -backend 127.0.0.1:50051 -listen 127.0.0.1:0
//
// It prints `listening on HOST:PORT` once it accepts connections.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	// The error details the server sends must be known to print them (as Envoy's descriptor
	// holds them).
	_ "google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/encoding/protojson"

	gateway "shellexec/tests/clients/go/gen/shellexec/v1"
)

func main() {
	backend := flag.String("backend", "", "the gRPC server, host:port")
	listen := flag.String("listen", "127.0.0.1:0", "the address to serve REST on")
	flag.Parse()
	if err := run(*backend, *listen); err != nil {
		log.Fatal(err)
	}
}

func run(backend, listen string) error {
	mux := runtime.NewServeMux(muxOptions()...)
	dial := []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithUnaryInterceptor(reachUnary), grpc.WithStreamInterceptor(reachStream)}
	if err := gateway.RegisterShellExecServiceHandlerFromEndpoint(context.Background(), mux, backend, dial); err != nil {
		return err
	}
	listener, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stdout, "listening on %s\n", listener.Addr())
	return http.Serve(listener, frontDoor(serviceBindings(), mux))
}

func muxOptions() []runtime.ServeMuxOption {
	// Envoy's print options: proto field names, every primitive field printed (but an unset
	// message field left out, which EmitUnpopulated would print as null); like Envoy's
	// transcoder, a body field the request does not have is ignored.
	marshaler := &runtime.JSONPb{
		MarshalOptions:   protojson.MarshalOptions{UseProtoNames: true, EmitDefaultValues: true},
		UnmarshalOptions: protojson.UnmarshalOptions{DiscardUnknown: true},
	}
	return []runtime.ServeMuxOption{
		runtime.WithMarshalerOption(runtime.MIMEWildcard, eventStream{marshaler}),
		runtime.WithErrorHandler(errorHandler),
		runtime.WithRoutingErrorHandler(routingErrorHandler),
		runtime.SetQueryParameterParser(strictQuery{}),
	}
}
