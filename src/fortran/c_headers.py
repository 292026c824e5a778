"""Read spart's public C headers: what generate_fortran.py needs of them.

Parses include/spart.h and include/spart/*.h (the headers spart.h includes,
in its order, then any other header of include/spart/) for:
  - the functions marked SPART_API (return type and parameters),
  - enums (typedef enum name { A = 0, ... } name;),
  - #define NAME <integer> constants,
  - structs with a body (typedef struct name { ... } name;), their fields,
  - opaque structs (typedef struct name name;),
  - function pointer typedefs (typedef ret (*name)(params);).

Not a C parser: it reads the declarations as spart writes them (one
declarator per declaration, no nested struct definitions), and raises
HeaderError on anything it does not understand, so that the build stops
rather than generate a wrong interface. Python 3 standard library only.
"""
import pathlib
import re


class HeaderError(Exception):
    pass


class CType:
    """A C type as a declaration spells it.

    base: the type name ("int64_t", "spart_array", "void", "char", ...);
    const: whether the innermost pointee (or the value) is const;
    pointers: the number of '*'; array: the extent of `name[N]` (text) or None;
    function: for a function pointer, the Function it points to, else None.
    """

    def __init__(self, base, const=False, pointers=0, array=None, function=None):
        self.base, self.const, self.pointers = base, const, pointers
        self.array, self.function = array, function

    def spelled(self):
        if self.function is not None:
            return "function pointer"
        text = ("const " if self.const else "") + self.base + " " + "*" * self.pointers
        return text.strip() + (f"[{self.array}]" if self.array else "")


class Parameter:
    def __init__(self, name, ctype, comment=""):
        self.name, self.ctype, self.comment = name, ctype, comment


class Function:
    def __init__(self, name, result, parameters, variadic, header, doc=""):
        self.name, self.result, self.parameters = name, result, parameters
        self.variadic, self.header, self.doc = variadic, header, doc


class Struct:
    def __init__(self, name, fields, header, doc=""):
        self.name, self.fields, self.header, self.doc = name, fields, header, doc


class Enum:
    def __init__(self, name, values, header):
        self.name, self.values, self.header = name, values, header


class Api:
    """Everything read from the headers, each list in header order."""

    def __init__(self):
        self.headers = []      # "spart/common.h", ...
        self.functions = []    # Function
        self.enums = []        # Enum
        self.defines = []      # (name, value, header)
        self.structs = {}      # name -> Struct (insertion: header order)
        self.opaque = []       # names of opaque structs
        self.callbacks = {}    # typedef name -> Function (a function pointer type)


def _blank(match):
    """A comment as blanks, its newlines kept (positions stay valid)."""
    return re.sub(r"[^\n]", " ", match.group(0))


def _code(text):
    """The text with comments, preprocessor lines and __attribute__((...))
    blanked, every position kept."""
    text = re.sub(r"/\*.*?\*/|//[^\n]*", _blank, text, flags=re.S)
    lines, continued = [], False
    for line in text.split("\n"):
        directive = continued or line.lstrip().startswith("#")
        continued = directive and line.rstrip().endswith("\\")
        lines.append(" " * len(line) if directive else line)
    text = "\n".join(lines)
    while True:
        match = re.search(r"__attribute__\s*\(", text)
        if match is None:
            return text
        end = _closing(text, match.end() - 1)
        text = text[:match.start()] + " " * (end + 1 - match.start()) + text[end + 1:]


def _closing(text, start):
    """The index of the bracket closing the one at `start`."""
    pairs = {"(": ")", "{": "}", "[": "]"}
    depth = 0
    for index in range(start, len(text)):
        if text[index] in pairs:
            depth += 1
        elif text[index] in pairs.values():
            depth -= 1
            if depth == 0:
                return index
    raise HeaderError(f"unbalanced brackets after: {text[start:start + 60]!r}")


def _split(text, separator):
    """Split at `separator` outside brackets."""
    depth, current, parts = 0, "", []
    for character in text:
        depth += character in "([{"
        depth -= character in ")]}"
        if character == separator and depth == 0:
            parts.append(current.strip())
            current = ""
        else:
            current += character
    if current.strip():
        parts.append(current.strip())
    return parts


def _doc(original, start):
    """The comment that ends right before position `start` (blank lines
    apart), as plain lines; "" when there is none."""
    before = original[:start].rstrip()
    if not before.endswith("*/"):
        return ""
    opening = before.rfind("/*")
    body = before[opening + 2:-2]
    lines = [re.sub(r"^\s*\*\s?", "", line).rstrip() for line in body.split("\n")]
    return "\n".join(line for line in lines).strip()


