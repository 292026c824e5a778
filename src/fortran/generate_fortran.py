#!/usr/bin/env python3
"""Generate the Fortran module spart (spart.f90) from spart's C headers.

    generate_fortran.py SOURCE_ROOT OUTPUT        (Python 3 standard library only)

Reads include/spart.h and include/spart/*.h (c_headers.py) and writes one
self-contained Fortran 2008 source, as FFTW makes fftw3.f03 from fftw3.h:

  - the constants: every enumerator and every `#define SPART_... <integer>`;
  - a bind(C) derived type for every struct with a body, field by field
    (public and named as in C for the structs a Fortran code fills itself,
    PUBLIC_STRUCTS; private and named <name without spart_>_c for those
    the wrappers fill from optional arguments);
  - an abstract interface for each C callback type a Fortran code may write
    (CALLBACKS);
  - a private bind(C) interface c_<C name> for every SPART_API function, by
    the rules of `dummy` below (the same ABI as the C declaration:
    tests/fortran/check_interfaces.py checks every argument's type);
  - a public thin wrapper, named as the C function, for every function that
    only takes handles, scalars and addresses and returns a value, unless
    the hand-written part defines one (see `thin_wrapper`);
  - the rank overloads of fortran_generics.py (generic interfaces over the
    ranks of their arrays);
  - the hand-written parts, copied in where they belong: spart_declarations.inc
    (handle types, the module's notes) and spart_wrappers_*.inc (the wrappers that add meaning:
    optional arguments and their defaults, shapes in Fortran order, sizes
    checked, allocatable and pointer results, strings).
"""
import pathlib
import re
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import c_headers  # noqa: E402
import fortran_generics  # noqa: E402

HERE = pathlib.Path(__file__).resolve().parent
HANDLES = "spart_declarations.inc"
# Every spart_wrappers_<module>.inc, the common helpers first (the others
# use them): a new module adds its file, not a line here.
WRAPPERS = ["spart_wrappers_common.inc"] + sorted(
    path.name for path in HERE.glob("spart_wrappers_*.inc") if path.name != "spart_wrappers_common.inc")

# Structs a Fortran code fills or reads itself: public, with their C names.
PUBLIC_STRUCTS = {"spart_mart_operators", "spart_mart_regridder_pair",
                  "spart_mart_regridder_psf", "spart_mart_progress",
                  "spart_permute_block"}

# C callback types a Fortran code may write, and their interface names:
# a typedef, or a struct's function pointer field (struct.field).
CALLBACKS = {"spart_log_fn": "spart_log_function",
             "spart_mart_operators.forward": "spart_mart_forward_function",
             "spart_mart_operators.backward": "spart_mart_backward_function",
             "spart_mart_callback": "spart_mart_callback_function"}

# Pointers to structs passed as an address (type(c_ptr), value) rather than
# as a Fortran variable: C accepts NULL for them, or keeps them after the
# call (the wrappers pass c_loc of a TARGET).
BY_ADDRESS = {"spart_weights_scale": {"factor_input", "factor_output"},
              "spart_mart_operators_from_regridders": {"pair"},
              "spart_instrument_mart_operators": {"pair"},
              "spart_mart_operators_from_regridders_psf": {"problem"}}

# T ** parameters through which C writes an array of handles (one a frame,
# say) rather than one: type(c_ptr) arrays by reference, results(*).
HANDLE_ARRAYS = {"spart_mart_solve_frames": {"results"}}

KINDS = {"int": "c_int", "int32_t": "c_int32_t", "int64_t": "c_int64_t",
         "uint64_t": "c_int64_t", "size_t": "c_size_t", "double": "c_double",
         "float": "c_float", "char": "c_char", "unsigned": "c_int"}
