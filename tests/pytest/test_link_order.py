"""The server binary's functions are laid out in the order of src/main/link_order.txt
(src/main/CMakeLists.txt links with lld's --symbol-ordering-file), which keeps the text an idle
server has run together and so its resident memory small (bench/README.md, startup.py).

Checked on fdyno's own functions (namespace fdyno, one section each): those the file lists
appear in its order, and every one it does not list comes after them. RocksDB's functions move
with their object file's whole .text, so their order is not checked one by one."""
import os
import subprocess

from conftest import FDYNO_BIN, ROOT

ORDER = os.path.join(ROOT, "src", "main", "link_order.txt")
OURS = "_ZN5fdyno"


def text_symbols(binary):
    """Name -> addresses of the binary's function symbols (a local name may be defined twice)."""
    out = subprocess.run(["nm", binary], capture_output=True, text=True, check=True).stdout
    found = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "tTwW":
            found.setdefault(parts[2], []).append(int(parts[0], 16))
    assert found, f"{FDYNO_BIN} has no symbol table (stripped?): run this on the built binary"
    return found


def test_listed_functions_come_first_in_the_order_of_the_file():
    with open(ORDER) as f:
        listed = [line.strip() for line in f if line.strip()]
    symbols = text_symbols(FDYNO_BIN)
    ours = [n for n in listed if n.startswith(OURS) and len(symbols.get(n, ())) == 1]
    assert len(ours) > 500, "most of fdyno's listed functions are missing from the binary"
    addresses = [symbols[n][0] for n in ours]
    out_of_order = [f"{ours[i]} at {addresses[i]:#x} after {ours[i - 1]} at {addresses[i - 1]:#x}"
                    for i in range(1, len(ours)) if addresses[i] < addresses[i - 1]]
    assert not out_of_order, f"{len(out_of_order)} out of order, first: {out_of_order[:3]}"
    # Aliases of a listed function (a constructor's two names) share its address.
    names = set(listed)
    listed_at = {a for n in names for a in symbols.get(n, ())}
    unlisted = [(a, n) for n, where in symbols.items() if n.startswith(OURS) and n not in names
                for a in where if a not in listed_at]
    last = max(addresses)
    before = sorted(u for u in unlisted if u[0] < last)
    assert not before, f"{len(before)} unlisted functions among the listed ones: {before[:3]}"
