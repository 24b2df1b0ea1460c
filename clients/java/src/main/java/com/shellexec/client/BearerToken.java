package com.shellexec.client;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import java.util.Map;

/** Sends {@code authorization: Bearer <token>} with every call of a channel. */
final class BearerToken implements ClientInterceptor {
  private static final Metadata.Key<String> AUTHORIZATION =
      Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);
  private static final Map<Integer, String> NAMED_CHARACTERS = Map.of(
      (int) '\r', "a carriage return", (int) '\n', "a line feed", (int) '\t', "a tab",
      (int) ' ', "a space", 0, "a NUL byte");

  private final String header;

  BearerToken(String token) {
    this.header = "Bearer " + token;
  }

  /**
   * What is wrong with a bearer token (never the token itself), or null: a token is at most
   * {@link ShellExecClient#MAX_BEARER_TOKEN_CHARS} visible ASCII characters (0x21-0x7E). The
   * words are the service's own (the bridge's {@code token_problem}), characters counted as
   * code points.
   */
  static String problem(String token) {
    int[] characters = token.codePoints().toArray();
    for (int index = 0; index < characters.length; index++) {
      int character = characters[index];
      if (character >= 0x21 && character <= 0x7e) {
        continue;
      }
      String name = NAMED_CHARACTERS.getOrDefault(character,
          character < 0x80 ? "a control character" : "a character outside ASCII");
      if (index == characters.length - 1) {
        return "ends with " + name;
      }
      return "holds " + name + " (character " + (index + 1) + " of " + characters.length + ")";
    }
    if (characters.length > ShellExecClient.MAX_BEARER_TOKEN_CHARS) {
      return "is " + characters.length + " characters long; the service takes at most "
          + ShellExecClient.MAX_BEARER_TOKEN_CHARS;
    }
    return null;
  }

  @Override
  public <ReqT, RespT> ClientCall<ReqT, RespT> interceptCall(
      MethodDescriptor<ReqT, RespT> method, CallOptions options, Channel next) {
    return new ForwardingClientCall.SimpleForwardingClientCall<>(next.newCall(method, options)) {
      @Override
      public void start(Listener<RespT> listener, Metadata headers) {
        headers.put(AUTHORIZATION, header);
        super.start(listener, headers);
      }
    };
  }
}
