// Package odata is the Table service's query language: the $filter subset
// of OData v3 it accepts (a lexer, a recursive-descent parser and a typed,
// sealed AST), the reference evaluator Eval that fixes its semantics, and
// the $select and $top parameters (docs/protocol.md 6.1-6.5). It knows nothing of
// SQL or HTTP: the store compiles what it can of an Expr to SQL and runs
// Eval on the rest, and errors carry a code of the root error table for the HTTP layer.
package odata

import (
	"strings"
	"unicode/utf8"

	"github.com/tableemu/tableemu"
	"github.com/tableemu/tableemu/odata/edm"
)

// Limits on a filter.
const (
	// MaxComparisons is the number of comparisons a filter may hold
	// (docs/protocol.md 6.1, 10). A bare boolean property counts as one.
	MaxComparisons = 15
	// MaxDepth bounds nesting: each enclosing "(" and each enclosing
	// "not" is one level. It keeps recursion (here, in String and in
	// Eval) shallow whatever the input, so a megabyte of "((((" fails at
	// the 33rd byte instead of exhausting the stack. The service documents
	// no such limit; real filters nest a few levels.
	MaxDepth = 32
)

// parser holds the state of one ParseFilter call. tok is the one-token
// lookahead.
type parser struct {
	src         string
	lex         lexer
	tok         token
	depth       int
	comparisons int
	// later is the first error found in a filter that is syntactically
	// fine so far: a null, a comparison without exactly one property, a
	// literal standing alone. The OData parser only finds these when it
	// binds the finished tree, so a syntax error anywhere in the filter
	// wins over them; they are reported once the whole input has parsed.
	later *Error
}

// ParseFilter parses a $filter value (already URL-decoded).
//
// An empty or all-whitespace filter returns (nil, nil), meaning "no
// filter": Eval(nil, …) is true and Conjuncts(nil) is empty. Errors are
// *Error values (see there for the codes).
func ParseFilter(s string) (Expr, error) {
	if strings.TrimLeft(s, " \t\r\n") == "" {
		return nil, nil
	}
	// The HTTP layer hands over percent-decoded bytes; a filter that is
	// not UTF-8 cannot name a property or hold a string the service could
	// have stored, so it is refused where the bad byte is.
	if !utf8.ValidString(s) {
		i := 0
		for i < len(s) {
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			i += n
		}
		return nil, syntaxError(s, i, "").hinted("the filter is not valid UTF-8 at position %d.", i)
	}
	p := &parser{src: s, lex: lexer{src: s}}
	if err := p.advance(); err != nil {
		return nil, err
	}
	e, err := p.parseOr()
	if err != nil {
		return nil, err
	}
	if p.tok.kind != tEOF {
		return nil, p.unexpected("'and', 'or' or the end of the filter")
	}
	if p.later != nil {
		return nil, p.later
	}
	return e, nil
}

// reject records err to be returned after parsing (see parser.later) and
// returns a stand-in node so parsing can go on.
func (p *parser) reject(err *Error) (Expr, *Error) {
	if p.later == nil {
		p.later = err
	}
	return &BoolProp{Name: "", Offset: err.Pos}, nil
}

// advance moves to the next token.
func (p *parser) advance() *Error {
	t, err := p.lex.next()
	if err != nil {
		return err
	}
	p.tok = t
	return nil
}

// unexpected is the service's generic syntax error for the current token,
// at the position just past it (see Error).
func (p *parser) unexpected(expected string) *Error {
	return syntaxError(p.src, p.tok.end, expected+", found "+p.tok.describe())
}

// enter counts one level of nesting at pos and refuses to go past MaxDepth.
func (p *parser) enter(pos int) *Error {
	p.depth++
	if p.depth > MaxDepth {
		return newError(tableemu.InvalidInput, pos,
			"The recursion limit has been exceeded at position %d in '%s'.", pos, echo(p.src)).
			hinted("at most %d nested parentheses or 'not' operators are allowed.", MaxDepth)
	}
	return nil
}

// count records one more comparison at pos and enforces MaxComparisons.
// The service's error for this limit was never captured (docs/protocol.md 12),
// so the code is the one for every other invalid filter.
func (p *parser) count(pos int) *Error {
	p.comparisons++
	if p.comparisons > MaxComparisons {
		return newError(tableemu.InvalidInput, pos, "%s", invalidInput).
			hinted("the filter has more than %d comparisons; comparison %d starts at position %d in '%s'.",
				MaxComparisons, p.comparisons, pos, echo(p.src))
	}
	return nil
}

// parseOr parses
//
//	or := and ( "or" and )*
//
// Chains are built left-associative, iteratively.
func (p *parser) parseOr() (Expr, *Error) {
	l, err := p.parseAnd()
	if err != nil {
		return nil, err
	}
	for p.tok.kind == tOr {
		pos := p.tok.pos
		if err := p.advance(); err != nil {
			return nil, err
		}
		r, err := p.parseAnd()
		if err != nil {
			return nil, err
		}
		l = &Logical{Op: Or, L: l, R: r, Offset: pos}
	}
	return l, nil
}

// parseAnd parses
//
//	and := unary ( "and" unary )*
//
// and binds tighter than or (docs/protocol.md 6.1).
func (p *parser) parseAnd() (Expr, *Error) {
	l, err := p.parseUnary()
	if err != nil {
		return nil, err
	}
	for p.tok.kind == tAnd {
		pos := p.tok.pos
		if err := p.advance(); err != nil {
			return nil, err
		}
		r, err := p.parseUnary()
		if err != nil {
			return nil, err
		}
		l = &Logical{Op: And, L: l, R: r, Offset: pos}
	}
	return l, nil
}

