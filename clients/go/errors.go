package shellexec

import (
	"errors"
	"fmt"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// FieldViolation is one field of a BadRequest detail: the request field to blame and why.
type FieldViolation struct {
	Field       string
	Description string
}

// Error is a failed call: the gRPC status with what its google.rpc details say. Programs
// read Code and Reason (docs/api.md lists every reason), never Message, which is for people
// and may be reworded.
type Error struct {
	// Code is the gRPC status code, e.g. codes.NotFound.
	Code codes.Code
	// Message is the status message.
	Message string
	// Reason is the ErrorInfo reason, e.g. "TURN_ALREADY_RUNNING"; "" when there is none.
	Reason string
	// Domain is the ErrorInfo domain, "shellexec".
	Domain string
	// FieldViolations are the BadRequest violations of an INVALID_ARGUMENT.
	FieldViolations []FieldViolation
	// ResourceType and ResourceName are the ResourceInfo of a NOT_FOUND, e.g.
	// "shellexec.v1.Session" and the id asked for.
	ResourceType string
	ResourceName string

	status *status.Status
}

func (e *Error) Error() string {
	if e.Reason != "" {
		return fmt.Sprintf("shellexec: %s (%s): %s", e.Code, e.Reason, e.Message)
	}
	return fmt.Sprintf("shellexec: %s: %s", e.Code, e.Message)
}

// GRPCStatus is the status the call failed with, details included; status.Code and
// status.FromError use it.
func (e *Error) GRPCStatus() *status.Status {
	return e.status
}

// Field is the field the first BadRequest violation blames, or "".
func (e *Error) Field() string {
	if len(e.FieldViolations) == 0 {
		return ""
	}
	return e.FieldViolations[0].Field
}

// Reason is the ErrorInfo reason of err, or "" when err is no *Error or has none.
func Reason(err error) string {
	var failed *Error
	if errors.As(err, &failed) {
		return failed.Reason
	}
	return ""
}

// fromRPC turns an error of a gRPC call into an *Error; nil stays nil.
func fromRPC(err error) error {
	if err == nil {
		return nil
	}
	rpcStatus, ok := status.FromError(err)
	if !ok {
		return err
	}
	failed := &Error{Code: rpcStatus.Code(), Message: rpcStatus.Message(), status: rpcStatus}
	for _, detail := range rpcStatus.Details() {
		failed.read(detail)
	}
	return failed
}

func (e *Error) read(detail any) {
	switch detail := detail.(type) {
	case *errdetails.ErrorInfo:
		e.Reason, e.Domain = detail.GetReason(), detail.GetDomain()
	case *errdetails.BadRequest:
		for _, violation := range detail.GetFieldViolations() {
			e.FieldViolations = append(e.FieldViolations,
				FieldViolation{Field: violation.GetField(), Description: violation.GetDescription()})
		}
	case *errdetails.ResourceInfo:
		e.ResourceType, e.ResourceName = detail.GetResourceType(), detail.GetResourceName()
	}
}