def _declarator(text, what):
    """Parameter or field text -> Parameter."""
    text = " ".join(text.split())
    function = re.match(r"^(.*?)\(\s*\*\s*(\w+)\s*\)\s*\((.*)\)$", text)
    if function:
        result = _declarator(function.group(1) + " returned", what).ctype
        parameters, variadic = _parameters(function.group(3), what)
        pointed = Function(function.group(2), result, parameters, variadic, None)
        return Parameter(function.group(2), CType("function", function=pointed))
    array = None
    match = re.match(r"^(.*?)\[\s*(\w+)\s*\]$", text)
    if match:
        text, array = match.group(1), match.group(2)
    match = re.match(r"^(.*?)(\w+)$", text)
    if match is None:
        raise HeaderError(f"{what}: cannot read the declaration {text!r}")
    name = match.group(2)
    spec = match.group(1)
    pointers = spec.count("*")
    words = spec.replace("*", " ").split()
    const = "const" in spec.split("*")[0].split()
    words = [word for word in words if word not in ("const", "struct", "enum")]
    if len(words) != 1:
        if words == ["unsigned", "int"] or words == ["unsigned"]:
            words = ["unsigned"]
        else:
            raise HeaderError(f"{what}: cannot read the type of {name!r} in {text!r}")
    return Parameter(name, CType(words[0], const, pointers, array))


def _parameters(text, what):
    parts = _split(text, ",")
    variadic = parts[-1:] == ["..."]
    parts = [part for part in parts if part not in ("void", "...")]
    return [_declarator(part, what) for part in parts], variadic


def header_paths(root):
    """include/spart/*.h in the order spart.h includes them, then the rest."""
    root = pathlib.Path(root)
    umbrella = (root / "include" / "spart.h").read_text()
    ordered = re.findall(r'#\s*include\s+"(spart/\w+\.h)"', umbrella)
    paths = [root / "include" / name for name in ordered]
    for path in sorted((root / "include" / "spart").glob("*.h")):
        if path not in paths:
            paths.append(path)
    return [path for path in paths if path.exists()]


def read_api(root):
    """The Api of the headers under root/include."""
    api = Api()
    for path in header_paths(root):
        header = "spart/" + path.name
        api.headers.append(header)
        _read_header(api, path.read_text(), header)
    return api


def _read_header(api, original, header):
    code = _code(original)
    # #define NAME <integer>
    for line in re.sub(r"/\*.*?\*/|//[^\n]*", " ", original, flags=re.S).split("\n"):
        match = re.match(r"^\s*#\s*define\s+(SPART_\w+)\s+\(?\s*(-?\d+)\s*\)?\s*$", line)
        if match:
            api.defines.append((match.group(1), int(match.group(2)), header))
    # enums
    for match in re.finditer(r"\btypedef\s+enum\s+(\w+)\s*\{", code):
        end = _closing(code, match.end() - 1)
        values, next_value = [], 0
        for item in _split(code[match.end():end], ","):
            name_value = re.match(r"^(\w+)\s*(?:=\s*(-?\d+))?$", item)
            if name_value is None:
                raise HeaderError(f"{header}: cannot read the enumerator {item!r}")
            if name_value.group(2) is not None:
                next_value = int(name_value.group(2))
            values.append((name_value.group(1), next_value))
            next_value += 1
        api.enums.append(Enum(match.group(1), values, header))
    # structs with a body
    for match in re.finditer(r"\btypedef\s+struct\s+(\w+)\s*\{", code):
        end = _closing(code, match.end() - 1)
        fields = []
        for item in _split(code[match.end():end], ";"):
            fields.append(_declarator(item, f"{header}: struct {match.group(1)}"))
        api.structs[match.group(1)] = Struct(match.group(1), fields, header,
                                             _doc(original, match.start()))
    # opaque structs
    for match in re.finditer(r"\btypedef\s+struct\s+(\w+)\s+(\w+)\s*;", code):
        api.opaque.append(match.group(2))
    # function pointer typedefs
    for match in re.finditer(r"\btypedef\s+([^;{}]*?\(\s*\*\s*\w+\s*\)\s*\([^;]*\))\s*;", code):
        parameter = _declarator(match.group(1), header)
        api.callbacks[parameter.name] = parameter.ctype.function
    # SPART_API functions
    for match in re.finditer(r"\bSPART_API\b", code):
        end = code.find(";", match.end())
        declaration = " ".join(code[match.end():end].split())
        call = re.match(r"^(.*?\b)(\w+)\s*\((.*)\)$", declaration)
        if call is None:
            raise HeaderError(f"{header}: cannot read the declaration {declaration!r}")
        result = _declarator(call.group(1) + " returned", header).ctype
        parameters, variadic = _parameters(call.group(3), f"{header}: {call.group(2)}")
        line_start = code.rfind("\n", 0, match.start()) + 1
        api.functions.append(Function(call.group(2), result, parameters, variadic, header,
                                      _doc(original, line_start)))
