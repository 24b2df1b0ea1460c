package com.shellexec.v1;

import static io.grpc.MethodDescriptor.generateFullMethodName;

/**
 * <pre>
 * Turns the shell commands that coding agents report over the Agent Client
 * Protocol (ACP) into one normalized, bounded, persisted record per command,
 * and serves those records to browsers and services.
 * Agents (or a bridge in front of them) create a session, start a turn,
 * publish every ACP `session/update` and complete the turn. Browsers list
 * messages, fetch a command's full output on demand and watch the feed.
 * </pre>
 */
@io.grpc.stub.annotations.GrpcGenerated
public final class ShellExecServiceGrpc {

  private ShellExecServiceGrpc() {}

  public static final java.lang.String SERVICE_NAME = "shellexec.v1.ShellExecService";

  // Static method descriptors that strictly reflect the proto.
  private static volatile io.grpc.MethodDescriptor<com.shellexec.v1.NormalizeShellExecRequest,
      com.shellexec.v1.NormalizeShellExecResponse> getNormalizeShellExecMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "NormalizeShellExec",
      requestType = com.shellexec.v1.NormalizeShellExecRequest.class,
      responseType = com.shellexec.v1.NormalizeShellExecResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<com.shellexec.v1.NormalizeShellExecRequest,
      com.shellexec.v1.NormalizeShellExecResponse> getNormalizeShellExecMethod() {
    io.grpc.MethodDescriptor<com.shellexec.v1.NormalizeShellExecRequest, com.shellexec.v1.NormalizeShellExecResponse> getNormalizeShellExecMethod;
    if ((getNormalizeShellExecMethod = ShellExecServiceGrpc.getNormalizeShellExecMethod) == null) {
      synchronized (ShellExecServiceGrpc.class) {
        if ((getNormalizeShellExecMethod = ShellExecServiceGrpc.getNormalizeShellExecMethod) == null) {
          ShellExecServiceGrpc.getNormalizeShellExecMethod = getNormalizeShellExecMethod =
              io.grpc.MethodDescriptor.<com.shellexec.v1.NormalizeShellExecRequest, com.shellexec.v1.NormalizeShellExecResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "NormalizeShellExec"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.shellexec.v1.NormalizeShellExecRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.shellexec.v1.NormalizeShellExecResponse.getDefaultInstance()))
              .setSchemaDescriptor(new ShellExecServiceMethodDescriptorSupplier("NormalizeShellExec"))
              .build();
        }
      }
    }
    return getNormalizeShellExecMethod;
  }

  private static volatile io.grpc.MethodDescriptor<com.shellexec.v1.SummarizeShellOutputRequest,
      com.shellexec.v1.SummarizeShellOutputResponse> getSummarizeShellOutputMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "SummarizeShellOutput",
      requestType = com.shellexec.v1.SummarizeShellOutputRequest.class,
      responseType = com.shellexec.v1.SummarizeShellOutputResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<com.shellexec.v1.SummarizeShellOutputRequest,
      com.shellexec.v1.SummarizeShellOutputResponse> getSummarizeShellOutputMethod() {
    io.grpc.MethodDescriptor<com.shellexec.v1.SummarizeShellOutputRequest, com.shellexec.v1.SummarizeShellOutputResponse> getSummarizeShellOutputMethod;
    if ((getSummarizeShellOutputMethod = ShellExecServiceGrpc.getSummarizeShellOutputMethod) == null) {
      synchronized (ShellExecServiceGrpc.class) {
        if ((getSummarizeShellOutputMethod = ShellExecServiceGrpc.getSummarizeShellOutputMethod) == null) {
          ShellExecServiceGrpc.getSummarizeShellOutputMethod = getSummarizeShellOutputMethod =
              io.grpc.MethodDescriptor.<com.shellexec.v1.SummarizeShellOutputRequest, com.shellexec.v1.SummarizeShellOutputResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "SummarizeShellOutput"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.shellexec.v1.SummarizeShellOutputRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.shellexec.v1.SummarizeShellOutputResponse.getDefaultInstance()))
              .setSchemaDescriptor(new ShellExecServiceMethodDescriptorSupplier("SummarizeShellOutput"))
              .build();
        }
      }
    }
    return getSummarizeShellOutputMethod;
  }

  private static volatile io.grpc.MethodDescriptor<com.shellexec.v1.CreateSessionRequest,
      com.shellexec.v1.CreateSessionResponse> getCreateSessionMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "CreateSession",
      requestType = com.shellexec.v1.CreateSessionRequest.class,
      responseType = com.shellexec.v1.CreateSessionResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<com.shellexec.v1.CreateSessionRequest,
      com.shellexec.v1.CreateSessionResponse> getCreateSessionMethod() {
    io.grpc.MethodDescriptor<com.shellexec.v1.CreateSessionRequest, com.shellexec.v1.CreateSessionResponse> getCreateSessionMethod;
    if ((getCreateSessionMethod = ShellExecServiceGrpc.getCreateSessionMethod) == null) {
      synchronized (ShellExecServiceGrpc.class) {
        if ((getCreateSessionMethod = ShellExecServiceGrpc.getCreateSessionMethod) == null) {
          ShellExecServiceGrpc.getCreateSessionMethod = getCreateSessionMethod =
              io.grpc.MethodDescriptor.<com.shellexec.v1.CreateSessionRequest, com.shellexec.v1.CreateSessionResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "CreateSession"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.shellexec.v1.CreateSessionRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.shellexec.v1.CreateSessionResponse.getDefaultInstance()))
              .setSchemaDescriptor(new ShellExecServiceMethodDescriptorSupplier("CreateSession"))
              .build();
        }
      }
    }
    return getCreateSessionMethod;
  }

  private static volatile io.grpc.MethodDescriptor<com.shellexec.v1.GetSessionRequest,
      com.shellexec.v1.GetSessionResponse> getGetSessionMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "GetSession",
      requestType = com.shellexec.v1.GetSessionRequest.class,
      responseType = com.shellexec.v1.GetSessionResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<com.shellexec.v1.GetSessionRequest,
      com.shellexec.v1.GetSessionResponse> getGetSessionMethod() {
    io.grpc.MethodDescriptor<com.shellexec.v1.GetSessionRequest, com.shellexec.v1.GetSessionResponse> getGetSessionMethod;
    if ((getGetSessionMethod = ShellExecServiceGrpc.getGetSessionMethod) == null) {
      synchronized (ShellExecServiceGrpc.class) {
        if ((getGetSessionMethod = ShellExecServiceGrpc.getGetSessionMethod) == null) {
          ShellExecServiceGrpc.getGetSessionMethod = getGetSessionMethod =
              io.grpc.MethodDescriptor.<com.shellexec.v1.GetSessionRequest, com.shellexec.v1.GetSessionResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "GetSession"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.shellexec.v1.GetSessionRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.shellexec.v1.GetSessionResponse.getDefaultInstance()))
              .setSchemaDescriptor(new ShellExecServiceMethodDescriptorSupplier("GetSession"))
              .build();
        }
      }
    }
    return getGetSessionMethod;
  }

  private static volatile io.grpc.MethodDescriptor<com.shellexec.v1.StartTurnRequest,
      com.shellexec.v1.StartTurnResponse> getStartTurnMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "StartTurn",
      requestType = com.shellexec.v1.StartTurnRequest.class,
      responseType = com.shellexec.v1.StartTurnResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<com.shellexec.v1.StartTurnRequest,
      com.shellexec.v1.StartTurnResponse> getStartTurnMethod() {
    io.grpc.MethodDescriptor<com.shellexec.v1.StartTurnRequest, com.shellexec.v1.StartTurnResponse> getStartTurnMethod;
    if ((getStartTurnMethod = ShellExecServiceGrpc.getStartTurnMethod) == null) {
      synchronized (ShellExecServiceGrpc.class) {
        if ((getStartTurnMethod = ShellExecServiceGrpc.getStartTurnMethod) == null) {
          ShellExecServiceGrpc.getStartTurnMethod = getStartTurnMethod =
              io.grpc.MethodDescriptor.<com.shellexec.v1.StartTurnRequest, com.shellexec.v1.StartTurnResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "StartTurn"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.shellexec.v1.StartTurnRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.shellexec.v1.StartTurnResponse.getDefaultInstance()))
              .setSchemaDescriptor(new ShellExecServiceMethodDescriptorSupplier("StartTurn"))
              .build();
        }
      }
    }
    return getStartTurnMethod;
  }

  private static volatile io.grpc.MethodDescriptor<com.shellexec.v1.PublishUpdateRequest,
      com.shellexec.v1.PublishUpdateResponse> getPublishUpdateMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "PublishUpdate",
      requestType = com.shellexec.v1.PublishUpdateRequest.class,
      responseType = com.shellexec.v1.PublishUpdateResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<com.shellexec.v1.PublishUpdateRequest,
      com.shellexec.v1.PublishUpdateResponse> getPublishUpdateMethod() {
    io.grpc.MethodDescriptor<com.shellexec.v1.PublishUpdateRequest, com.shellexec.v1.PublishUpdateResponse> getPublishUpdateMethod;
    if ((getPublishUpdateMethod = ShellExecServiceGrpc.getPublishUpdateMethod) == null) {
      synchronized (ShellExecServiceGrpc.class) {
        if ((getPublishUpdateMethod = ShellExecServiceGrpc.getPublishUpdateMethod) == null) {
          ShellExecServiceGrpc.getPublishUpdateMethod = getPublishUpdateMethod =
              io.grpc.MethodDescriptor.<com.shellexec.v1.PublishUpdateRequest, com.shellexec.v1.PublishUpdateResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "PublishUpdate"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.shellexec.v1.PublishUpdateRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.shellexec.v1.PublishUpdateResponse.getDefaultInstance()))
              .setSchemaDescriptor(new ShellExecServiceMethodDescriptorSupplier("PublishUpdate"))
              .build();
        }
      }
    }
    return getPublishUpdateMethod;
  }

  private static volatile io.grpc.MethodDescriptor<com.shellexec.v1.CompleteTurnRequest,
      com.shellexec.v1.CompleteTurnResponse> getCompleteTurnMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "CompleteTurn",
      requestType = com.shellexec.v1.CompleteTurnRequest.class,
      responseType = com.shellexec.v1.CompleteTurnResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<com.shellexec.v1.CompleteTurnRequest,
      com.shellexec.v1.CompleteTurnResponse> getCompleteTurnMethod() {
    io.grpc.MethodDescriptor<com.shellexec.v1.CompleteTurnRequest, com.shellexec.v1.CompleteTurnResponse> getCompleteTurnMethod;
    if ((getCompleteTurnMethod = ShellExecServiceGrpc.getCompleteTurnMethod) == null) {
      synchronized (ShellExecServiceGrpc.class) {
        if ((getCompleteTurnMethod = ShellExecServiceGrpc.getCompleteTurnMethod) == null) {
          ShellExecServiceGrpc.getCompleteTurnMethod = getCompleteTurnMethod =
              io.grpc.MethodDescriptor.<com.shellexec.v1.CompleteTurnRequest, com.shellexec.v1.CompleteTurnResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "CompleteTurn"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.shellexec.v1.CompleteTurnRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.shellexec.v1.CompleteTurnResponse.getDefaultInstance()))
              .setSchemaDescriptor(new ShellExecServiceMethodDescriptorSupplier("CompleteTurn"))
              .build();
        }
      }
    }
    return getCompleteTurnMethod;
  }

  private static volatile io.grpc.MethodDescriptor<com.shellexec.v1.ListSessionsRequest,
      com.shellexec.v1.ListSessionsResponse> getListSessionsMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "ListSessions",
      requestType = com.shellexec.v1.ListSessionsRequest.class,
      responseType = com.shellexec.v1.ListSessionsResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<com.shellexec.v1.ListSessionsRequest,
      com.shellexec.v1.ListSessionsResponse> getListSessionsMethod() {
    io.grpc.MethodDescriptor<com.shellexec.v1.ListSessionsRequest, com.shellexec.v1.ListSessionsResponse> getListSessionsMethod;
    if ((getListSessionsMethod = ShellExecServiceGrpc.getListSessionsMethod) == null) {
      synchronized (ShellExecServiceGrpc.class) {
        if ((getListSessionsMethod = ShellExecServiceGrpc.getListSessionsMethod) == null) {
          ShellExecServiceGrpc.getListSessionsMethod = getListSessionsMethod =
              io.grpc.MethodDescriptor.<com.shellexec.v1.ListSessionsRequest, com.shellexec.v1.ListSessionsResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "ListSessions"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.shellexec.v1.ListSessionsRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.shellexec.v1.ListSessionsResponse.getDefaultInstance()))
              .setSchemaDescriptor(new ShellExecServiceMethodDescriptorSupplier("ListSessions"))
              .build();
        }
      }
    }
    return getListSessionsMethod;
  }

  private static volatile io.grpc.MethodDescriptor<com.shellexec.v1.ListMessagesRequest,
      com.shellexec.v1.ListMessagesResponse> getListMessagesMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "ListMessages",
      requestType = com.shellexec.v1.ListMessagesRequest.class,
      responseType = com.shellexec.v1.ListMessagesResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<com.shellexec.v1.ListMessagesRequest,
      com.shellexec.v1.ListMessagesResponse> getListMessagesMethod() {
    io.grpc.MethodDescriptor<com.shellexec.v1.ListMessagesRequest, com.shellexec.v1.ListMessagesResponse> getListMessagesMethod;
    if ((getListMessagesMethod = ShellExecServiceGrpc.getListMessagesMethod) == null) {
      synchronized (ShellExecServiceGrpc.class) {
        if ((getListMessagesMethod = ShellExecServiceGrpc.getListMessagesMethod) == null) {
          ShellExecServiceGrpc.getListMessagesMethod = getListMessagesMethod =
              io.grpc.MethodDescriptor.<com.shellexec.v1.ListMessagesRequest, com.shellexec.v1.ListMessagesResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "ListMessages"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.shellexec.v1.ListMessagesRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.shellexec.v1.ListMessagesResponse.getDefaultInstance()))
              .setSchemaDescriptor(new ShellExecServiceMethodDescriptorSupplier("ListMessages"))
              .build();
        }
      }
    }
    return getListMessagesMethod;
  }

  private static volatile io.grpc.MethodDescriptor<com.shellexec.v1.GetShellOutputRequest,
      com.shellexec.v1.GetShellOutputResponse> getGetShellOutputMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "GetShellOutput",
      requestType = com.shellexec.v1.GetShellOutputRequest.class,
      responseType = com.shellexec.v1.GetShellOutputResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<com.shellexec.v1.GetShellOutputRequest,
      com.shellexec.v1.GetShellOutputResponse> getGetShellOutputMethod() {
    io.grpc.MethodDescriptor<com.shellexec.v1.GetShellOutputRequest, com.shellexec.v1.GetShellOutputResponse> getGetShellOutputMethod;
    if ((getGetShellOutputMethod = ShellExecServiceGrpc.getGetShellOutputMethod) == null) {
      synchronized (ShellExecServiceGrpc.class) {
        if ((getGetShellOutputMethod = ShellExecServiceGrpc.getGetShellOutputMethod) == null) {
          ShellExecServiceGrpc.getGetShellOutputMethod = getGetShellOutputMethod =
              io.grpc.MethodDescriptor.<com.shellexec.v1.GetShellOutputRequest, com.shellexec.v1.GetShellOutputResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "GetShellOutput"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.shellexec.v1.GetShellOutputRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.shellexec.v1.GetShellOutputResponse.getDefaultInstance()))
              .setSchemaDescriptor(new ShellExecServiceMethodDescriptorSupplier("GetShellOutput"))
              .build();
        }
      }
    }
    return getGetShellOutputMethod;
  }

  private static volatile io.grpc.MethodDescriptor<com.shellexec.v1.WatchMessagesRequest,
      com.shellexec.v1.WatchMessagesResponse> getWatchMessagesMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "WatchMessages",
      requestType = com.shellexec.v1.WatchMessagesRequest.class,
      responseType = com.shellexec.v1.WatchMessagesResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.SERVER_STREAMING)
  public static io.grpc.MethodDescriptor<com.shellexec.v1.WatchMessagesRequest,
      com.shellexec.v1.WatchMessagesResponse> getWatchMessagesMethod() {
    io.grpc.MethodDescriptor<com.shellexec.v1.WatchMessagesRequest, com.shellexec.v1.WatchMessagesResponse> getWatchMessagesMethod;
    if ((getWatchMessagesMethod = ShellExecServiceGrpc.getWatchMessagesMethod) == null) {
      synchronized (ShellExecServiceGrpc.class) {
        if ((getWatchMessagesMethod = ShellExecServiceGrpc.getWatchMessagesMethod) == null) {
          ShellExecServiceGrpc.getWatchMessagesMethod = getWatchMessagesMethod =
              io.grpc.MethodDescriptor.<com.shellexec.v1.WatchMessagesRequest, com.shellexec.v1.WatchMessagesResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.SERVER_STREAMING)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "WatchMessages"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.shellexec.v1.WatchMessagesRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.shellexec.v1.WatchMessagesResponse.getDefaultInstance()))
              .setSchemaDescriptor(new ShellExecServiceMethodDescriptorSupplier("WatchMessages"))
              .build();
        }
      }
    }
    return getWatchMessagesMethod;
  }

  private static volatile io.grpc.MethodDescriptor<com.shellexec.v1.GetBootStateRequest,
      com.shellexec.v1.GetBootStateResponse> getGetBootStateMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "GetBootState",
      requestType = com.shellexec.v1.GetBootStateRequest.class,
      responseType = com.shellexec.v1.GetBootStateResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<com.shellexec.v1.GetBootStateRequest,
      com.shellexec.v1.GetBootStateResponse> getGetBootStateMethod() {
    io.grpc.MethodDescriptor<com.shellexec.v1.GetBootStateRequest, com.shellexec.v1.GetBootStateResponse> getGetBootStateMethod;
    if ((getGetBootStateMethod = ShellExecServiceGrpc.getGetBootStateMethod) == null) {
      synchronized (ShellExecServiceGrpc.class) {
        if ((getGetBootStateMethod = ShellExecServiceGrpc.getGetBootStateMethod) == null) {
          ShellExecServiceGrpc.getGetBootStateMethod = getGetBootStateMethod =
              io.grpc.MethodDescriptor.<com.shellexec.v1.GetBootStateRequest, com.shellexec.v1.GetBootStateResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "GetBootState"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.shellexec.v1.GetBootStateRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.shellexec.v1.GetBootStateResponse.getDefaultInstance()))
              .setSchemaDescriptor(new ShellExecServiceMethodDescriptorSupplier("GetBootState"))
              .build();
        }
      }
    }
    return getGetBootStateMethod;
  }

  private static volatile io.grpc.MethodDescriptor<com.shellexec.v1.DeleteSessionRequest,
      com.shellexec.v1.DeleteSessionResponse> getDeleteSessionMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "DeleteSession",
      requestType = com.shellexec.v1.DeleteSessionRequest.class,
      responseType = com.shellexec.v1.DeleteSessionResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<com.shellexec.v1.DeleteSessionRequest,
      com.shellexec.v1.DeleteSessionResponse> getDeleteSessionMethod() {
    io.grpc.MethodDescriptor<com.shellexec.v1.DeleteSessionRequest, com.shellexec.v1.DeleteSessionResponse> getDeleteSessionMethod;
    if ((getDeleteSessionMethod = ShellExecServiceGrpc.getDeleteSessionMethod) == null) {
      synchronized (ShellExecServiceGrpc.class) {
        if ((getDeleteSessionMethod = ShellExecServiceGrpc.getDeleteSessionMethod) == null) {
          ShellExecServiceGrpc.getDeleteSessionMethod = getDeleteSessionMethod =
              io.grpc.MethodDescriptor.<com.shellexec.v1.DeleteSessionRequest, com.shellexec.v1.DeleteSessionResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "DeleteSession"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.shellexec.v1.DeleteSessionRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.shellexec.v1.DeleteSessionResponse.getDefaultInstance()))
              .setSchemaDescriptor(new ShellExecServiceMethodDescriptorSupplier("DeleteSession"))
              .build();
        }
      }
    }
    return getDeleteSessionMethod;
  }

  private static volatile io.grpc.MethodDescriptor<com.shellexec.v1.DeleteTaskRequest,
      com.shellexec.v1.DeleteTaskResponse> getDeleteTaskMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "DeleteTask",
      requestType = com.shellexec.v1.DeleteTaskRequest.class,
      responseType = com.shellexec.v1.DeleteTaskResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<com.shellexec.v1.DeleteTaskRequest,
      com.shellexec.v1.DeleteTaskResponse> getDeleteTaskMethod() {
    io.grpc.MethodDescriptor<com.shellexec.v1.DeleteTaskRequest, com.shellexec.v1.DeleteTaskResponse> getDeleteTaskMethod;
    if ((getDeleteTaskMethod = ShellExecServiceGrpc.getDeleteTaskMethod) == null) {
      synchronized (ShellExecServiceGrpc.class) {
        if ((getDeleteTaskMethod = ShellExecServiceGrpc.getDeleteTaskMethod) == null) {
          ShellExecServiceGrpc.getDeleteTaskMethod = getDeleteTaskMethod =
              io.grpc.MethodDescriptor.<com.shellexec.v1.DeleteTaskRequest, com.shellexec.v1.DeleteTaskResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "DeleteTask"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.shellexec.v1.DeleteTaskRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.shellexec.v1.DeleteTaskResponse.getDefaultInstance()))
              .setSchemaDescriptor(new ShellExecServiceMethodDescriptorSupplier("DeleteTask"))
              .build();
        }
      }
    }
    return getDeleteTaskMethod;
  }

  /**
   * Creates a new async stub that supports all call types for the service
   */
  public static ShellExecServiceStub newStub(io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<ShellExecServiceStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<ShellExecServiceStub>() {
        @java.lang.Override
        public ShellExecServiceStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new ShellExecServiceStub(channel, callOptions);
        }
      };
    return ShellExecServiceStub.newStub(factory, channel);
  }

  /**
   * Creates a new blocking-style stub that supports all types of calls on the service
   */
  public static ShellExecServiceBlockingV2Stub newBlockingV2Stub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<ShellExecServiceBlockingV2Stub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<ShellExecServiceBlockingV2Stub>() {
        @java.lang.Override
        public ShellExecServiceBlockingV2Stub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new ShellExecServiceBlockingV2Stub(channel, callOptions);
        }
      };
    return ShellExecServiceBlockingV2Stub.newStub(factory, channel);
  }

  /**
   * Creates a new blocking-style stub that supports unary and streaming output calls on the service
   */
  public static ShellExecServiceBlockingStub newBlockingStub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<ShellExecServiceBlockingStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<ShellExecServiceBlockingStub>() {
        @java.lang.Override
        public ShellExecServiceBlockingStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new ShellExecServiceBlockingStub(channel, callOptions);
        }
      };
    return ShellExecServiceBlockingStub.newStub(factory, channel);
  }

  /**
   * Creates a new ListenableFuture-style stub that supports unary calls on the service
   */
  public static ShellExecServiceFutureStub newFutureStub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<ShellExecServiceFutureStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<ShellExecServiceFutureStub>() {
        @java.lang.Override
        public ShellExecServiceFutureStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new ShellExecServiceFutureStub(channel, callOptions);
        }
      };
    return ShellExecServiceFutureStub.newStub(factory, channel);
  }

  /**
   * <pre>
   * Turns the shell commands that coding agents report over the Agent Client
   * Protocol (ACP) into one normalized, bounded, persisted record per command,
   * and serves those records to browsers and services.
   * Agents (or a bridge in front of them) create a session, start a turn,
   * publish every ACP `session/update` and complete the turn. Browsers list
   * messages, fetch a command's full output on demand and watch the feed.
   * </pre>
   */
  public interface AsyncService {

    /**
     * <pre>
     * Folds the ACP updates of ONE tool call, in order, into a normalized shell
     * command. Nothing is stored.
     * Returns INVALID_ARGUMENT when `updates` is empty, holds more than 1,000
     * updates, or an update is not a JSON object or exceeds 4 MiB as protobuf.
     * </pre>
     */
    default void normalizeShellExec(com.shellexec.v1.NormalizeShellExecRequest request,
        io.grpc.stub.StreamObserver<com.shellexec.v1.NormalizeShellExecResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getNormalizeShellExecMethod(), responseObserver);
    }

    /**
     * <pre>
     * Computes the browser-facing summary of a full output, the same
     * projection the service applies to stored messages.
     * Returns INVALID_ARGUMENT when `output` is missing or a text field
     * exceeds 262,144 bytes.
     * </pre>
     */
    default void summarizeShellOutput(com.shellexec.v1.SummarizeShellOutputRequest request,
        io.grpc.stub.StreamObserver<com.shellexec.v1.SummarizeShellOutputResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getSummarizeShellOutputMethod(), responseObserver);
    }

    /**
     * <pre>
     * Creates a session for a task. The task is created on first use.
     * With a `request_id` the call is idempotent for 24 hours: a retry with the
     * same `request_id` returns the session the first call created, as it is
     * now, and creates nothing.
     * Returns INVALID_ARGUMENT when `task_id` is empty or malformed, when
     * `request_id` is malformed, or when `request_id` was already used with
     * another `task_id` or `agent`.
     * </pre>
     */
    default void createSession(com.shellexec.v1.CreateSessionRequest request,
        io.grpc.stub.StreamObserver<com.shellexec.v1.CreateSessionResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getCreateSessionMethod(), responseObserver);
    }

    /**
     * <pre>
     * Returns a session with its latest feed revision.
     * Returns NOT_FOUND for an unknown session.
     * </pre>
     */
    default void getSession(com.shellexec.v1.GetSessionRequest request,
        io.grpc.stub.StreamObserver<com.shellexec.v1.GetSessionResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getGetSessionMethod(), responseObserver);
    }

    /**
     * <pre>
     * Starts a turn: the session and its task become `running`.
     * With a `request_id` the call is idempotent for 24 hours: a retry with the
     * same `request_id` on the same session returns the turn the first call
     * started, as it is now (also once completed), and starts nothing.
     * Returns NOT_FOUND for an unknown session, INVALID_ARGUMENT for a
     * malformed `request_id` and FAILED_PRECONDITION when a turn is already
     * running (unless `request_id` names the call that started it).
     * </pre>
     */
    default void startTurn(com.shellexec.v1.StartTurnRequest request,
        io.grpc.stub.StreamObserver<com.shellexec.v1.StartTurnResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getStartTurnMethod(), responseObserver);
    }

    /**
     * <pre>
     * Publishes one ACP `session/update` of the session. Acknowledged only
     * once durable.
     * `tool_call` creates a message, `tool_call_update` folds into it,
     * `agent_message_chunk` and `user_message_chunk` append chat text; other
     * update types are accepted and ignored. A terminal tool update that
     * arrives after its turn was completed reconciles the existing message
     * without opening a turn or changing session or task state.
     * Returns NOT_FOUND for an unknown session, INVALID_ARGUMENT for an update
     * that is not an ACP update object or exceeds 4 MiB as protobuf.
     * </pre>
     */
    default void publishUpdate(com.shellexec.v1.PublishUpdateRequest request,
        io.grpc.stub.StreamObserver<com.shellexec.v1.PublishUpdateResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getPublishUpdateMethod(), responseObserver);
    }

    /**
     * <pre>
     * Completes a turn: tool calls still running become `cancelled`, keeping
     * their output; the session becomes `idle`, and its task too unless another
     * of the task's sessions has a running turn. Completing a completed turn
     * again changes nothing.
     * Returns NOT_FOUND for an unknown session or turn.
     * </pre>
     */
    default void completeTurn(com.shellexec.v1.CompleteTurnRequest request,
        io.grpc.stub.StreamObserver<com.shellexec.v1.CompleteTurnResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getCompleteTurnMethod(), responseObserver);
    }

    /**
     * <pre>
     * Lists the sessions the caller may see, by creation, with their command and
     * failure counts.
     * Returns NOT_FOUND for an unknown cursor session, and INVALID_ARGUMENT for a
     * negative limit, an unknown sort or both `before` and `after`.
     * </pre>
     */
    default void listSessions(com.shellexec.v1.ListSessionsRequest request,
        io.grpc.stub.StreamObserver<com.shellexec.v1.ListSessionsResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getListSessionsMethod(), responseObserver);
    }

    /**
     * <pre>
     * Lists a session's messages with output summaries and no output bodies.
     * Returns NOT_FOUND for an unknown session or cursor message, and
     * INVALID_ARGUMENT for a negative limit, an unknown sort or both `before`
     * and `after`.
     * </pre>
     */
    default void listMessages(com.shellexec.v1.ListMessagesRequest request,
        io.grpc.stub.StreamObserver<com.shellexec.v1.ListMessagesResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getListMessagesMethod(), responseObserver);
    }

    /**
     * <pre>
     * Returns the full bounded output of a shell command.
     * Returns NOT_FOUND alike for a missing message, a message of another
     * session and a message that is not a shell command.
     * </pre>
     */
    default void getShellOutput(com.shellexec.v1.GetShellOutputRequest request,
        io.grpc.stub.StreamObserver<com.shellexec.v1.GetShellOutputResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getGetShellOutputMethod(), responseObserver);
    }

    /**
     * <pre>
     * Streams a session's message events: first every event after
     * `since_revision`, then live ones, with heartbeats, until the stream's
     * lifetime ends with an `end_of_stream` event. A deleted session's streams
     * end with `session_deleted`; a replay from before the session's compaction
     * point (events older than the feed window are pruned) sends `reset`,
     * carrying the latest revision, and ends: reload the state, then watch from
     * its revision.
     * Returns NOT_FOUND for an unknown session and INVALID_ARGUMENT for a
     * `since_revision` that is negative or beyond the session's `revision`.
     * </pre>
     */
    default void watchMessages(com.shellexec.v1.WatchMessagesRequest request,
        io.grpc.stub.StreamObserver<com.shellexec.v1.WatchMessagesResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getWatchMessagesMethod(), responseObserver);
    }

    /**
     * <pre>
     * Returns what a browser needs to open a task: its latest session, that
     * session's messages and the task's state.
     * Returns NOT_FOUND for a task with no session.
     * </pre>
     */
    default void getBootState(com.shellexec.v1.GetBootStateRequest request,
        io.grpc.stub.StreamObserver<com.shellexec.v1.GetBootStateResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getGetBootStateMethod(), responseObserver);
    }

    /**
     * <pre>
     * Deletes a session with everything stored for it: its turns, messages,
     * command output, feed events and publish receipts. Its watchers receive a
     * `session_deleted` event and their streams end; afterwards the session and
     * its messages answer NOT_FOUND. A task exists while it has a session: the
     * task of its last session goes with it.
     * Returns NOT_FOUND for an unknown (or already deleted) session. Needs the
     * `admin` scope.
     * </pre>
     */
    default void deleteSession(com.shellexec.v1.DeleteSessionRequest request,
        io.grpc.stub.StreamObserver<com.shellexec.v1.DeleteSessionResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getDeleteSessionMethod(), responseObserver);
    }

    /**
     * <pre>
     * Deletes a task with all its sessions, as DeleteSession deletes each.
     * Returns NOT_FOUND for an unknown (or already deleted) task. Needs the
     * `admin` scope.
     * </pre>
     */
    default void deleteTask(com.shellexec.v1.DeleteTaskRequest request,
        io.grpc.stub.StreamObserver<com.shellexec.v1.DeleteTaskResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getDeleteTaskMethod(), responseObserver);
    }
  }

  /**
   * Base class for the server implementation of the service ShellExecService.
   * <pre>
   * Turns the shell commands that coding agents report over the Agent Client
   * Protocol (ACP) into one normalized, bounded, persisted record per command,
   * and serves those records to browsers and services.
   * Agents (or a bridge in front of them) create a session, start a turn,
   * publish every ACP `session/update` and complete the turn. Browsers list
   * messages, fetch a command's full output on demand and watch the feed.
   * </pre>
   */
  public static abstract class ShellExecServiceImplBase
      implements io.grpc.BindableService, AsyncService {

    @java.lang.Override public final io.grpc.ServerServiceDefinition bindService() {
      return ShellExecServiceGrpc.bindService(this);
    }
  }

  /**
   * A stub to allow clients to do asynchronous rpc calls to service ShellExecService.
   * <pre>
   * Turns the shell commands that coding agents report over the Agent Client
   * Protocol (ACP) into one normalized, bounded, persisted record per command,
   * and serves those records to browsers and services.
   * Agents (or a bridge in front of them) create a session, start a turn,
   * publish every ACP `session/update` and complete the turn. Browsers list
   * messages, fetch a command's full output on demand and watch the feed.
   * </pre>
   */
  public static final class ShellExecServiceStub
      extends io.grpc.stub.AbstractAsyncStub<ShellExecServiceStub> {
    private ShellExecServiceStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected ShellExecServiceStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new ShellExecServiceStub(channel, callOptions);
    }

    /**
     * <pre>
     * Folds the ACP updates of ONE tool call, in order, into a normalized shell
     * command. Nothing is stored.
     * Returns INVALID_ARGUMENT when `updates` is empty, holds more than 1,000
     * updates, or an update is not a JSON object or exceeds 4 MiB as protobuf.
     * </pre>
     */
    public void normalizeShellExec(com.shellexec.v1.NormalizeShellExecRequest request,
        io.grpc.stub.StreamObserver<com.shellexec.v1.NormalizeShellExecResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getNormalizeShellExecMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Computes the browser-facing summary of a full output, the same
     * projection the service applies to stored messages.
     * Returns INVALID_ARGUMENT when `output` is missing or a text field
     * exceeds 262,144 bytes.
     * </pre>
     */
    public void summarizeShellOutput(com.shellexec.v1.SummarizeShellOutputRequest request,
        io.grpc.stub.StreamObserver<com.shellexec.v1.SummarizeShellOutputResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getSummarizeShellOutputMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Creates a session for a task. The task is created on first use.
     * With a `request_id` the call is idempotent for 24 hours: a retry with the
     * same `request_id` returns the session the first call created, as it is
     * now, and creates nothing.
     * Returns INVALID_ARGUMENT when `task_id` is empty or malformed, when
     * `request_id` is malformed, or when `request_id` was already used with
     * another `task_id` or `agent`.
     * </pre>
     */
    public void createSession(com.shellexec.v1.CreateSessionRequest request,
        io.grpc.stub.StreamObserver<com.shellexec.v1.CreateSessionResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getCreateSessionMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Returns a session with its latest feed revision.
     * Returns NOT_FOUND for an unknown session.
     * </pre>
     */
    public void getSession(com.shellexec.v1.GetSessionRequest request,
        io.grpc.stub.StreamObserver<com.shellexec.v1.GetSessionResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getGetSessionMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Starts a turn: the session and its task become `running`.
     * With a `request_id` the call is idempotent for 24 hours: a retry with the
     * same `request_id` on the same session returns the turn the first call
     * started, as it is now (also once completed), and starts nothing.
     * Returns NOT_FOUND for an unknown session, INVALID_ARGUMENT for a
     * malformed `request_id` and FAILED_PRECONDITION when a turn is already
     * running (unless `request_id` names the call that started it).
     * </pre>
     */
    public void startTurn(com.shellexec.v1.StartTurnRequest request,
        io.grpc.stub.StreamObserver<com.shellexec.v1.StartTurnResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getStartTurnMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Publishes one ACP `session/update` of the session. Acknowledged only
     * once durable.
     * `tool_call` creates a message, `tool_call_update` folds into it,
     * `agent_message_chunk` and `user_message_chunk` append chat text; other
     * update types are accepted and ignored. A terminal tool update that
     * arrives after its turn was completed reconciles the existing message
     * without opening a turn or changing session or task state.
     * Returns NOT_FOUND for an unknown session, INVALID_ARGUMENT for an update
     * that is not an ACP update object or exceeds 4 MiB as protobuf.
     * </pre>
     */
    public void publishUpdate(com.shellexec.v1.PublishUpdateRequest request,
        io.grpc.stub.StreamObserver<com.shellexec.v1.PublishUpdateResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getPublishUpdateMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Completes a turn: tool calls still running become `cancelled`, keeping
     * their output; the session becomes `idle`, and its task too unless another
     * of the task's sessions has a running turn. Completing a completed turn
     * again changes nothing.
     * Returns NOT_FOUND for an unknown session or turn.
     * </pre>
     */
    public void completeTurn(com.shellexec.v1.CompleteTurnRequest request,
        io.grpc.stub.StreamObserver<com.shellexec.v1.CompleteTurnResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getCompleteTurnMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Lists the sessions the caller may see, by creation, with their command and
     * failure counts.
     * Returns NOT_FOUND for an unknown cursor session, and INVALID_ARGUMENT for a
     * negative limit, an unknown sort or both `before` and `after`.
     * </pre>
     */
    public void listSessions(com.shellexec.v1.ListSessionsRequest request,
        io.grpc.stub.StreamObserver<com.shellexec.v1.ListSessionsResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getListSessionsMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Lists a session's messages with output summaries and no output bodies.
     * Returns NOT_FOUND for an unknown session or cursor message, and
     * INVALID_ARGUMENT for a negative limit, an unknown sort or both `before`
     * and `after`.
     * </pre>
     */
    public void listMessages(com.shellexec.v1.ListMessagesRequest request,
        io.grpc.stub.StreamObserver<com.shellexec.v1.ListMessagesResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getListMessagesMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Returns the full bounded output of a shell command.
     * Returns NOT_FOUND alike for a missing message, a message of another
     * session and a message that is not a shell command.
     * </pre>
     */
    public void getShellOutput(com.shellexec.v1.GetShellOutputRequest request,
        io.grpc.stub.StreamObserver<com.shellexec.v1.GetShellOutputResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getGetShellOutputMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Streams a session's message events: first every event after
     * `since_revision`, then live ones, with heartbeats, until the stream's
     * lifetime ends with an `end_of_stream` event. A deleted session's streams
     * end with `session_deleted`; a replay from before the session's compaction
     * point (events older than the feed window are pruned) sends `reset`,
     * carrying the latest revision, and ends: reload the state, then watch from
     * its revision.
     * Returns NOT_FOUND for an unknown session and INVALID_ARGUMENT for a
     * `since_revision` that is negative or beyond the session's `revision`.
     * </pre>
     */
    public void watchMessages(com.shellexec.v1.WatchMessagesRequest request,
        io.grpc.stub.StreamObserver<com.shellexec.v1.WatchMessagesResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncServerStreamingCall(
          getChannel().newCall(getWatchMessagesMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Returns what a browser needs to open a task: its latest session, that
     * session's messages and the task's state.
     * Returns NOT_FOUND for a task with no session.
     * </pre>
     */
    public void getBootState(com.shellexec.v1.GetBootStateRequest request,
        io.grpc.stub.StreamObserver<com.shellexec.v1.GetBootStateResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getGetBootStateMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Deletes a session with everything stored for it: its turns, messages,
     * command output, feed events and publish receipts. Its watchers receive a
     * `session_deleted` event and their streams end; afterwards the session and
     * its messages answer NOT_FOUND. A task exists while it has a session: the
     * task of its last session goes with it.
     * Returns NOT_FOUND for an unknown (or already deleted) session. Needs the
     * `admin` scope.
     * </pre>
     */
    public void deleteSession(com.shellexec.v1.DeleteSessionRequest request,
        io.grpc.stub.StreamObserver<com.shellexec.v1.DeleteSessionResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getDeleteSessionMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Deletes a task with all its sessions, as DeleteSession deletes each.
     * Returns NOT_FOUND for an unknown (or already deleted) task. Needs the
     * `admin` scope.
     * </pre>
     */
    public void deleteTask(com.shellexec.v1.DeleteTaskRequest request,
        io.grpc.stub.StreamObserver<com.shellexec.v1.DeleteTaskResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getDeleteTaskMethod(), getCallOptions()), request, responseObserver);
    }
  }

  /**
   * A stub to allow clients to do synchronous rpc calls to service ShellExecService.
   * <pre>
   * Turns the shell commands that coding agents report over the Agent Client
   * Protocol (ACP) into one normalized, bounded, persisted record per command,
   * and serves those records to browsers and services.
   * Agents (or a bridge in front of them) create a session, start a turn,
   * publish every ACP `session/update` and complete the turn. Browsers list
   * messages, fetch a command's full output on demand and watch the feed.
   * </pre>
   */
  public static final class ShellExecServiceBlockingV2Stub
      extends io.grpc.stub.AbstractBlockingStub<ShellExecServiceBlockingV2Stub> {
    private ShellExecServiceBlockingV2Stub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected ShellExecServiceBlockingV2Stub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new ShellExecServiceBlockingV2Stub(channel, callOptions);
    }

    /**
     * <pre>
     * Folds the ACP updates of ONE tool call, in order, into a normalized shell
     * command. Nothing is stored.
     * Returns INVALID_ARGUMENT when `updates` is empty, holds more than 1,000
     * updates, or an update is not a JSON object or exceeds 4 MiB as protobuf.
     * </pre>
     */
    public com.shellexec.v1.NormalizeShellExecResponse normalizeShellExec(com.shellexec.v1.NormalizeShellExecRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getNormalizeShellExecMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Computes the browser-facing summary of a full output, the same
     * projection the service applies to stored messages.
     * Returns INVALID_ARGUMENT when `output` is missing or a text field
     * exceeds 262,144 bytes.
     * </pre>
     */
    public com.shellexec.v1.SummarizeShellOutputResponse summarizeShellOutput(com.shellexec.v1.SummarizeShellOutputRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getSummarizeShellOutputMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Creates a session for a task. The task is created on first use.
     * With a `request_id` the call is idempotent for 24 hours: a retry with the
     * same `request_id` returns the session the first call created, as it is
     * now, and creates nothing.
     * Returns INVALID_ARGUMENT when `task_id` is empty or malformed, when
     * `request_id` is malformed, or when `request_id` was already used with
     * another `task_id` or `agent`.
     * </pre>
     */
    public com.shellexec.v1.CreateSessionResponse createSession(com.shellexec.v1.CreateSessionRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getCreateSessionMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Returns a session with its latest feed revision.
     * Returns NOT_FOUND for an unknown session.
     * </pre>
     */
    public com.shellexec.v1.GetSessionResponse getSession(com.shellexec.v1.GetSessionRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getGetSessionMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Starts a turn: the session and its task become `running`.
     * With a `request_id` the call is idempotent for 24 hours: a retry with the
     * same `request_id` on the same session returns the turn the first call
     * started, as it is now (also once completed), and starts nothing.
     * Returns NOT_FOUND for an unknown session, INVALID_ARGUMENT for a
     * malformed `request_id` and FAILED_PRECONDITION when a turn is already
     * running (unless `request_id` names the call that started it).
     * </pre>
     */
    public com.shellexec.v1.StartTurnResponse startTurn(com.shellexec.v1.StartTurnRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getStartTurnMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Publishes one ACP `session/update` of the session. Acknowledged only
     * once durable.
     * `tool_call` creates a message, `tool_call_update` folds into it,
     * `agent_message_chunk` and `user_message_chunk` append chat text; other
     * update types are accepted and ignored. A terminal tool update that
     * arrives after its turn was completed reconciles the existing message
     * without opening a turn or changing session or task state.
     * Returns NOT_FOUND for an unknown session, INVALID_ARGUMENT for an update
     * that is not an ACP update object or exceeds 4 MiB as protobuf.
     * </pre>
     */
    public com.shellexec.v1.PublishUpdateResponse publishUpdate(com.shellexec.v1.PublishUpdateRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getPublishUpdateMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Completes a turn: tool calls still running become `cancelled`, keeping
     * their output; the session becomes `idle`, and its task too unless another
     * of the task's sessions has a running turn. Completing a completed turn
     * again changes nothing.
     * Returns NOT_FOUND for an unknown session or turn.
     * </pre>
     */
    public com.shellexec.v1.CompleteTurnResponse completeTurn(com.shellexec.v1.CompleteTurnRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getCompleteTurnMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Lists the sessions the caller may see, by creation, with their command and
     * failure counts.
     * Returns NOT_FOUND for an unknown cursor session, and INVALID_ARGUMENT for a
     * negative limit, an unknown sort or both `before` and `after`.
     * </pre>
     */
    public com.shellexec.v1.ListSessionsResponse listSessions(com.shellexec.v1.ListSessionsRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getListSessionsMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Lists a session's messages with output summaries and no output bodies.
     * Returns NOT_FOUND for an unknown session or cursor message, and
     * INVALID_ARGUMENT for a negative limit, an unknown sort or both `before`
     * and `after`.
     * </pre>
     */
    public com.shellexec.v1.ListMessagesResponse listMessages(com.shellexec.v1.ListMessagesRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getListMessagesMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Returns the full bounded output of a shell command.
     * Returns NOT_FOUND alike for a missing message, a message of another
     * session and a message that is not a shell command.
     * </pre>
     */
    public com.shellexec.v1.GetShellOutputResponse getShellOutput(com.shellexec.v1.GetShellOutputRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getGetShellOutputMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Streams a session's message events: first every event after
     * `since_revision`, then live ones, with heartbeats, until the stream's
     * lifetime ends with an `end_of_stream` event. A deleted session's streams
     * end with `session_deleted`; a replay from before the session's compaction
     * point (events older than the feed window are pruned) sends `reset`,
     * carrying the latest revision, and ends: reload the state, then watch from
     * its revision.
     * Returns NOT_FOUND for an unknown session and INVALID_ARGUMENT for a
     * `since_revision` that is negative or beyond the session's `revision`.
     * </pre>
     */
    @io.grpc.ExperimentalApi("https://github.com/grpc/grpc-java/issues/10918")
    public io.grpc.stub.BlockingClientCall<?, com.shellexec.v1.WatchMessagesResponse>
        watchMessages(com.shellexec.v1.WatchMessagesRequest request) {
      return io.grpc.stub.ClientCalls.blockingV2ServerStreamingCall(
          getChannel(), getWatchMessagesMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Returns what a browser needs to open a task: its latest session, that
     * session's messages and the task's state.
     * Returns NOT_FOUND for a task with no session.
     * </pre>
     */
    public com.shellexec.v1.GetBootStateResponse getBootState(com.shellexec.v1.GetBootStateRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getGetBootStateMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Deletes a session with everything stored for it: its turns, messages,
     * command output, feed events and publish receipts. Its watchers receive a
     * `session_deleted` event and their streams end; afterwards the session and
     * its messages answer NOT_FOUND. A task exists while it has a session: the
     * task of its last session goes with it.
     * Returns NOT_FOUND for an unknown (or already deleted) session. Needs the
     * `admin` scope.
     * </pre>
     */
    public com.shellexec.v1.DeleteSessionResponse deleteSession(com.shellexec.v1.DeleteSessionRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getDeleteSessionMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Deletes a task with all its sessions, as DeleteSession deletes each.
     * Returns NOT_FOUND for an unknown (or already deleted) task. Needs the
     * `admin` scope.
     * </pre>
     */
    public com.shellexec.v1.DeleteTaskResponse deleteTask(com.shellexec.v1.DeleteTaskRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getDeleteTaskMethod(), getCallOptions(), request);
    }
  }

  /**
   * A stub to allow clients to do limited synchronous rpc calls to service ShellExecService.
   * <pre>
   * Turns the shell commands that coding agents report over the Agent Client
   * Protocol (ACP) into one normalized, bounded, persisted record per command,
   * and serves those records to browsers and services.
   * Agents (or a bridge in front of them) create a session, start a turn,
   * publish every ACP `session/update` and complete the turn. Browsers list
   * messages, fetch a command's full output on demand and watch the feed.
   * </pre>
   */
  public static final class ShellExecServiceBlockingStub
      extends io.grpc.stub.AbstractBlockingStub<ShellExecServiceBlockingStub> {
    private ShellExecServiceBlockingStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected ShellExecServiceBlockingStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new ShellExecServiceBlockingStub(channel, callOptions);
    }

    /**
     * <pre>
     * Folds the ACP updates of ONE tool call, in order, into a normalized shell
     * command. Nothing is stored.
     * Returns INVALID_ARGUMENT when `updates` is empty, holds more than 1,000
     * updates, or an update is not a JSON object or exceeds 4 MiB as protobuf.
     * </pre>
     */
    public com.shellexec.v1.NormalizeShellExecResponse normalizeShellExec(com.shellexec.v1.NormalizeShellExecRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getNormalizeShellExecMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Computes the browser-facing summary of a full output, the same
     * projection the service applies to stored messages.
     * Returns INVALID_ARGUMENT when `output` is missing or a text field
     * exceeds 262,144 bytes.
     * </pre>
     */
    public com.shellexec.v1.SummarizeShellOutputResponse summarizeShellOutput(com.shellexec.v1.SummarizeShellOutputRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getSummarizeShellOutputMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Creates a session for a task. The task is created on first use.
     * With a `request_id` the call is idempotent for 24 hours: a retry with the
     * same `request_id` returns the session the first call created, as it is
     * now, and creates nothing.
     * Returns INVALID_ARGUMENT when `task_id` is empty or malformed, when
     * `request_id` is malformed, or when `request_id` was already used with
     * another `task_id` or `agent`.
     * </pre>
     */
    public com.shellexec.v1.CreateSessionResponse createSession(com.shellexec.v1.CreateSessionRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getCreateSessionMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Returns a session with its latest feed revision.
     * Returns NOT_FOUND for an unknown session.
     * </pre>
     */
    public com.shellexec.v1.GetSessionResponse getSession(com.shellexec.v1.GetSessionRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getGetSessionMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Starts a turn: the session and its task become `running`.
     * With a `request_id` the call is idempotent for 24 hours: a retry with the
     * same `request_id` on the same session returns the turn the first call
     * started, as it is now (also once completed), and starts nothing.
     * Returns NOT_FOUND for an unknown session, INVALID_ARGUMENT for a
     * malformed `request_id` and FAILED_PRECONDITION when a turn is already
     * running (unless `request_id` names the call that started it).
     * </pre>
     */
    public com.shellexec.v1.StartTurnResponse startTurn(com.shellexec.v1.StartTurnRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getStartTurnMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Publishes one ACP `session/update` of the session. Acknowledged only
     * once durable.
     * `tool_call` creates a message, `tool_call_update` folds into it,
     * `agent_message_chunk` and `user_message_chunk` append chat text; other
     * update types are accepted and ignored. A terminal tool update that
     * arrives after its turn was completed reconciles the existing message
     * without opening a turn or changing session or task state.
     * Returns NOT_FOUND for an unknown session, INVALID_ARGUMENT for an update
     * that is not an ACP update object or exceeds 4 MiB as protobuf.
     * </pre>
     */
    public com.shellexec.v1.PublishUpdateResponse publishUpdate(com.shellexec.v1.PublishUpdateRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getPublishUpdateMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Completes a turn: tool calls still running become `cancelled`, keeping
     * their output; the session becomes `idle`, and its task too unless another
     * of the task's sessions has a running turn. Completing a completed turn
     * again changes nothing.
     * Returns NOT_FOUND for an unknown session or turn.
     * </pre>
     */
    public com.shellexec.v1.CompleteTurnResponse completeTurn(com.shellexec.v1.CompleteTurnRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getCompleteTurnMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Lists the sessions the caller may see, by creation, with their command and
     * failure counts.
     * Returns NOT_FOUND for an unknown cursor session, and INVALID_ARGUMENT for a
     * negative limit, an unknown sort or both `before` and `after`.
     * </pre>
     */
    public com.shellexec.v1.ListSessionsResponse listSessions(com.shellexec.v1.ListSessionsRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getListSessionsMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Lists a session's messages with output summaries and no output bodies.
     * Returns NOT_FOUND for an unknown session or cursor message, and
     * INVALID_ARGUMENT for a negative limit, an unknown sort or both `before`
     * and `after`.
     * </pre>
     */
    public com.shellexec.v1.ListMessagesResponse listMessages(com.shellexec.v1.ListMessagesRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getListMessagesMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Returns the full bounded output of a shell command.
     * Returns NOT_FOUND alike for a missing message, a message of another
     * session and a message that is not a shell command.
     * </pre>
     */
    public com.shellexec.v1.GetShellOutputResponse getShellOutput(com.shellexec.v1.GetShellOutputRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getGetShellOutputMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Streams a session's message events: first every event after
     * `since_revision`, then live ones, with heartbeats, until the stream's
     * lifetime ends with an `end_of_stream` event. A deleted session's streams
     * end with `session_deleted`; a replay from before the session's compaction
     * point (events older than the feed window are pruned) sends `reset`,
     * carrying the latest revision, and ends: reload the state, then watch from
     * its revision.
     * Returns NOT_FOUND for an unknown session and INVALID_ARGUMENT for a
     * `since_revision` that is negative or beyond the session's `revision`.
     * </pre>
     */
    public java.util.Iterator<com.shellexec.v1.WatchMessagesResponse> watchMessages(
        com.shellexec.v1.WatchMessagesRequest request) {
      return io.grpc.stub.ClientCalls.blockingServerStreamingCall(
          getChannel(), getWatchMessagesMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Returns what a browser needs to open a task: its latest session, that
     * session's messages and the task's state.
     * Returns NOT_FOUND for a task with no session.
     * </pre>
     */
    public com.shellexec.v1.GetBootStateResponse getBootState(com.shellexec.v1.GetBootStateRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getGetBootStateMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Deletes a session with everything stored for it: its turns, messages,
     * command output, feed events and publish receipts. Its watchers receive a
     * `session_deleted` event and their streams end; afterwards the session and
     * its messages answer NOT_FOUND. A task exists while it has a session: the
     * task of its last session goes with it.
     * Returns NOT_FOUND for an unknown (or already deleted) session. Needs the
     * `admin` scope.
     * </pre>
     */
    public com.shellexec.v1.DeleteSessionResponse deleteSession(com.shellexec.v1.DeleteSessionRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getDeleteSessionMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Deletes a task with all its sessions, as DeleteSession deletes each.
     * Returns NOT_FOUND for an unknown (or already deleted) task. Needs the
     * `admin` scope.
     * </pre>
     */
    public com.shellexec.v1.DeleteTaskResponse deleteTask(com.shellexec.v1.DeleteTaskRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getDeleteTaskMethod(), getCallOptions(), request);
    }
  }

  /**
   * A stub to allow clients to do ListenableFuture-style rpc calls to service ShellExecService.
   * <pre>
   * Turns the shell commands that coding agents report over the Agent Client
   * Protocol (ACP) into one normalized, bounded, persisted record per command,
   * and serves those records to browsers and services.
   * Agents (or a bridge in front of them) create a session, start a turn,
   * publish every ACP `session/update` and complete the turn. Browsers list
   * messages, fetch a command's full output on demand and watch the feed.
   * </pre>
   */
  public static final class ShellExecServiceFutureStub
      extends io.grpc.stub.AbstractFutureStub<ShellExecServiceFutureStub> {
    private ShellExecServiceFutureStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected ShellExecServiceFutureStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new ShellExecServiceFutureStub(channel, callOptions);
    }

    /**
     * <pre>
     * Folds the ACP updates of ONE tool call, in order, into a normalized shell
     * command. Nothing is stored.
     * Returns INVALID_ARGUMENT when `updates` is empty, holds more than 1,000
     * updates, or an update is not a JSON object or exceeds 4 MiB as protobuf.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<com.shellexec.v1.NormalizeShellExecResponse> normalizeShellExec(
        com.shellexec.v1.NormalizeShellExecRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getNormalizeShellExecMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Computes the browser-facing summary of a full output, the same
     * projection the service applies to stored messages.
     * Returns INVALID_ARGUMENT when `output` is missing or a text field
     * exceeds 262,144 bytes.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<com.shellexec.v1.SummarizeShellOutputResponse> summarizeShellOutput(
        com.shellexec.v1.SummarizeShellOutputRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getSummarizeShellOutputMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Creates a session for a task. The task is created on first use.
     * With a `request_id` the call is idempotent for 24 hours: a retry with the
     * same `request_id` returns the session the first call created, as it is
     * now, and creates nothing.
     * Returns INVALID_ARGUMENT when `task_id` is empty or malformed, when
     * `request_id` is malformed, or when `request_id` was already used with
     * another `task_id` or `agent`.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<com.shellexec.v1.CreateSessionResponse> createSession(
        com.shellexec.v1.CreateSessionRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getCreateSessionMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Returns a session with its latest feed revision.
     * Returns NOT_FOUND for an unknown session.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<com.shellexec.v1.GetSessionResponse> getSession(
        com.shellexec.v1.GetSessionRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getGetSessionMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Starts a turn: the session and its task become `running`.
     * With a `request_id` the call is idempotent for 24 hours: a retry with the
     * same `request_id` on the same session returns the turn the first call
     * started, as it is now (also once completed), and starts nothing.
     * Returns NOT_FOUND for an unknown session, INVALID_ARGUMENT for a
     * malformed `request_id` and FAILED_PRECONDITION when a turn is already
     * running (unless `request_id` names the call that started it).
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<com.shellexec.v1.StartTurnResponse> startTurn(
        com.shellexec.v1.StartTurnRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getStartTurnMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Publishes one ACP `session/update` of the session. Acknowledged only
     * once durable.
     * `tool_call` creates a message, `tool_call_update` folds into it,
     * `agent_message_chunk` and `user_message_chunk` append chat text; other
     * update types are accepted and ignored. A terminal tool update that
     * arrives after its turn was completed reconciles the existing message
     * without opening a turn or changing session or task state.
     * Returns NOT_FOUND for an unknown session, INVALID_ARGUMENT for an update
     * that is not an ACP update object or exceeds 4 MiB as protobuf.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<com.shellexec.v1.PublishUpdateResponse> publishUpdate(
        com.shellexec.v1.PublishUpdateRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getPublishUpdateMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Completes a turn: tool calls still running become `cancelled`, keeping
     * their output; the session becomes `idle`, and its task too unless another
     * of the task's sessions has a running turn. Completing a completed turn
     * again changes nothing.
     * Returns NOT_FOUND for an unknown session or turn.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<com.shellexec.v1.CompleteTurnResponse> completeTurn(
        com.shellexec.v1.CompleteTurnRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getCompleteTurnMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Lists the sessions the caller may see, by creation, with their command and
     * failure counts.
     * Returns NOT_FOUND for an unknown cursor session, and INVALID_ARGUMENT for a
     * negative limit, an unknown sort or both `before` and `after`.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<com.shellexec.v1.ListSessionsResponse> listSessions(
        com.shellexec.v1.ListSessionsRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getListSessionsMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Lists a session's messages with output summaries and no output bodies.
     * Returns NOT_FOUND for an unknown session or cursor message, and
     * INVALID_ARGUMENT for a negative limit, an unknown sort or both `before`
     * and `after`.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<com.shellexec.v1.ListMessagesResponse> listMessages(
        com.shellexec.v1.ListMessagesRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getListMessagesMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Returns the full bounded output of a shell command.
     * Returns NOT_FOUND alike for a missing message, a message of another
     * session and a message that is not a shell command.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<com.shellexec.v1.GetShellOutputResponse> getShellOutput(
        com.shellexec.v1.GetShellOutputRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getGetShellOutputMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Returns what a browser needs to open a task: its latest session, that
     * session's messages and the task's state.
     * Returns NOT_FOUND for a task with no session.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<com.shellexec.v1.GetBootStateResponse> getBootState(
        com.shellexec.v1.GetBootStateRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getGetBootStateMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Deletes a session with everything stored for it: its turns, messages,
     * command output, feed events and publish receipts. Its watchers receive a
     * `session_deleted` event and their streams end; afterwards the session and
     * its messages answer NOT_FOUND. A task exists while it has a session: the
     * task of its last session goes with it.
     * Returns NOT_FOUND for an unknown (or already deleted) session. Needs the
     * `admin` scope.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<com.shellexec.v1.DeleteSessionResponse> deleteSession(
        com.shellexec.v1.DeleteSessionRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getDeleteSessionMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Deletes a task with all its sessions, as DeleteSession deletes each.
     * Returns NOT_FOUND for an unknown (or already deleted) task. Needs the
     * `admin` scope.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<com.shellexec.v1.DeleteTaskResponse> deleteTask(
        com.shellexec.v1.DeleteTaskRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getDeleteTaskMethod(), getCallOptions()), request);
    }
  }

  private static final int METHODID_NORMALIZE_SHELL_EXEC = 0;
  private static final int METHODID_SUMMARIZE_SHELL_OUTPUT = 1;
  private static final int METHODID_CREATE_SESSION = 2;
  private static final int METHODID_GET_SESSION = 3;
  private static final int METHODID_START_TURN = 4;
  private static final int METHODID_PUBLISH_UPDATE = 5;
  private static final int METHODID_COMPLETE_TURN = 6;
  private static final int METHODID_LIST_SESSIONS = 7;
  private static final int METHODID_LIST_MESSAGES = 8;
  private static final int METHODID_GET_SHELL_OUTPUT = 9;
  private static final int METHODID_WATCH_MESSAGES = 10;
  private static final int METHODID_GET_BOOT_STATE = 11;
  private static final int METHODID_DELETE_SESSION = 12;
  private static final int METHODID_DELETE_TASK = 13;

  private static final class MethodHandlers<Req, Resp> implements
      io.grpc.stub.ServerCalls.UnaryMethod<Req, Resp>,
      io.grpc.stub.ServerCalls.ServerStreamingMethod<Req, Resp>,
      io.grpc.stub.ServerCalls.ClientStreamingMethod<Req, Resp>,
      io.grpc.stub.ServerCalls.BidiStreamingMethod<Req, Resp> {
    private final AsyncService serviceImpl;
    private final int methodId;

    MethodHandlers(AsyncService serviceImpl, int methodId) {
      this.serviceImpl = serviceImpl;
      this.methodId = methodId;
    }

    @java.lang.Override
    @java.lang.SuppressWarnings("unchecked")
    public void invoke(Req request, io.grpc.stub.StreamObserver<Resp> responseObserver) {
      switch (methodId) {
        case METHODID_NORMALIZE_SHELL_EXEC:
          serviceImpl.normalizeShellExec((com.shellexec.v1.NormalizeShellExecRequest) request,
              (io.grpc.stub.StreamObserver<com.shellexec.v1.NormalizeShellExecResponse>) responseObserver);
          break;
        case METHODID_SUMMARIZE_SHELL_OUTPUT:
          serviceImpl.summarizeShellOutput((com.shellexec.v1.SummarizeShellOutputRequest) request,
              (io.grpc.stub.StreamObserver<com.shellexec.v1.SummarizeShellOutputResponse>) responseObserver);
          break;
        case METHODID_CREATE_SESSION:
          serviceImpl.createSession((com.shellexec.v1.CreateSessionRequest) request,
              (io.grpc.stub.StreamObserver<com.shellexec.v1.CreateSessionResponse>) responseObserver);
          break;
        case METHODID_GET_SESSION:
          serviceImpl.getSession((com.shellexec.v1.GetSessionRequest) request,
              (io.grpc.stub.StreamObserver<com.shellexec.v1.GetSessionResponse>) responseObserver);
          break;
        case METHODID_START_TURN:
          serviceImpl.startTurn((com.shellexec.v1.StartTurnRequest) request,
              (io.grpc.stub.StreamObserver<com.shellexec.v1.StartTurnResponse>) responseObserver);
          break;
        case METHODID_PUBLISH_UPDATE:
          serviceImpl.publishUpdate((com.shellexec.v1.PublishUpdateRequest) request,
              (io.grpc.stub.StreamObserver<com.shellexec.v1.PublishUpdateResponse>) responseObserver);
          break;
        case METHODID_COMPLETE_TURN:
          serviceImpl.completeTurn((com.shellexec.v1.CompleteTurnRequest) request,
              (io.grpc.stub.StreamObserver<com.shellexec.v1.CompleteTurnResponse>) responseObserver);
          break;
        case METHODID_LIST_SESSIONS:
          serviceImpl.listSessions((com.shellexec.v1.ListSessionsRequest) request,
              (io.grpc.stub.StreamObserver<com.shellexec.v1.ListSessionsResponse>) responseObserver);
          break;
        case METHODID_LIST_MESSAGES:
          serviceImpl.listMessages((com.shellexec.v1.ListMessagesRequest) request,
              (io.grpc.stub.StreamObserver<com.shellexec.v1.ListMessagesResponse>) responseObserver);
          break;
        case METHODID_GET_SHELL_OUTPUT:
          serviceImpl.getShellOutput((com.shellexec.v1.GetShellOutputRequest) request,
              (io.grpc.stub.StreamObserver<com.shellexec.v1.GetShellOutputResponse>) responseObserver);
          break;
        case METHODID_WATCH_MESSAGES:
          serviceImpl.watchMessages((com.shellexec.v1.WatchMessagesRequest) request,
              (io.grpc.stub.StreamObserver<com.shellexec.v1.WatchMessagesResponse>) responseObserver);
          break;
        case METHODID_GET_BOOT_STATE:
          serviceImpl.getBootState((com.shellexec.v1.GetBootStateRequest) request,
              (io.grpc.stub.StreamObserver<com.shellexec.v1.GetBootStateResponse>) responseObserver);
          break;
        case METHODID_DELETE_SESSION:
          serviceImpl.deleteSession((com.shellexec.v1.DeleteSessionRequest) request,
              (io.grpc.stub.StreamObserver<com.shellexec.v1.DeleteSessionResponse>) responseObserver);
          break;
        case METHODID_DELETE_TASK:
          serviceImpl.deleteTask((com.shellexec.v1.DeleteTaskRequest) request,
              (io.grpc.stub.StreamObserver<com.shellexec.v1.DeleteTaskResponse>) responseObserver);
          break;
        default:
          throw new AssertionError();
      }
    }

    @java.lang.Override
    @java.lang.SuppressWarnings("unchecked")
    public io.grpc.stub.StreamObserver<Req> invoke(
        io.grpc.stub.StreamObserver<Resp> responseObserver) {
      switch (methodId) {
        default:
          throw new AssertionError();
      }
    }
  }

  public static final io.grpc.ServerServiceDefinition bindService(AsyncService service) {
    return io.grpc.ServerServiceDefinition.builder(getServiceDescriptor())
        .addMethod(
          getNormalizeShellExecMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              com.shellexec.v1.NormalizeShellExecRequest,
              com.shellexec.v1.NormalizeShellExecResponse>(
                service, METHODID_NORMALIZE_SHELL_EXEC)))
        .addMethod(
          getSummarizeShellOutputMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              com.shellexec.v1.SummarizeShellOutputRequest,
              com.shellexec.v1.SummarizeShellOutputResponse>(
                service, METHODID_SUMMARIZE_SHELL_OUTPUT)))
        .addMethod(
          getCreateSessionMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              com.shellexec.v1.CreateSessionRequest,
              com.shellexec.v1.CreateSessionResponse>(
                service, METHODID_CREATE_SESSION)))
        .addMethod(
          getGetSessionMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              com.shellexec.v1.GetSessionRequest,
              com.shellexec.v1.GetSessionResponse>(
                service, METHODID_GET_SESSION)))
        .addMethod(
          getStartTurnMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              com.shellexec.v1.StartTurnRequest,
              com.shellexec.v1.StartTurnResponse>(
                service, METHODID_START_TURN)))
        .addMethod(
          getPublishUpdateMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              com.shellexec.v1.PublishUpdateRequest,
              com.shellexec.v1.PublishUpdateResponse>(
                service, METHODID_PUBLISH_UPDATE)))
        .addMethod(
          getCompleteTurnMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              com.shellexec.v1.CompleteTurnRequest,
              com.shellexec.v1.CompleteTurnResponse>(
                service, METHODID_COMPLETE_TURN)))
        .addMethod(
          getListSessionsMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              com.shellexec.v1.ListSessionsRequest,
              com.shellexec.v1.ListSessionsResponse>(
                service, METHODID_LIST_SESSIONS)))
        .addMethod(
          getListMessagesMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              com.shellexec.v1.ListMessagesRequest,
              com.shellexec.v1.ListMessagesResponse>(
                service, METHODID_LIST_MESSAGES)))
        .addMethod(
          getGetShellOutputMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              com.shellexec.v1.GetShellOutputRequest,
              com.shellexec.v1.GetShellOutputResponse>(
                service, METHODID_GET_SHELL_OUTPUT)))
        .addMethod(
          getWatchMessagesMethod(),
          io.grpc.stub.ServerCalls.asyncServerStreamingCall(
            new MethodHandlers<
              com.shellexec.v1.WatchMessagesRequest,
              com.shellexec.v1.WatchMessagesResponse>(
                service, METHODID_WATCH_MESSAGES)))
        .addMethod(
          getGetBootStateMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              com.shellexec.v1.GetBootStateRequest,
              com.shellexec.v1.GetBootStateResponse>(
                service, METHODID_GET_BOOT_STATE)))
        .addMethod(
          getDeleteSessionMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              com.shellexec.v1.DeleteSessionRequest,
              com.shellexec.v1.DeleteSessionResponse>(
                service, METHODID_DELETE_SESSION)))
        .addMethod(
          getDeleteTaskMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              com.shellexec.v1.DeleteTaskRequest,
              com.shellexec.v1.DeleteTaskResponse>(
                service, METHODID_DELETE_TASK)))
        .build();
  }

  private static abstract class ShellExecServiceBaseDescriptorSupplier
      implements io.grpc.protobuf.ProtoFileDescriptorSupplier, io.grpc.protobuf.ProtoServiceDescriptorSupplier {
    ShellExecServiceBaseDescriptorSupplier() {}

    @java.lang.Override
    public com.google.protobuf.Descriptors.FileDescriptor getFileDescriptor() {
      return com.shellexec.v1.ShellExecServiceProto.getDescriptor();
    }

    @java.lang.Override
    public com.google.protobuf.Descriptors.ServiceDescriptor getServiceDescriptor() {
      return getFileDescriptor().findServiceByName("ShellExecService");
    }
  }

  private static final class ShellExecServiceFileDescriptorSupplier
      extends ShellExecServiceBaseDescriptorSupplier {
    ShellExecServiceFileDescriptorSupplier() {}
  }

  private static final class ShellExecServiceMethodDescriptorSupplier
      extends ShellExecServiceBaseDescriptorSupplier
      implements io.grpc.protobuf.ProtoMethodDescriptorSupplier {
    private final java.lang.String methodName;

    ShellExecServiceMethodDescriptorSupplier(java.lang.String methodName) {
      this.methodName = methodName;
    }

    @java.lang.Override
    public com.google.protobuf.Descriptors.MethodDescriptor getMethodDescriptor() {
      return getServiceDescriptor().findMethodByName(methodName);
    }
  }

  private static volatile io.grpc.ServiceDescriptor serviceDescriptor;

  public static io.grpc.ServiceDescriptor getServiceDescriptor() {
    io.grpc.ServiceDescriptor result = serviceDescriptor;
    if (result == null) {
      synchronized (ShellExecServiceGrpc.class) {
        result = serviceDescriptor;
        if (result == null) {
          serviceDescriptor = result = io.grpc.ServiceDescriptor.newBuilder(SERVICE_NAME)
              .setSchemaDescriptor(new ShellExecServiceFileDescriptorSupplier())
              .addMethod(getNormalizeShellExecMethod())
              .addMethod(getSummarizeShellOutputMethod())
              .addMethod(getCreateSessionMethod())
              .addMethod(getGetSessionMethod())
              .addMethod(getStartTurnMethod())
              .addMethod(getPublishUpdateMethod())
              .addMethod(getCompleteTurnMethod())
              .addMethod(getListSessionsMethod())
              .addMethod(getListMessagesMethod())
              .addMethod(getGetShellOutputMethod())
              .addMethod(getWatchMessagesMethod())
              .addMethod(getGetBootStateMethod())
              .addMethod(getDeleteSessionMethod())
              .addMethod(getDeleteTaskMethod())
              .build();
        }
      }
    }
    return result;
  }
}
