"""CRC-32C (Castagnoli), as Kafka's record batches and snapshots use it.

The function is the crc32c package's C extension (hardware CRC where the CPU has
it). It is loaded without the package's __init__, which imports
importlib.metadata (for its __version__) and its command line's argparse: about
25 ms on every start of quorumctl, more than verify's whole walk of a 140 MB
log. The extension itself does not need them. If the layout of the package ever
changes, the normal import is used.
"""

from __future__ import annotations

import sys


def _load():
    mod = sys.modules.get("crc32c")
    if mod is not None:
        return mod.crc32c
    try:
        import os
        from importlib.machinery import EXTENSION_SUFFIXES, ExtensionFileLoader
        from importlib.util import find_spec, module_from_spec, spec_from_loader

        name = "crc32c._crc32c"
        ext = sys.modules.get(name)
        if ext is None:
            pkg = find_spec("crc32c")  # finds, does not import
            if pkg is None or pkg.submodule_search_locations is None:
                raise ImportError("no crc32c package")
            (where,) = pkg.submodule_search_locations
            path = next(
                p for p in (os.path.join(where, "_crc32c" + s) for s in EXTENSION_SUFFIXES) if os.path.exists(p)
            )
            loader = ExtensionFileLoader(name, path)
            spec = spec_from_loader(name, loader)
            if spec is None:
                raise ImportError(f"no module spec for {path}")
            ext = module_from_spec(spec)
            loader.exec_module(ext)
            sys.modules[name] = ext  # a later `import crc32c` reuses it
        return ext.crc32c
    except (ImportError, AttributeError, StopIteration, TypeError, ValueError):
        import crc32c

        return crc32c.crc32c


crc32c = _load()
