package shellexec

import (
	"bytes"
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
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
//
// An update is checked after json.Marshal has written it, so a value encoding/json cannot
// encode (a cycle among them) fails at once with its error, and encoding/json's own rules
// say what is sent: which fields, under which names, which values MarshalJSON or MarshalText
// writes. Then:
//
//   - Its JSON text is read once, in place (jsonScan): bytes that are not UTF-8 and lone
//     surrogate escapes there came from a json.Marshaler (json.RawMessage among them).
//   - Invalid bytes in a Go string, a map key or a MarshalText's text are no longer in that
//     text: encoding/json wrote each as the escape \ufffd (or, built with GOEXPERIMENT=jsonv2,
//     as U+FFFD itself). The text cannot tell them from a U+FFFD that a MarshalJSON wrote or
//     that a Go string held as UTF-8, which are fine; so when, and only when, the text holds
//     U+FFFD (escaped or not), the Go value is walked (goWalk) the way encoding/json walked
//     it, to find such text and name where it is. Most updates hold none, and the walk is
//     never run on a value json.Marshal refused.

var (
	jsonMarshaler = reflect.TypeFor[json.Marshaler]()
	textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()
)

// updateText checks the text of `update`, which json.Marshal wrote as `text`.
func updateText(update any, text []byte, path string) error {
	scan := jsonScan{text: text, path: textPath{root: path}}
	if err := scan.value(); err != nil {
		return err
	}
	if !bytes.Contains(text, []byte(`\ufffd`)) && !bytes.Contains(text, []byte("\uFFFD")) {
		return nil
	}
	walk := goWalk{path: textPath{root: path}}
	return walk.value(reflect.ValueOf(update))
}

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

// textPath is where a walk or a scan is, written out only to name the text it refuses.
type textPath struct {
	root  string
	steps []pathStep
}

// pathStep is an index in an array, or a key in an object: as Go has it, or as JSON text
// writes it (quoted), read only to name it.
type pathStep struct {
	index int
	key   string
	raw   []byte
	isKey bool
}

func (p *textPath) enter(step pathStep) { p.steps = append(p.steps, step) }
func (p *textPath) leave()              { p.steps = p.steps[:len(p.steps)-1] }

func (p *textPath) String() string {
	path := p.root
	for _, step := range p.steps {
		switch {
		case step.raw != nil:
			var key string
			_ = json.Unmarshal(step.raw, &key) // a key the scan has read and found valid
			path = keyPath(path, key)
		case step.isKey:
			path = keyPath(path, step.key)
		default:
			path += "[" + strconv.Itoa(step.index) + "]"
		}
	}
	return path
}

func (p *textPath) refuse(problem string) error { return textError(p.String(), problem) }

func (p *textPath) refuseKey(problem string) error {
	return textError("a key in "+p.String(), problem)
}

// goWalk finds invalid UTF-8 in the strings, map keys and MarshalText texts of a Go value
// json.Marshal has written, visiting what json.Marshal writes as Go text and no more: what it
// leaves out (an unexported field, a field another of its name hides, what MarshalJSON
// writes) is not sent as a Go string, and a value it has written holds no cycle, so the walk
// ends.
type goWalk struct {
	path textPath
}

func (w *goWalk) value(v reflect.Value) error {
	if !v.IsValid() {
		return nil
	}
	t := v.Type()
	// A method on the pointer is used when the value is addressable (a pointer's element, a
	// slice's, and their fields and elements), as json.Marshal uses it.
	addressable := t.Kind() != reflect.Pointer && v.CanAddr()
	switch {
	case addressable && reflect.PointerTo(t).Implements(jsonMarshaler), t.Implements(jsonMarshaler):
		return nil // its JSON text is read as json.Marshal wrote it (jsonScan)
	case addressable && reflect.PointerTo(t).Implements(textMarshaler):
		return w.marshaledText(v.Addr())
	case t.Implements(textMarshaler):
		return w.marshaledText(v)
	}
	switch t.Kind() {
	case reflect.String:
		if problem := invalidUTF8(v.String()); problem != "" {
			return w.path.refuse(problem)
		}
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil
		}
		return w.value(v.Elem())
	case reflect.Map:
		return w.mapText(v)
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			element := reflect.PointerTo(t.Elem())
			if !element.Implements(jsonMarshaler) && !element.Implements(textMarshaler) {
				return nil // base64
			}
		}
		return w.elements(v)
	case reflect.Array:
		return w.elements(v)
	case reflect.Struct:
		return w.structText(v)
	}
	return nil
}

func (w *goWalk) marshaledText(v reflect.Value) error {
	if v.Kind() == reflect.Pointer && v.IsNil() {
		return nil
	}
	marshaler, ok := reflect.TypeAssert[encoding.TextMarshaler](v)
	if !ok {
		return nil
	}
	text, err := marshaler.MarshalText()
	if err != nil {
		return nil // json.Marshal reports it
	}
	if problem := invalidUTF8(string(text)); problem != "" {
		return w.path.refuse(problem)
	}
	return nil
}

