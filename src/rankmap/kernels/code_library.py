"""A cached kernel's machine code loaded without parsing its LLVM bitcode.

numba caches a kernel as machine code (an object file) plus the LLVM bitcode of the same
functions, which a kernel compiled later links in (and inlines from). Loading, numba parses
that bitcode and walks its functions and globals to record the symbols the library defines
(its JIT engine asks that record before it looks an address up: a lookup of a missing symbol
would end the process). On the default 131,072-rank ``compare`` of issue 11 the parse and
the walk were 43 of the 61 ms its 11 kernel loads took, and nothing there links a loaded
kernel.

:func:`load_object_library` loads the machine code as numba does, reads the defined symbols
from the object file's own symbol table (:func:`elf_defined_symbols`: the same names as the
bitcode walk on all 693 libraries cached for the package on the reference box, 0.09 s
against 5.5 s, and on the probe kernels of ``tests/test_kernel_jit.py``), and keeps the
bitcode unparsed until a compile links the library (:class:`LazyLinkLibrary`). Object
files other than 64-bit little-endian ELF (this module reads only that format) are left to
numba.

It uses numba's JIT library class and three of its non-public members (``_set_compiled_object``,
``_finalize_final_module``, the engine's ``_defined_symbols``), there since numba 0.4x.
"""

from __future__ import annotations

import struct

from llvmlite import binding as ll
from numba.core.codegen import JITCodeLibrary

__all__ = ["LazyLinkLibrary", "elf_defined_symbols", "load_object_library"]

#: an ELF file's identification: magic, 64-bit class, little-endian data, version 1
_ELF64_LE = b"\x7fELF\x02\x01\x01"
#: section type of a symbol table; symbol types of a section and of a source file
_SHT_SYMTAB = 2
_STT_SECTION, _STT_FILE = 3, 4
#: a section header (64-bit): name, type, flags, addr, offset, size, link, info, align, entsize
_SECTION = struct.Struct("<IIQQQQIIQQ")
#: a symbol (64-bit): name, info, other, section index, value, size
_SYMBOL = struct.Struct("<IBBHQQ")


def elf_defined_symbols(object_code: bytes) -> set[str] | None:
    """The names of the symbols a 64-bit little-endian ELF object file defines.

    Parameters
    ----------
    object_code : bytes
        A relocatable object file.

    Returns
    -------
    set of str or None
        Every named symbol of its symbol table that lies in one of its sections (functions,
        data and constants, local or global; not sections, source files or undefined
        references); None when the bytes are not such a file or are cut short.
    """
    if not object_code.startswith(_ELF64_LE) or len(object_code) < 64:
        return None
    try:
        (shoff,) = struct.unpack_from("<Q", object_code, 0x28)
        shentsize, shnum = struct.unpack_from("<HH", object_code, 0x3A)
        if shentsize != _SECTION.size:
            return None
        sections = [_SECTION.unpack_from(object_code, shoff + i * shentsize)
                    for i in range(shnum)]
        names = set()
        for _name, kind, _fl, _ad, offset, size, link, _in, _al, entsize in sections:
            if kind != _SHT_SYMTAB:
                continue
            if entsize != _SYMBOL.size or link >= shnum:
                return None
            strings = sections[link][4]
            for j in range(size // entsize):
                name, info, _other, shndx, _value, _size = _SYMBOL.unpack_from(
                    object_code, offset + j * entsize)
                if name == 0 or shndx == 0 or (info & 0xF) in (_STT_SECTION, _STT_FILE):
                    continue
                start = strings + name
                end = object_code.index(b"\0", start)
                names.add(object_code[start:end].decode("utf-8"))
        return names
    except (struct.error, ValueError, IndexError, OverflowError, UnicodeDecodeError):
        return None


class LazyLinkLibrary(JITCodeLibrary):
    """numba's JIT code library of a cached kernel whose bitcode is parsed when first linked.

    Parameters
    ----------
    codegen : numba.core.codegen.JITCPUCodegen
        numba's code generator.
    name : str
        The library's name.
    shared_bitcode : bytes
        The bitcode numba cached for linking the library into later compiles.
    """

    def __init__(self, codegen, name, shared_bitcode: bytes):
        super().__init__(codegen, name)
        self._shared_bitcode = shared_bitcode

    def _get_module_for_linking(self):
        if self._shared_module is None:
            self._shared_module = ll.parse_bitcode(self._shared_bitcode)
        return super()._get_module_for_linking()


def load_object_library(codegen, libdata) -> LazyLinkLibrary | None:
    """A cached kernel's library loaded from its machine code, its bitcode left unparsed.

    Parameters
    ----------
    codegen : numba.core.codegen.JITCPUCodegen
        numba's code generator (its JIT engine receives the machine code).
    libdata : tuple
        numba's serialised library: ``(name, "object", (object code, bitcode))``.

    Returns
    -------
    LazyLinkLibrary or None
        The library, finalised, its symbols recorded in the engine; None when ``libdata`` is
        not that form or its object file not 64-bit little-endian ELF (numba then loads it).
    """
    try:
        name, kind, (object_code, shared_bitcode) = libdata
    except (TypeError, ValueError):
        return None
    if kind != "object" or not isinstance(object_code, bytes):
        return None
    defined = elf_defined_symbols(object_code)
    if defined is None:
        return None
    library = LazyLinkLibrary(codegen, name, shared_bitcode)
    library.enable_object_caching()
    library._set_compiled_object(object_code)
    library._finalize_final_module()
    codegen._engine._defined_symbols |= defined
    return library