UNSIGNED = {"uint64_t", "unsigned"}
ISO_C = ["c_associated", "c_char", "c_double", "c_f_pointer", "c_float", "c_funloc",
         "c_funptr", "c_int", "c_int32_t", "c_int64_t", "c_loc", "c_null_char",
         "c_null_funptr", "c_null_ptr", "c_ptr", "c_size_t"]
WIDTH = 100


class Unmappable(Exception):
    pass


def wrap(line, indent):
    """A statement as free-form lines of at most WIDTH characters, broken
    after commas (continuation lines indented 4 more)."""
    first = " " * indent + line
    if len(first) <= WIDTH:
        return [first]
    lines, current = [], first
    while len(current) > WIDTH:
        cut = current.rfind(", ", 0, WIDTH - 2)
        if cut <= indent + 4:
            break
        lines.append(current[:cut + 1] + " &")
        current = " " * (indent + 4) + current[cut + 2:]
    return lines + [current]


def comment(text, indent):
    return [" " * indent + ("! " + line).rstrip() for line in text.split("\n")]


class Generator:
    def __init__(self, root):
        self.root = pathlib.Path(root)
        self.api = c_headers.read_api(self.root)
        self.enums = {enum.name for enum in self.api.enums}
        self.hand = {name: (HERE / name).read_text() for name in [HANDLES] + WRAPPERS}
        handles = self.hand[HANDLES]
        self.handles = set(re.findall(r"^\s*type, public :: (spart_\w+)\s*\n\s*type\(c_ptr\) :: "
                                      r"handle", handles, flags=re.M))
        wrappers = "\n".join(self.hand[name] for name in WRAPPERS)
        self.hand_procedures = re.findall(
            r"^    (?:pure\s+)?(?:function|subroutine)\s+(\w+)", wrappers, flags=re.M)

    # ---- types ---------------------------------------------------------------------------------
    def fortran_struct(self, name):
        return name if name in PUBLIC_STRUCTS else name[len("spart_"):] + "_c"

    def scalar(self, base):
        """The Fortran type of a C scalar, and the iso_c_binding name it needs."""
        if base in self.enums or base == "spart_status":
            return "integer(c_int)", "c_int"
        if base not in KINDS:
            raise Unmappable(f"no Fortran kind for the C type {base!r}")
        kind = KINDS[base]
        if base in ("double", "float"):
            return f"real({kind})", kind
        if base == "char":
            return f"character(kind={kind})", kind
        return f"integer({kind})", kind

    def is_callback(self, ctype):
        return ctype.function is not None or ctype.base in self.api.callbacks

    def dummy(self, function, parameter, counted, callback=False):
        """(declaration, imports) of a C parameter in a bind(C) interface.

        Scalars by value; opaque objects, void and numeric pointers as
        addresses (type(c_ptr), value: device memory and NULL included);
        T ** as type(c_ptr) by reference (an array of them, (*), for those
        of HANDLE_ARRAYS); const char * as a character
        array; struct pointers as the bind(C) type by reference (an array
        when a num_<name> parameter counts them), intent(in) when const;
        C arrays T name[N] as explicit-shape arrays; function pointers as
        type(c_funptr), value."""
        ctype, name = parameter.ctype, parameter.name
        if self.is_callback(ctype):
            return f"type(c_funptr), value :: {name}", {"c_funptr"}
        if ctype.array:
            fortran, kind = self.scalar(ctype.base)
            intent = "in" if ctype.const else "inout"
            return f"{fortran}, intent({intent}) :: {name}({ctype.array})", {kind}
        if ctype.pointers == 0:
            if ctype.base in self.api.structs:
                struct = self.fortran_struct(ctype.base)
                return f"type({struct}), value :: {name}", {struct}
            fortran, kind = self.scalar(ctype.base)
            note = f" ! {ctype.base} in C" if ctype.base in UNSIGNED else ""
            return f"{fortran}, value :: {name}{note}", {kind}
        if ctype.pointers >= 2:
            shape = "(*)" if name in HANDLE_ARRAYS.get(function, ()) else ""
            return f"type(c_ptr), intent(inout) :: {name}{shape}", {"c_ptr"}
        if ctype.base == "char" and ctype.const and not callback:
            return f"character(kind=c_char), intent(in) :: {name}(*)", {"c_char"}
        if ctype.base in self.api.structs and name not in BY_ADDRESS.get(function, ()):
            struct = self.fortran_struct(ctype.base)
            intent = "in" if ctype.const else "inout"
            shape = "(*)" if name in counted else ""
            return f"type({struct}), intent({intent}) :: {name}{shape}", {struct}
        if ctype.base in self.api.opaque or ctype.base == "void" or ctype.base in KINDS \
                or ctype.base in self.api.structs or ctype.base in self.enums:
            return f"type(c_ptr), value :: {name}", {"c_ptr"}
        raise Unmappable(f"{function}: no Fortran type for {ctype.spelled()} {name}")

    def result(self, ctype):
        """(declaration type, imports) of a C result; None for void."""
        if ctype.pointers:
            return "type(c_ptr)", {"c_ptr"}
        if ctype.base == "void":
            return None
        if ctype.base in self.api.structs:
            struct = self.fortran_struct(ctype.base)
            return f"type({struct})", {struct}
        fortran, kind = self.scalar(ctype.base)
        return fortran, {kind}

    @staticmethod
    def result_name(function):
        """status for a spart_status (unless an argument has that name), else returned."""
        names = {p.name for p in function.parameters}
        if function.result.base == "spart_status" and "status" not in names:
            return "status"
        return "returned"

    @staticmethod
    def counted(parameters):
        """Parameters that a num_<stem> parameter counts (names <stem>...)."""
        stems = [p.name[4:] for p in parameters if p.name.startswith("num_")]
        return {p.name for p in parameters for stem in stems
                if p.name.startswith(stem) and not p.name.startswith("num_")}

    def interface(self, function, name, bind, callback=False, indent=8):
        """The lines of an interface body for `function`."""
        parameters = function.parameters
        counted = self.counted(parameters)
        declarations, imports = [], set()
        for parameter in parameters:
            line, needed = self.dummy(function.name, parameter, counted, callback)
            declarations.append(line)
            imports |= needed
        result = self.result(function.result)
        arguments = ", ".join(p.name for p in parameters)
        binding = f'bind(C, name="{bind}")' if bind else "bind(C)"
        # pure: a value computed from scalars and what C only reads (const)
        pure = (result is not None and not function.result.pointers
                and function.result.base != "spart_status" and not callback
                and all(", value ::" in line for line in declarations)
                and all(p.ctype.pointers == 0 or (p.ctype.pointers == 1 and p.ctype.const)
                        for p in parameters))
        lines = []
        if function.variadic:
            lines += comment("Variadic in C: Fortran passes the fixed arguments only, which the\n"
                             "usual ABIs (x86-64, AArch64, Apple arm64) pass as for any function.",
                             indent)
        if result is None:
            lines += wrap(f"subroutine {name}({arguments}) {binding}", indent)
        else:
            imports |= result[1]
            result_name = self.result_name(function)
            lines += wrap(f"{'pure ' if pure else ''}function {name}({arguments}) {binding} "
                          f"result({result_name})", indent)
        lines += wrap("import :: " + ", ".join(sorted(imports)), indent + 4) if imports else []
        lines += [" " * (indent + 4) + line for line in declarations]
        if result is not None:
            lines.append(" " * (indent + 4) + f"{result[0]} :: {result_name}")
            lines.append(" " * indent + f"end function {name}")
        else:
            lines.append(" " * indent + f"end subroutine {name}")
        return lines

    # ---- sections ------------------------------------------------------------------------------
    def constants(self):
        lines = ["    ! ---- constants (#define and enums of the headers) " + "-" * 40]
        for header in self.api.headers:
            block = [(name, value) for name, value, h in self.api.defines if h == header]
            block += [(name, value) for enum in self.api.enums if enum.header == header
                      for name, value in enum.values]
            if block:
                lines.append(f"    ! {header}")
                lines += [f"    integer(c_int), parameter, public :: {name} = {value}"
                          for name, value in block]
        return lines

    def structs(self):
        lines = ["    ! ---- structs (bind(C): the layout of the C structs) " + "-" * 37]
        done, pending = set(), list(self.api.structs.values())
        while pending:
            for struct in pending:
                nested = {f.ctype.base for f in struct.fields if f.ctype.pointers == 0
                          and f.ctype.base in self.api.structs}
                if nested <= done:
                    break
            else:
                raise Unmappable("structs that contain each other: "
                                 + ", ".join(s.name for s in pending))
            pending.remove(struct)
            done.add(struct.name)
            name = self.fortran_struct(struct.name)
            public = ", public" if struct.name in PUBLIC_STRUCTS else ""
            lines.append("")
            lines += comment(f"struct {struct.name} ({struct.header})"
                             + (f"\n{struct.doc}" if struct.doc else ""), 4)
            lines.append(f"    type, bind(C){public} :: {name}")
            for field in struct.fields:
                ctype = field.ctype
                if self.is_callback(ctype):
                    lines.append(f"        type(c_funptr) :: {field.name} = c_null_funptr")
                elif ctype.pointers:
                    lines.append(f"        type(c_ptr) :: {field.name} = c_null_ptr")
                elif ctype.base in self.api.structs:
                    lines.append(f"        type({self.fortran_struct(ctype.base)}) :: "
                                 f"{field.name}")
                else:
                    fortran = self.scalar(ctype.base)[0]
                    shape = f"({ctype.array})" if ctype.array else ""
                    note = f" ! {ctype.base} in C" if ctype.base in UNSIGNED else ""
                    lines.append(f"        {fortran} :: {field.name}{shape}{note}")
            lines.append(f"    end type {name}")
        return lines

    def callbacks(self):
        lines = ["    ! ---- callbacks you may write in Fortran " + "-" * 50,
                 "    ! C function pointers: write a bind(C) function with these arguments",
                 "    ! and pass it by name (the wrappers take c_funloc of it), or put",
                 "    ! c_funloc(f) into a spart_mart_operators.",
                 "    abstract interface"]
        for key, name in CALLBACKS.items():
            if "." in key:
                struct, field = key.split(".")
                fields = {f.name: f for f in self.api.structs[struct].fields}
                function = fields[field].ctype.function
                where = f"the field {field} of struct {struct} ({self.api.structs[struct].header})"
            else:
                function = self.api.callbacks[key]
                where = f"{key}"
            lines.append(f"        ! {where}")
            lines += self.interface(function, name, None, callback=True)
        lines.append("    end interface")
        lines += wrap("public :: " + ", ".join(CALLBACKS.values()), 4)
        return lines

    def interfaces(self):
        lines = ["    ! ---- the C functions (private: the public names are the wrappers') " + "-" * 22]
        for header in self.api.headers:
            functions = [f for f in self.api.functions if f.header == header]
            if not functions:
                continue
            lines += ["", f"    ! {header}", "    interface"]
            for number, function in enumerate(functions):
                if number:
                    lines.append("")
                lines += self.interface(function, "c_" + function.name, function.name)
            lines.append("    end interface")
        return lines

    def thin_wrapper(self, function):
        """A public wrapper that unwraps handles, for a function whose
        arguments are all handles (in, or out as T **), scalars or
        addresses, and that returns a value; None for any other function,
        or one the hand-written part wraps."""
        if function.name in self.hand_procedures or function.result.pointers \
                or function.result.base == "void" or function.result.base in self.api.structs:
            return None
        declarations, actuals = [], []
        for parameter in function.parameters:
            ctype, name = parameter.ctype, parameter.name
            if ctype.array or self.is_callback(ctype):
                return None
            if ctype.base in self.handles and ctype.pointers in (1, 2):
                intent = "in" if ctype.pointers == 1 else "out"
                declarations.append(f"type({ctype.base}), intent({intent}) :: {name}")
                actuals.append(f"{name}%handle")
            elif ctype.pointers == 0 and ctype.base not in self.api.structs:
                declarations.append(f"{self.scalar(ctype.base)[0]}, intent(in) :: {name}")
                actuals.append(name)
            elif ctype.pointers == 1 and (ctype.base == "void" or ctype.base in KINDS):
                declarations.append(f"type(c_ptr), intent(in) :: {name}")
                actuals.append(name)
            else:
                return None
        interface = self.interface(function, "x", function.name)
        pure = "pure " if interface[0].lstrip().startswith("pure ") else ""
        result_name = self.result_name(function)
        arguments = ", ".join(p.name for p in function.parameters)
        lines = [""] + comment(f"{function.name} ({function.header})"
                               + (f"\n{function.doc}" if function.doc else ""), 4)
        lines += wrap(f"{pure}function {function.name}({arguments}) result({result_name})", 4)
        lines += ["        " + line for line in declarations]
        lines.append(f"        {self.result(function.result)[0]} :: {result_name}")
        lines += wrap(f"{result_name} = c_{function.name}({', '.join(actuals)})", 8)
        lines.append(f"    end function {function.name}")
        return lines

    def thin_wrappers(self):
        wrappers = {}
        for function in self.api.functions:
            lines = self.thin_wrapper(function)
            if lines:
                wrappers[function.name] = lines
        return wrappers

    def generics(self):
        """(generic interface blocks, specific procedures, public names)."""
        blocks, procedures = [], []
        for generic in fortran_generics.GENERICS:
            independent = [a for a in generic.arrays if a.same_rank_as is None]
            combinations = [[]]
            for array in independent:
                combinations = [c + [r] for c in combinations for r in array.ranks]
            names = []
            if generic.comment:
                procedures += [""] + comment(generic.comment, 4)
            for ranks in combinations:
                rank = dict(zip([a.name for a in independent], ranks))
                for array in generic.arrays:
                    if array.same_rank_as:
                        rank[array.name] = rank[array.same_rank_as]
                specific = generic.specific + "_" + "_".join(str(r) for r in ranks)
                names.append(specific)
                procedures += [""] + self.specific(generic, specific, rank)
            if generic.summary:
                blocks += [""] + comment(generic.summary, 4)
            blocks.append(f"    interface {generic.name}")
            for start in range(0, len(names), 4):
                blocks += wrap("module procedure " + ", ".join(names[start:start + 4]), 8)
            blocks.append(f"    end interface {generic.name}")
        return blocks, procedures, [g.name for g in fortran_generics.GENERICS]

    @staticmethod
    def specific(generic, name, rank):
        lines = wrap(f"function {name}({', '.join(generic.arguments)}) "
                     f"result({generic.result})", 4)
        arrays = {a.name: a for a in generic.arrays}
        declared = list(generic.declarations)
        for array in generic.arrays:
            dims = ", ".join([":"] * rank[array.name])
            attributes = f", {array.attributes}" if array.attributes else ""
            declared.append(f"real(c_double), intent({array.intent}){attributes} :: "
                            f"{array.name}({dims})")
        # in the order of the argument list
        ordered = []
        for argument in generic.arguments:
            ordered += [d for d in declared if re.search(rf":: .*\b{argument}\b", d)
                        and d not in ordered]
        ordered += [d for d in declared if d not in ordered]
        lines += ["        " + d for d in ordered]
        lines.append(f"        {generic.result_type} :: {generic.result}")
        located = [a for a in generic.arrays if a.located]
        if located:
            lines.append("        type(c_ptr) :: " + ", ".join(f"{a.name}_at" for a in located))
        for array in located:
            if array.optional:
                lines.append(f"        integer(c_int64_t) :: size_{array.name}")
        for array in located:
            if array.optional:
                lines += [f"        {array.name}_at = c_null_ptr",
                          f"        size_{array.name} = 0",
                          f"        if (present({array.name})) then",
                          f"            size_{array.name} = size({array.name}, kind=c_int64_t)",
                          f"            if (size({array.name}) > 0) {array.name}_at = "
                          f"c_loc({array.name})",
                          "        end if"]
            else:
                lines += [f"        {array.name}_at = c_null_ptr",
                          f"        if (size({array.name}) > 0) {array.name}_at = "
                          f"c_loc({array.name})"]
        for statement in generic.body:
            lines += wrap(statement.format(**{f"rank_{n}": r for n, r in rank.items()}), 8)
        lines.append(f"    end function {name}")
        del arrays
        return lines

    # ---- the module ----------------------------------------------------------------------------
    def module(self):
        thin = self.thin_wrappers()
        blocks, procedures, generic_names = self.generics()
        public = sorted(set(name for name in self.hand_procedures if name.startswith("spart_"))
                        | set(thin))
        public = sorted(set(public) | set(generic_names))
        out = []
        out += comment(
            "spart.f90: the Fortran interface of spart (module spart), through ISO_C_BINDING.\n"
            "GENERATED by src/fortran/generate_fortran.py from the C headers\n"
            "(" + ", ".join(self.api.headers[:5]) + ",\n"
            + ", ".join(self.api.headers[5:]) + ")\n"
            "and the hand-written parts src/fortran/spart_*.inc: edit those, not this file.\n"
            "Free-form Fortran 2008: any Fortran 2008 compiler builds it and links it\n"
            "against the C library (-lspart). docs/fortran.md describes the module.", 0)
        out += ["module spart"]
        out += wrap("use, intrinsic :: iso_c_binding, only: " + ", ".join(ISO_C), 4)
        out += ["    implicit none", "    private", ""]
        out += self.constants() + [""]
        out += self.hand_part(HANDLES) + [""]
        out += self.structs() + [""]
        out += self.callbacks() + [""]
        out += self.interfaces() + [""]
        out += ["    ! ---- public procedures " + "-" * 66]
        out += wrap("public :: " + ", ".join(public), 4)
        out += ["", "    ! ---- rank overloads (src/fortran/fortran_generics.py) " + "-" * 34]
        out += blocks
        out += ["", "contains"]
        for name in WRAPPERS:
            out += [""] + self.hand_part(name)
        out += ["", "    ! ==== thin wrappers (generated: handles unwrapped) " + "=" * 38]
        for header in self.api.headers:
            names = [f.name for f in self.api.functions if f.header == header and f.name in thin]
            if names:
                out += ["", f"    ! ---- {header}"]
                for name in names:
                    out += thin[name]
        out += ["", "    ! ==== rank-specific procedures (generated) " + "=" * 46]
        out += ["    ! Each locates its arrays and hands them to the hand-written routine",
                "    ! that does the work. A zero-size array is passed as a null address",
                "    ! (c_loc needs one element)."]
        out += procedures
        out += ["", "end module spart"]
        return "\n".join(out) + "\n"

    def hand_part(self, name):
        text = self.hand[name].rstrip("\n")
        return [f"    ! ==== hand-written: src/fortran/{name} " + "=" * max(4, 54 - len(name))] \
            + text.split("\n") + [f"    ! ==== end of src/fortran/{name}"]


def main():
    if len(sys.argv) != 3:
        print("usage: generate_fortran.py SOURCE_ROOT OUTPUT", file=sys.stderr)
        return 2
    try:
        text = Generator(sys.argv[1]).module()
    except (c_headers.HeaderError, Unmappable) as error:
        print(f"generate_fortran.py: {error}", file=sys.stderr)
        return 1
    output = pathlib.Path(sys.argv[2])
    output.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