func (w *goWalk) elements(v reflect.Value) error {
	w.path.enter(pathStep{})
	step := len(w.path.steps) - 1
	for index := range v.Len() {
		w.path.steps[step].index = index
		if err := w.value(v.Index(index)); err != nil {
			return err
		}
	}
	w.path.leave()
	return nil
}

// mapText walks a map in the order encoding/json writes it, its keys as it writes them.
func (w *goWalk) mapText(v reflect.Value) error {
	type entry struct {
		key   string
		value reflect.Value
	}
	entries := make([]entry, 0, v.Len())
	for iter := v.MapRange(); iter.Next(); {
		entries = append(entries, entry{keyName(iter.Key()), iter.Value()})
	}
	slices.SortFunc(entries, func(a, b entry) int { return strings.Compare(a.key, b.key) })
	for _, entry := range entries {
		if problem := invalidUTF8(entry.key); problem != "" {
			return w.path.refuseKey(problem)
		}
		w.path.enter(pathStep{key: entry.key, isKey: true})
		if err := w.value(entry.value); err != nil {
			return err
		}
		w.path.leave()
	}
	return nil
}

// keyName is a map key as encoding/json writes it: a string, a MarshalText text, or a number.
func keyName(key reflect.Value) string {
	if key.Kind() == reflect.String {
		return key.String()
	}
	if marshaler, ok := reflect.TypeAssert[encoding.TextMarshaler](key); ok {
		if key.Kind() == reflect.Pointer && key.IsNil() {
			return ""
		}
		text, _ := marshaler.MarshalText() // an error: json.Marshal reports it
		return string(text)
	}
	switch key.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(key.Int(), 10)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return strconv.FormatUint(key.Uint(), 10)
	}
	return ""
}

func (w *goWalk) structText(v reflect.Value) error {
fields:
	for _, field := range jsonFields(v.Type()) {
		value := v
		for _, index := range field.index {
			if value.Kind() == reflect.Pointer {
				if value.IsNil() {
					continue fields
				}
				value = value.Elem()
			}
			value = value.Field(index)
		}
		// omitempty and omitzero leave out values that hold no text, but omitzero with an
		// IsZero method may leave out any, and what is left out is not sent.
		if field.omitZero && leftOutAsZero(value) {
			continue
		}
		w.path.enter(pathStep{key: field.name, isKey: true})
		if err := w.value(value); err != nil {
			return err
		}
		w.path.leave()
	}
	return nil
}

// jsonField is a field of a struct that json.Marshal may write: the name it is written
// under, the field indexes that reach it, and whether it is left out when zero (omitzero).
type jsonField struct {
	name     string
	index    []int
	omitZero bool
}

var jsonFieldCache sync.Map // reflect.Type: []jsonField

func jsonFields(t reflect.Type) []jsonField {
	if fields, ok := jsonFieldCache.Load(t); ok {
		return fields.([]jsonField)
	}
	fields, _ := jsonFieldCache.LoadOrStore(t, visible(sentFields(t, nil, map[reflect.Type]bool{})))
	return fields.([]jsonField)
}

// visible keeps, of the fields that share a name, the one nearest the top, as Go's own
// selectors do: a field hides those of its name in the structs it embeds, and two as near as
// each other hide each other (json.Marshal writes neither). It does not weigh tags, which
// json.Marshal does among fields equally near: there both are left out here, and a text in
// one of them is not checked (it is sent changed, as before this check).
func visible(fields []jsonField) []jsonField {
	nearest := map[string]int{}
	count := map[string]int{}
	for _, field := range fields {
		depth, seen := nearest[field.name]
		switch {
		case !seen || len(field.index) < depth:
			nearest[field.name], count[field.name] = len(field.index), 1
		case len(field.index) == depth:
			count[field.name]++
		}
	}
	kept := fields[:0]
	for _, field := range fields {
		if len(field.index) == nearest[field.name] && count[field.name] == 1 {
			kept = append(kept, field)
		}
	}
	return kept
}

