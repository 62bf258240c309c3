"""Per-op overhead: binary ops on tiny and small float32 tensors."""


def cases():
    """(name, make(lib) -> zero-arg callable, calls per timing round)."""
    out = []
    for n in (1, 1000):
        for op in ("add", "mul"):
            def make(lib, n=n, op=op):
                a, b = lib.ones(n), lib.ones(n)
                return (lambda: a + b) if op == "add" else (lambda: a * b)
            out.append((f"a {'+' if op == 'add' else '*'} b, {n} float32", make, 2000))
    return out
