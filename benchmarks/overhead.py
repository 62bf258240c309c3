"""Per-op overhead: binary ops on tiny and small float32 tensors, with and without
autograd recording, and a chain of 1,000 small ops forward + backward."""


def _binary(n, op, requires_grad):
    def make(lib):
        a = lib.ones(n, requires_grad=requires_grad)
        b = lib.ones(n)
        return (lambda: a + b) if op == "add" else (lambda: a * b)
    return make


def _chain(lib):
    x = lib.ones(16, requires_grad=True)

    def step():
        y = x
        for _ in range(250):
            y = ((y * 1.0001) + 0.5).sin() - y
        y.sum().backward()
    return step


def cases():
    """(name, make(lib) -> zero-arg callable, calls per timing round)."""
    out = []
    for requires_grad in (False, True):
        for n in (1, 1000):
            for op in ("add", "mul"):
                sym = "+" if op == "add" else "*"
                tag = ", requires_grad" if requires_grad else ""
                out.append((f"a {sym} b, {n} float32{tag}", _binary(n, op, requires_grad), 2000))
    out.append(("1000-op chain fwd+bwd (per chain)", _chain, 3))
    return out
