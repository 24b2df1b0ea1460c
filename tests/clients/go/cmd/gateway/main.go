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
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

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
	dial := []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}
	if err := gateway.RegisterShellExecServiceHandlerFromEndpoint(context.Background(), mux, backend, dial); err != nil {
		return err
	}
	listener, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stdout, "listening on %s\n", listener.Addr())
	return http.Serve(listener, mux)
}

func muxOptions() []runtime.ServeMuxOption {
	return nil
}
