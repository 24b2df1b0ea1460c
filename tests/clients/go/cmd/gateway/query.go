package main

import (
	"fmt"
	"net/url"
	"strconv"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"github.com/grpc-ecosystem/grpc-gateway/v2/utilities"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
)

// strictQuery rejects a query value of the wrong type with the words of Envoy's transcoder
// (frontDoor has rejected unknown parameters already); then grpc-gateway's own parser fills
// the request.
type strictQuery struct{ runtime.DefaultQueryParser }

func (q strictQuery) Parse(message proto.Message, values url.Values, filter *utilities.DoubleArray) error {
	descriptor := message.ProtoReflect().Descriptor()
	for name, texts := range values {
		field := descriptor.Fields().ByName(protoreflect.Name(name))
		if field == nil {
			continue
		}
		for _, text := range texts {
			if !parses(field.Kind(), text) {
				return fmt.Errorf("%s: invalid value %q for type %s", name, text,
					descriptorpb.FieldDescriptorProto_Type(field.Kind()))
			}
		}
	}
	return q.DefaultQueryParser.Parse(message, values, filter)
}

func parses(kind protoreflect.Kind, text string) bool {
	var err error
	switch kind {
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		_, err = strconv.ParseInt(text, 10, 32)
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		_, err = strconv.ParseInt(text, 10, 64)
	case protoreflect.BoolKind:
		_, err = strconv.ParseBool(text)
	}
	return err == nil
}
