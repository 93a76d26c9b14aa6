"""Source text -> syntax tree (bobc.language.syntax), with readable errors.

The grammar is LALR(1) (grammar.lark); lark's failures are translated into a
ParseError that names the file, line and column, shows the line with a
caret, and says in words what could have come there.
"""
from __future__ import annotations

import bisect
import re
from functools import lru_cache
from pathlib import Path

import lark
from lark import Transformer, v_args

from ..errors import BobcError, Span
from ..resources import doc
from . import limits
from . import syntax as s


def _shown(word) -> str:
    """A word of the text (a token, a name) as a message quotes it: a long one cut to its beginning
    and its length (suggest.shown_name), so that one error stays a few lines whatever the text
    holds (docs/limits.md; probe s43 fuzz finding F1: a 100,000-character name printed whole)."""
    from .suggest import shown_name

    return shown_name(str(word))


class ParseError(BobcError):
    """The text is not a module of the plan language."""


_GRAMMAR = Path(__file__).with_name("grammar.lark")

# How lark's terminal names read to a person.
_TERMINAL_WORDS = {
    "NAME": "a name",
    "NAT": "a natural number",
    "BYTES": 'a byte string (b"...")',
    "$END": "the end of the file",
}


_PARSER_OPTIONS = {"parser": "lalr", "propagate_positions": True, "maybe_placeholders": True}


@lru_cache(maxsize=1)
def _parser() -> lark.Lark:
    """lark's LALR parser for the grammar: its tables from bobc's user cache (a sealed entry,
    checked before it is unpickled; docs/cache.md's `lark/`), else built and stored."""
    import io
    import sys

    from .. import cache

    grammar = _GRAMMAR.read_text(encoding="utf-8")
    key = cache.digest(grammar, lark.__version__, sys.version, repr(sorted(_PARSER_OPTIONS.items())))
    data = cache.read("lark", key)
    if data is not None:
        try:
            return lark.Lark.load(io.BytesIO(data))
        except Exception:
            pass                            # not a parser this lark can load: a miss
    parser = lark.Lark(grammar, **_PARSER_OPTIONS)
    if cache.folder() is not None:
        saved = io.BytesIO()
        parser.save(saved)
        cache.write("lark", key, saved.getvalue())
    return parser


def _describe_terminal(name: str) -> str:
    if name in _TERMINAL_WORDS:
        return _TERMINAL_WORDS[name]
    for terminal in _parser().terminals:
        if terminal.name == name:
            pattern = terminal.pattern
            if isinstance(pattern, lark.lexer.PatternStr):
                return f"'{pattern.value}'"
            return name.lower()
    return name.lower()


def _expected_words(names) -> str:
    words = sorted({_describe_terminal(n) for n in names})
    # keywords first in quotes, then the descriptive classes, for a stable read
    words.sort(key=lambda w: (not w.startswith("'"), w))
    if not words:
        return "nothing"
    if len(words) == 1:
        return words[0]
    return "one of " + ", ".join(words[:-1]) + " or " + words[-1]


def _token_span(path: str, token) -> Span:
    return Span(path, token.line, token.column, token.end_line, token.end_column)


def _meta_span(path: str, meta) -> Span:
    if getattr(meta, "empty", False) or not hasattr(meta, "line"):
        return Span(path, 1, 1)
    return Span(path, meta.line, meta.column, meta.end_line, meta.end_column)


_ESCAPES = {"n": 0x0A, "t": 0x09, "\\": 0x5C, '"': 0x22, "0": 0x00, "r": 0x0D}


def _shown_escape(escape: str) -> str:
    """An unknown escape as a message names it: `'\\q'` for a visible character; a control, a
    format character, a space or a separator by its code point (a tab, an ESC or a bidirectional
    override after the backslash is never sent to the terminal as itself: probe s38 texts2
    finding 5)."""
    if escape.isprintable() and not escape.isspace():
        return f"'\\{escape}'"
    import unicodedata

    name = "tab" if escape == "\t" else unicodedata.name(escape, "")
    return f"'\\' before U+{ord(escape):04X}" + (f" ({name.lower()})" if name else " (a control character)")


def decode_byte_string(text: str, span: Span) -> bytes:
    """The bytes of a literal b"..." (escapes \\xNN \\n \\t \\r \\\\ \\" \\0).  The text between
    escapes is encoded a run at a time, so a long literal costs a few operations per escape,
    not per character."""
    body = text[2:-1]
    if "\\" not in body:
        return body.encode("utf-8")
    out = bytearray()
    start = 0
    while True:
        i = body.find("\\", start)
        if i < 0:
            out += body[start:].encode("utf-8")
            return bytes(out)
        out += body[start:i].encode("utf-8")
        escape = body[i + 1:i + 2]
        column = span.column + 2 + i
        if escape == "x":
            digits = body[i + 2:i + 4]
            if len(digits) != 2 or any(c not in "0123456789abcdefABCDEF" for c in digits):
                raise ParseError("a \\x escape needs two hexadecimal digits",
                                 Span(span.path, span.line, column),
                                 hint='write a byte as \\xNN, e.g. b"\\x00\\x3b"')
            out.append(int(digits, 16))
            start = i + 4
        elif escape in _ESCAPES:
            out.append(_ESCAPES[escape])
            start = i + 2
        else:
            raise ParseError(f"unknown escape {_shown_escape(escape)} in a byte string",
                             Span(span.path, span.line, column),
                             hint="the escapes are \\xNN \\n \\t \\r \\\\ \\\" \\0")


def _natural(token, path: str = "<text>") -> int:
    text = str(token)
    hexadecimal = text.startswith("0x")
    digits = len(text) - 2 if hexadecimal else len(text)     # a hex literal's 0x is no digit
    if digits > limits.NATURAL_LITERAL_DIGITS:
        raise ParseError(f"a {'hexadecimal ' if hexadecimal else ''}natural number literal of "
                         f"{digits:,} digits: more than the limit "
                         f"of {limits.NATURAL_LITERAL_DIGITS:,} ({doc('limits.md')})",
                         _token_span(path, token),
                         hint="naturals may be large, but a literal this long is not a plan")
    value = int(text, 16) if hexadecimal else int(text, 10)
    if value.bit_length() > limits.NATURAL_BITS:
        # a hex literal's digits are 4 bits each: 65,537 of them already pass the limit
        raise ParseError(f"a natural number literal of {value.bit_length():,} bits: more than "
                         f"the limit of {limits.NATURAL_BITS:,} bits ({doc('limits.md')})",
                         _token_span(path, token),
                         hint="every natural the evaluator computes has at most that many "
                              "bits; a literal past it is not a plan")
    return value


_NAT_TEXT = re.compile(r"0x[0-9a-fA-F]+|[0-9]+")
_WORD_CHARACTER = re.compile(r"[A-Za-z0-9_']")