// parseUnary parses
//
//	unary := "not" unary | primary
//
// As in docs/protocol.md 6.1, not covers a whole comparison: not Age eq 5 is
// not (Age eq 5). (In the general OData grammar not binds tighter, which
// would make that (not Age) eq 5, a type error; clients always write the
// parentheses.)
func (p *parser) parseUnary() (Expr, *Error) {
	if p.tok.kind != tNot {
		return p.parsePrimary()
	}
	pos := p.tok.pos
	if err := p.enter(pos); err != nil {
		return nil, err
	}
	if err := p.advance(); err != nil {
		return nil, err
	}
	x, err := p.parseUnary()
	if err != nil {
		return nil, err
	}
	p.depth--
	return &Not{X: x, Offset: pos}, nil
}

// parsePrimary parses
//
//	primary      := "(" or ")" | comparison | boolProperty | boolLiteral
//	comparison   := operand op operand      op: eq ne gt ge lt le
//	boolProperty := propertyName
//	boolLiteral  := "true" | "false"
func (p *parser) parsePrimary() (Expr, *Error) {
	if p.tok.kind == tLParen {
		pos := p.tok.pos
		if err := p.enter(pos); err != nil {
			return nil, err
		}
		if err := p.advance(); err != nil {
			return nil, err
		}
		e, err := p.parseOr()
		if err != nil {
			return nil, err
		}
		if p.tok.kind != tRParen {
			return nil, closeParenError(p.src, p.tok.pos)
		}
		if err := p.advance(); err != nil {
			return nil, err
		}
		p.depth--
		return e, nil
	}
	left, err := p.parseOperand()
	if err != nil {
		return nil, err
	}
	if p.tok.kind != tCmp {
		return p.standalone(left)
	}
	op := p.tok.op
	if err := p.advance(); err != nil {
		return nil, err
	}
	right, err := p.parseOperand()
	if err != nil {
		return nil, err
	}
	return p.comparison(left, op, right)
}

// parseOperand parses
//
//	operand := propertyName | literal
func (p *parser) parseOperand() (token, *Error) {
	t := p.tok
	switch t.kind {
	case tIdent, tLiteral, tNull:
		if err := p.advance(); err != nil {
			return token{}, err
		}
		return t, nil
	}
	return token{}, expressionExpectedError(p.src, t.pos)
}

// standalone turns an operand with no operator after it into a condition.
func (p *parser) standalone(t token) (Expr, *Error) {
	switch t.kind {
	case tIdent:
		if err := p.count(t.pos); err != nil {
			return nil, err
		}
		return &BoolProp{Name: t.text, Offset: t.pos}, nil
	case tNull:
		return p.reject(nullError(p.src, t.pos))
	}
	if t.val.T == edm.Boolean {
		// true and false are conditions of their own (docs/protocol.md 0.1).
		// They count as comparisons: the limit is what bounds the length
		// of an and/or chain, and so the recursion of Eval and String.
		if err := p.count(t.pos); err != nil {
			return nil, err
		}
		return &BoolLit{Value: t.val.N != 0, Offset: t.pos}, nil
	}
	return p.reject(newError(tableemu.InvalidInput, t.pos,
		"Expression of type 'Edm.Boolean' expected at position %d in '%s'.", t.pos, echo(p.src)).
		hinted("a literal needs a comparison with a property."))
}

// comparison checks the operand kinds and normalises the property to the
// left (docs/protocol.md 0.1: "a literal may stand on either side").
func (p *parser) comparison(l token, op CompareOp, r token) (Expr, *Error) {
	switch {
	case l.kind == tNull:
		return p.reject(nullError(p.src, l.pos))
	case r.kind == tNull:
		return p.reject(nullError(p.src, r.pos))
	case l.kind == tIdent && r.kind == tIdent:
		return p.reject(newError(tableemu.NotImplemented, l.pos, "%s", notImplemented).
			hinted("comparing two properties ('%s %s %s' at position %d) is not supported: one side must be a literal.",
				l.text, op, r.text, l.pos))
	case l.kind == tLiteral && r.kind == tLiteral:
		return p.reject(constantError(p.src, l.pos))
	}
	if err := p.count(l.pos); err != nil {
		return nil, err
	}
	if l.kind == tLiteral {
		return &Compare{Op: op.Flip(), Prop: r.text, Lit: l.val, Offset: l.pos}, nil
	}
	return &Compare{Op: op, Prop: l.text, Lit: r.val, Offset: l.pos}, nil
}

// The service does not evaluate conditions without a property: 501
// (docs/protocol.md 6.1).
func constantError(src string, pos int) *Error {
	return newError(tableemu.NotImplemented, pos, "%s", notImplemented).
		hinted("a condition without a property (position %d in '%s') is not supported: compare a property with a literal.",
			pos, echo(src))
}

// null literals are not allowed (docs/protocol.md 6.1, DOC Query Entities); a
// missing property already makes every comparison false.
func nullError(src string, pos int) *Error {
	return newError(tableemu.InvalidInput, pos, "%s", invalidInput).
		hinted("the 'null' literal at position %d in '%s' is not supported.", pos, echo(src))
}
