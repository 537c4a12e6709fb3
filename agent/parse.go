package agent

import (
	"encoding/json"
	"errors"
	"strings"

	"github.com/memvault/memvault/vault"
)

// command is one parsed tool input whose fields have passed the checks of steps
// (1) to (4) of the contract: it is an object, the command is known, the fields
// are present and typed, and every path is canonical.
type command struct {
	name       string
	path       string // canonical; old_path for rename
	newPath    string // rename
	fileText   string // create
	oldStr     string // str_replace
	newStr     string // str_replace; "" when missing
	insertText string // insert
	insertLine integer
	viewRange  []integer // nil when missing or null
}

// fieldType is what a field of a command must hold.
type fieldType int

const (
	typePath fieldType = iota
	typeString
	typeInteger
	typeIntegers
)

// field is one field of a command, in the order the contract checks them.
type field struct {
	name     string
	typ      fieldType
	required bool
}

// commands lists the fields of each command. Fields a command does not use are
// ignored.
var commands = map[string][]field{
	"view":        {{"path", typePath, true}, {"view_range", typeIntegers, false}},
	"create":      {{"path", typePath, true}, {"file_text", typeString, true}},
	"str_replace": {{"path", typePath, true}, {"old_str", typeString, true}, {"new_str", typeString, false}},
	"insert":      {{"path", typePath, true}, {"insert_line", typeInteger, true}, {"insert_text", typeString, true}},
	"delete":      {{"path", typePath, true}},
	"rename":      {{"old_path", typePath, true}, {"new_path", typePath, true}},
}

// parse checks a tool input in the contract's order and returns the command, or
// the failure that answers it.
//
// Decisions where the contract is silent:
//   - null counts as missing: a required field that is null is invalid, an
//     optional one that is null is absent (so a null new_str is "").
//   - an integer is any JSON number with an integral value: 3, -0, 3.0 and 3e0
//     are integers (JSON has one number type and JSON Schema counts 3.0 as an
//     integer); 1.5, "3", true are not.
//   - the last of duplicate keys wins, as in JavaScript and Python.
//   - a string field holding invalid UTF-8 (raw bytes, or an unpaired surrogate
//     escape such as \ud800): a path is refused as invalid UTF-8 and echoed with
//     U+FFFD in place of the bad sequences; any other string gets U+FFFD for each.
//   - a command that is not a string is echoed as its JSON text; a missing or
//     null one as the empty string.
func parse(input []byte) (command, *failure) {
	obj, f := parseObject(input)
	if f != nil {
		return command{}, f
	}
	name, f := commandName(obj["command"])
	if f != nil {
		return command{}, f
	}
	fields := commands[name]
	c := command{name: name}
	for _, fd := range fields {
		if f := c.set(fd, obj[fd.name]); f != nil {
			return command{}, f
		}
	}
	for _, fd := range fields {
		if fd.typ != typePath {
			continue
		}
		if f := c.cleanPath(fd.name); f != nil {
			return command{}, f
		}
	}
	return c, nil
}

// parseObject returns the members of the JSON object in input.
func parseObject(input []byte) (map[string]json.RawMessage, *failure) {
	if !json.Valid(input) {
		return nil, fail("Invalid tool input: not valid JSON")
	}
	trimmed := strings.TrimLeft(string(input), " \t\r\n")
	if trimmed[0] != '{' {
		return nil, fail("Invalid tool input: expected a JSON object, got %s", jsonType(trimmed[0]))
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(input, &obj); err != nil {
		// Unreachable: input is a valid JSON object.
		return nil, fail("Invalid tool input: not valid JSON")
	}
	return obj, nil
}

// jsonType names the type of the JSON value starting with c.
func jsonType(c byte) string {
	switch c {
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// commandName returns the known command named by raw.
func commandName(raw json.RawMessage) (string, *failure) {
	if isNull(raw) {
		return "", fail("Unknown command: ")
	}
	if raw[0] != '"' {
		return "", fail("Unknown command: %s", raw)
	}
	name, _ := unquote(raw, false)
	if _, ok := commands[name]; !ok {
		return "", fail("Unknown command: %s", name)
	}
	return name, nil
}

// set checks field fd, whose raw JSON value is raw (nil when missing), and stores it.
func (c *command) set(fd field, raw json.RawMessage) *failure {
	if isNull(raw) {
		if fd.required {
			return c.invalid(fd.name)
		}
		return nil
	}
	switch fd.typ {
	case typePath, typeString:
		if raw[0] != '"' {
			return c.invalid(fd.name)
		}
		s, _ := unquote(raw, fd.typ == typePath)
		*c.stringField(fd.name) = s
	case typeInteger:
		n, ok := parseInteger(raw)
		if !ok {
			return c.invalid(fd.name)
		}
		c.insertLine = n
	case typeIntegers:
		var elems []json.RawMessage
		if raw[0] != '[' || json.Unmarshal(raw, &elems) != nil {
			return c.invalid(fd.name)
		}
		c.viewRange = make([]integer, len(elems))
		for i, e := range elems {
			n, ok := parseInteger(e)
			if !ok {
				return c.invalid(fd.name)
			}
			c.viewRange[i] = n
		}
	}
	return nil
}

// stringField returns where the string field name is stored.
func (c *command) stringField(name string) *string {
	switch name {
	case "path", "old_path":
		return &c.path
	case "new_path":
		return &c.newPath
	case "file_text":
		return &c.fileText
	case "old_str":
		return &c.oldStr
	case "new_str":
		return &c.newStr
	case "insert_text":
		return &c.insertText
	}
	return new(string) // unreachable: commands names no other string field
}

func (c *command) invalid(name string) *failure {
	return fail("Missing or invalid parameter %s for command %s", name, c.name)
}

// cleanPath replaces the path field name by its canonical form, or returns the
// failure that refuses it. The answer echoes the path as given, with U+FFFD in
// place of invalid UTF-8 so the answer itself stays valid text.
func (c *command) cleanPath(name string) *failure {
	p := c.stringField(name)
	clean, err := vault.CleanPath(*p)
	var pe *vault.PathError
	if errors.As(err, &pe) {
		given := strings.ToValidUTF8(*p, "\uFFFD")
		switch pe.Kind {
		case vault.PathOutside:
			return fail("Path must start with /memories, got: %s", given)
		case vault.PathEscape:
			return fail("Path %s would escape /memories directory", given)
		default:
			return fail("Invalid path %s: %s", given, pe.Reason)
		}
	}
	if err != nil {
		return fail("Invalid path %s: %s", strings.ToValidUTF8(*p, "\uFFFD"), "invalid")
	}
	*p = clean
	return nil
}

func isNull(raw json.RawMessage) bool {
	return len(raw) == 0 || string(raw) == "null"
}
