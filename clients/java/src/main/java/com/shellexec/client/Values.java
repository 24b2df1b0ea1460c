package com.shellexec.client;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.ListValue;
import com.google.protobuf.NullValue;
import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import com.google.protobuf.util.JsonFormat;
import java.util.List;
import java.util.Map;

/**
 * Plain Java values to {@code google.protobuf.Value}, so callers pass an ACP update as the maps
 * and lists they already have (or as JSON text) instead of building Values.
 */
public final class Values {
  private Values() {}

  /**
   * The Value of a JSON-shaped object: a {@code Map} with string keys, a {@code List}, a {@code
   * String}, a {@code Number}, a {@code Boolean}, {@code null}, or a {@code Value} as it is.
   *
   * @throws IllegalArgumentException for anything else, naming its type; and for a string or
   *     key holding a lone surrogate, which UTF-8 cannot carry, naming where it is
   *     ({@code value.content.text holds a lone surrogate (U+D800 at index 5), ...}): sent, it
   *     became {@code ?}, and the service stored the text changed
   */
  public static Value of(Object value) {
    Value converted = convert(value);
    Text.refuse(converted, "value");
    return converted;
  }

  /** {@link #of} without the check of its text, which the client makes of the whole request. */
  static Value convert(Object value) {
    if (value == null) {
      return Value.newBuilder().setNullValue(NullValue.NULL_VALUE).build();
    }
    if (value instanceof Value given) {
      return given;
    }
    if (value instanceof String text) {
      return Value.newBuilder().setStringValue(text).build();
    }
    if (value instanceof Boolean flag) {
      return Value.newBuilder().setBoolValue(flag).build();
    }
    if (value instanceof Number number) {
      return Value.newBuilder().setNumberValue(number.doubleValue()).build();
    }
    if (value instanceof Map<?, ?> map) {
      return Value.newBuilder().setStructValue(struct(map)).build();
    }
    if (value instanceof List<?> list) {
      ListValue.Builder items = ListValue.newBuilder();
      list.forEach(item -> items.addValues(convert(item)));
      return Value.newBuilder().setListValue(items).build();
    }
    throw new IllegalArgumentException(
        "not a JSON value: " + value.getClass().getName() + " (use maps, lists and scalars)");
  }

  /**
   * The Value of a JSON text.
   *
   * @throws IllegalArgumentException when the text is not JSON, or holds a lone surrogate
   *     ({@code "\ud800"}), as {@link #of} does
   */
  public static Value ofJson(String json) {
    Value.Builder value = Value.newBuilder();
    try {
      JsonFormat.parser().merge(json, value);
    } catch (InvalidProtocolBufferException error) {
      throw new IllegalArgumentException("not JSON: " + error.getMessage(), error);
    }
    Value parsed = value.build();
    Text.refuse(parsed, "value");
    return parsed;
  }

  private static Struct struct(Map<?, ?> map) {
    Struct.Builder struct = Struct.newBuilder();
    for (Map.Entry<?, ?> entry : map.entrySet()) {
      if (!(entry.getKey() instanceof String key)) {
        throw new IllegalArgumentException("a JSON object's keys are strings: " + entry.getKey());
      }
      struct.putFields(key, convert(entry.getValue()));
    }
    return struct.build();
  }
}
