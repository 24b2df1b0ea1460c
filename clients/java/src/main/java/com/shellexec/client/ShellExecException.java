package com.shellexec.client;

import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.rpc.BadRequest;
import com.google.rpc.ErrorInfo;
import com.google.rpc.ResourceInfo;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.protobuf.StatusProto;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A failed call: the gRPC status code and the google.rpc details the service sent with it (an
 * {@code ErrorInfo} reason such as {@code TURN_ALREADY_RUNNING}, the {@code BadRequest} field of
 * an invalid argument, the {@code ResourceInfo} of what was not found). Act on {@link #code()}
 * and {@link #reason()}, not on the message text, which may change; docs/api.md lists every
 * reason.
 */
public final class ShellExecException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final Status.Code code;
  private final String reason;
  private final String domain;
  private final Map<String, String> fieldViolations;
  private final String resourceType;
  private final String resourceName;

  private ShellExecException(StatusRuntimeException cause, Details details) {
    super(cause.getMessage(), cause);
    this.code = cause.getStatus().getCode();
    this.reason = details.info.getReason();
    this.domain = details.info.getDomain();
    this.fieldViolations = Map.copyOf(details.violations);
    this.resourceType = details.resource.getResourceType();
    this.resourceName = details.resource.getResourceName();
  }

  /** The exception for a failed call, with the details its status carries. */
  public static ShellExecException from(StatusRuntimeException error) {
    return new ShellExecException(error, Details.of(error));
  }

  /** The gRPC status code, e.g. {@code NOT_FOUND}. */
  public Status.Code code() {
    return code;
  }

  /** The {@code ErrorInfo} reason, e.g. {@code SEQUENCE_CONFLICT}; "" when there is none. */
  public String reason() {
    return reason;
  }

  /** The {@code ErrorInfo} domain; "" when there is none. */
  public String domain() {
    return domain;
  }

  /** Field -> description of each {@code BadRequest} violation (empty when there are none). */
  public Map<String, String> fieldViolations() {
    return fieldViolations;
  }

  /** The {@code ResourceInfo} type of a NOT_FOUND error, e.g. {@code shellexec.v1.Session}. */
  public String resourceType() {
    return resourceType;
  }

  /** The {@code ResourceInfo} name of a NOT_FOUND error; "" when there is none. */
  public String resourceName() {
    return resourceName;
  }

  /** The details read from the {@code grpc-status-details-bin} trailer. */
  private record Details(ErrorInfo info, Map<String, String> violations, ResourceInfo resource) {
    static Details of(StatusRuntimeException error) {
      ErrorInfo info = ErrorInfo.getDefaultInstance();
      Map<String, String> violations = new LinkedHashMap<>();
      ResourceInfo resource = ResourceInfo.getDefaultInstance();
      com.google.rpc.Status status = StatusProto.fromThrowable(error);
      for (Any detail : status == null ? java.util.List.<Any>of() : status.getDetailsList()) {
        try {
          if (detail.is(ErrorInfo.class)) {
            info = detail.unpack(ErrorInfo.class);
          } else if (detail.is(BadRequest.class)) {
            detail.unpack(BadRequest.class).getFieldViolationsList()
                .forEach(v -> violations.put(v.getField(), v.getDescription()));
          } else if (detail.is(ResourceInfo.class)) {
            resource = detail.unpack(ResourceInfo.class);
          }
        } catch (InvalidProtocolBufferException malformed) {
          // A detail that does not parse tells nothing: the code and message still hold.
        }
      }
      return new Details(info, violations, resource);
    }
  }
}
