package shellexec

import (
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// The service takes text as UTF-8 only, and a string that is not (invalid bytes, or a lone
// surrogate, which UTF-8 cannot carry) was changed on the way: encoding/json writes invalid
// bytes as U+FFFD, so an update was stored changed and no error said so, and a JSON text
// with a "\ud800" escape failed with protojson's "unexpected EOF". The client refuses them
// before sending, naming where the text is and what is wrong, as the Python, Java and
// TypeScript clients do, and as the REST front door answers 400.

// maxTextDepth bounds the walk over a Go value: past it encoding/json reports a cycle.
const maxTextDepth = 1000

var (
	jsonMarshaler = reflect.TypeFor[json.Marshaler]()
	textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()
)

// invalidUTF8 describes where `text` stops being UTF-8, or is "".
func invalidUTF8(text string) string {
	if utf8.ValidString(text) {
		return ""
	}
	for index := 0; index < len(text); {
		r, size := utf8.DecodeRuneInString(text[index:])
		if r == utf8.RuneError && size == 1 {
			if surrogate(text[index:]) {
				return fmt.Sprintf("holds an encoded surrogate (byte %d of %d), which UTF-8 "+
					"cannot carry: the service takes UTF-8 text only", index+1, len(text))
			}
			return fmt.Sprintf("holds invalid UTF-8 (byte %d of %d is 0x%02x): the service "+
				"takes UTF-8 text only", index+1, len(text), text[index])
		}
		index += size
	}
	return ""
}

// surrogate tells whether text starts with the three bytes of a UTF-16 surrogate encoded as
// if it were a character (CESU-8, or a string converted from a lone surrogate).
func surrogate(text string) bool {
	return len(text) >= 3 && text[0] == 0xed && text[1] >= 0xa0 && text[1] <= 0xbf &&
		text[2] >= 0x80 && text[2] <= 0xbf
}

// textError is the refusal of the text at `path`.
func textError(path, problem string) error {
	return fmt.Errorf("shellexec: %s %s", path, problem)
}

// keyPath is path followed by an object key, as a JSON path: .name, or ["odd key"].
func keyPath(path, key string) string {
	plain := key != ""
	for index, r := range key {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || index > 0 && r >= '0' && r <= '9') {
			plain = false
			break
		}
	}
	if plain {
		return path + "." + key
	}
	return path + "[" + strconv.QuoteToASCII(key) + "]"
}

// goText checks the strings and map keys of a Go value as encoding/json encodes it. A
// json.Marshaler (json.RawMessage among them) is left to jsonText, which reads its bytes.
func goText(value reflect.Value, path string, depth int) error {
	if !value.IsValid() || depth > maxTextDepth {
		return nil
	}
	kind := value.Kind()
	if (kind == reflect.Pointer || kind == reflect.Interface) && value.IsNil() {
		return nil
	}
	if value.Type().Implements(jsonMarshaler) ||
		value.CanAddr() && reflect.PointerTo(value.Type()).Implements(jsonMarshaler) {
		return nil
	}
	if value.Type().Implements(textMarshaler) && value.CanInterface() {
		text, err := value.Interface().(encoding.TextMarshaler).MarshalText()
		if err != nil {
			return nil // encoding/json reports it
		}
		if problem := invalidUTF8(string(text)); problem != "" {
			return textError(path, problem)
		}
		return nil
	}
	switch kind {
	case reflect.String:
		if problem := invalidUTF8(value.String()); problem != "" {
			return textError(path, problem)
		}
	case reflect.Pointer, reflect.Interface:
		return goText(value.Elem(), path, depth+1)
	case reflect.Map:
		iter := value.MapRange()
		for iter.Next() {
			key, name := iter.Key(), ""
			if key.Kind() == reflect.String {
				name = key.String()
				if problem := invalidUTF8(name); problem != "" {
					return textError("a key in "+path, problem)
				}
			} else {
				name = fmt.Sprint(key)
			}
			if err := goText(iter.Value(), keyPath(path, name), depth+1); err != nil {
				return err
			}
		}
	case reflect.Slice, reflect.Array:
		if kind == reflect.Slice && value.Type().Elem().Kind() == reflect.Uint8 {
			return nil // base64
		}
		for index := range value.Len() {
			if err := goText(value.Index(index), fmt.Sprintf("%s[%d]", path, index), depth+1); err != nil {
				return err
			}
		}
	case reflect.Struct:
		return structText(value, path, depth)
	}
	return nil
}

