package dagger

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// field is one selected field (or, with fragment set, an inline fragment).
type field struct {
	name, alias string
	fragment    string
	args        map[string]any // string, int64, float64, bool, nil, enum, []any, map[string]any
	sel         []*field
}

// enum is a bare GraphQL enum value such as ANY.
type enum string

// parser reads the subset of GraphQL querybuilder writes: selections,
// aliases, arguments and inline fragments. Commas and white space separate
// tokens, as in GraphQL.
type parser struct {
	s string
	i int
}

func (p *parser) errorf(format string, a ...any) error {
	return fmt.Errorf("fake engine: at %d of %q: %s", p.i, p.s, fmt.Sprintf(format, a...))
}

func (p *parser) skip() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == ',' || p.s[p.i] == '\n' || p.s[p.i] == '\t') {
		p.i++
	}
}

func (p *parser) peek() byte {
	p.skip()
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

func (p *parser) expect(c byte) error {
	if p.peek() != c {
		return p.errorf("want %q", c)
	}
	p.i++
	return nil
}

func (p *parser) name() (string, error) {
	p.skip()
	start := p.i
	for p.i < len(p.s) && (p.s[p.i] == '_' || unicode.IsLetter(rune(p.s[p.i])) || unicode.IsDigit(rune(p.s[p.i]))) {
		p.i++
	}
	if p.i == start {
		return "", p.errorf("want a name")
	}
	return p.s[start:p.i], nil
}

// selection parses `{ field … }`.
func (p *parser) selection() ([]*field, error) {
	if err := p.expect('{'); err != nil {
		return nil, err
	}
	var out []*field
	for p.peek() != '}' {
		fl, err := p.field()
		if err != nil {
			return nil, err
		}
		out = append(out, fl)
	}
	p.i++
	return out, nil
}

func (p *parser) field() (*field, error) {
	fl := &field{}
	if strings.HasPrefix(p.s[p.i:], "...") {
		p.i += 3
		if on, err := p.name(); err != nil || on != "on" {
			return nil, p.errorf("want an inline fragment")
		}
		typ, err := p.name()
		if err != nil {
			return nil, err
		}
		fl.fragment = typ
		fl.sel, err = p.selection()
		return fl, err
	}
	n, err := p.name()
	if err != nil {
		return nil, err
	}
	fl.name = n
	if p.peek() == ':' {
		p.i++
		if fl.name, err = p.name(); err != nil {
			return nil, err
		}
		fl.alias = n
	}
	if p.peek() == '(' {
		p.i++
		fl.args = map[string]any{}
		for p.peek() != ')' {
			k, err := p.name()
			if err != nil {
				return nil, err
			}
			if err := p.expect(':'); err != nil {
				return nil, err
			}
			if fl.args[k], err = p.value(); err != nil {
				return nil, err
			}
		}
		p.i++
	}
	if p.peek() == '{' {
		fl.sel, err = p.selection()
	}
	return fl, err
}

func (p *parser) value() (any, error) {
	switch c := p.peek(); {
	case c == '"':
		end := p.i + 1
		for end < len(p.s) && p.s[end] != '"' {
			if p.s[end] == '\\' {
				end++
			}
			end++
		}
		if end >= len(p.s) {
			return nil, p.errorf("unterminated string")
		}
		var s string
		// querybuilder escapes strings the way JSON does.
		if err := json.Unmarshal([]byte(p.s[p.i:end+1]), &s); err != nil {
			return nil, p.errorf("bad string: %v", err)
		}
		p.i = end + 1
		return s, nil
	case c == '[':
		p.i++
		list := []any{}
		for p.peek() != ']' {
			v, err := p.value()
			if err != nil {
				return nil, err
			}
			list = append(list, v)
		}
		p.i++
		return list, nil
	case c == '{':
		p.i++
		obj := map[string]any{}
		for p.peek() != '}' {
			k, err := p.name()
			if err != nil {
				return nil, err
			}
			if err := p.expect(':'); err != nil {
				return nil, err
			}
			if obj[k], err = p.value(); err != nil {
				return nil, err
			}
		}
		p.i++
		return obj, nil
	case c == '-' || c >= '0' && c <= '9':
		start := p.i
		p.i++
		for p.i < len(p.s) && strings.IndexByte("0123456789.eE+-", p.s[p.i]) >= 0 {
			p.i++
		}
		if n, err := strconv.ParseInt(p.s[start:p.i], 10, 64); err == nil {
			return n, nil
		}
		return strconv.ParseFloat(p.s[start:p.i], 64)
	}
	n, err := p.name()
	if err != nil {
		return nil, err
	}
	switch n {
	case "true":
		return true, nil
	case "false":
		return false, nil
	case "null":
		return nil, nil
	}
	return enum(n), nil
}