// sentFields lists the fields of the struct type t that may hold text json.Marshal writes:
// each exported field not tagged "-", under its tag's name (else its own), and the fields of
// each embedded struct (exported or not; through a pointer too), promoted, unless a tag names
// the embedded struct itself. `within` holds the embedded types on the way, so that a type
// embedding itself ends. Fields that share a name are all listed (`visible` chooses).
func sentFields(t reflect.Type, prefix []int, within map[reflect.Type]bool) []jsonField {
	within[t] = true
	defer delete(within, t)
	var fields []jsonField
	for i := range t.NumField() {
		field := t.Field(i)
		tag := field.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, options, _ := strings.Cut(tag, ",")
		index := append(slices.Clone(prefix), i)
		embedded := field.Type
		if embedded.Kind() == reflect.Pointer {
			embedded = embedded.Elem()
		}
		if field.Anonymous && name == "" && embedded.Kind() == reflect.Struct {
			if !within[embedded] {
				fields = append(fields, sentFields(embedded, index, within)...)
			}
			continue
		}
		if !field.IsExported() {
			continue
		}
		if name == "" {
			name = field.Name
		}
		omitZero := slices.Contains(strings.Split(options, ","), "omitzero")
		fields = append(fields, jsonField{name: name, index: index, omitZero: omitZero})
	}
	return fields
}

// leftOutAsZero is whether an omitzero field's value is left out: its IsZero method says so
// (on the value, or on its address where it has one), or, without one, it is the zero value.
func leftOutAsZero(v reflect.Value) bool {
	if (v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface) && v.IsNil() {
		return true
	}
	if zeroer, ok := reflect.TypeAssert[interface{ IsZero() bool }](v); ok {
		return zeroer.IsZero()
	}
	if v.CanAddr() {
		if zeroer, ok := reflect.TypeAssert[interface{ IsZero() bool }](v.Addr()); ok {
			return zeroer.IsZero()
		}
	}
	return v.IsZero()
}

// jsonScan reads a JSON text as json.Marshal wrote it (valid JSON, compact) for bytes that
// are not UTF-8 and lone surrogate escapes ("\ud800") in its strings and keys: both come
// through a json.RawMessage (or any json.Marshaler) as they are. It reads the text in place
// and builds no string; a key is read out only to name where a refused text is.
type jsonScan struct {
	text []byte
	at   int
	path textPath
}

func (s *jsonScan) value() error {
	if s.at >= len(s.text) {
		return nil
	}
	switch s.text[s.at] {
	case '{':
		s.at++
		for s.at < len(s.text) && s.text[s.at] != '}' {
			start := s.at
			if problem := s.str(); problem != "" {
				return s.path.refuseKey(problem)
			}
			s.path.enter(pathStep{raw: s.text[start:s.at]})
			s.at++ // ':'
			if err := s.value(); err != nil {
				return err
			}
			s.path.leave()
			if s.at < len(s.text) && s.text[s.at] == ',' {
				s.at++
			}
		}
		s.at++
	case '[':
		s.at++
		s.path.enter(pathStep{})
		step := len(s.path.steps) - 1
		for s.at < len(s.text) && s.text[s.at] != ']' {
			if err := s.value(); err != nil {
				return err
			}
			s.path.steps[step].index++
			if s.at < len(s.text) && s.text[s.at] == ',' {
				s.at++
			}
		}
		s.path.leave()
		s.at++
	case '"':
		if problem := s.str(); problem != "" {
			return s.path.refuse(problem)
		}
	default:
		for s.at < len(s.text) && s.text[s.at] != ',' && s.text[s.at] != ']' && s.text[s.at] != '}' {
			s.at++
		}
	}
	return nil
}

// str passes the string at s.at (its opening quote), and tells what is wrong with it, or "".
func (s *jsonScan) str() string {
	text := s.text
	for s.at++; s.at < len(text); {
		b := text[s.at]
		switch {
		case b == '"':
			s.at++
			return ""
		case b == '\\':
			if problem := s.escape(); problem != "" {
				return problem
			}
		case b < utf8.RuneSelf:
			s.at++
		default:
			r, size := utf8.DecodeRune(text[s.at:])
			if r == utf8.RuneError && size == 1 {
				return fmt.Sprintf("holds invalid UTF-8 (a byte 0x%02x): the service takes UTF-8 "+
					"text only", b)
			}
			s.at += size
		}
	}
	return ""
}

// escape passes the escape at s.at, and tells whether it is a lone surrogate.
func (s *jsonScan) escape() string {
	text := s.text
	if s.at+6 > len(text) || text[s.at+1] != 'u' {
		s.at += 2
		return ""
	}
	r := hex4(text[s.at+2 : s.at+6])
	s.at += 6
	if !utf16.IsSurrogate(r) {
		return ""
	}
	if r < 0xdc00 && s.at+6 <= len(text) && text[s.at] == '\\' && text[s.at+1] == 'u' &&
		utf16.DecodeRune(r, hex4(text[s.at+2:s.at+6])) != utf8.RuneError {
		s.at += 6
		return ""
	}
	return fmt.Sprintf("holds a lone surrogate (the escape \\u%04x), which UTF-8 cannot carry: "+
		"the service takes UTF-8 text only", r)
}

func hex4(digits []byte) rune {
	var r rune
	for _, c := range digits {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return utf8.RuneError
		}
	}
	return r
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
