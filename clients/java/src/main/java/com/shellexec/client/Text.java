package com.shellexec.client;

import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.ListValue;
import com.google.protobuf.MapEntry;
import com.google.protobuf.MessageOrBuilder;
import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import java.util.List;
import java.util.Map;

/**
 * Refuses text UTF-8 cannot carry before it is sent: a Java string may hold a lone surrogate
 * (a {@code char} of a pair without its partner), and protobuf wrote each as {@code ?}, so the
 * service stored the text changed and nothing said so. The error names where the text is (an
 * update's JSON path, {@code update.content.text}, or a request field, {@code task_id}) and what
 * is wrong, as the Python client's {@code ValueError} does.
 */
final class Text {
  private Text() {}

  /** How deep a check follows a value: protobuf and the service refuse far shallower. */
  private static final int MAX_DEPTH = 10_000;

  /** What is wrong with {@code text} for UTF-8, or null. */
  static String problem(String text) {
    for (int index = 0; index < text.length(); index++) {
      char c = text.charAt(index);
      if (Character.isHighSurrogate(c) && index + 1 < text.length()
          && Character.isLowSurrogate(text.charAt(index + 1))) {
        index++;
      } else if (Character.isSurrogate(c)) {
        return String.format("holds a lone surrogate (U+%04X at index %d), which UTF-8 cannot "
            + "carry: the service takes UTF-8 text only", (int) c, index);
      }
    }
    return null;
  }

  /** Throws {@link IllegalArgumentException} for the first lone surrogate of a request. */
  static void refuse(MessageOrBuilder request) {
    message(request, "", 0);
  }

  /** Throws for the first lone surrogate of a value, its JSON path starting with {@code path}. */
  static void refuse(Value value, String path) {
    value(value, path, 0);
  }

  private static void string(String text, String path) {
    String problem = problem(text);
    if (problem != null) {
      throw new IllegalArgumentException(path + " " + problem);
    }
  }

  private static void key(String key, String path) {
    String problem = problem(key);
    if (problem != null) {
      throw new IllegalArgumentException("a key in " + path + " " + problem);
    }
  }

  private static void message(MessageOrBuilder message, String path, int depth) {
    if (depth > MAX_DEPTH) {
      return;
    }
    if (message instanceof Value value) {
      value(value, path, depth);
      return;
    }
    if (message instanceof Struct struct) {
      struct(struct, path, depth);
      return;
    }
    if (message instanceof ListValue list) {
      list(list, path, depth);
      return;
    }
    for (Map.Entry<FieldDescriptor, Object> field : message.getAllFields().entrySet()) {
      FieldDescriptor descriptor = field.getKey();
      String name = path.isEmpty() ? descriptor.getName() : path + "." + descriptor.getName();
      if (descriptor.isMapField()) {
        for (Object entry : (List<?>) field.getValue()) {
          MapEntry<?, ?> pair = (MapEntry<?, ?>) entry;
          String keyText = String.valueOf(pair.getKey());
          if (pair.getKey() instanceof String text) {
            key(text, name);
          }
          item(pair.getValue(), keyPath(name, keyText), depth);
        }
      } else if (descriptor.isRepeated()) {
        List<?> items = (List<?>) field.getValue();
        for (int index = 0; index < items.size(); index++) {
          item(items.get(index), name + "[" + index + "]", depth);
        }
      } else {
        item(field.getValue(), name, depth);
      }
    }
  }

  private static void item(Object item, String path, int depth) {
    if (item instanceof String text) {
      string(text, path);
    } else if (item instanceof MessageOrBuilder message) {
      message(message, path, depth + 1);
    }
  }

  private static void value(Value value, String path, int depth) {
    if (depth > MAX_DEPTH) {
      return;
    }
    switch (value.getKindCase()) {
      case STRING_VALUE -> string(value.getStringValue(), path);
      case STRUCT_VALUE -> struct(value.getStructValue(), path, depth);
      case LIST_VALUE -> list(value.getListValue(), path, depth);
      default -> { }
    }
  }

  private static void struct(Struct struct, String path, int depth) {
    for (Map.Entry<String, Value> field : struct.getFieldsMap().entrySet()) {
      key(field.getKey(), path);
      value(field.getValue(), keyPath(path, field.getKey()), depth + 1);
    }
  }

  private static void list(ListValue list, String path, int depth) {
    for (int index = 0; index < list.getValuesCount(); index++) {
      value(list.getValues(index), path + "[" + index + "]", depth + 1);
    }
  }

  /** {@code path} followed by an object key, as a JSON path: .name, or ["odd key"]. */
  static String keyPath(String path, String key) {
    if (key.matches("[A-Za-z_][A-Za-z0-9_]*")) {
      return path.isEmpty() ? key : path + "." + key;
    }
    StringBuilder quoted = new StringBuilder(path).append("[\"");
    for (char c : key.toCharArray()) {
      if (c == '"' || c == '\\') {
        quoted.append('\\').append(c);
      } else if (c < 0x20 || c > 0x7e) {
        quoted.append(String.format("\\u%04x", (int) c));
      } else {
        quoted.append(c);
      }
    }
    return quoted.append("\"]").toString();
  }
}