def _position(text: str, offset: int) -> tuple[int, int]:
    """1-based line and column of a character offset."""
    return text.count("\n", 0, offset) + 1, offset - (text.rfind("\n", 0, offset) + 1) + 1


def _number_word(text: str, start: int) -> str:
    """The text from `start` that reads as one word: name characters, and a '.' between
    digits (1.5); a '.' followed by a space is the lambda's dot."""
    end = start
    while end < len(text):
        char = text[end]
        if _WORD_CHARACTER.match(char) or (char == "." and end + 1 < len(text)
                                           and text[end + 1].isdigit()):
            end += 1
        else:
            break
    return text[start:end]


def _malformed_number(text: str, start: int, path: str) -> ParseError | None:
    """A ParseError when the word at `start` begins like a natural but is not one (12abc,
    0xZZ, 1_000, 1.5), else None."""
    word = _number_word(text, start)
    if not word[:1].isdigit() or _NAT_TEXT.fullmatch(word):
        return None
    if re.fullmatch(r"[0-9]+\.[0-9]+", word):
        hint = ("the language has natural numbers only, no fractions; a binary32 constant is "
                "written as its bit pattern (e.g. 0x3f800000 for 1.0)")
    elif "_" in word:
        hint = "write the digits without separators (1000, not 1_000)"
    elif word.lower().startswith("0x"):
        hint = "a hexadecimal natural is 0x and the digits 0-9, a-f, A-F (0x3b800000)"
    else:
        hint = ("a natural is decimal digits (42) or 0x and hexadecimal digits (0x2a); a name "
                "may not begin with a digit; separate two items with a space")
    line, column = _position(text, start)
    return ParseError(f"'{_shown(word)}' is not a natural number literal",
                      Span(path, line, column, line, column + len(word)), hint=hint)


def _refuse_malformed_number(text: str, start: int, path: str) -> None:
    error = _malformed_number(text, start, path)
    if error is not None:
        raise error


def _word_start(text: str, offset: int) -> int:
    """Where the word that runs into `offset` (no space between) begins."""
    start = offset
    while start > 0 and (_WORD_CHARACTER.match(text[start - 1]) or (
            text[start - 1] == "." and start >= 2 and text[start - 2].isdigit())):
        start -= 1
    return start


def _code_offsets(text: str, start: int, stop: int):
    """The offsets in [start, stop) of the characters outside comments and byte strings, in order
    (a string's quotes and a comment's text are skipped; an unterminated string ends at its line)."""
    i = start
    while i < stop:
        char = text[i]
        if char == "-" and text.startswith("--", i):
            end = text.find("\n", i)
            i = len(text) if end < 0 else end
            continue
        if char == '"':
            i += 1
            while i < len(text) and text[i] not in '"\n':
                i += 2 if text[i] == "\\" else 1
        else:
            yield i
        i += 1


def _unclosed_parentheses(text: str, offset: int) -> list[int]:
    """The offsets of the '(' still open at `offset` (comments and byte strings skipped),
    outermost first."""
    open_at: list[int] = []
    for i in _code_offsets(text, 0, offset):
        if text[i] == "(":
            open_at.append(i)
        elif text[i] == ")" and open_at:
            open_at.pop()
    return open_at


def _closing_parenthesis(text: str, start: int) -> int:
    """The offset of the ')' that closes the '(' at `start` (comments and byte strings skipped as
    _unclosed_parentheses skips them); the text's end when none does."""
    depth = 0
    for i in _code_offsets(text, start, len(text)):
        if text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
            if depth == 0:
                return i
    return len(text)


_STRING_RUN = re.compile(r'[^"\\\n]*')


