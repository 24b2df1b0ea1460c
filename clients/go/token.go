package shellexec

import (
	"fmt"
	"unicode/utf8"
)

// MaxBearerTokenChars is the longest bearer token the service takes (docs/api.md, "Limits").
const MaxBearerTokenChars = 256

var namedCharacters = map[rune]string{
	'\r': "a carriage return", '\n': "a line feed", '\t': "a tab", ' ': "a space", 0: "a NUL byte",
}

// tokenProblem says what is wrong with a bearer token (never the token itself), or "": a
// token is at most MaxBearerTokenChars visible ASCII characters (0x21-0x7E). The words are the
// service's own (the bridge's token_problem), characters counted as code points.
func tokenProblem(token string) string {
	length := utf8.RuneCountInString(token)
	index := 0
	for _, character := range token { // an invalid UTF-8 byte comes as utf8.RuneError
		if character >= 0x21 && character <= 0x7e {
			index++
			continue
		}
		name, named := namedCharacters[character]
		if !named {
			name = "a character outside ASCII"
			if character < utf8.RuneSelf {
				name = "a control character"
			}
		}
		if index == length-1 {
			return "ends with " + name
		}
		return fmt.Sprintf("holds %s (character %d of %d)", name, index+1, length)
	}
	if length > MaxBearerTokenChars {
		return fmt.Sprintf("is %d characters long; the service takes at most %d", length, MaxBearerTokenChars)
	}
	return ""
}
