package main

import (
	"slices"
	"strings"

	"google.golang.org/genproto/googleapis/api/annotations"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	pb "shellexec/clients/go/gen/shellexec/v1"
)

// binding is one `google.api.http` rule (or additional binding) of the service, read from the
// generated descriptor: what Envoy derives its 405 and collision routes from too.
type binding struct {
	method   string
	template string
	segments []string // the path's segments; `{name}` is a variable
	verb     string   // the `:verb` after the last segment, without the colon
	body     string
	request  protoreflect.MessageDescriptor
}

func serviceBindings() []binding {
	var found []binding
	methods := pb.File_shellexec_v1_shell_exec_service_proto.Services().Get(0).Methods()
	for index := range methods.Len() {
		method := methods.Get(index)
		rule, _ := proto.GetExtension(method.Options(), annotations.E_Http).(*annotations.HttpRule)
		for _, each := range append([]*annotations.HttpRule{rule}, rule.GetAdditionalBindings()...) {
			found = append(found, newBinding(each, method.Input()))
		}
	}
	return found
}

func newBinding(rule *annotations.HttpRule, request protoreflect.MessageDescriptor) binding {
	method, template := ruleMethod(rule)
	path, verb := template, ""
	if last := strings.LastIndex(path, "/"); strings.Contains(path[last:], ":") {
		cut := last + strings.Index(path[last:], ":")
		path, verb = template[:cut], template[cut+1:]
	}
	return binding{method: method, template: template, segments: strings.Split(strings.Trim(path, "/"), "/"),
		verb: verb, body: rule.GetBody(), request: request}
}

func ruleMethod(rule *annotations.HttpRule) (string, string) {
	switch pattern := rule.GetPattern().(type) {
	case *annotations.HttpRule_Get:
		return "GET", pattern.Get
	case *annotations.HttpRule_Post:
		return "POST", pattern.Post
	case *annotations.HttpRule_Put:
		return "PUT", pattern.Put
	case *annotations.HttpRule_Delete:
		return "DELETE", pattern.Delete
	case *annotations.HttpRule_Patch:
		return "PATCH", pattern.Patch
	}
	return "", ""
}

// match returns the path's variables when the path fits the template.
func (b binding) match(path string) (map[string]string, bool) {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	if len(parts) != len(b.segments) {
		return nil, false
	}
	if b.verb != "" {
		last, found := strings.CutSuffix(parts[len(parts)-1], ":"+b.verb)
		if !found {
			return nil, false
		}
		parts[len(parts)-1] = last
	}
	variables := map[string]string{}
	for index, segment := range b.segments {
		name, isVariable := strings.CutPrefix(segment, "{")
		switch {
		case isVariable && parts[index] != "":
			variables[strings.TrimSuffix(name, "}")] = parts[index]
		case segment != parts[index]:
			return nil, false
		}
	}
	return variables, true
}

// variables are the request fields a template binds, in order.
func (b binding) variables() []string {
	var names []string
	for _, segment := range b.segments {
		if name, ok := strings.CutPrefix(segment, "{"); ok {
			names = append(names, strings.TrimSuffix(name, "}"))
		}
	}
	return names
}

// routesOf are the bindings whose templates fit the path, and the methods they serve.
func routesOf(bindings []binding, path string) ([]binding, []string) {
	var fitting []binding
	var methods []string
	for _, each := range bindings {
		if _, ok := each.match(path); ok {
			fitting = append(fitting, each)
			methods = append(methods, each.method)
		}
	}
	slices.Sort(methods)
	return fitting, slices.Compact(methods)
}