def _check_nesting(text: str, path: str) -> None:
    """Refuse, before parsing, parentheses nested deeper than limits.NESTING_DEPTH.

    The parser and the passes after it recurse once per level; a bound here
    keeps every one of them within Python's stack, whatever the input.
    """
    line = 1
    depth = 0
    column = 0
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        column += 1
        if ch == "\n":
            line += 1
            column = 0
        elif ch == "-" and text.startswith("--", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
            continue
        elif ch == '"':
            i += 1
            while i < n and text[i] != '"':
                run = _STRING_RUN.match(text, i).end()
                if run > i:         # plain characters, a run at a time
                    column += run - i
                    i = run
                    continue
                if text[i] == "\n":
                    line += 1
                    column = 0
                    i += 1
                    continue
                step = 2 if text[i] == "\\" and i + 1 < n and text[i + 1] != "\n" else 1
                column += step      # a string's characters are columns too
                i += step
            if i < n:
                column += 1         # its closing quote (skipped by the i += 1 below)
        elif ch == "(":
            depth += 1
            if depth > limits.NESTING_DEPTH:
                raise ParseError(f"parentheses nested {depth} deep: more than the limit of "
                                 f"{limits.NESTING_DEPTH} ({doc('limits.md')})",
                                 Span(path, line, column),
                                 hint="name the inner parts with let or def")
        elif ch == ")":
            depth -= 1
        i += 1


@v_args(meta=True)
class _Build(Transformer):
    """lark tree -> syntax nodes, with a Span on each."""

    def __init__(self, path: str, text: str):
        super().__init__()
        self.path = path
        self.text = text
        self.line_starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def _span(self, meta):
        return _meta_span(self.path, meta)

    def _position(self, offset: int):
        line = bisect.bisect_right(self.line_starts, offset)
        return line, offset - self.line_starts[line - 1] + 1

    def _form(self, meta):
        """The span of a parenthesised form, parentheses included."""
        if getattr(meta, "empty", False) or not hasattr(meta, "start_pos"):
            return _meta_span(self.path, meta)
        text, start, end = self.text, meta.start_pos, meta.end_pos
        before = start - 1
        while before >= 0 and text[before].isspace():
            before -= 1
        if before >= 0 and text[before] == "(":
            start = before
        after = end
        while after < len(text) and text[after].isspace():
            after += 1
        if after < len(text) and text[after] == ")":
            end = after + 1
        line, column = self._position(start)
        end_line, end_column = self._position(end)
        return Span(self.path, line, column, end_line, end_column)

    def _tok(self, token):
        return _token_span(self.path, token)

    # -- modules
    def start(self, meta, children):
        header, *rest = children
        imports = [c for c in rest if isinstance(c, s.Import)]
        declarations = [c for c in rest if not isinstance(c, s.Import)]
        return header, imports, declarations

    def module_header(self, meta, children):
        return children[0]

    def module_path(self, meta, children):
        return s.Import(self._span(meta), ".".join(str(c) for c in children))

    def import_line(self, meta, children):
        return s.Import(children[0].span, children[0].module)

    def definition(self, meta, children):
        name, type_, body = children
        return s.Definition(self._tok(name), str(name), type_, body)

    def family_declaration(self, meta, children):
        name = children[0]
        parameters = [c for c in children[1:] if isinstance(c, s.Binder)]
        rest = children[1 + len(parameters):]
        sort, constructors = rest[0], rest[1:]
        return s.FamilyDeclaration(self._tok(name), str(name), parameters, sort, constructors)

    def family_parameter(self, meta, children):
        multiplicity, name, type_ = children
        return s.Binder(self._tok(name), multiplicity or "unrestricted", str(name), type_)

    def constructor_declaration(self, meta, children):
        name, *fields = children
        return s.ConstructorDeclaration(self._tok(name), str(name), fields)

    def field_declaration(self, meta, children):
        multiplicity, name, type_ = children
        return s.Binder(self._tok(name), multiplicity, str(name), type_)

    def multiplicity(self, meta, children):
        token = children[0]
        if str(token) not in s.MULTIPLICITIES:
            raise ParseError(f"'{_shown(token)}' is not a multiplicity", self._tok(token),
                             hint="write unrestricted (or 0 for erased, 1 for linear)")
        return str(token)

    # -- expressions
    def variable(self, meta, children):
        return s.Variable(self._tok(children[0]), str(children[0]))

    def natural(self, meta, children):
        _refuse_malformed_number(self.text, children[0].start_pos, self.path)
        return s.Natural(self._tok(children[0]), _natural(children[0], self.path))

    def byte_string(self, meta, children):
        span = self._tok(children[0])
        return s.ByteString(span, decode_byte_string(str(children[0]), span))

    def universe(self, meta, children):
        _refuse_malformed_number(self.text, children[0].start_pos, self.path)
        return s.Universe(self._span(meta), _natural(children[0], self.path))

    def lambda_(self, meta, children):
        multiplicity, name, type_, body = children
        return s.Lambda(self._form(meta), s.Binder(self._tok(name), multiplicity, str(name), type_), body)

    def pi(self, meta, children):
        multiplicity, name, type_, body = children
        return s.Pi(self._form(meta), s.Binder(self._tok(name), multiplicity, str(name), type_), body)

    def let(self, meta, children):
        multiplicity, name, type_, value, body = children
        return s.Let(self._tok(name), multiplicity, str(name), type_, value, body)

    def explicit_application(self, meta, children):
        function, *arguments = children
        return s.Application(self._form(meta), function, arguments, explicit=True)

    def application(self, meta, children):
        function, *arguments = children
        if not arguments:
            return function         # `(e)` is e
        return s.Application(self._form(meta), function, arguments)

    def family_type(self, meta, children):
        name, *arguments = children
        return s.FamilyType(self._tok(name), str(name), arguments)

    def constructor(self, meta, children):
        family, constructor, *arguments = children
        return s.Constructor(self._form(meta), str(family), str(constructor), arguments,
                             family_span=self._tok(family), name_span=self._tok(constructor))

    def record(self, meta, children):
        family, *fields = children
        return s.Record(self._form(meta), str(family), fields, name_span=self._tok(family))

    def record_field(self, meta, children):
        name, value = children
        return s.RecordField(self._tok(name), str(name), value)

    def eliminate(self, meta, children):
        family, motive, scrutinee, *branches = children
        return s.Eliminate(self._form(meta), str(family), motive, scrutinee, branches,
                           name_span=self._tok(family))

    def branch(self, meta, children):
        constructor, *binders, body = children
        return s.Branch(self._tok(constructor), str(constructor),
                        [s.BranchBinder(self._tok(b), str(b)) for b in binders], body)

    def nat_eliminate(self, meta, children):
        return s.NatEliminate(self._form(meta), *children)

    def successor(self, meta, children):
        return s.Successor(self._form(meta), children[0])

    def equal(self, meta, children):
        return s.Equal(self._form(meta), *children)

    def refl(self, meta, children):
        return s.Refl(self._form(meta), *children)

    def native_encode(self, meta, children):
        return s.NativeEncode(self._form(meta), *children)

    def annotation(self, meta, children):
        return s.Annotation(self._form(meta), *children)


# tokens that begin a top-level line: met inside an open '(', the '(' was not closed
_TOP_LEVEL = {"def", "family", "import", "module", "end-family"}

# keywords that are read as such wherever a name could stand in an expression, so a definition
# of that name could never be referred to (the forms' heads, `lambda`, `record`..., are keywords
# only right after '(' and may be names elsewhere)
# (the grammar's NAME excludes them, so the lexer never reads one as a name)
RESERVED_WORDS = frozenset({"def", "family", "end-family", "constructor", "field", "in", "Type",
                            "import", "module"})
_RESERVED_HINT = ("def, family, end-family, constructor, field, in, Type, import and module are "
                  "keywords wherever a name could stand; choose another name")

# keywords that begin a declaration (or a family's part) when they begin a line
_DECLARATION_KEYWORDS = _TOP_LEVEL | {"constructor", "field"}


def _begins_line(text: str, offset: int) -> bool:
    """Only spaces or tabs stand before `offset` on its line.  A `field` or `constructor` that
    begins its line, met with a '(' open, is the next part of a family (the grammar has `field`
    nowhere else, and `constructor` elsewhere only right after a '('), refused at the open '('
    as when the next `def` or `family` meets it (probe s43 fuzz finding F2; _unclosed_error)."""
    line_start = text.rfind("\n", 0, offset) + 1
    return not text[line_start:offset].strip(" \t")


def _keyword_as_name(token, expected, text: str) -> bool:
    """`token` is a reserved word where the parser could have taken a name, and it is not the
    first word of its line (there a declaration keyword begins the next declaration, and
    _unfinished_declaration says what the one before it lacks)."""
    if str(token) not in RESERVED_WORDS or "NAME" not in expected:
        return False
    line_start = text.rfind("\n", 0, token.start_pos) + 1
    return bool(text[line_start:token.start_pos].strip())


def _code_before(text: str, offset: int) -> tuple[int, str]:
    """The last thing written before `offset`, comments and blank space skipped: its offset and
    its text (a word, a byte string's closing quote, or one punctuation character)."""
    position = len(text[:offset].rstrip())
    while position > 0:
        line_start = text.rfind("\n", 0, position) + 1
        code = _line_code(text[line_start:position])
        stripped = code.rstrip()
        if stripped:
            end = line_start + len(stripped)
            start = end - 1
            if _WORD_CHARACTER.match(text[start]) or text[start] == "-":
                start = _previous_word(text, end)[0]
            return start, text[start:end]
        position = len(text[:line_start].rstrip())
    return 0, ""


def _line_code(line: str) -> str:
    """A line without its comment (a `--` outside a byte string)."""
    i = 0
    while i < len(line):
        if line[i] == '"':
            i += 1
            while i < len(line) and line[i] != '"':
                i += 2 if line[i] == "\\" else 1
        elif line.startswith("--", i):
            return line[:i]
        i += 1
    return line


def _last_declaration(text: str, offset: int) -> tuple[str, str] | None:
    """What the last line before `offset` that begins with `def NAME`, `family NAME` or
    `field MULTIPLICITY NAME` declares: ("definition", NAME), ("family", NAME) or ("field", NAME)."""
    found = None
    for found in re.finditer(r"(?m)^[ \t]*(def|family|field[ \t]+[A-Za-z0-9_]+)[ \t]+"
                             r"([A-Za-z_][A-Za-z0-9_'-]*)", text[:offset]):
        pass
    if found is None:
        return None
    keyword = found.group(1).split()[0]
    return {"def": "definition"}.get(keyword, keyword), found.group(2)


def _unfinished_declaration(text: str, path: str, token, expected) -> ParseError | None:
    """A declaration keyword that begins its line where the parser wanted a name or an expression
    (outside any parenthesis): the declaration before it was left unfinished (`def a : Nat =`
    and no value, `module A.B.` ending in a dot).  A keyword is never a name (docs/language.md),
    so the refusal says what is missing, where it is missing."""
    keyword = str(token)
    line_start = text.rfind("\n", 0, token.start_pos) + 1
    if (keyword not in _DECLARATION_KEYWORDS or "NAME" not in expected
            or text[line_start:token.start_pos].strip()):
        return None
    start, last = _code_before(text, token.start_pos)
    line, column = _position(text, start)
    there = Span(path, line, column, line, column + max(len(last), 1))
    met = f"after it comes '{keyword}' at {token.line}:{token.column}, which begins the next declaration"
    declaration = _last_declaration(text, start)
    named = f"the {declaration[0]} {_shown(declaration[1])}" if declaration else "the declaration"
    if last == "=":
        return ParseError(f"{named} has no value after its '=': {met}", there,
                          hint="write the value (one expression) after the '=', or delete the "
                               "unfinished definition")
    if last == ":":
        return ParseError(f"{named} has no type after its ':': {met}", there,
                          hint="write the type (one expression) after the ':'")
    if last == ".":
        return ParseError(f"a module path does not end with '.': {met}", there,
                          hint="delete the '.', or write the last part of the path after it (A.B.C)")
    if last in ("module", "import"):
        return ParseError(f"'{last}' has no module path: {met}", there,
                          hint=f"write the module's dotted name after it: {last} A.B.C")
    if last in ("def", "family", "constructor", "field"):
        return ParseError(f"'{last}' has no name: {met}", there,
                          hint=f"write the name after '{last}'")
    return None                         # the parser's own words, at the keyword


def _acceptable(error: lark.exceptions.UnexpectedToken | lark.exceptions.UnexpectedCharacters) -> set:
    """The terminals the parser could take where it stopped.  A keyword where the state's lexer
    took none (a keyword is never a NAME) is met before the parser reduces what it holds, so
    lark's expected set is the state's lookahead, merged over every context (')' and '=' after
    a top-level definition's last natural); the parser's own accepts() performs the reductions
    first and keeps only what may really follow."""
    parser = getattr(error, "interactive_parser", None)
    # an unexpected character (UnexpectedCharacters) has the lexer's terminals for the state
    own = ((error.allowed or set()) if isinstance(error, lark.exceptions.UnexpectedCharacters)
           else error.expected)
    if error.token_history is None or parser is None:
        return own                          # the parser's own refusal: after its reductions
    try:
        return parser.accepts() or own
    except Exception:                       # pragma: no cover - lark's internals: keep its set
        return own


def module_line_hint(path: str) -> str:
    """What to write as the first line of the module file `path`, whose search folder is not
    known yet (a plan's root is its folder minus the module path the module line gives): the
    name its path gives from its own folder and, when that folder's name is a module name's
    part, from the folder above (docs/language.md "Search path": A.B.C is the file A/B/C.bob)."""
    file = Path(path)
    stem, folder = file.stem, file.resolve().parent.name
    part = re.compile(r"[A-Za-z_][A-Za-z0-9_']*(-[A-Za-z0-9_']+)*\Z")
    if not part.match(stem):
        return ("write `module A.B.C` as the file's first line, A.B.C being its path A/B/C.bob "
                "from the folder it is searched in")
    names = f"`module {stem}` when its own folder is the one searched"
    if part.match(folder) and folder not in RESERVED_WORDS:
        names += f", `module {folder}.{stem}` when the folder above {folder}/ is"
    return (f"write the module's name as the file's first line: {names} (A.B.C is the file "
            f"A/B/C.bob under the plan's root, an -I folder or the standard library)")


class MissingModuleLine(ParseError):
    """A module file whose first form is not its `module` line; an importer, which knows the
    name the file must declare, replaces the hint with it (modules.py)."""


def _missing_module_line(token, path: str, text: str = "") -> ParseError:
    import difflib

    word = str(token)
    # a dotted path first (`Model.Config`: its keyword left out) is no misspelt `module`, however
    # like it its first part reads (probe s43 fuzz finding F10)
    dotted = _DOTTED_LINE.match(text, token.start_pos) if text else None
    path_first = dotted is not None and dotted.start(1) == token.start_pos
    typo = (word != "module" and not path_first
            and difflib.get_close_matches(word.lower(), ["module"], cutoff=0.7))
    hint = module_line_hint(path)
    if typo:
        hint = f"did you mean `module` (keywords are lower case)? {hint}"
    if path_first:
        message = (f"this file has no module line: it begins with the module path "
                   f"'{_shown(dotted.group(1))}' without the keyword `module`")
    else:
        message = (f"the file's first word '{_shown(word)}' is not the keyword `module`" if typo else
                   f"this file has no module line: it begins with '{_shown(word)}'")
    return MissingModuleLine(f"{message}, where `module NAME` must come first",
                             _token_span(path, token), hint=hint)


def _keyword_definition_name(token, path: str) -> ParseError:
    return ParseError(f"'{token}' is a keyword of the language: a definition named so could "
                      f"never be used (`{token}` in an expression is read as the keyword)",
                      _token_span(path, token), hint=_RESERVED_HINT)


def _translate(error: lark.exceptions.LarkError, path: str, text: str) -> ParseError:
    if isinstance(error, lark.exceptions.UnexpectedToken):
        token = error.token
        error.expected = _acceptable(error)
        expected = _expected_words(error.expected)
        at_end = token.type == "$END"
        offset = len(text) if at_end else token.start_pos
        if not at_end:
            start = _word_start(text, offset)
            malformed = _malformed_number(text, start, path) if start < offset else None
            if malformed is not None:
                return malformed
        if not at_end and _keyword_as_name(token, error.expected, text):
            if _code_before(text, token.start_pos)[1] == "def":
                return _keyword_definition_name(token, path)
            return ParseError(f"'{token}' is a keyword, not a name: expected {expected}",
                              _token_span(path, token), hint=_RESERVED_HINT)
        if at_end or str(token) in _DECLARATION_KEYWORDS:
            unclosed = _unclosed_parentheses(text, offset)
            if unclosed and (at_end or str(token) in _TOP_LEVEL or _begins_line(text, token.start_pos)):
                return _unclosed_error(text, path, unclosed, token, at_end)
            unfinished = None if at_end or unclosed else \
                _unfinished_declaration(text, path, token, error.expected)
            if unfinished is not None:
                return unfinished
        if at_end:
            lines = _lines(text)
            span = Span(path, len(lines), len(lines[-1]) + 1)
            hint = ("finish the last declaration" if text.strip("\ufeff \t\n") and
                    any(not line.lstrip().startswith("--") for line in lines if line.strip())
                    else "a module begins with its name: `module A.B.C` for the file A/B/C.bob")
            hint = (_glued_comment(text, offset) or _unterminated_family(text, offset, error.expected)
                    or hint)
            return ParseError(f"the file ends too early: expected {expected}", span, hint=hint)
        if _code_before(text, token.start_pos)[1] == "":
            return _missing_module_line(token, path, text)
        if _code_before(text, token.start_pos)[1] == "Type" and not at_end:
            # `Type` alone: a universe needs its level (docs/language.md: `Type n : Type n+1`)
            start = _code_before(text, token.start_pos)[0]
            line, column = _position(text, start)
            return ParseError(f"'Type' needs its universe level, a natural number, before '{_shown(token)}'",
                              Span(path, line, column, line, column + 4),
                              hint="write `Type 0` for the types of values (Nat, Bytes, a family of "
                                   "them), `Type 1` for the types of those")
        hint = None
        if str(token) == "import":
            hint = "imports come right after the module line, before any def or family"
        elif str(token) == ")" and not _unclosed_parentheses(text, offset):
            hint = ("this ')' closes no '(': every '(' before it is closed already; delete it, or "
                    "write the '(' it was meant to close")
        elif str(token) == "where":
            hint = _WHERE_HINT
        elif str(token) == ")" and _code_before(text, token.start_pos)[1] == "(":
            hint = ("`()` holds no expression ((e) is e): write a value or a form between the "
                    "parentheses, or delete them")
        elif str(token) == "." and _code_before(text, token.start_pos)[1] == "import":
            hint = _relative_import(text, offset)
        else:
            hint = (_after_module_path(text, offset) or _bare_module_path(text, offset, error.expected)
                    or _colon_equals(text, offset, token)
                    or _glued_comment(text, offset)
                    or _misspelt_keyword(token, error.expected)
                    or _not_a_form(text, offset)
                    or (_unterminated_family(text, offset, error.expected)
                        if str(token) in _TOP_LEVEL else None)
                    or _form_shape(text, offset) or _field_shape(text, offset)
                    or _after_a_closed_form(text, offset, token, error.expected)
                    or _bare_form(text, offset, token, error.expected))
        return ParseError(f"unexpected '{_shown(token)}': expected {expected}", _token_span(path, token),
                          hint=hint)
    if isinstance(error, lark.exceptions.UnexpectedCharacters):
        char = text[error.pos_in_stream] if error.pos_in_stream < len(text) else "?"
        # what the parser could take there, not the lexer's terminals for its state (merged over
        # every context: `1é` at a definition's end listed '(', '=', 'field', ...; probe s43 fuzz F7)
        expected = _expected_words(_acceptable(error))
        hint = None
        control = _control_character(text, error.pos_in_stream, path, error.line, error.column, expected)
        if control is not None:
            return control
        if char == _BYTE_ORDER_MARK:
            hint = "a byte order mark (U+FEFF) is accepted only as a file's first character"
        elif char == '"':
            position = error.pos_in_stream
            line_end = text.find("\n", position)
            rest = text[position + 1:len(text) if line_end < 0 else line_end]
            if position > 0 and text[position - 1] == "b" and '"' not in rest.replace('\\"', ""):
                start = Span(path, error.line, error.column - 1)
                return ParseError("this byte string is not closed: b\" needs a closing \" on "
                                  "the same line", start,
                                  hint='a byte string is one line; write a newline as \\n and a '
                                       'quote as \\" inside it')
            if position > 0 and text[position - 1] == "B" and (position == 1 or not _WORD_CHARACTER.match(
                    text[position - 2])):
                # `B"x"`: a byte string's prefix is a lower-case b; `B` was read as a name
                closing = re.match(r'(?:[^"\\\n]|\\.)*"', text[position + 1:])
                literal = 'b"' + closing.group(0) if closing else 'b"..."'
                return ParseError("'B\"' begins no byte string: a byte string's prefix is a lower-case b "
                                  "(the B was read as a name, then a '\"')",
                                  Span(path, error.line, error.column - 1, error.line, error.column + 1),
                                  hint=f"write {_shown(literal)}")
            if position == 0 or text[position - 1] != "b":
                hint = 'text is written as a byte string: b"..." (escapes \\xNN \\n \\t \\" ...)'
            else:
                glued = re.search(r"[A-Za-z0-9_'-]+$", text[:position])
                if glued and glued.group(0) != "b":
                    # `fb"x"`: the name `fb` ran into the string (probe s46 plantexts2)
                    name = glued.group(0)[:-1]
                    hint = (f'this was read as the name {glued.group(0)} and then a \'"\': put a space '
                            f'before the byte string ({name} b"...", e.g. {name} b"x")')
        elif char == "-" and error.pos_in_stream > 0 and \
                _WORD_CHARACTER.match(text[error.pos_in_stream - 1]) and \
                not _WORD_CHARACTER.match(text[error.pos_in_stream + 1:error.pos_in_stream + 2] or " "):
            hint = ("a name does not end with '-' (a '-' joins two parts of a name, as in nat-add); "
                    "delete it, or write the rest of the name")
        elif char == "-" and text[error.pos_in_stream + 1:error.pos_in_stream + 2].isdigit():
            hint = ("the language has natural numbers only, no negative literals; subtract with "
                    "(nat-subtract a b), which gives 0 when b > a")
        elif not char.isascii():
            hint = ("names are ASCII: letters, digits, _ and ' (and - between them); other text "
                    "goes in a byte string, as its UTF-8 bytes (b\"caf\\xc3\\xa9\")")
        return ParseError(f"unexpected character {char!r}: expected {expected}",
                          Span(path, error.line, error.column), hint=hint)
    if isinstance(error, lark.exceptions.UnexpectedEOF):
        lines = _lines(text)
        return ParseError(f"the file ends too early: expected {_expected_words(error.expected)}",
                          Span(path, len(lines), len(lines[-1]) + 1))
    return ParseError(str(error), Span(path, 1, 1))


# each form's parts, for a parse error inside one (`(refl Nat)`: too few)
_FORM_SHAPES = {
    "lambda": "(lambda multiplicity name : type . body)",
    "pi": "(pi multiplicity name : type . body)",
    "let": "(let multiplicity name = value in body), or (let multiplicity name : type = value in body)",
    "app": "(app function argument ...), one argument or more",
    "family": "(family Name argument ...)",
    "constructor": "(constructor Family Constructor parameter ... field ...)",
    "record": "(record Family (field = value) ...)",
    "eliminate": "(eliminate Family motive value (branch Constructor name ... . body) ...)",
    "branch": "(branch Constructor name ... . body)",
    "nat-eliminate": "(nat-eliminate motive base step target)",
    "succ": "(succ n)",
    "equal": "(equal type left right)",
    "refl": "(refl type value)",
    "compiler-native-encode": "(compiler-native-encode type value)",
    "the": "(the type expression)",
}


# forms of other languages a plan author may reach for, and what this language writes instead
_NOT_FORMS = {
    "match": "take a value apart with (eliminate Family motive value (branch Constructor name ... "
             ". body) ...), or a natural with (nat-eliminate motive base step target)",
    "case": "take a value apart with (eliminate Family motive value (branch Constructor name ... "
            ". body) ...), or a natural with (nat-eliminate motive base step target)",
    "if": "choose between two values by a natural with (naturalSelect flag whenNonzero whenZero) "
          "of Std.Natural, or (nat-eliminate motive whenZero step flag)",
}


def not_a_form_hint(name: str) -> str | None:
    """The hint for `name` at the head of a parenthesised form when it is a form of another
    language (`(if c a b)` parses as an application of a name `if`: the resolver says so), or a
    form's head misspelt (`(lamda ...)`, `(elimnate ...)`: read as a name too)."""
    if name in _NOT_FORMS:
        return f"{name} is not a form of the language: {_NOT_FORMS[name]}"
    head = _misspelt_head(name)
    if head is not None:
        return f"{name} is not a form of the language; did you mean {head}? {_FORM_SHAPES[head]}"
    return None


def _misspelt_head(name: str) -> str | None:
    """The form head `name` is a misspelling of (`lamda`, `Lambda`, `constuctor`), else None."""
    import difflib

    if name in _FORM_SHAPES or len(name) < 4:
        return None
    close = difflib.get_close_matches(name.lower(), list(_FORM_SHAPES), n=1, cutoff=0.8)
    return close[0] if close else None


# the keywords that begin a top-level line, by the terminal the parser expects for each
_LINE_KEYWORDS = ("def", "family", "import", "end-family", "module")


def _misspelt_keyword(token, expected) -> str | None:
    """A name at the start of a line where a declaration's keyword may begin one, spelled like
    that keyword (`deff`, `famly`, `impot`, `Def`): read as a name, it is no declaration."""
    import difflib

    if token.type != "NAME" or token.column != 1:
        return None
    words = {_describe_terminal(name).strip("'") for name in expected}
    keywords = [k for k in _LINE_KEYWORDS if k in words]
    close = difflib.get_close_matches(str(token).lower(), keywords, n=1, cutoff=0.7)
    if close and str(token).lower() == close[0]:
        return f"keywords are lower case: write `{close[0]}`"
    if close:
        return f"did you mean `{close[0]}`?"
    if "def" in keywords:
        return (f"a declaration at the start of a line begins with a keyword: `def {_shown(token)} : type = value`, "
                f"or `family`")
    return None


def _not_a_form(text: str, offset: int) -> str | None:
    """A form of another language (`(match x ...)`), or a form's head misspelt (`(lamda ...)`),
    among the parentheses open at `offset`: its head was read as a name, so the parser stopped
    somewhere inside."""
    for start in reversed(_unclosed_parentheses(text, offset)):
        found = re.match(r"\(\s*([A-Za-z-]+)\b", text[start:start + 40])
        if found and not_a_form_hint(found.group(1)) is not None:
            return not_a_form_hint(found.group(1))
    return None


_GLUED_COMMENT = re.compile(r"[A-Za-z0-9_']--")


_PATH_LINE = re.compile(r"[ \t]*(module|import)[ \t]+[A-Za-z_][A-Za-z0-9_'.-]*[ \t]*")


def _after_module_path(text: str, offset: int) -> str | None:
    """Something after the dotted name of a `module` or `import` line, on that line (`import
    Std.Natural Std.Word`): the line holds one module's name.  Without this the hint read the
    path's last part as a function to apply ("to apply Natural, write the application in
    parentheses"), though no definition is there (probe s43 fuzz finding F3)."""
    line_start = text.rfind("\n", 0, offset) + 1
    line = _PATH_LINE.fullmatch(text, line_start, offset)
    if line is None:
        return None
    if line.group(1) == "import":
        return "an import line names one module: write `import A.B.C` on a line of its own for each module"
    return ("the module line holds only the module's dotted name (module A.B.C); begin the imports and "
            "declarations on lines of their own")


_DOTTED_LINE = re.compile(r"[ \t]*([A-Za-z_][A-Za-z0-9_'-]*(?:\.[A-Za-z_][A-Za-z0-9_'-]*)+)[ \t]*(?:--[^\n]*)?")


def _bare_module_path(text: str, offset: int, expected) -> str | None:
    """A dotted module path alone on its line (`Std.Natural`, its `import` left out): said as
    such, where the hint read its first part as a definition's name (`def Std : type = value`;
    probe s43 fuzz finding F6)."""
    line_start = text.rfind("\n", 0, offset) + 1
    line_end = text.find("\n", offset)
    line = _DOTTED_LINE.fullmatch(text, line_start, len(text) if line_end < 0 else line_end)
    if line is None or line.start(1) != offset:
        return None
    where = ("" if "'import'" in {_describe_terminal(n) for n in expected} else
             ", right after the module line (imports come before any def or family)")
    return f"a module path alone on its line: an import is written `import {_shown(line.group(1))}`{where}"


# `where` after a definition's value (Haskell, Lean): the language has none (probe s46 plantexts2)
_WHERE_HINT = ("the language has no `where`: name a local value with (let unrestricted NAME = VALUE in "
               "BODY) around the expression that uses it, or give it its own `def` line")


def _relative_import(text: str, offset: int) -> str:
    """`import .X` / `import ..X`: an import names the module's whole path (docs/language.md,
    "Search path"); for `.X` the path of the importing module's folder comes first."""
    written = re.match(r"\.+([A-Za-z0-9_'.-]*)", text[offset:])
    dots, rest = len(written.group(0)) - len(written.group(1)), written.group(1).rstrip(".")
    module = re.match(r"[ \t\ufeff]*(?:--[^\n]*\n|[ \t]*\n)*[ \t]*module[ \t]+([A-Za-z0-9_'.-]+)", text)
    folder = module.group(1).split(".")[:-1] if module and dots == 1 else []
    path = ".".join(folder + ([rest] if rest else [])) or "A.B.C"
    return (f"the language has no relative imports: an import names the module's whole path, from the "
            f"plan's root, a -I folder or the standard library (`import {path}`)")


def _colon_equals(text: str, offset: int, token) -> str | None:
    """A hint for `:=` where the language writes '=' (`def a : Nat := 1`, `def a := 1`,
    `(let m x := e in body)`): the parser stops at the ':' (a type was done) or at the '=' (a
    type was expected after the ':'), and its "expected '='" alone does not say the ':' is the
    mistake (probe s41 messages6 "Found and left", messages7)."""
    if (str(token) == ":" and text[offset + 1:offset + 2] == "=") or \
            (str(token) == "=" and offset > 0 and text[offset - 1] == ":"):
        return ("':=' is not this language's: a definition is `def NAME : TYPE = VALUE` (or `def NAME = "
                "VALUE`), a local one `(let m NAME = VALUE in BODY)`; write '=' alone")
    return None


def _glued_comment(text: str, offset: int, begin: int | None = None) -> str | None:
    """A `--` right after a name or a number (`def a--b`, `(nat-add 1--2)`), in the declaration
    the parser stopped in (or after `begin`): it began a comment, so the rest of that line was
    never read."""
    declaration = max(text.rfind("\ndef ", 0, offset), text.rfind("\nfamily ", 0, offset), 0)
    begin = declaration if begin is None else max(begin, declaration)
    for found in reversed(list(_GLUED_COMMENT.finditer(text, begin, offset))):
        line_start = text.rfind("\n", 0, found.start()) + 1
        before = text[line_start:found.start() + 1]
        if before.replace('\\"', "").count('"') % 2 or "--" in before:
            continue                    # inside a byte string, or already in a comment
        line, column = _position(text, found.start() + 1)
        word = re.search(r"[A-Za-z0-9_'-]*$", before).group(0)
        rest = re.match(r"[A-Za-z0-9_'-]*", text[found.end():]).group(0)
        advice = ("there is no infix `-`: subtract with (nat-subtract a b)" if word[:1].isdigit()
                  else "a name's parts are joined by a single `-`")
        return (f"the `--` at {line}:{column} begins a comment, to the end of the line, so "
                f"`{word}--{rest}` was read as `{word}` and a comment; {advice}")
    return None


def _form_shape(text: str, offset: int) -> str | None:
    """The shape of the form whose parentheses hold `offset`, when it begins with a keyword."""
    unclosed = _unclosed_parentheses(text, offset)
    if not unclosed:
        return None
    match = re.match(r"\(\s*([A-Za-z-]+)", text[unclosed[-1]:unclosed[-1] + 40])
    shape = _FORM_SHAPES.get(match.group(1)) if match else None
    if shape and match.group(1) == "branch":
        around = re.match(r"\(\s*([A-Za-z-]+)", text[unclosed[-2]:unclosed[-2] + 40]) \
            if len(unclosed) > 1 else None
        if around is None or around.group(1) != "eliminate":
            # the grammar has branch only among an eliminate's parts: outside one, `branch` is a
            # name and its '.' unexpected (probe s43 fuzz: `eliminate` deleted)
            return f"a branch stands only inside an eliminate: {_FORM_SHAPES['eliminate']}"
    return f"{match.group(1)} is written {shape}" if shape else None


def _field_shape(text: str, offset: int) -> str | None:
    """The shape of a field declaration when the parser stopped inside one, outside any
    parenthesis: `field` and at most two words (its multiplicity and name) before `offset`.
    The grammar's `field multiplicity name : type` has no default multiplicity, unlike a
    family's parameters, so `field head : A` stops at its ':' (docs/language.md, "Families")."""
    if _unclosed_parentheses(text, offset):
        return None
    position = offset
    for _ in range(3):
        start, word = _code_before(text, position)
        if word == "field":
            return ("a field is written field multiplicity name : type, the multiplicity first "
                    "(unrestricted, or 0 for erased, 1 for linear): field unrestricted head : A")
        if not word or word in _DECLARATION_KEYWORDS:
            return None
        position = start
    return None


_FAMILY_LINE = re.compile(r"(?m)^[ \t]*family[ \t]+([A-Za-z_][A-Za-z0-9_']*(?:-[A-Za-z0-9_']+)*)")


def _unterminated_family(text: str, offset: int, expected) -> str | None:
    """When the parser, still inside a family declaration, meets the next declaration (or the
    file's end): the family that lacks its end-family, and where it began."""
    if "'end-family'" not in {_describe_terminal(n) for n in expected}:
        return None
    last = None
    for last in _FAMILY_LINE.finditer(text, 0, offset):
        pass
    if last is None:
        return None
    line, column = _position(text, text.rfind("family", 0, last.start(1)))
    return (f"family {last.group(1)} (at {line}:{column}) has no end-family: write end-family "
            f"on a line after its last constructor or field, before the next declaration")


def _previous_word(text: str, offset: int) -> tuple[int, str]:
    """The word that ends before `offset` on the same line (spaces between), and where it begins."""
    end = offset
    while end > 0 and text[end - 1] in " \t":
        end -= 1
    start = end
    while start > 0 and (text[start - 1].isascii() and (text[start - 1].isalnum()
                                                        or text[start - 1] in "_'-")):
        start -= 1
    return start, text[start:end]


def _control_character(text: str, offset: int, path: str, line: int, column: int, expected: str):
    """A control character outside a byte string or a comment (U+0001 to U+001F but tab and the line
    ends, and U+007F to U+009F): named by its code point and its Ctrl key, never printed as itself;
    a Ctrl-Z (U+001A) after the last declaration is the end-of-file mark DOS-era editors and tools
    write (probe s46 plantexts2 finding 10).  None for any other character."""
    char = text[offset] if offset < len(text) else ""
    code = ord(char) if char else -1
    if not (0 < code < 0x20 or 0x7F <= code <= 0x9F) or char in "\t\n\r":
        return None
    name = f"U+{code:04X}" + (f", Ctrl-{chr(code + 0x40)}" if code < 0x20 else "")
    rest = text[offset + 1:]
    if char == "\x1a" and not rest.replace("\x1a", "").strip():
        return ParseError(f"a Ctrl-Z ({name[:6]}) after the last declaration: the end-of-file mark some DOS-era "
                          f"editors and tools write; the language has none", Span(path, line, column),
                          hint="delete it: a module's text ends where its file ends")
    return ParseError(f"a control character ({name}) in the text, outside any byte string: expected {expected}",
                      Span(path, line, column),
                      hint=f"delete it (an editor or a tool wrote it); a byte string holds it as an escape: "
                           f"b\"\\x{code:02x}\"" if code < 0x100 else "delete it")


def _after_a_closed_form(text: str, offset: int, token, expected) -> str | None:
    """A second expression right after a definition's value that ends with ')' (`(succ 1)2`,
    `(succ 1) x`): the value is one expression, so applying the form's result is written in
    parentheses of its own (docs/language.md: `(f a b)` is application)."""
    close, before = _code_before(text, offset)
    words = {_describe_terminal(n) for n in expected}
    if before != ")" or "'def'" not in words or str(token) in _TOP_LEVEL:
        return None
    if _position(text, close)[0] != token.line:
        return None
    opened = _unclosed_parentheses(text, close)
    if not opened:
        return None
    form = text[opened[-1]:close + 1]
    line, column = _position(text, close)
    argument = (text[offset:_closing_parenthesis(text, offset) + 1] if str(token) == "(" else str(token))
    example = (f"({form} {argument})" if "\n" not in form + argument and len(form) + len(argument) <= 60
               else "((...) argument ...)")
    return (f"a definition's value is one expression, and this one ended at the ')' at {line}:{column}; "
            f"'{_shown(token)}' after it begins a second one.  To apply the form's result to it, write the "
            f"application in parentheses: {example}")


def _bare_form(text: str, offset: int, token, expected) -> str | None:
    """A form written without its parentheses (`def f : Nat = let unrestricted x = 1 in x`):
    its head was read as a name, so the parser stops at the word after it."""
    start, word = _previous_word(text, offset)
    before = start
    while before > 0 and text[before - 1].isspace():
        before -= 1
    if word in _FORM_SHAPES and word != "family" and (before == 0 or text[before - 1] != "("):
        return (f"{_shown(word)} begins a form, and forms are written in parentheses: "
                f"{_FORM_SHAPES[word]}")
    words = {_describe_terminal(n) for n in expected}
    if word and word not in RESERVED_WORDS and "'def'" in words and str(token) not in _TOP_LEVEL and token.line == \
            _position(text, start)[0]:
        return (f"a definition's value is one expression; to apply {_shown(word)}, write the "
                f"application in parentheses: ({_shown(word)} argument ...)")
    return None


def _unclosed_error(text: str, path: str, unclosed: list[int], token, at_end: bool) -> ParseError:
    """A '(' left open: reported at the innermost one still open (the likeliest to lack its
    ')'), saying where the parser noticed."""
    line, column = _position(text, unclosed[-1])
    if not at_end and not _unclosed_parentheses(text, len(text)):
        # every '(' closes later: the declaration line stands inside a form (a line pasted into
        # an expression), and no '(' lacks its ')' (probe s43 fuzz F8)
        closing = _position(text, _closing_parenthesis(text, unclosed[-1]))
        return ParseError(f"'{token}' is a declaration's keyword, here inside the '(' at {line}:{column}, "
                          f"which closes only at {closing[0]}:{closing[1]}", _token_span(path, token),
                          hint="a declaration cannot stand inside an expression: move the line out of "
                               "the form, or end the form before it")
    if at_end:
        met = "the file ends"
    else:
        met = f"'{token}' at {token.line}:{token.column} is inside it"
    more = (f" ({len(unclosed)} are open there; the first at "
            f"{':'.join(map(str, _position(text, unclosed[0])))})" if len(unclosed) > 1 else "")
    # a `--` glued to a word inside the open form began a comment that swallowed its ')'
    glued = _glued_comment(text, len(text) if at_end else token.start_pos, unclosed[0])
    return ParseError(f"this '(' is not closed: {met}{more}",
                      Span(path, line, column, line, column + 1),
                      hint=glued or "close every '(' with ')' before the next declaration")


_BYTE_ORDER_MARK = "\ufeff"


def _lines(text: str) -> list[str]:
    """The text's lines as a message numbers them (line ends are LF here; a form feed, U+0085 or
    U+2028 in a comment or a byte string ends none: str.splitlines ends lines at them, which put
    "the file ends too early" a line late, probe s38 texts2 finding 4), without the empty piece
    after a last line end (the file's end is placed after the last line's text)."""
    lines = text.split("\n")
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()
    return lines


def parse_module(text: str, path: Path | str) -> s.Module:
    """Parse one module's text; `path` is used for spans and error messages."""
    path_text = str(path)
    if text.startswith(_BYTE_ORDER_MARK):
        # a UTF-8 byte order mark is accepted (as Python, rustc, gcc, Go do) and skipped:
        # columns on line 1 count from the character after it
        text = text[1:]
    from ..source_bytes import refuse_nul

    refuse_nul(text, path_text, error=ParseError,
               hint='delete it (an editor or a tool wrote it); a zero byte in a byte string is written \\x00 (b"a\\x00b")')
    _check_nesting(text, path_text)
    try:
        tree = _parser().parse(text)
    except lark.exceptions.VisitError as error:     # pragma: no cover - raised by _Build
        if isinstance(error.orig_exc, BobcError):
            raise error.orig_exc from None
        raise
    except lark.exceptions.LarkError as error:
        raise _translate(error, path_text, text) from None
    try:
        header, imports, declarations = _Build(path_text, text).transform(tree)
    except lark.exceptions.VisitError as error:
        if isinstance(error.orig_exc, BobcError):
            raise error.orig_exc from None
        raise
    return s.Module(header.span, header.module, Path(path), imports, declarations, source=text)


def parse_file(path: Path | str) -> s.Module:
    from .modules import read_module_bytes

    path = Path(path)
    try:
        data = read_module_bytes(path)
    except OSError as error:
        raise ParseError(f"cannot read {path}: {error.strerror or error}") from None
    # as Path.read_text reads it: universal newlines
    return parse_module(decode_source(data, path).replace("\r\n", "\n").replace("\r", "\n"),
                        path)


def decode_source(data: bytes, path) -> str:
    """A module file's bytes as text: UTF-8, or a ParseError at the first byte that is not; a
    binary file (a record, an executable) is said to be no module source, with no excerpt of it,
    and UTF-16 text is named as such, whether or not its bytes happen to be valid UTF-8."""
    from .. import source_bytes

    return source_bytes.decode(
        data, path, error=ParseError, what="a module source (a .bob text)", files="module files", suffix=".bob",
        binary_hint="name the plan module (.bob) to read; a record, a checkpoint or a host is given to the "
                    "command's own options (e.g. `bobc run PLAN train --reference --input RECORD`, "
                    "`bobc inspect HOST`)",
        utf8_hint="module files are UTF-8; save it as UTF-8 (e.g. `iconv -f latin1 -t utf-8`), and write "
                  "other bytes in a byte string as \\xNN")