func structText(value reflect.Value, path string, depth int) error {
	for index := range value.NumField() {
		field := value.Type().Field(index)
		tag := field.Tag.Get("json")
		if tag == "-" || !field.IsExported() && !field.Anonymous {
			continue
		}
		name := field.Name
		if comma := strings.IndexByte(tag, ','); comma > 0 {
			name = tag[:comma]
		} else if comma < 0 && tag != "" {
			name = tag
		}
		inner := keyPath(path, name)
		if field.Anonymous && (tag == "" || tag[0] == ',') {
			inner = path // its fields are the outer object's
		}
		if err := goText(value.Field(index), inner, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// jsonText checks the strings and keys of a JSON text, as json.Marshal wrote it (valid JSON,
// compact), for bytes that are not UTF-8 and for lone surrogate escapes ("\ud800"): both come
// through a json.RawMessage (or any json.Marshaler) as they are.
func jsonText(text []byte, path string) error {
	scan := &jsonScan{text: text}
	return scan.value(path)
}

type jsonScan struct {
	text []byte
	at   int
}

func (s *jsonScan) value(path string) error {
	if s.at >= len(s.text) {
		return nil
	}
	switch s.text[s.at] {
	case '{':
		s.at++
		for s.at < len(s.text) && s.text[s.at] != '}' {
			key, problem := s.str()
			if problem != "" {
				return textError("a key in "+path, problem)
			}
			s.at++ // ':'
			if err := s.value(keyPath(path, key)); err != nil {
				return err
			}
			if s.at < len(s.text) && s.text[s.at] == ',' {
				s.at++
			}
		}
		s.at++
	case '[':
		s.at++
		for index := 0; s.at < len(s.text) && s.text[s.at] != ']'; index++ {
			if err := s.value(fmt.Sprintf("%s[%d]", path, index)); err != nil {
				return err
			}
			if s.at < len(s.text) && s.text[s.at] == ',' {
				s.at++
			}
		}
		s.at++
	case '"':
		if _, problem := s.str(); problem != "" {
			return textError(path, problem)
		}
	default:
		for s.at < len(s.text) && s.text[s.at] != ',' && s.text[s.at] != ']' && s.text[s.at] != '}' {
			s.at++
		}
	}
	return nil
}

// str reads the string at s.at (its opening quote): its text, and what is wrong with it or "".
func (s *jsonScan) str() (string, string) {
	s.at++
	var text []rune
	problem := ""
	for s.at < len(s.text) && s.text[s.at] != '"' {
		b := s.text[s.at]
		if b == '\\' && s.at+1 < len(s.text) {
			if s.text[s.at+1] != 'u' || s.at+6 > len(s.text) {
				text = append(text, unescaped(s.text[s.at+1]))
				s.at += 2
				continue
			}
			r := hex4(s.text[s.at+2 : s.at+6])
			s.at += 6
			if utf16.IsSurrogate(r) {
				next := rune(-1)
				if r < 0xdc00 && s.at+6 <= len(s.text) && s.text[s.at] == '\\' && s.text[s.at+1] == 'u' {
					next = hex4(s.text[s.at+2 : s.at+6])
				}
				if paired := utf16.DecodeRune(r, next); paired != utf8.RuneError {
					text = append(text, paired)
					s.at += 6
					continue
				}
				if problem == "" {
					problem = fmt.Sprintf("holds a lone surrogate (the escape \\u%04x), which UTF-8 "+
						"cannot carry: the service takes UTF-8 text only", r)
				}
			}
			text = append(text, r)
			continue
		}
		r, size := utf8.DecodeRune(s.text[s.at:])
		if r == utf8.RuneError && size == 1 && problem == "" {
			problem = fmt.Sprintf("holds invalid UTF-8 (a byte 0x%02x): the service takes UTF-8 "+
				"text only", b)
		}
		text = append(text, r)
		s.at += size
	}
	s.at++ // the closing quote
	return string(text), problem
}

func unescaped(b byte) rune {
	switch b {
	case 'n':
		return '\n'
	case 't':
		return '\t'
	case 'r':
		return '\r'
	case 'b':
		return '\b'
	case 'f':
		return '\f'
	}
	return rune(b)
}

func hex4(digits []byte) rune {
	value, err := strconv.ParseUint(string(digits), 16, 32)
	if err != nil {
		return utf8.RuneError
	}
	return rune(value)
}

// requestText checks the string fields of a request, named by their path in it (task_id,
// output.stdout), as gRPC would refuse them only with "string field contains invalid UTF-8"
// (Internal, no field named). An update, a google.protobuf.Value, was checked as it was made.
func requestText(request any) error {
	message, ok := request.(proto.Message)
	if !ok {
		return nil
	}
	return messageText(message.ProtoReflect(), "")
}

func messageText(message protoreflect.Message, path string) error {
	switch message.Descriptor().FullName() {
	case "google.protobuf.Value", "google.protobuf.Struct", "google.protobuf.ListValue":
		return nil
	}
	var found error
	message.Range(func(field protoreflect.FieldDescriptor, value protoreflect.Value) bool {
		name := string(field.Name())
		if path != "" {
			name = path + "." + name
		}
		switch {
		case field.IsList():
			list := value.List()
			for index := range list.Len() {
				if found = fieldText(field, list.Get(index), fmt.Sprintf("%s[%d]", name, index)); found != nil {
					return false
				}
			}
		case field.IsMap():
			value.Map().Range(func(key protoreflect.MapKey, item protoreflect.Value) bool {
				text := key.String()
				if problem := invalidUTF8(text); problem != "" {
					found = textError("a key in "+name, problem)
					return false
				}
				found = fieldText(field.MapValue(), item, keyPath(name, text))
				return found == nil
			})
		default:
			found = fieldText(field, value, name)
		}
		return found == nil
	})
	return found
}

func fieldText(field protoreflect.FieldDescriptor, value protoreflect.Value, path string) error {
	switch field.Kind() {
	case protoreflect.StringKind:
		if problem := invalidUTF8(value.String()); problem != "" {
			return textError(path, problem)
		}
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return messageText(value.Message(), path)
	}
	return nil
}
